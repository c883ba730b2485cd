//! xstack's domain, under every other layer: the task format (`task`) with its criteria
//! and their judge, metrics, claims, the diff engine, notebooks, secrets, and the OS plumbing
//! (processes, PTYs, the reaper, polling). It knows nothing of sessions, agents or events.

pub mod claims;
pub mod command_line;
pub mod diff;
pub mod metrics;
pub mod notebook;
pub mod patterns;
pub mod poll;
pub mod process;
pub mod pty;
pub mod reaper;
pub mod secrets;
pub mod source_text;
pub mod task;

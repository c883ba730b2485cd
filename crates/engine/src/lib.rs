//! xstack's engine: a session's environments, runners, agent, checks, grading, parity
//! probe and seeds, the event model and its journal, the reducer and driver, replay.
//!
//! The domain's modules are re-exported, so a path reads `crate::task` here as in every
//! crate above.

pub use xstack_core::{
    claims, command_line, diff, metrics, notebook, patterns, poll, process, pty, reaper, secrets,
    source_text, task,
};

pub mod agent;
pub mod checks;
pub mod config;
pub mod env;
pub mod event;
pub mod grade;
pub mod journal;
pub mod parity;
pub mod replay;
pub mod run_script;
pub mod runner;
pub mod seeds;
pub mod session;
pub mod workspace;

//! xstack: supervise a coding agent porting a repository between PyTorch and JAX (either
//! way), and grade the port by whether its run reproduces the published result (the XStack
//! benchmark's criteria).

pub mod agent;
pub mod bench;
pub mod calibrate;
pub mod checks;
pub mod claims;
pub mod cli;
pub mod command_line;
pub mod config;
pub mod demo;
pub mod diff;
pub mod env;
pub mod event;
pub mod grade;
pub mod init;
pub mod journal;
pub mod metrics;
pub mod notebook;
pub mod parity;
pub mod patterns;
pub mod poll;
pub mod process;
pub mod pty;
pub mod reaper;
pub mod replay;
pub mod run_script;
pub mod runner;
pub mod secrets;
pub mod seeds;
pub mod session;
pub mod site;
pub mod source_text;
pub mod task;
pub mod ui;
pub mod workspace;

//! xstack: supervise a coding agent porting a repository between PyTorch and JAX (either
//! way), and grade the port by whether its run reproduces the published result (the XStack
//! benchmark's criteria).
//!
//! The front: the command line's subcommands that draw a terminal UI (`cli`), the TUI (`ui`)
//! and the demo, over the applications (`xstack-apps`), the engine (`xstack-engine`) and
//! the domain (`xstack-core`), whose modules are re-exported here under their own names.

pub use xstack_apps::{
    agent, bench, calibrate, checks, claims, command_line, config, diff, env, event, grade, init,
    journal, metrics, notebook, parity, patterns, poll, process, pty, reaper, replay, run_script,
    runner, secrets, seeds, session, site, source_text, task, workspace,
};

pub mod cli;
pub mod demo;
pub mod ui;

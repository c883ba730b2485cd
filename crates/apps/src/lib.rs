//! xstack's applications on the engine: `init`, `calibrate`, `bench` and its report, the
//! site, and the subcommands (`cli`) that need no terminal UI.
//!
//! The lower crates' modules are re-exported, so a path reads `crate::task` here as in
//! every crate above.

pub use xstack_engine::{
    agent, checks, claims, command_line, config, diff, env, event, grade, journal, metrics,
    notebook, parity, patterns, poll, process, pty, reaper, replay, run_script, runner, secrets,
    seeds, session, source_text, task, workspace,
};

pub mod bench;
pub mod calibrate;
pub mod cli;
pub mod init;
pub mod site;

//! The subcommands behind the command line: those that draw the terminal UI (`pick`,
//! `replay`, `run`) here, the rest from `xstack-apps`, re-exported. `main.rs` parses the
//! command line and calls these.

mod pick;
mod replay;
mod run;

pub use pick::pick;
pub use replay::{replay_headless, replay_tui};
pub use run::{run_headless, run_tui, spawn_signal_forwarder};
pub use xstack_apps::cli::*;

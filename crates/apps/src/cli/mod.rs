//! The subcommands that need no terminal UI, one file each: each resolves its inputs,
//! reports bad input with exit status 2 before anything is created, and runs the library.
//! The binary's crate adds the ones that draw the TUI (`pick`, `replay`, `run`) and calls
//! these from its parsed command line.

mod agent_script;
mod calibrate;
mod check;
mod diff;
mod env;
mod error;
mod export;
mod init;
mod parity;
mod prepare;
mod runs;

pub use agent_script::agent_script;
pub use calibrate::{CalibrateOptions, calibrate};
pub use check::check;
pub use diff::{ColorChoice, DiffCommandOptions, diff};
pub use env::{env_build, env_list, env_prune};
pub use error::AppError;
pub use export::{ExportOptions, export_cast};
pub use init::init;
pub use parity::{ParityOptions, parity};
pub use prepare::{
    DEMO_AGENT, Prepared, RunOptions, agent_for, checked_agent, prepare, prepare_resume, runs_dir,
    source_dir,
};
pub use runs::runs;

/// The runtime a subcommand's session runs on ([`RuntimeThreads::SessionWorkers`]).
///
/// [`RuntimeThreads::SessionWorkers`]: crate::process::RuntimeThreads::SessionWorkers
pub fn runtime() -> Result<tokio::runtime::Runtime, AppError> {
    crate::process::runtime(crate::process::RuntimeThreads::SessionWorkers)
        .map_err(|e| AppError::infra(format!("cannot start the runtime: {e}")))
}

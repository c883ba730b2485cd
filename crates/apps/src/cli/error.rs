//! The error a subcommand ends with: its exit status and what to tell the user; every
//! library error is mapped to usage (exit 2) or infrastructure (exit 3) here.

use crate::agent::AgentError;
use crate::agent::sandbox::SandboxError;
use crate::process::{EXIT_INFRA, EXIT_USAGE};
use crate::task;

/// An error that ends a command with a given exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    /// The exit status.
    pub code: i32,
    /// What to tell the user.
    pub message: String,
}

impl AppError {
    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> AppError {
        AppError {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }

    /// An infrastructure error (exit 3).
    pub fn infra(message: impl Into<String>) -> AppError {
        AppError {
            code: EXIT_INFRA,
            message: message.into(),
        }
    }
}

impl From<task::TaskError> for AppError {
    fn from(e: task::TaskError) -> Self {
        AppError::usage(e.to_string())
    }
}

/// A trajectory or the config file that could not be used.
impl From<task::located::FileError> for AppError {
    fn from(e: task::located::FileError) -> Self {
        AppError::usage(e.to_string())
    }
}

impl From<SandboxError> for AppError {
    fn from(e: SandboxError) -> Self {
        match e {
            SandboxError::NetChoice { .. } => AppError::usage(e.to_string()),
            SandboxError::Missing | SandboxError::Unavailable(_) => AppError::infra(e.to_string()),
        }
    }
}

impl From<AgentError> for AppError {
    fn from(e: AgentError) -> Self {
        match e {
            AgentError::NotFound { .. } => AppError::infra(e.to_string()),
            _ => AppError::usage(e.to_string()),
        }
    }
}

impl From<crate::calibrate::CalibrateError> for AppError {
    fn from(e: crate::calibrate::CalibrateError) -> Self {
        use crate::calibrate::CalibrateError as E;
        match e {
            E::TooFewSeeds(_) | E::MetricMissing { .. } => AppError::usage(e.to_string()),
            E::Env(_) | E::Seed(_) | E::RunFailed { .. } => AppError::infra(e.to_string()),
        }
    }
}

impl From<crate::init::InitError> for AppError {
    fn from(e: crate::init::InitError) -> Self {
        if e.is_infra() {
            AppError::infra(e.to_string())
        } else {
            AppError::usage(e.to_string())
        }
    }
}

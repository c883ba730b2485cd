//! `xstack agent-script`: plays one phase of a scripted trajectory.

use std::path::Path;

use crate::agent::script::{self, Trajectory};

use super::AppError;

/// `xstack agent-script PATH --phase N [--message-file F]`: plays one phase of a trajectory in
/// the current folder; returns its exit status.
pub fn agent_script(path: &Path, phase: u8, message_file: Option<&Path>) -> Result<i32, AppError> {
    let trajectory = Trajectory::load(path)?;
    let message = match message_file {
        Some(f) => Some(
            std::fs::read_to_string(f)
                .map_err(|e| AppError::usage(format!("--message-file {}: {e}", f.display())))?,
        ),
        None => None,
    };
    let mut stdout = std::io::stdout();
    Ok(script::play(
        path,
        &trajectory,
        phase,
        message.as_deref(),
        &mut stdout,
    ))
}

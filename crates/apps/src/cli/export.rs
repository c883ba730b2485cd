//! `xstack export`: a pane of a recorded run as an asciicast v2 file.

use std::io::Write;
use std::path::Path;

use crate::journal;
use crate::process::EXIT_PASS;

use super::AppError;

/// `xstack export RUN_DIR --cast FILE --pane agent|run`: writes an asciicast v2 file.
pub fn export_cast(
    run_dir: &Path,
    cast: &Path,
    pane: crate::replay::cast::CastPane,
) -> Result<i32, AppError> {
    let journal =
        journal::read(&journal::path_in(run_dir)).map_err(|e| AppError::usage(e.to_string()))?;
    let file = std::fs::File::create(cast)
        .map_err(|e| AppError::usage(format!("--cast {}: {e}", cast.display())))?;
    let mut out = std::io::BufWriter::new(file);
    let events = crate::replay::cast::export(&journal, pane, &mut out)
        .and_then(|n| out.flush().map(|()| n))
        .map_err(|e| AppError::infra(format!("{}: {e}", cast.display())))?;
    println!("wrote {} ({events} output events)", cast.display());
    Ok(EXIT_PASS)
}

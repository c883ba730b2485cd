//! `xstack export`: a pane of a recorded run as an asciicast v2 file.

use std::io::Write;
use std::path::PathBuf;

use crate::journal;
use crate::process::EXIT_PASS;

use super::AppError;

/// What `xstack export` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The run folder.
    pub run_dir: PathBuf,
    /// The asciicast file to write.
    pub cast: PathBuf,
    /// Which terminal.
    pub pane: crate::replay::cast::CastPane,
}

/// `xstack export RUN_DIR --cast FILE --pane agent|run`: writes an asciicast v2 file.
pub fn export_cast(opts: &ExportOptions) -> Result<i32, AppError> {
    let (run_dir, cast, pane) = (opts.run_dir.as_path(), opts.cast.as_path(), opts.pane);
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

//! `xstack runs`: the recorded runs, newest first.

use std::io::Write;
use std::path::Path;

use crate::process::EXIT_PASS;

use super::{AppError, runs_dir};

/// `xstack runs [DIR]`: the recorded runs, newest first.
pub fn runs(dir: Option<&Path>, out: &mut dyn Write) -> Result<i32, AppError> {
    let dir = runs_dir(dir);
    if !dir.is_dir() {
        return Err(AppError::usage(format!(
            "{}: no such runs folder",
            dir.display()
        )));
    }
    let list = crate::replay::runs::list(&dir);
    let _ = out.write_all(crate::replay::runs::table(&list).as_bytes());
    Ok(EXIT_PASS)
}

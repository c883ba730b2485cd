//! `xstack calibrate`: the spread of each criterion over seeds of the source.

use std::io::Write;

use crate::process::EXIT_PASS;
use crate::task::{self, Task};

use super::{AppError, source_dir};

/// What `xstack calibrate` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalibrateOptions {
    /// The task folder or id.
    pub task: String,
    /// Runs, with `XSTACK_SEED` 0 to `seeds - 1`.
    pub seeds: u64,
    /// `--vary-fixed-seed`: offset a seed the source fixes when the seeds move nothing.
    pub vary_fixed_seed: bool,
    /// Print JSON instead of TOML.
    pub json: bool,
}

/// `xstack calibrate TASK [--seeds N] [--json]`: runs the task's source once per seed
/// and prints the spread of each criterion's metric with a suggested `published` and
/// `tolerance` (TOML ready to paste, or JSON). Progress goes to stderr.
pub fn calibrate(opts: &CalibrateOptions, out: &mut dyn Write) -> Result<i32, AppError> {
    let CalibrateOptions {
        seeds,
        vary_fixed_seed,
        json,
        ..
    } = *opts;
    let task = Task::load(&task::resolve(&opts.task)?)?;
    if seeds < 2 {
        return Err(crate::calibrate::CalibrateError::TooFewSeeds(seeds).into());
    }
    let cache = crate::env::cache_dir();
    let source = source_dir(&task, &cache)?;
    let mut progress = |line: String| eprintln!("{line}");
    let cal = crate::calibrate::calibrate(
        &task,
        &source,
        seeds,
        vary_fixed_seed,
        &cache,
        &mut progress,
    )?;
    let text = if json {
        let mut s = serde_json::to_string_pretty(&crate::calibrate::to_json(&cal))
            .map_err(|e| AppError::infra(e.to_string()))?;
        s.push('\n');
        s
    } else {
        crate::calibrate::render_toml(&cal)
    };
    out.write_all(text.as_bytes())
        .map_err(|e| AppError::infra(format!("cannot write the result: {e}")))?;
    Ok(EXIT_PASS)
}

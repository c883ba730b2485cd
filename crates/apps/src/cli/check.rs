//! `xstack check`: validates task folders.

use std::io::Write;
use std::path::PathBuf;

use crate::process::{EXIT_PASS, EXIT_USAGE};
use crate::task::{self, Task};

/// `xstack check [TASK...]`: validates task folders; returns the exit status.
pub fn check(tasks: &[String], out: &mut dyn Write) -> i32 {
    let dirs: Vec<Result<PathBuf, task::TaskError>> = if tasks.is_empty() {
        let root = task::tasks_dir();
        let found = task::discover(&root);
        if found.is_empty() {
            let _ = writeln!(out, "no task folders under {}", root.display());
            return EXIT_USAGE;
        }
        found.into_iter().map(Ok).collect()
    } else {
        tasks.iter().map(|t| task::resolve(t)).collect()
    };
    let mut status = EXIT_PASS;
    for dir in dirs {
        match dir.and_then(|d| Task::load(&d)) {
            Ok(task) => match scale_mismatch(&task) {
                None => {
                    let _ = writeln!(out, "ok    {} ({})", task.spec.id, task.dir.display());
                }
                Some(problem) => {
                    let _ = writeln!(
                        out,
                        "error {}: {problem}",
                        task.dir.join("task.toml").display()
                    );
                    status = EXIT_USAGE;
                }
            },
            Err(e) => {
                let _ = writeln!(out, "error {e}");
                status = EXIT_USAGE;
            }
        }
    }
    status
}

/// A criterion whose published value is a hundred times what the task's own reference run
/// printed (or a hundredth of it): a percentage written for a metric printed as a fraction
/// (`published = 84.2` for `accuracy= 0.8380`), or the other way round. Such a task cannot
/// be passed by a faithful port; None when every criterion is in its metric's units, or the
/// log does not print one.
fn scale_mismatch(task: &Task) -> Option<String> {
    let reference = task.spec.reference.as_ref()?;
    let text = std::fs::read_to_string(task.dir.join(&reference.log)).ok()?;
    let series = crate::metrics::parse_log(task, &text);
    task.spec.criteria.iter().find_map(|criterion| {
        let points = &series.iter().find(|(name, _)| *name == criterion.metric)?.1;
        let printed = crate::metrics::reduce(points, criterion.reduce)?;
        let ratio = criterion.published / printed;
        let (times, write) = if (50.0..=200.0).contains(&ratio) && printed.abs() <= 1.0 {
            ("a hundred times", criterion.published / 100.0)
        } else if (0.005..=0.02).contains(&ratio) && criterion.published.abs() <= 1.0 {
            ("a hundredth of", criterion.published * 100.0)
        } else {
            return None;
        };
        Some(format!(
            "criterion `{}`: published = {} is {times} what the reference run printed ({printed} in {}): a percentage and a fraction mixed; in the metric's units it is {}",
            criterion.metric,
            criterion.published,
            reference.log,
            (write * 1e9).round() / 1e9
        ))
    })
}

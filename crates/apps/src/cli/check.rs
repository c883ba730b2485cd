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
            Ok(task) => {
                let _ = writeln!(out, "ok    {} ({})", task.spec.id, task.dir.display());
            }
            Err(e) => {
                let _ = writeln!(out, "error {e}");
                status = EXIT_USAGE;
            }
        }
    }
    status
}

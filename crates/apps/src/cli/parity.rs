//! `xstack parity TASK --repo DIR`: the task's parity probe (SPEC §3a) in a clean copy of the
//! source and in a verify copy of DIR (protected files restored; DIR itself is never
//! written), and the comparison of what they recorded. Exit 0 all match, 1 a tensor
//! diverges, 2 no `[parity]` section (or bad input), 3 the probe could not run.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::parity::{ParityReport, ProbePlan, ProbeProgress, ProbeSide, render_text, run_probe};
use crate::process::{EXIT_FAIL, EXIT_INFRA, EXIT_PASS};
use crate::seeds::Scratch;
use crate::task::{self, Task};
use crate::workspace;

use super::{AppError, source_dir};

/// What `xstack parity` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParityOptions {
    /// The task folder or id.
    pub task: String,
    /// The port to compare with the source (never written).
    pub repo: PathBuf,
    /// Print the report as JSON.
    pub json: bool,
}

/// Runs the probe of the task against the port and prints the report (JSON with `json`);
/// the probes' own output goes to stderr.
pub fn parity(opts: &ParityOptions, out: &mut dyn Write) -> Result<i32, AppError> {
    let (repo, json) = (opts.repo.as_path(), opts.json);
    let task = Task::load(&task::resolve(&opts.task)?)?;
    if task.spec.parity.is_none() {
        return Err(AppError::usage(format!(
            "{}: the task has no [parity] section",
            task.file.display()
        )));
    }
    if !repo.is_dir() {
        return Err(AppError::usage(format!(
            "--repo {}: not a folder",
            repo.display()
        )));
    }
    let cache = crate::env::cache_dir();
    let source = source_dir(&task, &cache)?;
    let mut progress = |line: String| eprintln!("{line}");
    let usage = |side| crate::env::store::Usage::of(&task.spec.id, side);
    let reference = crate::env::ensure(
        &cache,
        &task.spec.env.reference_packages,
        &usage(crate::env::Side::Reference),
        &mut progress,
    )
    .map_err(|e| AppError::infra(e.to_string()))?;
    let target = crate::env::ensure(
        &cache,
        &task.spec.env.packages,
        &usage(crate::env::Side::Target),
        &mut progress,
    )
    .map_err(|e| AppError::infra(e.to_string()))?;
    if let Some(env) = &target {
        crate::grade::audit::install(&env.dir).map_err(|e| AppError::infra(e.to_string()))?;
    }
    let scratch = Scratch::new("parity").map_err(|e| AppError::infra(e.to_string()))?;
    let source_copy = scratch.path().join("source");
    let port_copy = scratch.path().join("port");
    workspace::copy_layers(&task.parity_source_layers(&source), &source_copy)
        .map_err(|e| AppError::infra(format!("cannot copy the source: {e}")))?;
    workspace::prepare_verify(repo, &source, &port_copy, &task.spec.integrity.protected)
        .map_err(|e| AppError::infra(format!("cannot copy {}: {e}", repo.display())))?;
    let plan = ProbePlan::for_task(
        &task,
        ProbeSide {
            dir: source_copy,
            env: reference,
            forbid: Vec::new(),
        },
        ProbeSide {
            dir: port_copy,
            env: target,
            forbid: task.spec.integrity.forbid_imports.clone(),
        },
        0,
        None,
        scratch.path().join("out"),
        (120, 36),
    )
    .ok_or_else(|| AppError::usage("the task has no [parity] section"))?;
    let report: ParityReport =
        super::runtime()?.block_on(run_probe(&plan, &AtomicBool::new(false), &mut |progress| {
            if let ProbeProgress::Output(text) = progress {
                eprint!("{text}");
            }
        }));
    let text = if json {
        let mut s =
            serde_json::to_string_pretty(&report).map_err(|e| AppError::infra(e.to_string()))?;
        s.push('\n');
        s
    } else {
        render_text(&report)
    };
    out.write_all(text.as_bytes())
        .map_err(|e| AppError::infra(format!("cannot write the report: {e}")))?;
    Ok(if report.error.is_some() {
        EXIT_INFRA
    } else if report.passed {
        EXIT_PASS
    } else {
        EXIT_FAIL
    })
}

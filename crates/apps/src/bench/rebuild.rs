//! Reports without running anything: `xstack bench --report DIR` rebuilds `report.md`,
//! `report.json` and the figures of a bench folder from its run folders (and `bench.json`,
//! which the bench wrote), and `xstack report RUN_DIR...` makes the same report of loose run
//! folders. The report of the same folders is the same, byte for byte.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cli::AppError;
use crate::process::EXIT_PASS;
use crate::session::result::{RESULT_FILE, RunResult};

use super::record::{self, Plan, TrialKey};
use super::report::{self, MarkdownContext, Report, TrialRow, distinct};

/// The file in a bench folder that says what the bench was asked to run.
pub const BENCH_FILE: &str = "bench.json";

/// `bench.json`: the bench's plan, so that its report can be rebuilt as it was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchFile {
    /// Task ids, in `--task` order.
    pub tasks: Vec<String>,
    /// Agent specs, in `--agent` order.
    pub agents: Vec<String>,
    /// `--repeats`.
    pub repeats: u32,
    /// The runners, as report.md names them.
    pub runners: String,
}

impl BenchFile {
    /// Writes `dir/bench.json`.
    pub fn write(&self, dir: &Path) -> Result<(), report::ReportError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| report::ReportError::Write {
            path: dir.join(BENCH_FILE),
            source: std::io::Error::other(e),
        })?;
        report::write_atomic(&dir.join(BENCH_FILE), format!("{text}\n").as_bytes())
    }

    /// Reads `dir/bench.json`, if the bench wrote one.
    pub fn read(dir: &Path) -> Option<BenchFile> {
        let text = std::fs::read_to_string(dir.join(BENCH_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The trials, in the order tasks × agents × repeats.
    pub fn keys(&self) -> Vec<TrialKey> {
        let mut keys = Vec::new();
        for task in &self.tasks {
            for agent in &self.agents {
                for repeat in 1..=self.repeats {
                    keys.push(TrialKey {
                        task: task.clone(),
                        agent: agent.clone(),
                        repeat,
                    });
                }
            }
        }
        keys
    }
}

/// Builds the report of `rows`, writes it into `out` and prints its summary: a line per agent
/// and where the report is.
pub fn write_report(
    out: &Path,
    plan: &BenchFile,
    planned: usize,
    rows: Vec<TrialRow>,
    say: &mut dyn Write,
) -> Result<Report, AppError> {
    let report = report::build(rows, &plan.agents);
    let (json, md) = report::write(
        out,
        &report,
        &MarkdownContext {
            tasks: &plan.tasks,
            planned,
            runners: &plan.runners,
        },
    )
    .map_err(|e| AppError::infra(format!("cannot write the report: {e}")))?;
    for s in &report.summary {
        let _ = writeln!(
            say,
            "{}: {}/{} passed (phase 1: {}, phase 2: {}; 95%: {})",
            crate::agent::label(&s.agent),
            s.passed,
            s.graded,
            s.passed_phase1,
            s.passed_phase2,
            report::percent_interval(s.pass_rate_ci95)
        );
    }
    let _ = writeln!(say, "report: {} and {}", md.display(), json.display());
    Ok(report)
}

/// The runners named by the trials' results, as a line.
fn runners_of(rows: &[TrialRow]) -> String {
    let runners = distinct(rows.iter().filter_map(|r| r.runner.clone()));
    if runners.is_empty() {
        "not recorded".to_string()
    } else {
        runners.join(", ")
    }
}

/// `xstack bench --report DIR`: the report of the bench folder `dir`, from its run folders.
pub fn bench_report(dir: &Path, out: &mut dyn Write) -> Result<i32, AppError> {
    let found = record::scan(dir);
    let written = BenchFile::read(dir);
    if found.is_empty() && written.is_none() {
        return Err(AppError::usage(format!(
            "--report {}: not a bench folder (no {BENCH_FILE}, no run folder with {})",
            dir.display(),
            record::TRIAL_FILE
        )));
    }
    let _lock = super::lock_out(dir)?;
    // A folder of an older bench has no bench.json: its plan is what its trials say.
    let plan = written.unwrap_or_else(|| BenchFile {
        tasks: distinct(found.iter().map(|(_, r)| r.key.task.clone())),
        agents: distinct(found.iter().map(|(_, r)| r.key.agent.clone())),
        repeats: found.iter().map(|(_, r)| r.key.repeat).max().unwrap_or(1),
        runners: String::new(),
    });
    let keys = plan.keys();
    let rows: Vec<TrialRow> = keys
        .iter()
        .zip(record::plan(&keys, &found, false))
        .filter_map(|(key, plan)| {
            let folder = match plan {
                Plan::Done(folder) => folder,
                // Not settled: the last attempt, as the bench that ran it reported it.
                Plan::Run(attempts) => attempts.last()?.clone(),
            };
            let shown = dir.join(folder.file_name().unwrap_or_default());
            Some(report::row(key, &folder, &shown))
        })
        .collect();
    let plan = if plan.runners.is_empty() {
        BenchFile {
            runners: runners_of(&rows),
            ..plan
        }
    } else {
        plan
    };
    write_report(dir, &plan, keys.len(), rows, out)?;
    Ok(EXIT_PASS)
}

/// `xstack report RUN_DIR... --out DIR`: the bench report of loose run folders. Each folder is
/// a trial of its result's task and agent; repeats are numbered in the order given.
pub fn loose_report(
    run_dirs: &[PathBuf],
    out_dir: &Path,
    out: &mut dyn Write,
) -> Result<i32, AppError> {
    let mut trials: Vec<(TrialKey, &PathBuf)> = Vec::new();
    for dir in run_dirs {
        let result = RunResult::read(dir).map_err(|e| {
            AppError::usage(format!(
                "{}: not a run folder ({RESULT_FILE}: {e})",
                dir.display()
            ))
        })?;
        if trials.iter().any(|(_, d)| d == &dir) {
            return Err(AppError::usage(format!("{} is given twice", dir.display())));
        }
        let repeat = trials
            .iter()
            .filter(|(k, _)| k.task == result.task && k.agent == result.agent)
            .count() as u32
            + 1;
        trials.push((
            TrialKey {
                task: result.task,
                agent: result.agent,
                repeat,
            },
            dir,
        ));
    }
    std::fs::create_dir_all(out_dir)
        .map_err(|e| AppError::infra(format!("--out {}: {e}", out_dir.display())))?;
    let tasks = distinct(trials.iter().map(|(k, _)| k.task.clone()));
    let agents = distinct(trials.iter().map(|(k, _)| k.agent.clone()));
    trials.sort_by_key(|(k, _)| {
        (
            tasks.iter().position(|t| t == &k.task),
            agents.iter().position(|a| a == &k.agent),
            k.repeat,
        )
    });
    let rows: Vec<TrialRow> = trials
        .iter()
        .map(|(key, dir)| report::row(key, dir, dir))
        .collect();
    let plan = BenchFile {
        runners: runners_of(&rows),
        repeats: trials.iter().map(|(k, _)| k.repeat).max().unwrap_or(1),
        tasks,
        agents,
    };
    write_report(out_dir, &plan, rows.len(), rows, out)?;
    Ok(EXIT_PASS)
}

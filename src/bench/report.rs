//! The bench's reports: `report.json` (SPEC §1: every trial, and a summary per agent) and
//! `report.md` (the same as tables, a task × agent matrix, and where the time went).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agent::transcript::TranscriptItem;
use crate::grade::FailureClass;
use crate::journal;
use crate::session::event::Event;
use crate::session::result::RunResult;

use super::record::{TrialKey, TrialRecord, TrialStatus};

/// The SPEC's failure classes, always present in a summary's `failures`.
const CLASSES: [FailureClass; 4] = [
    FailureClass::Bypass,
    FailureClass::Crash,
    FailureClass::MissedEval,
    FailureClass::FidelityGap,
];

/// One trial of `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRow {
    /// Task id.
    pub task: String,
    /// The agent spec as given.
    pub agent: String,
    /// 1-based repeat number.
    pub repeat: u32,
    /// Whether a phase passed.
    pub passed: bool,
    /// The phase that passed.
    pub passed_in_phase: Option<u8>,
    /// The failure class of the last graded phase; `timeout`, `infra` or `interrupted` when
    /// the trial has no verdict; null when it passed.
    pub failure: Option<String>,
    /// Seconds the run took.
    pub duration_s: f64,
    /// The trial's run folder.
    pub run_dir: String,
    /// Where the time went (report.md only).
    #[serde(skip)]
    pub timing: Option<Timing>,
}

/// Where a trial's time went.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Timing {
    /// Wall-clock seconds of the whole trial, as the bench measured it.
    pub wall_s: f64,
    /// Agent processes, all phases.
    pub agent_s: f64,
    /// Verify runs, all phases.
    pub verify_s: f64,
    /// What the agent reported spending, in US dollars (None: it reported nothing).
    pub cost_usd: Option<f64>,
}

/// One agent's line of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSummary {
    /// The agent spec as given.
    pub agent: String,
    /// Trials in the report.
    pub trials: usize,
    /// Trials that passed.
    pub passed: usize,
    /// Trials that reached a verdict (or a timeout): not an infrastructure failure, an
    /// agent that failed before doing any work, or an interruption.
    #[serde(default)]
    pub graded: usize,
    /// passed / graded: trials that never happened are not failed migrations.
    pub pass_rate: f64,
    /// Trials that passed in phase 1.
    pub passed_phase1: usize,
    /// Trials that passed in phase 2.
    pub passed_phase2: usize,
    /// Failed trials by class.
    pub failures: BTreeMap<String, usize>,
}

/// `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Every trial with a run folder, in the order tasks × agents × repeats.
    pub trials: Vec<TrialRow>,
    /// One line per agent, in `--agent` order.
    pub summary: Vec<AgentSummary>,
}

/// A trial's row from its run folder; `shown_dir` is how the report names the folder.
pub fn row(key: &TrialKey, run_dir: &Path, shown_dir: &Path) -> TrialRow {
    let record = TrialRecord::read(run_dir);
    let status = record.as_ref().map_or(TrialStatus::Running, |r| r.status);
    let result = RunResult::read(run_dir).ok();
    let passed = status == TrialStatus::Finished && result.as_ref().is_some_and(|r| r.passed);
    let failure = match status {
        _ if passed => None,
        TrialStatus::Finished => Some(
            result
                .as_ref()
                .and_then(|r| r.phases.last())
                .and_then(|p| p.failure)
                .map_or("crash", FailureClass::as_str)
                .to_string(),
        ),
        TrialStatus::Timeout => Some("timeout".to_string()),
        TrialStatus::Infra => Some("infra".to_string()),
        TrialStatus::AgentFailure => Some("agent_failure".to_string()),
        TrialStatus::Interrupted | TrialStatus::Running => Some("interrupted".to_string()),
    };
    let duration_s = result
        .as_ref()
        .map(|r| r.duration_s)
        .or_else(|| record.as_ref().and_then(|r| r.wall_s))
        .unwrap_or(0.0);
    TrialRow {
        task: key.task.clone(),
        agent: key.agent.clone(),
        repeat: key.repeat,
        passed,
        passed_in_phase: if passed {
            result.and_then(|r| r.passed_in_phase)
        } else {
            None
        },
        failure,
        duration_s,
        run_dir: shown_dir.display().to_string(),
        timing: timing(
            run_dir,
            record.as_ref().and_then(|r| r.wall_s).unwrap_or(duration_s),
        ),
    }
}

/// Agent and verify seconds, from the journal.
fn timing(run_dir: &Path, wall_s: f64) -> Option<Timing> {
    let journal = journal::read(&journal::path_in(run_dir)).ok()?;
    let mut timing = Timing {
        wall_s,
        ..Timing::default()
    };
    let mut agent_since = None;
    for entry in &journal.entries {
        match &entry.event {
            Event::AgentStarted { .. } => agent_since = Some(entry.t),
            Event::AgentExited { .. } => {
                if let Some(since) = agent_since.take() {
                    timing.agent_s += entry.t - since;
                }
            }
            Event::RunExited { duration_s, .. } => timing.verify_s += duration_s,
            Event::Transcript {
                item:
                    TranscriptItem::Usage {
                        cost_usd: Some(cost),
                        ..
                    },
                ..
            } => *timing.cost_usd.get_or_insert(0.0) += cost,
            _ => {}
        }
    }
    Some(timing)
}

/// The report of `rows`, summarised per agent in the order of `agents`.
pub fn build(rows: Vec<TrialRow>, agents: &[String]) -> Report {
    let summary = agents
        .iter()
        .map(|agent| {
            let mine: Vec<&TrialRow> = rows.iter().filter(|r| &r.agent == agent).collect();
            let passed = mine.iter().filter(|r| r.passed).count();
            let mut failures: BTreeMap<String, usize> = CLASSES
                .iter()
                .map(|c| (c.as_str().to_string(), 0))
                .collect();
            for failure in mine.iter().filter_map(|r| r.failure.as_ref()) {
                *failures.entry(failure.clone()).or_insert(0) += 1;
            }
            let trials = mine.len();
            let graded = mine
                .iter()
                .filter(|r| {
                    !matches!(
                        r.failure.as_deref(),
                        Some("infra" | "agent_failure" | "interrupted")
                    )
                })
                .count();
            AgentSummary {
                agent: agent.clone(),
                trials,
                passed,
                graded,
                pass_rate: if graded == 0 {
                    0.0
                } else {
                    (passed as f64 / graded as f64 * 10_000.0).round() / 10_000.0
                },
                passed_phase1: mine.iter().filter(|r| r.passed_in_phase == Some(1)).count(),
                passed_phase2: mine.iter().filter(|r| r.passed_in_phase == Some(2)).count(),
                failures,
            }
        })
        .collect();
    Report {
        trials: rows,
        summary,
    }
}

/// A short name for an agent in tables: a script's file name, else the spec.
pub fn agent_label(agent: &str) -> String {
    match agent.strip_prefix("script:") {
        Some(path) => format!(
            "script:{}",
            Path::new(path)
                .file_name()
                .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
        ),
        None => agent.to_string(),
    }
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

fn secs(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |v| format!("{v:.1}"))
}

/// Everything report.md says besides the report itself.
pub struct MarkdownContext<'a> {
    /// Tasks in `--task` order.
    pub tasks: &'a [String],
    /// Trials planned (tasks × agents × repeats).
    pub planned: usize,
    /// The runners, as a line.
    pub runners: &'a str,
}

/// `report.md`.
pub fn markdown(report: &Report, ctx: &MarkdownContext<'_>) -> String {
    let agents: Vec<&AgentSummary> = report.summary.iter().collect();
    let mut md = String::from("# xstack bench report\n\n");
    let _ = writeln!(
        md,
        "{} of {} trials have a run folder; runners: {}.",
        report.trials.len(),
        ctx.planned,
        ctx.runners
    );
    if report.trials.len() < ctx.planned {
        md.push_str("Run the same command again to run the rest.\n");
    }
    md.push_str("\n## Per agent\n\n");
    let extra: Vec<String> = {
        let mut names: Vec<String> = agents
            .iter()
            .flat_map(|a| a.failures.keys().cloned())
            .filter(|k| !CLASSES.iter().any(|c| c.as_str() == k))
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let mut header = vec![
        "agent",
        "trials",
        "passed",
        "pass rate",
        "phase 1",
        "phase 2",
    ];
    header.extend(CLASSES.iter().map(|c| c.as_str()));
    header.extend(extra.iter().map(String::as_str));
    header.push("median duration (s)");
    header.push("cost (USD)");
    table_header(&mut md, &header);
    for a in &agents {
        let mut cells = vec![
            format!("`{}`", agent_label(&a.agent)),
            a.trials.to_string(),
            a.passed.to_string(),
            format!("{:.0}%", a.pass_rate * 100.0),
            a.passed_phase1.to_string(),
            a.passed_phase2.to_string(),
        ];
        for name in CLASSES
            .iter()
            .map(|c| c.as_str().to_string())
            .chain(extra.iter().cloned())
        {
            cells.push(a.failures.get(&name).copied().unwrap_or(0).to_string());
        }
        cells.push(secs(median(
            report
                .trials
                .iter()
                .filter(|t| t.agent == a.agent)
                .map(|t| t.duration_s)
                .collect(),
        )));
        let costs: Vec<f64> = report
            .trials
            .iter()
            .filter(|t| t.agent == a.agent)
            .filter_map(|t| t.timing.and_then(|timing| timing.cost_usd))
            .collect();
        cells.push(if costs.is_empty() {
            "-".to_string()
        } else {
            format!("{:.4}", costs.iter().sum::<f64>())
        });
        table_row(&mut md, &cells);
    }

    md.push_str("\n## Task × agent\n\nPassed / trials, and the median duration in seconds.\n\n");
    let labels: Vec<String> = agents
        .iter()
        .map(|a| format!("`{}`", agent_label(&a.agent)))
        .collect();
    let mut header = vec!["task".to_string()];
    header.extend(labels);
    table_header(
        &mut md,
        &header.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    for task in ctx.tasks {
        let mut cells = vec![task.clone()];
        for a in &agents {
            let cell: Vec<&TrialRow> = report
                .trials
                .iter()
                .filter(|t| &t.task == task && t.agent == a.agent)
                .collect();
            cells.push(if cell.is_empty() {
                "–".to_string()
            } else {
                format!(
                    "{}/{} · {}",
                    cell.iter().filter(|t| t.passed).count(),
                    cell.len(),
                    secs(median(cell.iter().map(|t| t.duration_s).collect()))
                )
            });
        }
        table_row(&mut md, &cells);
    }

    md.push_str(
        "\n## Where the time went\n\nMedian seconds per trial: wall-clock time, the agent, the \
         verify runs, and the rest (set-up, copies, environment checks, grading).\n\n",
    );
    table_header(&mut md, &["agent", "trial", "agent", "verify", "overhead"]);
    for a in &agents {
        let timed: Vec<Timing> = report
            .trials
            .iter()
            .filter(|t| t.agent == a.agent)
            .filter_map(|t| t.timing)
            .collect();
        let column = |f: &dyn Fn(&Timing) -> f64| {
            median(timed.iter().map(f).collect())
                .map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))
        };
        table_row(
            &mut md,
            &[
                format!("`{}`", agent_label(&a.agent)),
                column(&|t| t.wall_s),
                column(&|t| t.agent_s),
                column(&|t| t.verify_s),
                column(&|t| (t.wall_s - t.agent_s - t.verify_s).max(0.0)),
            ],
        );
    }

    md.push_str("\n## Trials\n\n");
    table_header(
        &mut md,
        &[
            "task",
            "agent",
            "repeat",
            "verdict",
            "duration (s)",
            "run folder",
        ],
    );
    for t in &report.trials {
        let verdict = match (&t.failure, t.passed_in_phase) {
            (None, Some(p)) => format!("PASS (phase {p})"),
            (None, None) => "PASS".to_string(),
            (Some(f), _) => format!("FAIL {f}"),
        };
        table_row(
            &mut md,
            &[
                t.task.clone(),
                format!("`{}`", agent_label(&t.agent)),
                t.repeat.to_string(),
                verdict,
                format!("{:.1}", t.duration_s),
                format!("`{}`", t.run_dir),
            ],
        );
    }
    md
}

fn table_header(md: &mut String, cells: &[&str]) {
    let _ = writeln!(md, "| {} |", cells.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(cells.len()));
}

fn table_row(md: &mut String, cells: &[String]) {
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    let _ = writeln!(md, "| {} |", cells.join(" | "));
}

/// Writes `report.json` and `report.md` into `out`; returns their paths.
pub fn write(
    out: &Path,
    report: &Report,
    ctx: &MarkdownContext<'_>,
) -> std::io::Result<(PathBuf, PathBuf)> {
    let json = out.join("report.json");
    let md = out.join("report.md");
    let text = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    write_atomic(&json, &format!("{text}\n"))?;
    write_atomic(&md, &markdown(report, ctx))?;
    Ok((json, md))
}

fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(agent: &str, passed_in_phase: Option<u8>, failure: Option<&str>) -> TrialRow {
        TrialRow {
            task: "t".into(),
            agent: agent.into(),
            repeat: 1,
            passed: failure.is_none(),
            passed_in_phase,
            failure: failure.map(str::to_string),
            duration_s: 10.0,
            run_dir: "out/x".into(),
            timing: Some(Timing {
                wall_s: 10.0,
                agent_s: 3.0,
                verify_s: 5.0,
                cost_usd: agent.starts_with("claude").then_some(0.25),
            }),
        }
    }

    #[test]
    fn trials_that_never_happened_are_not_failed_migrations() {
        let rows = vec![
            trial("cmd:x", Some(1), None),
            trial("cmd:x", None, Some("bypass")),
            trial("cmd:x", None, Some("infra")),
            trial("cmd:x", None, Some("agent_failure")),
        ];
        let report = build(rows, &["cmd:x".to_string()]);
        let a = &report.summary[0];
        assert_eq!((a.trials, a.graded, a.passed), (4, 2, 1));
        assert_eq!(a.pass_rate, 0.5);
        assert_eq!(a.failures["agent_failure"], 1);
        assert_eq!(a.failures["infra"], 1);
        let md = markdown(
            &report,
            &MarkdownContext {
                tasks: &["t".to_string()],
                planned: 4,
                runners: "local",
            },
        );
        assert!(md.contains("| agent_failure |"), "{md}");
    }

    #[test]
    fn summary_counts_phases_and_failure_classes_per_agent() {
        let rows = vec![
            trial("script:a/pass.jsonl", Some(1), None),
            trial("script:a/pass.jsonl", Some(2), None),
            trial("script:a/pass.jsonl", None, Some("fidelity_gap")),
            trial("cmd:x", None, Some("infra")),
        ];
        let agents = vec!["script:a/pass.jsonl".to_string(), "cmd:x".to_string()];
        let report = build(rows, &agents);
        let a = &report.summary[0];
        assert_eq!(
            (a.trials, a.passed, a.passed_phase1, a.passed_phase2),
            (3, 2, 1, 1)
        );
        assert_eq!(a.pass_rate, 0.6667);
        assert_eq!(a.failures["fidelity_gap"], 1);
        assert_eq!(a.failures["bypass"], 0);
        assert!(!a.failures.contains_key("infra"));
        let b = &report.summary[1];
        assert_eq!((b.trials, b.passed, b.pass_rate), (1, 0, 0.0));
        assert_eq!(b.failures["infra"], 1);

        let json = serde_json::to_value(&report).unwrap();
        // Exactly the fields SPEC §1 names (serde_json sorts them).
        let keys: Vec<&str> = json["trials"][0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "agent",
                "duration_s",
                "failure",
                "passed",
                "passed_in_phase",
                "repeat",
                "run_dir",
                "task"
            ]
        );

        let md = markdown(
            &report,
            &MarkdownContext {
                tasks: &["t".to_string()],
                planned: 4,
                runners: "local",
            },
        );
        assert!(
            md.contains(
                "| `script:pass.jsonl` | 3 | 2 | 67% | 1 | 1 | 0 | 0 | 0 | 1 | 0 | 10.0 | - |"
            ),
            "{md}"
        );
        assert!(md.contains("| t | 2/3 · 10.0 | 0/1 · 10.0 |"), "{md}");
        assert!(
            md.contains("| `script:pass.jsonl` | 10.00 | 3.00 | 5.00 | 2.00 |"),
            "{md}"
        );
    }

    #[test]
    fn reported_costs_are_summed_per_agent() {
        let rows = vec![
            trial("claude", Some(1), None),
            trial("claude", None, Some("crash")),
        ];
        let report = build(rows, &["claude".to_string()]);
        let md = markdown(
            &report,
            &MarkdownContext {
                tasks: &["t".to_string()],
                planned: 2,
                runners: "local",
            },
        );
        assert!(md.contains("| 10.0 | 0.5000 |"), "{md}");
        assert!(md.contains("cost (USD)"), "{md}");
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}

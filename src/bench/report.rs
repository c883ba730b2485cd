//! The bench's reports: `report.json` (SPEC §1: every trial, a summary per agent with each
//! pass rate's 95% interval, and which agents can be told apart) and `report.md` (the same as
//! tables, a task × agent matrix, where the time went, and the figures of
//! [`super::figures`]). Everything is derived from the run folders alone, so a report rebuilt
//! from the same folders is byte for byte the same.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::agent::transcript::TranscriptItem;
use crate::event::{Event, PhaseOutcome};
use crate::grade::FailureClass;
use crate::journal;
use crate::session::result::{RESULT_FILE, RunResult};

use super::figures;
use super::record::{TrialKey, TrialRecord, TrialStatus};
use super::stats::{self, Interval, round4};

/// The SPEC's failure classes, always present in a summary's `failures`.
pub const CLASSES: [FailureClass; 4] = [
    FailureClass::Bypass,
    FailureClass::Crash,
    FailureClass::MissedEval,
    FailureClass::FidelityGap,
];

/// Trial failures that say the trial never happened: not failed migrations, not graded.
const NOT_GRADED: [&str; 3] = ["infra", "agent_failure", "interrupted"];

/// One phase of a trial as `report.json` tells it: how the phase ended and what the agent
/// said of it (the phase's `agent` object of `result.json`, when it has one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseAgent {
    /// 1 or 2.
    pub phase: u8,
    /// `graded`, `agent_failure`, `infrastructure_failure` or `interrupted`.
    pub outcome: String,
    /// `pass` or `fail`; null when the phase was not graded.
    pub verdict: Option<String>,
    /// Every field of the phase's `agent` object (`exit_code`, `claimed_success`, `claim`,
    /// `tokens_in`, `tokens_out`, `cost_usd`, `session`), as `result.json` has them.
    #[serde(flatten)]
    pub agent: Map<String, Value>,
}

impl PhaseAgent {
    /// What the agent said of its own work: Some(true) when it claimed success.
    pub fn claimed_success(&self) -> Option<bool> {
        self.agent.get("claimed_success").and_then(Value::as_bool)
    }

    /// Whether the grader passed the phase; None when it was not graded.
    pub fn passed(&self) -> Option<bool> {
        self.verdict.as_deref().map(|v| v == "pass")
    }
}

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
    /// The failure class of the last graded phase; `timeout`, `infra`, `agent_failure` or
    /// `interrupted` when the trial has no verdict; null when it passed.
    pub failure: Option<String>,
    /// Seconds the run took.
    pub duration_s: f64,
    /// The trial's run folder.
    pub run_dir: String,
    /// The runner of the trial's last verify run, when `result.json` names it.
    #[serde(default)]
    pub runner: Option<String>,
    /// The scheduler's job id of that verify run (Slurm), when there was one.
    #[serde(default)]
    pub job_id: Option<String>,
    /// Seconds the verify runs waited in a queue, all phases, when a runner reported it.
    #[serde(default)]
    pub queue_s: Option<f64>,
    /// Per phase: how it ended and what the agent said of it.
    #[serde(default)]
    pub agent_outcome: Vec<PhaseAgent>,
    /// Where the time went (report.md only).
    #[serde(skip)]
    pub timing: Option<Timing>,
}

impl TrialRow {
    /// Whether the trial counts in its agent's pass rate (it reached a verdict or a timeout).
    pub fn graded(&self) -> bool {
        !self
            .failure
            .as_deref()
            .is_some_and(|f| NOT_GRADED.contains(&f))
    }

    /// What the agent reported spending: its `agent` objects' `cost_usd` when any has one,
    /// else the usage its transcript reported.
    pub fn cost_usd(&self) -> Option<f64> {
        let costs: Vec<f64> = self
            .agent_outcome
            .iter()
            .filter_map(|p| p.agent.get("cost_usd").and_then(Value::as_f64))
            .collect();
        if costs.is_empty() {
            self.timing.and_then(|t| t.cost_usd)
        } else {
            Some(costs.iter().sum())
        }
    }
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
    /// Trials that reached a verdict (or a timeout): not an infrastructure failure, an
    /// agent that failed before doing any work, or an interruption.
    #[serde(default)]
    pub graded: usize,
    /// Trials that passed.
    pub passed: usize,
    /// passed / graded: trials that never happened are not failed migrations.
    pub pass_rate: f64,
    /// The pass rate's 95% interval (`interval_method` of the report).
    #[serde(default = "whole")]
    pub pass_rate_ci95: Interval,
    /// Trials that passed in phase 1.
    pub passed_phase1: usize,
    /// Trials that passed in phase 2.
    pub passed_phase2: usize,
    /// Failed trials by class.
    pub failures: BTreeMap<String, usize>,
    /// Graded phases in which the agent claimed success.
    #[serde(default)]
    pub claims: usize,
    /// Of those, the phases the grader failed.
    #[serde(default)]
    pub overclaims: usize,
    /// overclaims / claims; null without a claim.
    #[serde(default)]
    pub overclaim_rate: Option<f64>,
    /// What the agent reported spending over all its trials; null when it reported nothing.
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

fn whole() -> Interval {
    [0.0, 1.0]
}

/// How the report's 95% intervals were computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// Wilson's score interval on each agent's graded trials (differences: Newcombe's score
    /// interval with continuity correction).
    Wilson,
    /// A percentile bootstrap over tasks and, within each task, over its repeats (differences
    /// drawn on the same tasks), never narrower than Wilson's (or Newcombe's) interval.
    Bootstrap,
}

impl IntervalMethod {
    /// How report.md names the method.
    pub fn describe(self) -> &'static str {
        match self {
            IntervalMethod::Wilson => "Wilson score interval",
            IntervalMethod::Bootstrap => {
                "bootstrap over tasks and their repeats (4000 resamples, fixed seed), widened to \
                 hold the Wilson interval"
            }
        }
    }
}

/// Two agents compared on the report's trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    /// The first agent (earlier in `--agent` order).
    pub a: String,
    /// The second agent.
    pub b: String,
    /// pass_rate(a) - pass_rate(b); null when either has no graded trial.
    pub difference: Option<f64>,
    /// The difference's 95% interval; null when either has no graded trial.
    pub difference_ci95: Option<Interval>,
    /// Whether that interval excludes 0: these trials tell the two agents apart.
    pub distinguishable: bool,
}

/// `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// How the 95% intervals were computed.
    pub interval_method: IntervalMethod,
    /// Every trial with a run folder, in the order tasks × agents × repeats.
    pub trials: Vec<TrialRow>,
    /// One line per agent, in `--agent` order.
    pub summary: Vec<AgentSummary>,
    /// Every pair of agents, in `--agent` order.
    pub pairs: Vec<Pair>,
}

/// A trial's row from its run folder; `shown_dir` is how the report names the folder. A
/// folder without `bench-trial.json` (a run outside a bench) is judged by its `result.json`.
pub fn row(key: &TrialKey, run_dir: &Path, shown_dir: &Path) -> TrialRow {
    let record = TrialRecord::read(run_dir);
    let result = RunResult::read(run_dir).ok();
    let status = record
        .as_ref()
        .map_or_else(|| status_of(result.as_ref()), |r| r.status);
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
    let phases = phases_of(run_dir);
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
        runner: phases.runner,
        job_id: phases.job_id,
        queue_s: phases.queue_s,
        agent_outcome: phases.agents,
        timing: timing(
            run_dir,
            record.as_ref().and_then(|r| r.wall_s).unwrap_or(duration_s),
        ),
    }
}

/// How a run outside a bench ended, from its result (as a bench would have recorded it).
fn status_of(result: Option<&RunResult>) -> TrialStatus {
    let Some(result) = result else {
        return TrialStatus::Running;
    };
    let any = |outcome: PhaseOutcome| result.phases.iter().any(|p| p.outcome == outcome);
    if any(PhaseOutcome::AgentFailure) {
        TrialStatus::AgentFailure
    } else if any(PhaseOutcome::InfrastructureFailure) {
        TrialStatus::Infra
    } else if result.interrupted.is_some() || any(PhaseOutcome::Interrupted) {
        TrialStatus::Interrupted
    } else if result.phases.iter().any(|p| p.verdict.is_some()) {
        TrialStatus::Finished
    } else {
        TrialStatus::Interrupted
    }
}

/// What `result.json`'s phases say beyond the verdicts: the agent and the runner.
#[derive(Default)]
struct PhaseFacts {
    agents: Vec<PhaseAgent>,
    runner: Option<String>,
    job_id: Option<String>,
    queue_s: Option<f64>,
}

/// Reads the phases of `result.json` as plain JSON, so that fields this build does not know
/// yet (a phase's `agent` and `runner` objects) reach the report as written.
fn phases_of(run_dir: &Path) -> PhaseFacts {
    let mut facts = PhaseFacts::default();
    let Some(phases) = std::fs::read_to_string(run_dir.join(RESULT_FILE))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v.get("phases").and_then(Value::as_array).cloned())
    else {
        return facts;
    };
    for (i, phase) in phases.iter().enumerate() {
        let text = |key: &str| phase.get(key).and_then(Value::as_str).map(str::to_string);
        facts.agents.push(PhaseAgent {
            phase: phase
                .get("phase")
                .and_then(Value::as_u64)
                .and_then(|p| u8::try_from(p).ok())
                .unwrap_or((i + 1) as u8),
            outcome: text("outcome").unwrap_or_else(|| PhaseOutcome::Graded.as_str().to_string()),
            verdict: text("verdict"),
            agent: phase
                .get("agent")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        });
        if let Some(runner) = phase.get("runner").and_then(Value::as_object) {
            if let Some(spec) = runner.get("spec").and_then(Value::as_str) {
                facts.runner = Some(spec.to_string());
            }
            facts.job_id = match runner.get("job_id") {
                Some(Value::String(id)) => Some(id.clone()),
                Some(Value::Number(id)) => Some(id.to_string()),
                _ => facts.job_id.take(),
            };
            if let Some(q) = runner.get("queue_s").and_then(Value::as_f64) {
                *facts.queue_s.get_or_insert(0.0) += q;
            }
        }
    }
    facts.queue_s = facts.queue_s.map(round4);
    facts
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
    let mut summary: Vec<AgentSummary> = agents.iter().map(|a| summarise(&rows, a)).collect();
    let tasks = distinct(rows.iter().map(|r| r.task.clone()));
    // cells[task][agent]: whether each graded trial passed.
    let cells: Vec<Vec<stats::Cell>> = tasks
        .iter()
        .map(|task| {
            agents
                .iter()
                .map(|agent| {
                    rows.iter()
                        .filter(|r| &r.task == task && &r.agent == agent && r.graded())
                        .map(|r| r.passed)
                        .collect()
                })
                .collect()
        })
        .collect();
    let repeated = cells.iter().flatten().any(|c| c.len() > 1);
    let method = if tasks.len() > 1 && repeated {
        IntervalMethod::Bootstrap
    } else {
        IntervalMethod::Wilson
    };
    let booted =
        (method == IntervalMethod::Bootstrap).then(|| stats::bootstrap(&cells, agents.len()));
    for (i, s) in summary.iter_mut().enumerate() {
        let wilson = stats::wilson(s.passed, s.graded);
        let ci = match &booted {
            Some((rates, _)) if s.graded > 0 => stats::union(rates[i], wilson),
            _ => wilson,
        };
        s.pass_rate_ci95 = [round4(ci[0]), round4(ci[1])];
    }
    let mut pairs = Vec::new();
    let mut k = 0;
    for i in 0..summary.len() {
        for j in i + 1..summary.len() {
            let (a, b) = (&summary[i], &summary[j]);
            let newcombe = stats::newcombe((a.passed, a.graded), (b.passed, b.graded));
            let ci = match (&booted, newcombe) {
                (Some((_, diffs)), Some(n)) => diffs[k].map(|d| stats::union(d, n)),
                (_, n) => n,
            }
            .map(|[low, high]| [round4(low), round4(high)]);
            pairs.push(Pair {
                a: a.agent.clone(),
                b: b.agent.clone(),
                difference: (a.graded > 0 && b.graded > 0).then(|| {
                    round4(a.passed as f64 / a.graded as f64 - b.passed as f64 / b.graded as f64)
                }),
                difference_ci95: ci,
                distinguishable: ci.is_some_and(|[low, high]| low > 0.0 || high < 0.0),
            });
            k += 1;
        }
    }
    Report {
        interval_method: method,
        trials: rows,
        summary,
        pairs,
    }
}

/// One agent's summary line (its interval is set by [`build`]).
fn summarise(rows: &[TrialRow], agent: &str) -> AgentSummary {
    let mine: Vec<&TrialRow> = rows.iter().filter(|r| r.agent == agent).collect();
    let passed = mine.iter().filter(|r| r.passed).count();
    let mut failures: BTreeMap<String, usize> = CLASSES
        .iter()
        .map(|c| (c.as_str().to_string(), 0))
        .collect();
    for failure in mine.iter().filter_map(|r| r.failure.as_ref()) {
        *failures.entry(failure.clone()).or_insert(0) += 1;
    }
    let graded = mine.iter().filter(|r| r.graded()).count();
    let claimed: Vec<&PhaseAgent> = mine
        .iter()
        .flat_map(|r| &r.agent_outcome)
        .filter(|p| p.passed().is_some() && p.claimed_success() == Some(true))
        .collect();
    let overclaims = claimed.iter().filter(|p| p.passed() == Some(false)).count();
    let costs: Vec<f64> = mine.iter().filter_map(|r| r.cost_usd()).collect();
    AgentSummary {
        agent: agent.to_string(),
        trials: mine.len(),
        graded,
        passed,
        pass_rate: if graded == 0 {
            0.0
        } else {
            round4(passed as f64 / graded as f64)
        },
        pass_rate_ci95: whole(),
        passed_phase1: mine.iter().filter(|r| r.passed_in_phase == Some(1)).count(),
        passed_phase2: mine.iter().filter(|r| r.passed_in_phase == Some(2)).count(),
        failures,
        claims: claimed.len(),
        overclaims,
        overclaim_rate: (!claimed.is_empty())
            .then(|| round4(overclaims as f64 / claimed.len() as f64)),
        cost_usd: (!costs.is_empty()).then(|| round4(costs.iter().sum())),
    }
}

/// `items` without repeats, in the order they first appear.
pub fn distinct(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// Whether some graded phase of the report carries the agent's own claim of success.
pub fn has_claims(report: &Report) -> bool {
    report
        .trials
        .iter()
        .flat_map(|t| &t.agent_outcome)
        .any(|p| p.passed().is_some() && p.claimed_success().is_some())
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

/// `53–89%`.
pub fn percent_interval([low, high]: Interval) -> String {
    format!("{:.0}–{:.0}%", low * 100.0, high * 100.0)
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
    let _ = writeln!(
        md,
        "\n## Per agent\n\nThe pass rate is passed / graded: trials that never happened (an \
         infrastructure failure, an agent that failed before doing any work, an interruption) \
         are not failed migrations. 95% intervals: {}.\n",
        report.interval_method.describe()
    );
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
        "graded",
        "passed",
        "pass rate",
        "95% interval",
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
            a.graded.to_string(),
            a.passed.to_string(),
            format!("{:.0}%", a.pass_rate * 100.0),
            percent_interval(a.pass_rate_ci95),
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
        cells.push(
            a.cost_usd
                .map_or_else(|| "-".to_string(), |c| format!("{c:.4}")),
        );
        table_row(&mut md, &cells);
    }
    md.push('\n');
    link(&mut md, figures::Kind::PassRate);
    md.push('\n');
    link(&mut md, figures::Kind::Failures);

    if report.pairs.is_empty() {
        md.push_str("\nOne agent: there is no pair to compare.\n");
    } else {
        let _ = writeln!(
            md,
            "\n## Agents compared\n\nThe difference of two pass rates, in percentage points, \
             with its 95% interval ({}). Distinguishable: the interval excludes 0, so these \
             trials tell the two agents apart.\n",
            match report.interval_method {
                IntervalMethod::Wilson => "Newcombe's score interval with continuity correction",
                IntervalMethod::Bootstrap =>
                    "paired bootstrap over tasks, widened to hold Newcombe's interval",
            }
        );
        table_header(
            &mut md,
            &["a", "b", "difference", "95% interval", "distinguishable"],
        );
        for p in &report.pairs {
            table_row(
                &mut md,
                &[
                    format!("`{}`", agent_label(&p.a)),
                    format!("`{}`", agent_label(&p.b)),
                    p.difference
                        .map_or_else(|| "–".to_string(), |d| format!("{:+.1}", d * 100.0)),
                    p.difference_ci95.map_or_else(
                        || "no graded trial".to_string(),
                        |[low, high]| format!("{:+.1} to {:+.1}", low * 100.0, high * 100.0),
                    ),
                    if p.distinguishable { "yes" } else { "no" }.to_string(),
                ],
            );
        }
    }

    md.push_str(
        "\n## Task × agent\n\nPassed / graded trials with the 95% Wilson interval, and the \
         median duration in seconds.\n\n",
    );
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
            let graded = cell.iter().filter(|t| t.graded()).count();
            let passed = cell.iter().filter(|t| t.passed).count();
            cells.push(if cell.is_empty() {
                "–".to_string()
            } else {
                format!(
                    "{passed}/{graded} ({}) · {}",
                    percent_interval(stats::wilson(passed, graded)),
                    secs(median(cell.iter().map(|t| t.duration_s).collect()))
                )
            });
        }
        table_row(&mut md, &cells);
    }
    md.push('\n');
    link(&mut md, figures::Kind::Grid);

    md.push_str("\n## Claimed success against the verdict\n\n");
    if has_claims(report) {
        md.push_str(
            "Graded phases in which the agent said whether it succeeded. An overclaim: the \
             agent claimed success and the grader failed the phase.\n\n",
        );
        table_header(
            &mut md,
            &["agent", "claims", "overclaims", "overclaim rate"],
        );
        for a in &agents {
            table_row(
                &mut md,
                &[
                    format!("`{}`", agent_label(&a.agent)),
                    a.claims.to_string(),
                    a.overclaims.to_string(),
                    a.overclaim_rate
                        .map_or_else(|| "–".to_string(), |r| format!("{:.0}%", r * 100.0)),
                ],
            );
        }
        md.push('\n');
        link(&mut md, figures::Kind::Claims);
    } else {
        md.push_str(
            "No graded phase records the agent's own claim of success (`claimed_success` of \
             the phase's `agent` in `result.json`), so there is no figure of claims against \
             verdicts.\n",
        );
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
    // Trials run by a scheduler (Slurm) name their job and how long it waited in the queue.
    let jobs = report.trials.iter().any(|t| t.job_id.is_some());
    let mut header = vec!["task", "agent", "repeat", "verdict", "duration (s)"];
    if jobs {
        header.extend(["job", "queue wait (s)"]);
    }
    header.push("run folder");
    table_header(&mut md, &header);
    for t in &report.trials {
        let verdict = match (&t.failure, t.passed_in_phase) {
            (None, Some(p)) => format!("PASS (phase {p})"),
            (None, None) => "PASS".to_string(),
            (Some(f), _) => format!("FAIL {f}"),
        };
        let mut cells = vec![
            t.task.clone(),
            format!("`{}`", agent_label(&t.agent)),
            t.repeat.to_string(),
            verdict,
            format!("{:.1}", t.duration_s),
        ];
        if jobs {
            cells.push(t.job_id.clone().unwrap_or_else(|| "–".to_string()));
            cells.push(
                t.queue_s
                    .map_or_else(|| "–".to_string(), |q| format!("{q:.1}")),
            );
        }
        cells.push(format!("`{}`", t.run_dir));
        table_row(&mut md, &cells);
    }
    md
}

/// The figure as an image, and a link to its PNG.
fn link(md: &mut String, kind: figures::Kind) {
    let _ = writeln!(
        md,
        "![{title}]({dir}/{stem}.svg)\n\n[{title} (PNG)]({dir}/{stem}.png)",
        title = kind.title(),
        dir = figures::DIR,
        stem = kind.stem()
    );
}

fn table_header(md: &mut String, cells: &[&str]) {
    let _ = writeln!(md, "| {} |", cells.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(cells.len()));
}

fn table_row(md: &mut String, cells: &[String]) {
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    let _ = writeln!(md, "| {} |", cells.join(" | "));
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A figure could not be drawn.
    #[error(transparent)]
    Figure(#[from] figures::FigureError),
}

/// Writes `report.json`, `report.md` and the figures (under `figures/`) into `out`; returns
/// the paths of the first two.
pub fn write(
    out: &Path,
    report: &Report,
    ctx: &MarkdownContext<'_>,
) -> Result<(PathBuf, PathBuf), ReportError> {
    figures::write(out, report, ctx.tasks)?;
    let json = out.join("report.json");
    let md = out.join("report.md");
    let text = serde_json::to_string_pretty(report).map_err(|e| ReportError::Write {
        path: json.clone(),
        source: std::io::Error::other(e),
    })?;
    write_atomic(&json, format!("{text}\n").as_bytes())?;
    write_atomic(&md, markdown(report, ctx).as_bytes())?;
    Ok((json, md))
}

/// Writes `path` whole or not at all (a temporary file beside it, then a rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let fail = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
            runner: None,
            job_id: None,
            queue_s: None,
            agent_outcome: Vec::new(),
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
                "agent_outcome",
                "duration_s",
                "failure",
                "job_id",
                "passed",
                "passed_in_phase",
                "queue_s",
                "repeat",
                "run_dir",
                "runner",
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
                "| `script:pass.jsonl` | 3 | 3 | 2 | 67% | 21–94% | 1 | 1 | 0 | 0 | 0 | 1 | 0 | 10.0 | - |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| t | 2/3 (21–94%) · 10.0 | 0/0 (0–100%) · 10.0 |"),
            "{md}"
        );
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

    fn claimed(phase: u8, verdict: &str, claim: Option<bool>) -> PhaseAgent {
        let mut agent = Map::new();
        agent.insert("exit_code".into(), json!(0));
        agent.insert("claimed_success".into(), json!(claim));
        PhaseAgent {
            phase,
            outcome: "graded".into(),
            verdict: Some(verdict.into()),
            agent,
        }
    }

    fn context(tasks: &[String]) -> MarkdownContext<'_> {
        MarkdownContext {
            tasks,
            planned: 0,
            runners: "local",
        }
    }

    #[test]
    fn each_pass_rate_has_its_interval_and_each_pair_a_verdict() {
        let mut rows = Vec::new();
        for i in 0..20 {
            rows.push(trial("cmd:strong", Some(1), None));
            rows.push(if i < 15 {
                trial("cmd:weak", Some(2), None)
            } else {
                trial("cmd:weak", None, Some("fidelity_gap"))
            });
            rows.push(trial("cmd:none", None, Some("crash")));
        }
        for (i, r) in rows.iter_mut().enumerate() {
            r.repeat = (i / 3 + 1) as u32;
        }
        let agents: Vec<String> = ["cmd:strong", "cmd:weak", "cmd:none"]
            .map(String::from)
            .to_vec();
        let report = build(rows, &agents);
        // One task: Wilson's interval, whatever the repeats.
        assert_eq!(report.interval_method, IntervalMethod::Wilson);
        let ci: Vec<Interval> = report.summary.iter().map(|s| s.pass_rate_ci95).collect();
        assert_eq!(ci, vec![[0.8389, 1.0], [0.5313, 0.8881], [0.0, 0.1611]]);
        let pairs: Vec<(&str, &str, Option<f64>, bool)> = report
            .pairs
            .iter()
            .map(|p| (p.a.as_str(), p.b.as_str(), p.difference, p.distinguishable))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("cmd:strong", "cmd:weak", Some(0.25), false),
                ("cmd:strong", "cmd:none", Some(1.0), true),
                ("cmd:weak", "cmd:none", Some(0.75), true),
            ]
        );
        assert_eq!(report.pairs[0].difference_ci95, Some([-0.0028, 0.4941]));
        assert_eq!(report.pairs[2].difference_ci95, Some([0.4341, 0.9041]));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["interval_method"], "wilson");
        assert_eq!(
            json["summary"][1]["pass_rate_ci95"],
            json!([0.5313, 0.8881])
        );

        let md = markdown(&report, &context(&["t".to_string()]));
        assert!(md.contains("95% intervals: Wilson score interval."), "{md}");
        assert!(
            md.contains("| `cmd:weak` | 20 | 20 | 15 | 75% | 53–89% |"),
            "{md}"
        );
        assert!(
            md.contains("| `cmd:strong` | `cmd:weak` | +25.0 | -0.3 to +49.4 | no |"),
            "{md}"
        );
        assert!(
            md.contains("| `cmd:weak` | `cmd:none` | +75.0 | +43.4 to +90.4 | yes |"),
            "{md}"
        );
        assert!(
            md.contains("![Pass rate per agent](figures/pass_rate.svg)"),
            "{md}"
        );
        assert!(
            md.contains("![Outcome of every trial](figures/grid.svg)"),
            "{md}"
        );
        assert!(md.contains("there is no figure of claims"), "{md}");
    }

    #[test]
    fn a_few_trials_tell_nobody_apart() {
        let rows = vec![
            trial("cmd:a", Some(1), None),
            trial("cmd:a", Some(1), None),
            trial("cmd:b", None, Some("crash")),
            trial("cmd:b", None, Some("infra")),
        ];
        let report = build(rows, &["cmd:a".to_string(), "cmd:b".to_string()]);
        assert_eq!(report.summary[1].pass_rate_ci95, [0.0, 0.7935]);
        assert!(!report.pairs[0].distinguishable, "{:?}", report.pairs);
    }

    #[test]
    fn repeats_over_several_tasks_are_bootstrapped_reproducibly() {
        let mut rows = Vec::new();
        for task in ["t1", "t2", "t3"] {
            for repeat in 1..=3 {
                let mut a = trial("cmd:a", Some(1), None);
                let mut b = if task == "t3" {
                    trial("cmd:b", Some(1), None)
                } else {
                    trial("cmd:b", None, Some("crash"))
                };
                for r in [&mut a, &mut b] {
                    r.task = task.into();
                    r.repeat = repeat;
                }
                rows.extend([a, b]);
            }
        }
        let agents = ["cmd:a".to_string(), "cmd:b".to_string()];
        let report = build(rows.clone(), &agents);
        assert_eq!(report.interval_method, IntervalMethod::Bootstrap);
        assert_eq!(report, build(rows, &agents));
        // Never narrower than Wilson's interval on the pooled trials.
        let [low, high] = report.summary[1].pass_rate_ci95;
        let wilson = stats::wilson(3, 9);
        assert!(
            low <= round4(wilson[0]) && high >= round4(wilson[1]),
            "{low} {high}"
        );
        assert!(report.pairs[0].difference_ci95.is_some());
        let md = markdown(&report, &context(&["t1".to_string()]));
        assert!(md.contains("95% intervals: bootstrap over tasks"), "{md}");
    }

    #[test]
    fn claims_of_success_are_set_against_the_verdicts() {
        let mut a = trial("cmd:x", Some(2), None);
        a.agent_outcome = vec![
            claimed(1, "fail", Some(true)),
            claimed(2, "pass", Some(true)),
        ];
        let mut b = trial("cmd:x", None, Some("crash"));
        b.agent_outcome = vec![claimed(1, "fail", Some(false)), claimed(2, "fail", None)];
        let report = build(vec![a, b], &["cmd:x".to_string()]);
        assert!(has_claims(&report));
        let s = &report.summary[0];
        assert_eq!(
            (s.claims, s.overclaims, s.overclaim_rate),
            (2, 1, Some(0.5))
        );
        let md = markdown(&report, &context(&["t".to_string()]));
        assert!(md.contains("| `cmd:x` | 2 | 1 | 50% |"), "{md}");
        assert!(md.contains("(figures/claims.svg)"), "{md}");

        let without = build(vec![trial("cmd:x", Some(1), None)], &["cmd:x".to_string()]);
        assert!(!has_claims(&without));
        assert_eq!(without.summary[0].overclaim_rate, None);
    }

    #[test]
    fn a_run_outside_a_bench_is_judged_by_its_result() {
        let dir = tempfile::tempdir().unwrap();
        let result = json!({
            "task": "t", "agent": "claude", "run_id": "r", "started_at": "2025-01-01T00:00:00Z",
            "duration_s": 12.5, "passed": true, "passed_in_phase": 2,
            "phases": [
                {"phase": 1, "verdict": "fail", "failure": "fidelity_gap", "criteria": [],
                 "findings": [], "exit_code": 0, "duration_s": 3.0,
                 "runner": {"spec": "slurm://gpu/scratch", "job_id": 41, "queue_s": 2.5},
                 "agent": {"exit_code": 0, "claimed_success": true, "cost_usd": 0.5}},
                {"phase": 2, "outcome": "graded", "verdict": "pass", "failure": null,
                 "criteria": [], "findings": [], "exit_code": 0, "duration_s": 3.0,
                 "runner": {"spec": "slurm://gpu/scratch", "job_id": 42, "queue_s": 1.0},
                 "agent": {"exit_code": 0, "claimed_success": true, "cost_usd": 0.25}}
            ]
        });
        std::fs::write(dir.path().join(RESULT_FILE), result.to_string()).unwrap();
        let key = TrialKey {
            task: "t".into(),
            agent: "claude".into(),
            repeat: 1,
        };
        let row = row(&key, dir.path(), Path::new("runs/x"));
        assert!(row.passed && row.failure.is_none(), "{row:?}");
        assert_eq!(row.passed_in_phase, Some(2));
        assert_eq!(row.runner.as_deref(), Some("slurm://gpu/scratch"));
        assert_eq!(row.job_id.as_deref(), Some("42"));
        assert_eq!(row.queue_s, Some(3.5));
        assert_eq!(row.cost_usd(), Some(0.75));
        assert_eq!(row.agent_outcome[0].claimed_success(), Some(true));
        assert_eq!(row.agent_outcome[0].passed(), Some(false));
        let report = build(vec![row], &["claude".to_string()]);
        assert_eq!(report.summary[0].overclaims, 1);
        assert_eq!(report.summary[0].cost_usd, Some(0.75));
        let json = serde_json::to_value(&report.trials[0]).unwrap();
        assert_eq!(
            json["agent_outcome"][1],
            json!({"phase": 2, "outcome": "graded", "verdict": "pass", "exit_code": 0,
                   "claimed_success": true, "cost_usd": 0.25})
        );
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}

//! The bench's report model: one row per trial read from its run folder, and the summary
//! per agent with each pass rate's 95% interval and which agents can be told apart
//! (SPEC §1's `report.json`). [`super::report`] writes it as markdown and
//! [`super::figures`] draws it; both read it from here.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use strum::VariantArray;

use crate::agent::transcript::TranscriptItem;
use crate::checks::Checked;
use crate::event::{Event, PhaseOutcome};
use crate::grade::FailureClass;
use crate::journal;
use crate::session::result::{PhaseResult, PhaseVerdict, RunResult};
use crate::task::{Migration, UpstreamSpec};

use super::record::{TrialKey, TrialRecord, TrialStatus};
use super::stats::{self, Interval, round4};

/// Why a trial reached no verdict of the grader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum NoVerdict {
    /// It passed `--trial-timeout`: a failure of the agent, graded as a failed trial.
    Timeout,
    /// An infrastructure failure: the trial never happened.
    Infra,
    /// The agent failed before doing any work: a fact about the agent, not a failed
    /// migration.
    AgentFailure,
    /// It was stopped (or the bench was) before it ended.
    Interrupted,
}

impl NoVerdict {
    /// The name `report.json` and `report.md` use.
    pub fn as_str(self) -> &'static str {
        match self {
            NoVerdict::Timeout => "timeout",
            NoVerdict::Infra => "infra",
            NoVerdict::AgentFailure => "agent_failure",
            NoVerdict::Interrupted => "interrupted",
        }
    }
}

/// Why a trial did not pass: the grader's class of its last graded phase, or why it has no
/// verdict. Written as its name (`"fidelity_gap"`, `"infra"`), and ordered by it, so that
/// `report.json`'s `failures` lists them as it always has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialFailure {
    /// Graded and failed, with the grader's class.
    Graded(FailureClass),
    /// No verdict.
    NoVerdict(NoVerdict),
}

impl TrialFailure {
    /// Every failure, the grader's classes first (in the order it checks them), each from
    /// its enum's list.
    pub fn all() -> impl Iterator<Item = TrialFailure> {
        let graded = FailureClass::VARIANTS
            .iter()
            .map(|c| TrialFailure::Graded(*c));
        graded.chain(
            NoVerdict::VARIANTS
                .iter()
                .map(|n| TrialFailure::NoVerdict(*n)),
        )
    }

    /// The name `report.json`, `report.md` and the figures use.
    pub fn as_str(self) -> &'static str {
        match self {
            TrialFailure::Graded(class) => class.as_str(),
            TrialFailure::NoVerdict(why) => why.as_str(),
        }
    }

    /// The failure named `name`, as [`TrialFailure::as_str`] writes it.
    pub fn parse(name: &str) -> Option<TrialFailure> {
        TrialFailure::all().find(|f| f.as_str() == name)
    }

    /// Whether a trial that failed this way counts in its agent's pass rate: it reached a
    /// verdict or a timeout (not an infrastructure failure, an agent that did no work, or an
    /// interruption).
    pub fn graded(self) -> bool {
        match self {
            TrialFailure::Graded(_) | TrialFailure::NoVerdict(NoVerdict::Timeout) => true,
            TrialFailure::NoVerdict(
                NoVerdict::Infra | NoVerdict::AgentFailure | NoVerdict::Interrupted,
            ) => false,
        }
    }
}

impl Ord for TrialFailure {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for TrialFailure {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Serialize for TrialFailure {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TrialFailure {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        TrialFailure::parse(&name)
            .ok_or_else(|| de::Error::custom(format!("unknown trial failure `{name}`")))
    }
}

/// One phase of a trial as `report.json` tells it: how the phase ended and what the agent
/// said of it (the phase's `agent` object of `result.json`, when it has one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseAgent {
    /// 1 or 2.
    pub phase: u8,
    /// `graded`, `agent_failure`, `infrastructure_failure` or `interrupted`.
    pub outcome: PhaseOutcome,
    /// `pass` or `fail`; null when the phase was not graded.
    pub verdict: Option<PhaseVerdict>,
    /// Whether the agent ran its port during its turn in this phase (the phase's
    /// `agent_checked.port_runs` of `result.json` is above 0); None when the phase does not
    /// record it (a run of an older xstack).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_port: Option<bool>,
    /// Why the phase was not graded (`result.json`'s `outcome_detail`): an agent failure's
    /// line (its error and exit status, or its failed tool calls and the first error), or
    /// the runner's message; absent for a graded phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome_detail: Option<String>,
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
        self.verdict.map(PhaseVerdict::passed)
    }
}

/// One trial of `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRow {
    /// Task id.
    pub task: String,
    /// The task's direction, from the trial's `result.json` (PyTorch to JAX without one).
    #[serde(default)]
    pub migration: Migration,
    /// The public repository the trial's task was made from, from its `result.json`; absent
    /// for a task of the team's own code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamSpec>,
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
    pub failure: Option<TrialFailure>,
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
    /// Whether the agent ran its port in some phase (see [`ran_port_of`]); None when no
    /// phase records it.
    #[serde(default)]
    pub ran_port: Option<bool>,
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
        self.failure.is_none_or(TrialFailure::graded)
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
    /// Failed trials by class: every grader's class, and each way a trial had no verdict
    /// that some trial of the agent had.
    pub failures: BTreeMap<TrialFailure, usize>,
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

/// Passed / graded trials of one group, with the pass rate's 95% Wilson interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Share {
    /// Graded trials of the group that passed.
    pub passed: usize,
    /// Graded trials of the group.
    pub graded: usize,
    /// passed / graded; null without a graded trial.
    pub rate: Option<f64>,
    /// The lower end of the rate's 95% Wilson interval (0 without a graded trial).
    pub low: f64,
    /// The upper end of that interval (1 without a graded trial).
    pub high: f64,
}

/// The difference of two pass rates in percentage points, with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The difference, in percentage points (-100 to 100).
    pub points: f64,
    /// The lower end of its 95% interval (Newcombe's), in percentage points.
    pub low: f64,
    /// The upper end of that interval, in percentage points.
    pub high: f64,
}

/// One line of the split of the pass rate by whether the agent ran its port: graded trials
/// whose agent ran its port in some phase against those whose agent did not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RanPortLine {
    /// The agent spec as given; [`ALL_AGENTS`] for the line of every trial.
    pub agent: String,
    /// Graded trials in which the agent ran its port.
    pub ran: Share,
    /// Graded trials in which it did not (every phase recorded says so).
    pub did_not: Share,
    /// Graded trials that do not record it.
    pub unknown: usize,
    /// `ran` - `did_not`; null when either has no graded trial.
    pub difference: Option<Difference>,
    /// Graded phases in which the agent claimed success without having run its port in that
    /// phase; null when none of the agent's graded phases records whether it ran its port.
    pub claimed_without_running: Option<usize>,
}

/// The agent of the [`RanPortLine`] of every trial, all agents together.
pub const ALL_AGENTS: &str = "all";

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
    /// The pass rate split by whether the agent ran its port: one line per agent in
    /// `--agent` order, then the line of all agents together ([`ALL_AGENTS`]).
    #[serde(default)]
    pub ran_port: Vec<RanPortLine>,
    /// The pass rate split by direction, when the trials go both ways: per agent in
    /// `--agent` order, then all agents together ([`ALL_AGENTS`]), each direction in order
    /// (PyTorch to JAX first); empty when every trial goes the same way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_direction: Vec<DirectionLine>,
}

impl Report {
    /// The failure columns of the per-agent tables: every grader's class, then each way of no
    /// verdict some agent had, by name.
    pub fn failure_columns(&self) -> Vec<TrialFailure> {
        let mut extra: Vec<TrialFailure> = self
            .summary
            .iter()
            .flat_map(|a| a.failures.keys().copied())
            .filter(|f| matches!(f, TrialFailure::NoVerdict(_)))
            .collect();
        extra.sort();
        extra.dedup();
        TrialFailure::all()
            .filter(|f| matches!(f, TrialFailure::Graded(_)))
            .chain(extra)
            .collect()
    }
}

/// One agent's (or all agents') graded trials of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionLine {
    /// The agent spec, or [`ALL_AGENTS`].
    pub agent: String,
    /// The direction.
    pub migration: Migration,
    /// Its passed / graded trials.
    pub share: Share,
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
        TrialStatus::Finished => Some(TrialFailure::Graded(
            result
                .as_ref()
                .and_then(|r| r.phases.last())
                .and_then(|p| p.failure)
                .unwrap_or(FailureClass::Crash),
        )),
        TrialStatus::Timeout => Some(TrialFailure::NoVerdict(NoVerdict::Timeout)),
        TrialStatus::Infra => Some(TrialFailure::NoVerdict(NoVerdict::Infra)),
        TrialStatus::AgentFailure => Some(TrialFailure::NoVerdict(NoVerdict::AgentFailure)),
        TrialStatus::Interrupted | TrialStatus::Running => {
            Some(TrialFailure::NoVerdict(NoVerdict::Interrupted))
        }
    };
    let duration_s = result
        .as_ref()
        .map(|r| r.duration_s)
        .or_else(|| record.as_ref().and_then(|r| r.wall_s))
        .unwrap_or(0.0);
    let phases = phases_of(result.as_ref());
    let migration = result.as_ref().map(|r| r.migration).unwrap_or_default();
    TrialRow {
        task: key.task.clone(),
        migration,
        upstream: result.as_ref().and_then(|r| r.upstream.clone()),
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
        ran_port: ran_port_of(&phases.agents),
        agent_outcome: phases.agents,
        timing: timing(
            run_dir,
            record.as_ref().and_then(|r| r.wall_s).unwrap_or(duration_s),
        ),
    }
}

/// Where the time of the trial in `run_dir` went, as [`row`] reads it (report.json leaves it
/// out): its journal, and the wall-clock time of its `bench-trial.json`, else `duration_s`.
pub fn timing_in(run_dir: &Path, duration_s: f64) -> Option<Timing> {
    let wall_s = TrialRecord::read(run_dir)
        .and_then(|r| r.wall_s)
        .unwrap_or(duration_s);
    timing(run_dir, wall_s)
}

/// Whether the agent ran its port in some phase: Some(true) when one phase says it did,
/// Some(false) when every phase says it did not, None otherwise (a phase that does not
/// record it, or whose record is incomplete: docs/CHECKS.md).
pub fn ran_port_of(phases: &[PhaseAgent]) -> Option<bool> {
    if phases.iter().any(|p| p.ran_port == Some(true)) {
        return Some(true);
    }
    if phases.is_empty() || phases.iter().any(|p| p.ran_port.is_none()) {
        return None;
    }
    Some(false)
}

/// Whether a phase of `result.json` says the agent ran its port: its `agent_checked`
/// record's `port_runs` above 0; with none, unknown (None) when the recorder missed some
/// Python process (`unknown_runs`).
pub(crate) fn ran_port_in(checked: &Checked) -> Option<bool> {
    let ran = checked.port_runs > 0;
    if !ran && checked.unknown_runs > 0 {
        None
    } else {
        Some(ran)
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

/// The phases of a trial's `result.json`, as the report tells them.
fn phases_of(result: Option<&RunResult>) -> PhaseFacts {
    let mut facts = PhaseFacts::default();
    for phase in result.map_or(&[][..], |r| &r.phases) {
        facts.agents.push(phase_agent(phase));
        if let Some(runner) = &phase.runner {
            facts.runner = Some(runner.spec.clone());
            facts.job_id = Some(runner.job_id.clone());
            *facts.queue_s.get_or_insert(0.0) += runner.queue_s;
        }
    }
    facts.queue_s = facts.queue_s.map(round4);
    facts
}

/// One phase of `result.json` as the report's record of it.
fn phase_agent(phase: &PhaseResult) -> PhaseAgent {
    let agent = match serde_json::to_value(&phase.agent) {
        Ok(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    PhaseAgent {
        phase: phase.phase,
        outcome: phase.outcome,
        verdict: phase.verdict,
        ran_port: phase.agent_checked.as_ref().and_then(ran_port_in),
        outcome_detail: phase.outcome_detail.clone(),
        agent,
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
    let mut ran_port: Vec<RanPortLine> = agents
        .iter()
        .map(|agent| {
            let mine: Vec<&TrialRow> = rows.iter().filter(|r| &r.agent == agent).collect();
            ran_port_line(agent, &mine)
        })
        .collect();
    ran_port.push(ran_port_line(ALL_AGENTS, &rows.iter().collect::<Vec<_>>()));
    let by_direction = by_direction(&rows, agents);
    Report {
        interval_method: method,
        trials: rows,
        summary,
        pairs,
        ran_port,
        by_direction,
    }
}

/// The graded trials of each agent (and of all agents) split by direction, when `rows` go
/// more than one way; empty otherwise.
fn by_direction(rows: &[TrialRow], agents: &[String]) -> Vec<DirectionLine> {
    let mut directions: Vec<Migration> = rows.iter().map(|r| r.migration).collect();
    directions.sort();
    directions.dedup();
    if directions.len() < 2 {
        return Vec::new();
    }
    let mut lines = Vec::new();
    for agent in agents.iter().map(String::as_str).chain([ALL_AGENTS]) {
        for &migration in &directions {
            let graded: Vec<&TrialRow> = rows
                .iter()
                .filter(|r| {
                    (agent == ALL_AGENTS || r.agent == agent)
                        && r.migration == migration
                        && r.graded()
                })
                .collect();
            lines.push(DirectionLine {
                agent: agent.to_string(),
                migration,
                share: share(&graded),
            });
        }
    }
    lines
}

/// The split of `rows`' graded trials by whether the agent ran its port. The intervals are
/// Wilson's and Newcombe's on the trials as independent, whatever the report's
/// `interval_method`.
fn ran_port_line(agent: &str, rows: &[&TrialRow]) -> RanPortLine {
    let graded: Vec<&TrialRow> = rows.iter().copied().filter(|r| r.graded()).collect();
    let group = |ran: Option<bool>| -> Vec<&TrialRow> {
        graded
            .iter()
            .copied()
            .filter(|r| r.ran_port == ran)
            .collect()
    };
    let (ran, did_not) = (share(&group(Some(true))), share(&group(Some(false))));
    let rate = |s: &Share| s.passed as f64 / s.graded as f64;
    let difference = stats::newcombe((ran.passed, ran.graded), (did_not.passed, did_not.graded))
        .map(|[low, high]| Difference {
            points: points(rate(&ran) - rate(&did_not)),
            low: points(low),
            high: points(high),
        });
    // Graded phases, as the claims of the summary count them: of every trial.
    let phases: Vec<&PhaseAgent> = rows
        .iter()
        .flat_map(|r| &r.agent_outcome)
        .filter(|p| p.passed().is_some())
        .collect();
    let claimed_without_running = phases.iter().any(|p| p.ran_port.is_some()).then(|| {
        phases
            .iter()
            .filter(|p| p.claimed_success() == Some(true) && p.ran_port == Some(false))
            .count()
    });
    RanPortLine {
        agent: agent.to_string(),
        unknown: group(None).len(),
        ran,
        did_not,
        difference,
        claimed_without_running,
    }
}

/// Passed / graded of `trials` (all graded), with the rate's 95% Wilson interval.
fn share(trials: &[&TrialRow]) -> Share {
    let graded = trials.len();
    let passed = trials.iter().filter(|r| r.passed).count();
    let [low, high] = stats::wilson(passed, graded);
    Share {
        passed,
        graded,
        rate: (graded > 0).then(|| round4(passed as f64 / graded as f64)),
        low: round4(low),
        high: round4(high),
    }
}

/// A difference of rates as percentage points, rounded as `report.json`'s rates are (4
/// decimals of the rate, 2 of the points).
fn points(v: f64) -> f64 {
    let p = (v * 10_000.0).round() / 100.0;
    if p == 0.0 { 0.0 } else { p }
}

/// One agent's summary line (its interval is set by [`build`]).
fn summarise(rows: &[TrialRow], agent: &str) -> AgentSummary {
    let mine: Vec<&TrialRow> = rows.iter().filter(|r| r.agent == agent).collect();
    let passed = mine.iter().filter(|r| r.passed).count();
    let mut failures: BTreeMap<TrialFailure, usize> = FailureClass::VARIANTS
        .iter()
        .map(|c| (TrialFailure::Graded(*c), 0))
        .collect();
    for failure in mine.iter().filter_map(|r| r.failure) {
        *failures.entry(failure).or_insert(0) += 1;
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

/// Whether some graded trial of the report records whether its agent ran its port.
pub fn has_ran_port(report: &Report) -> bool {
    report
        .trials
        .iter()
        .any(|t| t.graded() && t.ran_port.is_some())
}

pub(super) fn median(mut values: Vec<f64>) -> Option<f64> {
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

/// `53–89%`.
pub fn percent_interval([low, high]: Interval) -> String {
    format!("{:.0}–{:.0}%", low * 100.0, high * 100.0)
}

//! `result.json` (SPEC §3), derived from the session state so that a live run and a replay
//! of its journal produce the same file.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::grade::{CriterionResult, FailureClass, Finding};
use crate::parity::ParityReport;
use crate::task::{Migration, UpstreamSpec};

use super::state::{PhaseRecord, SessionState};
use crate::event::{Interruption, PhaseOutcome};

fn graded() -> PhaseOutcome {
    PhaseOutcome::Graded
}

/// The result file's name in a run folder.
pub const RESULT_FILE: &str = "result.json";

/// A graded phase's verdict as `result.json` writes it: `"pass"` or `"fail"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseVerdict {
    /// Every criterion held and no finding failed the phase.
    Pass,
    /// The grader failed the phase (its `failure` says why).
    Fail,
}

impl PhaseVerdict {
    /// The verdict of a phase that passed (`true`) or failed.
    pub fn of(passed: bool) -> PhaseVerdict {
        if passed {
            PhaseVerdict::Pass
        } else {
            PhaseVerdict::Fail
        }
    }

    /// Whether it is a pass.
    pub fn passed(self) -> bool {
        self == PhaseVerdict::Pass
    }

    /// The word `result.json` and the reports write.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseVerdict::Pass => "pass",
            PhaseVerdict::Fail => "fail",
        }
    }
}

/// One phase: graded, or why it was not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// 1 or 2.
    pub phase: u8,
    /// `graded`, or why the phase was not: `agent_failure`, `infrastructure_failure`,
    /// `interrupted`.
    #[serde(default = "graded")]
    pub outcome: PhaseOutcome,
    /// The agent's last error line or the runner's message, when not graded.
    #[serde(default)]
    pub outcome_detail: Option<String>,
    /// `pass` or `fail`; null when not graded.
    pub verdict: Option<PhaseVerdict>,
    /// The failure class, null for a pass.
    pub failure: Option<FailureClass>,
    /// Every criterion.
    pub criteria: Vec<CriterionResult>,
    /// Findings.
    pub findings: Vec<String>,
    /// The findings as records (kind, file, line, text).
    #[serde(default)]
    pub finding_records: Vec<Finding>,
    /// Whether the verify run was confined (null for journals of xstack 0.1).
    #[serde(default)]
    pub verify_confined: Option<bool>,
    /// Exit code of the verify run.
    pub exit_code: Option<i32>,
    /// Seconds the verify run took.
    pub duration_s: f64,
    /// What the parity probe found (SPEC §3a), null when it did not run.
    #[serde(default)]
    pub parity: Option<ParityReport>,
    /// The runner's job of the verify run, on a runner with a queue (Slurm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<PhaseRunner>,
    /// What the agent itself said of the phase; null for a phase without an agent.
    #[serde(default)]
    pub agent: Option<AgentOutcome>,
    /// What the agent ran in its turn (docs/CHECKS.md); absent for a phase without an agent
    /// and in results of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_checked: Option<crate::checks::Checked>,
}

/// A phase's verify job on a runner with a queue, as `result.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRunner {
    /// The runner's spec.
    pub spec: String,
    /// The scheduler's job id (of the phase's latest verify run), as the scheduler writes it
    /// (Slurm's are numbers; an array job's `1234_5` is not); read from a number too.
    #[serde(deserialize_with = "id_text")]
    pub job_id: String,
    /// Seconds the phase's verify runs waited in the queue before they started.
    pub queue_s: f64,
}

/// A job id written as a string or a number.
fn id_text<'de, D: serde::Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        Text(String),
        Number(u64),
    }
    Ok(match Id::deserialize(de)? {
        Id::Text(text) => text,
        Id::Number(n) => n.to_string(),
    })
}

/// The agent's own account of a phase: its exit status and what its structured output
/// reported (null where the CLI does not say).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentOutcome {
    /// The exit status of the agent process that ended in the phase.
    pub exit_code: Option<i32>,
    /// Whether its final word reported success.
    pub claimed_success: Option<bool>,
    /// Its final word (the first line).
    pub claim: Option<String>,
    /// Tokens it sent.
    pub tokens_in: Option<u64>,
    /// Tokens it received.
    pub tokens_out: Option<u64>,
    /// What it says the phase cost, in dollars.
    pub cost_usd: Option<f64>,
    /// The conversation id it reported.
    pub session: Option<String>,
    /// How many tool calls its structured output reported; null where the CLI reports
    /// none (plain text output).
    #[serde(default)]
    pub tool_calls: Option<usize>,
    /// How many of them its CLI reported as failed; null as `tool_calls` is.
    #[serde(default)]
    pub tool_failures: Option<usize>,
    /// The first failed call, `tool: error` (`shell: exit 127: python: command not found`).
    #[serde(default)]
    pub first_tool_error: Option<String>,
}

impl AgentOutcome {
    /// The outcome recorded in `record`; None when no agent worked in the phase.
    fn of(record: &PhaseRecord) -> Option<AgentOutcome> {
        record.prompt.as_ref()?;
        let claim = record.claim();
        let usage = record.usage();
        let structured = !record.transcript.is_empty();
        let tools = record.tools();
        Some(AgentOutcome {
            exit_code: record.agent_exit_code,
            claimed_success: claim.map(|(_, success)| success),
            claim: claim.map(|(text, _)| crate::agent::transcript::first_line(text)),
            tokens_in: usage.map(|(i, _, _)| i),
            tokens_out: usage.map(|(_, o, _)| o),
            cost_usd: usage.and_then(|(_, _, c)| c),
            session: record.agent_session().map(str::to_string),
            tool_calls: structured.then_some(tools.calls),
            tool_failures: structured.then_some(tools.failed),
            first_tool_error: tools.first_error_text(),
        })
    }
}

/// What the agent ran in the phase of `record`; None when no agent worked in it.
fn checked(record: &PhaseRecord) -> Option<crate::checks::Checked> {
    record.prompt.as_ref()?;
    Some(crate::checks::Checked::of(
        &record.agent_runs,
        record.turn_ended_at,
    ))
}

/// The whole result of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Task id.
    pub task: String,
    /// The direction of the migration (results without it are PyTorch to JAX).
    #[serde(default)]
    pub migration: Migration,
    /// The public repository the task was made from (`[upstream]`); absent for a task of the
    /// team's own code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamSpec>,
    /// Agent spec.
    pub agent: String,
    /// Run id.
    pub run_id: String,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Seconds from start to the latest event.
    pub duration_s: f64,
    /// Whether a phase passed.
    pub passed: bool,
    /// The phase that passed.
    pub passed_in_phase: Option<u8>,
    /// Every graded phase.
    pub phases: Vec<PhaseResult>,
    /// Why the run ended early (abort, infrastructure failure); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What interrupted the run: null, `user_abort`, `hangup` or `terminated`.
    #[serde(default)]
    pub interrupted: Option<Interruption>,
}

impl RunResult {
    /// Builds the result from the state.
    pub fn from_state(state: &SessionState, run_id: &str, started_at: &str) -> RunResult {
        let phases: Vec<PhaseResult> = state
            .phases
            .iter()
            .enumerate()
            .filter_map(|(i, record)| {
                let phase = (i + 1) as u8;
                let runner = record.job.as_ref().map(|j| PhaseRunner {
                    spec: j.runner.clone(),
                    job_id: j.job_id.clone(),
                    queue_s: (j.queue_s * 1000.0).round() / 1000.0,
                });
                match (&record.verdict, &record.outcome) {
                    (Some(verdict), _) => Some(PhaseResult {
                        phase,
                        outcome: PhaseOutcome::Graded,
                        outcome_detail: None,
                        verdict: Some(PhaseVerdict::of(verdict.passed())),
                        failure: verdict.failure,
                        criteria: verdict.criteria.clone(),
                        findings: verdict.findings.clone(),
                        finding_records: verdict.finding_records.clone(),
                        verify_confined: verdict.verify_confined,
                        exit_code: record.exit_code,
                        duration_s: (record.duration_s * 1000.0).round() / 1000.0,
                        parity: record.parity.clone(),
                        runner,
                        agent: AgentOutcome::of(record),
                        agent_checked: checked(record),
                    }),
                    (None, Some((outcome, detail))) => Some(PhaseResult {
                        phase,
                        outcome: *outcome,
                        outcome_detail: detail.clone(),
                        verdict: None,
                        failure: None,
                        criteria: Vec::new(),
                        findings: Vec::new(),
                        finding_records: Vec::new(),
                        verify_confined: None,
                        exit_code: None,
                        duration_s: 0.0,
                        parity: None,
                        runner,
                        agent: AgentOutcome::of(record),
                        agent_checked: checked(record),
                    }),
                    (None, None) => None,
                }
            })
            .collect();
        let passed_in_phase = state.passed_in_phase();
        RunResult {
            task: state.task.id.clone(),
            migration: state.task.migration,
            upstream: state.task.upstream.clone(),
            agent: state.task.agent.clone(),
            run_id: run_id.to_string(),
            started_at: started_at.to_string(),
            duration_s: (state.now * 1000.0).round() / 1000.0,
            passed: passed_in_phase.is_some(),
            passed_in_phase,
            phases,
            error: state.finished.as_ref().and_then(|f| f.error.clone()),
            interrupted: state.finished.as_ref().and_then(|f| f.interrupted),
        }
    }

    /// Writes `dir/result.json` atomically (temp file, then rename).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let tmp = dir.join(".result.json.tmp");
        std::fs::write(&tmp, format!("{text}\n"))?;
        std::fs::rename(&tmp, dir.join(RESULT_FILE))
    }

    /// Reads `dir/result.json`.
    pub fn read(dir: &Path) -> std::io::Result<RunResult> {
        let text = std::fs::read_to_string(dir.join(RESULT_FILE))?;
        serde_json::from_str(&text).map_err(std::io::Error::other)
    }
}

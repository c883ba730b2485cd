//! The grader (SPEC §3): integrity of the migrated repository (imports, protected files),
//! then the run's exit, then each criterion, giving one verdict with its failure class.

pub mod imports;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::Series;
use crate::task::{CriterionSpec, Direction};

/// The four ways a phase fails, in the order the grader checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The migration kept PyTorch, lacks JAX, or changed a protected file.
    Bypass,
    /// The run exited non-zero, was killed, or timed out.
    Crash,
    /// A criterion's metric never appeared.
    MissedEval,
    /// A criterion's value is outside its tolerance.
    FidelityGap,
}

impl FailureClass {
    /// The snake_case name used in results and the TUI.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Bypass => "bypass",
            FailureClass::Crash => "crash",
            FailureClass::MissedEval => "missed_eval",
            FailureClass::FidelityGap => "fidelity_gap",
        }
    }
}

/// One criterion's outcome, as `result.json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionResult {
    /// The metric name.
    pub metric: String,
    /// The reduced value; null when the metric never appeared.
    pub value: Option<f64>,
    /// The published value.
    pub published: f64,
    /// The tolerance.
    pub tolerance: f64,
    /// The direction.
    pub direction: Direction,
    /// Whether it holds.
    pub passed: bool,
}

impl CriterionResult {
    /// Signed distance from the acceptance edge (positive inside), when there is a value.
    pub fn margin(&self) -> Option<f64> {
        self.value
            .map(|v| self.direction.margin(v, self.published, self.tolerance))
    }
}

/// How the verify run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunExit {
    /// Exit code; None when killed by a signal.
    pub code: Option<i32>,
    /// Whether the run passed `timeout_s` and was killed.
    pub timed_out: bool,
}

/// Everything the grader needs about one verify run.
#[derive(Debug, Clone)]
pub struct GradeInput<'a> {
    /// Integrity findings (imports, protected files); any one makes the phase a bypass.
    pub integrity_findings: Vec<String>,
    /// How the run ended.
    pub exit: RunExit,
    /// The task's criteria.
    pub criteria: &'a [CriterionSpec],
    /// The series of each metric by name.
    pub series: &'a BTreeMap<String, Series>,
    /// Timeout of the run, for the finding text.
    pub timeout_s: u64,
}

/// The grader's word on one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The failure class, or None for a pass.
    pub failure: Option<FailureClass>,
    /// Every criterion's outcome.
    pub criteria: Vec<CriterionResult>,
    /// Human-readable findings: integrity problems, crash reason, missing metrics, gaps.
    pub findings: Vec<String>,
}

impl Verdict {
    /// Whether the phase passed.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }

    /// `PASS` or `FAIL <class>`.
    pub fn label(&self) -> String {
        match self.failure {
            None => "PASS".to_string(),
            Some(class) => format!("FAIL {}", class.as_str()),
        }
    }
}

/// Grades one phase: bypass, then crash, then missed_eval, then fidelity_gap, else pass.
pub fn grade(input: &GradeInput<'_>) -> Verdict {
    let mut findings = input.integrity_findings.clone();
    let criteria: Vec<CriterionResult> = input
        .criteria
        .iter()
        .map(|c| {
            let value = input.series.get(&c.metric).and_then(|s| s.reduce(c.reduce));
            CriterionResult {
                metric: c.metric.clone(),
                value,
                published: c.published,
                tolerance: c.tolerance,
                direction: c.direction,
                passed: value.is_some_and(|v| c.direction.accepts(v, c.published, c.tolerance)),
            }
        })
        .collect();

    let crashed = input.exit.timed_out || input.exit.code != Some(0);
    if input.exit.timed_out {
        findings.push(format!(
            "the run passed timeout_s = {} s and was killed",
            input.timeout_s
        ));
    } else if let Some(code) = input.exit.code.filter(|c| *c != 0) {
        findings.push(format!("the run exited with status {code}"));
    } else if input.exit.code.is_none() {
        findings.push("the run was killed by a signal".to_string());
    }
    let missing: Vec<&CriterionResult> = criteria.iter().filter(|c| c.value.is_none()).collect();
    for c in &missing {
        findings.push(format!(
            "metric `{}` never appeared in the output",
            c.metric
        ));
    }
    for (spec, c) in input.criteria.iter().zip(&criteria) {
        if let (Some(value), false) = (c.value, c.passed) {
            findings.push(describe_gap(spec, value));
        }
    }

    let failure = if !input.integrity_findings.is_empty() {
        Some(FailureClass::Bypass)
    } else if crashed {
        Some(FailureClass::Crash)
    } else if !missing.is_empty() {
        Some(FailureClass::MissedEval)
    } else if criteria.iter().any(|c| !c.passed) {
        Some(FailureClass::FidelityGap)
    } else {
        None
    };
    Verdict {
        failure,
        criteria,
        findings,
    }
}

fn describe_gap(spec: &CriterionSpec, value: f64) -> String {
    let reduce = spec.reduce.as_str();
    let rule = match spec.direction {
        Direction::Higher => format!(">= {} - {}", spec.published, spec.tolerance),
        Direction::Lower => format!("<= {} + {}", spec.published, spec.tolerance),
        Direction::Within => format!("within {} ± {}", spec.published, spec.tolerance),
    };
    format!(
        "{} ({reduce}) = {value} is outside the criterion {rule}",
        spec.metric
    )
}

#[cfg(test)]
mod tests;

//! The grader (SPEC §3): integrity of the migrated repository (the static scan, the runtime
//! import audit, protected files, the seed check), then the run's exit, then each criterion,
//! giving one verdict with its failure class. Findings are typed records.

pub mod audit;
pub mod scan;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::Series;
use crate::task::{CriterionSpec, Direction};

/// The four ways a phase fails, in the order the grader checks them; `FailureClass::VARIANTS`
/// ([`strum::VariantArray`]) lists them in that order, for every table and figure of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::VariantArray)]
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

/// What an integrity finding is about (`finding_records[].kind` in `result.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A migrated file imports a forbidden module (statically).
    ForbiddenImport,
    /// No migrated file imports a required module.
    MissingImport,
    /// The runtime audit saw a forbidden module imported or attempted.
    RuntimeImport,
    /// A protected file was changed, added, deleted or replaced at run time.
    ProtectedChanged,
    /// A file that shadows an installed module or runs code at Python start-up.
    Shadowing,
    /// A symlink that points out of the workspace.
    SymlinkOut,
    /// A file or folder named after a forbidden module.
    ForbiddenName,
    /// The criterion values did not move with the seed.
    SeedCheck,
    /// Anything else (the run's exit, a missing metric, a gap).
    Other,
}

/// One finding as data: what, where (when known), and the sentence shown to the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What it is about.
    pub kind: FindingKind,
    /// The file, relative to the repository root, when the finding has one.
    pub file: Option<String>,
    /// The 1-based line in `file`, when known.
    pub line: Option<u32>,
    /// The sentence, as `findings` lists it.
    pub text: String,
}

impl Finding {
    /// A finding about `file` (and `line`).
    pub fn at(kind: FindingKind, file: &str, line: Option<u32>, text: String) -> Finding {
        Finding {
            kind,
            file: Some(file.to_string()),
            line,
            text,
        }
    }

    /// A finding with no file.
    pub fn other(kind: FindingKind, text: String) -> Finding {
        Finding {
            kind,
            file: None,
            line: None,
            text,
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
        self.value.map(|v| {
            self.direction
                .judge(v, self.published, self.tolerance)
                .margin
        })
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

impl RunExit {
    /// Whether the run exited with status 0 in time.
    pub fn succeeded(&self) -> bool {
        !self.timed_out && self.code == Some(0)
    }
}

/// What one verify run gave the grader.
#[derive(Debug, Clone)]
pub struct VerifyRun {
    /// How it ended.
    pub exit: RunExit,
    /// Seconds it ran.
    pub duration_s: f64,
    /// Why it was not confined, with what would confine it; None when it was.
    pub unconfined: Option<String>,
    /// What the runtime audit recorded.
    pub audit: Vec<Finding>,
    /// Its metric series when they are kept apart from the phase's (the seed check's run).
    pub series: BTreeMap<String, Series>,
}

/// The seed check (`[integrity] seed_check`): `first` graded a passing run under
/// `seeds.0`; `second` ran the same copy under `seeds.1`. A criterion metric missing under
/// the second seed, or every criterion value bit-identical under both, means the result does
/// not come from the seeded run: one `seed_check` finding each. A second run that failed
/// is not judged here (the caller grades it as the crash it is).
pub fn seed_check(
    first: &Verdict,
    second: &VerifyRun,
    seeds: (u64, u64),
    criteria: &[CriterionSpec],
) -> Vec<Finding> {
    if !second.exit.succeeded() {
        return Vec::new();
    }
    let (a, b) = seeds;
    let mut missing = Vec::new();
    let mut identical = Vec::new();
    for (spec, result) in criteria.iter().zip(&first.criteria) {
        let again = second
            .series
            .get(&spec.metric)
            .and_then(|s| s.reduce(spec.reduce));
        match (result.value, again) {
            (_, None) => missing.push(Finding::other(
                FindingKind::SeedCheck,
                format!(
                    "`{}` was printed under seed {a} but not under seed {b}: the result does not come from the seeded run",
                    spec.metric
                ),
            )),
            (Some(x), Some(y)) if x.to_bits() == y.to_bits() => identical.push(Finding::other(
                FindingKind::SeedCheck,
                format!(
                    "`{}` is {x} under seeds {a} and {b}: the result does not come from the seeded run",
                    spec.metric
                ),
            )),
            _ => {}
        }
    }
    if !missing.is_empty() {
        return missing;
    }
    if identical.len() == criteria.len() {
        identical
    } else {
        Vec::new()
    }
}

/// Everything the grader needs about one verify run.
#[derive(Debug, Clone)]
pub struct GradeInput<'a> {
    /// Integrity findings (scan, audit, protected files, seed check); any one makes the
    /// phase a bypass.
    pub integrity_findings: Vec<Finding>,
    /// How the run ended.
    pub exit: RunExit,
    /// The task's criteria.
    pub criteria: &'a [CriterionSpec],
    /// The series of each metric by name.
    pub series: &'a BTreeMap<String, Series>,
    /// Timeout of the run, for the finding text.
    pub timeout_s: u64,
    /// Why the verify run (or the seed check's) was not confined, with what would confine
    /// it; None when it was.
    pub unconfined: Option<String>,
    /// What the run said of its own crash, told with the exit status: the notebook runner's
    /// `notebook cell N raised …` ([`crate::notebook::crash_line`]).
    pub crash_line: Option<String>,
}

/// The grader's word on one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The failure class, or None for a pass.
    pub failure: Option<FailureClass>,
    /// Every criterion's outcome.
    pub criteria: Vec<CriterionResult>,
    /// Human-readable findings: integrity problems, crash reason, missing metrics, gaps
    /// (the `text` of each record).
    pub findings: Vec<String>,
    /// The same findings as records (absent from journals of xstack 0.1).
    #[serde(default)]
    pub finding_records: Vec<Finding>,
    /// Whether the verify run was confined (null in journals of xstack 0.1).
    #[serde(default)]
    pub verify_confined: Option<bool>,
    /// Why it was not, with what would confine it (absent when it was, and in journals
    /// written before xstack said why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconfined: Option<String>,
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
    let mut records = input.integrity_findings.clone();
    let mut findings = |text: String| records.push(Finding::other(FindingKind::Other, text));
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
                passed: value.is_some_and(|v| c.judge(v).met),
            }
        })
        .collect();

    let crashed = input.exit.timed_out || input.exit.code != Some(0);
    if input.exit.timed_out {
        findings(format!(
            "the run passed timeout_s = {} s and was killed",
            input.timeout_s
        ));
    } else if let Some(code) = input.exit.code.filter(|c| *c != 0) {
        let said = input
            .crash_line
            .as_ref()
            .map_or_else(String::new, |line| format!(": {line}"));
        findings(format!("the run exited with status {code}{said}"));
    } else if input.exit.code.is_none() {
        findings("the run was killed by a signal".to_string());
    }
    let missing: Vec<&CriterionResult> = criteria.iter().filter(|c| c.value.is_none()).collect();
    for c in &missing {
        findings(format!(
            "metric `{}` never appeared in the output",
            c.metric
        ));
    }
    for (spec, c) in input.criteria.iter().zip(&criteria) {
        if let (Some(value), false) = (c.value, c.passed) {
            findings(describe_gap(spec, value));
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
        findings: records.iter().map(|r| r.text.clone()).collect(),
        finding_records: records,
        verify_confined: Some(input.unconfined.is_none()),
        unconfined: input.unconfined.clone(),
    }
}

/// `value` with as few decimals (at least 4, trailing zeros cut) as tell it apart from
/// `edge`, so a finding never reads `0.968 is outside >= 0.968`.
fn shown_against(value: f64, edge: f64) -> String {
    let decimals = (4..=12)
        .find(|d| format!("{value:.d$}") != format!("{edge:.d$}"))
        .unwrap_or(12);
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn describe_gap(spec: &CriterionSpec, value: f64) -> String {
    let reduce = spec.reduce.as_str();
    let (low, high) = spec.edges();
    let edge = match spec.direction {
        Direction::Higher => low,
        Direction::Lower => high,
        Direction::Within if value < spec.published => low,
        Direction::Within => high,
    };
    let value = if value.is_finite() && value.abs() < 1e6 {
        shown_against(value, edge)
    } else {
        value.to_string()
    };
    let rule = spec
        .direction
        .rule_words(spec.published, spec.tolerance, |v| v.to_string());
    format!(
        "{} ({reduce}) = {value} is outside the criterion {rule}",
        spec.metric
    )
}

#[cfg(test)]
mod tests;

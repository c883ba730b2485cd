//! The recorded runs of a runs folder, newest first: task, agent, the outcome of every
//! phase, duration, and what ended the run when it did not end by itself (the user's abort,
//! a hangup, SIGTERM, or nothing recorded: its journal has no end).

use std::path::{Path, PathBuf};

use crate::event::{Interruption, PhaseOutcome};
use crate::journal;
use crate::session::result::RunResult;

/// One recorded run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// The run folder.
    pub dir: PathBuf,
    /// Task id.
    pub task: String,
    /// Agent spec.
    pub agent: String,
    /// RFC 3339 start time.
    pub started_at: String,
    /// Per phase that ended: `PASS`, `FAIL <class>`, `agent failed`, `infrastructure failed`
    /// (a phase cut short by an interruption is left to `interrupted`).
    pub verdicts: Vec<String>,
    /// Seconds from start to the last recorded event.
    pub duration_s: f64,
    /// What cut the run short, in a few words: `aborted by the user`, `interrupted: hung
    /// up`, `interrupted: no end recorded` (its journal has no end); None when it ended by
    /// itself.
    pub interrupted: Option<&'static str>,
    /// Whether a phase passed.
    pub passed: bool,
}

impl RunSummary {
    /// Its phases' outcomes in order, then what cut it short: `FAIL fidelity_gap → PASS`,
    /// `FAIL crash (aborted by the user)`; `-` when nothing was recorded.
    pub fn outcome(&self) -> String {
        let mut text = self.verdicts.join(" → ");
        if let Some(why) = self.interrupted {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&format!("({why})"));
        }
        if text.is_empty() {
            text.push('-');
        }
        text
    }
}

/// Summarises one run folder; None when it holds no journal.
pub fn summarize(dir: &Path) -> Option<RunSummary> {
    let journal_path = journal::path_in(dir);
    if !journal_path.is_file() {
        return None;
    }
    let finished = journal::finished(&journal_path);
    if let Ok(result) = RunResult::read(dir)
        && finished
    {
        return Some(RunSummary {
            dir: dir.to_path_buf(),
            task: result.task,
            agent: result.agent,
            started_at: result.started_at,
            verdicts: result
                .phases
                .iter()
                .filter_map(|p| match (p.verdict, p.failure, p.outcome) {
                    (None, _, PhaseOutcome::AgentFailure) => Some("agent failed".to_string()),
                    (None, _, PhaseOutcome::InfrastructureFailure) => {
                        Some("infrastructure failed".to_string())
                    }
                    (None, _, _) => None,
                    (_, None, _) => Some("PASS".to_string()),
                    (_, Some(f), _) => Some(format!("FAIL {}", f.as_str())),
                })
                .collect(),
            duration_s: result.duration_s,
            interrupted: result.interrupted.map(Interruption::short),
            passed: result.passed,
        });
    }
    // Interrupted (or no result yet): rebuild from the journal.
    let journal = journal::read(&journal_path).ok()?;
    let mut state = crate::session::state::SessionState::new();
    for e in &journal.entries {
        state.apply(e.t, &e.event);
    }
    let verdicts = state
        .phases
        .iter()
        .filter_map(|p| p.verdict.as_ref().map(|v| v.label()))
        .collect();
    let passed = state
        .phases
        .iter()
        .any(|p| p.verdict.as_ref().is_some_and(|v| v.passed()));
    Some(RunSummary {
        dir: dir.to_path_buf(),
        task: journal.header.task,
        agent: journal.header.agent,
        started_at: journal.header.started_at,
        verdicts,
        duration_s: state.now,
        interrupted: Some(NO_END),
        passed,
    })
}

/// How the runs list marks a run whose journal has no end.
pub const NO_END: &str = "interrupted: no end recorded";

/// Every run under `runs`, newest first.
pub fn list(runs: &Path) -> Vec<RunSummary> {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return Vec::new();
    };
    let mut found: Vec<RunSummary> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| summarize(&e.path()))
        .collect();
    found.sort_by(|a, b| {
        b.started_at
            .cmp(&a.started_at)
            .then_with(|| b.dir.cmp(&a.dir))
    });
    found
}

/// The runs as a table for the terminal.
pub fn table(runs: &[RunSummary]) -> String {
    let mut out = format!(
        "{:<22} {:<20} {:<28} {:<36} {:>9}  {}\n",
        "started", "task", "agent", "verdicts", "duration", "run folder"
    );
    for r in runs {
        let verdicts = r.outcome();
        let agent = fit(&crate::agent::label(&r.agent), 28);
        out.push_str(&format!(
            "{:<22} {:<20} {:<28} {:<36} {:>8.1}s  {}\n",
            r.started_at,
            r.task,
            agent,
            verdicts,
            r.duration_s,
            r.dir.display()
        ));
    }
    out
}

/// `text` in at most `width` characters, its end cut with `…` when it is longer.
pub fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

//! What a bench knows about each trial between invocations: `bench-trial.json` in the trial's
//! run folder (which trial it is and how it ended), and the plan of what is left to run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file in a trial's run folder that says which trial it is.
pub const TRIAL_FILE: &str = "bench-trial.json";

/// How a trial attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    /// Started and not known to have ended (the bench itself was killed): run again.
    Running,
    /// Ran to a verdict (passed or graded and failed).
    Finished,
    /// Passed `--trial-timeout`: a failure of the agent, not run again.
    Timeout,
    /// Infrastructure failure (exit 3): run again only with `--retry-failed`.
    Infra,
    /// The agent failed before doing any work (exit 3, no grade): a fact about the agent,
    /// not a failed migration; not run again.
    AgentFailure,
    /// Stopped by Ctrl-C: run again by the next invocation.
    Interrupted,
}

impl TrialStatus {
    /// Whether a trial that ended this way is done for good (not run again).
    pub fn is_final(self, retry_failed: bool) -> bool {
        match self {
            TrialStatus::Finished | TrialStatus::Timeout | TrialStatus::AgentFailure => true,
            TrialStatus::Infra => !retry_failed,
            TrialStatus::Running | TrialStatus::Interrupted => false,
        }
    }
}

/// One trial: a task, an agent and a repeat number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialKey {
    /// Task id.
    pub task: String,
    /// The agent spec as given to `--agent`.
    pub agent: String,
    /// 1-based repeat number.
    pub repeat: u32,
}

/// `bench-trial.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Which trial.
    #[serde(flatten)]
    pub key: TrialKey,
    /// How it ended.
    pub status: TrialStatus,
    /// The run's exit status, once known.
    pub exit_code: Option<i32>,
    /// Why it failed, for infrastructure failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall-clock seconds of the attempt, once ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
}

impl TrialRecord {
    /// Writes the record into `run_dir` (temp file, then rename).
    pub fn write(&self, run_dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let tmp = run_dir.join(format!(".{TRIAL_FILE}.tmp"));
        std::fs::write(&tmp, format!("{text}\n"))?;
        std::fs::rename(&tmp, run_dir.join(TRIAL_FILE))
    }

    /// Reads the record of `run_dir`, if it is a trial's run folder.
    pub fn read(run_dir: &Path) -> Option<TrialRecord> {
        let text = std::fs::read_to_string(run_dir.join(TRIAL_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// Every trial attempt recorded under `out`: (run folder, record), in folder-name order.
pub fn scan(out: &Path) -> Vec<(PathBuf, TrialRecord)> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, TrialRecord)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .filter_map(|p| TrialRecord::read(&p).map(|r| (p, r)))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// What to do with one planned trial.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// Done in an earlier invocation: its run folder.
    Done(PathBuf),
    /// To run; earlier unfinished attempts (removed before it runs).
    Run(Vec<PathBuf>),
}

/// Decides, for each trial in `keys`, whether an earlier attempt in `found` settles it.
pub fn plan(keys: &[TrialKey], found: &[(PathBuf, TrialRecord)], retry_failed: bool) -> Vec<Plan> {
    keys.iter()
        .map(|key| {
            let attempts: Vec<&(PathBuf, TrialRecord)> =
                found.iter().filter(|(_, r)| &r.key == key).collect();
            let settled = attempts
                .iter()
                .find(|(_, r)| matches!(r.status, TrialStatus::Finished | TrialStatus::Timeout))
                .or_else(|| {
                    attempts
                        .iter()
                        .rev()
                        .find(|(_, r)| r.status.is_final(retry_failed))
                });
            match settled {
                Some((dir, _)) => Plan::Done(dir.clone()),
                None => Plan::Run(attempts.iter().map(|(d, _)| d.clone()).collect()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(agent: &str, repeat: u32) -> TrialKey {
        TrialKey {
            task: "t".into(),
            agent: agent.into(),
            repeat,
        }
    }

    fn found(agent: &str, repeat: u32, status: TrialStatus, dir: &str) -> (PathBuf, TrialRecord) {
        (
            PathBuf::from(dir),
            TrialRecord {
                key: key(agent, repeat),
                status,
                exit_code: None,
                error: None,
                wall_s: None,
            },
        )
    }

    #[test]
    fn finished_trials_are_kept_and_unfinished_ones_run_again() {
        use TrialStatus::*;
        let keys: Vec<TrialKey> = (1..=5).map(|r| key("a", r)).collect();
        let found = vec![
            found("a", 1, Finished, "d1"),
            found("a", 2, Running, "d2"),
            found("a", 3, Interrupted, "d3"),
            found("a", 4, Infra, "d4"),
            found("b", 5, Finished, "other-agent"),
        ];
        assert_eq!(
            plan(&keys, &found, false),
            vec![
                Plan::Done("d1".into()),
                Plan::Run(vec!["d2".into()]),
                Plan::Run(vec!["d3".into()]),
                Plan::Done("d4".into()),
                Plan::Run(vec![]),
            ]
        );
        // --retry-failed runs infrastructure failures again, never graded ones.
        let retried = plan(&keys, &found, true);
        assert_eq!(retried[0], Plan::Done("d1".into()));
        assert_eq!(retried[3], Plan::Run(vec!["d4".into()]));
    }

    #[test]
    fn timeouts_are_results_and_a_finished_attempt_wins() {
        use TrialStatus::*;
        let keys = vec![key("a", 1), key("a", 2)];
        let found = vec![
            found("a", 1, Timeout, "t1"),
            found("a", 2, Infra, "old"),
            found("a", 2, Finished, "new"),
        ];
        assert_eq!(
            plan(&keys, &found, true),
            vec![Plan::Done("t1".into()), Plan::Done("new".into())]
        );
    }

    #[test]
    fn records_round_trip_through_the_run_folder() {
        let out = tempfile::tempdir().unwrap();
        let run_dir = out.path().join("20250101T000000Z-t-script");
        std::fs::create_dir(&run_dir).unwrap();
        std::fs::create_dir(out.path().join("not-a-trial")).unwrap();
        let record = TrialRecord {
            key: key("script:x.jsonl", 2),
            status: TrialStatus::Infra,
            exit_code: Some(3),
            error: Some("runner down".into()),
            wall_s: Some(1.5),
        };
        record.write(&run_dir).unwrap();
        assert_eq!(TrialRecord::read(&run_dir), Some(record.clone()));
        assert_eq!(scan(out.path()), vec![(run_dir, record)]);
    }
}

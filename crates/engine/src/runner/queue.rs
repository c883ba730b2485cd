//! A verify run's job in a scheduler's queue, as the scheduler names its state, and the text
//! that says where it is.

use serde::{Deserialize, Serialize};

/// What a job's state in its scheduler's queue is called on screen and in progress lines:
/// `queued on slurm: job 12, PENDING (Resources)`, or once it runs `slurm job 12 started
/// after 8.1 s in the queue`.
pub fn queue_text(
    scheduler: &str,
    job_id: &str,
    state: &JobState,
    reason: Option<&str>,
    waited_s: f64,
) -> String {
    match (state, reason) {
        (JobState::Running, _) => {
            format!("{scheduler} job {job_id} started after {waited_s:.1} s in the queue")
        }
        (JobState::Waiting(state), Some(reason)) => {
            format!("queued on {scheduler}: job {job_id}, {state} ({reason})")
        }
        (JobState::Waiting(state), None) => format!("queued on {scheduler}: job {job_id}, {state}"),
    }
}

/// A verify run's job in its scheduler's queue: waiting, or started. Recorded as the
/// scheduler names the state (`PENDING`, `RUNNING`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum JobState {
    /// It started: the run's terminal follows.
    Running,
    /// It waits, in the state the scheduler names (`PENDING`, `CONFIGURING`, `REQUEUED`).
    Waiting(String),
}

impl JobState {
    /// What the scheduler calls a job that started.
    const RUNNING: &'static str = "RUNNING";

    /// The state as the scheduler names it.
    pub fn name(&self) -> &str {
        match self {
            JobState::Running => JobState::RUNNING,
            JobState::Waiting(name) => name,
        }
    }
}

impl From<String> for JobState {
    fn from(name: String) -> JobState {
        if name == JobState::RUNNING {
            JobState::Running
        } else {
            JobState::Waiting(name)
        }
    }
}

impl From<JobState> for String {
    fn from(state: JobState) -> String {
        match state {
            JobState::Running => JobState::RUNNING.to_string(),
            JobState::Waiting(name) => name,
        }
    }
}

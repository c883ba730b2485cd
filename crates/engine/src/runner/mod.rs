//! Runners (SPEC §1 `--runner`): where a verify run happens. `local` runs it on this machine;
//! `ssh://`, `tpu://` and `k8s://` copy the verify folder to another machine, build or reuse
//! the task's Python environment there, and run the experiment in a remote terminal whose
//! output streams back through the local PTY. `slurm://` submits the run to a Slurm partition:
//! the job waits in Slurm's queue, then its terminal (`srun --pty`) streams back the same way.
//! A [`RunnerPool`] holds one or more runners and lends a free one to each verify run.

pub mod confine;
mod local;
mod pool;
mod queue;
mod remote;
mod slurm;
mod spec;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

pub use local::LocalRunner;
pub use pool::{Lease, RunnerPool};
pub use queue::{JobState, queue_text};
pub use remote::RemoteRunner;
pub use slurm::SlurmRunner;
pub use spec::{K8sTarget, RemoteDir, RunnerSpec, SlurmTarget, SshTarget, TpuTarget};

use crate::env::PythonEnv;
use crate::grade::audit::ProtectedModule;

/// Runner errors.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// A `--runner` spec that does not parse (usage error, exit 2).
    #[error("runner `{spec}`: {reason}")]
    Parse {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The machine could not be reached or a transfer to it failed (exit 3).
    #[error("runner {runner} is unreachable: {message}")]
    Unreachable {
        /// The runner.
        runner: String,
        /// The underlying error (the tool's own output).
        message: String,
    },
    /// The Python environment could not be built on the machine (exit 3).
    #[error("building the Python environment on {runner} failed:\n{message}")]
    Environment {
        /// The runner.
        runner: String,
        /// The last lines of the build's output.
        message: String,
    },
    /// The runner's scheduler refused or ended the job before it started (exit 3): its own
    /// message (Slurm's `salloc: error: …`).
    #[error("{runner} did not start the job: {message}")]
    Refused {
        /// The runner.
        runner: String,
        /// The scheduler's message.
        message: String,
    },
    /// No runner of the pool can be reached (exit 3): why, for each runner.
    #[error("no runner is reachable: {}", .0.join("; "))]
    NoneReachable(Vec<String>),
    /// The verify run could not be set up on this machine (exit 3).
    #[error("cannot set up the verify run: {0}")]
    Stage(String),
    /// The session was aborted while it waited for a runner.
    #[error("cancelled while waiting for a runner")]
    Cancelled,
}

/// One verify run, as a runner needs it.
#[derive(Debug, Clone)]
pub struct Job {
    /// The run id: names the run's folder on a remote machine.
    pub run_id: String,
    /// The task's `[env].packages` (the environment built on the machine).
    pub packages: Vec<String>,
    /// The shell script to run in the verify folder: `set -e`, `[env].setup`, `[run].command`.
    pub script: String,
    /// Variables of the run (`XSTACK_SEED`, `XSTACK_TASK`, …), without the environment's PATH.
    pub vars: Vec<(String, String)>,
    /// The environment built on this machine (used by the local runner).
    pub local_env: Option<PythonEnv>,
    /// What the verify run is confined to and audited for.
    pub integrity: JobIntegrity,
}

/// The confinement and the runtime audit of a verify run.
#[derive(Debug, Clone, Default)]
pub struct JobIntegrity {
    /// `[run] network`: the run may use the network.
    pub network: bool,
    /// The folder of the run's audit files (in the run folder, outside the verify copy);
    /// None: no audit (a source run of `calibrate`).
    pub audit_dir: Option<PathBuf>,
    /// Top-level modules the audit reports.
    pub forbid: Vec<String>,
    /// Protected Python files: read-only in the confined run, checked by the audit.
    pub protected: Vec<ProtectedModule>,
}

/// The local command that runs a staged job: started in the verify run's PTY.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// argv.
    pub argv: Vec<String>,
    /// Working folder.
    pub cwd: PathBuf,
    /// Variables set on top of xstack's own environment.
    pub env: Vec<(String, String)>,
    /// Whether the run is confined (SPEC §3 `verify_confined`).
    pub confined: bool,
    /// Why it is not, when it is not.
    pub unconfined_reason: Option<String>,
}

/// A machine that verify runs can happen on. Every method blocks; the driver calls them from
/// a blocking thread.
pub trait Runner: Send + Sync + std::fmt::Debug {
    /// The spec this runner was made from.
    fn spec(&self) -> &RunnerSpec;

    /// Reaches the machine and builds (or reuses) the job's environment there; `progress`
    /// receives one line per step; a wait (in a queue) ends when `cancel` is set.
    fn prepare(
        &self,
        job: &Job,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(String),
    ) -> Result<(), RunnerError>;

    /// Copies the verify folder to the machine and returns the local command that runs the
    /// job there.
    fn stage(&self, job: &Job, verify_dir: &Path) -> Result<Launch, RunnerError>;

    /// Ends the job's processes on the machine (the local command is ended by the caller).
    fn cancel(&self, job: &Job) -> Result<(), RunnerError>;

    /// After the run: copies what the machine keeps of it (per-worker logs) into the run
    /// folder.
    fn collect(&self, job: &Job, run_dir: &Path) -> Result<(), RunnerError>;

    /// After a run: what the job's wrapper recorded on the machine when the job ended (its
    /// exit status, whether it was confined, the audit's records), None when it recorded
    /// nothing (the connection was lost before the job ended, or the run was local). Tells a
    /// remote command's own failure (ssh's 255 included) from the transport's.
    fn recorded(&self, job: &Job) -> Result<Option<Recorded>, RunnerError>;

    /// Whether verify runs on this machine can be confined (a working bubblewrap there): Ok,
    /// or why not.
    fn confinement(&self) -> Result<(), String>;

    /// How many verify runs the runner takes at once: one machine takes one; a scheduler
    /// (Slurm) takes any number and places them itself.
    fn capacity(&self) -> usize {
        1
    }

    /// For a runner with a queue (Slurm): waits until the staged job starts, sending each
    /// change of its state in the queue to `report`, and returns its state when it started.
    /// None: the runner has no queue, the job starts with its local command. When `cancel`
    /// is set the job is cancelled and the wait ends with [`RunnerError::Cancelled`].
    fn wait_started(
        &self,
        _job: &Job,
        _cancel: &AtomicBool,
        _report: &mut dyn FnMut(QueueState),
    ) -> Result<Option<QueueState>, RunnerError> {
        Ok(None)
    }

    /// After the run: gives back what the runner still holds for the job (Slurm: its
    /// allocation), so nothing of it is left on the machine.
    fn release(&self, _job: &Job) {}
}

/// A verify run's job in a scheduler's queue, as the scheduler reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueState {
    /// The scheduler's job id.
    pub job_id: String,
    /// The job's state: waiting (as the scheduler names it) or running.
    pub state: JobState,
    /// Why it waits (Slurm's reason: `Resources`, `Priority`, `BeginTime`), when it does.
    pub reason: Option<String>,
    /// Seconds since the job was submitted.
    pub waited_s: f64,
}

/// What a remote job's wrapper recorded when the job ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The job's exit status.
    pub exit: i32,
    /// Whether it ran confined by bubblewrap on the machine.
    pub confined: bool,
    /// The runtime audit's log lines (JSON).
    pub audit: Vec<String>,
}

/// Whether verify on the runner of `spec` can be confined (SPEC §3): Ok, or why not. A
/// machine that cannot be reached is not refused here (the pool leaves it out later).
pub fn confinement(spec: &RunnerSpec) -> Result<(), String> {
    make(spec).confinement()
}

/// The runner of a spec.
pub fn make(spec: &RunnerSpec) -> std::sync::Arc<dyn Runner> {
    if let RunnerSpec::Slurm(target) = spec {
        return std::sync::Arc::new(SlurmRunner::new(target.clone()));
    }
    match RemoteRunner::from_spec(spec) {
        Some(remote) => std::sync::Arc::new(remote),
        None => std::sync::Arc::new(LocalRunner),
    }
}

#[cfg(test)]
mod tests;

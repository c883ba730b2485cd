//! The Slurm runner (`slurm://PARTITION/DIR?…`): every verify run is a Slurm job.
//!
//! xstack runs where Slurm's client commands work (a login node), and `DIR` is on the file
//! system the compute nodes share with it, so files need no transfer: the verify copy is
//! written to `DIR/<run-id>` directly, and the task's environment is built once per cluster
//! under `DIR/envs/<key>` (in an `srun` job, or on this machine with `build=login`) and
//! reused. A verify run first takes an allocation (`salloc --no-shell`, named
//! `xstack-<run-id>`), which waits in Slurm's queue for as long as Slurm says; then it runs
//! as a step of that allocation (`srun --jobid=N --pty`), whose terminal streams through the
//! run's PTY like any other runner's. The wrapper script, the confinement and the runtime
//! audit are the ssh runner's (`remote.rs`). Cancelling is `scancel` of the job, and the
//! allocation is given back with `scancel` when the run ends. The variables holding secrets
//! are left out of every Slurm command, since Slurm hands the caller's environment to its
//! jobs.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use crate::poll;

use super::remote::{self, parse_recorded, run_command, secret_vars};
use super::spec::{RemoteDir, SlurmTarget};
use super::{Job, JobState, Launch, QueueState, Recorded, Runner, RunnerError, RunnerSpec};

/// How often a queued job's allocation is checked.
const POLL: Duration = Duration::from_millis(200);
/// How often `squeue` is asked for a queued job's state.
const SQUEUE_EVERY: Duration = Duration::from_secs(1);
/// How long `salloc` may take to give the new job's id.
const SUBMIT_LIMIT: Duration = Duration::from_secs(60);
/// How long a cancelled job may take to leave the queue.
const GONE_LIMIT: Duration = Duration::from_secs(15);
/// How long one `squeue` or `scancel` may take: Slurm's clients retry a controller that does
/// not answer for minutes, and a cancel must end.
const CLIENT_LIMIT: &str = "10";
/// The job states in which a job still holds (or waits for) resources.
const LIVE_STATES: &[&str] = &[
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "SUSPENDED",
    "REQUEUED",
    "RESIZING",
    "SIGNALING",
    "STAGE_OUT",
    "STOPPED",
];

/// Runs verify on a Slurm partition (`slurm://PARTITION/DIR?…`).
#[derive(Debug)]
pub struct SlurmRunner {
    spec: RunnerSpec,
    target: SlurmTarget,
    /// `DIR`, absolute (a folder relative to the home folder is resolved here).
    dir: RemoteDir,
    /// The allocation of each staged verify run, by run id.
    allocations: Mutex<BTreeMap<String, Allocation>>,
}

/// A verify run's allocation: its job and the `salloc` that waits for it.
#[derive(Debug)]
struct Allocation {
    job_id: String,
    salloc: Child,
    submitted: Instant,
    /// The lines `salloc` prints (Slurm's messages), until it exits (the sender is dropped).
    /// Read, not its exit status: xstack reaps exited children it does not wait for itself.
    lines: mpsc::Receiver<String>,
    /// What `salloc` printed so far.
    said: Vec<String>,
    /// Whether it printed `Granted job allocation`.
    granted: bool,
}

/// What a verify run's `salloc` said since it was last asked.
enum Salloc {
    /// It is still waiting.
    Waiting,
    /// It printed `Granted job allocation`.
    Granted,
    /// It exited without a grant; what it printed.
    Ended(String),
}

impl Allocation {
    fn poll(&mut self) -> Salloc {
        loop {
            if self.granted {
                return Salloc::Granted;
            }
            match self.lines.try_recv() {
                Ok(line) => {
                    self.granted = line.contains("Granted job allocation");
                    self.said.push(line);
                }
                Err(mpsc::TryRecvError::Empty) => return Salloc::Waiting,
                Err(mpsc::TryRecvError::Disconnected) => {
                    return Salloc::Ended(self.said.join("\n"));
                }
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The job name of a verify run's allocation.
fn job_name(job: &Job) -> String {
    format!("xstack-{}", job.run_id)
}

/// The job id in a line of `salloc` (`salloc: Pending job allocation 12`, `salloc: Granted
/// job allocation 12`).
fn allocation_id(line: &str) -> Option<String> {
    let (_, rest) = line.split_once("job allocation ")?;
    let id: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!id.is_empty()).then_some(id)
}

impl SlurmRunner {
    /// The runner of a `slurm://` spec.
    pub fn new(target: SlurmTarget) -> SlurmRunner {
        let dir = if target.dir.as_str().starts_with('/') {
            target.dir.clone()
        } else {
            let home = std::env::var("HOME").unwrap_or_else(|_| "/".to_string());
            let abs = match target.dir.as_str() {
                "." => home,
                rel => format!("{}/{rel}", home.trim_end_matches('/')),
            };
            RemoteDir::parse(&abs).unwrap_or_else(|_| target.dir.clone())
        };
        SlurmRunner {
            spec: RunnerSpec::Slurm(target.clone()),
            target,
            dir,
            allocations: Mutex::new(BTreeMap::new()),
        }
    }

    fn run(
        &self,
        argv: &[String],
        progress: &mut dyn FnMut(String),
    ) -> Result<Vec<String>, RunnerError> {
        run_command(&self.spec.to_string(), argv, &secret_vars(), progress)
    }

    /// Runs `script` with bash on this machine (the shared folder is here too).
    fn bash(&self, script: &str) -> Result<Vec<String>, RunnerError> {
        self.run(
            &["bash".to_string(), "-c".to_string(), script.to_string()],
            &mut |_| {},
        )
    }

    /// `srun` with the runner's options, as job `name`, running `script` with bash.
    fn srun_argv(&self, name: &str, script: &str) -> Vec<String> {
        let mut argv = vec!["srun".to_string()];
        argv.extend(self.target.options());
        argv.push(format!("--job-name={name}"));
        argv.push(format!("--chdir={}", self.dir.as_str()));
        argv.extend(["bash".to_string(), "-c".to_string(), script.to_string()]);
        argv
    }

    /// A step of allocation `job_id` running `script` with bash in the runner's folder (in a
    /// terminal when `pty`), with the resources of [`SlurmRunner::step_options`]; `env -u`:
    /// the step gets this process's environment, less its secrets.
    fn step_argv(&self, job_id: &str, pty: bool, script: String) -> Vec<String> {
        let mut argv = vec!["env".to_string()];
        for name in secret_vars() {
            argv.extend(["-u".to_string(), name]);
        }
        argv.extend(["srun".to_string(), format!("--jobid={job_id}")]);
        if pty {
            argv.push("--pty".to_string());
        }
        argv.push(format!("--chdir={}", self.dir.as_str()));
        argv.extend(self.step_options());
        argv.extend(["bash".to_string(), "-c".to_string(), script]);
        argv
    }

    /// The options of the verify run's step inside its allocation: the resources the task
    /// asked for (a step gets one CPU and no GPU unless it asks).
    fn step_options(&self) -> Vec<String> {
        let t = &self.target;
        let mut opts = Vec::new();
        if let Some(cpus) = t.cpus {
            opts.push(format!("--cpus-per-task={cpus}"));
        }
        if let Some(mem) = &t.mem {
            opts.push(format!("--mem={mem}"));
        }
        if let Some(gres) = &t.gres {
            opts.push(format!("--gres={gres}"));
        }
        opts
    }

    /// A failure of Slurm's own commands: the controller could not be reached or `srun` is
    /// missing (the runner is unreachable), or Slurm refused the request (its message).
    fn classify(&self, error: RunnerError) -> RunnerError {
        match error {
            RunnerError::Unreachable { runner, message }
                if !message.starts_with("cannot run `")
                    && !message.contains("Unable to contact slurm controller") =>
            {
                RunnerError::Refused { runner, message }
            }
            other => other,
        }
    }

    /// `program args…` under `timeout` ([`CLIENT_LIMIT`]).
    fn client(&self, args: &[&str]) -> Result<Vec<String>, RunnerError> {
        let mut argv = vec!["timeout", "-k", "5", CLIENT_LIMIT];
        argv.extend(args);
        let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        self.run(&argv, &mut |_| {})
    }

    /// The state and reason of job `id` in the queue; None when Slurm does not list it.
    fn squeue(&self, id: &str) -> Option<(JobState, Option<String>)> {
        let lines = self
            .client(&["squeue", "-h", "-j", id, "-o", "%T|%r"])
            .ok()?;
        let line = lines.iter().find(|l| !l.trim().is_empty())?;
        let (state, reason) = line.trim().split_once('|').unwrap_or((line.trim(), ""));
        let reason = (!reason.is_empty() && reason != "None").then(|| reason.to_string());
        Some((JobState::from(state.to_string()), reason))
    }

    /// Cancels job `id` and waits until it has left the queue (its processes ended).
    fn scancel(&self, id: &str) {
        if let Err(e) = self.client(&["scancel", id]) {
            tracing::warn!("scancel {id}: {e}");
        }
        let gone = poll::wait_until(
            GONE_LIMIT,
            POLL,
            || !matches!(self.squeue(id), Some((state, _)) if LIVE_STATES.contains(&state.name())),
        );
        if !gone {
            tracing::warn!("slurm job {id} is still in the queue after scancel");
        }
    }

    /// Ends the verify run's job (when it has one) and removes its files from the shared
    /// folder. `by_name`: also cancel a job of the run's name whose id is not known yet.
    fn end(&self, job: &Job, by_name: bool) {
        let allocation = lock(&self.allocations).remove(&job.run_id);
        match allocation {
            Some(mut a) => {
                // salloc first: ended by a signal it would ask the controller itself.
                let _ = a.salloc.kill();
                let _ = a.salloc.wait();
                self.scancel(&a.job_id);
            }
            None if by_name => {
                let name = format!("--name={}", job_name(job));
                if let Err(e) = self.client(&["scancel", &name]) {
                    tracing::warn!("scancel --name {}: {e}", job_name(job));
                }
            }
            None => {}
        }
        for suffix in ["", ".pgid", ".status", ".audit", ".logs"] {
            let path = Path::new(self.dir.as_str()).join(format!("{}{suffix}", job.run_id));
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }

    /// Submits the verify run's allocation; returns once Slurm has given it a job id.
    fn submit(&self, job: &Job) -> Result<Allocation, RunnerError> {
        let mut command = Command::new("salloc");
        command
            .arg("--no-shell")
            .arg(format!("--job-name={}", job_name(job)))
            .args(self.target.options())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group: a Ctrl-C at xstack's terminal is xstack's to handle.
            .process_group(0);
        for name in secret_vars() {
            command.env_remove(name);
        }
        tracing::debug!("runner {}: {command:?}", self.spec);
        let mut salloc = command.spawn().map_err(|e| RunnerError::Unreachable {
            runner: self.spec.to_string(),
            message: format!("cannot run `salloc`: {e}"),
        })?;
        let (tx, lines) = mpsc::channel();
        if let Some(err) = salloc.stderr.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
        }
        let submitted = Instant::now();
        let deadline = submitted + SUBMIT_LIMIT;
        let mut said = Vec::new();
        let why = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    let id = allocation_id(&line);
                    let granted = line.contains("Granted job allocation");
                    said.push(line);
                    if let Some(job_id) = id {
                        return Ok(Allocation {
                            job_id,
                            salloc,
                            submitted,
                            lines,
                            said,
                            granted,
                        });
                    }
                }
                Err(why) => break why,
            }
        };
        if why == mpsc::RecvTimeoutError::Timeout {
            let _ = salloc.kill();
        }
        let _ = salloc.wait();
        let message = match (said.is_empty(), why) {
            (false, _) => said.join("\n"),
            (true, mpsc::RecvTimeoutError::Timeout) => {
                format!("salloc gave no job id within {} s", SUBMIT_LIMIT.as_secs())
            }
            (true, _) => "salloc exited without a message".to_string(),
        };
        Err(self.classify(RunnerError::Unreachable {
            runner: self.spec.to_string(),
            message,
        }))
    }
}

impl SlurmRunner {
    /// Builds (or finds) the task's environment in a job of its own: an allocation that
    /// waits in the queue like a verify run's, each change of its state in the queue said
    /// through `progress` (`queued on slurm: job 12, PENDING (Resources)`), then `script`
    /// as a step of it; the allocation is given back at the end.
    fn build_in_a_job(
        &self,
        job: &Job,
        script: &str,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(String),
    ) -> Result<(), RunnerError> {
        let env_job = Job {
            run_id: format!("{}-environment", job.run_id),
            ..job.clone()
        };
        let allocation = self.submit(&env_job)?;
        let job_id = allocation.job_id.clone();
        lock(&self.allocations).insert(env_job.run_id.clone(), allocation);
        progress(format!(
            "building or reusing the environment in slurm job {job_id} on partition {}",
            self.target.partition
        ));
        let said = |q: &QueueState| {
            super::queue_text(
                "slurm",
                &q.job_id,
                &q.state,
                q.reason.as_deref(),
                q.waited_s,
            )
        };
        match self.wait_started(&env_job, cancel, &mut |q| progress(said(&q))) {
            Ok(Some(q)) => progress(said(&q)),
            Ok(None) => {}
            Err(e) => {
                self.end(&env_job, false);
                return Err(self.classify(e));
            }
        }
        let argv = self.step_argv(&job_id, false, script.to_string());
        let built = self.run(&argv, progress);
        self.end(&env_job, false);
        built.map(|_| ()).map_err(|e| self.classify(e))
    }
}

impl Runner for SlurmRunner {
    fn spec(&self) -> &RunnerSpec {
        &self.spec
    }

    fn prepare(
        &self,
        job: &Job,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(String),
    ) -> Result<(), RunnerError> {
        // Slurm checks the request (partition, account, qos, gres, …) without running it.
        let mut check = vec!["srun".to_string(), "--test-only".to_string()];
        check.extend(self.target.options());
        check.push("true".to_string());
        self.run(&check, &mut |_| {})
            .map_err(|e| self.classify(e))?;
        std::fs::create_dir_all(self.dir.as_str()).map_err(|e| {
            RunnerError::Stage(format!(
                "cannot create the runner's folder {}: {e}",
                self.dir.as_str()
            ))
        })?;
        if job.packages.is_empty() {
            return Ok(());
        }
        let script = remote::prepare_script(&self.dir, &job.packages);
        if self.target.build_on_login {
            let argv = ["bash".to_string(), "-c".to_string(), script];
            self.run(&argv, progress).map(|_| ())
        } else {
            self.build_in_a_job(job, &script, cancel, progress)
        }
    }

    fn stage(&self, job: &Job, verify_dir: &Path) -> Result<Launch, RunnerError> {
        let r = shell_words::quote(&job.run_id).into_owned();
        self.bash(&format!(
            "set -e\nmkdir -p {d}\ncd {d}\nrm -rf {r} {r}.logs {r}.pgid {r}.status {r}.audit\nmkdir {r}\ncp -a {src}/. {r}/\n",
            d = shell_words::quote(self.dir.as_str()),
            src = shell_words::quote(&verify_dir.display().to_string()),
        ))?;
        let allocation = self.submit(job)?;
        let job_id = allocation.job_id.clone();
        lock(&self.allocations).insert(job.run_id.clone(), allocation);
        let argv = self.step_argv(&job_id, true, remote::run_script(&self.dir, job, false));
        Ok(Launch {
            argv,
            cwd: verify_dir.to_path_buf(),
            env: Vec::new(),
            // As on ssh: the wrapper records whether it confined the job.
            confined: false,
            unconfined_reason: None,
        })
    }

    fn wait_started(
        &self,
        job: &Job,
        cancel: &AtomicBool,
        report: &mut dyn FnMut(QueueState),
    ) -> Result<Option<QueueState>, RunnerError> {
        let Some((job_id, submitted)) = lock(&self.allocations)
            .get(&job.run_id)
            .map(|a| (a.job_id.clone(), a.submitted))
        else {
            return Ok(None);
        };
        let state = |state: JobState, reason: Option<String>| QueueState {
            job_id: job_id.clone(),
            state,
            reason,
            waited_s: submitted.elapsed().as_secs_f64(),
        };
        let mut last = None;
        let mut next_poll = Instant::now();
        loop {
            if cancel.load(Ordering::Relaxed) {
                self.end(job, true);
                return Err(RunnerError::Cancelled);
            }
            let salloc = match lock(&self.allocations).get_mut(&job.run_id) {
                Some(a) => a.poll(),
                None => return Err(RunnerError::Cancelled),
            };
            match salloc {
                Salloc::Granted => return Ok(Some(state(JobState::Running, None))),
                Salloc::Ended(said) => {
                    self.end(job, false);
                    return Err(RunnerError::Refused {
                        runner: self.spec.to_string(),
                        message: said,
                    });
                }
                Salloc::Waiting => {}
            }
            if Instant::now() >= next_poll {
                next_poll = Instant::now() + SQUEUE_EVERY;
                // The job's start is reported by the return; only the waiting is reported here.
                if let Some((now, reason)) = self.squeue(&job_id)
                    && now != JobState::Running
                    && last.as_ref() != Some(&(now.clone(), reason.clone()))
                {
                    report(state(now.clone(), reason.clone()));
                    last = Some((now, reason));
                }
            }
            std::thread::sleep(POLL);
        }
    }

    fn cancel(&self, job: &Job) -> Result<(), RunnerError> {
        self.end(job, true);
        Ok(())
    }

    fn release(&self, job: &Job) {
        self.end(job, false);
    }

    fn collect(&self, _job: &Job, _run_dir: &Path) -> Result<(), RunnerError> {
        // The run's output came through its terminal; nothing else stays on the cluster.
        Ok(())
    }

    fn recorded(&self, job: &Job) -> Result<Option<Recorded>, RunnerError> {
        let lines = self.bash(&remote::status_script(&self.dir, &job.run_id))?;
        Ok(parse_recorded(&lines))
    }

    fn confinement(&self) -> Result<(), String> {
        // The probe's job starts in the shared folder.
        let _ = std::fs::create_dir_all(self.dir.as_str());
        let probe = "if command -v bwrap >/dev/null 2>&1 && bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true >/dev/null 2>&1; then echo confinement yes; else echo confinement no; fi";
        match self.run(&self.srun_argv("xstack-probe", probe), &mut |_| {}) {
            Ok(lines) if lines.iter().any(|l| l == "confinement no") => Err(format!(
                "verify on {} cannot be confined: no working bubblewrap (`bwrap`) on its compute nodes",
                self.spec
            )),
            _ => Ok(()),
        }
    }

    fn capacity(&self) -> usize {
        usize::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_id_is_read_from_what_salloc_prints() {
        assert_eq!(
            allocation_id("salloc: Pending job allocation 1234").as_deref(),
            Some("1234")
        );
        assert_eq!(
            allocation_id("salloc: Granted job allocation 7").as_deref(),
            Some("7")
        );
        assert_eq!(allocation_id("salloc: job 7 queued and waiting"), None);
    }
}

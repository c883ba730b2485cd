//! The verify stage and the grade: the clean verify copy and its integrity scan, the run on
//! a runner (its output and metric points recorded, its timeout, its audit read back), the
//! seed check's second run, and the verdict.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::grade::audit::{AuditRun, ProtectedModule};
use crate::grade::scan::{self, ScanInput};
use crate::grade::{self, Finding, GradeInput, RunExit, Verdict, VerifyRun};
use crate::metrics::{Extractor, Series};
use crate::pty::{ExitInfo, PtySpec};
use crate::run_script::RunScript;
use crate::runner::{Job, JobIntegrity, Launch, Lease, QueueState};
use crate::workspace;

use super::super::recorder::lock;
use super::verify_process::VerifyProcess;
use super::{Driver, Input, Stop};
use crate::event::Event;

impl Driver {
    /// Builds the verify copy, scans it, runs the experiment (twice with `seed_check`),
    /// grades it.
    pub(super) async fn verify_and_grade(&mut self, phase: u8) -> Result<Verdict, Stop> {
        self.scan_workspace();
        let verify_dir = self.cfg.run_dir.join("verify");
        let mut findings = self.integrity_scan(&verify_dir)?;
        let first = self.verify_run(phase, self.cfg.seed, false).await?;
        findings.extend(first.audit.iter().cloned());
        let series: BTreeMap<String, Series> = lock(self.rec.state())
            .phase(phase)
            .map(|p| p.metrics.clone())
            .unwrap_or_default();
        let criteria = self.cfg.task.spec.criteria.clone();
        let mut input = GradeInput {
            integrity_findings: findings,
            exit: first.exit,
            criteria: &criteria,
            series: &series,
            timeout_s: self.cfg.task.spec.run.timeout_s,
            unconfined: first.unconfined.clone(),
            crash_line: {
                let state = lock(self.rec.state());
                crate::notebook::crash_line(&state.run_screen.contents())
            },
        };
        let mut verdict = grade::grade(&input);
        if verdict.passed() && self.cfg.task.spec.integrity.seed_check {
            let seed = if self.cfg.seed == 1 { 0 } else { 1 };
            self.rec.emit(Event::Note {
                text: format!("phase {phase}: seed check: the run again with XSTACK_SEED={seed}"),
            });
            // The verify copy is made afresh: the first run may have written into it.
            self.integrity_scan(&verify_dir)?;
            let second = self.verify_run(phase, seed, true).await?;
            input
                .integrity_findings
                .extend(second.audit.iter().cloned());
            if !second.exit.succeeded() {
                input.exit = second.exit;
            }
            let values: Vec<String> = criteria
                .iter()
                .map(|c| {
                    let value = second
                        .series
                        .get(&c.metric)
                        .and_then(|s| s.reduce(c.reduce));
                    format!(
                        "{} = {}",
                        c.metric,
                        value.map_or_else(|| "missing".to_string(), |v| v.to_string())
                    )
                })
                .collect();
            self.rec.emit(Event::Note {
                text: format!(
                    "phase {phase}: seed check: {} under XSTACK_SEED={seed}",
                    values.join(", ")
                ),
            });
            input.integrity_findings.extend(grade::seed_check(
                &verdict,
                &second,
                (self.cfg.seed, seed),
                &criteria,
            ));
            input.unconfined = first.unconfined.clone().or(second.unconfined);
            verdict = grade::grade(&input);
        }
        self.rec.emit(Event::Graded {
            phase,
            verdict: verdict.clone(),
            exit_code: first.exit.code,
            duration_s: first.duration_s,
        });
        self.write_result();
        self.explain_with_parity(phase, &verdict).await?;
        Ok(verdict)
    }

    /// Makes the clean verify copy in `verify_dir` (protected files restored) and scans it
    /// and the workspace: the integrity findings that need no run.
    fn integrity_scan(&mut self, verify_dir: &Path) -> Result<Vec<Finding>, Stop> {
        let spec = &self.cfg.task.spec;
        let mut findings = workspace::prepare_verify(
            &self.workspace,
            &self.cfg.source_dir,
            verify_dir,
            &spec.integrity.protected,
        )
        .map_err(|e| Stop::Infra(format!("cannot prepare the verify copy: {e}")))?;
        findings.extend(scan::symlinks_out(&self.workspace));
        let python = self.python();
        let command = format!(
            "{}\n{}",
            spec.env.setup.as_deref().unwrap_or(""),
            spec.run.command
        );
        let scanned = scan::scan(
            &python,
            verify_dir,
            &ScanInput {
                integrity: &spec.integrity,
                packages: &spec.env.packages,
                command: &command,
                protected_modules: self
                    .protected_modules()?
                    .into_iter()
                    .map(|p| p.module)
                    .collect(),
                port: self.task().migration.to,
                unrun_notebooks: scan::unrun_source_notebooks(
                    verify_dir,
                    &self.cfg.source_dir,
                    spec.run.notebook.as_deref(),
                ),
            },
        )
        .map_err(|e| Stop::Infra(e.to_string()))?;
        findings.extend(scanned);
        Ok(findings)
    }

    /// The interpreter of the target environment, else `python3` on PATH.
    pub(super) fn python(&self) -> PathBuf {
        match &self.env {
            Some(env) => env.bin().join("python"),
            None => {
                let path = std::env::var("PATH").unwrap_or_default();
                crate::env::which_in("python3", &path).unwrap_or_else(|| "python3".into())
            }
        }
    }

    /// After a remote run: what its wrapper recorded (the run is graded). When it recorded
    /// nothing, a run that succeeded is graded unconfined (Ok(None)), and one that failed
    /// lost its connection: Err with the message (the job's remains are ended, and the
    /// runner leaves a pool that has others).
    async fn remote_record(
        &mut self,
        lease: &Arc<Lease>,
        succeeded: bool,
    ) -> Result<Option<crate::runner::Recorded>, String> {
        let remote = lease.clone();
        let recorded = tokio::task::spawn_blocking(move || remote.recorded()).await;
        let why = match recorded {
            Ok(Ok(Some(recorded))) => return Ok(Some(recorded)),
            Ok(Ok(None)) if succeeded => return Ok(None),
            Ok(Err(e)) if succeeded => {
                self.rec.emit(Event::Note {
                    text: format!("cannot read what the runner recorded of the run: {e}"),
                });
                return Ok(None);
            }
            Ok(Ok(None)) => {
                let screen = lock(self.rec.state()).run_screen.contents();
                let last = screen
                    .lines()
                    .rev()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("no message")
                    .to_string();
                format!("the job ended without its exit status ({last})")
            }
            Ok(Err(e)) => e.to_string(),
            Err(e) => e.to_string(),
        };
        let remote = lease.clone();
        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || remote.cancel()).await {
            self.rec.emit(Event::Note {
                text: format!("cannot end the run on the runner: {e}"),
            });
        }
        let message = format!(
            "the connection to {} was lost during verify: {why}",
            lease.runner()
        );
        lease.leave_out(&message);
        Err(message)
    }

    /// The protected Python files of the source, as the runtime audit checks them.
    fn protected_modules(&self) -> Result<Vec<ProtectedModule>, Stop> {
        let source = &self.cfg.source_dir;
        let files = workspace::protected_files(source, &self.task().spec.integrity.protected)
            .map_err(|e| Stop::Infra(e.to_string()))?;
        Ok(files
            .into_iter()
            .filter_map(|file| {
                let module = scan::module_name(&file)?;
                let text = std::fs::read_to_string(source.join(&file)).unwrap_or_default();
                Some(ProtectedModule {
                    module,
                    defs: scan::top_level_defs(&text),
                    file,
                })
            })
            .collect())
    }

    /// One run of the verify copy on a runner with `seed`: its output recorded, its metric
    /// points recorded as the phase's (or, for the seed check, kept apart), its audit read.
    async fn verify_run(
        &mut self,
        phase: u8,
        seed: u64,
        seed_check: bool,
    ) -> Result<VerifyRun, Stop> {
        let (lease, audit_dir) = self.stage_verify_run(phase, seed).await?;
        let (launch, started) = self.start_verify_run(phase, seed_check, &lease)?;
        let timed_out = self.await_verify_run(&lease).await?;
        let duration_s = started.elapsed().as_secs_f64();
        let exit_info = self
            .run
            .take()
            .map_or(ExitInfo { code: None }, |run| run.exit_info());
        // The seed check's series, as its events recorded them (the first run's are the
        // phase's, which the grade reads from the state).
        let series = if seed_check {
            lock(self.rec.state())
                .phase(phase)
                .map(|r| r.seed_check_metrics.clone())
                .unwrap_or_default()
        } else {
            BTreeMap::new()
        };
        let lease_was_local = lease.runner().is_local();
        let collected = self
            .collect_verify_run(phase, lease, &launch, exit_info.code, timed_out)
            .await;
        self.rec.emit(Event::RunExited {
            code: exit_info.code,
            timed_out,
            duration_s,
        });
        let (unconfined, mut audit) = collected.map_err(Stop::Infra)?;
        if !seed_check {
            self.verify_run_ended();
        }
        if lease_was_local {
            audit = AuditRun { dir: audit_dir }.findings();
        }
        Ok(VerifyRun {
            exit: RunExit {
                code: exit_info.code,
                timed_out,
            },
            duration_s,
            unconfined,
            audit,
            series,
        })
    }

    /// Stages the verify copy of `phase` with `seed` on a runner and waits for its place in
    /// the queue; returns the runner's lease and the folder the run's audit goes to.
    async fn stage_verify_run(
        &mut self,
        phase: u8,
        seed: u64,
    ) -> Result<(Arc<Lease>, PathBuf), Stop> {
        let verify_dir = self.cfg.run_dir.join("verify");
        let mut job = self.verify_job(phase, seed);
        let audit_dir = self.cfg.run_dir.join(format!("audit-{phase}"));
        job.integrity = JobIntegrity {
            network: self.task().spec.run.network,
            audit_dir: Some(audit_dir.clone()),
            forbid: self.task().spec.integrity.forbid_imports.clone(),
            protected: self.protected_modules()?,
        };
        let pool = self.cfg.runner.clone();
        let lease = Arc::new(
            self.blocking(move |progress, cancel| {
                pool.launch(&job, &verify_dir, cancel, progress)
                    .map_err(|e| e.to_string())
            })
            .await?,
        );
        if !lease.runner().is_local() {
            self.rec.emit(Event::Note {
                text: format!("phase {phase}: verify runs on {}", lease.runner()),
            });
        }
        if let Err(stop) = self.wait_in_queue(phase, &lease).await {
            self.cancel_run(&lease).await;
            return Err(stop);
        }
        Ok((lease, audit_dir))
    }

    /// Starts the verify run `lease` launches on its own PTY, with the task's timeout;
    /// returns the launch and when the run started.
    fn start_verify_run(
        &mut self,
        phase: u8,
        seed_check: bool,
        lease: &Arc<Lease>,
    ) -> Result<(Launch, Instant), Stop> {
        let timeout = Duration::from_secs(self.task().spec.run.timeout_s);
        let command = self.task().spec.run.command.clone();
        let launch = lease.launch().clone();
        if let Some(reason) = &launch.unconfined_reason {
            self.rec.emit(Event::Note {
                text: format!("phase {phase}: verify is not confined: {reason}"),
            });
        }
        let pty = PtySpec {
            argv: launch.argv.clone(),
            cwd: launch.cwd.clone(),
            env: launch.env.clone(),
            env_remove: Vec::new(),
            cols: self.cfg.run_size.0,
            rows: self.cfg.run_size.1,
        };
        let started = Instant::now();
        let extractor = Extractor::for_task(&self.cfg.task);
        let (process, started_event) =
            VerifyProcess::start(&pty, timeout, extractor, phase, command, seed_check)
                .map_err(|e| Stop::Infra(format!("cannot start the verify run: {e}")))?;
        self.rec.emit(started_event);
        self.run = Some(process);
        Ok((launch, started))
    }

    /// Handles the inputs while the verify run on `lease` runs, until it ends; whether it
    /// ran past its timeout. A command that stops the session cancels the run.
    async fn await_verify_run(&mut self, lease: &Arc<Lease>) -> Result<bool, Stop> {
        let mut timed_out = false;
        loop {
            match self.next_input().await {
                Input::RunFinished => return Ok(timed_out),
                Input::RunTimedOut => {
                    timed_out = true;
                    self.cancel_run(lease).await;
                }
                Input::Command(command) => {
                    if let Err(stop) = self.command(command) {
                        self.cancel_run(lease).await;
                        self.run = None;
                        return Err(stop);
                    }
                }
                Input::Tick | Input::AgentFinished => {}
            }
        }
    }

    /// After the verify run of `phase` (exit code `code`): a remote runner's logs fetched and
    /// its record read back, the lease given back. Returns why the run was not confined (None
    /// when it was) and a remote runner's audit findings; an error where the remote record
    /// was lost.
    async fn collect_verify_run(
        &mut self,
        phase: u8,
        lease: Arc<Lease>,
        launch: &Launch,
        code: Option<i32>,
        timed_out: bool,
    ) -> Result<(Option<String>, Vec<Finding>), String> {
        if !lease.runner().is_local() {
            let run_dir = self.cfg.run_dir.clone();
            let remote = lease.clone();
            let collected = tokio::task::spawn_blocking(move || remote.collect(&run_dir)).await;
            if let Ok(Err(e)) = collected {
                self.rec.emit(Event::Note {
                    text: format!("cannot fetch the runner's logs: {e}"),
                });
            }
        }
        let mut unconfined = (!launch.confined).then(|| {
            launch.unconfined_reason.clone().unwrap_or_else(|| {
                format!("{} did not record that it confined the run", lease.runner())
            })
        });
        let mut audit = Vec::new();
        let mut lost = None;
        if !lease.runner().is_local() && !timed_out {
            match self.remote_record(&lease, code == Some(0)).await {
                Ok(Some(recorded)) => {
                    audit = grade::audit::findings_of(recorded.audit.iter().map(String::as_str));
                    unconfined = (!recorded.confined)
                        .then(|| crate::runner::confine::missing_on(lease.runner()));
                    if let Some(reason) = &unconfined {
                        self.rec.emit(Event::Note {
                            text: format!("phase {phase}: verify is not confined: {reason}"),
                        });
                    }
                }
                Ok(None) => {}
                Err(message) => lost = Some(message),
            }
        }
        // Dropping the lease gives back what the runner holds (a Slurm allocation): blocking.
        if let Err(e) = tokio::task::spawn_blocking(move || drop(lease)).await {
            tracing::warn!("giving the runner's lease back failed: {e}");
        }
        match lost {
            Some(message) => Err(message),
            None => Ok((unconfined, audit)),
        }
    }

    /// On a runner with a queue (Slurm): waits until the verify run's job starts, recording
    /// each change of its state in the queue (the wait is not the run's time); returns at
    /// once on the others. Commands are handled meanwhile by the one handler; an abort stops
    /// the wait (the caller cancels the job).
    async fn wait_in_queue(&mut self, phase: u8, lease: &Arc<Lease>) -> Result<(), Stop> {
        let runner = lease.runner().to_string();
        let reported = runner.clone();
        let waiting = lease.clone();
        let started = self
            .blocking_reporting(
                move |report, cancel| {
                    waiting
                        .wait_started(cancel, report)
                        .map_err(|e| e.to_string())
                },
                move |q| queue_event(phase, &reported, q),
            )
            .await?;
        if let Some(q) = started {
            self.rec.emit(queue_event(phase, &runner, q));
        }
        Ok(())
    }

    /// The verify run of `phase` with `seed` as a runner sees it.
    pub(super) fn verify_job(&self, phase: u8, seed: u64) -> Job {
        let spec = &self.task().spec;
        let run = RunScript {
            seed,
            ..self.run_script(phase, &spec.run.command)
        };
        Job {
            // The run folder's name is unique in its runs folder only: the process id keeps
            // the remote folders of two xstack processes sharing a runner apart.
            run_id: format!("{}-{}", self.run_id, std::process::id()),
            packages: spec.env.packages.clone(),
            script: run.script(),
            vars: run.vars(),
            local_env: self.env.clone(),
            integrity: JobIntegrity::default(),
        }
    }

    /// Ends the verify run on its runner (remote processes), then the local command.
    async fn cancel_run(&mut self, lease: &Arc<Lease>) {
        if !lease.runner().is_local() {
            let remote = lease.clone();
            let cancelled = tokio::task::spawn_blocking(move || remote.cancel()).await;
            if let Ok(Err(e)) = cancelled {
                self.rec.emit(Event::Note {
                    text: format!("cannot end the run on the runner: {e}"),
                });
            }
        }
        if let Some(run) = self.run.as_mut() {
            run.child().terminate().await;
        }
    }

    /// Records the verify run's output, then the metric points of the lines it completed.
    pub(super) fn run_output(&mut self, text: String) {
        let events = match self.run.as_mut() {
            Some(run) => run.output(text),
            None => vec![Event::RunOutput { text }],
        };
        for event in events {
            self.rec.emit(event);
        }
    }

    /// Records the points of the last, unfinished line when the run's output ends.
    pub(super) fn finish_metrics(&mut self) {
        if let Some(event) = self.run.as_mut().and_then(VerifyProcess::output_closed) {
            self.rec.emit(event);
        }
    }
}

/// The event that records a verify job's state in its runner's queue.
fn queue_event(phase: u8, runner: &str, q: QueueState) -> Event {
    Event::RunnerJob {
        phase,
        runner: runner.to_string(),
        job_id: q.job_id,
        state: q.state,
        reason: q.reason,
        waited_s: (q.waited_s * 1000.0).round() / 1000.0,
    }
}

//! The setup stage and what every stage shares: the task's record, resuming from the
//! journal, the workspace copy and its change tracking, the environment and the runners,
//! blocking work run off the driver's task, and the variables every child gets.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::agent::{AgentSpec, prompt};
use crate::run_script::RunScript;
use crate::workspace::watch::WatchEvent;
use crate::workspace::{self, Tracker};

use super::super::policy::Policy;
use super::super::recorder::lock;
use super::{Driver, Stop, recv_opt};
use crate::event::{At, Event, FileContent, ReferenceSeries, SessionTask};

impl Driver {
    /// Rebuilds the policy of a resumed session from the state its journal rebuilt: the phase
    /// that was cut off continues, at its migrate stage, or at verify when the migrate stage
    /// had ended; a session whose every needed phase was graded has ended.
    pub(super) fn resume(&mut self) {
        let interactive = self.interactive();
        let (verdicts, prompts, at, details) = {
            let state = lock(self.rec.state());
            let verdict = |p: u8| state.phase(p).and_then(|r| r.verdict.clone());
            let prompt = |p: u8| state.phase(p).and_then(|r| r.prompt.clone());
            (
                [verdict(1), verdict(2)],
                [prompt(1), prompt(2)],
                state.at,
                state.task.phase2_details.clone(),
            )
        };
        let passed = [
            verdicts[0].as_ref().map(|v| v.passed()),
            verdicts[1].as_ref().map(|v| v.passed()),
        ];
        let [prompt1, prompt2] = prompts;
        let continues = match &verdicts {
            [None, _] => Some((1, prompt1)),
            [Some(v1), None] if !v1.passed() => Some((
                2,
                Some(prompt2.unwrap_or_else(|| {
                    let parity = self.told_parity();
                    prompt::phase2_prompt(v1, parity.as_ref(), &details, interactive)
                })),
            )),
            _ => None,
        };
        let Some((resumed, prompt)) = continues else {
            self.policy = Policy::resumed(self.cfg.mode, self.agent_mode(), passed, None);
            return;
        };
        let migrated = matches!(at, At::Verify(p, _) | At::Grade(p, _) if p == resumed);
        self.rec.emit(Event::Note {
            text: format!(
                "resumed from the journal: phase {resumed} continues at {}",
                if migrated { "verify" } else { "migrate" }
            ),
        });
        self.resume_prompt = prompt;
        self.policy = Policy::resumed(
            self.cfg.mode,
            self.agent_mode(),
            passed,
            Some((resumed, migrated)),
        );
    }

    /// Records the task as the session sees it (its criteria, metrics, reference series).
    pub(super) fn emit_task_info(&mut self) {
        let task = &self.cfg.task;
        let reference = task
            .reference_log()
            .and_then(|log| std::fs::read_to_string(log).ok())
            .map(|text| crate::metrics::parse_log(task, &text))
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, points)| !points.is_empty())
            .map(|(metric, points)| ReferenceSeries { metric, points })
            .collect();
        let agent = self
            .cfg
            .agent
            .as_ref()
            .map_or_else(|| "none (grade)".to_string(), AgentSpec::display);
        let event = Event::Task(Box::new(SessionTask {
            id: task.spec.id.clone(),
            dir: task
                .dir
                .canonicalize()
                .unwrap_or_else(|_| task.dir.clone())
                .display()
                .to_string(),
            title: task.spec.title.clone(),
            migration: task.migration,
            agent,
            command: task.spec.run.command.clone(),
            criteria: task.spec.criteria.clone(),
            metrics: task.spec.metrics.iter().map(|m| m.name.clone()).collect(),
            phase2_details: task.spec.phase2.details.clone(),
            reference,
            upstream: task.spec.upstream.clone(),
        }));
        self.rec.emit(event);
    }

    /// Records a file change (and counts it: did the agent's turn change anything?).
    pub(super) fn record_change(&mut self, file: FileContent, deleted: bool) {
        self.files_changed += 1;
        self.rec.emit(Event::FileChanged { file, deleted });
    }

    /// Records how the workspace differs from `known` (path → recorded file) as file changes.
    fn record_differences(&mut self, known: &BTreeMap<String, FileContent>) {
        let current = workspace::snapshot(&self.workspace);
        for file in &current {
            if known.get(&file.path).map(|f| &f.text) != Some(&file.text) {
                self.record_change(file.clone(), false);
            }
        }
        for path in known.keys() {
            if !current.iter().any(|f| &f.path == path) {
                self.record_change(
                    FileContent {
                        path: path.clone(),
                        text: None,
                        size: 0,
                    },
                    true,
                );
            }
        }
    }

    /// The setup stage: the workspace (copied, or kept when resuming), the environment, the
    /// runners.
    pub(super) async fn setup(&mut self) -> Result<(), Stop> {
        let source = self.cfg.source_dir.clone();
        if self.cfg.resume && self.workspace.is_dir() {
            // The workspace is kept as the interrupted session left it; record what changed
            // after the journal's last flush.
            let known = lock(self.rec.state()).files.clone();
            self.record_differences(&known);
            if self.cfg.graded_repo.is_none() {
                self.tracker = Some(Tracker::new(&self.workspace));
            }
        } else {
            let exclude = self.task().spec.source.exclude.clone();
            let baseline = workspace::source_snapshot(&source, &exclude);
            let known: BTreeMap<String, FileContent> = baseline
                .iter()
                .map(|f| (f.path.clone(), f.clone()))
                .collect();
            self.rec.emit(Event::Baseline { files: baseline });
            if self.cfg.graded_repo.is_none() {
                self.rec.emit(Event::Note {
                    text: format!("copying {} into the workspace", source.display()),
                });
                workspace::copy_source(&source, &self.workspace, &exclude)
                    .map_err(|e| Stop::Infra(format!("cannot create the workspace: {e}")))?;
                self.tracker = Some(Tracker::new(&self.workspace));
            } else {
                // Grading an existing repository: record how it differs from the source.
                self.record_differences(&known);
            }
        }
        let packages = self.task().spec.env.packages.clone();
        if !packages.is_empty() {
            let cache = self.cfg.cache_dir.clone();
            let usage =
                crate::env::store::Usage::of(&self.task().spec.id, crate::env::Side::Target);
            self.env = self
                .blocking(move |progress, _cancel| {
                    let env = crate::env::ensure(&cache, &packages, &usage, progress)
                        .map_err(|e| e.to_string())?;
                    if let Some(env) = &env {
                        crate::grade::audit::install(&env.dir).map_err(|e| e.to_string())?;
                        crate::checks::install(&env.dir).map_err(|e| e.to_string())?;
                    }
                    Ok(env)
                })
                .await?;
        }
        if self.cfg.agent.is_some() && self.cfg.graded_repo.is_none() {
            let context = crate::checks::Context::new(self.task(), &self.workspace, &source);
            let folder = self.workspace.join(crate::checks::FOLDER);
            match crate::checks::Collector::create(&folder, context) {
                Ok(collector) => self.agent_runs = Some(collector),
                Err(e) => self.rec.emit(Event::Note {
                    text: format!("the agent's runs are not recorded: {e}"),
                }),
            }
        }
        let pool = self.cfg.runner.clone();
        if !pool.is_local() {
            self.rec.emit(Event::Note {
                text: format!("verify runs on {}", pool.describe()),
            });
            let job = self.verify_job(0, self.cfg.seed);
            self.blocking(move |progress, cancel| {
                pool.prepare(&job, cancel, progress)
                    .map_err(|e| e.to_string())
            })
            .await?;
        }
        Ok(())
    }

    /// Runs blocking `work` on a blocking thread, recording the lines it reports as notes and
    /// handling commands meanwhile. An abort sets the flag `work` is given and returns at
    /// once; whatever `work` returns afterwards is dropped. Its error is an infrastructure
    /// failure.
    pub(super) async fn blocking<T, F>(&mut self, work: F) -> Result<T, Stop>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn FnMut(String), &AtomicBool) -> Result<T, String> + Send + 'static,
    {
        self.blocking_reporting(work, |text| Event::Note { text })
            .await
    }

    /// [`Driver::blocking`] with progress of any kind, each recorded as the event `report`
    /// makes of it when it happens.
    pub(super) async fn blocking_reporting<P, T, F>(
        &mut self,
        work: F,
        report: impl Fn(P) -> Event,
    ) -> Result<T, Stop>
    where
        P: Send + 'static,
        T: Send + 'static,
        F: FnOnce(&mut dyn FnMut(P), &AtomicBool) -> Result<T, String> + Send + 'static,
    {
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = mpsc::unbounded_channel::<P>();
        let flag = cancel.clone();
        let handle = tokio::task::spawn_blocking(move || {
            work(
                &mut |line| {
                    // The driver stops listening only once it stopped waiting for the work.
                    tx.send(line).ok();
                },
                &flag,
            )
        });
        tokio::pin!(handle);
        loop {
            tokio::select! {
                result = &mut handle => {
                    while let Ok(progress) = rx.try_recv() {
                        self.rec.emit(report(progress));
                    }
                    return match result {
                        Ok(Ok(value)) => Ok(value),
                        Ok(Err(e)) => Err(Stop::Infra(e)),
                        Err(e) => Err(Stop::Infra(format!("a set-up step crashed: {e}"))),
                    };
                }
                Some(progress) = rx.recv() => {
                    // A wait may last hours: each report reaches the journal when it happens.
                    self.rec.emit(report(progress));
                    self.rec.flush();
                }
                cmd = recv_opt(self.commands.as_mut()) => {
                    match cmd {
                        Some(command) => {
                            if let Err(stop) = self.command(command) {
                                cancel.store(true, Ordering::Relaxed);
                                return Err(stop);
                            }
                        }
                        None => self.commands = None,
                    }
                }
            }
        }
    }

    /// Variables every child gets: the environment's PATH, the seed, the task and phase.
    pub(super) fn child_env(&self, phase: u8) -> Vec<(String, String)> {
        self.run_script(phase, &self.task().spec.run.command)
            .env(self.env.as_ref())
    }

    /// A run of `command` in `phase` with the session's seed: the task's setup before it, the
    /// seed, the task and the phase in its variables (those that travel to every machine).
    pub(super) fn run_script<'a>(&'a self, phase: u8, command: &'a str) -> RunScript<'a> {
        let spec = &self.task().spec;
        RunScript {
            setup: spec.env.setup.as_deref(),
            command,
            task_id: &spec.id,
            seed: self.cfg.seed,
            phase: Some(phase),
        }
    }

    /// Records the workspace's changes: only the files the watcher reported while one runs,
    /// else (and at the end of each agent turn) a full scan.
    pub(super) fn scan_workspace(&mut self) {
        let mut reported = Vec::new();
        let mut notes = Vec::new();
        let mut full = true;
        if let Some((_, events)) = self.watcher.as_ref() {
            full = false;
            loop {
                match events.try_recv() {
                    Ok(WatchEvent::Changed { path, .. }) => reported.push(path),
                    Ok(WatchEvent::Note(text)) => notes.push(text),
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        full = true;
                        break;
                    }
                }
            }
        }
        for text in notes {
            self.rec.emit(Event::Note { text });
        }
        let Some(tracker) = self.tracker.as_mut() else {
            return;
        };
        let changes = if full {
            tracker.scan(&self.workspace)
        } else {
            tracker.scan_paths(&self.workspace, &reported)
        };
        if !changes.is_empty() {
            self.agent_clock.active_at = Instant::now();
        }
        for change in changes {
            self.record_change(change.file, change.deleted);
        }
    }
}

//! Runs one supervised session: setup → migrate → verify → grade → (fail) inject → migrate →
//! verify → grade → done. It owns the child processes, turns everything that happens into
//! events for the recorder, and obeys the human's commands under the step/auto policy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::agent::sandbox::{self, Sandbox};
use crate::agent::transcript::{TranscriptItem, TranscriptParser};
use crate::agent::{AgentMode, AgentSpec, PhaseContext, prompt};
use crate::env::PythonEnv;
use crate::grade::audit::{AuditRun, ProtectedModule};
use crate::grade::scan::{self, ScanInput};
use crate::grade::{self, Finding, GradeInput, RunExit, Verdict, VerifyRun};
use crate::metrics::{Extractor, MetricStream, Point, Series};
use crate::pty::utf8::Utf8Carry;
use crate::pty::{ExitInfo, PtyProcess, PtySpec};
use crate::runner::{Job, JobIntegrity, Lease, QueueState, RunnerError, RunnerPool};
use crate::task::Task;
use crate::workspace::watch::{WatchEvent, WorkspaceWatcher};
use crate::workspace::{self, Tracker};

use super::event::{
    Event, FileContent, Interruption, MetricPoint, Mode, PhaseOutcome, ReferenceSeries,
    SessionTask, Stage, TerminalPane,
};
use super::recorder::{Recorder, lock};
use super::result::RunResult;

/// How often the workspace is scanned and the journal flushed while waiting.
const TICK: Duration = Duration::from_millis(200);
/// Grace between SIGTERM and SIGKILL when ending a child.
const TERMINATE_GRACE: Duration = Duration::from_secs(2);
/// Quiet time the workspace watcher waits for before reporting a burst of writes.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(50);
/// How long output is drained after a child exits before its group is ended.
const DRAIN: Duration = Duration::from_secs(1);
/// An interactive agent is ready for its prompt once it printed something and then stayed
/// quiet this long…
const PROMPT_SETTLE: Duration = Duration::from_secs(1);
/// …or at the latest this long after it started.
const PROMPT_WAIT_MAX: Duration = Duration::from_secs(20);

/// Where the phases start: phase 1 for a new session, the cut-off phase when resuming.
struct Start {
    phase: u8,
    skip_migrate: bool,
    prompt: Option<String>,
}

/// What the human (or a signal) can ask of a running session.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Advance to what comes next (step mode), or end an interactive agent's phase.
    Next,
    /// Switch between step and auto mode.
    ToggleMode,
    /// Pause or resume the agent's process group.
    TogglePause,
    /// Send the phase-two details (edited) to the agent.
    Inject(String),
    /// Send a message to the agent.
    Message(String),
    /// Re-run verify and grade on the current workspace.
    Rerun,
    /// Abort the session.
    Abort,
    /// Bytes typed into the agent's terminal (attach mode).
    AgentInput(Vec<u8>),
    /// The agent pane's size changed.
    ResizeAgent(u16, u16),
    /// The run-log pane's size changed.
    ResizeRun(u16, u16),
    /// Open a shell in the workspace in the Agent pane (after the end, for debugging).
    OpenShell,
    /// A signal interrupts the session (a hangup, SIGTERM, Ctrl-C): an abort that records
    /// what interrupted it.
    Interrupt(Interruption),
}

/// Everything a session needs.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The task.
    pub task: Task,
    /// The agent; None for `grade` (no agent, one phase).
    pub agent: Option<AgentSpec>,
    /// For `grade`: the repository to grade instead of an agent's workspace.
    pub graded_repo: Option<PathBuf>,
    /// The initial mode.
    pub mode: Mode,
    /// The run folder (exists).
    pub run_dir: PathBuf,
    /// The source repository folder.
    pub source_dir: PathBuf,
    /// The cache folder.
    pub cache_dir: PathBuf,
    /// `XSTACK_SEED`.
    pub seed: u64,
    /// Agent terminal size.
    pub agent_size: (u16, u16),
    /// Run terminal size.
    pub run_size: (u16, u16),
    /// Idle limit of an interactive agent.
    pub idle_limit: Option<Duration>,
    /// `--sandbox`: the agent runs confined.
    pub sandbox: Option<Sandbox>,
    /// Continue a session whose state was rebuilt from its journal.
    pub resume: bool,
    /// After the end, keep serving re-runs and a debug shell until the human quits (TUI).
    pub linger: bool,
    /// Where verify runs happen.
    pub runner: Arc<RunnerPool>,
}

/// Why a session stopped before its end.
#[derive(Debug, thiserror::Error)]
enum Stop {
    /// Aborted or interrupted (the driver's `interruption` says by what).
    #[error("aborted")]
    Aborted,
    /// The environment, the runner or a set-up step failed.
    #[error("{0}")]
    Infra(String),
    /// The agent exited non-zero having changed nothing: its last error line.
    #[error("{0}")]
    AgentFailed(String),
}

/// A child process being watched.
struct Live {
    process: PtyProcess,
    output: Option<mpsc::Receiver<Vec<u8>>>,
    exit: Option<oneshot::Receiver<ExitInfo>>,
    decoder: Utf8Carry,
    exit_info: Option<ExitInfo>,
    /// Whether its exit was recorded (once both the exit and the end of its output came).
    exit_recorded: bool,
}

impl Live {
    fn new(process: PtyProcess, streams: crate::pty::PtyStreams) -> Live {
        Live {
            process,
            output: Some(streams.output),
            exit: Some(streams.exit),
            decoder: Utf8Carry::new(),
            exit_info: None,
            exit_recorded: false,
        }
    }

    fn finished(&self) -> bool {
        self.output.is_none() && self.exit.is_none()
    }
}

/// One input of the driver's loop.
enum Input {
    Command(Command),
    AgentExited,
    RunExited,
    Tick,
}

/// What one wait of the driver's loop produced.
enum Raw {
    AgentChunk(Option<Vec<u8>>),
    AgentExit(ExitInfo),
    RunChunk(Option<Vec<u8>>),
    RunExit(ExitInfo),
    Command(Option<Command>),
    Tick,
}

async fn recv_opt<T>(rx: Option<&mut mpsc::Receiver<T>>) -> Option<T> {
    match rx {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

async fn exit_opt(rx: Option<&mut oneshot::Receiver<ExitInfo>>) -> ExitInfo {
    match rx {
        Some(r) => r.await.unwrap_or(ExitInfo { code: None }),
        None => std::future::pending().await,
    }
}

/// Most bytes of terminal output handled as one piece.
const COALESCE_BYTES: usize = 256 * 1024;

/// `first` followed by the chunks already waiting in `output`, up to [`COALESCE_BYTES`]:
/// heavy output is recorded, parsed and drawn in few large pieces rather than many small
/// ones, and light output is not delayed (nothing waits for more to arrive).
fn coalesce(mut first: Vec<u8>, output: &mut Option<mpsc::Receiver<Vec<u8>>>) -> Vec<u8> {
    let Some(rx) = output.as_mut() else {
        return first;
    };
    while first.len() < COALESCE_BYTES {
        match rx.try_recv() {
            Ok(more) => first.extend_from_slice(&more),
            Err(_) => break,
        }
    }
    first
}

fn streams(
    live: &mut Option<Live>,
) -> (
    Option<&mut mpsc::Receiver<Vec<u8>>>,
    Option<&mut oneshot::Receiver<ExitInfo>>,
) {
    match live.as_mut() {
        Some(l) => (l.output.as_mut(), l.exit.as_mut()),
        None => (None, None),
    }
}

/// The running session.
pub struct Driver {
    cfg: SessionConfig,
    rec: Recorder,
    commands: Option<mpsc::Receiver<Command>>,
    workspace: PathBuf,
    env: Option<PythonEnv>,
    tracker: Option<Tracker>,
    watcher: Option<(WorkspaceWatcher, std::sync::mpsc::Receiver<WatchEvent>)>,
    agent: Option<Live>,
    run: Option<Live>,
    metric_stream: Option<MetricStream>,
    /// The seed check's run keeps its metric points here rather than in the phase.
    check_series: Option<BTreeMap<String, Series>>,
    /// What interrupted the session, when a signal did.
    interruption: Option<Interruption>,
    phase: u8,
    mode: Mode,
    pending_messages: Vec<String>,
    injected: Option<String>,
    last_activity: Instant,
    /// Parses the running agent's structured output.
    transcript: Option<TranscriptParser>,
    /// The conversation id the agent reported, to resume it.
    agent_session: Option<String>,
    /// A prompt waiting to be typed into an interactive agent once it is ready.
    pending_prompt: Option<String>,
    /// When the agent started and when it last printed something.
    agent_started_at: Instant,
    agent_output_at: Option<Instant>,
    run_id: String,
    started_at: String,
}

impl Driver {
    /// A driver for `cfg`, recording through `rec`, obeying `commands`.
    pub fn new(
        cfg: SessionConfig,
        rec: Recorder,
        commands: mpsc::Receiver<Command>,
        run_id: String,
        started_at: String,
    ) -> Driver {
        let workspace = cfg
            .graded_repo
            .clone()
            .unwrap_or_else(|| cfg.run_dir.join("workspace"));
        let mode = cfg.mode;
        Driver {
            cfg,
            rec,
            commands: Some(commands),
            workspace,
            env: None,
            tracker: None,
            watcher: None,
            agent: None,
            run: None,
            metric_stream: None,
            check_series: None,
            interruption: None,
            phase: 0,
            mode,
            pending_messages: Vec::new(),
            injected: None,
            last_activity: Instant::now(),
            transcript: None,
            agent_session: None,
            pending_prompt: None,
            agent_started_at: Instant::now(),
            agent_output_at: None,
            run_id,
            started_at,
        }
    }

    /// Runs the session to its end and returns the exit status of `run`.
    pub async fn run(mut self) -> i32 {
        let outcome = self.session().await;
        self.stop_children().await;
        let mut interrupted = None;
        let ended = match outcome {
            Ok(()) => None,
            Err(Stop::Aborted) => {
                let kind = self.interruption.unwrap_or(Interruption::UserAbort);
                interrupted = Some(kind);
                Some((PhaseOutcome::Interrupted, kind.describe().to_string()))
            }
            Err(Stop::Infra(message)) => Some((PhaseOutcome::InfrastructureFailure, message)),
            Err(Stop::AgentFailed(line)) => Some((PhaseOutcome::AgentFailure, line)),
        };
        let error = ended.as_ref().map(|(outcome, detail)| match outcome {
            PhaseOutcome::AgentFailure => {
                format!("the agent failed before doing any work: {detail}")
            }
            _ => detail.clone(),
        });
        if let Some((outcome, detail)) = ended {
            let phase = self.phase.max(1);
            let graded = lock(self.rec.state())
                .phase(phase)
                .is_some_and(|p| p.verdict.is_some());
            if !graded {
                self.rec.emit(Event::PhaseEnded {
                    phase,
                    outcome,
                    detail: (outcome != PhaseOutcome::Interrupted).then_some(detail),
                });
            }
        }
        let aborted = error.is_some();
        let mut exit_code = self.finish(error, interrupted);
        if self.cfg.linger && !aborted {
            exit_code = self.debug_loop(exit_code).await;
        }
        self.rec.flush();
        exit_code
    }

    /// Records the end of the session (or of a debug re-run) and writes `result.json`;
    /// returns the exit status.
    fn finish(&mut self, error: Option<String>, interrupted: Option<Interruption>) -> i32 {
        let passed_in_phase = {
            let state = lock(self.rec.state());
            state
                .phases
                .iter()
                .position(|p| p.verdict.as_ref().is_some_and(Verdict::passed))
                .map(|i| (i + 1) as u8)
        };
        let exit_code = match (&error, passed_in_phase) {
            (Some(_), _) => 3,
            (None, Some(_)) => 0,
            (None, None) => 1,
        };
        self.rec.emit(Event::Finished {
            passed: exit_code == 0,
            passed_in_phase,
            exit_code,
            error,
            interrupted,
        });
        self.write_result();
        self.rec.flush();
        exit_code
    }

    /// After the end, in the TUI: re-run verify on the workspace (`r`) or open a shell in it
    /// (`o`) until the human quits. Returns the latest exit status.
    async fn debug_loop(&mut self, mut exit_code: i32) -> i32 {
        loop {
            match self.next_input().await {
                Input::Command(Command::Abort) => break,
                Input::Command(Command::Rerun) => {
                    let phase = self.phase.max(1);
                    self.rec.emit(Event::Note {
                        text: format!("re-running verify on the workspace (phase {phase})"),
                    });
                    match self.verify_and_grade(phase).await {
                        Ok(_) => exit_code = self.finish(None, None),
                        Err(Stop::Aborted) => break,
                        Err(Stop::Infra(message) | Stop::AgentFailed(message)) => {
                            exit_code = self.finish(Some(message), None);
                        }
                    }
                }
                Input::Command(Command::OpenShell) => self.open_shell(),
                Input::Command(other) => self.handle_common(other),
                Input::Tick => self.scan_workspace(),
                Input::AgentExited | Input::RunExited => {}
            }
            if self.commands.is_none() {
                break;
            }
        }
        self.stop_children().await;
        exit_code
    }

    /// Starts an interactive shell in the workspace in the Agent pane.
    fn open_shell(&mut self) {
        if self.agent.as_ref().is_some_and(|l| l.exit_info.is_none()) {
            self.rec.emit(Event::Note {
                text: "a process already runs in the Agent pane".to_string(),
            });
            return;
        }
        let shell = std::env::var("SHELL")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "bash".to_string());
        let spec = PtySpec {
            argv: vec![shell.clone(), "-i".to_string()],
            cwd: self.workspace.clone(),
            env: self.child_env(self.phase.max(1)),
            env_remove: Vec::new(),
            cols: self.cfg.agent_size.0,
            rows: self.cfg.agent_size.1,
        };
        match PtyProcess::spawn(&spec) {
            Ok((process, streams)) => {
                self.rec.emit(Event::AgentStarted {
                    phase: self.phase.max(1),
                    command: format!("{shell} -i (debug shell in the workspace; a attaches)"),
                    cols: spec.cols,
                    rows: spec.rows,
                });
                self.agent = Some(Live::new(process, streams));
            }
            Err(e) => self.rec.emit(Event::Note {
                text: format!("cannot open a shell: {e}"),
            }),
        }
    }

    fn write_result(&mut self) {
        let result = RunResult::from_state(&lock(self.rec.state()), &self.run_id, &self.started_at);
        if let Err(e) = result.write(&self.cfg.run_dir) {
            tracing::error!("cannot write result.json: {e}");
            self.rec.emit(Event::Note {
                text: format!("cannot write result.json: {e}"),
            });
        }
    }

    fn task(&self) -> &Task {
        &self.cfg.task
    }

    async fn session(&mut self) -> Result<(), Stop> {
        let start = if self.cfg.resume {
            match self.resume_point() {
                Some(point) => point,
                None => return Ok(()),
            }
        } else {
            self.emit_task_info();
            self.rec.emit(Event::Mode { mode: self.mode });
            self.rec.emit(Event::Stage {
                phase: 0,
                stage: Stage::Setup,
            });
            Start {
                phase: 1,
                skip_migrate: false,
                prompt: None,
            }
        };
        self.setup().await?;
        if self.cfg.agent.is_none() {
            self.phase = 1;
            self.verify_and_grade(1).await?;
            return Ok(());
        }
        let interactive = self
            .cfg
            .agent
            .as_ref()
            .is_some_and(|a| a.mode() == AgentMode::Interactive);
        let mut prompt_text = start
            .prompt
            .unwrap_or_else(|| prompt::migration_prompt(self.task(), interactive));
        for phase in start.phase..=2u8 {
            self.phase = phase;
            if !(start.skip_migrate && phase == start.phase) {
                self.wait_human(&format!("n to start phase {phase}: the agent migrates"))
                    .await?;
                self.rec.emit(Event::Stage {
                    phase,
                    stage: Stage::Migrate,
                });
                self.migrate(phase, &prompt_text).await?;
            }
            self.wait_human(&format!("n to verify phase {phase}"))
                .await?;
            let verdict = self.verify_and_grade(phase).await?;
            if verdict.passed() || phase == 2 {
                break;
            }
            match self.inject(&verdict, interactive).await? {
                Some(text) => prompt_text = text,
                None => break,
            }
        }
        Ok(())
    }

    /// Where a resumed session continues, from the state rebuilt from its journal: the
    /// phase that was cut off, at its migrate stage, or at verify when the migrate stage had
    /// ended. None when every needed phase was already graded.
    fn resume_point(&mut self) -> Option<Start> {
        let interactive = self
            .cfg
            .agent
            .as_ref()
            .is_some_and(|a| a.mode() == AgentMode::Interactive);
        let state = lock(self.rec.state()).clone();
        let verdict = |p: u8| state.phase(p).and_then(|r| r.verdict.clone());
        let (phase, prompt) = match (verdict(1), verdict(2)) {
            (None, _) => (1, None),
            (Some(v1), None) if !v1.passed() => {
                let prompt = state
                    .phase(2)
                    .and_then(|r| r.prompt.clone())
                    .unwrap_or_else(|| {
                        prompt::phase2_prompt(&v1, &state.task.phase2_details, interactive)
                    });
                (2, Some(prompt))
            }
            _ => return None,
        };
        let migrated = state.phase == phase && matches!(state.stage, Stage::Verify | Stage::Grade);
        let prompt = match (phase, prompt) {
            (1, _) => state.phase(1).and_then(|r| r.prompt.clone()),
            (_, p) => p,
        };
        self.rec.emit(Event::Note {
            text: format!(
                "resumed from the journal: phase {phase} continues at {}",
                if migrated { "verify" } else { "migrate" }
            ),
        });
        Some(Start {
            phase,
            skip_migrate: migrated,
            prompt,
        })
    }

    fn emit_task_info(&mut self) {
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
            agent,
            command: task.spec.run.command.clone(),
            criteria: task.spec.criteria.clone(),
            metrics: task.spec.metrics.iter().map(|m| m.name.clone()).collect(),
            phase2_details: task.spec.phase2.details.clone(),
            reference,
        }));
        self.rec.emit(event);
    }

    /// Records how the workspace differs from `known` (path → recorded file) as file changes.
    fn record_differences(&mut self, known: &BTreeMap<String, FileContent>) {
        let current = workspace::snapshot(&self.workspace);
        for file in &current {
            if known.get(&file.path).map(|f| &f.text) != Some(&file.text) {
                self.rec.emit(Event::FileChanged {
                    file: file.clone(),
                    deleted: false,
                });
            }
        }
        for path in known.keys() {
            if !current.iter().any(|f| &f.path == path) {
                self.rec.emit(Event::FileChanged {
                    file: FileContent {
                        path: path.clone(),
                        text: None,
                        size: 0,
                    },
                    deleted: true,
                });
            }
        }
    }

    async fn setup(&mut self) -> Result<(), Stop> {
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
            let baseline = workspace::snapshot(&source);
            let known: BTreeMap<String, FileContent> = baseline
                .iter()
                .map(|f| (f.path.clone(), f.clone()))
                .collect();
            self.rec.emit(Event::Baseline { files: baseline });
            if self.cfg.graded_repo.is_none() {
                self.rec.emit(Event::Note {
                    text: format!("copying {} into the workspace", source.display()),
                });
                workspace::copy_tree(&source, &self.workspace, false)
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
            self.env = self
                .blocking(move |progress, _cancel| {
                    let env = crate::env::ensure(&cache, &packages, progress)
                        .map_err(|e| e.to_string())?;
                    if let Some(env) = &env {
                        crate::grade::audit::install(&env.dir).map_err(|e| e.to_string())?;
                    }
                    Ok(env)
                })
                .await?;
        }
        let pool = self.cfg.runner.clone();
        if !pool.is_local() {
            self.rec.emit(Event::Note {
                text: format!("verify runs on {}", pool.describe()),
            });
            let job = self.verify_job(0);
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
    async fn blocking<T, F>(&mut self, work: F) -> Result<T, Stop>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn FnMut(String), &AtomicBool) -> Result<T, String> + Send + 'static,
    {
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let flag = cancel.clone();
        let handle = tokio::task::spawn_blocking(move || {
            work(
                &mut |line| {
                    let _ = tx.send(line);
                },
                &flag,
            )
        });
        tokio::pin!(handle);
        loop {
            tokio::select! {
                result = &mut handle => {
                    while let Ok(line) = rx.try_recv() {
                        self.rec.emit(Event::Note { text: line });
                    }
                    return match result {
                        Ok(Ok(value)) => Ok(value),
                        Ok(Err(e)) => Err(Stop::Infra(e)),
                        Err(e) => Err(Stop::Infra(format!("a set-up step crashed: {e}"))),
                    };
                }
                Some(line) = rx.recv() => self.rec.emit(Event::Note { text: line }),
                cmd = recv_opt(self.commands.as_mut()) => {
                    match cmd {
                        Some(Command::Abort) => {
                            cancel.store(true, Ordering::Relaxed);
                            return Err(Stop::Aborted);
                        }
                        Some(Command::Interrupt(kind)) => {
                            self.interruption = Some(kind);
                            cancel.store(true, Ordering::Relaxed);
                            return Err(Stop::Aborted);
                        }
                        Some(other) => self.handle_common(other),
                        None => self.commands = None,
                    }
                }
            }
        }
    }

    /// The verify run of `phase` as a runner sees it.
    fn verify_job(&self, phase: u8) -> Job {
        let spec = &self.task().spec;
        let mut script = String::from("set -e\n");
        if let Some(setup) = &spec.env.setup {
            script.push_str(setup);
            script.push('\n');
        }
        script.push_str(&spec.run.command);
        script.push('\n');
        Job {
            // The run folder's name is unique in its runs folder only: the process id keeps
            // the remote folders of two xstack processes sharing a runner apart.
            run_id: format!("{}-{}", self.run_id, std::process::id()),
            packages: spec.env.packages.clone(),
            script,
            vars: self.xstack_vars(phase),
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
        if let Some(live) = self.run.as_mut() {
            live.process.terminate(TERMINATE_GRACE).await;
        }
    }

    /// Variables every child gets: the environment's PATH, the seed, the task and phase.
    fn child_env(&self, phase: u8) -> Vec<(String, String)> {
        let mut vars = self.env.as_ref().map(PythonEnv::vars).unwrap_or_default();
        vars.extend(self.xstack_vars(phase));
        vars
    }

    /// The seed, the task and the phase: the variables that travel to every machine.
    fn xstack_vars(&self, phase: u8) -> Vec<(String, String)> {
        vec![
            ("XSTACK_SEED".to_string(), self.cfg.seed.to_string()),
            ("XSTACK_TASK".to_string(), self.task().spec.id.clone()),
            ("XSTACK_PHASE".to_string(), phase.to_string()),
            ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
        ]
    }

    /// Waits for the next input, handling terminal output, file changes and the common
    /// commands on the way.
    async fn next_input(&mut self) -> Input {
        let tick_at = Instant::now() + TICK;
        loop {
            let raw = {
                let (agent_out, agent_exit) = streams(&mut self.agent);
                let (run_out, run_exit) = streams(&mut self.run);
                let commands = self.commands.as_mut();
                tokio::select! {
                    chunk = recv_opt(agent_out) => Raw::AgentChunk(chunk),
                    info = exit_opt(agent_exit) => Raw::AgentExit(info),
                    chunk = recv_opt(run_out) => Raw::RunChunk(chunk),
                    info = exit_opt(run_exit) => Raw::RunExit(info),
                    cmd = recv_opt(commands) => Raw::Command(cmd),
                    _ = tokio::time::sleep_until(tick_at) => Raw::Tick,
                }
            };
            match raw {
                Raw::AgentChunk(chunk) => {
                    let Some(live) = self.agent.as_mut() else {
                        continue;
                    };
                    let ended = chunk.is_none();
                    let text = match chunk {
                        Some(bytes) => live.decoder.decode(&coalesce(bytes, &mut live.output)),
                        None => {
                            live.output = None;
                            live.decoder.finish()
                        }
                    };
                    if !text.is_empty() {
                        self.last_activity = Instant::now();
                        self.agent_output_at = Some(self.last_activity);
                        self.agent_transcript(&text, ended);
                        self.rec.emit(Event::AgentOutput { text });
                    } else if ended {
                        self.agent_transcript("", true);
                    }
                    if live_done(&self.agent) {
                        self.record_agent_exit();
                        return Input::AgentExited;
                    }
                }
                Raw::AgentExit(info) => {
                    if let Some(live) = self.agent.as_mut() {
                        live.exit = None;
                        live.exit_info = Some(info);
                        live.process.mark_exited();
                    }
                    if live_done(&self.agent) {
                        self.record_agent_exit();
                        return Input::AgentExited;
                    }
                }
                Raw::RunChunk(chunk) => {
                    let Some(live) = self.run.as_mut() else {
                        continue;
                    };
                    let more = chunk.is_some();
                    let text = match chunk {
                        Some(bytes) => live.decoder.decode(&coalesce(bytes, &mut live.output)),
                        None => {
                            live.output = None;
                            live.decoder.finish()
                        }
                    };
                    if !text.is_empty() {
                        self.run_output(text);
                    }
                    if !more {
                        self.finish_metrics();
                    }
                    if live_done(&self.run) {
                        return Input::RunExited;
                    }
                }
                Raw::RunExit(info) => {
                    if let Some(live) = self.run.as_mut() {
                        live.exit = None;
                        live.exit_info = Some(info);
                        live.process.mark_exited();
                    }
                    if live_done(&self.run) {
                        return Input::RunExited;
                    }
                }
                Raw::Command(Some(Command::Interrupt(kind))) => {
                    self.interruption = Some(kind);
                    return Input::Command(Command::Abort);
                }
                Raw::Command(Some(cmd)) => return Input::Command(cmd),
                Raw::Command(None) => self.commands = None,
                Raw::Tick => {
                    let keep: Vec<i32> = [&self.agent, &self.run]
                        .into_iter()
                        .filter_map(|l| l.as_ref().and_then(|l| l.process.pgid()))
                        .collect();
                    crate::reaper::reap_orphans(&keep);
                    self.rec.tick();
                    return Input::Tick;
                }
            }
        }
    }

    /// Parses the agent's structured output, if it has any, into transcript events.
    fn agent_transcript(&mut self, text: &str, ended: bool) {
        let Some(parser) = self.transcript.as_mut() else {
            return;
        };
        let mut items = parser.feed(text);
        if ended {
            items.extend(parser.finish());
        }
        for item in items {
            if let TranscriptItem::Session { id } = &item {
                self.agent_session = Some(id.clone());
            }
            self.rec.emit(Event::Transcript {
                phase: self.phase,
                item,
            });
        }
    }

    /// Types `text` into the interactive agent's terminal and submits it.
    fn type_into_agent(&mut self, text: &str) {
        let bracketed = lock(self.rec.state())
            .agent_screen
            .screen()
            .bracketed_paste();
        if let Some(live) = self.agent.as_mut() {
            let _ = live
                .process
                .write(&crate::agent::typed_bytes(text, bracketed));
        }
    }

    /// Records the verify run's output, then the metric points of the lines it completed.
    fn run_output(&mut self, text: String) {
        let points = self
            .metric_stream
            .as_mut()
            .map(|stream| stream.feed(&text))
            .unwrap_or_default();
        self.rec.emit(Event::RunOutput { text });
        self.emit_points(points);
    }

    fn finish_metrics(&mut self) {
        if let Some(stream) = self.metric_stream.as_mut() {
            let points = stream.finish();
            self.emit_points(points);
        }
    }

    /// Records the points read from one piece of output as one `Metrics` event (during the
    /// seed check's run: keeps them apart, as that run's series).
    fn emit_points(&mut self, points: Vec<(usize, Point)>) {
        if let Some(series) = self.check_series.as_mut() {
            for (i, point) in points {
                if let Some(metric) = self.cfg.task.spec.metrics.get(i) {
                    series.entry(metric.name.clone()).or_default().push(point);
                }
            }
            return;
        }
        let points: Vec<MetricPoint> = points
            .into_iter()
            .filter_map(|(i, p)| Some(MetricPoint(u16::try_from(i).ok()?, p.step, p.value)))
            .collect();
        if !points.is_empty() {
            self.rec.emit(Event::Metrics {
                phase: self.phase,
                points,
            });
        }
    }

    /// Handles commands that mean the same in every stage.
    fn handle_common(&mut self, cmd: Command) {
        match cmd {
            Command::ToggleMode => {
                self.mode = match self.mode {
                    Mode::Step => Mode::Auto,
                    Mode::Auto => Mode::Step,
                };
                self.rec.emit(Event::Mode { mode: self.mode });
            }
            Command::TogglePause => {
                let running = self.agent.as_ref().is_some_and(|l| l.exit_info.is_none());
                if running && let Some(live) = self.agent.as_ref() {
                    let paused = !lock(self.rec.state()).paused;
                    if paused {
                        live.process.pause();
                    } else {
                        live.process.resume();
                    }
                    self.rec.emit(Event::Paused { paused });
                } else {
                    self.rec.emit(Event::Note {
                        text: "no agent is running to pause".to_string(),
                    });
                }
            }
            Command::Message(text) => self.message_agent(text),
            Command::Inject(text) => {
                self.rec.emit(Event::Note {
                    text: "phase-two details kept; they are sent when phase 1 fails".to_string(),
                });
                self.injected = Some(text);
            }
            Command::AgentInput(bytes) => {
                if let Some(live) = self.agent.as_mut() {
                    let _ = live.process.write(&bytes);
                }
            }
            Command::ResizeAgent(cols, rows) => {
                self.cfg.agent_size = (cols, rows);
                if let Some(live) = self.agent.as_ref() {
                    let _ = live.process.resize(cols, rows);
                }
                self.rec.emit(Event::Resized {
                    pane: TerminalPane::Agent,
                    cols,
                    rows,
                });
            }
            Command::ResizeRun(cols, rows) => {
                self.cfg.run_size = (cols, rows);
                if let Some(live) = self.run.as_ref() {
                    let _ = live.process.resize(cols, rows);
                }
                self.rec.emit(Event::Resized {
                    pane: TerminalPane::Run,
                    cols,
                    rows,
                });
            }
            Command::Next
            | Command::Rerun
            | Command::Abort
            | Command::OpenShell
            | Command::Interrupt(_) => {}
        }
    }

    fn message_agent(&mut self, text: String) {
        let interactive = self
            .cfg
            .agent
            .as_ref()
            .is_some_and(|a| a.mode() == AgentMode::Interactive);
        match self.agent.as_mut() {
            Some(live) if interactive && live.exit_info.is_none() => {
                self.type_into_agent(&text);
                self.rec.emit(Event::Message { text });
            }
            _ => {
                self.rec.emit(Event::Message { text: text.clone() });
                self.rec.emit(Event::Note {
                    text: "message queued: it is added to the agent's next prompt".to_string(),
                });
                self.pending_messages.push(text);
            }
        }
    }

    /// In step mode, waits until the human says `n` (or switches to auto).
    async fn wait_human(&mut self, what: &str) -> Result<(), Stop> {
        if self.mode == Mode::Auto {
            return Ok(());
        }
        self.rec.emit(Event::Waiting {
            what: Some(what.to_string()),
        });
        loop {
            match self.next_input().await {
                Input::Command(Command::Next) => break,
                Input::Command(Command::Abort) => return Err(Stop::Aborted),
                Input::Command(Command::ToggleMode) => {
                    self.handle_common(Command::ToggleMode);
                    break;
                }
                Input::Command(Command::Rerun) => {
                    if self.phase >= 1
                        && lock(self.rec.state())
                            .phase(self.phase)
                            .is_some_and(|p| p.verdict.is_some())
                    {
                        self.verify_and_grade(self.phase).await?;
                        self.rec.emit(Event::Waiting {
                            what: Some(what.to_string()),
                        });
                    }
                }
                Input::Command(other) => self.handle_common(other),
                Input::Tick => self.scan_workspace(),
                Input::AgentExited | Input::RunExited => {}
            }
        }
        self.rec.emit(Event::Waiting { what: None });
        Ok(())
    }

    /// Records the workspace's changes: only the files the watcher reported while one runs,
    /// else (and at the end of each agent turn) a full scan.
    fn scan_workspace(&mut self) {
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
            self.last_activity = Instant::now();
        }
        for change in changes {
            self.rec.emit(Event::FileChanged {
                file: change.file,
                deleted: change.deleted,
            });
        }
    }

    async fn migrate(&mut self, phase: u8, prompt_text: &str) -> Result<(), Stop> {
        let Some(agent) = self.cfg.agent.clone() else {
            return Ok(());
        };
        let mut text = prompt_text.to_string();
        for message in self.pending_messages.drain(..) {
            text.push_str("\n\nMessage from the engineer supervising the migration:\n");
            text.push_str(&message);
        }
        let prompts = self.cfg.run_dir.join("prompts");
        std::fs::create_dir_all(&prompts)
            .map_err(|e| Stop::Infra(format!("{}: {e}", prompts.display())))?;
        let prompt_file = prompts.join(format!("phase-{phase}.txt"));
        std::fs::write(&prompt_file, &text)
            .map_err(|e| Stop::Infra(format!("{}: {e}", prompt_file.display())))?;
        self.rec.emit(Event::Prompt {
            phase,
            text: text.clone(),
        });

        // Watch before the agent starts, so that none of its writes is missed.
        self.watcher = match WorkspaceWatcher::start(&self.workspace, WATCH_DEBOUNCE) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                self.rec.emit(Event::Note {
                    text: format!("cannot watch the workspace ({e}); scanning it instead"),
                });
                None
            }
        };
        let interactive = agent.mode() == AgentMode::Interactive;
        let reuse = interactive && self.agent.as_ref().is_some_and(|l| l.exit_info.is_none());
        if !reuse {
            let ctx = PhaseContext {
                phase,
                prompt: &text,
                prompt_file: &prompt_file,
                workspace: &self.workspace,
                task: &self.cfg.task.spec.id,
                session: self.agent_session.as_deref(),
            };
            let mut argv = agent.argv(&ctx, Some(&prompt_file));
            let mut env = self.child_env(phase);
            env.extend(agent.env());
            if let Some(sandbox) = &self.cfg.sandbox {
                let path = env
                    .iter()
                    .rev()
                    .find(|(k, _)| k == "PATH")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| std::env::var("PATH").unwrap_or_default());
                let mut visible = sandbox::path_dirs(&path);
                visible.push(prompts.clone());
                visible.extend(agent.files_dir());
                if let Some(dir) = std::env::current_exe()
                    .ok()
                    .and_then(|e| e.parent().map(Path::to_path_buf))
                {
                    visible.push(dir);
                }
                argv = sandbox.wrap(&argv, &self.workspace, &visible, &self.hidden_from_agent());
            }
            let spec = PtySpec {
                argv: argv.clone(),
                cwd: self.workspace.clone(),
                env,
                env_remove: Vec::new(),
                cols: self.cfg.agent_size.0,
                rows: self.cfg.agent_size.1,
            };
            let (process, streams) = PtyProcess::spawn(&spec)
                .map_err(|e| Stop::Infra(format!("cannot start the agent: {e}")))?;
            self.rec.emit(Event::AgentStarted {
                phase,
                command: shell_words::join(&argv),
                cols: spec.cols,
                rows: spec.rows,
            });
            self.agent = Some(Live::new(process, streams));
            self.transcript = TranscriptParser::new(agent.output(), &self.workspace);
            self.agent_started_at = Instant::now();
            self.agent_output_at = None;
        }
        if agent.types_prompt() {
            self.pending_prompt = Some(text.clone());
        }
        let done_marker = self.workspace.join(".xstack").join("done");
        let _ = std::fs::remove_file(&done_marker);
        self.last_activity = Instant::now();
        let files_before = lock(self.rec.state()).files_version;
        let mut exited = false;
        let mut idled_out = false;
        loop {
            match self.next_input().await {
                Input::AgentExited => {
                    exited = true;
                    break;
                }
                Input::Command(Command::Abort) => return Err(Stop::Aborted),
                Input::Command(Command::Next) => {
                    self.rec.emit(Event::Note {
                        text: format!("phase {phase}: the human ended the agent's turn"),
                    });
                    if !interactive {
                        self.end_agent().await;
                    }
                    break;
                }
                Input::Command(other) => self.handle_common(other),
                Input::Tick => {
                    self.scan_workspace();
                    self.type_pending_prompt();
                    if interactive && done_marker.exists() {
                        let _ = std::fs::remove_file(&done_marker);
                        self.rec.emit(Event::Note {
                            text: format!("phase {phase}: the agent wrote .xstack/done"),
                        });
                        break;
                    }
                    if let Some(limit) = self.cfg.idle_limit
                        && interactive
                        && !lock(self.rec.state()).paused
                        && self.last_activity.elapsed() >= limit
                    {
                        self.rec.emit(Event::Note {
                            text: format!(
                                "phase {phase}: the agent was idle for {} s",
                                limit.as_secs()
                            ),
                        });
                        idled_out = true;
                        break;
                    }
                }
                Input::RunExited => {}
            }
        }
        let exit_code = self
            .agent
            .as_ref()
            .and_then(|l| l.exit_info)
            .and_then(|info| info.code);
        if !interactive {
            self.agent = None;
        }
        self.watcher = None;
        self.pending_prompt = None;
        self.scan_workspace();
        let changed = lock(self.rec.state()).files_version != files_before;
        if exited && !changed && exit_code.is_some_and(|c| c != 0) {
            return Err(Stop::AgentFailed(self.agent_error_line(exit_code)));
        }
        if idled_out && !changed {
            // An interactive agent that did nothing with its prompt (a dialog may have taken
            // it): the phase did not happen.
            return Err(Stop::AgentFailed(format!(
                "the agent changed nothing and went idle: it may never have received its prompt; its screen ends with: {}",
                self.agent_error_line(None)
            )));
        }
        Ok(())
    }

    /// The agent's last line of output (its error), with its exit status.
    fn agent_error_line(&self, code: Option<i32>) -> String {
        let screen = lock(self.rec.state()).agent_screen.contents();
        let last = screen
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("(no output)")
            .to_string();
        match code {
            Some(code) => format!("{last} (exit status {code})"),
            None => last,
        }
    }

    /// Types the waiting prompt once the interactive agent is ready for it: it printed
    /// something and then stayed quiet for a moment, or it has had long enough.
    fn type_pending_prompt(&mut self) {
        if self.pending_prompt.is_none() || lock(self.rec.state()).paused {
            return;
        }
        let settled = self
            .agent_output_at
            .is_some_and(|at| at.elapsed() >= PROMPT_SETTLE);
        if (settled || self.agent_started_at.elapsed() >= PROMPT_WAIT_MAX)
            && let Some(text) = self.pending_prompt.take()
        {
            self.type_into_agent(&text);
        }
    }

    /// Records the agent's exit after the last of its output, so the journal never shows
    /// output after the exit (and text held back for redaction is never cut off early).
    fn record_agent_exit(&mut self) {
        let Some(live) = self.agent.as_mut() else {
            return;
        };
        if !live.exit_recorded {
            live.exit_recorded = true;
            let code = live.exit_info.and_then(|info| info.code);
            self.rec.emit(Event::AgentExited { code });
        }
    }

    async fn end_agent(&mut self) {
        let Some(exited) = self.agent.as_ref().map(|l| l.exit_info.is_some()) else {
            return;
        };
        if exited {
            // It exited while its output was still open: its exit is not recorded yet.
            self.record_agent_exit();
            self.agent = None;
        } else if let Some(mut live) = self.agent.take() {
            live.process.terminate(TERMINATE_GRACE).await;
            self.rec.emit(Event::AgentExited { code: None });
        }
    }

    async fn stop_children(&mut self) {
        self.end_agent().await;
        if let Some(mut live) = self.run.take()
            && live.exit_info.is_none()
        {
            live.process.terminate(TERMINATE_GRACE).await;
        }
    }

    /// Builds the verify copy, scans it, runs the experiment (twice with `seed_check`),
    /// grades it.
    async fn verify_and_grade(&mut self, phase: u8) -> Result<Verdict, Stop> {
        self.rec.emit(Event::Stage {
            phase,
            stage: Stage::Verify,
        });
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
            verify_confined: first.confined,
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
            input.verify_confined = first.confined && second.confined;
            verdict = grade::grade(&input);
        }
        self.rec.emit(Event::Graded {
            phase,
            verdict: verdict.clone(),
            exit_code: first.exit.code,
            duration_s: first.duration_s,
        });
        self.write_result();
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
            },
        )
        .map_err(|e| Stop::Infra(e.to_string()))?;
        findings.extend(scanned);
        Ok(findings)
    }

    /// The interpreter of the target environment, else `python3` on PATH.
    fn python(&self) -> PathBuf {
        match &self.env {
            Some(env) => env.bin().join("python"),
            None => {
                let path = std::env::var("PATH").unwrap_or_default();
                crate::env::which_in("python3", &path).unwrap_or_else(|| "python3".into())
            }
        }
    }

    /// What a sandboxed agent must not see: the task folder and its siblings (other tasks,
    /// their `solution/`), the runs folder (this run's journal and `result.json`, other
    /// runs), and the demo task the cache holds.
    fn hidden_from_agent(&self) -> Vec<PathBuf> {
        let absolute = |p: &Path| p.canonicalize().ok();
        let task = absolute(&self.cfg.task.dir);
        let mut hidden: Vec<PathBuf> = task.iter().cloned().collect();
        hidden.extend(
            task.as_deref()
                .and_then(Path::parent)
                .map(Path::to_path_buf),
        );
        hidden.extend(absolute(&self.cfg.run_dir).and_then(|r| r.parent().map(Path::to_path_buf)));
        hidden.extend(absolute(&self.cfg.cache_dir.join("demo")));
        hidden
    }

    /// On a runner with a queue (Slurm): waits until the verify run's job starts, recording
    /// each change of its state in the queue (the wait is not the run's time); returns at
    /// once on the others. An abort cancels the job.
    async fn wait_in_queue(&mut self, phase: u8, lease: &Arc<Lease>) -> Result<(), Stop> {
        let runner = lease.runner().to_string();
        let job_event = |q: QueueState| Event::RunnerJob {
            phase,
            runner: runner.clone(),
            job_id: q.job_id,
            state: q.state,
            reason: q.reason,
            waited_s: (q.waited_s * 1000.0).round() / 1000.0,
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, mut rx) = mpsc::unbounded_channel::<QueueState>();
        let (waiting, flag) = (lease.clone(), cancel.clone());
        let handle = tokio::task::spawn_blocking(move || {
            waiting.wait_started(&flag, &mut |q| {
                let _ = tx.send(q);
            })
        });
        tokio::pin!(handle);
        loop {
            tokio::select! {
                result = &mut handle => {
                    while let Ok(q) = rx.try_recv() {
                        self.rec.emit(job_event(q));
                    }
                    return match result {
                        Ok(Ok(Some(started))) => {
                            self.rec.emit(job_event(started));
                            Ok(())
                        }
                        Ok(Ok(None)) => Ok(()),
                        Ok(Err(RunnerError::Cancelled)) => Err(Stop::Aborted),
                        Ok(Err(e)) => Err(Stop::Infra(e.to_string())),
                        Err(e) => Err(Stop::Infra(format!("waiting for the job crashed: {e}"))),
                    };
                }
                Some(q) = rx.recv() => {
                    // A wait may last hours: each state reaches the journal when it happens.
                    self.rec.emit(job_event(q));
                    self.rec.flush();
                }
                cmd = recv_opt(self.commands.as_mut()) => match cmd {
                    Some(Command::Abort) | Some(Command::Interrupt(_)) => {
                        if let Some(Command::Interrupt(kind)) = cmd {
                            self.interruption = Some(kind);
                        }
                        cancel.store(true, Ordering::Relaxed);
                        self.cancel_run(lease).await;
                        return Err(Stop::Aborted);
                    }
                    Some(other) => self.handle_common(other),
                    None => self.commands = None,
                },
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
        let verify_dir = self.cfg.run_dir.join("verify");
        let timeout = Duration::from_secs(self.task().spec.run.timeout_s);
        let command = self.task().spec.run.command.clone();
        let mut job = self.verify_job(phase);
        job.vars.retain(|(k, _)| k != "XSTACK_SEED");
        job.vars.push(("XSTACK_SEED".to_string(), seed.to_string()));
        let audit_dir = self.cfg.run_dir.join(format!("audit-{phase}"));
        job.integrity = JobIntegrity {
            network: self.task().spec.run.network,
            audit_dir: Some(audit_dir.clone()),
            forbid: self.task().spec.integrity.forbid_imports.clone(),
            protected: self.protected_modules()?,
        };
        let pool = self.cfg.runner.clone();
        let staged_dir = verify_dir.clone();
        let lease = Arc::new(
            self.blocking(move |progress, cancel| {
                pool.launch(&job, &staged_dir, cancel, progress)
                    .map_err(|e| e.to_string())
            })
            .await?,
        );
        if !lease.runner().is_local() {
            self.rec.emit(Event::Note {
                text: format!("phase {phase}: verify runs on {}", lease.runner()),
            });
        }
        self.wait_in_queue(phase, &lease).await?;
        let launch = lease.launch().clone();
        if let Some(reason) = &launch.unconfined_reason {
            self.rec.emit(Event::Note {
                text: format!("phase {phase}: verify is not confined: {reason}"),
            });
        }
        let pty = PtySpec {
            argv: launch.argv,
            cwd: launch.cwd,
            env: launch.env,
            env_remove: Vec::new(),
            cols: self.cfg.run_size.0,
            rows: self.cfg.run_size.1,
        };
        let started = Instant::now();
        let (process, streams) = PtyProcess::spawn(&pty)
            .map_err(|e| Stop::Infra(format!("cannot start the verify run: {e}")))?;
        self.metric_stream = Some(MetricStream::new(Extractor::for_task(&self.cfg.task)));
        self.check_series = seed_check.then(BTreeMap::new);
        self.rec.emit(Event::RunStarted {
            phase,
            command,
            cols: pty.cols,
            rows: pty.rows,
            seed_check,
        });
        self.run = Some(Live::new(process, streams));
        let deadline = started + timeout;
        let mut timed_out = false;
        let mut exited_at: Option<Instant> = None;
        loop {
            let input = tokio::select! {
                input = self.next_input() => input,
                _ = tokio::time::sleep_until(deadline), if !timed_out && exited_at.is_none() => {
                    timed_out = true;
                    self.cancel_run(&lease).await;
                    continue;
                }
            };
            match input {
                Input::RunExited => break,
                Input::Command(Command::Abort) => {
                    self.cancel_run(&lease).await;
                    self.run = None;
                    return Err(Stop::Aborted);
                }
                Input::Command(other) => self.handle_common(other),
                Input::Tick => {
                    let exited = self.run.as_ref().is_some_and(|l| l.exit_info.is_some());
                    if exited && exited_at.is_none() {
                        exited_at = Some(Instant::now());
                    }
                    // Output still open after the run's exit: a leftover process holds the
                    // terminal; end the group so the output closes.
                    if let Some(at) = exited_at
                        && at.elapsed() >= DRAIN
                        && let Some(live) = self.run.as_mut()
                    {
                        crate::pty::signal_group(live.process.pgid().unwrap_or(0), libc::SIGKILL);
                    }
                }
                Input::AgentExited => {}
            }
        }
        let duration_s = started.elapsed().as_secs_f64();
        let exit_info = self
            .run
            .take()
            .and_then(|l| l.exit_info)
            .unwrap_or(ExitInfo { code: None });
        self.metric_stream = None;
        let series = self.check_series.take().unwrap_or_default();
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
        let mut confined = launch.confined;
        let mut audit = Vec::new();
        let mut lost = None;
        if !lease.runner().is_local() && !timed_out {
            match self.remote_record(&lease, exit_info.code == Some(0)).await {
                Ok(Some(recorded)) => {
                    confined = recorded.confined;
                    audit = grade::audit::findings_of(recorded.audit.iter().map(String::as_str));
                    if !confined {
                        self.rec.emit(Event::Note {
                            text: format!(
                                "phase {phase}: verify is not confined: no working bubblewrap on {}",
                                lease.runner()
                            ),
                        });
                    }
                }
                Ok(None) => {}
                Err(message) => lost = Some(message),
            }
        }
        let lease_was_local = lease.runner().is_local();
        // Dropping the lease gives back what the runner holds (a Slurm allocation): blocking.
        let _ = tokio::task::spawn_blocking(move || drop(lease)).await;
        self.rec.emit(Event::RunExited {
            code: exit_info.code,
            timed_out,
            duration_s,
        });
        if let Some(message) = lost {
            return Err(Stop::Infra(message));
        }
        if !seed_check {
            self.rec.emit(Event::Stage {
                phase,
                stage: Stage::Grade,
            });
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
            confined,
            audit,
            series,
        })
    }

    /// After a failed phase 1: the phase-two details, reviewed in step mode. Returns the
    /// phase-two prompt, or None when a re-run turned the phase into a pass.
    async fn inject(
        &mut self,
        verdict: &Verdict,
        interactive: bool,
    ) -> Result<Option<String>, Stop> {
        self.rec.emit(Event::Stage {
            phase: 1,
            stage: Stage::Inject,
        });
        let mut verdict = verdict.clone();
        let details = if let Some(text) = self.injected.take() {
            text
        } else if self.mode == Mode::Auto {
            self.task().spec.phase2.details.clone()
        } else {
            let what = "i to edit the details, n to send them as written".to_string();
            self.rec.emit(Event::Waiting {
                what: Some(what.clone()),
            });
            loop {
                match self.next_input().await {
                    Input::Command(Command::Next) => break self.task().spec.phase2.details.clone(),
                    Input::Command(Command::Inject(text)) => break text,
                    Input::Command(Command::Abort) => return Err(Stop::Aborted),
                    Input::Command(Command::ToggleMode) => {
                        self.handle_common(Command::ToggleMode);
                        break self.task().spec.phase2.details.clone();
                    }
                    Input::Command(Command::Rerun) => {
                        verdict = self.verify_and_grade(1).await?;
                        if verdict.passed() {
                            return Ok(None);
                        }
                        self.rec.emit(Event::Stage {
                            phase: 1,
                            stage: Stage::Inject,
                        });
                        self.rec.emit(Event::Waiting {
                            what: Some(what.clone()),
                        });
                    }
                    Input::Command(other) => self.handle_common(other),
                    Input::Tick => self.scan_workspace(),
                    Input::AgentExited | Input::RunExited => {}
                }
            }
        };
        self.rec.emit(Event::Waiting { what: None });
        Ok(Some(prompt::phase2_prompt(&verdict, &details, interactive)))
    }
}

fn live_done(live: &Option<Live>) -> bool {
    live.as_ref().is_some_and(Live::finished)
}

/// The run folder's name for a new run: `<UTC date-time>-<task>-<agent>`, unique in `runs`.
pub fn new_run_dir(runs: &Path, task: &str, agent_slug: &str) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let base = format!("{stamp}-{task}-{agent_slug}");
    let mut dir = runs.join(&base);
    let mut n = 2;
    while dir.exists() {
        dir = runs.join(format!("{base}-{n}"));
        n += 1;
    }
    dir
}

//! Runs one supervised session by carrying out what [`super::policy`] decides: setup →
//! migrate → verify → grade → (fail) inject → migrate → verify → grade → done. It owns the
//! child processes (each under [`crate::pty::supervise`]), turns everything that happens into
//! events for the recorder, and hands every command to one handler. The stages' work lives
//! beside this file: `setup.rs` (workspace, environment, runners, resume), `agent.rs` (the
//! agent's turn), `verify.rs` (the verify run and the grade).

mod agent;
mod parity;
mod setup;
mod verify;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::agent::sandbox::Sandbox;
use crate::agent::sessions::CodexCommands;
use crate::agent::transcript::TranscriptParser;
use crate::agent::{AgentMode, AgentSpec, prompt};
use crate::env::PythonEnv;
use crate::metrics::MetricStream;
use crate::process::{EXIT_FAIL, EXIT_INFRA, EXIT_PASS};
use crate::pty::supervise::{ChildEvent, Supervised};
use crate::runner::RunnerPool;
use crate::task::Task;
use crate::workspace::Tracker;
use crate::workspace::watch::{WatchEvent, WorkspaceWatcher};

use super::policy::{AgentClock, Effect, Policy};
use super::recorder::{Recorder, lock};
use super::result::RunResult;
use crate::agent::submit::Submission;
use crate::event::{
    At, Command, Event, Interruption, Mode, Pass, PhaseOutcome, Return, TerminalPane,
};

/// How often the workspace is scanned and the journal flushed while waiting.
const TICK: Duration = Duration::from_millis(200);

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
    /// Aborted or interrupted (the driver's `interruption` says by what), or, after the end,
    /// the human quit.
    #[error("aborted")]
    Aborted,
    /// The environment, the runner or a set-up step failed.
    #[error("{0}")]
    Infra(String),
    /// The agent exited non-zero having changed nothing: its last error line.
    #[error("{0}")]
    AgentFailed(String),
}

/// One input of a stage's wait, after output and file changes were recorded on the way.
enum Input {
    Command(Command),
    AgentFinished,
    RunFinished,
    RunTimedOut,
    Tick,
}

/// What one wait of [`Driver::next_input`] produced.
enum Woken {
    Agent(ChildEvent),
    Run(ChildEvent),
    Command(Option<Command>),
    Tick,
}

async fn recv_opt<T>(rx: Option<&mut mpsc::Receiver<T>>) -> Option<T> {
    match rx {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

async fn child_next(child: Option<&mut Supervised>) -> ChildEvent {
    match child {
        Some(child) => child.next().await,
        None => std::future::pending().await,
    }
}

/// The running session.
pub struct Driver {
    cfg: SessionConfig,
    rec: Recorder,
    commands: Option<mpsc::Receiver<Command>>,
    /// Where the session is and what it does next: the only control state.
    policy: Policy,
    workspace: PathBuf,
    env: Option<PythonEnv>,
    tracker: Option<Tracker>,
    watcher: Option<(WorkspaceWatcher, std::sync::mpsc::Receiver<WatchEvent>)>,
    /// The records of the Python processes the agent starts (docs/CHECKS.md); None when
    /// they could not be set up (said in a note) or no agent works.
    agent_runs: Option<crate::checks::Collector>,
    agent: Option<Supervised>,
    /// Whether the running agent's exit was recorded.
    agent_exit_recorded: bool,
    run: Option<Supervised>,
    metric_stream: Option<MetricStream>,
    /// Whether the verify run going on is the seed check's (its points are its own series).
    seed_check_run: bool,
    /// What interrupted the session, when a signal or the human did.
    interruption: Option<Interruption>,
    pending_messages: Vec<String>,
    /// The prompt of the phase the session continues, when resuming.
    resume_prompt: Option<String>,
    /// File changes recorded so far (did the agent's turn change anything?).
    files_changed: u64,
    agent_clock: AgentClock,
    /// Parses the running agent's structured output.
    transcript: Option<TranscriptParser>,
    /// Codex's commands, from its session files (read while it works and at the end of
    /// each turn).
    codex_sessions: Option<CodexCommands>,
    /// The conversation id the agent reported, to resume it.
    agent_session: Option<String>,
    /// A prompt or message on its way into an interactive agent ([`Submission`]: pasted once
    /// the agent is ready, Enter once its screen took the paste), moved on at every tick.
    pending_prompt: Option<Submission>,
    /// Keys typed into the agent's folder-trust screen in auto mode (at most
    /// [`crate::agent::submit::TRUST_MOVES`] moves and one Enter).
    trust_keys_typed: u32,
    /// When the agent's folder-trust question was answered in auto mode.
    trust_answered_at: Option<Instant>,
    /// The agent's screen when the last key went into its folder-trust screen, and when.
    trust_screen_moved_from: Option<(String, Instant)>,
    /// When the agent's folder-trust screen was first seen in auto mode: it is read once
    /// its drawing settled, or this long after at the latest.
    trust_seen_at: Option<Instant>,
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
        let policy = Policy::new(cfg.mode, cfg.agent.as_ref().map(AgentSpec::mode));
        Driver {
            cfg,
            rec,
            commands: Some(commands),
            policy,
            workspace,
            env: None,
            tracker: None,
            watcher: None,
            agent_runs: None,
            agent: None,
            agent_exit_recorded: false,
            run: None,
            metric_stream: None,
            seed_check_run: false,
            interruption: None,
            pending_messages: Vec::new(),
            resume_prompt: None,
            trust_keys_typed: 0,
            trust_answered_at: None,
            trust_screen_moved_from: None,
            trust_seen_at: None,
            files_changed: 0,
            agent_clock: AgentClock::starting(Instant::now()),
            transcript: None,
            codex_sessions: None,
            agent_session: None,
            pending_prompt: None,
            run_id,
            started_at,
        }
    }

    /// Runs the session to its end and returns the exit status of `run`.
    pub async fn run(mut self) -> i32 {
        let outcome = self.session().await;
        self.stop_children().await;
        if let Some(collector) = self.agent_runs.take() {
            collector.remove();
        }
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
            let phase = self.policy.at().phase().max(1);
            if !self.policy.graded(phase) {
                self.rec.emit(Event::PhaseEnded {
                    phase,
                    outcome,
                    detail: (outcome != PhaseOutcome::Interrupted).then_some(detail),
                });
            }
            self.policy.stop();
        }
        let aborted = error.is_some();
        let mut exit_code = self.finish(error, interrupted);
        if self.cfg.linger && !aborted {
            exit_code = self.linger(exit_code).await;
        }
        self.rec.flush();
        exit_code
    }

    /// Carries out the policy's stages until the session ends.
    async fn session(&mut self) -> Result<(), Stop> {
        if self.cfg.resume {
            self.resume();
        } else {
            self.emit_task_info();
            self.rec.emit(Event::Mode {
                mode: self.policy.mode(),
            });
            self.rec.emit(Event::Stage(At::Setup));
        }
        let interactive = self.interactive();
        let mut prompt_text = self
            .resume_prompt
            .take()
            .unwrap_or_else(|| prompt::migration_prompt(&self.cfg.task, interactive));
        loop {
            self.publish();
            let at = self.policy.at();
            let mut passed = None;
            match at {
                At::Setup => self.setup().await?,
                At::Gate(_) => self.wait_human(at).await?,
                At::Migrate(phase) => self.migrate(phase, &prompt_text).await?,
                At::Verify(phase, _) | At::Grade(phase, _) => {
                    if at.again() {
                        self.rec.emit(Event::Note {
                            text: format!("re-running verify on the workspace (phase {phase})"),
                        });
                    }
                    passed = Some(self.verify_and_grade(phase).await?.passed());
                }
                At::Inject => prompt_text = self.phase_two_prompt(interactive),
                At::Ended(_) => return Ok(()),
            }
            // A verify moved on to its grade when its run ended: the grade is what ended.
            let finished = if passed.is_some() {
                self.policy.at()
            } else {
                at
            };
            self.policy.done(finished, passed);
        }
    }

    /// The run of the verify stage ended: the policy moves on to the grade.
    fn verify_run_ended(&mut self) {
        let at = self.policy.at();
        if let At::Verify(..) = at {
            self.policy.done(at, None);
            self.publish();
        }
    }

    /// Phase 1's parity report, when the task tells it to the agent (`[parity] tell_agent`).
    fn told_parity(&self) -> Option<crate::parity::ParityReport> {
        let tell = self
            .task()
            .spec
            .parity
            .as_ref()
            .is_some_and(|p| p.tell_agent);
        tell.then(|| lock(self.rec.state()).phase(1)?.parity.clone())
            .flatten()
    }

    /// After a failed phase 1: the phase-two prompt, from phase 1's verdict and the details
    /// the policy holds (the human's, or as the task writes them).
    fn phase_two_prompt(&self, interactive: bool) -> String {
        let details = self
            .policy
            .details()
            .unwrap_or(&self.cfg.task.spec.phase2.details)
            .to_string();
        let verdict = lock(self.rec.state())
            .phase(1)
            .and_then(|p| p.verdict.clone());
        let parity = self.told_parity();
        match verdict {
            Some(verdict) => {
                prompt::phase2_prompt(&verdict, parity.as_ref(), &details, interactive)
            }
            None => details,
        }
    }

    /// Waits for the human where the policy waits (the state says what for, from where the
    /// session is) until the policy moves on.
    async fn wait_human(&mut self, at: At) -> Result<(), Stop> {
        while self.policy.at() == at {
            match self.next_input().await {
                Input::Command(command) => self.command(command)?,
                Input::Tick => self.scan_workspace(),
                Input::AgentFinished | Input::RunFinished | Input::RunTimedOut => {}
            }
        }
        Ok(())
    }

    /// Records the end of the session (or of a re-run after it) and writes `result.json`;
    /// returns the exit status.
    fn finish(&mut self, error: Option<String>, interrupted: Option<Interruption>) -> i32 {
        self.publish();
        let passed_in_phase = lock(self.rec.state()).passed_in_phase();
        let exit_code = match (&error, passed_in_phase) {
            (Some(_), _) => EXIT_INFRA,
            (None, Some(_)) => EXIT_PASS,
            (None, None) => EXIT_FAIL,
        };
        self.rec.emit(Event::Finished {
            passed: exit_code == EXIT_PASS,
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
    async fn linger(&mut self, mut exit_code: i32) -> i32 {
        loop {
            let at = self.policy.at();
            if let At::Verify(phase, Pass::Again(Return::Ended)) = at {
                self.publish();
                self.rec.emit(Event::Note {
                    text: format!("re-running verify on the workspace (phase {phase})"),
                });
                match self.verify_and_grade(phase).await {
                    Ok(verdict) => {
                        self.policy.done(self.policy.at(), Some(verdict.passed()));
                        exit_code = self.finish(None, None);
                    }
                    Err(Stop::Aborted) => break,
                    Err(Stop::Infra(message) | Stop::AgentFailed(message)) => {
                        self.policy.stop();
                        exit_code = self.finish(Some(message), None);
                    }
                }
            } else {
                match self.next_input().await {
                    Input::Command(command) => {
                        if self.command(command).is_err() {
                            break;
                        }
                    }
                    Input::Tick => self.scan_workspace(),
                    Input::AgentFinished | Input::RunFinished | Input::RunTimedOut => {}
                }
            }
            if self.commands.is_none() {
                break;
            }
        }
        self.stop_children().await;
        exit_code
    }

    /// The one handler of a command, wherever the session is: the policy decides, this
    /// carries it out. An abort (or, after the end, quitting) is `Err(Stop::Aborted)`.
    fn command(&mut self, command: Command) -> Result<(), Stop> {
        let running = self.agent.as_ref().is_some_and(Supervised::running);
        for effect in self.policy.on_command(command, running) {
            match effect {
                Effect::SetMode(mode) => self.rec.emit(Event::Mode { mode }),
                Effect::Pause(paused) => {
                    if let Some(agent) = self.agent.as_mut() {
                        if paused {
                            agent.process().pause();
                        } else {
                            agent.process().resume();
                        }
                    }
                    self.rec.emit(Event::Paused { paused });
                }
                Effect::DetailsKept => self.rec.emit(Event::Note {
                    text: "phase-two details kept; they are sent when phase 1 fails".to_string(),
                }),
                Effect::TypeMessage(text) => self.type_message(text),
                Effect::QueueMessage(text) => self.queue_message(text),
                Effect::AgentInput(bytes) => {
                    if let Some(agent) = self.agent.as_mut()
                        && let Err(e) = agent.process().write(&bytes)
                    {
                        tracing::warn!("cannot type into the Agent pane: {e}");
                    }
                }
                Effect::ResizeAgent(cols, rows) => {
                    self.cfg.agent_size = (cols, rows);
                    self.resize(TerminalPane::Agent, cols, rows);
                }
                Effect::ResizeRun(cols, rows) => {
                    self.cfg.run_size = (cols, rows);
                    self.resize(TerminalPane::Run, cols, rows);
                }
                Effect::OpenShell => self.open_shell(),
                Effect::Abort(kind) => {
                    self.interruption = Some(kind);
                    return Err(Stop::Aborted);
                }
                Effect::Quit => return Err(Stop::Aborted),
                Effect::Decline { command, reason } => {
                    self.rec.emit(Event::Declined { command, reason })
                }
            }
        }
        Ok(())
    }

    /// Resizes a pane's terminal (and the child in it, if one runs).
    fn resize(&mut self, pane: TerminalPane, cols: u16, rows: u16) {
        let child = match pane {
            TerminalPane::Agent => self.agent.as_mut(),
            TerminalPane::Run => self.run.as_mut(),
        };
        if let Some(child) = child
            && let Err(e) = child.process().resize(cols, rows)
        {
            tracing::warn!("cannot resize the {pane:?} terminal: {e}");
        }
        self.rec.emit(Event::Resized { pane, cols, rows });
    }

    /// Records where the policy is and what each keyed command would do now, each when it
    /// changed since the state last heard of it.
    fn publish(&mut self) {
        let at = self.policy.at();
        let running = self.agent.as_ref().is_some_and(Supervised::running);
        let answers = self.policy.answers(running);
        let (moved, answered) = {
            let state = lock(self.rec.state());
            (state.at != at, state.answers != answers)
        };
        if moved {
            self.rec.emit(Event::Stage(at));
        }
        if answered {
            self.rec.emit(Event::Answers { answers });
        }
    }

    /// Waits for the next input, recording terminal output (and the metric points in it) on
    /// the way.
    async fn next_input(&mut self) -> Input {
        self.publish();
        let tick_at = Instant::now() + TICK;
        loop {
            let woken = {
                let agent = self.agent.as_mut();
                let run = self.run.as_mut();
                let commands = self.commands.as_mut();
                tokio::select! {
                    event = child_next(agent) => Woken::Agent(event),
                    event = child_next(run) => Woken::Run(event),
                    command = recv_opt(commands) => Woken::Command(command),
                    _ = tokio::time::sleep_until(tick_at) => Woken::Tick,
                }
            };
            match woken {
                Woken::Agent(ChildEvent::Output { text, closed }) => {
                    if !text.is_empty() {
                        let now = Instant::now();
                        self.agent_clock.output_at = Some(now);
                        self.agent_clock.active_at = now;
                        self.agent_transcript(&text, closed);
                        self.rec.emit(Event::AgentOutput { text });
                    } else if closed {
                        self.agent_transcript("", true);
                    }
                }
                // The agent has no timeout.
                Woken::Agent(ChildEvent::TimedOut) => {}
                Woken::Agent(ChildEvent::Finished(info)) => {
                    self.record_agent_exit(info.code);
                    return Input::AgentFinished;
                }
                Woken::Run(ChildEvent::Output { text, closed }) => {
                    if !text.is_empty() {
                        self.run_output(text);
                    }
                    if closed {
                        self.finish_metrics();
                    }
                }
                Woken::Run(ChildEvent::TimedOut) => return Input::RunTimedOut,
                Woken::Run(ChildEvent::Finished(_)) => return Input::RunFinished,
                Woken::Command(Some(command)) => return Input::Command(command),
                Woken::Command(None) => self.commands = None,
                Woken::Tick => {
                    let keep: Vec<i32> = [self.agent.as_mut(), self.run.as_mut()]
                        .into_iter()
                        .flatten()
                        .filter_map(|child| child.process().pgid())
                        .collect();
                    crate::reaper::reap_orphans(&keep);
                    self.type_pending_prompt();
                    self.rec.tick();
                    return Input::Tick;
                }
            }
        }
    }

    /// Ends whatever still runs.
    async fn stop_children(&mut self) {
        self.end_agent().await;
        if let Some(mut run) = self.run.take()
            && run.running()
        {
            run.terminate().await;
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

    /// Whether the agent keeps running between turns and gets its prompts typed.
    fn interactive(&self) -> bool {
        self.agent_mode() == Some(AgentMode::Interactive)
    }

    /// The session's agent's mode (None: `grade`, no agent).
    fn agent_mode(&self) -> Option<AgentMode> {
        self.cfg.agent.as_ref().map(AgentSpec::mode)
    }
}

/// The run folder's name for a new run: `<UTC date-time>-<task>-<agent>`, unique in `runs`.
pub fn new_run_dir(runs: &std::path::Path, task: &str, agent_slug: &str) -> PathBuf {
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

//! The event model, the leaf every layer above depends on: the events of a session
//! (everything that happens, in the order it happens), its stages and modes, the human's
//! commands, file contents and metric points. The journal records events, the reducer turns
//! them into state, the headless printer describes them; nothing here depends on any of those.

use serde::{Deserialize, Serialize};

use crate::agent::transcript::TranscriptItem;
use crate::grade::Verdict;
use crate::metrics::Point;
use crate::parity::ParityReport;
use crate::task::CriterionSpec;

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

/// A command the human gives with a key, as the policy answers it ([`Answer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyedCommand {
    /// `n`: advance, or end an interactive agent's turn.
    Next,
    /// `s`: switch between step and auto mode.
    ToggleMode,
    /// `p`: pause or resume the agent.
    TogglePause,
    /// `i`: edit and send (or keep) the phase-two details.
    Inject,
    /// `m`: message the agent.
    Message,
    /// `r`: re-run verify and grade.
    Rerun,
    /// `x`: abort (or quit, once the session ended).
    Abort,
    /// `o`: a shell in the workspace.
    OpenShell,
}

impl KeyedCommand {
    /// Every keyed command, in the key table's order.
    pub const ALL: [KeyedCommand; 8] = [
        KeyedCommand::Next,
        KeyedCommand::ToggleMode,
        KeyedCommand::TogglePause,
        KeyedCommand::Inject,
        KeyedCommand::Message,
        KeyedCommand::Rerun,
        KeyedCommand::Abort,
        KeyedCommand::OpenShell,
    ];

    /// The command the key gives (the texts of `i` and `m` empty: the answer does not
    /// depend on them).
    pub fn command(self) -> Command {
        match self {
            KeyedCommand::Next => Command::Next,
            KeyedCommand::ToggleMode => Command::ToggleMode,
            KeyedCommand::TogglePause => Command::TogglePause,
            KeyedCommand::Inject => Command::Inject(String::new()),
            KeyedCommand::Message => Command::Message(String::new()),
            KeyedCommand::Rerun => Command::Rerun,
            KeyedCommand::Abort => Command::Abort,
            KeyedCommand::OpenShell => Command::OpenShell,
        }
    }
}

/// What one keyed command would do now: accepted, or declined with the reason the policy
/// gives when it is pressed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The command.
    pub command: KeyedCommand,
    /// Why not now; None when it is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declined: Option<String>,
}

/// Where a session is within a phase (SPEC §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Copying the source, building the environment.
    Setup,
    /// The agent works in the workspace.
    Migrate,
    /// The experiment runs on a clean copy.
    Verify,
    /// The grader decides.
    Grade,
    /// The phase-two details are being prepared for the agent.
    Inject,
    /// The session is over.
    Done,
}

impl Stage {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Setup => "setup",
            Stage::Migrate => "migrate",
            Stage::Verify => "verify",
            Stage::Grade => "grade",
            Stage::Inject => "inject",
            Stage::Done => "done",
        }
    }
}

/// Step mode waits for the human before each stage; auto mode runs through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Wait for `n` before each stage.
    Step,
    /// Run through.
    Auto,
}

impl Mode {
    /// `STEP` or `AUTO`, as the status line shows it.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Step => "STEP",
            Mode::Auto => "AUTO",
        }
    }
}

/// The two terminals of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalPane {
    /// The agent's terminal.
    Agent,
    /// The verify run's terminal.
    Run,
}

/// How a phase ended (`outcome` in `result.json`): graded, or why it was not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseOutcome {
    /// The grader gave a verdict on the port.
    Graded,
    /// The agent exited non-zero having changed nothing (or never received its prompt).
    AgentFailure,
    /// The runner lost its connection, the environment could not be built.
    InfrastructureFailure,
    /// The session was interrupted (the user's abort, a hangup, SIGTERM).
    Interrupted,
}

impl PhaseOutcome {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseOutcome::Graded => "graded",
            PhaseOutcome::AgentFailure => "agent_failure",
            PhaseOutcome::InfrastructureFailure => "infrastructure_failure",
            PhaseOutcome::Interrupted => "interrupted",
        }
    }
}

/// What interrupted a session (`interrupted` in `result.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interruption {
    /// The user aborted it (`x` then `y`, or Ctrl-C).
    UserAbort,
    /// Its terminal hung up (SIGHUP: the terminal window or tmux session closed).
    Hangup,
    /// It was terminated (SIGTERM).
    Terminated,
}

impl Interruption {
    /// The sentence `result.json`'s `error` and the progress lines use.
    pub fn describe(self) -> &'static str {
        match self {
            Interruption::UserAbort => "aborted by the user",
            Interruption::Hangup => "interrupted: the terminal hung up (SIGHUP)",
            Interruption::Terminated => "interrupted: terminated by a signal (SIGTERM)",
        }
    }

    /// The few words the runs list ends a run's verdicts with.
    pub fn short(self) -> &'static str {
        match self {
            Interruption::UserAbort => "aborted by the user",
            Interruption::Hangup => "interrupted: hung up",
            Interruption::Terminated => "interrupted: SIGTERM",
        }
    }
}

/// A metric's reference series, from the task's recorded reference log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceSeries {
    /// Metric name.
    pub metric: String,
    /// Its points.
    pub points: Vec<Point>,
}

/// A file of the source or the workspace, recorded so replay can rebuild diffs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileContent {
    /// Path relative to the repository root, with `/` separators.
    pub path: String,
    /// Text (lossy UTF-8); None for binary or oversized files.
    pub text: Option<String>,
    /// Size in bytes.
    pub size: u64,
}

/// One point of an [`Event::Metrics`] batch, written as the JSON array `[index, step,
/// value]`: the metric's index in the session's metric list (the `metrics` of
/// [`Event::Task`]), the step the log gave (or null) and the value. A log with a metric on
/// every line records about 20 bytes a point this way.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MetricPoint(pub u16, pub Option<f64>, pub f64);

/// The task and agent of a session, as its first event records them (and as the state
/// keeps them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionTask {
    /// Task id.
    pub id: String,
    /// The task folder, so a resumed session finds the task again.
    #[serde(default)]
    pub dir: String,
    /// Task title.
    pub title: String,
    /// The agent spec.
    pub agent: String,
    /// The experiment command.
    pub command: String,
    /// The task's criteria.
    pub criteria: Vec<CriterionSpec>,
    /// Every metric name.
    pub metrics: Vec<String>,
    /// The phase-two details as written in the task.
    pub phase2_details: String,
    /// Reference series from the task's reference log.
    pub reference: Vec<ReferenceSeries>,
}

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The task and agent of the session, recorded first so replay needs nothing else
    /// (boxed: it is large, and a journal holds millions of small events).
    Task(Box<SessionTask>),
    /// The session moved to a stage of a phase (phase 0 is setup).
    Stage {
        /// Phase number: 0 for setup, 1 or 2.
        phase: u8,
        /// The stage.
        stage: Stage,
    },
    /// The step/auto mode changed.
    Mode {
        /// The new mode.
        mode: Mode,
    },
    /// The session waits for the human (`what`), or stopped waiting (None).
    Waiting {
        /// What `n` does next, as the status line shows it.
        what: Option<String>,
    },
    /// What each keyed command would do now, published by the policy whenever that changes
    /// (the key hint offers exactly the accepted ones).
    Answers {
        /// One answer per keyed command.
        answers: Vec<Answer>,
    },
    /// A line of information from xstack itself (environment build, warnings).
    Note {
        /// The text.
        text: String,
    },
    /// A command the session cannot carry out where it is, and why (the answer the human
    /// gets instead of silence).
    Declined {
        /// The command, as the human knows it (its key: `r`, `n`, …).
        command: String,
        /// Why not now, and what works instead.
        reason: String,
    },
    /// The source repository's files (the diff baseline).
    Baseline {
        /// Every file.
        files: Vec<FileContent>,
    },
    /// A workspace file was written, created or deleted (content None).
    FileChanged {
        /// The file (content None when deleted).
        file: FileContent,
        /// Whether the file was deleted.
        deleted: bool,
    },
    /// The prompt or message sent to the agent.
    Prompt {
        /// Phase.
        phase: u8,
        /// The full text.
        text: String,
    },
    /// The agent process started.
    AgentStarted {
        /// Phase.
        phase: u8,
        /// The command line.
        command: String,
        /// Terminal width.
        cols: u16,
        /// Terminal height.
        rows: u16,
    },
    /// Output of the agent's terminal.
    AgentOutput {
        /// Decoded text.
        text: String,
    },
    /// A terminal pane was resized (its PTY too, when a child runs).
    Resized {
        /// Which terminal.
        pane: TerminalPane,
        /// Width.
        cols: u16,
        /// Height.
        rows: u16,
    },
    /// Something the agent reported in its structured output (message, tool call, edit,
    /// usage, final word).
    Transcript {
        /// Phase.
        phase: u8,
        /// What it reported.
        item: TranscriptItem,
    },
    /// A Python process the agent started during its turn ended, or was ended by xstack at
    /// the end of the turn (docs/CHECKS.md).
    AgentRun(Box<crate::checks::AgentRun>),
    /// The agent process ended.
    AgentExited {
        /// Exit code; None when ended by a signal.
        code: Option<i32>,
    },
    /// The agent was paused or resumed.
    Paused {
        /// Whether it is paused now.
        paused: bool,
    },
    /// The human sent a message to the agent.
    Message {
        /// The text.
        text: String,
        /// Whether it waits for the agent's next prompt rather than being typed into its
        /// terminal now (journals of xstack 0.1 lack it: false).
        #[serde(default)]
        queued: bool,
    },
    /// The verify run started.
    RunStarted {
        /// Phase.
        phase: u8,
        /// The command line.
        command: String,
        /// Terminal width.
        cols: u16,
        /// Terminal height.
        rows: u16,
        /// The seed check's second run (`[integrity] seed_check`): its metric points are not
        /// the phase's.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        seed_check: bool,
    },
    /// The verify run's job on a runner with a queue (Slurm): waiting in it, or started.
    RunnerJob {
        /// Phase.
        phase: u8,
        /// The runner's spec.
        runner: String,
        /// The scheduler's job id.
        job_id: String,
        /// The job's state as the scheduler names it: `PENDING` while it waits, `RUNNING`
        /// once it started.
        state: String,
        /// Why it waits (Slurm's reason: `Resources`, `Priority`, `BeginTime`), when it does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Seconds since the job was submitted.
        waited_s: f64,
    },
    /// Output of the verify run's terminal.
    RunOutput {
        /// Decoded text.
        text: String,
    },
    /// The verify run ended.
    RunExited {
        /// Exit code; None when killed.
        code: Option<i32>,
        /// Whether it passed its timeout.
        timed_out: bool,
        /// Seconds it ran.
        duration_s: f64,
    },
    /// One metric observation from the verify run (how journals of xstack 0.1 record
    /// points; sessions now record [`Event::Metrics`]).
    Metric {
        /// Phase.
        phase: u8,
        /// Metric name.
        metric: String,
        /// The point.
        point: Point,
    },
    /// The metric points read from one piece of the verify run's output, in order.
    Metrics {
        /// Phase.
        phase: u8,
        /// The points.
        points: Vec<MetricPoint>,
    },
    /// The metric points read from one piece of the seed check's run (the second verify run
    /// of `[integrity] seed_check`): that run's series, apart from the phase's.
    SeedCheckMetrics {
        /// Phase.
        phase: u8,
        /// The points.
        points: Vec<MetricPoint>,
    },
    /// The grader's verdict on a phase.
    Graded {
        /// Phase.
        phase: u8,
        /// The verdict.
        verdict: Verdict,
        /// Exit code of the run.
        exit_code: Option<i32>,
        /// Seconds the verify run took.
        duration_s: f64,
    },
    /// What the numeric parity probe found after a phase's grade (SPEC §3a): it explains the
    /// verdict and never changes it.
    Parity {
        /// Phase.
        phase: u8,
        /// The comparison, or why the probe could not run.
        report: ParityReport,
    },
    /// A phase ended without a verdict: what happened instead.
    PhaseEnded {
        /// Phase.
        phase: u8,
        /// Why it was not graded.
        outcome: PhaseOutcome,
        /// The agent's last error line, or the runner's message.
        detail: Option<String>,
    },
    /// The session ended.
    Finished {
        /// Whether the task passed.
        passed: bool,
        /// The phase that passed.
        passed_in_phase: Option<u8>,
        /// The process exit status `run` gives.
        exit_code: i32,
        /// Why it ended early, if it did (abort, infrastructure error).
        error: Option<String>,
        /// What interrupted it, when something did.
        #[serde(default)]
        interrupted: Option<Interruption>,
    },
}

impl Event {
    /// A one-line description for progress output and headless replay; None for events
    /// too frequent or too raw to print (terminal output, metric batches: their points need
    /// the session's metric names, which `session::progress` keeps).
    pub fn describe(&self) -> Option<String> {
        match self {
            Event::Task(task) => Some(format!("task {} with agent {}", task.id, task.agent)),
            Event::Stage { phase: 0, stage } => Some(stage.as_str().to_string()),
            Event::Stage { phase, stage } => Some(format!("phase {phase}: {}", stage.as_str())),
            Event::Mode { mode } => Some(format!("mode {}", mode.label())),
            Event::Waiting { what: Some(what) } => Some(format!("waiting: {what}")),
            Event::Note { text } => Some(text.clone()),
            Event::Declined { command, reason } => Some(format!("{command}: not now: {reason}")),
            Event::Prompt { phase, text } => Some(format!(
                "phase {phase}: prompt sent ({} characters)",
                text.chars().count()
            )),
            Event::AgentStarted { command, .. } => Some(format!("agent started: {command}")),
            Event::Transcript { item, .. } => Some(item.describe()),
            Event::AgentRun(run) => Some(crate::checks::describe(run)),
            Event::AgentExited { code } => Some(match code {
                Some(c) => format!("agent exited with status {c}"),
                None => "agent ended by a signal".to_string(),
            }),
            Event::Paused { paused } => Some(
                if *paused {
                    "agent paused"
                } else {
                    "agent resumed"
                }
                .to_string(),
            ),
            Event::Message {
                text,
                queued: false,
            } => Some(format!("message typed into the agent's terminal: {text}")),
            Event::Message { text, queued: true } => Some(format!(
                "message queued for the agent's next prompt: {text}"
            )),
            Event::RunStarted {
                command,
                seed_check: true,
                ..
            } => Some(format!("seed check run: {command}")),
            Event::RunStarted { command, .. } => Some(format!("run: {command}")),
            Event::RunnerJob {
                runner,
                job_id,
                state,
                reason,
                waited_s,
                ..
            } => {
                let scheduler = runner.split("://").next().unwrap_or(runner);
                Some(queue_text(
                    scheduler,
                    job_id,
                    state,
                    reason.as_deref(),
                    *waited_s,
                ))
            }
            Event::RunExited {
                code,
                timed_out,
                duration_s,
            } => Some(if *timed_out {
                format!("run timed out after {duration_s:.1} s")
            } else {
                match code {
                    Some(c) => format!("run exited with status {c} after {duration_s:.1} s"),
                    None => format!("run killed after {duration_s:.1} s"),
                }
            }),
            Event::Metric { metric, point, .. } => Some(describe_point(metric, point)),
            Event::Graded { phase, verdict, .. } => {
                let mut text = format!("phase {phase} verdict: {}", verdict.label());
                for c in &verdict.criteria {
                    let value = c
                        .value
                        .map_or_else(|| "missing".to_string(), |v| v.to_string());
                    text.push_str(&format!(
                        "\n  {} = {value} (published {} ± {}, {}) {}",
                        c.metric,
                        c.published,
                        c.tolerance,
                        c.direction.as_str(),
                        if c.passed { "ok" } else { "FAIL" }
                    ));
                }
                for f in &verdict.findings {
                    text.push_str(&format!("\n  finding: {f}"));
                }
                Some(text)
            }
            Event::Parity { phase, report } => Some(format!("phase {phase} {}", report.summary())),
            Event::PhaseEnded {
                phase,
                outcome,
                detail,
            } => Some(format!(
                "phase {phase}: not graded ({}){}",
                outcome.as_str(),
                detail
                    .as_ref()
                    .map_or_else(String::new, |d| format!(": {d}"))
            )),
            Event::Finished {
                passed,
                passed_in_phase,
                error,
                ..
            } => Some(match (error, passed, passed_in_phase) {
                (Some(e), _, _) => format!("ended: {e}"),
                (None, true, Some(p)) => format!("PASSED in phase {p}"),
                _ => "FAILED".to_string(),
            }),
            Event::Waiting { what: None }
            | Event::Baseline { .. }
            | Event::FileChanged { .. }
            | Event::Answers { .. }
            | Event::AgentOutput { .. }
            | Event::Resized { .. }
            | Event::RunOutput { .. }
            | Event::Metrics { .. }
            | Event::SeedCheckMetrics { .. } => None,
        }
    }
}

/// One metric point as progress text: `metric acc=0.97 (step 3)`.
pub fn describe_point(metric: &str, point: &Point) -> String {
    match point.step {
        Some(step) => format!("metric {metric}={} (step {step})", point.value),
        None => format!("metric {metric}={}", point.value),
    }
}

/// What a job's state in its scheduler's queue is called on screen and in progress lines:
/// `queued on slurm: job 12, PENDING (Resources)`, or once it runs `slurm job 12 started
/// after 8.1 s in the queue`.
pub fn queue_text(
    scheduler: &str,
    job_id: &str,
    state: &str,
    reason: Option<&str>,
    waited_s: f64,
) -> String {
    match (state, reason) {
        ("RUNNING", _) => {
            format!("{scheduler} job {job_id} started after {waited_s:.1} s in the queue")
        }
        (state, Some(reason)) => format!("queued on {scheduler}: job {job_id}, {state} ({reason})"),
        (state, None) => format!("queued on {scheduler}: job {job_id}, {state}"),
    }
}

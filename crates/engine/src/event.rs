//! The event model, the leaf every layer above depends on: the events of a session
//! (everything that happens, in the order it happens), its stages and modes, the human's
//! commands, file contents and metric points. The journal records events, the reducer turns
//! them into state, the headless printer describes them; nothing here depends on any of those.

use serde::{Deserialize, Serialize};

use crate::agent::transcript::TranscriptItem;
use crate::grade::Verdict;
use crate::metrics::Point;
use crate::parity::{ParityReport, ParitySide};
use crate::runner::JobState;
use crate::task::{CriterionSpec, Migration, UpstreamSpec};

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

    /// The key that gives it, the one place each is written: the key table binds it, a
    /// declined command is named by it (`r: not now: …`), and the journal records it so.
    pub const fn key(self) -> char {
        match self {
            KeyedCommand::Next => 'n',
            KeyedCommand::ToggleMode => 's',
            KeyedCommand::TogglePause => 'p',
            KeyedCommand::Inject => 'i',
            KeyedCommand::Message => 'm',
            KeyedCommand::Rerun => 'r',
            KeyedCommand::Abort => 'x',
            KeyedCommand::OpenShell => 'o',
        }
    }

    /// The command given by `key`, if any.
    pub fn of_key(key: char) -> Option<KeyedCommand> {
        KeyedCommand::ALL.into_iter().find(|c| c.key() == key)
    }

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

/// A keyed command is named by its key.
impl std::fmt::Display for KeyedCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.key())
    }
}

/// `Event::Declined`'s command as the journal writes it: its key (`"r"`).
mod by_key {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    use super::KeyedCommand;

    pub(super) fn serialize<S: Serializer>(
        command: &KeyedCommand,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_str(command)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<KeyedCommand, D::Error> {
        let key = String::deserialize(d)?;
        let mut chars = key.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => KeyedCommand::of_key(c),
            _ => None,
        }
        .ok_or_else(|| D::Error::custom(format!("`{key}` is no command's key")))
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

/// The steps of a session (SPEC §3), as the journal names them and the phase bar shows them.
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

/// A stage that, in step mode, waits for the human's `n` before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gated {
    /// The agent's turn in this phase.
    Migrate(u8),
    /// The verify run and grade of this phase.
    Verify(u8),
    /// The review of the phase-two details after a failed phase 1 (`n` sends them as the
    /// task writes them, `i` as the human edits them).
    Details,
}

impl Gated {
    /// The stage this wait opens onto.
    pub fn opens(self) -> At {
        match self {
            Gated::Migrate(p) => At::Migrate(p),
            Gated::Verify(p) => At::Verify(p, Pass::First),
            Gated::Details => At::Inject,
        }
    }
}

/// Where a verify the human asked for again (`r`) returns when its phase still fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Return {
    /// The review of the phase-two details.
    Details,
    /// The end of the session (the TUI lingers there).
    Ended,
}

/// Which verify of its phase a verify (and its grade) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// The phase's own verify, after the agent's turn.
    First,
    /// Again on the human's `r`, returning where it says.
    Again(Return),
}

/// Where the session is: the one model of it. The policy moves it (its state machine's
/// states), the driver records every move as a `stage` event, and the state, the phase bar,
/// the status line and what waits for the human are read from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "StageRecord", try_from = "StageRecord")]
pub enum At {
    /// Copying the source, building the environment, preparing the runners.
    Setup,
    /// Step mode: waiting for the human before the stage.
    Gate(Gated),
    /// The agent works on this phase.
    Migrate(u8),
    /// The verify run of this phase (its seed check's run is part of its grade).
    Verify(u8, Pass),
    /// The grade of this phase: its run ended.
    Grade(u8, Pass),
    /// Phase 1 failed and its details are chosen: the phase-two prompt is being built.
    Inject,
    /// The session ended after this phase; the TUI still serves re-runs and a shell.
    Ended(u8),
}

impl At {
    /// The phase this state belongs to (0 during setup).
    pub fn phase(self) -> u8 {
        match self {
            At::Setup => 0,
            At::Gate(Gated::Migrate(p) | Gated::Verify(p))
            | At::Migrate(p)
            | At::Verify(p, _)
            | At::Grade(p, _)
            | At::Ended(p) => p,
            At::Gate(Gated::Details) | At::Inject => 1,
        }
    }

    /// The step of the session's course this state shows as: a wait before a stage shows
    /// the step it follows (the setup before phase 1's turn, the turn before its verify), the
    /// review of the details shows the inject step.
    pub fn step(self) -> (u8, Stage) {
        match self {
            At::Setup | At::Gate(Gated::Migrate(1)) => (0, Stage::Setup),
            At::Gate(Gated::Migrate(_) | Gated::Details) | At::Inject => (1, Stage::Inject),
            At::Gate(Gated::Verify(p)) | At::Migrate(p) => (p, Stage::Migrate),
            At::Verify(p, _) => (p, Stage::Verify),
            At::Grade(p, _) => (p, Stage::Grade),
            At::Ended(p) => (p, Stage::Done),
        }
    }

    /// The session's course, one state for each step the phase bar shows, in order.
    pub const COURSE: [At; 9] = [
        At::Setup,
        At::Migrate(1),
        At::Verify(1, Pass::First),
        At::Grade(1, Pass::First),
        At::Inject,
        At::Migrate(2),
        At::Verify(2, Pass::First),
        At::Grade(2, Pass::First),
        At::Ended(2),
    ];

    /// What a wait here asks of the human (None where nothing waits for the human).
    pub fn waiting_for(self) -> Option<String> {
        match self {
            At::Gate(Gated::Migrate(p)) => {
                Some(format!("n to start phase {p}: the agent migrates"))
            }
            At::Gate(Gated::Verify(p)) => Some(format!("n to verify phase {p}")),
            At::Gate(Gated::Details) => {
                Some("i to edit the details, n to send them as written".to_string())
            }
            _ => None,
        }
    }

    /// Whether this is a step of the course the session works through, not a wait for the
    /// human nor the end (the timeline marks steps; the end has its own mark).
    pub fn is_step(self) -> bool {
        !matches!(self, At::Gate(_) | At::Ended(_))
    }

    /// A verify or grade the human asked for again (`r`).
    pub fn again(self) -> bool {
        matches!(
            self,
            At::Verify(_, Pass::Again(_)) | At::Grade(_, Pass::Again(_))
        )
    }
}

/// [`At`] as a `stage` event records it: the phase, the step, and, where they apply,
/// `waiting` (a wait for the human before that stage) and `again` (a verify asked for
/// again, and where it returns). Journals of earlier versions have only the first two.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StageRecord {
    phase: u8,
    stage: Stage,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    waiting: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    again: Option<Return>,
}

impl From<At> for StageRecord {
    fn from(at: At) -> StageRecord {
        let (phase, stage, waiting) = match at {
            At::Setup => (0, Stage::Setup, false),
            At::Gate(Gated::Migrate(p)) => (p, Stage::Migrate, true),
            At::Gate(Gated::Verify(p)) => (p, Stage::Verify, true),
            At::Gate(Gated::Details) => (1, Stage::Inject, true),
            At::Migrate(p) => (p, Stage::Migrate, false),
            At::Verify(p, _) => (p, Stage::Verify, false),
            At::Grade(p, _) => (p, Stage::Grade, false),
            At::Inject => (1, Stage::Inject, false),
            At::Ended(p) => (p, Stage::Done, false),
        };
        let again = match at {
            At::Verify(_, Pass::Again(to)) | At::Grade(_, Pass::Again(to)) => Some(to),
            _ => None,
        };
        StageRecord {
            phase,
            stage,
            waiting,
            again,
        }
    }
}

impl TryFrom<StageRecord> for At {
    type Error = String;

    fn try_from(record: StageRecord) -> Result<At, String> {
        let StageRecord {
            phase,
            stage,
            waiting,
            again,
        } = record;
        let pass = again.map_or(Pass::First, Pass::Again);
        Ok(match (stage, waiting) {
            (Stage::Setup, false) => At::Setup,
            (Stage::Migrate, true) => At::Gate(Gated::Migrate(phase)),
            (Stage::Migrate, false) => At::Migrate(phase),
            (Stage::Verify, true) => At::Gate(Gated::Verify(phase)),
            (Stage::Verify, false) => At::Verify(phase, pass),
            (Stage::Grade, false) => At::Grade(phase, pass),
            (Stage::Inject, true) => At::Gate(Gated::Details),
            (Stage::Inject, false) => At::Inject,
            (Stage::Done, false) => At::Ended(phase.max(1)),
            (stage, true) => {
                return Err(format!(
                    "a stage event waits before {}, where nothing waits",
                    stage.as_str()
                ));
            }
        })
    }
}

/// What the session waits on, as the status line says it and the bell announces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waiting {
    /// The human, at a wait of step mode ([`At::waiting_for`]).
    Human(At),
    /// The agent, which asks the human something on its screen.
    AgentAsks(String),
    /// A wait as a journal of an earlier version said it.
    Said(String),
}

impl Waiting {
    /// How an earlier journal said the agent asks something.
    const EARLIER_ASKS: (&'static str, &'static str) =
        ("the agent asks ", " (a attaches to answer)");

    /// What the status line says after `waiting: `.
    pub fn text(&self) -> String {
        match self {
            Waiting::Human(at) => at.waiting_for().unwrap_or_default(),
            Waiting::AgentAsks(question) => format!(
                "{}{question}{}",
                Waiting::EARLIER_ASKS.0,
                Waiting::EARLIER_ASKS.1
            ),
            Waiting::Said(text) => text.clone(),
        }
    }

    /// An earlier journal's `waiting` text read back: the agent's question, or the wait as
    /// it was said.
    pub fn of_earlier_journal(text: &str) -> Waiting {
        let (prefix, suffix) = Waiting::EARLIER_ASKS;
        match text
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
        {
            Some(question) => Waiting::AgentAsks(question.to_string()),
            None => Waiting::Said(text.to_string()),
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
    /// The direction of the migration (journals without it are PyTorch to JAX).
    #[serde(default)]
    pub migration: Migration,
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
    /// The public repository the task was made from (`[upstream]`), when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamSpec>,
}

/// One thing that happened in a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The task and agent of the session, recorded first so replay needs nothing else
    /// (boxed: it is large, and a journal holds millions of small events).
    Task(Box<SessionTask>),
    /// The session moved ([`At`]): recorded at every move of the policy.
    Stage(At),
    /// The step/auto mode changed.
    Mode {
        /// The new mode.
        mode: Mode,
    },
    /// The agent asks the human something on its screen (`question`: a folder-trust or
    /// permission question; `a` attaches to answer it), or its question went (None).
    AgentAsks {
        /// What it asks.
        question: Option<String>,
    },
    /// Journals of earlier versions: what the session waited for, as text. Read, never
    /// written ([`Waiting::of_earlier_journal`] reads it).
    Waiting {
        /// What was waited for.
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
        /// The command (written as its key: `r`, `n`, …).
        #[serde(with = "by_key")]
        command: KeyedCommand,
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
    /// A side of the parity probe started (its output follows as `RunOutput`, after the
    /// verify run's).
    ProbeStarted {
        /// Phase.
        phase: u8,
        /// Which side.
        side: ParitySide,
    },
    /// The verify run's job on a runner with a queue (Slurm): waiting in it, or started.
    RunnerJob {
        /// Phase.
        phase: u8,
        /// The runner's spec.
        runner: String,
        /// The scheduler's job id.
        job_id: String,
        /// The job's state: waiting under the scheduler's name for it (`PENDING`), or
        /// running.
        state: JobState,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declined_command_is_journaled_as_its_key_and_read_back() {
        let event = Event::Declined {
            command: KeyedCommand::Rerun,
            reason: "phase 1 is being verified now".to_string(),
        };
        let line = serde_json::to_string(&event).unwrap();
        assert_eq!(
            line,
            r#"{"type":"declined","command":"r","reason":"phase 1 is being verified now"}"#
        );
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), event);
        for command in KeyedCommand::ALL {
            assert_eq!(KeyedCommand::of_key(command.key()), Some(command));
        }
        let unknown = r#"{"type":"declined","command":"rr","reason":""}"#;
        assert!(serde_json::from_str::<Event>(unknown).is_err());
    }
}

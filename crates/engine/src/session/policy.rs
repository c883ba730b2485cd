//! The session's policy: a pure state machine that says what the driver does next. Its state
//! is where the session is ([`At`], the one model of it, recorded in the journal), the mode,
//! whether the agent is paused, the phase-two details the human gave and how each phase was
//! graded; its inputs are the end of a stage ([`Policy::done`]) and the human's commands
//! ([`Policy::on_command`]); its outputs are the next stage (start the agent, start the run and
//! grade, wait for the human, end) and the [`Effect`]s of a command. Every command has one
//! rule in every stage, or a [`Effect::Decline`] that says why not now. The driver carries out
//! what this decides and never keeps control state of its own.

use std::time::Duration;

use tokio::time::Instant;

use crate::agent::AgentMode;
use crate::event::{Answer, At, Command, Gated, Interruption, KeyedCommand, Mode, Pass, Return};

/// What a command makes the driver do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Record the new mode.
    SetMode(Mode),
    /// Pause (true) or resume the agent's process group.
    Pause(bool),
    /// Say that the human's phase-two details were kept for when phase 1 fails.
    DetailsKept,
    /// Type the message into the interactive agent, which is running and reads its terminal.
    TypeMessage(String),
    /// Keep the message for the agent's next prompt, which is still to come.
    QueueMessage(String),
    /// Bytes typed into the agent's terminal.
    AgentInput(Vec<u8>),
    /// The agent pane's size.
    ResizeAgent(u16, u16),
    /// The run-log pane's size.
    ResizeRun(u16, u16),
    /// Open a shell in the workspace in the Agent pane.
    OpenShell,
    /// Stop the session, recording what stopped it.
    Abort(Interruption),
    /// After the end: stop serving and return.
    Quit,
    /// The command means nothing here: tell the human why.
    Decline {
        /// The command.
        command: KeyedCommand,
        /// Why not now, and what works instead.
        reason: String,
    },
}

/// The policy's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    at: At,
    mode: Mode,
    /// The session's agent and how it takes input (None: `grade`, no agent).
    agent: Option<AgentMode>,
    paused: bool,
    passed: [Option<bool>; 2],
    /// The phase-two details the human gave (None: as the task writes them).
    details: Option<String>,
    /// A resumed session continues here after its setup.
    resume_at: Option<Gated>,
}

impl Policy {
    /// A new session in `mode`, at setup, with the session's `agent` (None for `grade`: one
    /// phase, no agent).
    pub fn new(mode: Mode, agent: Option<AgentMode>) -> Policy {
        Policy {
            at: At::Setup,
            mode,
            agent,
            paused: false,
            passed: [None, None],
            details: None,
            resume_at: None,
        }
    }

    /// A session rebuilt from its journal: its phases graded as `passed` says; after setup it
    /// continues `phase` (at its verify stage when `migrated`). With nothing to continue it
    /// has ended.
    pub fn resumed(
        mode: Mode,
        agent: Option<AgentMode>,
        passed: [Option<bool>; 2],
        continues: Option<(u8, bool)>,
    ) -> Policy {
        let mut policy = Policy::new(mode, agent);
        policy.passed = passed;
        match continues {
            Some((phase, true)) => policy.resume_at = Some(Gated::Verify(phase)),
            Some((phase, false)) => policy.resume_at = Some(Gated::Migrate(phase)),
            None => {
                let last = if passed[1].is_some() { 2 } else { 1 };
                policy.at = At::Ended(last);
            }
        }
        policy
    }

    /// Where the session is.
    pub fn at(&self) -> At {
        self.at
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether the agent's group is paused.
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// An agent started or ended: nothing is paused.
    pub fn agent_changed(&mut self) {
        self.paused = false;
    }

    /// Whether `phase` has a grade.
    pub fn graded(&self, phase: u8) -> bool {
        self.passed_of(phase).is_some()
    }

    /// Whether the agent still gets a prompt this session (a queued message goes with it):
    /// before phase 2's agent turn has started.
    fn prompt_to_come(&self) -> bool {
        match self.at {
            At::Setup | At::Inject | At::Gate(Gated::Migrate(_) | Gated::Details) => true,
            At::Migrate(p) | At::Verify(p, _) | At::Grade(p, _) | At::Gate(Gated::Verify(p)) => {
                p < 2 && self.passed_of(1) != Some(true)
            }
            At::Ended(_) => false,
        }
    }

    /// The phase-two details the human gave, before phase 1 failed or at their review
    /// (None: the task's own are sent).
    pub fn details(&self) -> Option<&str> {
        self.details.as_deref()
    }

    fn passed_of(&self, phase: u8) -> Option<bool> {
        self.passed
            .get(usize::from(phase.max(1)) - 1)
            .copied()
            .flatten()
    }

    /// Step mode waits at `gated`; auto mode goes straight on.
    fn gate(&self, gated: Gated) -> At {
        match self.mode {
            Mode::Step => At::Gate(gated),
            Mode::Auto => gated.opens(),
        }
    }

    /// The stage `finished` ended (`passed`: its grade, for a grade stage); moves on and
    /// returns where the session is now. A stage the session already left (the human ended
    /// it) changes nothing.
    pub fn done(&mut self, finished: At, passed: Option<bool>) -> At {
        if finished != self.at {
            return self.at;
        }
        if let (At::Grade(p, _), Some(passed)) = (finished, passed)
            && let Some(slot) = self.passed.get_mut(usize::from(p.max(1)) - 1)
        {
            *slot = Some(passed);
        }
        self.at = match finished {
            At::Setup => match (self.agent.is_some(), self.resume_at.take()) {
                (true, Some(gated)) => self.gate(gated),
                (true, None) => self.gate(Gated::Migrate(1)),
                (false, _) => At::Verify(1, Pass::First),
            },
            At::Gate(gated) => gated.opens(),
            At::Migrate(p) => self.gate(Gated::Verify(p)),
            At::Verify(p, pass) => At::Grade(p, pass),
            At::Grade(p, Pass::First | Pass::Again(Return::Details)) => {
                if passed == Some(true) || p >= 2 || self.agent.is_none() {
                    At::Ended(p)
                } else if self.details.is_some() {
                    At::Inject
                } else {
                    self.gate(Gated::Details)
                }
            }
            At::Grade(p, Pass::Again(Return::Ended)) => At::Ended(p),
            At::Inject => self.gate(Gated::Migrate(2)),
            At::Ended(p) => At::Ended(p),
        };
        self.at
    }

    /// The session stops where it is (an abort or a failure).
    pub fn stop(&mut self) {
        self.at = At::Ended(self.at.phase().max(1));
    }

    /// What each keyed command would do now, by the one rule [`Policy::on_command`]
    /// applies: declined with its reason, or accepted.
    pub fn answers(&self, agent_running: bool) -> Vec<Answer> {
        KeyedCommand::ALL
            .into_iter()
            .map(|command| {
                let declined = self
                    .clone()
                    .on_command(command.command(), agent_running)
                    .into_iter()
                    .find_map(|effect| match effect {
                        Effect::Decline { reason, .. } => Some(reason),
                        _ => None,
                    });
                Answer { command, declined }
            })
            .collect()
    }

    /// The one rule for `command` where the session is; `agent_running` says whether an agent
    /// (or the debug shell) runs in the Agent pane. The policy's own state moves with it (a
    /// gate opens, the mode switches); the effects are for the driver to carry out.
    pub fn on_command(&mut self, command: Command, agent_running: bool) -> Vec<Effect> {
        let at = self.at;
        match command {
            Command::Next => match at {
                At::Gate(gated) => {
                    self.at = gated.opens();
                    Vec::new()
                }
                At::Migrate(_) => {
                    self.done(at, None);
                    Vec::new()
                }
                _ => vec![decline(KeyedCommand::Next, not_waiting(at))],
            },
            Command::ToggleMode if matches!(at, At::Ended(_)) => vec![decline(
                KeyedCommand::ToggleMode,
                "the session has ended: no stage is left to step through".to_string(),
            )],
            Command::ToggleMode => {
                self.mode = match self.mode {
                    Mode::Step => Mode::Auto,
                    Mode::Auto => Mode::Step,
                };
                let effects = vec![Effect::SetMode(self.mode)];
                // Auto mode never waits: a wait in progress ends as `n` would end it.
                if let (Mode::Auto, At::Gate(gated)) = (self.mode, at) {
                    self.at = gated.opens();
                }
                effects
            }
            Command::TogglePause => {
                if agent_running {
                    self.paused = !self.paused;
                    vec![Effect::Pause(self.paused)]
                } else {
                    vec![decline(
                        KeyedCommand::TogglePause,
                        "no agent is running to pause".to_string(),
                    )]
                }
            }
            Command::Inject(text) => match at {
                At::Gate(Gated::Details) => {
                    self.details = Some(text);
                    self.at = At::Inject;
                    Vec::new()
                }
                At::Ended(_) => vec![decline(
                    KeyedCommand::Inject,
                    "the session has ended: there is no phase two to send details to".to_string(),
                )],
                _ if self.agent.is_none() => vec![decline(
                    KeyedCommand::Inject,
                    "no agent takes part in this session: there is no phase two".to_string(),
                )],
                _ if self.passed_of(1) == Some(true) => vec![decline(
                    KeyedCommand::Inject,
                    "phase 1 passed: there is no phase two".to_string(),
                )],
                At::Gate(Gated::Migrate(2)) | At::Inject => vec![decline(
                    KeyedCommand::Inject,
                    "the phase-two details were sent: n starts phase two with them".to_string(),
                )],
                _ if at.phase() >= 2 => vec![decline(
                    KeyedCommand::Inject,
                    "phase two has started: its details went with its prompt".to_string(),
                )],
                // Before phase 1's grade, or while it is verified again on its way back to
                // the details: kept, and sent when phase 1 fails.
                _ => {
                    self.details = Some(text);
                    vec![Effect::DetailsKept]
                }
            },
            Command::Message(text) => match at {
                _ if self.agent.is_none() => vec![decline(
                    KeyedCommand::Message,
                    "no agent takes part in this session".to_string(),
                )],
                At::Ended(_) => vec![decline(
                    KeyedCommand::Message,
                    "the session has ended: no agent will read it".to_string(),
                )],
                _ if agent_running && self.agent == Some(AgentMode::Interactive) => {
                    vec![Effect::TypeMessage(text)]
                }
                _ if self.prompt_to_come() => vec![Effect::QueueMessage(text)],
                _ if agent_running => vec![decline(
                    KeyedCommand::Message,
                    "this agent reads no input while it runs, and phase 2's prompt was its last"
                        .to_string(),
                )],
                _ => vec![decline(
                    KeyedCommand::Message,
                    "the agent is not running and phase 2's prompt was its last".to_string(),
                )],
            },
            Command::Rerun => match at {
                At::Gate(Gated::Details) => {
                    self.at = At::Verify(1, Pass::Again(Return::Details));
                    Vec::new()
                }
                At::Ended(p) => {
                    self.at = At::Verify(p, Pass::Again(Return::Ended));
                    Vec::new()
                }
                At::Inject => vec![decline(
                    KeyedCommand::Rerun,
                    "the phase-two details are on their way to the agent".to_string(),
                )],
                At::Verify(p, _) | At::Grade(p, _) => {
                    vec![decline(
                        KeyedCommand::Rerun,
                        format!("phase {p} is being verified now"),
                    )]
                }
                At::Migrate(p) => vec![decline(
                    KeyedCommand::Rerun,
                    format!(
                        "the agent is working on phase {p}: n ends its turn, and verify follows"
                    ),
                )],
                At::Gate(Gated::Verify(p)) => vec![decline(
                    KeyedCommand::Rerun,
                    format!("phase {p} has not been verified yet: n verifies it"),
                )],
                At::Gate(Gated::Migrate(p)) => vec![decline(
                    KeyedCommand::Rerun,
                    format!("phase {p} has not started yet: n starts it"),
                )],
                At::Setup => vec![decline(
                    KeyedCommand::Rerun,
                    "the session is still setting up".to_string(),
                )],
            },
            Command::Abort => match at {
                At::Ended(_) => vec![Effect::Quit],
                _ => vec![Effect::Abort(Interruption::UserAbort)],
            },
            Command::Interrupt(kind) => match at {
                At::Ended(_) => vec![Effect::Quit],
                _ => vec![Effect::Abort(kind)],
            },
            Command::AgentInput(bytes) => vec![Effect::AgentInput(bytes)],
            Command::ResizeAgent(cols, rows) => vec![Effect::ResizeAgent(cols, rows)],
            Command::ResizeRun(cols, rows) => vec![Effect::ResizeRun(cols, rows)],
            Command::OpenShell => match at {
                At::Ended(_) if agent_running => vec![decline(
                    KeyedCommand::OpenShell,
                    "a process already runs in the Agent pane".to_string(),
                )],
                At::Ended(_) => vec![Effect::OpenShell],
                _ => vec![decline(
                    KeyedCommand::OpenShell,
                    "the debug shell opens once the session has ended".to_string(),
                )],
            },
        }
    }
}

#[cfg(any(test, feature = "testing"))]
impl Policy {
    /// A step-mode session with an agent at every stage it goes through, phase 1 failed once
    /// phase 2 is reached and phase 2 failed once it ended (for the tables of tests: the
    /// policy's own and the TUI's, which builds this crate with its `testing` feature).
    pub fn at_every_stage() -> Vec<Policy> {
        [
            At::Setup,
            At::Gate(Gated::Migrate(1)),
            At::Migrate(1),
            At::Gate(Gated::Verify(1)),
            At::Verify(1, Pass::First),
            At::Grade(1, Pass::First),
            At::Gate(Gated::Details),
            At::Verify(1, Pass::Again(Return::Details)),
            At::Grade(1, Pass::Again(Return::Details)),
            At::Inject,
            At::Gate(Gated::Migrate(2)),
            At::Migrate(2),
            At::Gate(Gated::Verify(2)),
            At::Verify(2, Pass::First),
            At::Grade(2, Pass::First),
            At::Ended(2),
            At::Verify(2, Pass::Again(Return::Ended)),
        ]
        .into_iter()
        .map(|at| {
            let mut policy = Policy::new(Mode::Step, Some(AgentMode::Interactive));
            policy.at = at;
            if at.phase() == 2 || at.again() || matches!(at, At::Inject | At::Gate(Gated::Details))
            {
                policy.passed[0] = Some(false);
            }
            if matches!(at, At::Ended(2)) || at.phase() == 2 && at.again() {
                policy.passed[1] = Some(false);
            }
            policy
        })
        .collect()
    }

    /// The same policy with an agent of `mode`.
    pub fn with_agent(mut self, mode: AgentMode) -> Policy {
        self.agent = Some(mode);
        self
    }
}

fn decline(command: KeyedCommand, reason: String) -> Effect {
    Effect::Decline { command, reason }
}

/// Why `n` means nothing at `at`.
fn not_waiting(at: At) -> String {
    match at {
        At::Setup => "the session is still setting up".to_string(),
        At::Verify(p, _) | At::Grade(p, _) => format!("phase {p} is being verified now"),
        At::Ended(_) => "the session has ended".to_string(),
        At::Gate(_) | At::Migrate(_) | At::Inject => "nothing waits for it".to_string(),
    }
}

/// When the agent of the current turn started, last printed and last did anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentClock {
    /// When it started.
    pub started: Instant,
    /// When it last printed something.
    pub output_at: Option<Instant>,
    /// When it last printed or changed a file (or its turn began).
    pub active_at: Instant,
}

impl AgentClock {
    /// A clock for an agent (or a turn) starting at `now`.
    pub fn starting(now: Instant) -> AgentClock {
        AgentClock {
            started: now,
            output_at: None,
            active_at: now,
        }
    }

    /// Whether an agent idle since its last activity has passed `limit` at `now`.
    pub fn idle_past(&self, limit: Duration, now: Instant) -> bool {
        now.duration_since(self.active_at) >= limit
    }
}

#[cfg(test)]
mod tests;

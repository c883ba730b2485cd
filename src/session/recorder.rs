//! The one path every event takes: stamped with its session time, appended to the journal,
//! applied to the shared state, shown to the observer (headless printer), and signalled to
//! the UI as a change.

use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::watch;

use crate::journal::{JournalError, JournalWriter};

use crate::secrets::{RedactStream, Secrets};

use super::event::{Event, FileContent};
use super::state::SessionState;

/// Called with each event after it is applied (e.g. to print progress lines).
pub type Observer = Box<dyn FnMut(f64, &Event, &SessionState) + Send>;

/// Shared, lockable session state. The lock is `parking_lot`'s, which is eventually fair:
/// however fast the driver applies a flood of output, a waiting UI gets the state within
/// about half a millisecond instead of losing every race for it.
pub type SharedState = Arc<Mutex<SessionState>>;

/// A new shared state.
pub fn shared(state: SessionState) -> SharedState {
    Arc::new(Mutex::new(state))
}

/// Locks the shared state.
pub fn lock(state: &SharedState) -> MutexGuard<'_, SessionState> {
    state.lock()
}

/// Sends events to the journal, the state, the observer and the change signal.
pub struct Recorder {
    start: Instant,
    offset: f64,
    journal: JournalWriter,
    state: SharedState,
    changed: watch::Sender<u64>,
    observer: Option<Observer>,
    journal_error: Option<JournalError>,
    secrets: Secrets,
    agent_redact: RedactStream,
    run_redact: RedactStream,
}

impl Recorder {
    /// A recorder writing to `journal`, starting the session clock now at `offset` seconds
    /// (non-zero when resuming a recorded session).
    pub fn new(
        journal: JournalWriter,
        state: SharedState,
        offset: f64,
    ) -> (Recorder, watch::Receiver<u64>) {
        let (changed, rx) = watch::channel(0);
        (
            Recorder {
                start: Instant::now(),
                offset,
                journal,
                state,
                changed,
                observer: None,
                journal_error: None,
                secrets: Secrets::from_env(),
                agent_redact: RedactStream::new(),
                run_redact: RedactStream::new(),
            },
            rx,
        )
    }

    /// Installs an observer.
    pub fn set_observer(&mut self, observer: Observer) {
        self.observer = Some(observer);
    }

    /// Seconds since the session started.
    pub fn now(&self) -> f64 {
        self.offset + self.start.elapsed().as_secs_f64()
    }

    /// The shared state.
    pub fn state(&self) -> &SharedState {
        &self.state
    }

    /// Replaces the secrets to redact (the environment's by default).
    pub fn set_secrets(&mut self, secrets: Secrets) {
        self.secrets = secrets;
    }

    /// Records one event, with secret values redacted from every text it carries.
    pub fn emit(&mut self, event: Event) {
        let mut ready = Vec::with_capacity(1);
        self.redact_into(event, &mut ready);
        self.record(ready);
    }

    /// Redacts `event` and pushes it, after any text held back at the end of its terminal
    /// stream, onto `ready`.
    fn redact_into(&mut self, event: Event, ready: &mut Vec<Event>) {
        // Text held back at the end of a terminal stream goes out before the stream ends.
        match &event {
            Event::AgentStarted { .. } | Event::AgentExited { .. } => {
                let rest = self.agent_redact.finish();
                if !rest.is_empty() {
                    ready.push(Event::AgentOutput { text: rest });
                }
            }
            Event::RunStarted { .. } | Event::RunExited { .. } => {
                let rest = self.run_redact.finish();
                if !rest.is_empty() {
                    ready.push(Event::RunOutput { text: rest });
                }
            }
            _ => {}
        }
        let event = match event {
            Event::AgentOutput { text } => {
                let text = self.agent_redact.feed(&self.secrets, text);
                if text.is_empty() {
                    return;
                }
                Event::AgentOutput { text }
            }
            Event::RunOutput { text } => {
                let text = self.run_redact.feed(&self.secrets, text);
                if text.is_empty() {
                    return;
                }
                Event::RunOutput { text }
            }
            other if self.secrets.is_empty() => other,
            other => redact_event(&self.secrets, other),
        };
        ready.push(event);
    }

    /// Journals, applies and shows `events` at one session time, then signals the change.
    fn record(&mut self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let t = self.now();
        for event in &events {
            if let Err(e) = self.journal.append(t, event)
                && self.journal_error.is_none()
            {
                tracing::error!("journal write failed: {e}");
                self.journal_error = Some(e);
            }
        }
        let mut state = lock(&self.state);
        for event in &events {
            state.apply(t, event);
            if let Some(observer) = self.observer.as_mut() {
                observer(t, event, &state);
            }
        }
        let version = state.version;
        drop(state);
        self.changed.send_replace(version);
    }

    /// Flushes the journal if its interval passed.
    pub fn tick(&mut self) {
        if let Err(e) = self.journal.tick() {
            tracing::error!("journal flush failed: {e}");
        }
    }

    /// Flushes the journal now.
    pub fn flush(&mut self) {
        if let Err(e) = self.journal.flush() {
            tracing::error!("journal flush failed: {e}");
        }
    }

    /// The first journal error, if writing ever failed.
    pub fn journal_error(&self) -> Option<&JournalError> {
        self.journal_error.as_ref()
    }
}

fn redact_file(secrets: &Secrets, file: FileContent) -> FileContent {
    FileContent {
        text: file.text.map(|t| secrets.redact(&t)),
        ..file
    }
}

/// Redacts the free text of events other than terminal output.
fn redact_event(secrets: &Secrets, event: Event) -> Event {
    match event {
        Event::Task(mut task) => {
            task.agent = secrets.redact(&task.agent);
            task.command = secrets.redact(&task.command);
            task.phase2_details = secrets.redact(&task.phase2_details);
            Event::Task(task)
        }
        Event::Note { text } => Event::Note {
            text: secrets.redact(&text),
        },
        Event::Message { text } => Event::Message {
            text: secrets.redact(&text),
        },
        Event::Prompt { phase, text } => Event::Prompt {
            phase,
            text: secrets.redact(&text),
        },
        Event::AgentStarted {
            phase,
            command,
            cols,
            rows,
        } => Event::AgentStarted {
            phase,
            command: secrets.redact(&command),
            cols,
            rows,
        },
        Event::RunStarted {
            phase,
            command,
            cols,
            rows,
        } => Event::RunStarted {
            phase,
            command: secrets.redact(&command),
            cols,
            rows,
        },
        Event::Baseline { files } => Event::Baseline {
            files: files.into_iter().map(|f| redact_file(secrets, f)).collect(),
        },
        Event::FileChanged { file, deleted } => Event::FileChanged {
            file: redact_file(secrets, file),
            deleted,
        },
        Event::Graded {
            phase,
            mut verdict,
            exit_code,
            duration_s,
        } => {
            verdict.findings = verdict.findings.iter().map(|f| secrets.redact(f)).collect();
            Event::Graded {
                phase,
                verdict,
                exit_code,
                duration_s,
            }
        }
        Event::Finished {
            passed,
            passed_in_phase,
            exit_code,
            error,
        } => Event::Finished {
            passed,
            passed_in_phase,
            exit_code,
            error: error.map(|e| secrets.redact(&e)),
        },
        other => other,
    }
}

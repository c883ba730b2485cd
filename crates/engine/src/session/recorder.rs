//! The one path every event takes: stamped with its session time, appended to the journal,
//! applied to the shared state, shown to the observer (headless printer), and signalled to
//! the UI as a change.

use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::watch;

use crate::journal::{JournalError, JournalWriter};

use crate::secrets::{RedactStream, Secrets};

use crate::agent::transcript::TranscriptItem;

use super::state::SessionState;
use crate::event::{Event, FileContent};

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
            mut other => {
                if !self.secrets.is_empty() {
                    redact_event(&self.secrets, &mut other);
                }
                other
            }
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

fn redact_file(secrets: &Secrets, file: &mut FileContent) {
    secrets.redact_in_place(&mut file.path);
    if let Some(text) = file.text.as_mut() {
        secrets.redact_in_place(text);
    }
}

/// Redacts every text an event carries. The match names every variant, so a new one
/// cannot reach the journal without a decision here. Terminal output is redacted as a
/// stream by the caller (a value may be split across pieces); here it is redacted whole.
fn redact_event(secrets: &Secrets, event: &mut Event) {
    let redact = |text: &mut String| secrets.redact_in_place(text);
    match event {
        Event::Task(task) => {
            redact(&mut task.title);
            redact(&mut task.agent);
            redact(&mut task.command);
            redact(&mut task.phase2_details);
        }
        Event::Waiting { what: text } | Event::AgentAsks { question: text } => {
            if let Some(text) = text {
                redact(text);
            }
        }
        Event::Declined { reason, .. } => redact(reason),
        Event::Note { text }
        | Event::Message { text, .. }
        | Event::Prompt { text, .. }
        | Event::AgentOutput { text }
        | Event::RunOutput { text } => redact(text),
        Event::Baseline { files } => {
            for file in files {
                redact_file(secrets, file);
            }
        }
        Event::FileChanged { file, .. } => redact_file(secrets, file),
        Event::AgentStarted { command, .. } | Event::RunStarted { command, .. } => redact(command),
        Event::RunnerJob { runner, reason, .. } => {
            redact(runner);
            if let Some(reason) = reason {
                redact(reason);
            }
        }
        Event::Transcript { item, .. } => match item {
            TranscriptItem::Session { id: text }
            | TranscriptItem::Message { text }
            | TranscriptItem::FileEdit { path: text }
            | TranscriptItem::Final { text, .. } => redact(text),
            TranscriptItem::ToolCall { tool, input }
            | TranscriptItem::ToolFailed { tool, error: input } => {
                redact(tool);
                redact(input);
            }
            TranscriptItem::Usage { .. } => {}
        },
        Event::Graded { verdict, .. } => {
            for finding in &mut verdict.findings {
                redact(finding);
            }
            for record in &mut verdict.finding_records {
                redact(&mut record.text);
                if let Some(file) = record.file.as_mut() {
                    redact(file);
                }
            }
            if let Some(reason) = verdict.unconfined.as_mut() {
                redact(reason);
            }
        }
        Event::Parity { report, .. } => {
            if let Some(error) = report.error.as_mut() {
                redact(error);
            }
            for tensor in &mut report.tensors {
                redact(&mut tensor.name);
                if let Some(problem) = tensor.problem.as_mut() {
                    redact(problem);
                }
                for at in [&mut tensor.source_location, &mut tensor.port_location]
                    .into_iter()
                    .flatten()
                {
                    redact(&mut at.file);
                }
            }
            if let Some(first) = report.first_divergent.as_mut() {
                redact(&mut first.name);
            }
            for name in &mut report.extra {
                redact(name);
            }
        }
        Event::AgentRun(run) => {
            redact(&mut run.program);
            redact(&mut run.cwd);
            run.argv.iter_mut().for_each(redact);
            if let Some(exception) = run.exception.as_mut() {
                redact(exception);
            }
        }
        Event::Finished { error, .. } | Event::PhaseEnded { detail: error, .. } => {
            if let Some(error) = error {
                redact(error);
            }
        }
        // No text written by a child or an agent: numbers, flags, the task's metric names.
        Event::Stage(_)
        | Event::Answers { .. }
        | Event::Mode { .. }
        | Event::Resized { .. }
        | Event::AgentExited { .. }
        | Event::Paused { .. }
        | Event::RunExited { .. }
        | Event::ProbeStarted { .. }
        | Event::Metric { .. }
        | Event::Metrics { .. }
        | Event::SeedCheckMetrics { .. } => {}
    }
}

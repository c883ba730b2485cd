//! The one path every event takes: stamped with its session time, appended to the journal,
//! applied to the shared state, shown to the observer (headless printer), and signalled to
//! the UI as a change.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::watch;

use crate::journal::{JournalError, JournalWriter};

use super::event::Event;
use super::state::SessionState;

/// Called with each event after it is applied (e.g. to print progress lines).
pub type Observer = Box<dyn FnMut(f64, &Event, &SessionState) + Send>;

/// Shared, lockable session state.
pub type SharedState = Arc<Mutex<SessionState>>;

/// Locks the shared state, recovering it if a panicking thread poisoned the lock.
pub fn lock(state: &SharedState) -> MutexGuard<'_, SessionState> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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

    /// Records one event.
    pub fn emit(&mut self, event: Event) {
        let t = self.now();
        if let Err(e) = self.journal.append(t, &event)
            && self.journal_error.is_none()
        {
            tracing::error!("journal write failed: {e}");
            self.journal_error = Some(e);
        }
        let mut state = lock(&self.state);
        state.apply(t, &event);
        if let Some(observer) = self.observer.as_mut() {
            observer(t, &event, &state);
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

//! Replay of a recorded session: the journal fed into the same reducer as a live run, with
//! play/pause, speed, seeking (periodic snapshots of the reduced state keep any seek short),
//! jumps between phase changes and verdicts; asciicast export (`cast`) and the runs list
//! (`runs`).

pub mod cast;
pub mod runs;

use std::path::Path;

use crate::event::Event;
use crate::journal::{Entry, Header, Journal, JournalError, JournalReader, JournalSeeker, Place};
use crate::session::state::{SessionState, StoredState};

/// A snapshot is taken after this many bytes of terminal text have been applied since the
/// previous one, bounding the work of a seek.
const SNAPSHOT_TEXT_BYTES: usize = 1024 * 1024;
/// …or after this many events.
const SNAPSHOT_EVENTS: usize = 10_000;
/// Most memory the snapshots of one replay hold together, counted as what each stored state
/// holds (its terminals compressed, its files' text). Past it every other snapshot is dropped
/// and the spacing doubles, so a journal of any length keeps a bounded number of snapshots
/// (seeks in a very long journal replay more, instead of memory growing). A stored terminal
/// with a full scrollback of log lines is tens of kilobytes, so this holds hundreds.
const SNAPSHOT_BUDGET_BYTES: usize = 32 * 1024 * 1024;

/// Slowest and fastest playback speeds.
pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

/// The snapshots being taken while a journal is read, within a memory budget.
struct Snapshots {
    /// (index of the next entry to apply, state after applying everything before it,
    /// stored); the first is the empty state.
    kept: Vec<(usize, StoredState)>,
    /// The size in bytes of each kept state.
    sizes: Vec<usize>,
    budget: usize,
    /// How many times the base spacing lies between two snapshots (doubles on each thinning).
    spacing: usize,
}

impl Snapshots {
    fn new(budget: usize) -> Self {
        Snapshots {
            kept: vec![(0, SessionState::new().store())],
            sizes: vec![0],
            budget,
            spacing: 1,
        }
    }

    /// Keeps `state`, stored, as the state before entry `next`; while the stored states
    /// exceed the budget, drops every other one (the empty first state stays) and doubles
    /// the spacing. Each state counts what it does not share with the one kept before it.
    fn push(&mut self, next: usize, state: &SessionState) {
        let stored = state.store();
        let earlier = self.kept.last().map(|(_, s)| s);
        self.sizes.push(stored.held_bytes_beyond(earlier));
        self.kept.push((next, stored));
        while self.sizes.iter().sum::<usize>() > self.budget && self.kept.len() > 2 {
            let mut position = 0;
            self.kept.retain(|_| {
                position += 1;
                position % 2 == 1
            });
            self.sizes = sizes(&self.kept);
            self.spacing *= 2;
        }
    }
}

/// The size of each snapshot in `kept`: what it holds beyond what it shares with the one
/// before it, so that together they count what they hold.
fn sizes(kept: &[(usize, StoredState)]) -> Vec<usize> {
    let earlier = std::iter::once(None).chain(kept.iter().map(|(_, s)| Some(s)));
    kept.iter()
        .zip(earlier)
        .map(|((_, stored), earlier)| stored.held_bytes_beyond(earlier))
        .collect()
}

/// How far apart snapshots are taken: after this much terminal text or these many events
/// since the previous one (whichever comes first, times the spacing of [`Snapshots`]).
#[derive(Debug, Clone, Copy)]
struct Spacing {
    text_bytes: usize,
    events: usize,
}

/// The spacing of every player but the tests'.
const SPACING: Spacing = Spacing {
    text_bytes: SNAPSHOT_TEXT_BYTES,
    events: SNAPSHOT_EVENTS,
};

/// One pass over a journal's events: their times, the markers and the snapshots.
struct Index {
    times: Vec<f64>,
    markers: Vec<(f64, String)>,
    snapshots: Snapshots,
    spacing: Spacing,
    state: SessionState,
    text_bytes: usize,
    events: usize,
}

impl Index {
    fn new(budget: usize, spacing: Spacing) -> Self {
        Index {
            times: Vec::new(),
            markers: Vec::new(),
            snapshots: Snapshots::new(budget),
            spacing,
            state: SessionState::new(),
            text_bytes: 0,
            events: 0,
        }
    }

    fn add(&mut self, entry: &Entry) {
        self.state.apply(entry.t, &entry.event);
        self.times.push(entry.t);
        if let Some(label) = marker(&entry.event) {
            self.markers.push((entry.t, label));
        }
        self.text_bytes += text_len(&entry.event);
        self.events += 1;
        let spacing = self.snapshots.spacing;
        // A snapshot is only taken with both terminals between escape sequences (a stored
        // screen restores with its parser at rest), so restoring one is exactly playing up to it.
        let at_rest = self.state.agent_screen.at_rest() && self.state.run_screen.at_rest();
        if at_rest
            && (self.text_bytes >= self.spacing.text_bytes.saturating_mul(spacing)
                || self.events >= self.spacing.events.saturating_mul(spacing))
        {
            self.snapshots.push(self.times.len(), &self.state);
            self.text_bytes = 0;
            self.events = 0;
        }
    }
}

/// The label of a stage change, a verdict or the end, for the timeline and jumps.
fn marker(event: &Event) -> Option<String> {
    match event {
        Event::Stage(at) if at.is_step() => Some(match at.step() {
            (0, stage) => stage.as_str().to_string(),
            (phase, stage) => format!("{} {phase}", stage.as_str()),
        }),
        Event::Graded { phase, verdict, .. } => Some(format!("phase {phase} {}", verdict.label())),
        Event::Finished { .. } => Some("end".to_string()),
        _ => None,
    }
}

/// Where a player's events come from.
enum Events {
    /// A journal already read into memory.
    Memory(Vec<Entry>),
    /// The journal file, each event read back from its place when it is applied, so a
    /// journal of any length costs 16 bytes an event (its time and its place).
    File(JournalFile),
}

/// A journal file read back on demand.
struct JournalFile {
    seeker: JournalSeeker,
    /// The byte offset of each frame that holds events (of each line, in a plain journal).
    frames: Vec<u64>,
    /// Each event's frame (an index into `frames`) and its line's offset in the frame.
    places: Vec<(u32, u32)>,
}

impl JournalFile {
    fn new(seeker: JournalSeeker) -> JournalFile {
        JournalFile {
            seeker,
            frames: Vec::new(),
            places: Vec::new(),
        }
    }

    /// Notes the place of the next event.
    fn push(&mut self, place: Place) {
        if self.frames.last() != Some(&place.frame) {
            self.frames.push(place.frame);
        }
        let frame = u32::try_from(self.frames.len() - 1).unwrap_or(u32::MAX);
        let line = u32::try_from(place.line).unwrap_or(u32::MAX);
        self.places.push((frame, line));
    }

    /// The event at `index`; None when it cannot be read back (the file changed under us).
    fn read(&mut self, index: usize) -> Option<Entry> {
        let (frame, line) = *self.places.get(index)?;
        let frame = *self.frames.get(usize::try_from(frame).ok()?)?;
        self.seeker.read(Place {
            frame,
            line: usize::try_from(line).ok()?,
        })
    }
}

/// Wall seconds a replay plays of a stretch in which nothing happened before it skips ahead.
pub const IDLE_PLAYED_S: f64 = 2.0;

/// Wall seconds before the next event at which a skipped quiet stretch resumes.
pub const IDLE_LEAD_S: f64 = 0.5;

/// A recorded session being played back.
pub struct Player {
    events: Events,
    /// The time of each event.
    times: Vec<f64>,
    markers: Vec<(f64, String)>,
    /// (index of the next entry to apply, state after applying everything before it,
    /// stored).
    snapshots: Vec<(usize, StoredState)>,
    state: SessionState,
    next: usize,
    position: f64,
    end: f64,
    /// Whether playback advances with the clock.
    pub playing: bool,
    /// Playback speed (a value of [`SPEEDS`]).
    pub speed: f64,
}

fn text_len(event: &Event) -> usize {
    match event {
        Event::AgentOutput { text } | Event::RunOutput { text } => text.len(),
        _ => 0,
    }
}

impl Player {
    /// Prepares playback of a journal held in memory: one pass builds the snapshots.
    pub fn new(journal: Journal) -> Player {
        Player::with_snapshots(journal, SNAPSHOT_BUDGET_BYTES, SPACING)
    }

    /// [`Player::new`] with the snapshots' memory budget and spacing given.
    fn with_snapshots(journal: Journal, budget: usize, spacing: Spacing) -> Player {
        let mut index = Index::new(budget, spacing);
        for entry in &journal.entries {
            index.add(entry);
        }
        Player::from_index(Events::Memory(journal.entries), index)
    }

    /// Prepares playback of the journal file at `path` (either format), keeping only each
    /// event's time and place in memory (events are read back as they are applied); returns the
    /// journal's header with the player.
    pub fn open(path: &Path) -> Result<(Header, Player), JournalError> {
        let reader = JournalReader::open(path)?;
        let header = reader.header.clone();
        let mut index = Index::new(SNAPSHOT_BUDGET_BYTES, SPACING);
        let mut file = JournalFile::new(JournalSeeker::open(path)?);
        reader.visit_at(|place, entry| {
            file.push(place);
            index.add(&entry);
        })?;
        Ok((header, Player::from_index(Events::File(file), index)))
    }

    fn from_index(events: Events, index: Index) -> Player {
        Player {
            events,
            end: index.times.last().copied().unwrap_or(0.0),
            times: index.times,
            markers: index.markers,
            snapshots: index.snapshots.kept,
            state: SessionState::new(),
            next: 0,
            position: 0.0,
            playing: true,
            speed: 1.0,
        }
    }

    /// The state at the current position.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The current position in seconds.
    pub fn position(&self) -> f64 {
        self.position
    }

    /// The time of the last event.
    pub fn end(&self) -> f64 {
        self.end
    }

    /// Whether every event has been applied.
    pub fn at_end(&self) -> bool {
        self.next >= self.times.len()
    }

    /// Advances the position by `seconds` of wall time (times the speed); returns whether
    /// the state changed.
    pub fn advance(&mut self, seconds: f64) -> bool {
        if !self.playing {
            return false;
        }
        let mut target = (self.position + seconds * self.speed).min(self.end);
        // A quiet stretch plays for IDLE_PLAYED_S of wall time, then skips to just before
        // the next event.
        let last = self
            .next
            .checked_sub(1)
            .and_then(|i| self.times.get(i))
            .copied();
        if let Some(next) = self.times.get(self.next).copied()
            && target < next
            && target - last.unwrap_or(0.0) > IDLE_PLAYED_S * self.speed
        {
            target = target.max(next - IDLE_LEAD_S * self.speed);
        }
        let changed = self.apply_until(target);
        self.position = target;
        if self.at_end() {
            self.playing = false;
        }
        changed
    }

    fn apply_until(&mut self, target: f64) -> bool {
        let start = self.next;
        while self.times.get(self.next).is_some_and(|t| *t <= target) {
            match &mut self.events {
                Events::Memory(entries) => {
                    if let Some(entry) = entries.get(self.next) {
                        self.state.apply(entry.t, &entry.event);
                    }
                }
                Events::File(file) => match file.read(self.next) {
                    Some(entry) => self.state.apply(entry.t, &entry.event),
                    None => tracing::warn!("replay: event {} could not be read back", self.next),
                },
            }
            self.next += 1;
        }
        self.next != start
    }

    /// Moves to `target` seconds from the nearest snapshot before it: restored when the
    /// position is past the target or before that snapshot, so a seek either way applies at
    /// most the events between two snapshots; otherwise by applying the events in between.
    pub fn seek(&mut self, target: f64) {
        let target = target.clamp(0.0, self.end);
        let limit = self.times.partition_point(|t| *t <= target);
        let nearest = self.snapshots.iter().rev().find(|(i, _)| *i <= limit);
        let behind_nearest = nearest.is_some_and(|(i, _)| *i > self.next);
        if limit < self.next || behind_nearest {
            let restored = nearest.and_then(|(i, stored)| Some((*i, stored.restore()?)));
            let (index, state) = restored.unwrap_or_else(|| {
                tracing::warn!("replay: a snapshot did not restore; playing from the start");
                (0, SessionState::new())
            });
            self.state = state;
            self.next = index;
        }
        self.apply_until(target);
        self.position = target;
    }

    /// Times of stage changes, verdicts and the end, in order (for the timeline and jumps).
    pub fn markers(&self) -> &[(f64, String)] {
        &self.markers
    }

    /// Jumps to the next marker after the position (or the previous one before it).
    pub fn jump(&mut self, forward: bool) {
        let markers = self.markers();
        let here = self.position;
        let target = if forward {
            markers.iter().map(|(t, _)| *t).find(|t| *t > here + 1e-6)
        } else {
            markers
                .iter()
                .map(|(t, _)| *t)
                .rev()
                .find(|t| *t < here - 1e-6)
        };
        if let Some(t) = target {
            self.seek(t);
        }
    }

    /// Next faster (or slower) speed.
    pub fn change_speed(&mut self, faster: bool) {
        let i = SPEEDS.iter().position(|s| *s >= self.speed).unwrap_or(2);
        let i = if faster {
            (i + 1).min(SPEEDS.len() - 1)
        } else {
            i.saturating_sub(1)
        };
        self.speed = SPEEDS[i];
    }

    /// How many snapshots were kept.
    pub fn snapshot_count(&self) -> usize {
        self.snapshots.len()
    }
}

#[cfg(test)]
mod tests;

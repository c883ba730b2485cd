//! What one frame draws, copied out of the session state while its lock is held: the small
//! parts of the state as they are, and of each terminal only the rows its pane shows. The
//! frame is then drawn from this copy alone, holding no lock and changing nothing.

use ratatui::widgets::{Block, Borders};

use crate::event::{At, Mode, SessionTask, Waiting};
use crate::replay::Player;
use crate::session::state::{FinishInfo, PhaseRecord, Said, SessionState, ShownRun};

use tokio::time::Instant;

use super::app::{App, NOTICE_FOR, PaneId};
use super::layout::{FrameLayout, SUMMARY_LABEL};
use crate::pty::screen::Screen;

/// Where a replay stands, for the timeline bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Playback {
    /// Whether playback advances with the clock.
    pub playing: bool,
    /// The position in seconds.
    pub position: f64,
    /// The time of the last event.
    pub end: f64,
    /// The playback speed.
    pub speed: f64,
    /// Times and labels of stage changes, verdicts and the end.
    pub markers: Vec<(f64, String)>,
}

impl Playback {
    /// Where `player` stands.
    pub fn of(player: &Player) -> Playback {
        Playback {
            playing: player.playing,
            position: player.position(),
            end: player.end(),
            speed: player.speed,
            markers: player.markers().to_vec(),
        }
    }
}

/// The copy of the session state one frame draws.
#[derive(Debug, Clone)]
pub struct Scene {
    /// The task.
    pub task: SessionTask,
    /// Where the session is.
    pub at: At,
    /// Step or auto.
    pub mode: Mode,
    /// What the session waits on, if anything.
    pub waiting: Option<Waiting>,
    /// What each keyed command would do now, as the policy published it.
    pub answers: Vec<crate::event::Answer>,
    /// The verify run's job while it waits in a runner's queue.
    pub queued: Option<String>,
    /// Whether the agent is paused.
    pub paused: bool,
    /// The session clock: the time of the latest event, or in a live session the clock
    /// moved on to this frame ([`LiveClock`]).
    pub now: f64,
    /// The latest answer to a command.
    pub notice: Option<Said>,
    /// What the session last said it was doing.
    pub activity: Option<Said>,
    /// Whether an agent process is running.
    pub agent_running: bool,
    /// Whether a verify run is running.
    pub run_running: bool,
    /// Which run the Run log shows (`phase 1 · verify run`, `phase 1 · seed check`,
    /// `phase 1 · parity probe (source)`).
    pub run_shown: Option<ShownRun>,
    /// Set once the session ended.
    pub finished: Option<FinishInfo>,
    /// How many files (and lines) the session's findings name: where Enter in the Verdict
    /// pane goes.
    pub finding_files: usize,
    /// Per-phase records, index 0 = phase 1.
    pub phases: Vec<PhaseRecord>,
    /// The rows the Agent pane shows of the agent's terminal.
    pub agent: TerminalView,
    /// The rows the Run log pane shows of the verify run's terminal.
    pub run: TerminalView,
    /// Where a replay stands (None in a live session).
    pub playback: Option<Playback>,
}

impl Scene {
    /// Why `command` is declined now; None when the policy accepts it (or said nothing).
    pub fn declined(&self, command: crate::event::KeyedCommand) -> Option<&str> {
        self.answers
            .iter()
            .find(|a| a.command == command)
            .and_then(|a| a.declined.as_deref())
    }

    /// Copies what a frame laid out as `layout` needs from `state`, as `view` shows it: of a
    /// terminal, the rows its pane shows, or on a compact screen the row its summary shows.
    pub fn capture(state: &SessionState, view: &App, layout: &FrameLayout) -> Scene {
        let terminal = |pane: PaneId, screen| {
            let (width, height) = if layout.panes[pane].area() > 0 {
                let inner = Block::default()
                    .borders(Borders::ALL)
                    .inner(layout.panes[pane]);
                (inner.width, inner.height)
            } else if layout.summaries[pane].area() > 0 {
                let width = layout.summaries[pane].width.saturating_sub(SUMMARY_LABEL);
                return TerminalView::last_line(screen, width);
            } else {
                (0, 0)
            };
            TerminalView::capture(screen, view.scroll[pane], width, height)
        };
        Scene {
            task: state.task.clone(),
            at: state.at,
            mode: state.mode,
            waiting: state.waiting(),
            answers: state.answers.clone(),
            queued: state.queued.clone(),
            paused: state.paused,
            now: state.now,
            notice: state.notice.clone(),
            activity: state.activity.clone(),
            agent_running: state.agent_running,
            run_running: state.run_running,
            run_shown: state.run_shown,
            finished: state.finished.clone(),
            phases: state.phases.clone(),
            finding_files: super::app::finding_files(state).len(),
            agent: if view.agent_transcript {
                TerminalView::default()
            } else {
                terminal(PaneId::Agent, &state.agent_screen)
            },
            run: terminal(PaneId::RunLog, &state.run_screen),
            playback: None,
        }
    }

    /// The record of `phase` (1-based), if it exists.
    pub fn phase(&self, phase: u8) -> Option<&PhaseRecord> {
        self.phases.get(usize::from(phase.max(1)) - 1)
    }

    /// The answer to a command the status line shows now: the view's own (a key that did
    /// nothing), else the session's while it is fresh.
    pub fn notice_text<'a>(&'a self, view: &'a App) -> Option<&'a str> {
        let session = self
            .notice
            .as_ref()
            .filter(|n| self.now - n.at < NOTICE_FOR.as_secs_f64());
        match (&view.notice, session) {
            // The newer of the two: the session's answer to a key pressed after the view's.
            (Some(own), Some(said)) if said.at > own.session_at => Some(said.text.as_str()),
            (Some(own), _) => Some(&own.text),
            (None, said) => said.map(|n| n.text.as_str()),
        }
    }

    /// The activity line an empty pane shows: a spinner that turns each second, what the
    /// session is doing, and for how long (`⠹ building environment: pip install (34 s)`).
    pub fn activity_line(&self) -> Option<String> {
        let said = self.activity.as_ref()?;
        let elapsed = (self.now - said.at).max(0.0);
        let spinner = SPINNER[(self.now.max(0.0) as usize) % SPINNER.len()];
        Some(format!("{spinner} {} ({elapsed:.0} s)", said.text))
    }
}

/// The spinner's frames, one a second.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The session clock a live screen shows: the time of the latest event, moved on by the wall
/// time since that event was seen, while the session is open; so it ticks every second
/// through quiet stretches, and never goes back.
#[derive(Debug, Clone, Copy)]
pub struct LiveClock {
    event_time: f64,
    seen_at: Instant,
    shown: f64,
}

impl LiveClock {
    /// A clock started at `now`.
    pub fn new(now: Instant) -> LiveClock {
        LiveClock {
            event_time: 0.0,
            seen_at: now,
            shown: 0.0,
        }
    }

    /// The time to show at `now` for a session whose latest event is at `event_time`;
    /// once the session is no longer `open`, that event's time.
    pub fn read(&mut self, event_time: f64, open: bool, now: Instant) -> f64 {
        if event_time != self.event_time {
            self.event_time = event_time;
            self.seen_at = now;
        }
        if !open {
            self.shown = event_time;
            return event_time;
        }
        let moved = event_time + now.saturating_duration_since(self.seen_at).as_secs_f64();
        self.shown = self.shown.max(moved);
        self.shown
    }
}

/// The rows a terminal pane shows, copied out of the terminal's screen while the state's
/// lock is held: the frame draws from this copy, so drawing neither holds the lock nor
/// touches the screen (its scrollback offset included).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TerminalView {
    rows: Vec<Vec<vt100::Cell>>,
    cursor: (u16, u16),
    hide_cursor: bool,
}

impl TerminalView {
    /// The `height` rows of at most `width` columns that a pane scrolled back `scroll` lines
    /// shows: when the screen is taller than the pane and not scrolled, the rows that hold
    /// the latest output rather than the top ones.
    pub fn capture(screen: &Screen, scroll: usize, width: u16, height: u16) -> TerminalView {
        screen.read_scrolled(scroll, |screen| {
            let (rows, cols) = screen.size();
            let skip = rows_to_skip(screen, height, scroll > 0);
            let cols = cols.min(width);
            let shown = rows.saturating_sub(skip).min(height);
            let (cursor_row, cursor_col) = screen.cursor_position();
            let scrolled = u16::try_from(screen.scrollback()).unwrap_or(u16::MAX);
            TerminalView {
                rows: (skip..skip + shown)
                    .map(|row| {
                        (0..cols)
                            .filter_map(|col| screen.cell(row, col).cloned())
                            .collect()
                    })
                    .collect(),
                cursor: (
                    cursor_row.saturating_add(scrolled).saturating_sub(skip),
                    cursor_col,
                ),
                hide_cursor: screen.hide_cursor() || scroll > 0,
            }
        })
    }
}

impl TerminalView {
    /// The last row of `screen` that holds text, at most `width` columns (a summary line).
    pub fn last_line(screen: &Screen, width: u16) -> TerminalView {
        screen.read_scrolled(0, |screen| {
            let (_, cols) = screen.size();
            let last = screen
                .rows(0, cols)
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(i, _)| i as u16)
                .last();
            TerminalView {
                rows: last
                    .map(|row| {
                        (0..cols.min(width))
                            .filter_map(|col| screen.cell(row, col).cloned())
                            .collect()
                    })
                    .into_iter()
                    .collect(),
                cursor: (0, 0),
                hide_cursor: true,
            }
        })
    }

    /// Whether no copied cell holds text.
    pub fn is_blank(&self) -> bool {
        self.rows
            .iter()
            .flatten()
            .all(|cell| cell.contents().trim().is_empty())
    }
}

impl tui_term::widget::Screen for TerminalView {
    type C = vt100::Cell;

    fn cell(&self, row: u16, col: u16) -> Option<&vt100::Cell> {
        self.rows.get(usize::from(row))?.get(usize::from(col))
    }

    fn hide_cursor(&self) -> bool {
        self.hide_cursor
    }

    fn cursor_position(&self) -> (u16, u16) {
        self.cursor
    }
}

/// The rows to skip so the last used row (the cursor's, or the last with text) is visible
/// in `height` rows; 0 when everything fits or the view is scrolled back.
fn rows_to_skip(screen: &vt100::Screen, height: u16, scrolled: bool) -> u16 {
    let (rows, cols) = screen.size();
    if scrolled || rows <= height {
        return 0;
    }
    let last_text = screen
        .rows(0, cols)
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, _)| i as u16)
        .last()
        .unwrap_or(0);
    let last_used = last_text.max(screen.cursor_position().0);
    (last_used + 1).saturating_sub(height)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn the_live_clock_ticks_through_quiet_stretches_and_stops_at_the_end() {
        let start = Instant::now();
        let mut clock = LiveClock::new(start);
        assert_eq!(clock.read(3.0, true, Instant::now()), 3.0);
        let mut shown = Vec::new();
        for _ in 0..24 {
            tokio::time::advance(Duration::from_secs(1)).await;
            shown.push(clock.read(3.0, true, Instant::now()));
        }
        // 24 quiet seconds: the clock moved every second, from 00:03 to 00:27.
        assert_eq!(shown.len(), 24);
        assert_eq!(shown.first(), Some(&4.0));
        assert_eq!(shown.last(), Some(&27.0));
        assert!(shown.windows(2).all(|w| w[1] == w[0] + 1.0), "{shown:?}");
        // An event stamped a little earlier than the clock shows never moves it back.
        assert_eq!(clock.read(26.5, true, Instant::now()), 27.0);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(clock.read(26.5, true, Instant::now()), 28.5);
        // Once the session has ended the clock shows the end, however long the screen stays.
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(clock.read(29.0, false, Instant::now()), 29.0);
    }

    #[test]
    fn an_answer_shows_for_a_few_seconds_and_an_activity_counts_its_seconds() {
        let mut state = SessionState::new();
        state.apply(
            10.0,
            &crate::event::Event::Declined {
                command: crate::event::KeyedCommand::Rerun,
                reason: "phase 1 is being verified now".into(),
            },
        );
        state.apply(
            11.0,
            &crate::event::Event::Note {
                text: "building environment: pip install jax".into(),
            },
        );
        let view = App::new(true);
        let layout = FrameLayout::of(Rect::new(0, 0, 120, 40), &view);
        let mut scene = Scene::capture(&state, &view, &layout);
        scene.now = 13.0;
        assert_eq!(
            scene.notice_text(&view),
            Some("r: not now: phase 1 is being verified now")
        );
        assert_eq!(
            scene.activity_line().as_deref(),
            Some("⠸ building environment: pip install jax (2 s)")
        );
        scene.now = 14.5;
        assert_eq!(scene.notice_text(&view), None);
        scene.now = 45.0;
        assert!(scene.activity_line().unwrap().ends_with("(34 s)"));
    }

    /// The key's own answer (`i: not now`, given by the view) shows until the session
    /// answers a key pressed after it (`r: not now`): the newer of the two.
    #[test]
    fn the_newer_answer_shows_whoever_gave_it() {
        let declined = |t: f64, command| {
            let mut state = SessionState::new();
            state.apply(
                t,
                &crate::event::Event::Declined {
                    command,
                    reason: "not here".into(),
                },
            );
            state
        };
        let mut view = App::new(true);
        let layout = FrameLayout::of(Rect::new(0, 0, 120, 40), &view);
        // p answered by the session at 5.0, then i answered by the view at 5.0.
        let before = declined(5.0, crate::event::KeyedCommand::TogglePause);
        view.notify("i: not now: the details were sent", before.now);
        let mut scene = Scene::capture(&before, &view, &layout);
        scene.now = 5.5;
        assert_eq!(
            scene.notice_text(&view),
            Some("i: not now: the details were sent")
        );
        // r pressed after it, answered by the session at 5.2.
        let after = declined(5.2, crate::event::KeyedCommand::Rerun);
        let mut scene = Scene::capture(&after, &view, &layout);
        scene.now = 5.5;
        assert_eq!(scene.notice_text(&view), Some("r: not now: not here"));
    }
}

//! The TUI's own state (focus, zoom, scroll, popups, attach mode) and what keys and mouse
//! events do. Commands for the session go out as actions; the UI never changes the session
//! state itself.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use tokio::time::Instant;

use crate::event::{Command, KeyedCommand};
use crate::session::state::SessionState;

use super::editor::{Editor, EditorOutcome};
use super::keymap::{self, KeyAction, Situation};

/// The five panes, in the order of keys `1`…`5`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneId {
    /// The agent's terminal.
    Agent,
    /// The side-by-side diff.
    Diff,
    /// The verify run's terminal.
    RunLog,
    /// Metric charts.
    Metrics,
    /// Verdicts.
    Verdict,
}

impl PaneId {
    /// All panes in order.
    pub const ALL: [PaneId; 5] = [
        PaneId::Agent,
        PaneId::Diff,
        PaneId::RunLog,
        PaneId::Metrics,
        PaneId::Verdict,
    ];

    /// The pane's number, the key that focuses it (`1`…`5`).
    pub fn number(self) -> u8 {
        self as u8 + 1
    }

    /// The pane of a number key (`1`…`5`).
    pub fn of_number(number: u8) -> Option<PaneId> {
        PaneId::ALL
            .get(usize::from(number.checked_sub(1)?))
            .copied()
    }

    /// The pane after this one, the last followed by the first.
    pub fn next(self) -> PaneId {
        PaneId::ALL[(self as usize + 1) % PaneId::ALL.len()]
    }

    /// The pane before this one, the first preceded by the last.
    pub fn previous(self) -> PaneId {
        PaneId::ALL[(self as usize + PaneId::ALL.len() - 1) % PaneId::ALL.len()]
    }

    /// The pane's title.
    pub fn title(self) -> &'static str {
        match self {
            PaneId::Agent => "Agent",
            PaneId::Diff => "Diff",
            PaneId::RunLog => "Run log",
            PaneId::Metrics => "Metrics",
            PaneId::Verdict => "Verdict",
        }
    }
}

/// One value per pane, indexed by [`PaneId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PaneMap<T>([T; 5]);

impl<T> PaneMap<T> {
    /// The map holding `value(pane)` for each pane.
    pub fn from_fn(value: impl FnMut(PaneId) -> T) -> PaneMap<T> {
        PaneMap(PaneId::ALL.map(value))
    }

    /// Each pane with its value, in the order of [`PaneId::ALL`].
    pub fn iter(&self) -> impl Iterator<Item = (PaneId, &T)> {
        PaneId::ALL.into_iter().zip(&self.0)
    }
}

impl<T> std::ops::Index<PaneId> for PaneMap<T> {
    type Output = T;

    fn index(&self, pane: PaneId) -> &T {
        &self.0[pane as usize]
    }
}

impl<T> std::ops::IndexMut<PaneId> for PaneMap<T> {
    fn index_mut(&mut self, pane: PaneId) -> &mut T {
        &mut self.0[pane as usize]
    }
}

/// Which editor is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditorPurpose {
    /// The phase-two details.
    Inject,
    /// A message to the agent.
    Message,
}

/// What a confirmation asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmWhat {
    /// Abort the run.
    Abort,
    /// Quit while something runs.
    Quit,
}

/// An overlay over the panes.
#[derive(Debug, Clone, PartialEq)]
pub enum Popup {
    /// The key help, scrolled down this many rows (where the screen is shorter than it).
    Help(u16),
    /// The multi-line editor.
    Editor(Editor, EditorPurpose),
    /// A y/n question.
    Confirm(ConfirmWhat),
}

/// A replay's playback control.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlaybackControl {
    /// Play or pause (from the start again once at the end).
    PlayPause,
    /// Move by this many seconds.
    Seek(f64),
    /// The next faster or slower speed.
    Speed {
        /// Faster rather than slower.
        faster: bool,
    },
    /// To the next or previous phase change or verdict.
    Jump {
        /// Forward rather than back.
        forward: bool,
    },
}

/// Columns `h`/`l` scroll the Diff pane's code by.
pub const DIFF_SIDEWAYS_STEP: usize = 8;

/// How long the status line shows an answer to a key.
pub const NOTICE_FOR: Duration = Duration::from_secs(4);

/// A key's answer in the status line: why it did nothing here, and what works instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// The line.
    pub text: String,
    /// When it goes away.
    pub until: Instant,
    /// The session's time when it was given: the session's own answer to a later key is
    /// newer and shows instead.
    pub session_at: f64,
}

/// A file (and line) of the port the Diff pane should show next, asked for from the Verdict
/// pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffTarget {
    /// The file, relative to the repository root.
    pub path: String,
    /// The 1-based line to bring into view and mark, when the finding or the parity probe
    /// names one.
    pub line: Option<u32>,
}

/// A line the Diff pane marks (▶ in the new side's gutter) in one file, shown whole so that
/// the line is never folded away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffMark {
    /// The file, relative to the repository root.
    pub path: String,
    /// The 1-based line in the workspace's version of the file.
    pub line: u32,
    /// Whether the pane has scrolled it into view yet (it does once, then scrolls freely).
    pub scrolled: bool,
}

/// What the UI loop must do after an input.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send a command to the session.
    Send(Command),
    /// Control a replay's playback.
    Playback(PlaybackControl),
    /// Leave a replay to re-run verify and grade on the run's workspace.
    Regrade,
    /// Leave the TUI.
    Quit,
}

/// The TUI's view state.
#[derive(Debug, Clone)]
pub struct App {
    /// The focused pane.
    pub focus: PaneId,
    /// Whether the focused pane fills the screen.
    pub zoom: bool,
    /// Lines scrolled back from the end, per pane (0 = follow the end).
    pub scroll: PaneMap<usize>,
    /// The open overlay.
    pub popup: Option<Popup>,
    /// Whether keys go to the agent's terminal.
    pub attached: bool,
    /// Selected file in the Diff pane.
    pub diff_file: usize,
    /// Diff against the agent's previous version instead of the source.
    pub diff_against_previous: bool,
    /// Columns of code the Diff pane is scrolled right by (`h`/`l`).
    pub diff_column: usize,
    /// Where each pane was last drawn (for the mouse).
    pub pane_rects: PaneMap<Rect>,
    /// Whether this is a live session (false in replay: no commands).
    pub live: bool,
    /// A file the Diff pane should show next (set from a Verdict finding).
    pub diff_goto: Option<DiffTarget>,
    /// The line the Diff pane marks, set with [`App::diff_goto`] when it names a line.
    pub diff_mark: Option<DiffMark>,
    /// How many findings with files have been visited with Enter in the Verdict pane.
    pub finding_cursor: usize,
    /// Whether the Agent pane shows the prompts and the agent's transcript instead of its
    /// terminal (`t`).
    pub agent_transcript: bool,
    /// The answer to the last key that did nothing, while it shows.
    pub notice: Option<Notice>,
    /// The phase-two details as last sent with `i` (the editor reopens with them).
    pub sent_details: Option<String>,
}

impl Default for App {
    fn default() -> Self {
        App::new(true)
    }
}

impl App {
    /// A fresh view.
    pub fn new(live: bool) -> App {
        App {
            focus: PaneId::Agent,
            zoom: false,
            scroll: PaneMap::default(),
            popup: None,
            attached: false,
            diff_file: 0,
            diff_against_previous: false,
            diff_column: 0,
            pane_rects: PaneMap::default(),
            live,
            diff_goto: None,
            diff_mark: None,
            finding_cursor: 0,
            agent_transcript: false,
            notice: None,
            sent_details: None,
        }
    }

    /// Answers a key in the status line for [`NOTICE_FOR`], at `session_at` of the
    /// session's time.
    pub fn notify(&mut self, text: impl Into<String>, session_at: f64) {
        self.notice = Some(Notice {
            text: text.into(),
            until: Instant::now() + NOTICE_FOR,
            session_at,
        });
    }

    /// Drops the key's answer once its time is up; true when one went.
    pub fn expire_notice(&mut self, now: Instant) -> bool {
        let expired = self.notice.as_ref().is_some_and(|n| now >= n.until);
        if expired {
            self.notice = None;
        }
        expired
    }

    /// The file (and line) of the next finding (newest phase first) that names a file of the
    /// workspace or the source, cycling; after a phase's findings, the file and line where
    /// the port's parity probe records its first divergent tensor.
    fn next_finding_file(&mut self, state: &SessionState) -> Option<DiffTarget> {
        let files = finding_files(state);
        if files.is_empty() {
            return None;
        }
        let target = files[self.finding_cursor % files.len()].clone();
        self.finding_cursor += 1;
        Some(target)
    }

    /// Scrolls `pane` by `back` lines towards its history (negative: towards the live
    /// end). Terminals count back from the end; the Diff and the Verdict (newest first)
    /// count from the top, so the direction is flipped for them.
    fn scroll_pane(&mut self, pane: PaneId, back: isize) {
        let delta = if matches!(pane, PaneId::Diff | PaneId::Verdict) {
            -back
        } else {
            back
        };
        let s = &mut self.scroll[pane];
        *s = s.saturating_add_signed(delta);
    }

    fn scroll_by(&mut self, back: isize) {
        self.scroll_pane(self.focus, back);
    }

    /// Takes in where the last frame put things: the panes (for the mouse) and the size
    /// (columns, rows) of the editor's text area (which wraps at its width and scrolls to
    /// keep the cursor in view).
    pub fn settle(&mut self, panes: PaneMap<Rect>, (editor_cols, editor_rows): (u16, u16)) {
        self.pane_rects = panes;
        if let Some(Popup::Editor(editor, _)) = self.popup.as_mut() {
            editor.scroll_to_cursor(usize::from(editor_rows), usize::from(editor_cols));
        }
    }

    /// Handles a pasted string (bracketed paste).
    pub fn on_paste(&mut self, text: &str) -> Vec<Action> {
        if let Some(Popup::Editor(editor, _)) = self.popup.as_mut() {
            editor.paste(text);
            return Vec::new();
        }
        if self.attached {
            let bytes = crate::pty::bracketed_paste(text);
            return vec![Action::Send(Command::AgentInput(bytes))];
        }
        Vec::new()
    }

    /// Handles a mouse event: the wheel scrolls the pane under the pointer, a click focuses it.
    pub fn on_mouse(&mut self, mouse: MouseEvent) {
        let at = Position::new(mouse.column, mouse.row);
        let Some((pane, _)) = self.pane_rects.iter().find(|(_, r)| r.contains(at)) else {
            return;
        };
        match mouse.kind {
            MouseEventKind::ScrollUp => self.scroll_pane(pane, 3),
            MouseEventKind::ScrollDown => self.scroll_pane(pane, -3),
            MouseEventKind::Down(_) => self.focus = pane,
            _ => {}
        }
    }

    /// Handles a key; returns what the loop must do. Popups take keys first; otherwise the
    /// key table ([`keymap::BINDINGS`]) decides, and while attached every other key goes to
    /// the agent's terminal.
    pub fn on_key(&mut self, key: KeyEvent, state: &SessionState) -> Vec<Action> {
        if let Some(popup) = self.popup.as_mut() {
            return match popup {
                Popup::Help(scroll) => {
                    // The scrolling keys scroll a help taller than the screen; any other closes.
                    match key.code {
                        KeyCode::Down | KeyCode::Char('j') => *scroll = scroll.saturating_add(1),
                        KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
                        KeyCode::PageDown => *scroll = scroll.saturating_add(10),
                        KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                        _ => self.popup = None,
                    }
                    Vec::new()
                }
                Popup::Editor(editor, purpose) => {
                    let purpose = *purpose;
                    match editor.on_key(key) {
                        EditorOutcome::Editing => Vec::new(),
                        EditorOutcome::Cancel => {
                            self.popup = None;
                            Vec::new()
                        }
                        EditorOutcome::Submit(text) => {
                            self.popup = None;
                            let command = match purpose {
                                EditorPurpose::Inject => {
                                    self.sent_details = Some(text.clone());
                                    Command::Inject(text)
                                }
                                EditorPurpose::Message => Command::Message(text),
                            };
                            vec![Action::Send(command)]
                        }
                    }
                }
                Popup::Confirm(what) => {
                    let what = *what;
                    self.popup = None;
                    match (key.code, what) {
                        (KeyCode::Char('y' | 'Y'), ConfirmWhat::Abort) => {
                            vec![Action::Send(Command::Abort)]
                        }
                        (KeyCode::Char('y' | 'Y'), ConfirmWhat::Quit) => vec![Action::Quit],
                        _ => Vec::new(),
                    }
                }
            };
        }
        let situation = Situation::of(self.attached, self.live, state.finished.is_some());
        if let Some(binding) = keymap::lookup(&key, situation) {
            return self.perform(binding.action, &key, state);
        }
        if self.attached {
            let app_cursor = state.agent_screen.screen().application_cursor();
            return super::keys::key_bytes(&key, app_cursor)
                .map(|b| vec![Action::Send(Command::AgentInput(b))])
                .unwrap_or_default();
        }
        Vec::new()
    }

    /// Carries out a binding's action for `key`.
    fn perform(&mut self, action: KeyAction, key: &KeyEvent, state: &SessionState) -> Vec<Action> {
        let send = |command| vec![Action::Send(command)];
        let playback = |control| vec![Action::Playback(control)];
        match action {
            KeyAction::FocusNext => self.focus = self.focus.next(),
            KeyAction::FocusPrevious => self.focus = self.focus.previous(),
            KeyAction::FocusNumber => {
                if let KeyCode::Char(c @ '1'..='5') = key.code
                    && let Some(pane) = PaneId::of_number(c as u8 - b'0')
                {
                    self.focus = pane;
                }
            }
            KeyAction::Zoom => self.zoom = !self.zoom,
            KeyAction::Help => self.popup = Some(Popup::Help(0)),
            KeyAction::Quit => {
                if self.live && state.finished.is_none() {
                    self.popup = Some(Popup::Confirm(ConfirmWhat::Quit));
                } else {
                    return vec![Action::Quit];
                }
            }
            KeyAction::ConfirmQuit => self.popup = Some(Popup::Confirm(ConfirmWhat::Quit)),
            KeyAction::Scroll(back) => self.scroll_by(back),
            KeyAction::ScrollToStart | KeyAction::ScrollToEnd => {
                let to_start = action == KeyAction::ScrollToStart;
                let far = if to_start == (self.focus == PaneId::Diff) {
                    0
                } else {
                    usize::MAX / 2
                };
                self.scroll[self.focus] = far;
            }
            KeyAction::PreviousFile => {
                self.diff_file = self.diff_file.saturating_sub(1);
                self.scroll[PaneId::Diff] = 0;
                self.diff_mark = None;
            }
            KeyAction::NextFile => {
                self.diff_file = self.diff_file.saturating_add(1);
                self.scroll[PaneId::Diff] = 0;
                self.diff_mark = None;
            }
            KeyAction::ToggleDiffBase => self.diff_against_previous = !self.diff_against_previous,
            KeyAction::ScrollDiffSideways(right) => {
                self.diff_column = if right {
                    self.diff_column + DIFF_SIDEWAYS_STEP
                } else {
                    self.diff_column.saturating_sub(DIFF_SIDEWAYS_STEP)
                };
            }
            KeyAction::OpenFinding => {
                if self.focus != PaneId::Verdict {
                    self.notify(
                        "Enter opens a finding's file from the Verdict pane (5)",
                        state.now,
                    );
                } else if let Some(target) = self.next_finding_file(state) {
                    self.diff_goto = Some(target);
                    self.focus = PaneId::Diff;
                    self.zoom = false;
                } else {
                    self.notify("Enter: no finding names a file of this run", state.now);
                }
            }
            KeyAction::ToggleTranscript => {
                self.agent_transcript = !self.agent_transcript;
                self.scroll[PaneId::Agent] = 0;
            }
            KeyAction::Attach => {
                if state.agent_running {
                    self.attached = true;
                    self.focus = PaneId::Agent;
                } else if state.phases.iter().any(|p| p.prompt.is_some()) {
                    self.notify("a: the agent has exited; t shows what it said", state.now);
                } else {
                    self.notify("a: no agent is running yet", state.now);
                }
            }
            KeyAction::Detach => self.attached = false,
            KeyAction::Session(KeyedCommand::Inject) => {
                if let Some(why) = state.declined(KeyedCommand::Inject) {
                    self.notify(format!("i: not now: {why}"), state.now);
                } else {
                    let text = self
                        .sent_details
                        .as_deref()
                        .unwrap_or(&state.task.phase2_details);
                    self.popup = Some(Popup::Editor(Editor::new(text), EditorPurpose::Inject));
                }
            }
            KeyAction::Session(KeyedCommand::Message) => {
                if let Some(why) = state.declined(KeyedCommand::Message) {
                    self.notify(format!("m: not now: {why}"), state.now);
                } else {
                    self.popup = Some(Popup::Editor(Editor::new(""), EditorPurpose::Message));
                }
            }
            KeyAction::Session(KeyedCommand::Abort) => {
                self.popup = Some(Popup::Confirm(ConfirmWhat::Abort));
            }
            KeyAction::Session(command) => return send(command.command()),
            KeyAction::PlayPause => return playback(PlaybackControl::PlayPause),
            KeyAction::Seek(seconds) => return playback(PlaybackControl::Seek(seconds)),
            KeyAction::Speed(faster) => return playback(PlaybackControl::Speed { faster }),
            KeyAction::Jump(forward) => return playback(PlaybackControl::Jump { forward }),
            KeyAction::Regrade => return vec![Action::Regrade],
        }
        Vec::new()
    }
}

/// The files (and lines) the findings of the session name, newest phase first, each a file
/// of the workspace or the source: where Enter in the Verdict pane goes, in turn.
pub(super) fn finding_files(state: &SessionState) -> Vec<DiffTarget> {
    state
        .phases
        .iter()
        .rev()
        .flat_map(|p| {
            let findings = p.verdict.as_ref().map(verdict_files).unwrap_or_default();
            findings.into_iter().chain(parity_file(p))
        })
        .filter(|f| state.files.contains_key(&f.path) || state.baseline.contains_key(&f.path))
        .collect()
}

/// The file and line (of the port) where a phase's parity probe recorded its first
/// divergent tensor.
fn parity_file(phase: &crate::session::state::PhaseRecord) -> Option<DiffTarget> {
    let report = phase.parity.as_ref()?;
    let first = report.first_divergent.as_ref()?;
    let tensor = report.tensors.iter().find(|t| t.name == first.name)?;
    let at = tensor.port_location.as_ref()?;
    Some(DiffTarget {
        path: at.file.clone(),
        line: Some(at.line),
    })
}

/// The files (and lines) a verdict's findings name, in order: from the typed records, or for
/// journals of xstack 0.1 (which have none) nothing.
fn verdict_files(verdict: &crate::grade::Verdict) -> Vec<DiffTarget> {
    verdict
        .finding_records
        .iter()
        .filter_map(|r| {
            Some(DiffTarget {
                path: r.file.as_ref()?.trim_end_matches('/').to_string(),
                line: r.line,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::{Finding, FindingKind};
    use crossterm::event::KeyModifiers;

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn focus_zoom_and_step_keys() {
        let state = SessionState::new();
        let mut app = App::new(true);
        app.on_key(key('3'), &state);
        assert_eq!(app.focus, PaneId::RunLog);
        app.on_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE), &state);
        assert_eq!(app.focus, PaneId::Metrics);
        app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT), &state);
        app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT), &state);
        assert_eq!(app.focus, PaneId::Diff);
        app.on_key(key('z'), &state);
        assert!(app.zoom);
        assert_eq!(app.on_key(key('n'), &state), [Action::Send(Command::Next)]);
        assert_eq!(
            app.on_key(key('p'), &state),
            [Action::Send(Command::TogglePause)]
        );
    }

    #[test]
    fn focus_cycles_through_the_five_panes_both_ways_and_numbers_name_them() {
        let mut forward = vec![PaneId::Verdict];
        let mut back = vec![PaneId::Agent];
        for _ in 0..5 {
            forward.push(forward[forward.len() - 1].next());
            back.push(back[back.len() - 1].previous());
        }
        // From the last pane on: every pane once, in order, back to the last.
        assert_eq!(forward[1..], PaneId::ALL);
        let mut reversed = PaneId::ALL;
        reversed.reverse();
        assert_eq!(back[1..], reversed);
        for pane in PaneId::ALL {
            assert_eq!(PaneId::of_number(pane.number()), Some(pane));
            assert_eq!(pane.next().previous(), pane);
        }
        assert_eq!(PaneId::of_number(0), None);
        assert_eq!(PaneId::of_number(6), None);
        let map = PaneMap::from_fn(PaneId::number);
        assert_eq!(map[PaneId::RunLog], 3);
        assert_eq!(
            map.iter().map(|(pane, n)| (pane, *n)).collect::<Vec<_>>(),
            PaneId::ALL.map(|p| (p, p.number()))
        );
    }

    #[test]
    fn inject_editor_is_prefilled_and_sends() {
        let mut state = SessionState::new();
        state.task.phase2_details = "learning rate 1e-3".into();
        let mut app = App::new(true);
        app.on_key(key('i'), &state);
        let Some(Popup::Editor(editor, EditorPurpose::Inject)) = &app.popup else {
            panic!("no editor")
        };
        assert_eq!(editor.text(), "learning rate 1e-3");
        app.on_key(key('!'), &state);
        let sent = app.on_key(
            KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL),
            &state,
        );
        assert_eq!(
            sent,
            [Action::Send(Command::Inject("learning rate 1e-3!".into()))]
        );
        assert!(app.popup.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn keys_that_do_nothing_here_say_why_for_a_few_seconds() {
        let mut state = SessionState::new();
        let mut app = App::new(true);
        let text = |app: &App| app.notice.as_ref().map(|n| n.text.clone());
        // `a` with no agent running.
        assert!(app.on_key(key('a'), &state).is_empty());
        assert!(!app.attached);
        assert_eq!(text(&app).as_deref(), Some("a: no agent is running yet"));
        state.phase_mut(1).prompt = Some("port it".into());
        app.on_key(key('a'), &state);
        assert_eq!(
            text(&app).as_deref(),
            Some("a: the agent has exited; t shows what it said")
        );
        // Enter in the Verdict pane with no finding that names a file.
        app.focus = PaneId::Verdict;
        assert!(
            app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), &state)
                .is_empty()
        );
        assert_eq!(
            text(&app).as_deref(),
            Some("Enter: no finding names a file of this run")
        );
        assert_eq!(app.focus, PaneId::Verdict);
        // The answer goes after a few seconds.
        tokio::time::advance(NOTICE_FOR - Duration::from_millis(1)).await;
        assert!(!app.expire_notice(Instant::now()));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(app.expire_notice(Instant::now()));
        assert_eq!(app.notice, None);
        // `i` where the policy declines it opens no editor, and says the policy's reason.
        state.apply(
            state.now,
            &crate::event::Event::Answers {
                answers: vec![crate::event::Answer {
                    command: KeyedCommand::Inject,
                    declined: Some(
                        "phase two has started: its details went with its prompt".to_string(),
                    ),
                }],
            },
        );
        app.on_key(key('i'), &state);
        assert!(app.popup.is_none());
        assert_eq!(
            text(&app).as_deref(),
            Some("i: not now: phase two has started: its details went with its prompt")
        );
    }

    #[test]
    fn the_details_editor_reopens_with_what_was_sent() {
        let mut state = SessionState::new();
        state.task.phase2_details = "lr 1e-3".into();
        let mut app = App::new(true);
        app.on_key(key('i'), &state);
        app.on_key(key('!'), &state);
        app.on_key(
            KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL),
            &state,
        );
        app.on_key(key('i'), &state);
        let Some(Popup::Editor(editor, EditorPurpose::Inject)) = &app.popup else {
            panic!("no editor")
        };
        assert_eq!(editor.text(), "lr 1e-3!");
    }

    #[test]
    fn quit_and_abort_ask_first_while_running() {
        let state = SessionState::new();
        let mut app = App::new(true);
        assert!(app.on_key(key('q'), &state).is_empty());
        assert_eq!(app.popup, Some(Popup::Confirm(ConfirmWhat::Quit)));
        assert!(app.on_key(key('n'), &state).is_empty());
        assert!(app.popup.is_none());
        app.on_key(key('x'), &state);
        assert_eq!(app.on_key(key('y'), &state), [Action::Send(Command::Abort)]);
    }

    #[test]
    fn enter_in_the_verdict_pane_opens_each_finding_file_in_the_diff_pane() {
        use crate::event::{Event, FileContent};
        use crate::grade::{FailureClass, Verdict};
        let mut state = SessionState::new();
        let file = |p: &str| FileContent {
            path: p.into(),
            text: Some(String::new()),
            size: 0,
        };
        state.apply(
            0.0,
            &Event::Baseline {
                files: vec![file("train.py"), file("eval.py")],
            },
        );
        state.apply(
            1.0,
            &Event::Graded {
                phase: 1,
                verdict: Verdict {
                    failure: Some(FailureClass::Bypass),
                    criteria: vec![],
                    findings: vec![],
                    finding_records: vec![
                        Finding::at(
                            FindingKind::ForbiddenImport,
                            "train.py",
                            Some(3),
                            "train.py:3: imports forbidden module `torch`".into(),
                        ),
                        Finding::other(FindingKind::Other, "the run exited with status 1".into()),
                        Finding::at(
                            FindingKind::ProtectedChanged,
                            "eval.py",
                            None,
                            "protected file eval.py was changed by the agent".into(),
                        ),
                    ],
                    verify_confined: Some(true),
                    unconfined: None,
                },
                exit_code: Some(1),
                duration_s: 1.0,
            },
        );
        let mut app = App::new(true);
        app.on_key(key('5'), &state);
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), &state);
        // The finding's line goes with its file; a finding without one opens the file's top.
        assert_eq!(
            app.diff_goto,
            Some(DiffTarget {
                path: "train.py".into(),
                line: Some(3)
            })
        );
        assert_eq!(app.focus, PaneId::Diff);
        app.on_key(key('5'), &state);
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), &state);
        assert_eq!(
            app.diff_goto,
            Some(DiffTarget {
                path: "eval.py".into(),
                line: None
            })
        );
    }

    #[test]
    fn enter_in_verdict_opens_the_file_where_the_port_records_the_first_divergent_tensor() {
        use crate::event::{Event, FileContent};
        use crate::parity::{Location, Tensor, Values, compare};
        let mut state = SessionState::new();
        let file = |path: &str| FileContent {
            path: path.into(),
            text: Some(String::new()),
            size: 0,
        };
        state.apply(
            0.0,
            &Event::Baseline {
                files: vec![file("train.py"), file("probe.py")],
            },
        );
        let tensor = |value: f64| Tensor {
            name: "logits".into(),
            shape: vec![1],
            dtype: "float32".into(),
            values: Values::Float(vec![value]),
            location: Some(Location {
                file: "probe.py".into(),
                line: 9,
            }),
        };
        state.apply(
            1.0,
            &Event::Parity {
                phase: 1,
                report: compare(&[tensor(1.0)], &[tensor(2.0)], 1e-4, 1e-5),
            },
        );
        let mut app = App::new(true);
        app.on_key(key('5'), &state);
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), &state);
        assert_eq!(
            app.diff_goto,
            Some(DiffTarget {
                path: "probe.py".into(),
                line: Some(9)
            })
        );
        assert_eq!(app.focus, PaneId::Diff);
    }

    #[test]
    fn t_toggles_the_agent_transcript_also_in_replay() {
        let state = SessionState::new();
        let mut app = App::new(false);
        assert!(app.on_key(key('t'), &state).is_empty());
        assert!(app.agent_transcript);
        app.on_key(key('t'), &state);
        assert!(!app.agent_transcript);
    }

    #[test]
    fn attach_forwards_keys_until_ctrl_bracket() {
        let mut state = SessionState::new();
        state.agent_running = true;
        let mut app = App::new(true);
        app.on_key(key('a'), &state);
        assert!(app.attached);
        assert_eq!(
            app.on_key(key('q'), &state),
            [Action::Send(Command::AgentInput(b"q".to_vec()))]
        );
        assert!(
            app.on_key(
                KeyEvent::new(KeyCode::Char(']'), KeyModifiers::CONTROL),
                &state
            )
            .is_empty()
        );
        assert!(!app.attached);
    }

    #[test]
    fn ctrl_5_detaches_as_ctrl_bracket_does() {
        let mut state = SessionState::new();
        state.agent_running = true;
        let mut app = App::new(true);
        app.on_key(key('a'), &state);
        assert!(app.attached);
        // What crossterm reports for the byte 0x1d a terminal sends for Ctrl-].
        let sent = app.on_key(
            KeyEvent::new(KeyCode::Char('5'), KeyModifiers::CONTROL),
            &state,
        );
        assert!(sent.is_empty(), "{sent:?}");
        assert!(!app.attached);
    }

    #[test]
    fn replay_keys_are_playback_actions_and_live_ones_do_nothing_there() {
        let state = SessionState::new();
        let mut app = App::new(false);
        let cases = [
            (key(' '), Action::Playback(PlaybackControl::PlayPause)),
            (
                KeyEvent::new(KeyCode::Left, KeyModifiers::NONE),
                Action::Playback(PlaybackControl::Seek(-5.0)),
            ),
            (
                KeyEvent::new(KeyCode::Right, KeyModifiers::NONE),
                Action::Playback(PlaybackControl::Seek(5.0)),
            ),
            (
                key('>'),
                Action::Playback(PlaybackControl::Speed { faster: true }),
            ),
            (
                key('<'),
                Action::Playback(PlaybackControl::Speed { faster: false }),
            ),
            (
                key('.'),
                Action::Playback(PlaybackControl::Jump { forward: true }),
            ),
            (
                key(','),
                Action::Playback(PlaybackControl::Jump { forward: false }),
            ),
            (key('r'), Action::Regrade),
            (key('q'), Action::Quit),
        ];
        for (k, action) in cases {
            assert_eq!(app.on_key(k, &state), [action], "{k:?}");
        }
        for c in ['n', 's', 'p', 'x', 'o', 'a'] {
            assert!(app.on_key(key(c), &state).is_empty(), "{c}");
            assert!(app.popup.is_none() && !app.attached, "{c}");
        }
        // A live session has no playback: Space does nothing there.
        assert!(App::new(true).on_key(key(' '), &state).is_empty());
    }
}

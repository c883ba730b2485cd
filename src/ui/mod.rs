//! The TUI: a view of the session state and a source of commands, never a second engine.
//! One loop serves a live session and a replay alike: its source is either the session's
//! shared state or a [`Player`], and playback controls are actions like any other. The loop
//! draws only when something changed, at most 60 frames a second, inside synchronized
//! updates; keys, mouse and paste come from an input thread.

pub mod app;
pub mod draw;
pub mod editor;
pub mod keymap;
pub mod keys;
pub mod layout;
pub mod panes;
pub mod picker;
pub mod scene;
pub mod terminal;
pub mod text;
pub mod theme;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyEventKind};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::layout::{Rect, Size};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::event::{Command, Interruption, Mode};
use crate::replay::Player;
use crate::session::recorder::{SharedState, lock};
use crate::session::state::SessionState;

use app::{Action, App, PlaybackControl};
use panes::diff::DiffPane;
use scene::{LiveClock, Playback, Scene};
use terminal::Tui;
use theme::Theme;

/// How often a replay's playback advances.
const PLAYBACK_TICK: Duration = Duration::from_millis(33);

/// Shortest time between two frames (60 frames a second).
pub const FRAME_INTERVAL: Duration = Duration::from_micros(16_667);

/// Decides when to draw: only when something changed, and not sooner than one frame
/// interval after the previous draw.
#[derive(Debug, Clone)]
pub struct FrameLimiter {
    dirty: bool,
    last_draw: Option<Instant>,
}

impl Default for FrameLimiter {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameLimiter {
    /// Starts dirty, so the first frame is drawn at once.
    pub fn new() -> FrameLimiter {
        FrameLimiter {
            dirty: true,
            last_draw: None,
        }
    }

    /// Something changed.
    pub fn mark(&mut self) {
        self.dirty = true;
    }

    /// When the next frame is due; None when nothing changed.
    pub fn due(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(match self.last_draw {
            Some(t) => t + FRAME_INTERVAL,
            None => Instant::now(),
        })
    }

    /// A frame was drawn.
    pub fn drawn(&mut self, at: Instant) {
        self.dirty = false;
        self.last_draw = Some(at);
    }
}

/// Reads terminal input on its own thread until `stop` is set.
pub(crate) fn spawn_input_thread(stop: Arc<AtomicBool>) -> mpsc::UnboundedReceiver<TermEvent> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match crossterm::event::poll(Duration::from_millis(50)) {
                Ok(true) => match crossterm::event::read() {
                    Ok(ev) => {
                        if tx.send(ev).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                },
                Ok(false) => {}
                Err(_) => break,
            }
        }
    });
    rx
}

/// A live session, as the loop shows it.
pub struct Live {
    /// The session state.
    pub state: SharedState,
    /// Signalled when the state changes.
    pub changed: watch::Receiver<u64>,
    /// Where commands go.
    pub commands: mpsc::Sender<Command>,
    /// The running driver, whose result is the exit status.
    pub driver: JoinHandle<i32>,
    /// When the process started (the first frame's delay is logged).
    pub started: std::time::Instant,
}

/// What the loop shows: a live session, or a recorded one played back.
pub enum Source {
    /// A live session.
    Live(Live),
    /// A recorded session.
    Replay(Box<Player>),
}

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The live session ended with this exit status (None: its driver was lost).
    Session(Option<i32>),
    /// The user left a replay.
    Quit,
    /// The user asked from a replay to re-run verify and grade on the run's workspace.
    Regrade,
}

/// Where the state comes from: the live session's shared state or the player's.
enum Feed {
    Live(SharedState),
    Replay(Box<Player>),
}

impl Feed {
    /// Reads the state (for a live session, under its lock, for as long as `read` runs).
    fn read<R>(&self, read: impl FnOnce(&SessionState) -> R) -> R {
        match self {
            Feed::Live(state) => read(&lock(state)),
            Feed::Replay(player) => read(player.state()),
        }
    }
}

/// Carries out a playback control on `player`.
fn control(player: &mut Player, control: PlaybackControl) {
    match control {
        PlaybackControl::PlayPause => {
            if player.at_end() {
                player.seek(0.0);
            }
            player.playing = !player.playing;
        }
        PlaybackControl::Seek(seconds) => player.seek(player.position() + seconds),
        PlaybackControl::Speed { faster } => player.change_speed(faster),
        PlaybackControl::Jump { forward } => player.jump(forward),
    }
}

/// What the loop keeps from one turn to the next, besides the view state: where the state
/// comes from and where commands go, the Diff pane's model, and what the frames need.
struct Turns {
    feed: Feed,
    /// Signalled when a live session's state changes (None in replay or once closed).
    changed: Option<watch::Receiver<u64>>,
    commands: Option<mpsc::Sender<Command>>,
    /// The running driver, until it ends.
    driver: Option<JoinHandle<i32>>,
    /// When the process started (the first frame's delay is logged).
    started: Option<std::time::Instant>,
    /// The driver's result once it ended: its exit status, or None when it failed.
    exit_code: Option<Option<i32>>,
    /// The signal that ended the TUI, if one did.
    interrupted: Option<Interruption>,
    diff: DiffPane,
    diff_results: mpsc::UnboundedReceiver<panes::diff::Built>,
    limiter: FrameLimiter,
    /// The terminals' sizes last sent to the session.
    sizes: ((u16, u16), (u16, u16)),
    /// Whether the last frame waited for the human (the bell rings once when it starts).
    was_waiting: bool,
    frames: u64,
    clock: LiveClock,
    terminal_errors: TerminalErrors,
    /// When replay's playback last advanced.
    last_tick: Instant,
}

impl Turns {
    fn new(source: Source, theme: &Theme) -> Turns {
        let (feed, changed, commands, driver, started) = match source {
            Source::Live(live) => (
                Feed::Live(live.state),
                Some(live.changed),
                Some(live.commands),
                Some(live.driver),
                Some(live.started),
            ),
            Source::Replay(player) => (Feed::Replay(player), None, None, None, None),
        };
        let (diff, diff_results) = DiffPane::new(theme.syntax_theme.clone());
        Turns {
            feed,
            changed,
            commands,
            driver,
            started,
            exit_code: None,
            interrupted: None,
            diff,
            diff_results,
            limiter: FrameLimiter::new(),
            sizes: ((0, 0), (0, 0)),
            was_waiting: false,
            frames: 0,
            clock: LiveClock::new(Instant::now()),
            terminal_errors: TerminalErrors::default(),
            last_tick: Instant::now(),
        }
    }

    /// Whether the loop plays a recorded session back.
    fn replay(&self) -> bool {
        matches!(self.feed, Feed::Replay(_))
    }

    /// A key, the mouse or a paste: the view state answers it, and the actions it gives are
    /// carried out. Returns how the loop ends, when the input ends it.
    async fn on_input(&mut self, ev: TermEvent, app: &mut App) -> Option<Ended> {
        let actions = self.feed.read(|state| match ev {
            TermEvent::Key(key) if key.kind != KeyEventKind::Release => app.on_key(key, state),
            TermEvent::Mouse(m) => {
                app.on_mouse(m);
                Vec::new()
            }
            TermEvent::Paste(text) => app.on_paste(&text),
            _ => Vec::new(),
        });
        self.limiter.mark();
        let mut leave = None;
        for action in actions {
            match action {
                Action::Send(cmd) => {
                    if let Some(tx) = &self.commands
                        && tx.send(cmd).await.is_err()
                    {
                        let now = self.feed.read(|state| state.now);
                        app.notify("the session has ended: q leaves", now);
                    }
                }
                Action::Playback(c) => {
                    if let Feed::Replay(player) = &mut self.feed {
                        control(player, c);
                        self.last_tick = Instant::now();
                    }
                }
                Action::Regrade => leave = Some(Ended::Regrade),
                Action::Quit => leave = Some(Ended::Quit),
            }
        }
        leave
    }

    /// The state changed (`open` None: it will not change again).
    fn on_change(&mut self, open: Option<()>) {
        if open.is_none() {
            self.changed = None;
        }
        self.limiter.mark();
    }

    /// The driver ended, with its exit status or an error.
    fn on_driver_end(&mut self, code: Result<i32, tokio::task::JoinError>) {
        self.driver = None;
        self.exit_code = Some(code.ok());
        self.limiter.mark();
    }

    /// A background build of the Diff pane finished.
    fn on_diff_work(&mut self, built: panes::diff::Built) {
        self.diff.accept(built);
        self.limiter.mark();
    }

    /// Replay's playback tick: the player advances by the time since the last one.
    fn on_playback_tick(&mut self) {
        let now = Instant::now();
        if let Feed::Replay(player) = &mut self.feed
            && (player.advance((now - self.last_tick).as_secs_f64()) || player.playing)
        {
            self.limiter.mark();
        }
        self.last_tick = now;
    }

    /// Before a frame: when the terminals' panes changed size, the session's terminals are
    /// resized to them.
    async fn on_resize(&mut self, size: Size, app: &App) {
        let new_sizes = layout::terminal_sizes(size.width, size.height, app);
        if new_sizes == self.sizes {
            return;
        }
        self.sizes = new_sizes;
        let Some(tx) = &self.commands else { return };
        for resize in [
            Command::ResizeAgent(new_sizes.0.0, new_sizes.0.1),
            Command::ResizeRun(new_sizes.1.0, new_sizes.1.1),
        ] {
            // After the driver ended there is no terminal left to resize.
            if tx.send(resize).await.is_err() {
                tracing::debug!("no driver to resize the terminals for");
            }
        }
    }

    /// What a frame of `size` draws. For a live session the lock is held only to copy what
    /// the frame needs; the view state changes (the Diff pane catching up) only once it is
    /// released.
    fn scene(&mut self, size: Size, app: &mut App) -> Scene {
        let frame_layout = layout::FrameLayout::of(Rect::new(0, 0, size.width, size.height), app);
        let diff = &self.diff;
        let (mut scene, diff_inputs) = self.feed.read(|state| {
            (
                Scene::capture(state, app, &frame_layout),
                diff.read(state, app),
            )
        });
        self.diff.update(diff_inputs, app);
        if let Feed::Replay(player) = &self.feed {
            scene.playback = Some(Playback::of(player));
        } else {
            scene.now = self
                .clock
                .read(scene.now, scene.finished.is_none(), Instant::now());
        }
        scene
    }

    /// After a frame was drawn (or failed to be): the view state takes in where it put
    /// things, and the first frame's delay is logged.
    fn after_frame(
        &mut self,
        app: &mut App,
        drawn: std::io::Result<()>,
        layout: Option<(Rect, layout::FrameLayout)>,
        waiting: bool,
    ) {
        if let Err(e) = drawn {
            self.terminal_errors.report(&e);
        }
        if let Some((area, layout)) = layout {
            let editor = draw::editor_rect(area);
            app.settle(
                layout.targets(),
                (
                    editor.width.saturating_sub(2),
                    editor.height.saturating_sub(2),
                ),
            );
        }
        self.was_waiting = waiting;
        if self.frames == 0
            && let Some(started) = self.started
        {
            tracing::info!(
                "first frame drawn {} ms after start",
                started.elapsed().as_millis()
            );
        }
        self.frames += 1;
        self.limiter.drawn(Instant::now());
        panic_if_asked();
    }

    /// After the loop: a live session is stopped (aborted, or interrupted by the signal that
    /// ended the TUI) and waited for, and its exit status is how the loop ended.
    async fn finish(mut self, ended: Ended) -> Ended {
        if self.replay() {
            return ended;
        }
        if let Some(driver) = self.driver.take() {
            if let Some(tx) = &self.commands {
                let stop = self.interrupted.map_or(Command::Abort, Command::Interrupt);
                if tx.send(stop).await.is_err() {
                    tracing::debug!("the driver ended before it was stopped");
                }
            }
            self.exit_code = Some(driver.await.ok());
        }
        let feed = &self.feed;
        Ended::Session(
            self.exit_code
                .unwrap_or_else(|| feed.read(|s| s.finished.as_ref().map(|f| f.exit_code))),
        )
    }
}

/// Rings the terminal's bell when `ring`.
fn ring_bell(ring: bool) -> std::io::Result<()> {
    if ring {
        std::io::stdout().write_all(b"\x07")?;
        std::io::stdout().flush()?;
    }
    Ok(())
}

/// A hidden trigger for the test that proves the terminal is restored after a panic.
fn panic_if_asked() {
    if std::env::var_os("XSTACK_TEST_PANIC").is_some() {
        panic!("panic requested by XSTACK_TEST_PANIC");
    }
}

/// Runs the TUI until the user quits or the replay is left; a live session is stopped
/// (aborted, or interrupted by the signal that ended the TUI) and waited for.
pub async fn run(terminal: &mut Tui, source: Source, theme: &Theme) -> Ended {
    let mut turns = Turns::new(source, theme);
    let replay = turns.replay();
    let stop = Arc::new(AtomicBool::new(false));
    let mut input = spawn_input_thread(stop.clone());
    let mut app = App::new(!replay);
    let mut signals = Signals::new();
    let mut ticker = tokio::time::interval(PLAYBACK_TICK);
    let mut seconds = tokio::time::interval(Duration::from_secs(1));
    let ended = loop {
        let due = turns.limiter.due();
        tokio::select! {
            ev = input.recv() => {
                let Some(ev) = ev else { break Ended::Quit };
                if let Some(leave) = turns.on_input(ev, &mut app).await {
                    break leave;
                }
            }
            // Once a frame is due, what changes before it is drawn is drawn with it: the
            // state is not watched again until then, so a flood of events wakes this thread
            // once a frame, not once an event.
            open = changed_opt(turns.changed.as_mut()), if due.is_none() => turns.on_change(open),
            code = join_opt(turns.driver.as_mut()) => turns.on_driver_end(code),
            kind = signals.recv() => {
                turns.interrupted = Some(kind);
                break Ended::Quit;
            }
            Some(built) = turns.diff_results.recv() => turns.on_diff_work(built),
            _ = ticker.tick(), if replay => turns.on_playback_tick(),
            // The clock, the spinner and a key's answer move on even when nothing happens.
            _ = seconds.tick(), if !replay => turns.limiter.mark(),
            _ = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                let size = terminal.size().unwrap_or_default();
                turns.on_resize(size, &app).await;
                let scene = turns.scene(size, &mut app);
                app.expire_notice(Instant::now());
                // The bell: step mode waits for the human, or the agent asks something.
                let waiting = match &scene.waiting {
                    Some(crate::event::Waiting::Said(_)) => scene.mode == Mode::Step,
                    waiting => waiting.is_some(),
                };
                let mut layout = None;
                let drawn = crossterm::execute!(std::io::stdout(), BeginSynchronizedUpdate)
                    .and_then(|()| {
                        terminal.draw(|f| {
                            let drawn = draw::draw_scene(f, &scene, &app, &turns.diff, theme);
                            layout = Some((f.area(), drawn));
                        })?;
                        crossterm::execute!(std::io::stdout(), EndSynchronizedUpdate)
                    })
                    .and_then(|()| ring_bell(waiting && !turns.was_waiting));
                turns.after_frame(&mut app, drawn, layout, waiting);
            }
        }
    };
    stop.store(true, Ordering::Relaxed);
    turns.finish(ended).await
}

/// Errors writing to the terminal: logged the first time and counted, not shown (the
/// terminal is what failed); the session goes on.
#[derive(Debug, Default)]
struct TerminalErrors {
    count: u64,
}

impl TerminalErrors {
    fn report(&mut self, error: &std::io::Error) {
        self.count += 1;
        if self.count == 1 {
            tracing::warn!("cannot draw on the terminal: {error}");
        } else if self.count.is_power_of_two() {
            tracing::warn!(
                "cannot draw on the terminal ({} times): {error}",
                self.count
            );
        }
    }
}

/// Waits for the next change of the state, if there is a live one.
async fn changed_opt(changed: Option<&mut watch::Receiver<u64>>) -> Option<()> {
    match changed {
        Some(rx) => rx.changed().await.ok(),
        None => std::future::pending().await,
    }
}

/// Waits for the driver, if there is one.
async fn join_opt(handle: Option<&mut JoinHandle<i32>>) -> Result<i32, tokio::task::JoinError> {
    match handle {
        Some(h) => h.await,
        None => std::future::pending().await,
    }
}

/// SIGTERM, SIGHUP and SIGINT, which end the TUI (and the session) cleanly.
pub(crate) struct Signals {
    streams: Vec<(Interruption, tokio::signal::unix::Signal)>,
}

impl Signals {
    pub(crate) fn new() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        let streams = [
            (Interruption::Terminated, SignalKind::terminate()),
            (Interruption::Hangup, SignalKind::hangup()),
            (Interruption::UserAbort, SignalKind::interrupt()),
        ]
        .into_iter()
        .filter_map(|(kind, k)| Some((kind, signal(k).ok()?)))
        .collect();
        Signals { streams }
    }

    /// Waits for the next of the signals; says which it was.
    pub(crate) async fn recv(&mut self) -> Interruption {
        if self.streams.is_empty() {
            return std::future::pending().await;
        }
        std::future::poll_fn(|cx| {
            for (kind, stream) in self.streams.iter_mut() {
                if stream.poll_recv(cx).is_ready() {
                    return std::task::Poll::Ready(*kind);
                }
            }
            std::task::Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod snapshot_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn frame_limiter_draws_only_on_change_and_at_most_sixty_a_second() {
        let mut limiter = FrameLimiter::new();
        let start = Instant::now();
        assert_eq!(limiter.due(), Some(start));
        limiter.drawn(start);
        assert_eq!(limiter.due(), None, "nothing changed: no frame");
        limiter.mark();
        limiter.mark();
        assert_eq!(limiter.due(), Some(start + FRAME_INTERVAL));
        tokio::time::advance(Duration::from_secs(1)).await;
        let later = Instant::now();
        limiter.drawn(later);
        assert_eq!(limiter.due(), None);
    }
}

//! The TUI: a view of the session state and a source of commands, never a second engine.
//! The loop draws only when something changed, at most 60 frames a second, inside
//! synchronized updates; keys, mouse and paste come from an input thread.

pub mod app;
pub mod diffpane;
pub mod draw;
pub mod editor;
pub mod keys;
pub mod panes;
pub mod picker;
pub mod replay;
pub mod scene;
pub mod terminal;
pub mod theme;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyEventKind};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::layout::Rect;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::session::driver::Command;
use crate::session::event::{Interruption, Mode};
use crate::session::recorder::{SharedState, lock};

use app::{Action, App};
use diffpane::DiffPane;
use scene::Scene;
use terminal::Tui;
use theme::Theme;

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

/// What the loop is showing.
pub struct View {
    /// The session state.
    pub state: SharedState,
    /// Signalled when the state changes.
    pub changed: watch::Receiver<u64>,
    /// Where commands go (None when there is no live session).
    pub commands: Option<mpsc::Sender<Command>>,
    /// The running driver, whose result is the exit status.
    pub driver: Option<JoinHandle<i32>>,
    /// The theme.
    pub theme: Theme,
}

/// Runs the TUI until the user quits; returns the session's exit status.
pub async fn run(terminal: &mut Tui, mut view: View) -> i32 {
    let stop = Arc::new(AtomicBool::new(false));
    let mut input = spawn_input_thread(stop.clone());
    let mut app = App::new(view.commands.is_some());
    let (mut diff, mut diff_results) = DiffPane::new(view.theme.syntax_theme.clone());
    let mut limiter = FrameLimiter::new();
    let mut sizes = ((0, 0), (0, 0));
    let mut was_waiting = false;
    let mut exit_code: Option<i32> = None;
    let mut signals = Signals::new();
    let mut interrupted = None;
    let mut frames: u64 = 0;
    loop {
        let due = limiter.due();
        tokio::select! {
            ev = input.recv() => {
                let Some(ev) = ev else { break };
                let actions = {
                    let state = lock(&view.state);
                    match ev {
                        TermEvent::Key(key) if key.kind != KeyEventKind::Release => app.on_key(key, &state),
                        TermEvent::Mouse(m) => { app.on_mouse(m); Vec::new() }
                        TermEvent::Paste(text) => app.on_paste(&text),
                        _ => Vec::new(),
                    }
                };
                limiter.mark();
                let mut quit = false;
                for action in actions {
                    match action {
                        Action::Send(cmd) => {
                            if let Some(tx) = &view.commands {
                                let _ = tx.send(cmd).await;
                            }
                        }
                        Action::Quit => quit = true,
                    }
                }
                if quit {
                    break;
                }
            }
            _ = view.changed.changed() => limiter.mark(),
            code = join_opt(view.driver.as_mut()) => {
                view.driver = None;
                exit_code = Some(code.unwrap_or(crate::app::EXIT_INFRA));
                limiter.mark();
            }
            kind = signals.recv() => {
                interrupted = Some(kind);
                break;
            }
            Some(built) = diff_results.recv() => {
                diff.accept(built);
                limiter.mark();
            }
            _ = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                let size = terminal.size().unwrap_or_default();
                let area = Rect::new(0, 0, size.width, size.height);
                let new_sizes = draw::terminal_sizes(size.width, size.height, &app);
                if new_sizes != sizes {
                    sizes = new_sizes;
                    if let Some(tx) = &view.commands {
                        let _ = tx.send(Command::ResizeAgent(sizes.0.0, sizes.0.1)).await;
                        let _ = tx.send(Command::ResizeRun(sizes.1.0, sizes.1.1)).await;
                    }
                }
                let panes = draw::FrameLayout::of(area, &app).panes;
                // The lock is held only to copy what the frame needs.
                let scene = {
                    let state = lock(&view.state);
                    diff.update(&state, &mut app);
                    Scene::capture(&state, &app, &panes)
                };
                let waiting = scene.waiting.is_some() && scene.mode == Mode::Step;
                let _ = crossterm::execute!(std::io::stdout(), BeginSynchronizedUpdate);
                let mut layout = None;
                let _ = terminal.draw(|f| {
                    layout = Some((f.area(), draw::draw_scene(f, &scene, &app, &diff, &view.theme)));
                });
                let _ = crossterm::execute!(std::io::stdout(), EndSynchronizedUpdate);
                if let Some((area, layout)) = layout {
                    app.settle(area, &layout);
                }
                if waiting && !was_waiting {
                    let _ = std::io::stdout().write_all(b"\x07");
                    let _ = std::io::stdout().flush();
                }
                was_waiting = waiting;
                if frames == 0 {
                    tracing::info!(
                        "first frame drawn {} ms after start",
                        crate::app::STARTED.elapsed().as_millis()
                    );
                }
                frames += 1;
                limiter.drawn(Instant::now());
                // A hidden trigger for the test that proves the terminal is restored after a panic.
                if std::env::var_os("XSTACK_TEST_PANIC").is_some() {
                    panic!("panic requested by XSTACK_TEST_PANIC");
                }
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(driver) = view.driver.take() {
        if let Some(tx) = &view.commands {
            let stop = interrupted.map_or(Command::Abort, Command::Interrupt);
            let _ = tx.send(stop).await;
        }
        exit_code = Some(driver.await.unwrap_or(crate::app::EXIT_INFRA));
    }
    exit_code.unwrap_or_else(|| {
        lock(&view.state)
            .finished
            .as_ref()
            .map_or(crate::app::EXIT_INFRA, |f| f.exit_code)
    })
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

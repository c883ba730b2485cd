//! The replay TUI: the same panes as a live session, fed from a [`Player`], with playback
//! keys and a timeline bar showing phase markers and the current position.

use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEventKind};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::layout::Rect;
use tokio::time::Instant;

use crate::replay::Player;

use super::app::{Action, App};
use super::diffpane::DiffPane;
use super::scene::{Playback, Scene};
use super::terminal::Tui;
use super::theme::Theme;
use super::{FrameLimiter, Signals, draw, spawn_input_thread};

/// How often playback advances.
const PLAYBACK_TICK: Duration = Duration::from_millis(33);

/// Why the replay ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayExit {
    /// The user quit.
    Quit,
    /// The user asked to re-run verify and grade on the run's workspace.
    Regrade,
}

/// Runs the replay until the user quits.
pub async fn run(terminal: &mut Tui, mut player: Player, theme: &Theme) -> ReplayExit {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut input = spawn_input_thread(stop.clone());
    let mut app = App::new(false);
    let (mut diff, mut diff_results) = DiffPane::new(theme.syntax_theme.clone());
    let mut limiter = FrameLimiter::new();
    let mut signals = Signals::new();
    let mut last_tick = Instant::now();
    let mut ticker = tokio::time::interval(PLAYBACK_TICK);
    let exit = loop {
        let due = limiter.due();
        tokio::select! {
            ev = input.recv() => {
                let Some(ev) = ev else { break ReplayExit::Quit };
                limiter.mark();
                if let TermEvent::Key(key) = &ev
                    && key.kind != KeyEventKind::Release
                    && app.popup.is_none()
                {
                    let handled = match key.code {
                        KeyCode::Char(' ') => {
                            if player.at_end() {
                                player.seek(0.0);
                            }
                            player.playing = !player.playing;
                            last_tick = Instant::now();
                            true
                        }
                        KeyCode::Left => { player.seek(player.position() - 5.0); true }
                        KeyCode::Right => { player.seek(player.position() + 5.0); true }
                        KeyCode::Char('<') => { player.change_speed(false); true }
                        KeyCode::Char('>') => { player.change_speed(true); true }
                        KeyCode::Char(',') => { player.jump(false); true }
                        KeyCode::Char('.') => { player.jump(true); true }
                        KeyCode::Char('r') => break ReplayExit::Regrade,
                        _ => false,
                    };
                    if handled {
                        continue;
                    }
                }
                let actions = match ev {
                    TermEvent::Key(key) if key.kind != KeyEventKind::Release => app.on_key(key, player.state()),
                    TermEvent::Mouse(m) => { app.on_mouse(m); Vec::new() }
                    TermEvent::Paste(text) => app.on_paste(&text),
                    _ => Vec::new(),
                };
                if actions.contains(&Action::Quit) {
                    break ReplayExit::Quit;
                }
            }
            _ = ticker.tick() => {
                let now = Instant::now();
                if player.advance((now - last_tick).as_secs_f64()) || player.playing {
                    limiter.mark();
                }
                last_tick = now;
            }
            Some(built) = diff_results.recv() => {
                diff.accept(built);
                limiter.mark();
            }
            _ = signals.recv() => break ReplayExit::Quit,
            _ = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {
                let size = terminal.size().unwrap_or_default();
                let area = Rect::new(0, 0, size.width, size.height);
                let panes = draw::FrameLayout::of(area, &app).panes;
                diff.update(player.state(), &mut app);
                let mut scene = Scene::capture(player.state(), &app, &panes);
                scene.playback = Some(Playback::of(&player));
                let _ = crossterm::execute!(std::io::stdout(), BeginSynchronizedUpdate);
                let mut layout = None;
                let _ = terminal.draw(|f| {
                    layout = Some((f.area(), draw::draw_scene(f, &scene, &app, &diff, theme)));
                });
                let _ = crossterm::execute!(std::io::stdout(), EndSynchronizedUpdate);
                if let Some((area, layout)) = layout {
                    app.settle(area, &layout);
                }
                limiter.drawn(Instant::now());
            }
        }
    };
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    exit
}

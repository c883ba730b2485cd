//! The replay TUI: the same panes as a live session, fed from a [`Player`], with playback
//! keys and a timeline bar showing phase markers and the current position.

use std::time::Duration;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEventKind};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use tokio::time::Instant;

use crate::replay::Player;

use super::app::{Action, App};
use super::diffpane::DiffPane;
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

/// The timeline bar: play state, position, speed, and a track with phase markers.
pub fn timeline_line<'a>(player: &Player, width: u16, theme: &Theme) -> Line<'a> {
    let c = &theme.colors;
    let head = format!(
        " {} {} / {} ×{} ",
        if player.playing { "▶" } else { "❚❚" },
        draw::clock(player.position()),
        draw::clock(player.end()),
        player.speed
    );
    let track_width = usize::from(width)
        .saturating_sub(head.chars().count() + 2)
        .max(10);
    let end = player.end().max(1e-9);
    let column = |t: f64| ((t / end) * (track_width - 1) as f64).round() as usize;
    let mut cells: Vec<(char, Style)> = vec![('─', Style::default().fg(c.dim)); track_width];
    let here = column(player.position()).min(track_width - 1);
    for cell in cells.iter_mut().take(here) {
        *cell = ('━', Style::default().fg(c.focus));
    }
    for (t, label) in player.markers() {
        let i = column(*t).min(track_width - 1);
        let color = if label.contains("FAIL") {
            c.fail
        } else if label.contains("PASS") {
            c.pass
        } else {
            c.waiting
        };
        cells[i] = ('│', Style::default().fg(color));
    }
    cells[here] = (
        '●',
        Style::default().fg(c.focus).add_modifier(Modifier::BOLD),
    );
    let mut spans = vec![Span::styled(
        head,
        Style::default().fg(c.title).add_modifier(Modifier::BOLD),
    )];
    spans.extend(
        cells
            .into_iter()
            .map(|(ch, st)| Span::styled(ch.to_string(), st)),
    );
    Line::from(spans)
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
                let width = terminal.size().map(|s| s.width).unwrap_or(80);
                let timeline = timeline_line(&player, width, theme);
                diff.update(player.state(), &mut app);
                let extras = draw::Extras { timeline: Some(timeline) };
                let _ = crossterm::execute!(std::io::stdout(), BeginSynchronizedUpdate);
                let state = player.state_mut();
                let _ = terminal.draw(|f| draw::draw(f, state, &mut app, &diff, theme, &extras));
                let _ = crossterm::execute!(std::io::stdout(), EndSynchronizedUpdate);
                limiter.drawn(Instant::now());
            }
        }
    };
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    exit
}

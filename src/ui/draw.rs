//! Drawing one frame from the session state and the view state: the five panes, the phase
//! bar, the status line, the key hint and the overlays. Nothing here parses, diffs or
//! highlights: that happened when the data arrived.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::event::{At, Stage};
use crate::session::state::SessionState;

use super::app::{App, ConfirmWhat, EditorPurpose, PaneId, Popup};
use super::keymap::{self, Situation};
use super::layout::{FrameLayout, SUMMARY_LABEL};
use super::panes::diff::DiffPane;
use super::panes::{self, Pane, PaneContext, Summary};
use super::scene::{Playback, Scene};
use super::theme::Theme;

/// Draws a whole frame of `state` as `view` shows it: copies what the frame needs
/// ([`Scene::capture`]) and draws that ([`draw_scene`]). Returns where everything went.
pub fn draw(
    frame: &mut Frame<'_>,
    state: &SessionState,
    view: &App,
    diff: &DiffPane,
    theme: &Theme,
) -> FrameLayout {
    let layout = FrameLayout::of(frame.area(), view);
    let scene = Scene::capture(state, view, &layout);
    draw_scene(frame, &scene, view, diff, theme)
}

/// Draws a whole frame from its scene: each pane of [`panes::all`] in its rectangle or as
/// its summary line, then the bars and the overlay. Returns where everything went.
pub fn draw_scene(
    frame: &mut Frame<'_>,
    scene: &Scene,
    view: &App,
    diff: &DiffPane,
    theme: &Theme,
) -> FrameLayout {
    let area = frame.area();
    let layout = FrameLayout::of(area, view);
    let cx = PaneContext { scene, view, theme };
    for (id, pane) in panes::all(diff).iter() {
        let line = layout.summaries[id];
        if line.area() > 0 {
            summary(frame, line, id, pane.summary(&cx), theme);
        }
        let rect = layout.panes[id];
        if rect.area() > 0 {
            pane.draw(frame, rect, pane_block(id, *pane, &cx), &cx);
        }
    }
    frame.render_widget(
        Paragraph::new(phase_bar(scene, layout.phase_bar.width, theme)),
        layout.phase_bar,
    );
    if let Some(playback) = &scene.playback {
        frame.render_widget(
            Paragraph::new(timeline_line(playback, layout.timeline.width, theme)),
            layout.timeline,
        );
    }
    frame.render_widget(
        Paragraph::new(status_line(scene, view, theme)),
        layout.status,
    );
    frame.render_widget(
        Paragraph::new(key_hint(&cx, diff, layout.hint.width)),
        layout.hint,
    );
    if let Some(popup) = &view.popup {
        draw_popup(frame, area, popup, scene, theme);
    }
    layout
}

/// A pane's one-line summary on a compact screen: its number and name, then what the pane
/// says of itself ([`Pane::summary`]).
fn summary(frame: &mut Frame<'_>, line: Rect, pane: PaneId, text: Summary<'_>, theme: &Theme) {
    let c = &theme.colors;
    let label = format!(" {} {:<8} ", pane.number(), pane.title());
    let label_rect = Rect::new(line.x, line.y, SUMMARY_LABEL.min(line.width), 1);
    frame.render_widget(
        Paragraph::new(Span::styled(
            label,
            Style::default().fg(c.title).add_modifier(Modifier::BOLD),
        )),
        label_rect,
    );
    let rest = Rect::new(
        line.x + label_rect.width,
        line.y,
        line.width - label_rect.width,
        1,
    );
    match text {
        Summary::Terminal(rows) => {
            panes::terminal(frame, rest, Block::default(), rows, true, (None, c.dim))
        }
        Summary::After(label, rows) => {
            let width = (label.chars().count() as u16).min(rest.width);
            frame.render_widget(
                Paragraph::new(Span::styled(label, Style::default().fg(c.waiting))),
                Rect::new(rest.x, rest.y, width, 1),
            );
            let after = Rect::new(rest.x + width, rest.y, rest.width - width, 1);
            panes::terminal(frame, after, Block::default(), rows, true, (None, c.dim));
        }
        Summary::Line(text) => frame.render_widget(Paragraph::new(text), rest),
    }
}

/// The timeline bar: play state, position, speed, and a track with phase markers.
pub fn timeline_line<'a>(playback: &Playback, width: u16, theme: &Theme) -> Line<'a> {
    let c = &theme.colors;
    let head = format!(
        " {} {} / {} ×{} ",
        if playback.playing { "▶" } else { "❚❚" },
        clock(playback.position),
        clock(playback.end),
        playback.speed
    );
    let track_width = usize::from(width)
        .saturating_sub(head.chars().count() + 2)
        .max(10);
    let end = playback.end.max(1e-9);
    let column = |t: f64| ((t / end) * (track_width - 1) as f64).round() as usize;
    let mut cells: Vec<(char, Style)> = vec![('─', Style::default().fg(c.dim)); track_width];
    let here = column(playback.position).min(track_width - 1);
    for cell in cells.iter_mut().take(here) {
        *cell = ('━', Style::default().fg(c.focus));
    }
    for (t, label) in &playback.markers {
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

/// A pane's border and title: its number and name, what the pane adds
/// ([`Pane::title_note`]), and whether it is scrolled back.
fn pane_block<'a>(pane: PaneId, shown: &dyn Pane, cx: &PaneContext<'_>) -> Block<'a> {
    let focused = cx.view.focus == pane;
    let c = &cx.theme.colors;
    let mut title = vec![Span::styled(
        format!(" {} {} ", pane.number(), pane.title()),
        Style::default()
            .fg(if focused { c.focus } else { c.title })
            .add_modifier(Modifier::BOLD),
    )];
    if let Some(note) = shown.title_note(cx) {
        title.push(Span::styled(
            format!("{note} "),
            Style::default().fg(c.waiting),
        ));
    }
    if cx.view.scroll[pane] > 0 && shown.scrolls() {
        title.push(Span::styled(
            "scrolled: G follows ",
            Style::default().fg(c.dim),
        ));
    }
    Block::default()
        .borders(Borders::ALL)
        .border_style(Style::default().fg(if focused { c.focus } else { c.border }))
        .title(Line::from(title))
}

/// The phase trail, fitted to `width`: stage names in full where they fit, else short
/// (`m1`, `v1`, `g1`), the verdicts' classes last to go.
fn phase_bar<'a>(state: &Scene, width: u16, theme: &Theme) -> Line<'a> {
    for terse in [0, 1] {
        let line = phase_bar_as(state, terse, theme);
        if line.width() <= usize::from(width) {
            return line;
        }
    }
    phase_bar_as(state, 2, theme)
}

/// The phase trail: `terse` 0 in full, 1 with short stage names, 2 also without the
/// failure classes and the spaces around the arrows.
fn phase_bar_as<'a>(state: &Scene, terse: u8, theme: &Theme) -> Line<'a> {
    let short = terse > 0;
    let c = &theme.colors;
    let (now_phase, now_stage) = state.at.step();
    let current = At::COURSE
        .iter()
        .position(|at| {
            let (p, s) = at.step();
            s == now_stage && (p == now_phase || matches!(s, Stage::Setup | Stage::Done))
        })
        .unwrap_or(0);
    // A pass in phase 1 ends the session: phase two will not come, so the trail drops it.
    let one_phase = state
        .phase(1)
        .and_then(|p| p.verdict.as_ref())
        .is_some_and(|v| v.passed());
    let mut spans = Vec::new();
    for (i, (phase, stage)) in At::COURSE.iter().map(|at| at.step()).enumerate() {
        if one_phase && (phase == 2 && stage != Stage::Done || stage == Stage::Inject) {
            continue;
        }
        if !spans.is_empty() {
            let arrow = if terse > 1 { "▸" } else { " ▸ " };
            spans.push(Span::styled(arrow, Style::default().fg(c.dim)));
        }
        let verdict = (stage == Stage::Grade)
            .then(|| state.phase(phase).and_then(|p| p.verdict.as_ref()))
            .flatten();
        let style = if i == current && state.finished.is_none() {
            Style::default()
                .fg(c.status_fg)
                .bg(c.status_bg)
                .add_modifier(Modifier::BOLD)
        } else if let Some(v) = verdict {
            Style::default()
                .fg(if v.passed() { c.pass } else { c.fail })
                .add_modifier(Modifier::BOLD)
        } else if i < current || state.finished.is_some() && i <= current {
            Style::default().fg(c.text)
        } else {
            Style::default().fg(c.dim)
        };
        let label = match (stage, short) {
            (Stage::Setup | Stage::Inject | Stage::Done, _) => stage.as_str().to_string(),
            (_, false) => format!("{} {phase}", stage.as_str()),
            (_, true) => format!("{}{phase}", &stage.as_str()[..1]),
        };
        let text = match verdict {
            Some(v) if terse > 1 => format!("{label} {}", if v.passed() { "PASS" } else { "FAIL" }),
            Some(v) => format!("{label}: {}", v.label()),
            None => label,
        };
        spans.push(Span::styled(text, style));
    }
    Line::from(spans)
}

/// `mm:ss` or `h:mm:ss`.
pub fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0) as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

fn status_line<'a>(state: &Scene, app: &App, theme: &Theme) -> Line<'a> {
    let c = &theme.colors;
    let base = Style::default().fg(c.status_fg).bg(c.status_bg);
    let phase = match state.at.step() {
        (_, stage @ (Stage::Setup | Stage::Done)) => stage.as_str().to_string(),
        (phase, stage) => format!("phase {phase} {}", stage.as_str()),
    };
    let mut spans = vec![Span::styled(
        format!(
            " xstack │ {} │ {phase} │ {} │ {} ",
            if state.task.id.is_empty() {
                "…"
            } else {
                &state.task.id
            },
            state.mode.label(),
            clock(state.now),
        ),
        base.add_modifier(Modifier::BOLD),
    )];
    if state.paused {
        spans.push(Span::styled(
            " PAUSED ",
            Style::default().fg(c.status_fg).bg(c.fail),
        ));
    }
    if !app.live {
        spans.push(Span::styled(
            " REPLAY ",
            Style::default().fg(c.status_fg).bg(c.emphasis),
        ));
    }
    if let Some(queued) = &state.queued {
        spans.push(Span::styled(
            format!(" {queued} "),
            Style::default().fg(c.waiting).add_modifier(Modifier::BOLD),
        ));
    }
    if let Some(notice) = state.notice_text(app) {
        spans.push(Span::styled(
            format!(" {notice} "),
            Style::default().fg(c.emphasis).add_modifier(Modifier::BOLD),
        ));
    }
    if let Some(what) = &state.waiting {
        spans.push(Span::styled(
            format!(" waiting: {} ", what.text()),
            Style::default().fg(c.waiting).add_modifier(Modifier::BOLD),
        ));
    }
    if let Some(f) = &state.finished {
        let (text, color) = match (&f.error, f.passed_in_phase) {
            (Some(e), _) => (format!(" ended: {e} "), c.fail),
            (None, Some(p)) => (format!(" PASSED in phase {p} "), c.pass),
            _ => (" FAILED ".to_string(), c.fail),
        };
        spans.push(Span::styled(
            text,
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        ));
    }
    spans.push(Span::styled(
        format!(" agent {}", crate::agent::label(&state.task.agent)),
        Style::default().fg(c.dim),
    ));
    Line::from(spans)
}

/// The key hint: the hinted bindings of the key table for the view's situation, each only
/// where it does something now (a session command where the policy accepts it, a pane's key
/// where its pane says so), fitted to `width`: the table's order is the order of
/// usefulness, so the entries that do not fit go from the end, except help and quit (and
/// detach), which stay.
fn key_hint<'a>(cx: &PaneContext<'_>, diff: &DiffPane, width: u16) -> Line<'a> {
    let (state, app, theme) = (cx.scene, cx.view, cx.theme);
    let situation = Situation::of(app.attached, app.live, state.finished.is_some());
    let pane_keys: Vec<panes::PaneKey> = panes::all(diff)
        .iter()
        .flat_map(|(_, pane)| pane.keys(cx))
        .collect();
    let (kept, mut others): (Vec<_>, Vec<_>) = keymap::hints(situation)
        .filter(|(_, _, action)| {
            let accepted = action
                .command()
                .is_none_or(|command| state.declined(command).is_none());
            let enabled = pane_keys
                .iter()
                .find(|key| key.action == *action)
                .is_none_or(|key| key.enabled);
            accepted && enabled
        })
        .map(|(keys, what, _)| (keys, format!("{keys} {what}")))
        .partition(|(keys, _)| matches!(*keys, "?" | "q" | "Ctrl-]"));
    let lead = if situation == Situation::Attached {
        "attached to the agent's terminal: keys go to the agent · "
    } else {
        ""
    };
    let text = loop {
        let entries: Vec<&str> = others
            .iter()
            .chain(&kept)
            .map(|(_, entry)| entry.as_str())
            .collect();
        let text = format!("{lead}{}", entries.join(" · "));
        if text.chars().count() <= usize::from(width) || others.pop().is_none() {
            break text;
        }
    };
    Line::from(Span::styled(text, Style::default().fg(theme.colors.dim)))
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Where the editor popup goes in a frame of `area`.
pub fn editor_rect(area: Rect) -> Rect {
    centered(
        area,
        area.width.saturating_sub(8).min(110),
        area.height.saturating_sub(4).min(24),
    )
}

/// Where the help goes and in how many columns: sized to its rows, in two columns when one
/// would not fit the height and two fit the width, never larger than the screen.
pub(super) fn help_rect(area: Rect, rows: &[(&str, &str)]) -> (Rect, usize) {
    let key_width = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let text_width = rows
        .iter()
        .map(|(_, v)| v.chars().count())
        .max()
        .unwrap_or(0);
    let row_width = key_width + 2 + text_width;
    let columns = if rows.len() + 2 > usize::from(area.height)
        && 2 * row_width + 3 + 2 <= usize::from(area.width)
    {
        2
    } else {
        1
    };
    let width = (row_width * columns + 3 * (columns - 1) + 2).min(usize::from(area.width));
    let height = (rows.len().div_ceil(columns) + 2).min(usize::from(area.height));
    (centered(area, width as u16, height as u16), columns)
}

/// Draws the overlay: the help (from the key table, each session command the policy
/// declines now dimmed with its reason), a confirmation or the editor.
fn draw_popup(frame: &mut Frame<'_>, area: Rect, popup: &Popup, scene: &Scene, theme: &Theme) {
    let c = &theme.colors;
    let block = |title: &str| {
        Block::default()
            .borders(Borders::ALL)
            .border_style(Style::default().fg(c.focus))
            .title(Span::styled(
                format!(" {title} "),
                Style::default().fg(c.title).add_modifier(Modifier::BOLD),
            ))
    };
    match popup {
        Popup::Help(scroll) => {
            // A session command the policy declines now is dimmed, with the policy's reason.
            let rows: Vec<(&str, String, bool)> = keymap::help_rows()
                .map(
                    |(keys, text, command)| match command.and_then(|c| scene.declined(c)) {
                        Some(why) => (keys, format!("{text} (not now: {why})"), true),
                        None => (keys, text.to_string(), false),
                    },
                )
                .collect();
            let texts: Vec<(&str, &str)> = rows.iter().map(|(k, v, _)| (*k, v.as_str())).collect();
            let (rect, columns) = help_rect(area, &texts);
            let key_width = rows
                .iter()
                .map(|(k, _, _)| k.chars().count())
                .max()
                .unwrap_or(0);
            frame.render_widget(Clear, rect);
            let visible = usize::from(rect.height.saturating_sub(2));
            let shown_from =
                usize::from(*scroll).min(rows.len().div_ceil(columns).saturating_sub(visible));
            let title = if rows.len().div_ceil(columns) > visible {
                "Keys (j/k scroll, any other key closes)"
            } else {
                "Keys (any key closes)"
            };
            let outer = block(title);
            let inner = outer.inner(rect);
            frame.render_widget(outer, rect);
            let per_column = rows.len().div_ceil(columns);
            let column_width = inner.width / columns as u16;
            for (i, chunk) in rows.chunks(per_column.max(1)).enumerate() {
                let lines: Vec<Line> = chunk
                    .iter()
                    .map(|(k, v, declined)| {
                        let (key_color, text_color) = if *declined {
                            (c.dim, c.dim)
                        } else {
                            (c.focus, c.text)
                        };
                        Line::from(vec![
                            Span::styled(
                                format!("{k:>key_width$}  "),
                                Style::default().fg(key_color),
                            ),
                            Span::styled(v.clone(), Style::default().fg(text_color)),
                        ])
                    })
                    .collect();
                let column = Rect::new(
                    inner.x + column_width * i as u16,
                    inner.y,
                    column_width,
                    inner.height,
                );
                // One line a row: a reason too long for the screen is cut at its edge (the
                // key, pressed, says it whole).
                frame.render_widget(Paragraph::new(lines).scroll((shown_from as u16, 0)), column);
            }
        }
        Popup::Confirm(what) => {
            let text = match what {
                ConfirmWhat::Abort => "Abort the run? Children are terminated. (y/n)",
                ConfirmWhat::Quit => "Quit? The run is still going; it will be terminated. (y/n)",
            };
            let rect = centered(area, 64, 3);
            frame.render_widget(Clear, rect);
            frame.render_widget(
                Paragraph::new(Span::styled(text, Style::default().fg(c.waiting)))
                    .block(block("Confirm")),
                rect,
            );
        }
        Popup::Editor(editor, purpose) => {
            let rect = editor_rect(area);
            let title = match purpose {
                EditorPurpose::Inject => "Phase-two details (Ctrl-S sends, Esc cancels)",
                EditorPurpose::Message => "Message to the agent (Ctrl-S sends, Esc cancels)",
            };
            let inner_h = usize::from(rect.height.saturating_sub(2));
            let top = editor.top_for(inner_h);
            let (row, col) = editor.screen_cursor();
            let lines: Vec<Line> = editor
                .screen_rows()
                .into_iter()
                .skip(top)
                .take(inner_h)
                .map(|l| Line::from(Span::styled(l, Style::default().fg(c.text))))
                .collect();
            frame.render_widget(Clear, rect);
            frame.render_widget(Paragraph::new(lines).block(block(title)), rect);
            let x = rect.x + 1 + col.min(usize::from(rect.width.saturating_sub(3))) as u16;
            let y = rect.y + 1 + row.saturating_sub(top) as u16;
            frame.set_cursor_position((x, y));
        }
    }
}

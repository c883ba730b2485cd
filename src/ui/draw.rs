//! Drawing one frame from the session state and the view state: the five panes, the phase
//! bar, the status line, the key hint and the overlays. Nothing here parses, diffs or
//! highlights: that happened when the data arrived.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::session::event::Stage;
use crate::session::state::SessionState;

use super::app::{App, ConfirmWhat, EditorPurpose, PaneId, Popup};
use super::diffpane::DiffPane;
use super::panes;
use super::theme::Theme;

/// Extra lines a replay adds at the bottom (its timeline bar), drawn by the caller.
pub struct Extras<'a> {
    /// A line drawn above the status line (replay's timeline), if any.
    pub timeline: Option<Line<'a>>,
}

/// The rectangles of the five panes for a terminal area (unzoomed).
pub fn pane_layout(area: Rect) -> [Rect; 5] {
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Percentage(55), Constraint::Percentage(45)])
        .split(area);
    let top = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(50), Constraint::Percentage(50)])
        .split(rows[0]);
    let bottom = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([
            Constraint::Percentage(40),
            Constraint::Percentage(35),
            Constraint::Percentage(25),
        ])
        .split(rows[1]);
    [top[0], top[1], bottom[0], bottom[1], bottom[2]]
}

/// The inner size (columns, rows) of the Agent and Run log panes for a terminal size; the
/// UI resizes the PTYs to these.
pub fn terminal_sizes(width: u16, height: u16, app: &App) -> ((u16, u16), (u16, u16)) {
    let main = Rect::new(0, 0, width, height.saturating_sub(3 + u16::from(!app.live)));
    let rects = pane_layout(main);
    let inner = |r: Rect, zoomed: bool| {
        let r = if zoomed { main } else { r };
        (
            r.width.saturating_sub(2).max(10),
            r.height.saturating_sub(2).max(2),
        )
    };
    (
        inner(rects[0], app.zoom && app.focus == PaneId::Agent),
        inner(rects[2], app.zoom && app.focus == PaneId::RunLog),
    )
}

/// Draws a whole frame.
pub fn draw(
    frame: &mut Frame<'_>,
    state: &mut SessionState,
    app: &mut App,
    diff: &DiffPane,
    theme: &Theme,
    extras: &Extras<'_>,
) {
    let area = frame.area();
    let extra_rows = u16::from(extras.timeline.is_some());
    let chunks = Layout::default()
        .direction(Direction::Vertical)
        .constraints([
            Constraint::Min(4),
            Constraint::Length(1),
            Constraint::Length(extra_rows),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .split(area);
    let main = chunks[0];
    let rects = pane_layout(main);
    app.pane_rects = if app.zoom {
        let mut r = [Rect::default(); 5];
        r[app.focus.index()] = main;
        r
    } else {
        rects
    };
    for pane in PaneId::ALL {
        let rect = app.pane_rects[pane.index()];
        if rect.area() == 0 {
            continue;
        }
        let block = pane_block(pane, app, state, diff, theme);
        match pane {
            PaneId::Agent if app.agent_transcript => {
                panes::transcript(frame, rect, block, state, app.scroll[0], theme)
            }
            PaneId::Agent => panes::terminal(
                frame,
                rect,
                block,
                &mut state.agent_screen,
                app.scroll[0],
                !app.attached,
            ),
            PaneId::RunLog => panes::terminal(
                frame,
                rect,
                block,
                &mut state.run_screen,
                app.scroll[2],
                true,
            ),
            PaneId::Diff => diff.draw(frame, rect, block, app, theme),
            PaneId::Metrics => panes::metrics(frame, rect, block, state, theme),
            PaneId::Verdict => panes::verdict(frame, rect, block, state, app.scroll[4], theme),
        }
    }
    frame.render_widget(Paragraph::new(phase_bar(state, theme)), chunks[1]);
    if let Some(line) = &extras.timeline {
        frame.render_widget(Paragraph::new(line.clone()), chunks[2]);
    }
    frame.render_widget(Paragraph::new(status_line(state, app, theme)), chunks[3]);
    frame.render_widget(Paragraph::new(key_hint(state, app, theme)), chunks[4]);
    if let Some(popup) = &mut app.popup {
        draw_popup(frame, area, popup, theme);
    }
}

fn pane_block<'a>(
    pane: PaneId,
    app: &App,
    state: &SessionState,
    diff: &DiffPane,
    theme: &Theme,
) -> Block<'a> {
    let focused = app.focus == pane;
    let c = &theme.colors;
    let mut title = vec![Span::styled(
        format!(" {} {} ", pane.index() + 1, pane.title()),
        Style::default()
            .fg(if focused { c.focus } else { c.title })
            .add_modifier(Modifier::BOLD),
    )];
    let note = match pane {
        PaneId::Agent if app.attached => Some("attached: Ctrl-] detaches".to_string()),
        PaneId::Agent if state.paused => Some("PAUSED".to_string()),
        PaneId::Agent if app.agent_transcript => {
            Some("prompts and transcript (t: terminal)".to_string())
        }
        PaneId::Diff => diff.title_note(app),
        _ => None,
    };
    if let Some(note) = note {
        title.push(Span::styled(
            format!("{note} "),
            Style::default().fg(c.waiting),
        ));
    }
    if app.scroll[pane.index()] > 0
        && matches!(
            pane,
            PaneId::Agent | PaneId::RunLog | PaneId::Verdict | PaneId::Diff
        )
    {
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

/// The stages in order, as the phase bar shows them.
const BAR: [(u8, Stage, &str); 9] = [
    (0, Stage::Setup, "setup"),
    (1, Stage::Migrate, "migrate 1"),
    (1, Stage::Verify, "verify 1"),
    (1, Stage::Grade, "grade 1"),
    (1, Stage::Inject, "inject"),
    (2, Stage::Migrate, "migrate 2"),
    (2, Stage::Verify, "verify 2"),
    (2, Stage::Grade, "grade 2"),
    (0, Stage::Done, "done"),
];

fn phase_bar<'a>(state: &SessionState, theme: &Theme) -> Line<'a> {
    let c = &theme.colors;
    let current = BAR
        .iter()
        .position(|(p, s, _)| {
            *s == state.stage && (*p == state.phase || matches!(s, Stage::Setup | Stage::Done))
        })
        .unwrap_or(0);
    let mut spans = Vec::new();
    for (i, (phase, stage, label)) in BAR.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" ▸ ", Style::default().fg(c.dim)));
        }
        let verdict = (*stage == Stage::Grade)
            .then(|| state.phase(*phase).and_then(|p| p.verdict.as_ref()))
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
        let text = match verdict {
            Some(v) => format!("{label}: {}", v.label()),
            None => (*label).to_string(),
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

fn status_line<'a>(state: &SessionState, app: &App, theme: &Theme) -> Line<'a> {
    let c = &theme.colors;
    let base = Style::default().fg(c.status_fg).bg(c.status_bg);
    let phase = match state.stage {
        Stage::Setup => "setup".to_string(),
        Stage::Done => "done".to_string(),
        stage => format!("phase {} {}", state.phase, stage.as_str()),
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
    if let Some(what) = &state.waiting {
        spans.push(Span::styled(
            format!(" waiting: {what} "),
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
        format!(" agent {}", short_agent(&state.task.agent)),
        Style::default().fg(c.dim),
    ));
    Line::from(spans)
}

/// The agent spec with a script's folder left out (`script:trajectory.jsonl`).
fn short_agent(agent: &str) -> String {
    match agent.strip_prefix("script:") {
        Some(path) => format!(
            "script:{}",
            std::path::Path::new(path)
                .file_name()
                .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
        ),
        None => agent.to_string(),
    }
}

fn key_hint<'a>(state: &SessionState, app: &App, theme: &Theme) -> Line<'a> {
    let text = if app.attached {
        "attached to the agent's terminal: keys go to the agent · Ctrl-] detaches"
    } else if !app.live {
        "Space play/pause · ←/→ seek 5 s · </> speed · ,/. prev/next phase · Tab/1-5 focus · z zoom · ? help · q quit"
    } else if state.finished.is_some() {
        "r re-verify · o shell · a attach · t transcript · Tab/1-5 focus · z zoom · [ ] files · v diff base · Enter finding→diff · ? help · q quit"
    } else {
        "n next · s step/auto · p pause · i inject · m message · a attach · r re-verify · x abort · t transcript · Tab/1-5 focus · z zoom · ? help · q quit"
    };
    Line::from(Span::styled(text, Style::default().fg(theme.colors.dim)))
}

/// The key table shown by `?` (and in the README).
pub const HELP: &[(&str, &str)] = &[
    ("Tab / Shift-Tab", "focus the next / previous pane"),
    ("1 … 5", "focus Agent, Diff, Run log, Metrics, Verdict"),
    ("z", "zoom the focused pane / restore"),
    ("n", "next: advance to the next phase (step mode)"),
    ("s", "toggle step / auto mode"),
    ("p", "pause / resume the agent (the whole process group)"),
    (
        "i",
        "inject the phase-two details (Ctrl-S sends, Esc cancels)",
    ),
    ("m", "message the agent"),
    (
        "t",
        "Agent pane: the prompts and the agent's transcript / its terminal",
    ),
    ("a", "attach: keys go to the agent's terminal until Ctrl-]"),
    (
        "r",
        "re-run verify and grade on the current workspace (also after the end)",
    ),
    (
        "o",
        "after the end: open a shell in the workspace in the Agent pane",
    ),
    (
        "Enter (Verdict)",
        "show the file of the next finding in the Diff pane",
    ),
    ("x", "abort the run (asks to confirm, y)"),
    ("?", "this help"),
    ("q", "quit (asks to confirm, y, while something runs)"),
    (
        "j k PgUp PgDn g G",
        "scroll the focused pane; G follows the end",
    ),
    ("[ ]", "previous / next file in the Diff pane"),
    (
        "v",
        "Diff: against the original / against the agent's previous change",
    ),
    (
        "mouse",
        "wheel scrolls the pane under the pointer, a click focuses it",
    ),
    (
        "replay: Space ← → < >",
        "play/pause, seek 5 s, slower/faster",
    ),
    ("replay: , .", "previous / next phase change or verdict"),
];

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

fn draw_popup(frame: &mut Frame<'_>, area: Rect, popup: &mut Popup, theme: &Theme) {
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
        Popup::Help => {
            let rect = centered(area, 78, HELP.len() as u16 + 2);
            let lines: Vec<Line> = HELP
                .iter()
                .map(|(k, v)| {
                    Line::from(vec![
                        Span::styled(format!("{k:>22}  "), Style::default().fg(c.focus)),
                        Span::styled(*v, Style::default().fg(c.text)),
                    ])
                })
                .collect();
            frame.render_widget(Clear, rect);
            frame.render_widget(
                Paragraph::new(lines).block(block("Keys (any key closes)")),
                rect,
            );
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
            let rect = centered(
                area,
                area.width.saturating_sub(8).min(110),
                area.height.saturating_sub(4).min(24),
            );
            let title = match purpose {
                EditorPurpose::Inject => "Phase-two details (Ctrl-S sends, Esc cancels)",
                EditorPurpose::Message => "Message to the agent (Ctrl-S sends, Esc cancels)",
            };
            let inner_h = usize::from(rect.height.saturating_sub(2));
            editor.scroll_to_cursor(inner_h);
            let (row, col) = editor.cursor();
            let lines: Vec<Line> = editor
                .lines()
                .skip(editor.top)
                .take(inner_h)
                .map(|l| Line::from(Span::styled(l, Style::default().fg(c.text))))
                .collect();
            frame.render_widget(Clear, rect);
            frame.render_widget(
                Paragraph::new(lines)
                    .block(block(title))
                    .wrap(Wrap { trim: false }),
                rect,
            );
            let x = rect.x + 1 + col.min(usize::from(rect.width.saturating_sub(3))) as u16;
            let y = rect.y + 1 + (row - editor.top) as u16;
            frame.set_cursor_position((x, y));
        }
    }
}

//! The Agent and Run log terminals, the Agent pane's prompts-and-transcript view, the
//! Metrics charts and the Verdict list.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, LegendPosition, Paragraph, Wrap};
use tui_term::widget::{Cursor, PseudoTerminal};

use super::scene::Scene;
use crate::agent::transcript::{TranscriptItem, first_line};
use crate::metrics::Point;
use crate::pty::screen::Screen;
use crate::task::CriterionSpec;

use super::theme::Theme;

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

/// A terminal pane: the copied rows, with the cursor unless `hide_cursor` (or the copy says
/// the terminal hides it or is scrolled back).
pub fn terminal(
    frame: &mut Frame<'_>,
    rect: Rect,
    block: Block<'_>,
    view: &TerminalView,
    hide_cursor: bool,
) {
    let mut cursor = Cursor::default();
    if hide_cursor || view.hide_cursor {
        cursor.hide();
    }
    let widget = PseudoTerminal::new(view).block(block).cursor(cursor);
    frame.render_widget(widget, rect);
}

fn x_of(p: &Point, i: usize) -> f64 {
    p.step.unwrap_or(i as f64 + 1.0)
}

fn to_xy(points: &[Point]) -> Vec<(f64, f64)> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| (x_of(p, i), p.value))
        .collect()
}

/// Where `run` leaves the reference band (the reference value at the same step ± tolerance)
/// for good: the first compared step from which every later compared step is outside the
/// band. None when the run ends inside the band or nothing can be compared.
pub fn divergence(run: &[Point], reference: &[Point], tolerance: f64) -> Option<(f64, f64)> {
    let reference_xy = to_xy(reference);
    let compared: Vec<((f64, f64), bool)> = to_xy(run)
        .into_iter()
        .filter_map(|(x, y)| {
            let (_, ry) = reference_xy.iter().find(|(rx, _)| (rx - x).abs() < 1e-9)?;
            Some(((x, y), (y - ry).abs() > tolerance))
        })
        .collect();
    let inside_after = compared.iter().rposition(|(_, outside)| !outside);
    let first_outside = inside_after.map_or(0, |i| i + 1);
    compared.get(first_outside).map(|(p, _)| *p)
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1000.0 || (v != 0.0 && v.abs() < 0.001) {
        format!("{v:.2e}")
    } else {
        format!("{v:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// A braille line series of the chart (unnamed when `name` is empty: left out of the legend).
fn line_dataset<'a>(name: String, style: Style, data: &'a [(f64, f64)]) -> Dataset<'a> {
    let dataset = Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(style)
        .data(data);
    if name.is_empty() {
        dataset
    } else {
        dataset.name(name)
    }
}

/// The Metrics pane: one chart per criterion metric.
pub fn metrics(frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, state: &Scene, theme: &Theme) {
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let mut criteria: Vec<&CriterionSpec> = Vec::new();
    for c in &state.task.criteria {
        if !criteria.iter().any(|k| k.metric == c.metric) {
            criteria.push(c);
        }
    }
    if criteria.is_empty() || inner.height < 3 {
        return;
    }
    let chunks = Layout::default()
        .direction(Direction::Vertical)
        .constraints(vec![
            Constraint::Ratio(1, criteria.len() as u32);
            criteria.len()
        ])
        .split(inner);
    for (criterion, area) in criteria.iter().zip(chunks.iter()) {
        chart(frame, *area, criterion, state, theme);
    }
}

fn chart(
    frame: &mut Frame<'_>,
    area: Rect,
    criterion: &CriterionSpec,
    state: &Scene,
    theme: &Theme,
) {
    let c = &theme.colors;
    let metric = &criterion.metric;
    let latest_phase = (1..=state.phases.len() as u8).rev().find(|p| {
        state
            .phase(*p)
            .is_some_and(|r| r.metrics.contains_key(metric))
    });
    let current: Vec<(f64, f64)> = latest_phase
        .and_then(|p| state.phase(p))
        .and_then(|r| r.metrics.get(metric))
        .map(|s| to_xy(s.points()))
        .unwrap_or_default();
    let previous: Vec<(f64, f64)> = match latest_phase {
        Some(p) if p > 1 => state
            .phase(p - 1)
            .and_then(|r| r.metrics.get(metric))
            .map(|s| to_xy(s.points()))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let reference_points: &[Point] = state
        .task
        .reference
        .iter()
        .find(|r| &r.metric == metric)
        .map_or(&[], |r| r.points.as_slice());
    let reference = to_xy(reference_points);
    let all_x = current
        .iter()
        .chain(&previous)
        .chain(&reference)
        .map(|(x, _)| *x);
    let (mut x_min, mut x_max) = all_x.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !x_min.is_finite() {
        x_min = 0.0;
        x_max = 1.0;
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let published = criterion.published;
    let tol = criterion.tolerance;
    let band_lo = [(x_min, published - tol), (x_max, published - tol)];
    let band_hi = [(x_min, published + tol), (x_max, published + tol)];
    let published_line = [(x_min, published), (x_max, published)];
    let all_y = current
        .iter()
        .chain(&previous)
        .chain(&reference)
        .map(|(_, y)| *y)
        .chain([published - tol, published + tol]);
    let (y_lo, y_hi) = all_y.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    let pad = ((y_hi - y_lo) * 0.05).max(1e-9);
    let (y_lo, y_hi) = (y_lo - pad, y_hi + pad);
    let diverged = latest_phase
        .and_then(|p| state.phase(p))
        .and_then(|r| r.metrics.get(metric))
        .and_then(|s| divergence(s.points(), reference_points, tol));
    let diverged_point = diverged.map(|p| [p]);

    let bold = |color| Style::default().fg(color).add_modifier(Modifier::BOLD);
    let mut datasets = vec![
        line_dataset(
            format!("±{} band", fmt_num(tol)),
            Style::default().fg(c.band),
            &band_lo,
        ),
        line_dataset(String::new(), Style::default().fg(c.band), &band_hi),
        line_dataset(
            format!("published {}", fmt_num(published)),
            Style::default().fg(c.published),
            &published_line,
        ),
    ];
    let series = [
        (
            "reference".to_string(),
            Style::default().fg(c.series_reference),
            &reference,
        ),
        (
            "phase 1".to_string(),
            Style::default().fg(c.series_previous),
            &previous,
        ),
        (
            format!("phase {}", latest_phase.unwrap_or(1)),
            bold(c.series_current),
            &current,
        ),
    ];
    for (name, style, data) in series {
        if !data.is_empty() {
            datasets.push(line_dataset(name, style, data));
        }
    }
    if let Some(point) = &diverged_point {
        datasets.push(
            Dataset::default()
                .name(format!("leaves reference @ {}", fmt_num(point[0].0)))
                .marker(Marker::Dot)
                .graph_type(GraphType::Scatter)
                .style(bold(c.fail))
                .data(point),
        );
    }
    let last = current
        .last()
        .map(|(_, y)| format!(" = {}", fmt_num(*y)))
        .unwrap_or_default();
    let title = Line::from(vec![
        Span::styled(
            format!("{metric}{last}"),
            Style::default().fg(c.title).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                " ({}, {})",
                criterion.reduce.as_str(),
                criterion.direction.as_str()
            ),
            Style::default().fg(c.dim),
        ),
    ]);
    let chart = Chart::new(datasets)
        .block(Block::default().title(title))
        .legend_position(Some(LegendPosition::BottomRight))
        .hidden_legend_constraints((Constraint::Percentage(60), Constraint::Percentage(60)))
        .x_axis(
            Axis::default()
                .title(Span::styled("step", Style::default().fg(c.dim)))
                .style(Style::default().fg(c.dim))
                .bounds([x_min, x_max])
                .labels([
                    fmt_num(x_min),
                    fmt_num((x_min + x_max) / 2.0),
                    fmt_num(x_max),
                ]),
        )
        .y_axis(
            Axis::default()
                .style(Style::default().fg(c.dim))
                .bounds([y_lo, y_hi])
                .labels([fmt_num(y_lo), fmt_num((y_lo + y_hi) / 2.0), fmt_num(y_hi)]),
        );
    frame.render_widget(chart, area);
}

/// The Verdict pane's lines: the outcome first, then each graded phase, newest first.
pub fn verdict_lines<'a>(state: &Scene, theme: &Theme) -> Vec<Line<'a>> {
    let c = &theme.colors;
    let mut lines = Vec::new();
    if let Some(f) = &state.finished {
        let (text, color) = match (&f.error, f.passed_in_phase) {
            (Some(e), _) => (format!("ended: {e}"), c.fail),
            (None, Some(p)) => (format!("PASSED in phase {p}"), c.pass),
            _ => ("FAILED".to_string(), c.fail),
        };
        lines.push(Line::from(Span::styled(
            text,
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        )));
    }
    if state
        .phases
        .iter()
        .all(|p| p.verdict.is_none() && p.outcome.is_none())
    {
        lines.push(Line::from(Span::styled(
            "no phase graded yet",
            Style::default().fg(c.dim),
        )));
    }
    for (i, record) in state.phases.iter().enumerate().rev() {
        let Some(verdict) = &record.verdict else {
            if let Some((outcome, detail)) = &record.outcome {
                // Not a verdict on the port: say whose failure it was instead.
                lines.push(Line::from(vec![
                    Span::styled(
                        format!("Phase {}  ", i + 1),
                        Style::default().fg(c.title).add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(
                        format!("NOT GRADED {}", outcome.as_str()),
                        Style::default().fg(c.fail).add_modifier(Modifier::BOLD),
                    ),
                ]));
                if let Some(detail) = detail {
                    lines.push(Line::from(Span::styled(
                        format!("  • {detail}"),
                        Style::default().fg(c.text),
                    )));
                }
            }
            continue;
        };
        let color = if verdict.passed() { c.pass } else { c.fail };
        let exit = record
            .exit_code
            .map_or_else(|| "killed".to_string(), |e| format!("exit {e}"));
        lines.push(Line::from(vec![
            Span::styled(
                format!("Phase {}  ", i + 1),
                Style::default().fg(c.title).add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                verdict.label(),
                Style::default().fg(color).add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("   run {:.1} s, {exit}", record.duration_s),
                Style::default().fg(c.dim),
            ),
        ]));
        for cr in &verdict.criteria {
            let value = cr.value.map_or_else(|| "missing".to_string(), fmt_num);
            let margin = cr.margin().map_or_else(String::new, |m| {
                format!("  margin {}{}", if m >= 0.0 { "+" } else { "" }, fmt_num(m))
            });
            lines.push(Line::from(vec![
                Span::styled(
                    if cr.passed { "  ✓ " } else { "  ✗ " },
                    Style::default().fg(if cr.passed { c.pass } else { c.fail }),
                ),
                Span::styled(
                    format!("{} = {value}", cr.metric),
                    Style::default().fg(c.text),
                ),
                Span::styled(
                    format!(
                        "  published {} ± {} ({}){margin}",
                        fmt_num(cr.published),
                        fmt_num(cr.tolerance),
                        cr.direction.as_str()
                    ),
                    Style::default().fg(c.dim),
                ),
            ]));
        }
        for f in &verdict.findings {
            lines.push(Line::from(Span::styled(
                format!("  • {f}"),
                Style::default().fg(c.text),
            )));
        }
        if verdict.verify_confined == Some(false) {
            lines.push(Line::from(Span::styled(
                "  ! verify was not confined: the run could see this machine (see the Run log)",
                Style::default().fg(c.fail),
            )));
        }
        if let Some((text, success)) = record.claim() {
            lines.push(Line::from(vec![
                Span::styled(
                    if success {
                        "  agent's claim: "
                    } else {
                        "  agent reported an error: "
                    },
                    Style::default().fg(c.dim),
                ),
                Span::styled(
                    format!("\"{}\"", first_line(text)),
                    Style::default().fg(c.text),
                ),
            ]));
        }
    }
    lines
}

/// The Verdict pane, scrolled down `scroll` lines.
pub fn verdict(
    frame: &mut Frame<'_>,
    rect: Rect,
    block: Block<'_>,
    state: &Scene,
    scroll: usize,
    theme: &Theme,
) {
    let lines = verdict_lines(state, theme);
    let top = scroll.min(lines.len().saturating_sub(1));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((top as u16, 0)),
        rect,
    );
}

fn usage_text(input: u64, output: u64, cost: Option<f64>) -> String {
    let cost = cost.map_or_else(String::new, |c| format!(", ${c:.4}"));
    format!("{input} tokens in, {output} out{cost}")
}

/// The Agent pane's other view: each phase's prompt, then what the agent reported (messages,
/// tool calls, edits, usage, its final word) when its output is structured.
pub fn transcript_lines<'a>(state: &Scene, theme: &Theme) -> Vec<Line<'a>> {
    let c = &theme.colors;
    let heading = |text: String| {
        Line::from(Span::styled(
            text,
            Style::default().fg(c.title).add_modifier(Modifier::BOLD),
        ))
    };
    let mut lines = Vec::new();
    if state.phases.iter().all(|p| p.prompt.is_none()) {
        lines.push(Line::from(Span::styled(
            "no prompt sent yet",
            Style::default().fg(c.dim),
        )));
    }
    for (i, record) in state.phases.iter().enumerate() {
        let phase = i + 1;
        if let Some(prompt) = &record.prompt {
            lines.push(heading(format!("── phase {phase}: prompt ──")));
            lines.extend(
                prompt
                    .lines()
                    .map(|l| Line::from(Span::styled(l.to_string(), Style::default().fg(c.dim)))),
            );
        }
        if record.transcript.is_empty() {
            continue;
        }
        let usage = record.usage().map_or_else(String::new, |(i, o, cost)| {
            format!(" ({})", usage_text(i, o, cost))
        });
        lines.push(heading(format!("── phase {phase}: agent{usage} ──")));
        for item in &record.transcript {
            let line = match item {
                TranscriptItem::Session { id } => Line::from(Span::styled(
                    format!("session {id}"),
                    Style::default().fg(c.dim),
                )),
                TranscriptItem::Message { text } => {
                    for l in text.lines() {
                        lines.push(Line::from(Span::styled(
                            l.to_string(),
                            Style::default().fg(c.text),
                        )));
                    }
                    continue;
                }
                TranscriptItem::ToolCall { tool, input } => Line::from(vec![
                    Span::styled(format!("▸ {tool} "), Style::default().fg(c.emphasis)),
                    Span::styled(input.clone(), Style::default().fg(c.dim)),
                ]),
                TranscriptItem::FileEdit { path } => Line::from(Span::styled(
                    format!("✎ {path}"),
                    Style::default().fg(c.added),
                )),
                TranscriptItem::Usage {
                    input_tokens,
                    output_tokens,
                    cost_usd,
                } => Line::from(Span::styled(
                    format!("Σ {}", usage_text(*input_tokens, *output_tokens, *cost_usd)),
                    Style::default().fg(c.dim),
                )),
                TranscriptItem::Final { text, success } => Line::from(vec![
                    Span::styled(
                        if *success {
                            "■ done: "
                        } else {
                            "■ error: "
                        },
                        Style::default()
                            .fg(if *success { c.pass } else { c.fail })
                            .add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(first_line(text), Style::default().fg(c.text)),
                ]),
            };
            lines.push(line);
        }
    }
    lines
}

/// The Agent pane as prompts and transcript: follows the end; `scroll` moves back from it.
pub fn transcript(
    frame: &mut Frame<'_>,
    rect: Rect,
    block: Block<'_>,
    state: &Scene,
    scroll: usize,
    theme: &Theme,
) {
    let lines = transcript_lines(state, theme);
    let inner = block.inner(rect);
    let width = usize::from(inner.width).max(1);
    // Rows once wrapped (about: wrapping breaks at words), so the end can be followed.
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(width)).sum();
    let top = rows
        .saturating_sub(usize::from(inner.height))
        .saturating_sub(scroll);
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((top as u16, 0)),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::widgets::Borders;

    #[test]
    fn a_terminal_taller_than_its_pane_shows_its_latest_rows() {
        let mut screen = Screen::new(40, 36);
        let text: String = (0..30).map(|i| format!("line {i}\r\n")).collect();
        screen.process(&text);
        let mut terminal = Terminal::new(TestBackend::new(40, 12)).unwrap();
        terminal.draw(|f| terminal_pane(f, &screen)).unwrap();
        let shown = format!("{}", terminal.backend());
        assert!(shown.contains("line 29"), "{shown}");
        assert!(!shown.contains("line 0 "), "{shown}");
        // A pane tall enough shows the screen from its top.
        let mut terminal = Terminal::new(TestBackend::new(40, 40)).unwrap();
        terminal.draw(|f| terminal_pane(f, &screen)).unwrap();
        let shown = format!("{}", terminal.backend());
        assert!(shown.contains("line 0 "), "{shown}");
    }

    fn terminal_pane(f: &mut Frame<'_>, screen: &Screen) {
        let area = f.area();
        let block = Block::default().borders(Borders::ALL);
        let inner = block.inner(area);
        let view = TerminalView::capture(screen, 0, inner.width, inner.height);
        terminal(f, area, block, &view, true);
    }
}

//! The Verdict pane: the outcome, then each graded phase, newest first.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::agent::transcript::first_line;

use super::super::scene::Scene;
use super::super::theme::Theme;
use super::fmt_num;

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
    let width = block.inner(rect).width;
    let lines = super::wrap_hanging(verdict_lines(state, theme), width);
    let top = scroll.min(lines.len().saturating_sub(1));
    frame.render_widget(
        Paragraph::new(lines).block(block).scroll((top as u16, 0)),
        rect,
    );
}

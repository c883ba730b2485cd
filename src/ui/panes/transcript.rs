//! The Agent pane's other view (`t`): each phase's prompt and what the agent reported.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

use crate::agent::transcript::{TranscriptItem, first_line};

use super::super::scene::Scene;
use super::super::theme::Theme;

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
                TranscriptItem::ToolFailed { tool, error } => Line::from(vec![
                    Span::styled(format!("  ✗ {tool} failed: "), Style::default().fg(c.fail)),
                    Span::styled(error.clone(), Style::default().fg(c.text)),
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

//! The five panes, a file each: each draws from the frame's [`super::scene::Scene`] and the
//! view state, and changes neither.

pub mod diff;
pub mod metrics;
pub mod terminal;
pub mod transcript;
pub mod verdict;

pub use metrics::metrics;
pub use terminal::terminal;
pub use transcript::{transcript, transcript_lines};
pub use verdict::{verdict, verdict_lines};

/// A number as the panes show it: four decimals at most, trailing zeros cut, scientific
/// for the very large and the very small.
pub(crate) fn fmt_num(v: f64) -> String {
    if v.abs() >= 1000.0 || (v != 0.0 && v.abs() < 0.001) {
        format!("{v:.2e}")
    } else {
        format!("{v:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// Wraps each line to `width` columns at spaces, its continuation rows indented to where its
/// text starts (a finding's text under its text, not under its bullet; at least two columns),
/// keeping each character's style. A word longer than a row is cut.
pub(crate) fn wrap_hanging(
    lines: Vec<ratatui::text::Line<'_>>,
    width: u16,
) -> Vec<ratatui::text::Line<'static>> {
    use ratatui::style::Style;
    use ratatui::text::{Line, Span};
    type Cells = Vec<(char, Style)>;
    let width = usize::from(width.max(8));
    let mut out = Vec::new();
    for line in lines {
        let cells: Cells = line
            .spans
            .iter()
            .flat_map(|span| span.content.chars().map(move |ch| (ch, span.style)))
            .collect();
        let indent = cells
            .iter()
            .position(|(ch, _)| ch.is_alphanumeric() || *ch == '"')
            .unwrap_or(0)
            .clamp(2, width / 2);
        // Words with the spaces that follow them.
        let mut words: Vec<Cells> = Vec::new();
        for cell in cells {
            match words.last_mut() {
                Some(word) if cell.0 == ' ' || word.last().is_some_and(|(ch, _)| *ch != ' ') => {
                    word.push(cell)
                }
                _ => words.push(vec![cell]),
            }
        }
        let mut rows: Vec<Cells> = vec![Vec::new()];
        for word in words {
            let visible = word
                .iter()
                .rposition(|(ch, _)| *ch != ' ')
                .map_or(0, |i| i + 1);
            let row_len = rows.last().map_or(0, Vec::len);
            if row_len > indent && row_len + visible > width {
                rows.push(vec![(' ', Style::default()); indent]);
            }
            for cell in word {
                if rows.last().is_some_and(|row| row.len() >= width) {
                    if cell.0 == ' ' {
                        continue;
                    }
                    rows.push(vec![(' ', Style::default()); indent]);
                }
                if let Some(row) = rows.last_mut() {
                    row.push(cell);
                }
            }
        }
        for row in rows {
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (ch, style) in row {
                match spans.last_mut() {
                    Some(span) if span.style == style => span.content.to_mut().push(ch),
                    _ => spans.push(Span::styled(ch.to_string(), style)),
                }
            }
            out.push(Line::from(spans));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::text::Line;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.to_string().trim_end().to_string())
            .collect()
    }

    #[test]
    fn a_wrapped_line_continues_under_its_text() {
        let lines = vec![
            Line::from("  • test_acc (last) = 0.8956 is outside the criterion >= 0.978 - 0.01"),
            Line::from("Phase 1  FAIL fidelity_gap   run 23.0 s, exit 0"),
        ];
        assert_eq!(
            text(&wrap_hanging(lines, 24)),
            [
                "  • test_acc (last) =",
                "    0.8956 is outside",
                "    the criterion >=",
                "    0.978 - 0.01",
                "Phase 1  FAIL",
                "  fidelity_gap   run",
                "  23.0 s, exit 0",
            ]
        );
        let long = vec![Line::from("  • /a/very/long/path/without/any/space/in/it")];
        let rows = text(&wrap_hanging(long, 20));
        assert!(rows.iter().all(|r| r.chars().count() <= 20), "{rows:?}");
        assert_eq!(
            rows.concat().replace(' ', ""),
            "•/a/very/long/path/without/any/space/in/it"
        );
    }
}

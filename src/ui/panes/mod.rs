//! The five panes, a file each, in one shape ([`Pane`]): each draws through `&self` from the
//! frame's [`Scene`] and the view state, changing neither, and says what its title adds and
//! its one-line summary for a compact screen. [`all`] maps each [`PaneId`] to its pane.

pub mod diff;
pub mod metrics;
pub mod terminal;
pub mod transcript;
pub mod verdict;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Block;

use super::app::{App, PaneId, PaneMap};
use super::keymap::KeyAction;
use super::scene::{Scene, TerminalView};
use super::theme::Theme;

pub use terminal::terminal;
pub use transcript::{transcript, transcript_lines};
pub use verdict::verdict_lines;

/// What a pane draws from: the frame's copy of the session state, the view state and the
/// theme.
#[derive(Clone, Copy)]
pub struct PaneContext<'a> {
    /// The frame's copy of the session state.
    pub scene: &'a Scene,
    /// The view state.
    pub view: &'a App,
    /// The colours.
    pub theme: &'a Theme,
}

/// A pane's one-line summary on a compact screen, after its number and name.
pub enum Summary<'a> {
    /// A line of text.
    Line(Line<'static>),
    /// A terminal's latest row that holds text.
    Terminal(&'a TerminalView),
    /// A terminal's latest row that holds text, after a label saying whose it is.
    After(String, &'a TerminalView),
}

/// A key of the key table that belongs to a pane, and whether pressing it does anything now
/// (the key hint offers it only then).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaneKey {
    /// What the key does.
    pub action: KeyAction,
    /// Whether it does anything now.
    pub enabled: bool,
}

/// One pane: drawn through `&self` from a [`PaneContext`], changing nothing.
pub trait Pane {
    /// What the pane's title adds after its number and name (attached, the selected file…).
    fn title_note(&self, _cx: &PaneContext<'_>) -> Option<String> {
        None
    }

    /// Whether the pane scrolls, so that its title says when it is scrolled back.
    fn scrolls(&self) -> bool {
        true
    }

    /// Draws the pane in `rect`, inside `block`.
    fn draw(&self, frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, cx: &PaneContext<'_>);

    /// The pane in one line, for a compact screen.
    fn summary<'a>(&'a self, cx: &PaneContext<'a>) -> Summary<'a>;

    /// The keys of the key table that act on this pane, each with whether it does anything
    /// now.
    fn keys(&self, _cx: &PaneContext<'_>) -> Vec<PaneKey> {
        Vec::new()
    }
}

/// Each pane by its id: the Diff pane's model, the others drawn from the scene alone.
pub fn all(diff: &diff::DiffPane) -> PaneMap<&dyn Pane> {
    PaneMap::from_fn(|id| -> &dyn Pane {
        match id {
            PaneId::Agent => &terminal::AgentPane,
            PaneId::Diff => diff,
            PaneId::RunLog => &terminal::RunLogPane,
            PaneId::Metrics => &metrics::MetricsPane,
            PaneId::Verdict => &verdict::VerdictPane,
        }
    })
}

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
            Line::from(
                "  • test_acc (last) = 0.8956 is outside the criterion at least 0.978 - 0.01",
            ),
            Line::from("Phase 1  FAIL fidelity_gap   run 23.0 s, exit 0"),
        ];
        assert_eq!(
            text(&wrap_hanging(lines, 24)),
            [
                "  • test_acc (last) =",
                "    0.8956 is outside",
                "    the criterion at",
                "    least 0.978 - 0.01",
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

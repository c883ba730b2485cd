//! The Agent and Run log panes: a terminal's rows, copied under the state's lock, drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Block;
use tui_term::widget::{Cursor, PseudoTerminal};

use crate::pty::screen::Screen;

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

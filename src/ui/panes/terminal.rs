//! The Agent and Run log panes: a terminal's rows, copied into the scene under the state's
//! lock ([`TerminalView`]), drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::widgets::{Block, Paragraph, Wrap};
use tui_term::widget::{Cursor, PseudoTerminal};

use super::super::scene::TerminalView;

/// A terminal pane: the copied rows, with the cursor unless `hide_cursor` (or the copy says
/// the terminal hides it or is scrolled back); while the terminal is blank, `placeholder`
/// (what the session is doing) in `dim` instead, so an empty pane never looks hung.
pub fn terminal(
    frame: &mut Frame<'_>,
    rect: Rect,
    block: Block<'_>,
    view: &TerminalView,
    hide_cursor: bool,
    (placeholder, dim): (Option<String>, Color),
) {
    if view.is_blank()
        && let Some(line) = placeholder
    {
        let paragraph = Paragraph::new(line)
            .style(Style::default().fg(dim))
            .wrap(Wrap { trim: false })
            .block(block);
        frame.render_widget(paragraph, rect);
        return;
    }
    let mut cursor = Cursor::default();
    if hide_cursor || tui_term::widget::Screen::hide_cursor(view) {
        cursor.hide();
    }
    let widget = PseudoTerminal::new(view).block(block).cursor(cursor);
    frame.render_widget(widget, rect);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pty::screen::Screen;
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
        terminal(f, area, block, &view, true, (None, Color::Reset));
    }
}

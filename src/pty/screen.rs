//! A terminal screen (vt100) with a bounded scrollback, fed with decoded PTY text through
//! the escape-string cap.

use super::filter::EscapeCap;

/// Lines of scrollback kept per screen; older lines live only in the journal.
pub const SCROLLBACK_LINES: usize = 10_000;

/// A terminal emulator screen for one pane.
pub struct Screen {
    parser: vt100::Parser,
    cap: EscapeCap,
    scratch: String,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.parser.screen().size();
        write!(f, "Screen({cols}x{rows})")
    }
}

impl Clone for Screen {
    /// A copy of the screen and its scrollback (the escape-sequence parser starts afresh).
    fn clone(&self) -> Self {
        let (rows, cols) = self.parser.screen().size();
        let mut parser = vt100::Parser::new(rows, cols, SCROLLBACK_LINES);
        *parser.screen_mut() = self.parser.screen().clone();
        Screen {
            parser,
            cap: self.cap.clone(),
            scratch: String::new(),
        }
    }
}

impl Screen {
    /// An empty screen of the given size.
    pub fn new(cols: u16, rows: u16) -> Self {
        Screen {
            parser: vt100::Parser::new(rows.max(2), cols.max(10), SCROLLBACK_LINES),
            cap: EscapeCap::new(),
            scratch: String::new(),
        }
    }

    /// Feeds terminal output (escape-string payloads bounded first).
    pub fn process(&mut self, text: &str) {
        if self.cap.passes_unchanged(text) {
            self.parser.process(text.as_bytes());
            return;
        }
        self.scratch.clear();
        self.cap.filter(text, &mut self.scratch);
        self.parser.process(self.scratch.as_bytes());
    }

    /// Resizes the screen.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.parser.screen_mut().set_size(rows.max(2), cols.max(10));
    }

    /// The underlying vt100 screen, for drawing.
    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// Scrolls the view back by `rows` lines from the live end (0 = live).
    pub fn set_scrollback(&mut self, rows: usize) {
        self.parser.screen_mut().set_scrollback(rows);
    }

    /// About how many bytes the screen holds: its cells, visible, alternate and scrolled
    /// back (the scrollback view is left where it was).
    pub fn held_bytes(&mut self) -> usize {
        let screen = self.parser.screen_mut();
        let offset = screen.scrollback();
        screen.set_scrollback(usize::MAX);
        let scrolled = screen.scrollback();
        screen.set_scrollback(offset);
        let (rows, cols) = screen.size();
        (scrolled + 2 * usize::from(rows)) * usize::from(cols) * std::mem::size_of::<vt100::Cell>()
    }

    /// The visible text, rows joined by newlines, trailing blanks trimmed.
    pub fn contents(&self) -> String {
        self.parser.screen().contents()
    }
}

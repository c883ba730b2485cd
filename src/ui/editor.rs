//! A small multi-line text editor for the phase-two details and messages to the agent:
//! cursor movement, line editing, paste. Lines longer than the window wrap at its width (by
//! character, so the cursor's place on screen follows from its place in the text), and
//! `Up`/`Down` move by rows on screen.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key did to the editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorOutcome {
    /// Keep editing.
    Editing,
    /// Send the text (Ctrl-S).
    Submit(String),
    /// Close without sending (Esc).
    Cancel,
}

/// Editor text as lines of chars, with a cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Editor {
    lines: Vec<Vec<char>>,
    row: usize,
    col: usize,
    /// First visible row on screen.
    pub top: usize,
    /// The window's width in columns, as last drawn (0 until then: no wrapping).
    width: usize,
}

impl Editor {
    /// An editor holding `text`, cursor at the end.
    pub fn new(text: &str) -> Editor {
        let mut lines: Vec<Vec<char>> = text.split('\n').map(|l| l.chars().collect()).collect();
        if lines.is_empty() {
            lines.push(Vec::new());
        }
        let row = lines.len() - 1;
        let col = lines[row].len();
        Editor {
            lines,
            row,
            col,
            top: 0,
            width: 0,
        }
    }

    /// The whole text.
    pub fn text(&self) -> String {
        self.lines
            .iter()
            .map(|l| l.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Cursor (row, column in chars).
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    /// Inserts pasted text at the cursor.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        for ch in text.chars() {
            self.insert(ch);
        }
    }

    fn insert(&mut self, ch: char) {
        if ch == '\n' {
            let rest = self.lines[self.row].split_off(self.col);
            self.lines.insert(self.row + 1, rest);
            self.row += 1;
            self.col = 0;
        } else if !ch.is_control() || ch == '\t' {
            self.lines[self.row].insert(self.col, ch);
            self.col += 1;
        }
    }

    /// Handles a key.
    pub fn on_key(&mut self, key: KeyEvent) -> EditorOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('s') if ctrl => return EditorOutcome::Submit(self.text()),
            KeyCode::Esc => return EditorOutcome::Cancel,
            KeyCode::Char('a') if ctrl => self.col = 0,
            KeyCode::Char('e') if ctrl => self.col = self.lines[self.row].len(),
            KeyCode::Char('k') if ctrl => self.lines[self.row].truncate(self.col),
            KeyCode::Char('u') if ctrl => {
                self.lines[self.row].drain(..self.col);
                self.col = 0;
            }
            KeyCode::Char(c) if !ctrl => self.insert(c),
            KeyCode::Enter => self.insert('\n'),
            KeyCode::Tab => self.insert('\t'),
            KeyCode::Backspace => {
                if self.col > 0 {
                    self.col -= 1;
                    self.lines[self.row].remove(self.col);
                } else if self.row > 0 {
                    let line = self.lines.remove(self.row);
                    self.row -= 1;
                    self.col = self.lines[self.row].len();
                    self.lines[self.row].extend(line);
                }
            }
            KeyCode::Delete => {
                if self.col < self.lines[self.row].len() {
                    self.lines[self.row].remove(self.col);
                } else if self.row + 1 < self.lines.len() {
                    let line = self.lines.remove(self.row + 1);
                    self.lines[self.row].extend(line);
                }
            }
            KeyCode::Left => {
                if self.col > 0 {
                    self.col -= 1;
                } else if self.row > 0 {
                    self.row -= 1;
                    self.col = self.lines[self.row].len();
                }
            }
            KeyCode::Right => {
                if self.col < self.lines[self.row].len() {
                    self.col += 1;
                } else if self.row + 1 < self.lines.len() {
                    self.row += 1;
                    self.col = 0;
                }
            }
            KeyCode::Up => self.move_rows(-1),
            KeyCode::Down => self.move_rows(1),
            KeyCode::Home => self.col = 0,
            KeyCode::End => self.col = self.lines[self.row].len(),
            _ => {}
        }
        EditorOutcome::Editing
    }

    /// The wrap width: the window's, or no wrapping before the first draw.
    fn wrap(&self) -> usize {
        if self.width == 0 {
            usize::MAX
        } else {
            self.width
        }
    }

    /// Rows on screen of a line of `len` characters (one more where the cursor may sit
    /// after a full row).
    fn rows_of(&self, len: usize) -> usize {
        len / self.wrap() + 1
    }

    /// Moves the cursor `by` rows on screen (−1 up, 1 down), keeping its column on screen
    /// where the row is long enough.
    fn move_rows(&mut self, by: isize) {
        let w = self.wrap();
        let (x, sub) = (self.col % w, self.col / w);
        if by < 0 {
            if sub > 0 {
                self.col -= w;
            } else if self.row > 0 {
                self.row -= 1;
                let len = self.lines[self.row].len();
                let last_row = (self.rows_of(len) - 1).saturating_mul(w);
                self.col = last_row.saturating_add(x).min(len);
            }
        } else {
            let len = self.lines[self.row].len();
            if sub + 1 < self.rows_of(len) {
                self.col = (self.col + w).min(len);
            } else if self.row + 1 < self.lines.len() {
                self.row += 1;
                self.col = x.min(self.lines[self.row].len());
            }
        }
    }

    /// The rows on screen, wrapped at the window's width.
    pub fn screen_rows(&self) -> Vec<String> {
        let w = self.wrap();
        self.lines
            .iter()
            .flat_map(|line| {
                (0..self.rows_of(line.len())).map(move |k| {
                    line.iter()
                        .skip(k.saturating_mul(w))
                        .take(w)
                        .collect::<String>()
                })
            })
            .collect()
    }

    /// The cursor's place on screen: (row from the first row, column).
    pub fn screen_cursor(&self) -> (usize, usize) {
        let w = self.wrap();
        let above: usize = self.lines[..self.row]
            .iter()
            .map(|l| self.rows_of(l.len()))
            .sum();
        (above + self.col / w, self.col % w)
    }

    /// Takes in the window's size and keeps the cursor within it.
    pub fn scroll_to_cursor(&mut self, height: usize, width: usize) {
        self.width = width;
        self.top = self.top_for(height);
    }

    /// The first visible row for a window of `height` rows: [`Editor::top`], moved just
    /// enough that the cursor's row is in view.
    pub fn top_for(&self, height: usize) -> usize {
        let row = self.screen_cursor().0;
        if row < self.top {
            row
        } else if height > 0 && row >= self.top + height {
            row + 1 - height
        } else {
            self.top
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn edits_lines_and_submits() {
        let mut e = Editor::new("lr 1e-3\nbatch 32");
        assert_eq!(e.cursor(), (1, 8));
        e.on_key(key(KeyCode::Up));
        e.on_key(key(KeyCode::End));
        for c in " (Adam)".chars() {
            e.on_key(key(KeyCode::Char(c)));
        }
        e.on_key(key(KeyCode::Enter));
        e.paste("seed 0\r\n");
        e.on_key(key(KeyCode::Backspace));
        assert_eq!(e.text(), "lr 1e-3 (Adam)\nseed 0\nbatch 32");
        let submit = e.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
        assert_eq!(
            submit,
            EditorOutcome::Submit("lr 1e-3 (Adam)\nseed 0\nbatch 32".into())
        );
        assert_eq!(e.on_key(key(KeyCode::Esc)), EditorOutcome::Cancel);
    }

    #[test]
    fn backspace_joins_lines_and_delete_joins_next() {
        let mut e = Editor::new("ab\ncd");
        e.on_key(key(KeyCode::Home));
        e.on_key(key(KeyCode::Backspace));
        assert_eq!(e.text(), "abcd");
        assert_eq!(e.cursor(), (0, 2));
        e.on_key(key(KeyCode::Enter));
        e.on_key(key(KeyCode::Left));
        e.on_key(key(KeyCode::Delete));
        assert_eq!(e.text(), "abcd");
    }

    #[test]
    fn wrapped_lines_put_the_cursor_where_the_text_is_and_up_moves_a_row() {
        // 25 characters in a window 10 wide: three rows.
        let mut e = Editor::new("first\nabcdefghijklmnopqrstuvwxy\nlast");
        e.scroll_to_cursor(5, 10);
        assert_eq!(
            e.screen_rows(),
            ["first", "abcdefghij", "klmnopqrst", "uvwxy", "last"]
        );
        assert_eq!(e.screen_cursor(), (4, 4));
        // Up from the end of "last" lands on the wrapped line's last row, same column.
        e.on_key(key(KeyCode::Up));
        assert_eq!(e.cursor(), (1, 24));
        assert_eq!(e.screen_cursor(), (3, 4));
        e.on_key(key(KeyCode::Up));
        assert_eq!(e.screen_cursor(), (2, 4));
        // Typing lands where the cursor is shown.
        e.on_key(key(KeyCode::Char('!')));
        assert_eq!(e.screen_rows()[2], "klmn!opqrs");
        e.on_key(key(KeyCode::Down));
        e.on_key(key(KeyCode::Down));
        assert_eq!(e.screen_cursor(), (4, 4));
        // The window follows the cursor by rows on screen.
        e.scroll_to_cursor(2, 10);
        assert_eq!(e.top, 3);
    }
}

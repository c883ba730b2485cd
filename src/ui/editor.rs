//! A small multi-line text editor for the phase-two details and messages to the agent:
//! cursor movement, line editing, paste.

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
    /// First visible line.
    pub top: usize,
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

    /// The lines, for drawing.
    pub fn lines(&self) -> impl Iterator<Item = String> + '_ {
        self.lines.iter().map(|l| l.iter().collect())
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
            KeyCode::Up if self.row > 0 => {
                self.row -= 1;
                self.col = self.col.min(self.lines[self.row].len());
            }
            KeyCode::Down if self.row + 1 < self.lines.len() => {
                self.row += 1;
                self.col = self.col.min(self.lines[self.row].len());
            }
            KeyCode::Home => self.col = 0,
            KeyCode::End => self.col = self.lines[self.row].len(),
            _ => {}
        }
        EditorOutcome::Editing
    }

    /// Keeps the cursor within a window of `height` lines.
    pub fn scroll_to_cursor(&mut self, height: usize) {
        self.top = self.top_for(height);
    }

    /// The first visible line for a window of `height` lines: [`Editor::top`], moved just
    /// enough that the cursor's line is in view.
    pub fn top_for(&self, height: usize) -> usize {
        if self.row < self.top {
            self.row
        } else if height > 0 && self.row >= self.top + height {
            self.row + 1 - height
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
}

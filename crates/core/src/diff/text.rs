//! Input normalisation before diffing and display: binary sniffing, lossy UTF-8,
//! CRLF → LF, tab expansion, control characters made visible, and display widths.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// How many leading bytes are inspected for a NUL byte to call a file binary.
pub const BINARY_SNIFF_LEN: usize = 8 * 1024;

/// True when the first [`BINARY_SNIFF_LEN`] bytes contain a NUL byte.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_LEN)].contains(&0)
}

/// A text ready for diffing and highlighting: valid UTF-8, `\n` line endings, tabs
/// expanded, control characters replaced by visible symbols.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreparedText {
    /// The normalised text (empty for binary input).
    pub text: String,
    /// Number of lines that ended in `\r\n` in the input.
    pub crlf_lines: usize,
    /// The input looked binary (a NUL byte near the start); `text` is then empty.
    pub binary: bool,
}

impl PreparedText {
    /// Normalises raw bytes; `tab_width` is the distance between tab stops (0 counts as 1).
    pub fn new(bytes: &[u8], tab_width: usize) -> Self {
        if is_binary(bytes) {
            return Self {
                text: String::new(),
                crlf_lines: 0,
                binary: true,
            };
        }
        let decoded = String::from_utf8_lossy(bytes);
        let tab_width = tab_width.max(1);
        let mut text = String::with_capacity(decoded.len());
        let mut crlf_lines = 0;
        for piece in decoded.split_inclusive('\n') {
            let (line, newline) = match piece.strip_suffix('\n') {
                Some(rest) => match rest.strip_suffix('\r') {
                    Some(rest) => {
                        crlf_lines += 1;
                        (rest, true)
                    }
                    None => (rest, true),
                },
                None => (piece, false),
            };
            push_display_line(&mut text, line, tab_width);
            if newline {
                text.push('\n');
            }
        }
        Self {
            text,
            crlf_lines,
            binary: false,
        }
    }

    /// The lines of the text, without their `\n`; a final newline does not start a line.
    pub fn lines(&self) -> Vec<&str> {
        split_lines(&self.text)
    }
}

/// Splits normalised text into lines without their `\n`; a final newline adds no line.
pub fn split_lines(text: &str) -> Vec<&str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        Vec::new()
    } else {
        body.split('\n').collect()
    }
}

/// Appends `line` to `out` with tabs expanded to the next stop and control characters
/// replaced by their visible Unicode "control picture" (C1 controls by U+FFFD), so that
/// nothing in the text can move a terminal's cursor.
fn push_display_line(out: &mut String, line: &str, tab_width: usize) {
    if !line.chars().any(needs_rewrite) {
        out.push_str(line);
        return;
    }
    let mut column = 0;
    for c in line.chars() {
        match c {
            '\t' => {
                let spaces = tab_width - column % tab_width;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            c if (c as u32) < 0x20 => {
                // U+2400..U+241F mirror the C0 controls one to one.
                out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'));
                column += 1;
            }
            '\u{7f}' => {
                out.push('\u{2421}');
                column += 1;
            }
            c if ('\u{80}'..='\u{9f}').contains(&c) => {
                out.push('\u{FFFD}');
                column += 1;
            }
            c => {
                out.push(c);
                column += c.width().unwrap_or(0);
            }
        }
    }
}

fn needs_rewrite(c: char) -> bool {
    (c as u32) < 0x20 || ('\u{7f}'..='\u{9f}').contains(&c)
}

/// Display width of a string in terminal columns.
pub fn display_width(s: &str) -> usize {
    s.width()
}

/// End (byte offset) of the character cluster starting at `start`: a character with the
/// zero-width characters that follow it (combining marks, variation selectors) and
/// anything joined to it by U+200D, so emoji sequences and accents move as one unit.
pub fn cluster_end(s: &str, start: usize) -> usize {
    let mut chars = s[start..].char_indices();
    let Some((_, first)) = chars.next() else {
        return start;
    };
    let mut joined = first == '\u{200d}';
    for (i, c) in chars {
        if !(joined || c.width() == Some(0)) {
            return start + i;
        }
        joined = c == '\u{200d}';
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_in_first_8k_is_binary_but_later_is_not() {
        assert!(is_binary(b"abc\0def"));
        let mut late = vec![b'a'; BINARY_SNIFF_LEN];
        late.push(0);
        assert!(!is_binary(&late));
        assert!(PreparedText::new(b"\0\x01", 4).binary);
    }

    #[test]
    fn crlf_is_normalised_and_counted() {
        let p = PreparedText::new(b"a\r\nb\r\nc", 4);
        assert_eq!(p.text, "a\nb\nc");
        assert_eq!(p.crlf_lines, 2);
        assert_eq!(p.lines(), vec!["a", "b", "c"]);
    }

    #[test]
    fn tabs_expand_to_the_next_stop() {
        let p = PreparedText::new(b"\tx\nab\tc\n", 4);
        assert_eq!(p.lines(), vec!["    x", "ab  c"]);
        let p = PreparedText::new(b"a\tb", 8);
        assert_eq!(p.text, "a       b");
    }

    #[test]
    fn invalid_utf8_becomes_replacement_char() {
        let p = PreparedText::new(b"ok \xff\xfe end", 4);
        assert_eq!(p.text, "ok \u{FFFD}\u{FFFD} end");
    }

    #[test]
    fn control_characters_are_made_visible() {
        let p = PreparedText::new(b"a\x1b[31mb\rc\x7f", 4);
        assert_eq!(p.text, "a\u{241b}[31mb\u{240d}c\u{2421}");
        let p = PreparedText::new("x\u{9b}y".as_bytes(), 4);
        assert_eq!(p.text, "x\u{FFFD}y");
    }

    #[test]
    fn line_splitting_ignores_the_final_newline() {
        assert!(split_lines("").is_empty());
        assert_eq!(split_lines("\n"), vec![""]);
        assert_eq!(split_lines("a\n\nb"), vec!["a", "", "b"]);
    }

    #[test]
    fn clusters_keep_accents_and_emoji_sequences_together() {
        let s = "e\u{301}x❤\u{fe0f}👨\u{200d}👩y";
        let mut cuts = Vec::new();
        let mut at = 0;
        while at < s.len() {
            let end = cluster_end(s, at);
            cuts.push(&s[at..end]);
            at = end;
        }
        assert_eq!(
            cuts,
            vec!["e\u{301}", "x", "❤\u{fe0f}", "👨\u{200d}👩", "y"]
        );
    }

    #[test]
    fn widths_count_wide_characters_twice() {
        assert_eq!(display_width("abc"), 3);
        assert_eq!(display_width("日本"), 4);
        assert_eq!(display_width("🦀"), 2);
    }
}

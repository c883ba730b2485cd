//! A terminal log as HTML with its colours: SGR colours and attributes become spans, a
//! carriage return starts its line again (a progress bar keeps its last state), backspace
//! takes back a character, and every other control sequence is dropped.

use std::fmt::Write as _;

use super::html::escape;

/// A colour: one of the 16 of the palette, one of the 256, or RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Colour {
    Indexed(u8),
    Rgb(u8, u8, u8),
}

/// The attributes of a run of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Style {
    fg: Option<Colour>,
    bg: Option<Colour>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
}

impl Style {
    /// Applies one SGR sequence's parameters.
    fn apply(&mut self, params: &[u16]) {
        let mut i = 0;
        if params.is_empty() {
            *self = Style::default();
        }
        while i < params.len() {
            match params[i] {
                0 => *self = Style::default(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => self.underline = true,
                22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = false,
                n @ 30..=37 => self.fg = Some(Colour::Indexed((n - 30) as u8)),
                n @ 90..=97 => self.fg = Some(Colour::Indexed((n - 90 + 8) as u8)),
                n @ 40..=47 => self.bg = Some(Colour::Indexed((n - 40) as u8)),
                n @ 100..=107 => self.bg = Some(Colour::Indexed((n - 100 + 8) as u8)),
                39 => self.fg = None,
                49 => self.bg = None,
                n @ (38 | 48) => {
                    let (colour, used) = extended(&params[i + 1..]);
                    if n == 38 {
                        self.fg = colour;
                    } else {
                        self.bg = colour;
                    }
                    i += used;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The span's opening tag, or None for plain text.
    fn open(&self) -> Option<String> {
        if *self == Style::default() {
            return None;
        }
        let mut classes = Vec::new();
        let mut css = String::new();
        match self.fg {
            Some(Colour::Indexed(n)) if n < 16 => classes.push(format!("f{n}")),
            Some(c) => {
                let _ = write!(css, "color:{};", rgb(c));
            }
            None => {}
        }
        match self.bg {
            Some(Colour::Indexed(n)) if n < 16 => classes.push(format!("b{n}")),
            Some(c) => {
                let _ = write!(css, "background:{};", rgb(c));
            }
            None => {}
        }
        for (on, name) in [
            (self.bold, "bold"),
            (self.dim, "dim"),
            (self.italic, "italic"),
            (self.underline, "underline"),
        ] {
            if on {
                classes.push(name.to_string());
            }
        }
        let mut tag = String::from("<span");
        if !classes.is_empty() {
            let _ = write!(tag, " class=\"{}\"", classes.join(" "));
        }
        if !css.is_empty() {
            let _ = write!(tag, " style=\"{css}\"");
        }
        tag.push('>');
        Some(tag)
    }
}

/// `38;5;N` or `38;2;R;G;B` after the 38: the colour and how many parameters it took.
fn extended(rest: &[u16]) -> (Option<Colour>, usize) {
    match rest {
        [5, n, ..] => (Some(Colour::Indexed((*n).min(255) as u8)), 2),
        [2, r, g, b, ..] => (
            Some(Colour::Rgb(
                (*r).min(255) as u8,
                (*g).min(255) as u8,
                (*b).min(255) as u8,
            )),
            4,
        ),
        _ => (None, rest.len()),
    }
}

/// A colour of the 256 (past the 16) or an RGB one, as CSS.
fn rgb(colour: Colour) -> String {
    let (r, g, b) = match colour {
        Colour::Rgb(r, g, b) => (r, g, b),
        Colour::Indexed(n) if n >= 232 => {
            let v = 8 + (n - 232) * 10;
            (v, v, v)
        }
        Colour::Indexed(n) => {
            let n = n.saturating_sub(16);
            let level = |x: u8| if x == 0 { 0 } else { 55 + x * 40 };
            (level(n / 36), level((n / 6) % 6), level(n % 6))
        }
    };
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One line: runs of text with their style.
type Line = Vec<(Style, String)>;

/// Lines of terminal text, as they are built.
struct Lines {
    done: Vec<Line>,
    current: Line,
    style: Style,
}

impl Lines {
    fn push_char(&mut self, c: char) {
        match self.current.last_mut() {
            Some((style, text)) if *style == self.style => text.push(c),
            _ => self.current.push((self.style, c.to_string())),
        }
    }

    fn backspace(&mut self) {
        if let Some((_, text)) = self.current.last_mut() {
            text.pop();
            if text.is_empty() {
                self.current.pop();
            }
        }
    }
}

/// The lines of `text` (a terminal's output) with their styles; at most `max_lines`, the
/// last ones, and how many were dropped before them.
fn parse(text: &str, max_lines: usize) -> (Vec<Line>, usize) {
    let mut lines = Lines {
        done: Vec::new(),
        current: Vec::new(),
        style: Style::default(),
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                let line = std::mem::take(&mut lines.current);
                lines.done.push(line);
            }
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    lines.current.clear();
                }
            }
            '\u{8}' => lines.backspace(),
            '\t' => lines.push_char('\t'),
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    let mut body = String::new();
                    let mut last = None;
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            last = Some(c);
                            break;
                        }
                        body.push(c);
                    }
                    if last == Some('m') && !body.starts_with(['?', '>', '<', '=']) {
                        let params: Vec<u16> = body
                            .split([';', ':'])
                            .map(|p| p.parse().unwrap_or(0))
                            .collect();
                        let params = if body.is_empty() { Vec::new() } else { params };
                        lines.style.apply(&params);
                    }
                }
                // An OSC string ends with BEL or ESC \.
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            c if c.is_control() => {}
            c => lines.push_char(c),
        }
    }
    if !lines.current.is_empty() {
        lines.done.push(lines.current);
    }
    let dropped = lines.done.len().saturating_sub(max_lines);
    lines.done.drain(..dropped);
    (lines.done, dropped)
}

/// `text`, a terminal's output, as the inside of a `<pre>`: at most `max_lines` lines (the
/// last), with a first line saying how many were left out.
pub fn to_html(text: &str, max_lines: usize) -> String {
    let (lines, dropped) = parse(text, max_lines);
    let mut out = String::new();
    if dropped > 0 {
        let _ = writeln!(
            out,
            "<span class=\"dim\">… {dropped} earlier lines left out</span>"
        );
    }
    for line in lines {
        for (style, text) in line {
            match style.open() {
                Some(tag) => {
                    let _ = write!(out, "{tag}{}</span>", escape(&text));
                }
                None => out.push_str(&escape(&text)),
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_become_spans_and_other_sequences_vanish() {
        let html = to_html(
            "\u{1b}[1;31mError\u{1b}[0m: bad <input>\n\u{1b}[?25lplain\u{1b}]0;title\u{7}\n",
            100,
        );
        assert_eq!(
            html,
            "<span class=\"f1 bold\">Error</span>: bad &lt;input&gt;\nplain\n"
        );
    }

    #[test]
    fn a_progress_bar_keeps_its_last_state_and_extended_colours_are_css() {
        let html = to_html("10%\r50%\r100%\nab\u{8}c\n\u{1b}[38;2;1;2;3mx\n", 100);
        assert_eq!(html, "100%\nac\n<span style=\"color:#010203;\">x</span>\n");
        assert_eq!(rgb(Colour::Indexed(196)), "#ff0000");
        assert_eq!(rgb(Colour::Indexed(232)), "#080808");
    }

    #[test]
    fn a_long_log_keeps_its_last_lines_and_says_how_many_went() {
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let html = to_html(&text, 3);
        assert!(html.starts_with("<span class=\"dim\">… 7 earlier lines left out</span>\n"));
        assert!(html.ends_with("line 8\nline 9\nline 10\n"), "{html}");
    }
}

//! Bounds untrusted terminal output before the emulator: the payload of an OSC, DCS, SOS, PM
//! or APC string (which a terminal parser buffers until its terminator) is cut after
//! [`MAX_STRING_PAYLOAD`] bytes, so an unterminated sequence cannot grow memory.

/// Longest escape-string payload passed on.
pub const MAX_STRING_PAYLOAD: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    /// Inside a string; the payload bytes passed so far.
    Payload(usize),
    /// ESC seen inside a string (maybe the ST terminator).
    PayloadEscape(usize),
}

/// A streaming filter; keep one per terminal stream.
#[derive(Debug, Clone)]
pub struct EscapeCap {
    state: State,
}

impl Default for EscapeCap {
    fn default() -> Self {
        Self::new()
    }
}

impl EscapeCap {
    /// A filter in the ground state.
    pub fn new() -> EscapeCap {
        EscapeCap {
            state: State::Ground,
        }
    }

    /// Whether `text` would pass through unchanged and leave the filter where it is, in
    /// the ground state: no escape string starts in it and it does not end inside an escape
    /// sequence. The common case (plain and coloured output) is then fed to the emulator
    /// without a copy.
    pub fn passes_unchanged(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        self.state == State::Ground
            && memchr::memchr_iter(0x1b, bytes)
                .all(|at| bytes.get(at + 1).is_some_and(|b| !b"]PX^_\x1b".contains(b)))
    }

    /// Filters `text`, appending what passes to `out`.
    pub fn filter(&mut self, text: &str, out: &mut String) {
        for ch in text.chars() {
            match self.state {
                State::Ground => {
                    if ch == '\u{1b}' {
                        self.state = State::Escape;
                    }
                    out.push(ch);
                }
                State::Escape => {
                    self.state = match ch {
                        ']' | 'P' | 'X' | '^' | '_' => State::Payload(0),
                        '\u{1b}' => State::Escape,
                        _ => State::Ground,
                    };
                    out.push(ch);
                }
                State::Payload(n) => match ch {
                    '\u{7}' | '\u{9c}' => {
                        self.state = State::Ground;
                        out.push(ch);
                    }
                    '\u{1b}' => self.state = State::PayloadEscape(n),
                    _ => {
                        let len = ch.len_utf8();
                        if n + len <= MAX_STRING_PAYLOAD {
                            out.push(ch);
                        }
                        self.state = State::Payload((n + len).min(MAX_STRING_PAYLOAD + 1));
                    }
                },
                State::PayloadEscape(_) => {
                    if ch == '\\' {
                        self.state = State::Ground;
                        out.push('\u{1b}');
                        out.push('\\');
                    } else {
                        // Not a terminator: the ESC ends the string and starts a sequence.
                        out.push('\u{1b}');
                        self.state = State::Escape;
                        let mut rest = String::new();
                        self.filter(&ch.to_string(), &mut rest);
                        out.push_str(&rest);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> String {
        let mut cap = EscapeCap::new();
        let mut out = String::new();
        for c in chunks {
            cap.filter(c, &mut out);
        }
        out
    }

    #[test]
    fn ordinary_output_passes_unchanged() {
        let text = "plain \x1b[1;31mred\x1b[0m \x1b]0;title\x07 ok \x1bP1$r\x1b\\ done";
        assert_eq!(run(&[text]), text);
    }

    #[test]
    fn long_payloads_are_cut_and_the_terminator_kept() {
        let payload = "x".repeat(MAX_STRING_PAYLOAD * 3);
        let out = run(&["\x1b]52;c;", &payload, "\x07after"]);
        assert_eq!(out.len(), 2 + MAX_STRING_PAYLOAD + 1 + "after".len());
        assert!(out.ends_with("\x07after"));
        let out = run(&["\x1bP", &payload, "\x1b\\tail"]);
        assert!(out.ends_with("\x1b\\tail"));
        assert!(out.len() <= 2 + MAX_STRING_PAYLOAD + 2 + 4);
    }

    #[test]
    fn only_text_without_escape_strings_passes_unchanged() {
        let cap = EscapeCap::new();
        assert!(cap.passes_unchanged("plain \x1b[1;31mred\x1b[0m\r\n"));
        assert!(!cap.passes_unchanged("title \x1b]0;x\x07"));
        assert!(!cap.passes_unchanged("ends in escape \x1b"));
        assert!(!cap.passes_unchanged("\x1b\x1bP1$r"));
        let mut inside = EscapeCap::new();
        inside.filter("\x1b]0;", &mut String::new());
        assert!(!inside.passes_unchanged("plain"));
    }

    proptest::proptest! {
        #[test]
        fn what_passes_unchanged_is_what_the_filter_gives(text in r"[a-c\x1b\\\]\[P_^X\x07 é]{0,30}") {
            let mut cap = EscapeCap::new();
            if cap.passes_unchanged(&text) {
                let mut out = String::new();
                cap.filter(&text, &mut out);
                proptest::prop_assert_eq!(&out, &text);
                proptest::prop_assert_eq!(cap.state, State::Ground);
            }
        }
    }

    #[test]
    fn an_unterminated_payload_stays_bounded_across_chunks() {
        let mut cap = EscapeCap::new();
        let mut total = 0;
        let mut out = String::new();
        cap.filter("\x1b]0;", &mut out);
        total += out.len();
        let chunk = "y".repeat(64 * 1024);
        for _ in 0..64 {
            out.clear();
            cap.filter(&chunk, &mut out);
            total += out.len();
        }
        assert!(total <= MAX_STRING_PAYLOAD + 4, "{total}");
    }
}

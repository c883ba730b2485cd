//! A terminal screen (vt100) with a bounded scrollback, fed with decoded PTY text through
//! the escape-string cap, and told whether its escape-sequence parser is at rest (between
//! sequences), the only moments a copy of it is exact. Readers see it through `&self`, the
//! scrollback included: vt100 keeps its view offset inside the screen, so the wrapper sets
//! it only for the length of one read and puts it back before returning.
//!
//! Its three jobs, a file each:
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the emulator wrapper ([`Screen`]): feed, resize, read, copy; the parser's state |
//! | `held.rs` | the held-back log text and the `Tail` that shows the live end while text is held |
//! | `stored.rs` | the stored snapshot format ([`StoredScreen`]) |

mod held;
mod stored;

use std::cell::{Ref, RefCell};
use std::sync::Arc;

use super::filter::EscapeCap;

use held::{HOLD_BACK_LIMIT, HeldBack, Tail, feed_held, plain_log_text};
use stored::Packed;

pub use stored::StoredScreen;

/// Lines of scrollback kept per screen; older lines live only in the journal.
pub const SCROLLBACK_LINES: usize = 10_000;

/// A terminal emulator screen for one pane.
pub struct Screen {
    /// The emulator. Its scrollback offset is always 0 between calls (see
    /// [`Screen::read_scrolled`]); the cell exists only for that one transient setting.
    emulator: RefCell<Emulator>,
    cap: EscapeCap,
    scratch: String,
    sequence: Sequence,
    /// Plain log text not yet fed to the emulator, when holding back is on.
    held: Option<RefCell<HeldBack>>,
    /// The visible rows with the held text fed, while text is held and the live end has
    /// been read since the emulator was last fed.
    tail: RefCell<Option<Tail>>,
}

/// The emulator and, once a snapshot has stored it, its stored encoding, kept until the
/// emulator next changes: snapshots taken while log text is only being held back share one.
struct Emulator {
    parser: vt100::Parser,
    stored: Option<Arc<Packed>>,
}

impl Emulator {
    fn new(parser: vt100::Parser) -> Self {
        Emulator {
            parser,
            stored: None,
        }
    }

    /// The parser, to change: the stored encoding no longer holds.
    fn parser_mut(&mut self) -> &mut vt100::Parser {
        self.stored = None;
        &mut self.parser
    }
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.screen().size();
        write!(f, "Screen({cols}x{rows})")
    }
}

impl Clone for Screen {
    /// A copy of the screen and its scrollback. The copy's escape-sequence parser starts at
    /// rest, so the copy is exact when [`Screen::at_rest`] holds (vt100 cannot copy a parser
    /// in the middle of a sequence).
    fn clone(&self) -> Self {
        let screen = self.screen();
        let (rows, cols) = screen.size();
        let mut parser = vt100::Parser::new(rows, cols, SCROLLBACK_LINES);
        *parser.screen_mut() = screen.clone();
        Screen {
            emulator: RefCell::new(Emulator::new(parser)),
            cap: self.cap.clone(),
            scratch: String::new(),
            sequence: Sequence::Ground,
            held: self.held.as_ref().map(|_| RefCell::default()),
            tail: RefCell::new(None),
        }
    }
}

impl Screen {
    /// An empty screen of the given size.
    pub fn new(cols: u16, rows: u16) -> Self {
        Screen {
            emulator: RefCell::new(Emulator::new(vt100::Parser::new(
                rows.max(2),
                cols.max(10),
                SCROLLBACK_LINES,
            ))),
            cap: EscapeCap::new(),
            scratch: String::new(),
            sequence: Sequence::Ground,
            held: None,
            tail: RefCell::new(None),
        }
    }

    /// Feeds terminal output (escape-string payloads bounded first).
    pub fn process(&mut self, text: &str) {
        let mut unfinished = String::new();
        if let Some(held) = &mut self.held {
            let held = held.get_mut();
            let partial = &held.text.as_bytes()[held.text.len() - held.partial..];
            // A piece may end on the ESC that starts a sequence: the escape-string cap
            // would only note it, and decide on the next piece, which it sees whole.
            let bytes = text.as_bytes();
            let cap_passes = self.cap.passes_unchanged(text)
                || (bytes.last() == Some(&0x1b)
                    && self.cap.passes_unchanged(&text[..text.len() - 1]));
            let holdable = if self.sequence == Sequence::Ground && cap_passes {
                plain_log_text(partial, bytes)
            } else {
                None
            };
            if let Some(partial) = holdable {
                if held.text.len() + text.len() > HOLD_BACK_LIMIT {
                    feed_held(self.emulator.get_mut().parser_mut(), held);
                    *self.tail.get_mut() = None;
                }
                if held.text.capacity() == 0 {
                    held.text.reserve_exact(HOLD_BACK_LIMIT);
                }
                held.text.push_str(text);
                held.line_feeds += memchr::memchr_iter(b'\n', bytes).count();
                held.partial = partial;
                return;
            }
            if !held.text.is_empty() {
                feed_held(self.emulator.get_mut().parser_mut(), held);
                *self.tail.get_mut() = None;
                // What is left is the start of a sequence that this piece does not go on
                // as held text would: it goes the ordinary way, before the piece.
                unfinished = std::mem::take(&mut held.text);
                held.partial = 0;
            }
        }
        if !unfinished.is_empty() {
            self.feed(&unfinished);
        }
        self.feed(text);
    }

    /// Feeds text to the emulator through the escape-string cap.
    fn feed(&mut self, text: &str) {
        let parser = self.emulator.get_mut().parser_mut();
        if self.cap.passes_unchanged(text) {
            parser.process(text.as_bytes());
            self.sequence = self.sequence.after(text.as_bytes());
            return;
        }
        self.scratch.clear();
        self.cap.filter(text, &mut self.scratch);
        parser.process(self.scratch.as_bytes());
        self.sequence = self.sequence.after(self.scratch.as_bytes());
    }

    /// Whether the escape-sequence parser is at rest: everything fed so far ends outside an
    /// escape sequence, so a copy of the screen behaves as the screen does.
    pub fn at_rest(&self) -> bool {
        let held_partial = self.held.as_ref().is_some_and(|h| h.borrow().partial > 0);
        self.sequence == Sequence::Ground && !held_partial
    }

    /// Resizes the screen.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.feed_held_back();
        self.emulator
            .get_mut()
            .parser_mut()
            .screen_mut()
            .set_size(rows.max(2), cols.max(10));
    }

    /// The underlying vt100 screen at its live end (no scrollback in view).
    pub fn screen(&self) -> Ref<'_, vt100::Screen> {
        self.feed_held_back();
        Ref::map(self.emulator.borrow(), |emulator| emulator.parser.screen())
    }

    /// Reads the screen as seen `back` lines scrolled back from its live end (0 = live;
    /// more than the scrollback holds shows its oldest lines); the screen is as it was
    /// afterwards. At 0, while text is held back, `read` may be given a copy of the
    /// visible rows with no scrollback (`Tail`, in `held.rs`): the same size, rows, cursor
    /// and modes.
    pub fn read_scrolled<R>(&self, back: usize, read: impl FnOnce(&vt100::Screen) -> R) -> R {
        if back == 0 {
            if self.catch_up_tail()
                && let Some(tail) = self.tail.borrow().as_ref()
            {
                return read(tail.parser.screen());
            }
            return read(&self.screen());
        }
        self.feed_held_back();
        let mut emulator = self.emulator.borrow_mut();
        // Scrolled back and forth again: the screen, and so its stored encoding, is as it was.
        let parser = &mut emulator.parser;
        parser.screen_mut().set_scrollback(back);
        let result = read(parser.screen());
        parser.screen_mut().set_scrollback(0);
        result
    }

    /// The visible text, rows joined by newlines, trailing blanks trimmed.
    pub fn contents(&self) -> String {
        self.screen().contents()
    }
}

/// Where vte's parser (the one inside vt100) stands, only as far as telling when it is back
/// in its ground state: the same transitions, without the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sequence {
    /// Between sequences.
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes.
    EscapeIntermediate,
    /// Inside a CSI sequence (entry, parameters, intermediates or ignored).
    Csi,
    /// A DCS before its final byte: entry, parameters, intermediates.
    DcsEntry,
    /// A DCS's parameters.
    DcsParam,
    /// A DCS's intermediates.
    DcsIntermediate,
    /// A DCS being ignored until it ends.
    DcsIgnore,
    /// A DCS's data.
    DcsPassthrough,
    /// An OSC string.
    Osc,
    /// An SOS, PM or APC string.
    String,
}

impl Sequence {
    /// The state after `bytes`. Every state goes to [`Sequence::Escape`] on ESC and the
    /// ground state leaves only on ESC, so only the bytes after the last ESC are walked,
    /// and only until the ground state is reached.
    fn after(self, bytes: &[u8]) -> Sequence {
        let (mut state, rest) = match memchr::memrchr(0x1B, bytes) {
            Some(i) => (Sequence::Escape, &bytes[i + 1..]),
            None => (self, bytes),
        };
        for &byte in rest {
            if state == Sequence::Ground {
                break;
            }
            state = state.step(byte);
        }
        state
    }

    /// One byte, as vte 0.15's state machine moves (for any state but the ground state).
    fn step(self, byte: u8) -> Sequence {
        use Sequence::*;
        // CAN and SUB end every sequence; ESC starts a new one.
        match byte {
            0x18 | 0x1A => return Ground,
            0x1B => return Escape,
            _ => {}
        }
        match (self, byte) {
            (Ground, _) => Ground,
            (Escape, 0x20..=0x2F) => EscapeIntermediate,
            (Escape, b'P') => DcsEntry,
            (Escape, b'[') => Csi,
            (Escape, b']') => Osc,
            (Escape, b'X' | b'^' | b'_') => String,
            (Escape, 0x30..=0x7E) => Ground,
            (EscapeIntermediate, 0x30..=0x7E) => Ground,
            (Csi, 0x40..=0x7E) => Ground,
            (DcsEntry | DcsParam | DcsIntermediate, 0x40..=0x7E) => DcsPassthrough,
            (DcsEntry | DcsParam, 0x30..=0x3B) => DcsParam,
            (DcsEntry, 0x3C..=0x3F) => DcsParam,
            (DcsParam, 0x3C..=0x3F) => DcsIgnore,
            (DcsEntry | DcsParam | DcsIntermediate, 0x20..=0x2F) => DcsIntermediate,
            (DcsIntermediate, 0x30..=0x3F) => DcsIgnore,
            (DcsPassthrough, 0x9C) => Ground,
            (Osc, 0x07) => Ground,
            (state, _) => state,
        }
    }
}

#[cfg(test)]
mod fixtures {
    //! Output pieces and readings shared by the tests of the screen's three parts.

    use super::Screen;

    /// Pieces of output that reach every part of a screen's state: scroll regions, the saved
    /// cursor, origin mode, the alternate screen, input and mouse modes, colours, wide and
    /// combining characters, wrapping, erasing with a background, scrolling.
    pub(super) const STATE_PIECES: [&str; 24] = [
        "text ",
        "漢字é\u{301}",
        "\r\n",
        "\r\n\r\n\r\n\r\n\r\n",
        "a long line that wraps past the end of a narrow screen ",
        "\x1b[31m",
        "\x1b[38;2;1;2;3m\x1b[44m",
        "\x1b[1;3;4;7m",
        "\x1b[0m",
        "\x1b[K",
        "\x1b[2;5r",
        "\x1b[r",
        "\x1b7",
        "\x1b8",
        "\x1b[?6h",
        "\x1b[?6l",
        "\x1b[?1049h",
        "\x1b[?1049l",
        "\x1b[?1h\x1b=",
        "\x1b[?1002h\x1b[?1006h",
        "\x1b[?2004h\x1b[?25l",
        "\x1b[3S",
        "\x1b[5;10H",
        "\x1b[2J\x1b[H",
    ];

    /// Feeds `screen` the pieces numbered in `pieces`, resizing it to 23×7 before piece
    /// `resize_at`.
    pub(super) fn fed(screen: &mut Screen, pieces: &[usize], resize_at: Option<usize>) {
        for (i, &piece) in pieces.iter().enumerate() {
            if resize_at == Some(i) {
                screen.resize(23, 7);
            }
            screen.process(STATE_PIECES[piece]);
        }
    }

    /// `lines` lines of log text in one of a few styles: coloured progress lines, colours
    /// that carry over from line to line (bold set once, a reset with a colour, a bare
    /// reset), lines that wrap on a 17-column screen, LF without CR.
    pub(super) fn log_block(lines: usize, style: u8, from: usize) -> String {
        (from..from + lines)
            .map(|i| match style {
                0 => format!(
                    "\x1b[32m{:3}%\x1b[0m|\x1b[36m{:<5}\x1b[0m| {i}\r\n",
                    i % 100,
                    "#".repeat(i % 5)
                ),
                1 if i % 7 == 0 => format!("\x1b[1mbold from here {i}\r\n"),
                1 => format!("line {i}\x1b[0;35m magenta\r\n"),
                2 => format!("\x1b[44m{i} a line that wraps past seventeen\r\n"),
                3 if i % 3 == 0 => format!("{i} no carriage return\n"),
                4 => format!("\x1b[m{i}\x1b[38;2;1;2;3m\x1b[48;5;200m rgb\r\n"),
                _ => format!("{i}\r\n"),
            })
            .collect()
    }

    /// What a frame reads of a screen's live end: its size, cursor, whether it hides the
    /// cursor, and every visible cell.
    pub(super) fn live_end(screen: &Screen) -> ((u16, u16), (u16, u16), bool, Vec<vt100::Cell>) {
        screen.read_scrolled(0, |screen| {
            let (rows, cols) = screen.size();
            let cells = (0..rows)
                .flat_map(|row| (0..cols).map(move |col| (row, col)))
                .filter_map(|(row, col)| screen.cell(row, col).cloned())
                .collect();
            (
                screen.size(),
                screen.cursor_position(),
                screen.hide_cursor(),
                cells,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_is_at_rest_only_between_sequences() {
        let cases: [(&str, bool); 14] = [
            ("plain text\r\n", true),
            ("\x1b", false),
            ("\x1b[", false),
            ("\x1b[3", false),
            ("\x1b[32", false),
            ("\x1b[32m", true),
            ("\x1b[32mgreen \x1b[0", false),
            ("\x1b]0;title", false),
            ("\x1b]0;title\x07", true),
            ("\x1b]0;title\x1b\\", true),
            ("\x1bP1$r", false),
            ("\x1bP1$rdata\x1b\\ after", true),
            ("\x1b(", false),
            ("\x1b(B", true),
        ];
        for (text, rest) in cases {
            let mut screen = Screen::new(80, 24);
            screen.process(text);
            assert_eq!(screen.at_rest(), rest, "{text:?}");
        }
        // Across calls, as output arrives in pieces.
        let mut screen = Screen::new(80, 24);
        for (piece, rest) in [
            ("a\x1b[3", false),
            ("8;5", false),
            (";2m", true),
            ("x", true),
        ] {
            screen.process(piece);
            assert_eq!(screen.at_rest(), rest, "{piece:?}");
        }
    }

    /// The screen's rows, trailing blanks trimmed, with `|` after a row that wraps on.
    fn rows_of(screen: &Screen) -> Vec<String> {
        let view = screen.screen();
        let (rows, cols) = view.size();
        (0..rows)
            .map(|row| {
                let text = view.contents_between(row, 0, row, cols);
                let text = text.trim_end().to_string();
                if view.row_wrapped(row) {
                    text + "|"
                } else {
                    text
                }
            })
            .collect()
    }

    #[test]
    fn a_narrowed_screen_rewraps_its_lines_and_widening_joins_them_again() {
        let mut screen = Screen::new(40, 6);
        let long = format!("start-{}-end", "x".repeat(30));
        screen.process(&format!("one\r\n{long}\r\n$ "));
        let before = rows_of(&screen);
        screen.resize(15, 6);
        // Cut at 15 columns, nothing lost: the long line takes three rows that wrap on.
        assert_eq!(
            rows_of(&screen)[..5],
            [
                "one",
                "start-xxxxxxxxx|",
                "xxxxxxxxxxxxxxx|",
                "xxxxxx-end",
                "$"
            ]
        );
        assert_eq!(screen.screen().cursor_position(), (4, 2));
        screen.resize(40, 6);
        assert_eq!(rows_of(&screen), before);
        // Output goes on where the cursor was.
        screen.process("ls");
        assert_eq!(rows_of(&screen)[2], "$ ls");
    }

    #[test]
    fn lines_written_at_a_narrow_width_join_when_the_screen_widens() {
        let mut screen = Screen::new(20, 4);
        screen.process(&format!("{}\r\nnext", "0123456789".repeat(5)));
        assert_eq!(
            rows_of(&screen)[..3],
            [
                "0123456789".repeat(2) + "|",
                "0123456789".repeat(2) + "|",
                "0123456789".to_string()
            ]
        );
        screen.resize(80, 4);
        assert_eq!(
            rows_of(&screen)[..2],
            ["0123456789".repeat(5), "next".to_string()]
        );
        assert_eq!(screen.screen().cursor_position(), (1, 4));
    }

    #[test]
    fn a_shorter_screen_keeps_the_cursor_line_and_a_taller_one_takes_rows_back() {
        let mut screen = Screen::new(30, 8);
        for i in 0..6 {
            screen.process(&format!("line {i}\r\n"));
        }
        screen.process("$ ");
        let before = rows_of(&screen);
        screen.resize(30, 3);
        assert_eq!(rows_of(&screen), ["line 4", "line 5", "$"]);
        // The rows that left went to the scrollback, and come back.
        screen.read_scrolled(3, |view| assert!(view.contents().starts_with("line 1")));
        screen.resize(30, 8);
        assert_eq!(rows_of(&screen), before);
    }

    #[test]
    fn wide_characters_never_straddle_the_edge_and_the_alternate_screen_is_not_rewrapped() {
        let mut screen = Screen::new(20, 4);
        screen.process("abcde漢字漢字漢字");
        screen.resize(10, 4);
        // A wide character that would take columns 10 and 11 moves to the next row.
        assert_eq!(rows_of(&screen)[..2], ["abcde漢字|", "漢字漢字"]);
        screen.resize(20, 4);
        assert_eq!(rows_of(&screen)[0], "abcde漢字漢字漢字");
        // A full-screen program's screen is cut and padded: the program redraws it.
        screen.process("\x1b[?1049h\x1b[H0123456789abcdef");
        screen.resize(10, 4);
        screen.resize(20, 4);
        assert_eq!(rows_of(&screen)[0], "0123456789");
        screen.process("\x1b[?1049l");
        assert_eq!(rows_of(&screen)[0], "abcde漢字漢字漢字");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        #[test]
        fn any_sequence_of_sizes_and_back_gives_the_text_again(
            lines in proptest::collection::vec("[a-z 漢]{0,50}", 1..12),
            sizes in proptest::collection::vec((3u16..60, 2u16..12), 1..5),
        ) {
            let mut screen = Screen::new(32, 40);
            screen.process(&lines.join("\r\n"));
            let before = screen.screen().contents();
            let cursor = screen.screen().cursor_position();
            for (cols, rows) in sizes {
                screen.resize(cols, rows);
            }
            screen.resize(32, 40);
            proptest::prop_assert_eq!(screen.screen().contents(), before);
            proptest::prop_assert_eq!(screen.screen().cursor_position(), cursor);
        }
    }

    #[test]
    fn rows_scrolled_out_of_a_full_scrollback_come_back_blank_and_at_the_new_width() {
        let mut screen = Screen::new(20, 4);
        // Coloured, wide, wrapped and background-erased lines fill the scrollback.
        for i in 0..SCROLLBACK_LINES + 10 {
            screen.process(&format!(
                "\x1b[44;31m漢{i} a line wrapping past twenty columns\x1b[K\x1b[0m\r\n"
            ));
        }
        screen.resize(30, 4);
        screen.process("\r\n\r\n\r\n\r\n");
        let view = screen.screen();
        for row in 0..4 {
            assert!(!view.row_wrapped(row));
            for col in 0..30 {
                let cell = view.cell(row, col).unwrap();
                assert!(!cell.has_contents(), "{row},{col}");
                assert_eq!(cell.bgcolor(), vt100::Color::Default, "{row},{col}");
                assert!(!cell.is_wide() && !cell.is_wide_continuation());
            }
        }
        drop(view);
        // The bottom row, recycled from a 20-column one, holds 30 columns.
        screen.process(&"x".repeat(30));
        assert_eq!(
            screen.screen().contents(),
            format!("\n\n\n{}", "x".repeat(30))
        );
    }

    #[test]
    fn a_copy_made_at_rest_goes_on_as_the_screen_does() {
        let mut screen = Screen::new(40, 10);
        screen.process("one \x1b[31mred");
        assert!(screen.at_rest());
        let mut copy = screen.clone();
        for s in [&mut screen, &mut copy] {
            s.process(" \x1b[1mbold\x1b[0m two\r\n");
        }
        assert_eq!(
            copy.screen().contents_formatted(),
            screen.screen().contents_formatted()
        );
    }
}

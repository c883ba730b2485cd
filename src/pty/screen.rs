//! A terminal screen (vt100) with a bounded scrollback, fed with decoded PTY text through
//! the escape-string cap, and told whether its escape-sequence parser is at rest (between
//! sequences), the only moments a copy of it is exact; stored compactly for replay snapshots
//! ([`StoredScreen`]). Readers see it through `&self`, the
//! scrollback included: vt100 keeps its view offset inside the screen, so the wrapper sets
//! it only for the length of one read and puts it back before returning.

use std::cell::{Ref, RefCell};

use super::filter::EscapeCap;

/// Lines of scrollback kept per screen; older lines live only in the journal.
pub const SCROLLBACK_LINES: usize = 10_000;

/// A terminal emulator screen for one pane.
pub struct Screen {
    /// The emulator. Its scrollback offset is always 0 between calls (see
    /// [`Screen::read_scrolled`]); the cell exists only for that one transient setting.
    parser: RefCell<vt100::Parser>,
    cap: EscapeCap,
    scratch: String,
    sequence: Sequence,
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
            parser: RefCell::new(parser),
            cap: self.cap.clone(),
            scratch: String::new(),
            sequence: Sequence::Ground,
        }
    }
}

impl Screen {
    /// An empty screen of the given size.
    pub fn new(cols: u16, rows: u16) -> Self {
        Screen {
            parser: RefCell::new(vt100::Parser::new(
                rows.max(2),
                cols.max(10),
                SCROLLBACK_LINES,
            )),
            cap: EscapeCap::new(),
            scratch: String::new(),
            sequence: Sequence::Ground,
        }
    }

    /// Feeds terminal output (escape-string payloads bounded first).
    pub fn process(&mut self, text: &str) {
        let parser = self.parser.get_mut();
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
        self.sequence == Sequence::Ground
    }

    /// Resizes the screen.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.parser
            .get_mut()
            .screen_mut()
            .set_size(rows.max(2), cols.max(10));
    }

    /// The underlying vt100 screen at its live end (no scrollback in view).
    pub fn screen(&self) -> Ref<'_, vt100::Screen> {
        Ref::map(self.parser.borrow(), vt100::Parser::screen)
    }

    /// Reads the screen as seen `back` lines scrolled back from its live end (0 = live;
    /// more than the scrollback holds shows its oldest lines); the screen is as it was
    /// afterwards.
    pub fn read_scrolled<R>(&self, back: usize, read: impl FnOnce(&vt100::Screen) -> R) -> R {
        if back == 0 {
            return read(&self.screen());
        }
        let mut parser = self.parser.borrow_mut();
        parser.screen_mut().set_scrollback(back);
        let result = read(parser.screen());
        parser.screen_mut().set_scrollback(0);
        result
    }

    /// The screen stored compactly for a replay snapshot: vt100's exact encoding of every
    /// cell, mode and cursor (about a byte per character), compressed. Restoring it is exact
    /// when [`Screen::at_rest`] holds, as for a copy.
    pub fn store(&self) -> StoredScreen {
        let mut encoded = Vec::new();
        self.screen().write_compact(&mut encoded);
        let encoded_len = encoded.len();
        let (bytes, compressed) = if encoded_len < STORED_UNCOMPRESSED_BELOW {
            (encoded, false)
        } else {
            match zstd::bulk::compress(&encoded, STORED_LEVEL) {
                Ok(bytes) => (bytes, true),
                Err(error) => {
                    tracing::warn!("replay snapshot kept uncompressed: {error}");
                    (encoded, false)
                }
            }
        };
        StoredScreen {
            bytes: bytes.into_boxed_slice(),
            encoded_len,
            compressed,
            cap: self.cap.clone(),
        }
    }

    /// The visible text, rows joined by newlines, trailing blanks trimmed.
    pub fn contents(&self) -> String {
        self.screen().contents()
    }
}

/// The zstd level of stored screens: rows of a log compress about tenfold at level 1, and
/// higher levels cost more time per snapshot than they save in memory.
const STORED_LEVEL: i32 = 1;

/// Encodings shorter than this are kept as they are: a small screen saves less by
/// compression than a compression context costs to set up.
const STORED_UNCOMPRESSED_BELOW: usize = 16 * 1024;

/// A screen stored compactly ([`Screen::store`]).
#[derive(Debug, Clone)]
pub struct StoredScreen {
    /// vt100's compact encoding of the screen, compressed when `compressed`.
    bytes: Box<[u8]>,
    /// The length of the encoding before compression.
    encoded_len: usize,
    compressed: bool,
    cap: EscapeCap,
}

impl StoredScreen {
    /// The screen as it was stored, its parser at rest; `None` when the stored bytes do not
    /// decode (they are only ever written by [`Screen::store`]).
    pub fn restore(&self) -> Option<Screen> {
        let decompressed;
        let encoded: &[u8] = if self.compressed {
            decompressed = zstd::bulk::decompress(&self.bytes, self.encoded_len).ok()?;
            &decompressed
        } else {
            &self.bytes
        };
        let screen = vt100::Screen::from_compact(encoded)?;
        let (rows, cols) = screen.size();
        let mut parser = vt100::Parser::new(rows, cols, SCROLLBACK_LINES);
        *parser.screen_mut() = screen;
        Some(Screen {
            parser: RefCell::new(parser),
            cap: self.cap.clone(),
            scratch: String::new(),
            sequence: Sequence::Ground,
        })
    }

    /// The bytes the stored screen holds.
    pub fn held_bytes(&self) -> usize {
        self.bytes.len() + std::mem::size_of::<Self>()
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

    /// Pieces of output that reach every part of a screen's state: scroll regions, the saved
    /// cursor, origin mode, the alternate screen, input and mouse modes, colours, wide and
    /// combining characters, wrapping, erasing with a background, scrolling.
    const STATE_PIECES: [&str; 24] = [
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

    fn fed(screen: &mut Screen, pieces: &[usize], resize_at: Option<usize>) {
        for (i, &piece) in pieces.iter().enumerate() {
            if resize_at == Some(i) {
                screen.resize(23, 7);
            }
            screen.process(STATE_PIECES[piece]);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        #[test]
        fn a_stored_screen_restores_exactly_and_goes_on_as_the_screen_does(
            before in proptest::collection::vec(0..STATE_PIECES.len(), 0..60),
            after in proptest::collection::vec(0..STATE_PIECES.len(), 0..30),
            resize_at in proptest::option::of(0usize..60),
        ) {
            let mut screen = Screen::new(17, 6);
            fed(&mut screen, &before, resize_at);
            let mut restored = screen.store().restore().unwrap();
            proptest::prop_assert!(*restored.screen() == *screen.screen());
            fed(&mut screen, &after, None);
            fed(&mut restored, &after, None);
            proptest::prop_assert!(*restored.screen() == *screen.screen());
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
    fn a_full_scrollback_of_log_lines_is_stored_in_a_few_bytes_a_line() {
        let mut screen = Screen::new(120, 50);
        for i in 0..SCROLLBACK_LINES + 50 {
            screen.process(&format!(
                "\x1b[32m{:3}%\x1b[0m|\x1b[36m{:<30}\x1b[0m| step {i} loss={:.4} acc={:.4}\r\n",
                i / 100,
                "#".repeat(i % 30),
                1.0 / (i as f64 + 1.0),
                (i % 1000) as f64 / 1000.0
            ));
        }
        let stored = screen.store();
        // As vt100 holds them, these rows are 10,050 × 120 cells of 32 bytes (38.6 MB).
        let held = stored.held_bytes();
        assert!(held < 8 * SCROLLBACK_LINES, "{held} bytes");
        let restored = stored.restore().unwrap();
        assert!(*restored.screen() == *screen.screen());
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

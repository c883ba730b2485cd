//! Plain log text held back from the emulator: a session's screen (live or replayed) may hold
//! back plain log text ([`Screen::hold_back_scrolled_out_lines`]) and, when it is read or
//! enough has gathered, skip the lines that would only scroll out of the scrollback again:
//! exactly the screen that feeding all of it would leave, for a fraction of the emulator's
//! work on a flood. A read of the live end alone ([`Screen::read_scrolled`] at 0, what a
//! frame of the TUI does) leaves the held text held: it is fed, skipping the same way, to a
//! copy of the visible rows without a scrollback ([`Tail`]), which shows the same rows.

use std::cell::RefCell;

use super::Screen;

/// A copy of the emulator's visible rows, without a scrollback, taken when the held text
/// began, and fed that text as far as `fed`, skipping as [`feed_held`] does. vt100 writes
/// rows to the scrollback but never reads them back (only a resize does, and a resize
/// feeds the held text first), so plain log text changes the visible rows of the copy as
/// it would change the emulator's, and the copy shows what feeding the emulator would.
pub(super) struct Tail {
    /// The copy.
    pub(super) parser: vt100::Parser,
    /// How many bytes of the held text the copy has been fed.
    fed: usize,
}

/// Text held back from the emulator: printable ASCII, CR, LF and SGR sequences only, whole
/// sequences, received while the emulator was at rest.
#[derive(Debug, Default)]
pub(super) struct HeldBack {
    /// The text.
    pub(super) text: String,
    /// The line feeds in the text.
    pub(super) line_feeds: usize,
    /// The length of the SGR sequence `text` ends inside, if it does (the rest comes in
    /// the next piece of output).
    pub(super) partial: usize,
}

/// Held-back text is fed once it reaches this much (the most it adds to memory).
pub(super) const HOLD_BACK_LIMIT: usize = 8 * 1024 * 1024;

/// The longest SGR sequence held back (vte keeps at most 32 parameters).
const HELD_SGR_MAX: usize = 48;

impl Screen {
    /// From now on, plain log text (printable ASCII, CR, LF, SGR) is held back, up to
    /// `HOLD_BACK_LIMIT` (8 MiB), and fed when the screen is read, when other output comes,
    /// or when the limit is reached; lines that the held text would itself scroll out of the
    /// scrollback are then skipped, their colours kept. A read of the live end alone feeds
    /// it to a copy of the visible rows instead ([`Screen::read_scrolled`]).
    pub fn hold_back_scrolled_out_lines(&mut self) {
        self.held.get_or_insert_with(RefCell::default);
    }

    /// Feeds the held-back text, if any, to the emulator.
    pub(super) fn feed_held_back(&self) {
        if let Some(held) = &self.held {
            let mut held = held.borrow_mut();
            if held.text.len() > held.partial {
                feed_held(self.emulator.borrow_mut().parser_mut(), &mut held);
                self.tail.replace(None);
            }
        }
    }

    /// Brings the [`Tail`] up to the end of the held text, taking the copy first if there
    /// is none; false when no text is held (the emulator is then current).
    pub(super) fn catch_up_tail(&self) -> bool {
        let Some(held) = &self.held else {
            return false;
        };
        let held = held.borrow();
        let end = held.text.len() - held.partial;
        if end == 0 {
            return false;
        }
        let mut tail = self.tail.borrow_mut();
        let tail = match &mut *tail {
            Some(tail) => tail,
            None => {
                let emulator = self.emulator.borrow();
                let screen = emulator.parser.screen();
                let (rows, cols) = screen.size();
                let mut copy = vt100::Parser::new(rows, cols, 0);
                *copy.screen_mut() = screen.without_scrollback();
                tail.insert(Tail {
                    parser: copy,
                    fed: 0,
                })
            }
        };
        let text = &held.text.as_bytes()[tail.fed..end];
        let line_feeds = memchr::memchr_iter(b'\n', text).count();
        feed_skipping(&mut tail.parser, text, line_feeds);
        tail.fed = end;
        true
    }
}

/// Whether `bytes`, after the held `partial` start of an SGR sequence, is only printable
/// ASCII, CR, LF and SGR sequences (`ESC [`, digits and semicolons, `m`): text whose only
/// effects on a screen are its cells, the cursor's moves and scrolls, and the attributes.
/// Returns the length of the SGR sequence it ends inside (0 when it ends outside one).
pub(super) fn plain_log_text(partial: &[u8], bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    if !partial.is_empty() {
        let mut joined = [0u8; 2 * HELD_SGR_MAX];
        let take = bytes.len().min(HELD_SGR_MAX);
        joined[..partial.len()].copy_from_slice(partial);
        joined[partial.len()..partial.len() + take].copy_from_slice(&bytes[..take]);
        match sgr_len(&joined[..partial.len() + take]) {
            Sgr::Whole(len) => at = len - partial.len(),
            Sgr::Unfinished if take == bytes.len() => return Some(partial.len() + take),
            _ => return None,
        }
    }
    while at < bytes.len() {
        match bytes[at] {
            0x20..=0x7e | b'\r' | b'\n' => at += 1,
            0x1b => match sgr_len(&bytes[at..]) {
                Sgr::Whole(len) => at += len,
                Sgr::Unfinished => return Some(bytes.len() - at),
                Sgr::Not => return None,
            },
            _ => return None,
        }
    }
    Some(0)
}

/// What an ESC starts, as far as held text goes.
enum Sgr {
    /// A whole SGR sequence of this many bytes (at most [`HELD_SGR_MAX`]).
    Whole(usize),
    /// The start of one, cut off by the end of the bytes.
    Unfinished,
    /// Anything else.
    Not,
}

/// Whether `bytes` (starting at an ESC) starts with an SGR sequence.
fn sgr_len(bytes: &[u8]) -> Sgr {
    match bytes.get(1) {
        None => return Sgr::Unfinished,
        Some(b'[') => {}
        Some(_) => return Sgr::Not,
    }
    let window = &bytes[..bytes.len().min(HELD_SGR_MAX)];
    match window
        .iter()
        .skip(2)
        .position(|&b| !(b.is_ascii_digit() || b == b';'))
    {
        Some(i) if window[i + 2] == b'm' => Sgr::Whole(i + 3),
        None if window.len() == bytes.len() && bytes.len() < HELD_SGR_MAX => Sgr::Unfinished,
        _ => Sgr::Not,
    }
}

/// Whether an SGR sequence begins by resetting every attribute (no parameters, or a first
/// parameter of 0), so that the attributes after it do not depend on those before.
fn sgr_resets(sgr: &[u8]) -> bool {
    let params = &sgr[2..sgr.len() - 1];
    let first = params.split(|&b| b == b';').next().unwrap_or_default();
    params.is_empty() || (!first.is_empty() && first.iter().all(|&b| b == b'0'))
}

/// Feeds held-back text to the emulator, skipping the lines that it would scroll out of
/// the screen and the scrollback again. On a screen without a scroll region a line feed
/// moves the cursor down to the bottom row and from there scrolls every row up by one, so
/// once the cursor has reached the bottom row and `kept`
/// ([`vt100::Screen::line_feeds_replacing_every_row`]) more line feeds follow, nothing
/// printed before them survives. The text up to the last line ending (CR LF) that has
/// `kept` line feeds after it and enough before it to bring the cursor to the bottom row
/// and scroll once then leaves only its attributes (the SGR sequences from its last reset
/// on) and the cursor at the start of a fresh bottom row: as many CR LF as take the cursor
/// there and scroll once.
pub(super) fn feed_held(parser: &mut vt100::Parser, held: &mut HeldBack) {
    let fed = held.text.len() - held.partial;
    feed_skipping(parser, &held.text.as_bytes()[..fed], held.line_feeds);
    held.text.drain(..fed);
    held.line_feeds = 0;
}

/// Feeds `text` (holding `line_feeds` line feeds) to the emulator, skipping as
/// [`feed_held`] tells.
fn feed_skipping(parser: &mut vt100::Parser, text: &[u8], line_feeds: usize) {
    let mut from = 0;
    if let Some(skip) = plan_skip(parser.screen(), text, line_feeds) {
        parser.process(&skip.instead);
        from = skip.end;
    }
    parser.process(&text[from..]);
}

/// The start of some text that a screen would only scroll out again: `text[..end]` leaves
/// the screen as `instead` does, once the rest of the text follows.
struct Skip {
    end: usize,
    /// The skipped text's attributes (its SGR sequences from the last reset on), then as
    /// many CR LF as bring the cursor to a fresh bottom row.
    instead: Vec<u8>,
    /// The line feeds of `instead` and of the text after `end` together.
    line_feeds: usize,
}

/// What of `text` (plain log text holding `line_feeds` line feeds) `screen` would only
/// scroll out again, if anything (see [`feed_held`]).
fn plan_skip(screen: &vt100::Screen, text: &[u8], line_feeds: usize) -> Option<Skip> {
    let (row, _) = screen.cursor_position();
    let to_bottom = usize::from(screen.size().0.saturating_sub(1).saturating_sub(row));
    let kept = screen.line_feeds_replacing_every_row()?;
    // The line feeds from the last back, each with how many follow it; the first with
    // `kept` after it, CR before it and enough before it ends the skipped text.
    let (after, lf) = memchr::memrchr_iter(b'\n', text)
        .enumerate()
        .skip(kept)
        .find(|&(_, lf)| lf > 0 && text[lf - 1] == b'\r')
        .filter(|&(after, _)| line_feeds - after > to_bottom)?;
    let skipped = &text[..=lf];
    let mut sgrs: Vec<&[u8]> = Vec::new();
    for esc in memchr::memchr_iter(0x1b, skipped) {
        if let Sgr::Whole(len) = sgr_len(&skipped[esc..]) {
            let sgr = &skipped[esc..esc + len];
            if sgr_resets(sgr) {
                sgrs.clear();
            }
            sgrs.push(sgr);
        }
    }
    let mut instead = sgrs.concat();
    for _ in 0..=to_bottom {
        instead.extend_from_slice(b"\r\n");
    }
    Some(Skip {
        end: lf + 1,
        instead,
        line_feeds: after + to_bottom + 1,
    })
}

/// Cuts the held text to what `screen` can still show of it: the part that feeding would
/// skip is replaced by what stands in for it, which is itself plain log text, so the held
/// text leaves the screen as before. Returns whether it cut anything.
pub(super) fn cut_held(screen: &vt100::Screen, held: &mut HeldBack) -> bool {
    let whole = held.text.len() - held.partial;
    let Some(skip) = plan_skip(screen, &held.text.as_bytes()[..whole], held.line_feeds) else {
        return false;
    };
    // SGR sequences, CR and LF: ASCII.
    let Ok(instead) = String::from_utf8(skip.instead) else {
        return false;
    };
    held.text.replace_range(..skip.end, &instead);
    held.line_feeds = skip.line_feeds;
    true
}

#[cfg(test)]
mod tests {
    use super::super::SCROLLBACK_LINES;
    use super::super::fixtures::{STATE_PIECES, live_end, log_block};
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

        #[test]
        fn a_screen_holding_back_log_text_shows_what_feeding_it_all_shows(
            steps in proptest::collection::vec(
                (0usize..14_000, 0u8..6, proptest::option::weighted(0.3, 0..STATE_PIECES.len()), proptest::bool::weighted(0.3)),
                1..10,
            ),
        ) {
            let mut holding = Screen::new(17, 6);
            holding.hold_back_scrolled_out_lines();
            let mut plain = Screen::new(17, 6);
            let mut from = 0;
            for (lines, style, piece, read) in steps {
                // The block arrives in pieces, as from a PTY.
                let block = log_block(lines, style, from);
                from += lines;
                let mut at = 0;
                while at < block.len() {
                    let end = (at + 4096).min(block.len());
                    holding.process(&block[at..end]);
                    plain.process(&block[at..end]);
                    at = end;
                }
                if let Some(piece) = piece {
                    holding.process(STATE_PIECES[piece]);
                    plain.process(STATE_PIECES[piece]);
                }
                if read {
                    proptest::prop_assert!(*holding.screen() == *plain.screen());
                }
            }
            proptest::prop_assert!(*holding.screen() == *plain.screen());
            proptest::prop_assert!(holding.screen().cursor_position() == plain.screen().cursor_position());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]

        #[test]
        fn the_live_end_of_a_screen_holding_back_shows_what_feeding_it_all_shows(
            steps in proptest::collection::vec(
                (
                    0usize..1_500,
                    0u8..6,
                    proptest::option::weighted(0.2, 0..STATE_PIECES.len()),
                    proptest::prop_oneof![1usize..60, 60usize..5_000],
                    1usize..8,
                    proptest::bool::weighted(0.1),
                ),
                1..12,
            ),
        ) {
            let mut holding = Screen::new(17, 6);
            holding.hold_back_scrolled_out_lines();
            let mut plain = Screen::new(17, 6);
            let mut from = 0;
            for (lines, style, piece, piece_len, read_every, read_whole) in steps {
                let block = log_block(lines, style, from);
                from += lines;
                // The live end read every few pieces, as frames come while output streams.
                let mut at = 0;
                let mut pieces = 0;
                while at < block.len() {
                    let end = (at + piece_len).min(block.len());
                    holding.process(&block[at..end]);
                    plain.process(&block[at..end]);
                    at = end;
                    pieces += 1;
                    if pieces % read_every == 0 {
                        proptest::prop_assert_eq!(live_end(&holding), live_end(&plain));
                    }
                }
                if let Some(piece) = piece {
                    holding.process(STATE_PIECES[piece]);
                    plain.process(STATE_PIECES[piece]);
                }
                proptest::prop_assert_eq!(live_end(&holding), live_end(&plain));
                if read_whole {
                    proptest::prop_assert!(*holding.screen() == *plain.screen());
                }
            }
            proptest::prop_assert!(*holding.screen() == *plain.screen());
        }
    }

    #[test]
    fn a_frame_reading_the_live_end_leaves_a_flood_held_and_shows_its_latest_lines() {
        let mut holding = Screen::new(40, 5);
        holding.hold_back_scrolled_out_lines();
        let flood: String = (0..3 * SCROLLBACK_LINES)
            .map(|i| format!("\x1b[32mstep {i}\x1b[0m\r\n"))
            .collect();
        holding.process(&flood);
        let shown = holding.read_scrolled(0, |screen| screen.contents());
        assert!(
            shown.contains(&format!("step {}", 3 * SCROLLBACK_LINES - 1)),
            "{shown}"
        );
        // Nothing was fed to the emulator: its scrollback is still empty.
        assert_eq!(
            holding.emulator.borrow().parser.screen().contents(),
            "",
            "the read fed the held text"
        );
        // A read of the scrollback feeds it.
        let back = holding.read_scrolled(SCROLLBACK_LINES, |screen| screen.contents());
        assert!(
            back.starts_with(&format!("step {}", 2 * SCROLLBACK_LINES - 4)),
            "{back}"
        );
    }

    #[test]
    fn a_headless_flood_through_a_screen_holding_back_ends_as_fed_whole() {
        let mut holding = Screen::new(120, 36);
        holding.hold_back_scrolled_out_lines();
        let mut plain = Screen::new(120, 36);
        let flood = (0..3 * SCROLLBACK_LINES)
            .map(|i| {
                format!(
                    "\x1b[32m{:3}%\x1b[0m|\x1b[36m{:<30}\x1b[0m| step {i} loss={:.4}\r\n",
                    i / 300,
                    "#".repeat(i % 30),
                    1.0 / (i as f64 + 1.0)
                )
            })
            .collect::<String>();
        for piece in flood.as_bytes().chunks(5000) {
            let piece = std::str::from_utf8(piece).unwrap();
            holding.process(piece);
            plain.process(piece);
        }
        assert!(*holding.screen() == *plain.screen());
        assert_eq!(holding.contents(), plain.contents());
        let mut stored = Vec::new();
        holding.screen().write_compact(&mut stored);
        let mut expected = Vec::new();
        plain.screen().write_compact(&mut expected);
        assert_eq!(stored, expected);
    }
}

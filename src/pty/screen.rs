//! A terminal screen (vt100) with a bounded scrollback, fed with decoded PTY text through
//! the escape-string cap, and told whether its escape-sequence parser is at rest (between
//! sequences), the only moments a copy of it is exact; stored compactly for replay snapshots
//! ([`StoredScreen`]). Readers see it through `&self`, the
//! scrollback included: vt100 keeps its view offset inside the screen, so the wrapper sets
//! it only for the length of one read and puts it back before returning.
//!
//! A session's screen (live or replayed) may hold back plain log text
//! ([`Screen::hold_back_scrolled_out_lines`]) and, when it is read or enough has gathered,
//! skip the lines that would only scroll out of the scrollback again: exactly the screen
//! that feeding all of it would leave, for a fraction of the emulator's work on a flood.
//! A read of the live end alone ([`Screen::read_scrolled`] at 0, what a frame of the TUI
//! does) leaves the held text held: it is fed, skipping the same way, to a copy of the
//! visible rows without a scrollback ([`Tail`]), which shows the same rows.

use std::cell::{Ref, RefCell};
use std::sync::Arc;

use super::filter::EscapeCap;

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

    /// The stored encoding of the emulator, made now if it changed since the last one.
    fn stored(&mut self) -> Arc<Packed> {
        let parser = &self.parser;
        Arc::clone(self.stored.get_or_insert_with(|| {
            let mut encoded = Vec::new();
            parser.screen().write_compact(&mut encoded);
            Arc::new(Packed::new(encoded))
        }))
    }
}

/// A copy of the emulator's visible rows, without a scrollback, taken when the held text
/// began, and fed that text as far as `fed`, skipping as [`feed_held`] does. vt100 writes
/// rows to the scrollback but never reads them back (only a resize does, and a resize
/// feeds the held text first), so plain log text changes the visible rows of the copy as
/// it would change the emulator's, and the copy shows what feeding the emulator would.
struct Tail {
    parser: vt100::Parser,
    /// How many bytes of the held text the copy has been fed.
    fed: usize,
}

/// Text held back from the emulator: printable ASCII, CR, LF and SGR sequences only, whole
/// sequences, received while the emulator was at rest.
#[derive(Debug, Default)]
struct HeldBack {
    text: String,
    line_feeds: usize,
    /// The length of the SGR sequence `text` ends inside, if it does (the rest comes in
    /// the next piece of output).
    partial: usize,
}

/// Held-back text is fed once it reaches this much (the most it adds to memory).
const HOLD_BACK_LIMIT: usize = 8 * 1024 * 1024;

/// The longest SGR sequence held back (vte keeps at most 32 parameters).
const HELD_SGR_MAX: usize = 48;

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

    /// From now on, plain log text (printable ASCII, CR, LF, SGR) is held back, up to
    /// [`HOLD_BACK_LIMIT`], and fed when the screen is read, when other output comes, or
    /// when the limit is reached; lines that the held text would itself scroll out of the
    /// scrollback are then skipped, their colours kept. A read of the live end alone feeds
    /// it to a copy of the visible rows instead ([`Screen::read_scrolled`]).
    pub fn hold_back_scrolled_out_lines(&mut self) {
        self.held.get_or_insert_with(RefCell::default);
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
    /// visible rows with no scrollback ([`Tail`]): the same size, rows, cursor and modes.
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

    /// The screen stored compactly for a replay snapshot: vt100's exact encoding of every
    /// cell, mode and cursor (about a byte per character), compressed, and the text held
    /// back from it, first cut to what the screen can still show (as feeding it would skip),
    /// compressed too. Snapshots taken while the emulator has not changed share its encoding,
    /// so holding text back spares a snapshot both the feeding and the encoding. Restoring it
    /// is exact when [`Screen::at_rest`] holds, as for a copy.
    pub fn store(&self) -> StoredScreen {
        let held = self.held.as_ref().map(|held| {
            let mut held = held.borrow_mut();
            let emulator = self.emulator.borrow();
            if cut_held(emulator.parser.screen(), &mut held) {
                self.tail.replace(None);
            }
            StoredHeld {
                text: Packed::new(held.text.as_bytes().to_vec()),
                partial: held.partial,
            }
        });
        StoredScreen {
            emulator: self.emulator.borrow_mut().stored(),
            held,
            cap: self.cap.clone(),
        }
    }

    /// Feeds the held-back text, if any, to the emulator.
    fn feed_held_back(&self) {
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
    fn catch_up_tail(&self) -> bool {
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

    /// The visible text, rows joined by newlines, trailing blanks trimmed.
    pub fn contents(&self) -> String {
        self.screen().contents()
    }
}

/// Whether `bytes`, after the held `partial` start of an SGR sequence, is only printable
/// ASCII, CR, LF and SGR sequences (`ESC [`, digits and semicolons, `m`): text whose only
/// effects on a screen are its cells, the cursor's moves and scrolls, and the attributes.
/// Returns the length of the SGR sequence it ends inside (0 when it ends outside one).
fn plain_log_text(partial: &[u8], bytes: &[u8]) -> Option<usize> {
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
fn feed_held(parser: &mut vt100::Parser, held: &mut HeldBack) {
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
fn cut_held(screen: &vt100::Screen, held: &mut HeldBack) -> bool {
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

/// The zstd level of stored screens: rows of a log compress about tenfold at level 1, and
/// higher levels cost more time per snapshot than they save in memory.
const STORED_LEVEL: i32 = 1;

/// Encodings shorter than this are kept as they are: a small screen saves less by
/// compression than a compression context costs to set up.
const STORED_UNCOMPRESSED_BELOW: usize = 16 * 1024;

/// Bytes kept compressed once they are long enough to gain from it.
#[derive(Debug, Clone)]
struct Packed {
    /// The bytes, compressed when `compressed`.
    bytes: Box<[u8]>,
    /// Their length before compression.
    len: usize,
    compressed: bool,
}

impl Packed {
    fn new(bytes: Vec<u8>) -> Packed {
        let len = bytes.len();
        let (bytes, compressed) = if len < STORED_UNCOMPRESSED_BELOW {
            (bytes, false)
        } else {
            match zstd::bulk::compress(&bytes, STORED_LEVEL) {
                Ok(packed) => (packed, true),
                Err(error) => {
                    tracing::warn!("replay snapshot kept uncompressed: {error}");
                    (bytes, false)
                }
            }
        };
        Packed {
            bytes: bytes.into_boxed_slice(),
            len,
            compressed,
        }
    }

    /// The bytes as they were given; `None` when they do not decompress.
    fn unpack(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        if self.compressed {
            let bytes = zstd::bulk::decompress(&self.bytes, self.len).ok()?;
            Some(std::borrow::Cow::Owned(bytes))
        } else {
            Some(std::borrow::Cow::Borrowed(&self.bytes))
        }
    }

    /// The bytes held.
    fn held_bytes(&self) -> usize {
        self.bytes.len() + std::mem::size_of::<Self>()
    }
}

/// Held-back text as a stored screen keeps it.
#[derive(Debug, Clone)]
struct StoredHeld {
    text: Packed,
    partial: usize,
}

/// A screen stored compactly ([`Screen::store`]).
#[derive(Debug, Clone)]
pub struct StoredScreen {
    /// vt100's compact encoding of the emulator, shared by the snapshots taken while it
    /// did not change.
    emulator: Arc<Packed>,
    /// The text held back from the emulator, when the screen holds text back.
    held: Option<StoredHeld>,
    cap: EscapeCap,
}

impl StoredScreen {
    /// The screen as it was stored, its parser at rest; `None` when the stored bytes do not
    /// decode (they are only ever written by [`Screen::store`]).
    pub fn restore(&self) -> Option<Screen> {
        let screen = vt100::Screen::from_compact(&self.emulator.unpack()?)?;
        let (rows, cols) = screen.size();
        let mut parser = vt100::Parser::new(rows, cols, SCROLLBACK_LINES);
        *parser.screen_mut() = screen;
        let held = match &self.held {
            Some(stored) => {
                let text = String::from_utf8(stored.text.unpack()?.into_owned()).ok()?;
                let whole = text.len().checked_sub(stored.partial)?;
                let line_feeds = memchr::memchr_iter(b'\n', &text.as_bytes()[..whole]).count();
                Some(RefCell::new(HeldBack {
                    text,
                    line_feeds,
                    partial: stored.partial,
                }))
            }
            None => None,
        };
        Some(Screen {
            emulator: RefCell::new(Emulator {
                parser,
                stored: Some(Arc::clone(&self.emulator)),
            }),
            cap: self.cap.clone(),
            scratch: String::new(),
            sequence: Sequence::Ground,
            held,
            tail: RefCell::new(None),
        })
    }

    /// The bytes the stored screen holds beyond what it shares with `earlier` (a screen
    /// stored before it): its held text, and its emulator's encoding unless shared.
    pub fn held_bytes_beyond(&self, earlier: Option<&StoredScreen>) -> usize {
        let shared = earlier.is_some_and(|e| Arc::ptr_eq(&e.emulator, &self.emulator));
        let emulator = if shared {
            0
        } else {
            self.emulator.held_bytes()
        };
        let held = self.held.as_ref().map_or(0, |h| h.text.held_bytes());
        emulator + held + std::mem::size_of::<Self>()
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

    /// `lines` lines of log text in one of a few styles: coloured progress lines, colours
    /// that carry over from line to line (bold set once, a reset with a colour, a bare
    /// reset), lines that wrap on a 17-column screen, LF without CR.
    fn log_block(lines: usize, style: u8, from: usize) -> String {
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
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

        #[test]
        fn a_screen_holding_back_stored_and_restored_goes_on_as_feeding_it_all_does(
            steps in proptest::collection::vec(
                (
                    0usize..14_000,
                    0u8..6,
                    proptest::option::weighted(0.3, 0..STATE_PIECES.len()),
                    proptest::bool::weighted(0.5),
                    proptest::bool::weighted(0.3),
                ),
                1..10,
            ),
        ) {
            let mut holding = Screen::new(17, 6);
            holding.hold_back_scrolled_out_lines();
            let mut plain = Screen::new(17, 6);
            let mut from = 0;
            let mut stored = 0;
            for (lines, style, piece, store, read) in steps {
                let block = log_block(lines, style, from);
                from += lines;
                for piece in block.as_bytes().chunks(4096) {
                    let piece = std::str::from_utf8(piece).unwrap();
                    holding.process(piece);
                    plain.process(piece);
                }
                if let Some(piece) = piece {
                    holding.process(STATE_PIECES[piece]);
                    plain.process(STATE_PIECES[piece]);
                }
                // A replay's snapshot taken here and a seek restoring it.
                if store && holding.at_rest() {
                    holding = holding.store().restore().unwrap();
                    stored += 1;
                }
                if read {
                    proptest::prop_assert_eq!(live_end(&holding), live_end(&plain));
                }
            }
            proptest::prop_assert_eq!(live_end(&holding), live_end(&plain));
            proptest::prop_assert!(*holding.screen() == *plain.screen(), "after {} restores", stored);
        }
    }

    #[test]
    fn snapshots_of_a_flood_share_the_emulator_and_keep_only_the_lines_it_can_show() {
        let mut screen = Screen::new(120, 40);
        screen.hold_back_scrolled_out_lines();
        let line = |i: usize| format!("\x1b[32mstep {i}\x1b[0m loss=0.{i:04}\r\n");
        for i in 0..3 * SCROLLBACK_LINES {
            screen.process(&line(i));
        }
        let first = screen.store();
        for i in 3 * SCROLLBACK_LINES..4 * SCROLLBACK_LINES {
            screen.process(&line(i));
        }
        let second = screen.store();
        // Nothing was fed between them: one encoding of the emulator serves both.
        let alone = second.held_bytes_beyond(None);
        let beyond = second.held_bytes_beyond(Some(&first));
        assert!(beyond < alone, "{beyond} of {alone} bytes");
        // The held text was cut to about what a full scrollback shows (30 bytes a line,
        // compressed), not the 40,000 lines it was given.
        assert!(alone < 30 * SCROLLBACK_LINES / 4, "{alone} bytes");
        let mut plain = Screen::new(120, 40);
        for i in 0..4 * SCROLLBACK_LINES {
            plain.process(&line(i));
        }
        let restored = second.restore().unwrap();
        assert!(*restored.screen() == *plain.screen());
        assert_eq!(restored.contents(), plain.contents());
    }

    /// What a frame reads of a screen's live end: its size, cursor, whether it hides the
    /// cursor, and every visible cell.
    fn live_end(screen: &Screen) -> ((u16, u16), (u16, u16), bool, Vec<vt100::Cell>) {
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
        let held = stored.held_bytes_beyond(None);
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

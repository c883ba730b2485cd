//! The stored snapshot format of a screen ([`StoredScreen`]): vt100's exact encoding of
//! every cell, mode and cursor, zstd-compressed, kept with the emulator until it next
//! changes, and beside it the held-back text, cut to what the screen can still show.

use std::cell::RefCell;
use std::sync::Arc;

use super::super::filter::EscapeCap;
use super::held::{HeldBack, cut_held};
use super::{Emulator, SCROLLBACK_LINES, Screen, Sequence};

impl Screen {
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
}

impl Emulator {
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

/// The zstd level of stored screens: rows of a log compress about tenfold at level 1, and
/// higher levels cost more time per snapshot than they save in memory.
const STORED_LEVEL: i32 = 1;

/// Encodings shorter than this are kept as they are: a small screen saves less by
/// compression than a compression context costs to set up.
const STORED_UNCOMPRESSED_BELOW: usize = 16 * 1024;

/// Bytes kept compressed once they are long enough to gain from it.
#[derive(Debug, Clone)]
pub(super) struct Packed {
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

#[cfg(test)]
mod tests {
    use super::super::SCROLLBACK_LINES;
    use super::super::fixtures::{STATE_PIECES, fed, live_end, log_block};
    use super::*;

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
}

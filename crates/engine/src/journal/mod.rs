//! The session journal (SPEC §4): `journal.jsonl.zst`, a header line then one event per line
//! with its time offset, in a sequence of zstd frames that each hold whole lines (one frame
//! per flush: at least every 200 ms and at every phase change), so `zstdcat` prints the lines
//! and a crash loses at most the frame being written. Journals recorded before hold the same
//! lines uncompressed in `journal.jsonl`; every reader here takes both.

mod frames;

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::event::Event;

use frames::{FrameEnd, FrameReader};

/// The journal's file name inside a run folder.
pub const JOURNAL_FILE: &str = "journal.jsonl.zst";
/// The file name of a journal recorded before journals were compressed.
pub const PLAIN_JOURNAL_FILE: &str = "journal.jsonl";
/// The journal format written by this version.
pub const FORMAT_VERSION: u32 = 1;
/// Longest time an appended event may stay unflushed.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(200);
/// A frame is written once this much text waits, whatever the interval (a longer line makes
/// a frame of its own).
pub const FRAME_TEXT_BYTES: usize = 1024 * 1024;
/// The zstd level of the frames.
const LEVEL: i32 = 3;

/// The journal of the run folder `run_dir`: `journal.jsonl.zst`, or the plain `journal.jsonl`
/// of a run recorded before (when only that one exists).
pub fn path_in(run_dir: &Path) -> PathBuf {
    let compressed = run_dir.join(JOURNAL_FILE);
    let plain = run_dir.join(PLAIN_JOURNAL_FILE);
    if !compressed.is_file() && plain.is_file() {
        plain
    } else {
        compressed
    }
}

/// Journal errors.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Reading or writing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The journal file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The first line is not a journal header.
    #[error("{}: line 1 is not an xstack journal header: {message}", path.display())]
    BadHeader {
        /// The journal file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> JournalError + '_ {
    move |source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The first line of a journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always `xstack-journal`.
    pub format: String,
    /// The format version.
    pub version: u32,
    /// Task id.
    pub task: String,
    /// Agent spec.
    pub agent: String,
    /// xstack's version.
    pub xstack_version: String,
    /// Run id (the run folder's name).
    pub run_id: String,
    /// RFC 3339 start time.
    pub started_at: String,
}

impl Header {
    /// A header for a new session.
    pub fn new(task: &str, agent: &str, run_id: &str, started_at: &str) -> Header {
        Header {
            format: "xstack-journal".to_string(),
            version: FORMAT_VERSION,
            task: task.to_string(),
            agent: agent.to_string(),
            xstack_version: env!("CARGO_PKG_VERSION").to_string(),
            run_id: run_id.to_string(),
            started_at: started_at.to_string(),
        }
    }
}

/// One event line: time offset in seconds and the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Seconds since the session started.
    pub t: f64,
    /// The event.
    #[serde(flatten)]
    pub event: Event,
}

/// Appends events to a journal: lines gather in memory and each flush writes them as one
/// zstd frame.
pub struct JournalWriter {
    path: PathBuf,
    file: File,
    /// Lines not yet written.
    text: Vec<u8>,
    /// The compressed frame being written.
    frame: Vec<u8>,
    compressor: zstd::bulk::Compressor<'static>,
    /// On tokio's clock, so tests can pause it.
    last_flush: Instant,
}

impl JournalWriter {
    /// Creates the journal and writes its header.
    pub fn create(path: &Path, header: &Header) -> Result<JournalWriter, JournalError> {
        let file = File::create(path).map_err(io_error(path))?;
        let mut writer = JournalWriter::over(path, file)?;
        let line = serde_json::to_vec(header).map_err(|e| io_error(path)(e.into()))?;
        writer.text.extend_from_slice(&line);
        writer.text.push(b'\n');
        writer.flush()?;
        Ok(writer)
    }

    fn over(path: &Path, file: File) -> Result<JournalWriter, JournalError> {
        let mut compressor = zstd::bulk::Compressor::new(LEVEL).map_err(io_error(path))?;
        compressor
            .set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))
            .map_err(io_error(path))?;
        Ok(JournalWriter {
            path: path.to_path_buf(),
            file,
            text: Vec::with_capacity(FRAME_TEXT_BYTES),
            frame: Vec::new(),
            compressor,
            last_flush: Instant::now(),
        })
    }

    /// Opens the journal of `run_dir` for appending (resuming a run). A torn last frame is
    /// cut off first, so the appended frames follow whole ones; a plain journal of an
    /// earlier version is first rewritten as `journal.jsonl.zst` (its whole lines) and removed.
    pub fn resume(run_dir: &Path) -> Result<JournalWriter, JournalError> {
        let path = path_in(run_dir);
        if path.file_name().is_some_and(|n| n == PLAIN_JOURNAL_FILE) {
            return JournalWriter::compress_plain(&path, &run_dir.join(JOURNAL_FILE));
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io_error(&path))?;
        let mut frames = FrameReader::new(&file, 0).map_err(io_error(&path))?;
        let mut text = Vec::new();
        let mut whole = 0;
        while let FrameEnd::Whole(_) = frames.next_frame(&mut text).map_err(io_error(&path))? {
            whole = frames.at();
        }
        drop(frames);
        file.set_len(whole).map_err(io_error(&path))?;
        file.seek(SeekFrom::End(0)).map_err(io_error(&path))?;
        JournalWriter::over(&path, file)
    }

    /// Rewrites the plain journal at `plain` as the compressed one at `path` and removes it.
    fn compress_plain(plain: &Path, path: &Path) -> Result<JournalWriter, JournalError> {
        let part = path.with_extension("zst.part");
        let file = File::create(&part).map_err(io_error(&part))?;
        let mut writer = JournalWriter::over(&part, file)?;
        let mut lines = LineSource::open(plain)?;
        let mut line = Vec::new();
        while let Some((_, complete)) = lines.next_line(&mut line)? {
            if complete {
                writer.text.extend_from_slice(&line);
                if writer.text.len() >= FRAME_TEXT_BYTES {
                    writer.flush()?;
                }
            }
        }
        writer.flush()?;
        writer.file.sync_all().map_err(io_error(&part))?;
        std::fs::rename(&part, path).map_err(io_error(path))?;
        std::fs::remove_file(plain).map_err(io_error(plain))?;
        writer.path = path.to_path_buf();
        Ok(writer)
    }

    /// Appends one event; flushes when the last flush is older than [`FLUSH_INTERVAL`], the
    /// event changes the phase or ends the session, or a frame's worth of text waits.
    pub fn append(&mut self, t: f64, event: &Event) -> Result<(), JournalError> {
        let entry = EntryRef {
            t: (t * 1000.0).round() / 1000.0,
            event,
        };
        serde_json::to_writer(&mut self.text, &entry)
            .map_err(|e| io_error(&self.path)(e.into()))?;
        self.text.push(b'\n');
        let urgent = matches!(
            event,
            Event::Stage(_) | Event::Graded { .. } | Event::Finished { .. }
        );
        if urgent
            || self.text.len() >= FRAME_TEXT_BYTES
            || self.last_flush.elapsed() >= FLUSH_INTERVAL
        {
            self.flush()?;
        }
        Ok(())
    }

    /// Flushes if anything was appended since the last flush and the interval has passed.
    pub fn tick(&mut self) -> Result<(), JournalError> {
        if !self.text.is_empty() && self.last_flush.elapsed() >= FLUSH_INTERVAL {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes everything appended as one frame.
    pub fn flush(&mut self) -> Result<(), JournalError> {
        self.last_flush = Instant::now();
        if self.text.is_empty() {
            return Ok(());
        }
        self.frame.clear();
        self.frame.reserve(zstd::compress_bound(self.text.len()));
        let written = self
            .compressor
            .compress_to_buffer(&self.text[..], &mut self.frame)
            .and_then(|_| self.file.write_all(&self.frame));
        self.text.clear();
        // A very long line leaves large buffers behind: give the memory back.
        if self.text.capacity() > 4 * FRAME_TEXT_BYTES {
            self.text.shrink_to(FRAME_TEXT_BYTES);
            self.frame.shrink_to(FRAME_TEXT_BYTES);
        }
        written.map_err(io_error(&self.path))
    }
}

impl Drop for JournalWriter {
    fn drop(&mut self) {
        if let Err(e) = self.flush() {
            tracing::error!("journal flush at close failed: {e}");
        }
    }
}

/// An entry to write, borrowing its event.
#[derive(Serialize)]
struct EntryRef<'a> {
    t: f64,
    #[serde(flatten)]
    event: &'a Event,
}

/// Where a line of a journal file lies: the byte offset of its frame and its byte offset in
/// the frame's text (in a plain journal: the line's byte offset in the file, and 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// Byte offset of the frame in the file (of the line, in a plain journal).
    pub frame: u64,
    /// Byte offset of the line in the frame's text.
    pub line: usize,
}

/// The lines of a journal file in either format, one at a time.
struct LineSource {
    path: PathBuf,
    kind: SourceKind,
    torn: bool,
}

enum SourceKind {
    Plain {
        reader: BufReader<File>,
        offset: u64,
    },
    Frames {
        frames: Box<FrameReader<File>>,
        frame: u64,
        text: Vec<u8>,
        pos: usize,
        done: bool,
    },
}

/// Whether the file starts like a zstd frame (else it is taken for a plain journal).
fn is_compressed(file: &mut File) -> std::io::Result<bool> {
    let mut magic = [0u8; 4];
    let mut read = 0;
    while read < magic.len() {
        match file.read(&mut magic[read..])? {
            0 => break,
            n => read += n,
        }
    }
    file.seek(SeekFrom::Start(0))?;
    Ok(read == magic.len() && magic == frames::MAGIC)
}

impl LineSource {
    fn open(path: &Path) -> Result<LineSource, JournalError> {
        let mut file = File::open(path).map_err(io_error(path))?;
        let kind = if is_compressed(&mut file).map_err(io_error(path))? {
            SourceKind::Frames {
                frames: Box::new(FrameReader::new(file, 0).map_err(io_error(path))?),
                frame: 0,
                text: Vec::new(),
                pos: 0,
                done: false,
            }
        } else {
            SourceKind::Plain {
                reader: BufReader::with_capacity(256 * 1024, file),
                offset: 0,
            }
        };
        Ok(LineSource {
            path: path.to_path_buf(),
            kind,
            torn: false,
        })
    }

    /// The next line into `line` (newline included), with its place and whether it is
    /// whole; None at the end. A torn last frame ends the lines (and sets `torn`).
    fn next_line(&mut self, line: &mut Vec<u8>) -> Result<Option<(Place, bool)>, JournalError> {
        line.clear();
        match &mut self.kind {
            SourceKind::Plain { reader, offset } => {
                let read = reader
                    .read_until(b'\n', line)
                    .map_err(io_error(&self.path))?;
                if read == 0 {
                    return Ok(None);
                }
                let place = Place {
                    frame: *offset,
                    line: 0,
                };
                *offset += read as u64;
                Ok(Some((place, line.last() == Some(&b'\n'))))
            }
            SourceKind::Frames {
                frames,
                frame,
                text,
                pos,
                done,
            } => {
                while *pos >= text.len() {
                    if *done {
                        return Ok(None);
                    }
                    match frames.next_frame(text).map_err(io_error(&self.path))? {
                        FrameEnd::Whole(start) => {
                            *frame = start;
                            *pos = 0;
                        }
                        FrameEnd::End => *done = true,
                        FrameEnd::Torn => {
                            *done = true;
                            self.torn = true;
                        }
                    }
                    if *done {
                        text.clear();
                        *pos = 0;
                    }
                }
                let rest = &text[*pos..];
                let len = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
                line.extend_from_slice(&rest[..len]);
                let place = Place {
                    frame: *frame,
                    line: *pos,
                };
                *pos += len;
                // A whole frame holds whole lines, even if its last lacks a newline.
                Ok(Some((place, true)))
            }
        }
    }
}

/// A journal read back: the header, every whole event line, and what was skipped.
#[derive(Debug, Clone)]
pub struct Journal {
    /// The header.
    pub header: Header,
    /// The events in order.
    pub entries: Vec<Entry>,
    /// Whether the last line or frame was cut off (a crash mid-write) and skipped.
    pub torn: bool,
    /// Lines that did not parse (other than a torn last line), by 1-based number.
    pub bad_lines: Vec<usize>,
}

/// Reads a journal of either format, tolerating a torn last line or frame.
pub fn read(path: &Path) -> Result<Journal, JournalError> {
    let reader = JournalReader::open(path)?;
    let header = reader.header.clone();
    let mut entries = Vec::new();
    let visited = reader.visit(|entry| entries.push(entry))?;
    Ok(Journal {
        header,
        entries,
        torn: visited.torn,
        bad_lines: visited.bad_lines,
    })
}

/// Whether the journal's last whole event, resizes and the policy's answers left aside, is
/// the session's `finished` event (a screen resized while the ended session is on it is not
/// a new start). Read from the file's end only (its last frame, or its last 64 KiB), unless that
/// holds only resizes.
pub fn finished(path: &Path) -> bool {
    match last_event_kind(path) {
        Some(Last::Finished) => true,
        Some(Last::Other) => false,
        None => read(path).is_ok_and(|journal| {
            journal
                .entries
                .iter()
                .rev()
                .find(|e| !matches!(e.event, Event::Resized { .. } | Event::Answers { .. }))
                .is_some_and(|e| matches!(e.event, Event::Finished { .. }))
        }),
    }
}

/// What the end of a journal holds: its last event that is not a resize or the policy's
/// answers (both of which a TUI lingering after the end records).
enum Last {
    /// The `finished` event.
    Finished,
    /// Any other event.
    Other,
}

/// The last event of the journal's end that is not a resize or the policy's answers; None
/// when the end holds only those (or cannot be read whole).
fn last_event_kind(path: &Path) -> Option<Last> {
    let Ok(mut file) = File::open(path) else {
        return Some(Last::Other);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let tail = if is_compressed(&mut file).unwrap_or(false) {
        let Some(start) = frames::last_frame_start(&file, len) else {
            return Some(Last::Other);
        };
        let mut text = Vec::new();
        let whole = file.seek(SeekFrom::Start(start)).is_ok()
            && FrameReader::new(&file, start)
                .and_then(|mut frames| frames.next_frame(&mut text))
                .is_ok_and(|end| matches!(end, FrameEnd::Whole(_)));
        if !whole {
            return Some(Last::Other);
        }
        text
    } else {
        let mut bytes = Vec::new();
        if file
            .seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))
            .and_then(|_| file.read_to_end(&mut bytes))
            .is_err()
        {
            return Some(Last::Other);
        }
        bytes
    };
    let text = String::from_utf8_lossy(&tail);
    let last = text.lines().rev().find(|l| {
        !l.trim().is_empty()
            && !l.contains("\"type\":\"resized\"")
            && !l.contains("\"type\":\"answers\"")
    })?;
    Some(if last.contains("\"type\":\"finished\"") {
        Last::Finished
    } else {
        Last::Other
    })
}

/// What [`JournalReader::visit`] found besides the events.
#[derive(Debug, Clone)]
pub struct Visited {
    /// Whether the last line or frame was cut off (a crash mid-write) and skipped.
    pub torn: bool,
    /// Lines that did not parse (other than a torn last line), by 1-based number.
    pub bad_lines: Vec<usize>,
}

/// A journal opened for reading line by line, so one of any size is read in the memory of
/// one frame.
pub struct JournalReader {
    /// The header (the first line).
    pub header: Header,
    lines: LineSource,
}

impl JournalReader {
    /// Opens a journal of either format and reads its header.
    pub fn open(path: &Path) -> Result<JournalReader, JournalError> {
        let mut lines = LineSource::open(path)?;
        let mut line = Vec::new();
        let bad = |message: String| JournalError::BadHeader {
            path: path.to_path_buf(),
            message,
        };
        if lines.next_line(&mut line)?.is_none() {
            return Err(bad(if lines.torn {
                "the first frame is cut off".to_string()
            } else {
                "the file is empty".to_string()
            }));
        }
        let header: Header =
            serde_json::from_slice(line.trim_ascii()).map_err(|e| bad(e.to_string()))?;
        if header.format != "xstack-journal" {
            return Err(bad(format!("format is `{}`", header.format)));
        }
        Ok(JournalReader { header, lines })
    }

    /// Hands each event to `each` as it is parsed; a torn last line or frame is skipped
    /// and reported, as are lines that do not parse.
    pub fn visit(self, mut each: impl FnMut(Entry)) -> Result<Visited, JournalError> {
        self.visit_at(|_, entry| each(entry))
    }

    /// [`JournalReader::visit`], with the place of each event's line in the file (so a
    /// player can read it back later with a [`JournalSeeker`]).
    pub fn visit_at(mut self, mut each: impl FnMut(Place, Entry)) -> Result<Visited, JournalError> {
        let mut torn = false;
        let mut bad_lines = Vec::new();
        let mut number = 1;
        let mut line = Vec::new();
        while let Some((place, complete)) = self.lines.next_line(&mut line)? {
            number += 1;
            let trimmed = line.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            match serde_json::from_slice::<Entry>(trimmed) {
                Ok(entry) => each(place, entry),
                Err(_) if !complete => torn = true,
                Err(_) => bad_lines.push(number),
            }
        }
        Ok(Visited {
            torn: torn || self.lines.torn,
            bad_lines,
        })
    }
}

/// Reads events back by the places [`JournalReader::visit_at`] reported, holding one frame
/// of text at a time (the last one read, so events read in order decompress each frame once).
pub struct JournalSeeker {
    kind: SeekerKind,
    line: Vec<u8>,
}

enum SeekerKind {
    Plain {
        reader: BufReader<File>,
        at: u64,
    },
    Frames {
        frames: Box<FrameReader<File>>,
        /// The frame whose text is held.
        held: Option<u64>,
        text: Vec<u8>,
    },
}

impl JournalSeeker {
    /// Opens the journal at `path` for reading back.
    pub fn open(path: &Path) -> Result<JournalSeeker, JournalError> {
        let mut file = File::open(path).map_err(io_error(path))?;
        let kind = if is_compressed(&mut file).map_err(io_error(path))? {
            SeekerKind::Frames {
                frames: Box::new(FrameReader::new(file, 0).map_err(io_error(path))?),
                held: None,
                text: Vec::new(),
            }
        } else {
            SeekerKind::Plain {
                reader: BufReader::with_capacity(256 * 1024, file),
                at: 0,
            }
        };
        Ok(JournalSeeker {
            kind,
            line: Vec::new(),
        })
    }

    /// The event at `place`; None when it cannot be read back (the file changed under us).
    pub fn read(&mut self, place: Place) -> Option<Entry> {
        match &mut self.kind {
            SeekerKind::Plain { reader, at } => {
                if *at != place.frame {
                    reader.seek(SeekFrom::Start(place.frame)).ok()?;
                    *at = place.frame;
                }
                self.line.clear();
                let read = reader.read_until(b'\n', &mut self.line).ok()?;
                *at += read as u64;
                serde_json::from_slice(self.line.trim_ascii()).ok()
            }
            SeekerKind::Frames { frames, held, text } => {
                if *held != Some(place.frame) {
                    *held = None;
                    if frames.at() != place.frame {
                        frames.seek(place.frame).ok()?;
                    }
                    match frames.next_frame(text).ok()? {
                        FrameEnd::Whole(_) => *held = Some(place.frame),
                        FrameEnd::End | FrameEnd::Torn => return None,
                    }
                }
                let rest = text.get(place.line..)?;
                let len = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
                serde_json::from_slice(rest[..len].trim_ascii()).ok()
            }
        }
    }
}

#[cfg(test)]
mod tests;

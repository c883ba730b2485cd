//! The session journal (SPEC §4): `journal.jsonl`, a header line then one event per line with
//! its time offset, appended as events happen and flushed at least every 200 ms and at every
//! phase change; a reader that replays up to the last whole line of a torn file.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::session::event::Event;

/// The journal's file name inside a run folder.
pub const JOURNAL_FILE: &str = "journal.jsonl";
/// The journal format written by this version.
pub const FORMAT_VERSION: u32 = 1;
/// Longest time an appended event may stay unflushed.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(200);

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

/// Appends events to a journal through a buffer.
pub struct JournalWriter {
    path: PathBuf,
    out: BufWriter<File>,
    last_flush: Instant,
    dirty: bool,
}

impl JournalWriter {
    /// Creates the journal and writes its header.
    pub fn create(path: &Path, header: &Header) -> Result<JournalWriter, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::create(path).map_err(io)?;
        let mut writer = JournalWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(256 * 1024, file),
            last_flush: Instant::now(),
            dirty: false,
        };
        let line = serde_json::to_string(header).map_err(|e| io(e.into()))?;
        writer.write_line(&line)?;
        writer.flush()?;
        Ok(writer)
    }

    /// Opens an existing journal for appending (resuming a run).
    pub fn append_to(path: &Path) -> Result<JournalWriter, JournalError> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| JournalError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(JournalWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(256 * 1024, file),
            last_flush: Instant::now(),
            dirty: false,
        })
    }

    fn write_line(&mut self, line: &str) -> Result<(), JournalError> {
        self.out
            .write_all(line.as_bytes())
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(|source| JournalError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.dirty = true;
        Ok(())
    }

    /// Appends one event; flushes when the last flush is older than [`FLUSH_INTERVAL`] or the
    /// event changes the phase or ends the session.
    pub fn append(&mut self, t: f64, event: &Event) -> Result<(), JournalError> {
        let entry = EntryRef {
            t: (t * 1000.0).round() / 1000.0,
            event,
        };
        serde_json::to_writer(&mut self.out, &entry)
            .and_then(|()| self.out.write_all(b"\n").map_err(serde_json::Error::io))
            .map_err(|e| JournalError::Io {
                path: self.path.clone(),
                source: e.into(),
            })?;
        self.dirty = true;
        let urgent = matches!(
            event,
            Event::Stage { .. } | Event::Graded { .. } | Event::Finished { .. }
        );
        if urgent || self.last_flush.elapsed() >= FLUSH_INTERVAL {
            self.flush()?;
        }
        Ok(())
    }

    /// Flushes if anything was written since the last flush and the interval has passed.
    pub fn tick(&mut self) -> Result<(), JournalError> {
        if self.dirty && self.last_flush.elapsed() >= FLUSH_INTERVAL {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> Result<(), JournalError> {
        self.out.flush().map_err(|source| JournalError::Io {
            path: self.path.clone(),
            source,
        })?;
        self.dirty = false;
        self.last_flush = Instant::now();
        Ok(())
    }
}

impl Drop for JournalWriter {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}

/// An entry to write, borrowing its event.
#[derive(Serialize)]
struct EntryRef<'a> {
    t: f64,
    #[serde(flatten)]
    event: &'a Event,
}

/// A journal read back: the header, every whole event line, and what was skipped.
#[derive(Debug, Clone)]
pub struct Journal {
    /// The header.
    pub header: Header,
    /// The events in order.
    pub entries: Vec<Entry>,
    /// Whether the last line was cut off (a crash mid-write) and skipped.
    pub torn: bool,
    /// Lines that did not parse (other than a torn last line), by 1-based number.
    pub bad_lines: Vec<usize>,
}

/// Reads a journal, tolerating a torn last line.
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

/// What [`JournalReader::visit`] found besides the events.
#[derive(Debug, Clone)]
pub struct Visited {
    /// Whether the last line was cut off (a crash mid-write) and skipped.
    pub torn: bool,
    /// Lines that did not parse (other than a torn last line), by 1-based number.
    pub bad_lines: Vec<usize>,
}

/// A journal opened for reading line by line, so one of any size is read in the memory of
/// one line.
pub struct JournalReader {
    /// The header (the first line).
    pub header: Header,
    /// Bytes of the header line, newline included.
    header_len: u64,
    path: PathBuf,
    reader: BufReader<File>,
}

impl JournalReader {
    /// Opens a journal and reads its header.
    pub fn open(path: &Path) -> Result<JournalReader, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let mut reader = BufReader::with_capacity(256 * 1024, file);
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
            return Err(JournalError::BadHeader {
                path: path.to_path_buf(),
                message: "the file is empty".to_string(),
            });
        }
        let header: Header =
            serde_json::from_slice(line.trim_ascii()).map_err(|e| JournalError::BadHeader {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        if header.format != "xstack-journal" {
            return Err(JournalError::BadHeader {
                path: path.to_path_buf(),
                message: format!("format is `{}`", header.format),
            });
        }
        Ok(JournalReader {
            header,
            header_len: line.len() as u64,
            path: path.to_path_buf(),
            reader,
        })
    }

    /// Hands each event to `each` as it is parsed; a torn last line is skipped and
    /// reported, as are lines that do not parse.
    pub fn visit(self, mut each: impl FnMut(Entry)) -> Result<Visited, JournalError> {
        self.visit_at(|_, entry| each(entry))
    }

    /// [`JournalReader::visit`], with the byte offset in the file where each event's line
    /// starts (so a player can read it back later).
    pub fn visit_at(mut self, mut each: impl FnMut(u64, Entry)) -> Result<Visited, JournalError> {
        let mut torn = false;
        let mut bad_lines = Vec::new();
        let mut number = 1;
        let mut line = Vec::new();
        let mut offset = self.header_len;
        loop {
            line.clear();
            let read =
                self.reader
                    .read_until(b'\n', &mut line)
                    .map_err(|source| JournalError::Io {
                        path: self.path.clone(),
                        source,
                    })?;
            if read == 0 {
                break;
            }
            let start = offset;
            offset += read as u64;
            number += 1;
            // Only the file's last line can lack its newline.
            let complete = line.last() == Some(&b'\n');
            let trimmed = line.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            match serde_json::from_slice::<Entry>(trimmed) {
                Ok(entry) => each(start, entry),
                Err(_) if !complete => torn = true,
                Err(_) => bad_lines.push(number),
            }
        }
        Ok(Visited { torn, bad_lines })
    }
}

#[cfg(test)]
mod tests;

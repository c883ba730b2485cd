//! Child processes in pseudo-terminals: spawn in their own session and process group (from
//! an ordinary thread, so the child is scheduled as it would be without xstack), a batch
//! reader thread per PTY feeding a bounded channel (back-pressure reaches the child through
//! the PTY), write, resize, pause/resume/terminate the whole group, and the exit status;
//! [`supervise`] watches one child (output, timeout, drain, end) for every owner.

pub mod filter;
pub mod screen;
pub mod supervise;
pub mod utf8;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::sync::{mpsc, oneshot};

/// Largest chunk a reader thread sends at once.
pub const CHUNK: usize = 64 * 1024;
/// Chunks buffered between a reader thread and its consumer before the reader blocks.
pub const CHANNEL_CHUNKS: usize = 16;

/// Errors of PTY processes.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    /// The PTY could not be opened or the program could not be started.
    #[error("cannot start `{program}`: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
    /// Writing to or resizing the PTY failed.
    #[error("terminal I/O failed: {0}")]
    Io(String),
}

/// What to run in a PTY.
#[derive(Debug, Clone)]
pub struct PtySpec {
    /// argv; the first element is the program (searched on the PATH given in `env`).
    pub argv: Vec<String>,
    /// Working folder; the child's `PWD` is set to it.
    pub cwd: PathBuf,
    /// Variables set on top of xstack's own environment.
    pub env: Vec<(String, String)>,
    /// Variables removed from the inherited environment.
    pub env_remove: Vec<String>,
    /// Terminal width.
    pub cols: u16,
    /// Terminal height.
    pub rows: u16,
}

/// How a PTY child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code; None when a signal ended it.
    pub code: Option<i32>,
}

/// A running child in a PTY. Dropping it terminates the child's process group.
pub struct PtyProcess {
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    pgid: Option<i32>,
    exited: bool,
}

/// The receiving ends of a spawned process: output chunks (closed at EOF) and the exit.
pub struct PtyStreams {
    /// Output bytes, in chunks of at most [`CHUNK`].
    pub output: mpsc::Receiver<Vec<u8>>,
    /// Fires once with the exit status.
    pub exit: oneshot::Receiver<ExitInfo>,
}

impl PtyProcess {
    /// Starts `spec` in a new PTY.
    pub fn spawn(spec: &PtySpec) -> Result<(PtyProcess, PtyStreams), PtyError> {
        let program = spec.argv.first().cloned().unwrap_or_default();
        let spawn_err = |message: String| PtyError::Spawn {
            program: program.clone(),
            message,
        };
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: spec.rows.max(2),
                cols: spec.cols.max(10),
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| spawn_err(e.to_string()))?;
        let mut cmd = CommandBuilder::from_argv(spec.argv.iter().map(OsString::from).collect());
        cmd.cwd(&spec.cwd);
        for key in &spec.env_remove {
            cmd.env_remove(key);
        }
        // Programs that take their folder from `$PWD` (OpenCode does) must see the folder
        // they run in, not the one xstack was started from.
        cmd.env("PWD", &spec.cwd);
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        if cmd.get_env("TERM").is_none() {
            cmd.env("TERM", "xterm-256color");
        }
        let ordinary = crate::process::OrdinaryScheduling::new();
        let mut child = pair
            .slave
            .spawn_command(cmd)
            .map_err(|e| spawn_err(e.to_string()))?;
        drop(ordinary);
        // The slave must be closed here, or EOF never reaches the reader.
        drop(pair.slave);
        let pgid = child.process_id().map(|p| p as i32);
        let mut reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| spawn_err(e.to_string()))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| spawn_err(e.to_string()))?;

        let (out_tx, out_rx) = mpsc::channel::<Vec<u8>>(CHANNEL_CHUNKS);
        std::thread::Builder::new()
            .name(format!("pty-read-{program}"))
            .spawn(move || {
                crate::process::run_as_batch();
                let mut buf = vec![0u8; CHUNK];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            if out_tx.blocking_send(buf[..n].to_vec()).is_err() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break,
                    }
                }
            })
            .map_err(|e| spawn_err(e.to_string()))?;

        let (exit_tx, exit_rx) = oneshot::channel();
        std::thread::Builder::new()
            .name(format!("pty-wait-{program}"))
            .spawn(move || {
                let info = match child.wait() {
                    Ok(status) if status.signal().is_some() => ExitInfo { code: None },
                    Ok(status) => ExitInfo {
                        code: Some(status.exit_code() as i32),
                    },
                    Err(_) => ExitInfo { code: None },
                };
                let _ = exit_tx.send(info);
            })
            .map_err(|e| spawn_err(e.to_string()))?;

        Ok((
            PtyProcess {
                master: pair.master,
                writer,
                pgid,
                exited: false,
            },
            PtyStreams {
                output: out_rx,
                exit: exit_rx,
            },
        ))
    }

    /// The process group id (the child's pid).
    pub fn pgid(&self) -> Option<i32> {
        self.pgid
    }

    /// Writes bytes to the child's terminal input.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), PtyError> {
        self.writer
            .write_all(bytes)
            .and_then(|()| self.writer.flush())
            .map_err(|e| PtyError::Io(e.to_string()))
    }

    /// Resizes the terminal (the child gets SIGWINCH).
    pub fn resize(&self, cols: u16, rows: u16) -> Result<(), PtyError> {
        self.master
            .resize(PtySize {
                rows: rows.max(2),
                cols: cols.max(10),
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| PtyError::Io(e.to_string()))
    }

    /// Sends a signal to the child's whole process group.
    pub fn signal_group(&self, signal: i32) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, signal);
        }
    }

    /// Stops the whole group (SIGSTOP).
    pub fn pause(&self) {
        self.signal_group(libc::SIGSTOP);
    }

    /// Continues the whole group (SIGCONT).
    pub fn resume(&self) {
        self.signal_group(libc::SIGCONT);
    }

    /// Marks the leader as exited; the group is still terminated on drop, so descendants
    /// left behind by the child are ended too.
    pub fn mark_exited(&mut self) {
        self.exited = true;
    }

    /// SIGTERM to the group, a grace period, then SIGKILL to the group.
    pub async fn terminate(&mut self, grace: Duration) {
        let Some(pgid) = self.pgid else { return };
        signal_group(pgid, libc::SIGCONT);
        signal_group(pgid, libc::SIGTERM);
        let deadline = tokio::time::Instant::now() + grace;
        while group_alive(pgid) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        signal_group(pgid, libc::SIGKILL);
        self.exited = true;
    }
}

impl Drop for PtyProcess {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, libc::SIGCONT);
            signal_group(pgid, libc::SIGKILL);
        }
    }
}

/// `text` as a terminal pastes it into a program that asked for bracketed paste: between
/// the start and end markers, so the program takes it as typed text, not as keys.
pub fn bracketed_paste(text: &str) -> Vec<u8> {
    let mut bytes = b"\x1b[200~".to_vec();
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(b"\x1b[201~");
    bytes
}

/// Sends `signal` to process group `pgid`.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: killpg has no memory-safety preconditions; a stale group id only fails.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

/// Whether any process of group `pgid` is still alive.
pub fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    pgid > 1 && unsafe { libc::killpg(pgid, 0) } == 0
}

#[cfg(test)]
mod tests;

//! Supervision of one PTY child, the same for the agent, the verify run and a seed run: its
//! output pumped and decoded (pieces already waiting joined), its timeout, the drain after
//! its exit (a leftover process holding the terminal is killed), and its end reported once,
//! after both the exit status and the end of its output arrived.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::utf8::Utf8Carry;
use super::{ExitInfo, PtyError, PtyProcess, PtySpec};

/// How long output is drained after a child exits before its group is killed (and, as long
/// again after that, before its output is given up).
pub const DRAIN: Duration = Duration::from_secs(1);
/// Grace between SIGTERM and SIGKILL when ending a child.
pub const TERMINATE_GRACE: Duration = Duration::from_secs(2);
/// Most bytes of terminal output handled as one piece.
pub const COALESCE_BYTES: usize = 256 * 1024;

/// What happened to a supervised child.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildEvent {
    /// Decoded output; `closed` when it is the last (the terminal closed), and then `text`
    /// is what the decoder held back (often empty).
    Output {
        /// The text.
        text: String,
        /// Whether the output has ended.
        closed: bool,
    },
    /// The timeout passed while the child still ran; its owner ends it (a remote run's
    /// cancel script first). Reported once.
    TimedOut,
    /// The exit status and the end of the output have both arrived. Reported once.
    Finished(ExitInfo),
}

/// A child in a PTY under supervision.
pub struct Supervised {
    process: PtyProcess,
    output: Option<mpsc::Receiver<Vec<u8>>>,
    exit: Option<oneshot::Receiver<ExitInfo>>,
    decoder: Utf8Carry,
    exit_info: Option<ExitInfo>,
    deadline: Option<Instant>,
    timed_out: bool,
    drain_at: Option<Instant>,
    killed_leftovers: bool,
    finished_reported: bool,
}

/// One thing a wait produced, before it is handled.
enum Woken {
    Chunk(Option<Vec<u8>>),
    Exit(ExitInfo),
    Timeout,
    Drained,
}

async fn recv_opt(rx: Option<&mut mpsc::Receiver<Vec<u8>>>) -> Option<Vec<u8>> {
    match rx {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

async fn exit_opt(rx: Option<&mut oneshot::Receiver<ExitInfo>>) -> ExitInfo {
    match rx {
        Some(r) => r.await.unwrap_or(ExitInfo { code: None }),
        None => std::future::pending().await,
    }
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Supervised {
    /// Starts `spec` in a PTY; with `timeout`, [`ChildEvent::TimedOut`] comes that long after.
    pub fn spawn(spec: &PtySpec, timeout: Option<Duration>) -> Result<Supervised, PtyError> {
        let (process, streams) = PtyProcess::spawn(spec)?;
        Ok(Supervised {
            process,
            output: Some(streams.output),
            exit: Some(streams.exit),
            decoder: Utf8Carry::new(),
            exit_info: None,
            deadline: timeout.map(|t| Instant::now() + t),
            timed_out: false,
            drain_at: None,
            killed_leftovers: false,
            finished_reported: false,
        })
    }

    /// Waits for the next thing to report; after [`ChildEvent::Finished`] it waits forever,
    /// so it can sit in a `select!` beside other sources. Cancel-safe: nothing is lost when
    /// the future is dropped before it completes.
    pub async fn next(&mut self) -> ChildEvent {
        loop {
            if self.finished_reported {
                return std::future::pending().await;
            }
            if self.output.is_none() && self.exit.is_none() {
                self.finished_reported = true;
                return ChildEvent::Finished(self.exit_info.unwrap_or(ExitInfo { code: None }));
            }
            let timeout = self
                .deadline
                .filter(|_| !self.timed_out && self.exit.is_some());
            let drain = self.drain_at.filter(|_| self.output.is_some());
            let woken = tokio::select! {
                chunk = recv_opt(self.output.as_mut()) => Woken::Chunk(chunk),
                info = exit_opt(self.exit.as_mut()) => Woken::Exit(info),
                () = sleep_opt(timeout) => Woken::Timeout,
                () = sleep_opt(drain) => Woken::Drained,
            };
            match woken {
                Woken::Chunk(Some(bytes)) => {
                    let bytes = self.coalesce(bytes);
                    let text = self.decoder.decode(&bytes);
                    return ChildEvent::Output {
                        text,
                        closed: false,
                    };
                }
                Woken::Chunk(None) => {
                    self.output = None;
                    return ChildEvent::Output {
                        text: self.decoder.finish(),
                        closed: true,
                    };
                }
                Woken::Exit(info) => {
                    self.exit = None;
                    self.exit_info = Some(info);
                    self.process.mark_exited();
                    self.drain_at = Some(Instant::now() + DRAIN);
                }
                Woken::Timeout => {
                    self.timed_out = true;
                    return ChildEvent::TimedOut;
                }
                Woken::Drained if !self.killed_leftovers => {
                    // The child has exited but something it left behind holds the terminal.
                    tracing::info!("a process left behind holds the terminal: killing its group");
                    self.process.signal_group(libc::SIGKILL);
                    self.killed_leftovers = true;
                    self.drain_at = Some(Instant::now() + DRAIN);
                }
                Woken::Drained => {
                    // A process outside the group still holds the terminal: give up on it.
                    tracing::warn!("the terminal stayed open after its group was killed");
                    self.output = None;
                    let text = self.decoder.finish();
                    if !text.is_empty() {
                        return ChildEvent::Output { text, closed: true };
                    }
                }
            }
        }
    }

    /// `first` followed by the chunks already waiting, up to [`COALESCE_BYTES`]: heavy
    /// output is recorded, parsed and drawn in few large pieces rather than many small ones,
    /// and light output is not delayed (nothing waits for more to arrive).
    fn coalesce(&mut self, mut first: Vec<u8>) -> Vec<u8> {
        let Some(rx) = self.output.as_mut() else {
            return first;
        };
        while first.len() < COALESCE_BYTES {
            match rx.try_recv() {
                Ok(more) => first.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        first
    }

    /// Whether the child has not exited yet.
    pub fn running(&self) -> bool {
        self.exit_info.is_none()
    }

    /// The exit status, once it arrived.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.exit_info
    }

    /// Whether the timeout passed.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// The process (write, resize, pause, its group).
    pub fn process(&mut self) -> &mut PtyProcess {
        &mut self.process
    }

    /// SIGTERM to the group, [`TERMINATE_GRACE`], then SIGKILL.
    pub async fn terminate(&mut self) {
        self.process.terminate(TERMINATE_GRACE).await;
    }

    /// Runs the child to its end: its output to `on_output` as it arrives, ended at its
    /// timeout. Returns the exit and whether it timed out.
    pub async fn run_to_end(mut self, on_output: &mut dyn FnMut(&str)) -> (ExitInfo, bool) {
        loop {
            match self.next().await {
                ChildEvent::Output { text, .. } => on_output(&text),
                ChildEvent::TimedOut => self.terminate().await,
                ChildEvent::Finished(exit) => return (exit, self.timed_out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bash(script: &str) -> PtySpec {
        PtySpec {
            argv: vec!["bash".to_string(), "-c".to_string(), script.to_string()],
            cwd: std::env::temp_dir(),
            env: Vec::new(),
            env_remove: Vec::new(),
            cols: 80,
            rows: 24,
        }
    }

    #[tokio::test]
    async fn output_then_one_finish_after_the_output_ended() {
        let child = Supervised::spawn(&bash("echo one; echo two; exit 3"), None).unwrap();
        let mut output = String::new();
        let (exit, timed_out) = child.run_to_end(&mut |t| output.push_str(t)).await;
        assert_eq!(exit.code, Some(3));
        assert!(!timed_out);
        assert_eq!(output, "one\r\ntwo\r\n");
    }

    #[tokio::test]
    async fn a_process_left_holding_the_terminal_is_killed_after_the_drain() {
        // The shell exits at once; its background `sleep` keeps the terminal open.
        let mut child = Supervised::spawn(&bash("sleep 60 & echo left; exit 0"), None).unwrap();
        let started = std::time::Instant::now();
        let mut events = Vec::new();
        loop {
            let event = child.next().await;
            events.push(event.clone());
            if let ChildEvent::Finished(exit) = event {
                assert_eq!(exit.code, Some(0));
                break;
            }
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{events:?}");
        let finished = events
            .iter()
            .filter(|e| matches!(e, ChildEvent::Finished(_)))
            .count();
        assert_eq!(finished, 1, "{events:?}");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, ChildEvent::Output { closed: true, .. })),
            "{events:?}"
        );
        assert!(!child.timed_out());
    }

    #[tokio::test]
    async fn the_timeout_is_reported_once_and_the_owner_ends_the_child() {
        let mut child = Supervised::spawn(
            &bash("echo started; exec sleep 30"),
            Some(Duration::from_millis(200)),
        )
        .unwrap();
        let mut timeouts = 0;
        let exit = loop {
            match child.next().await {
                ChildEvent::TimedOut => {
                    timeouts += 1;
                    child.terminate().await;
                }
                ChildEvent::Finished(exit) => break exit,
                ChildEvent::Output { .. } => {}
            }
        };
        assert_eq!(timeouts, 1);
        assert!(child.timed_out());
        assert_eq!(exit.code, None, "ended by a signal");
    }
}

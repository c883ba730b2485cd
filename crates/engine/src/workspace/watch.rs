//! Watching the agent's workspace for file changes. Events from the operating system
//! (through notify's debouncer) only say where to look: every affected path is read
//! again and reported when its content really differs from what was last seen. When
//! watching cannot start or fails (an inotify limit, say), the tree is polled instead.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use sha2::{Digest, Sha256};
use thiserror::Error;

/// How often the tree is scanned when events are not available.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// Folder names whose contents are never reported.
pub const IGNORED_DIRS: &[&str] = &[".git", "__pycache__", ".xstack"];

/// A file modified within this long ago is re-read by a poll even if its size and
/// modification time look unchanged (their resolution is coarse on some file systems).
const RECENT: Duration = Duration::from_secs(2);

/// What the watcher reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// A file's content differs from what was last seen.
    Changed {
        /// Path relative to the watched root, `/`-separated.
        path: String,
        /// The new content; `None` when the file is gone.
        content: Option<Vec<u8>>,
    },
    /// Something the user should know about the watching itself (e.g. polling fallback).
    Note(String),
}

/// Errors of starting a watcher.
#[derive(Debug, Error)]
pub enum WatchError {
    /// The root folder cannot be read.
    #[error("cannot watch {}: {source}", root.display())]
    Root {
        /// The folder asked for.
        root: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The background thread could not be started.
    #[error("cannot start the workspace watcher thread: {0}")]
    Thread(io::Error),
}

/// A running watcher; dropping it stops its threads.
#[derive(Debug)]
pub struct WorkspaceWatcher {
    stop: Arc<AtomicBool>,
    wake: Sender<DebounceEventResult>,
    worker: Option<JoinHandle<()>>,
}

type FsDebouncer = Debouncer<notify::RecommendedWatcher, RecommendedCache>;

impl WorkspaceWatcher {
    /// Watches `root` recursively, coalescing bursts of events over `debounce`. The
    /// current files are read first and count as seen: only later changes are reported.
    pub fn start(
        root: &Path,
        debounce: Duration,
    ) -> Result<(Self, Receiver<WatchEvent>), WatchError> {
        Self::spawn(root, debounce, false)
    }

    fn spawn(
        root: &Path,
        debounce: Duration,
        force_polling: bool,
    ) -> Result<(Self, Receiver<WatchEvent>), WatchError> {
        let root = root.canonicalize().map_err(|source| WatchError::Root {
            root: root.to_path_buf(),
            source,
        })?;
        let (events_tx, events_rx) = mpsc::channel();
        let (raw_tx, raw_rx) = mpsc::channel::<DebounceEventResult>();
        let stop = Arc::new(AtomicBool::new(false));
        let mut worker = Worker {
            root: root.clone(),
            known: HashMap::new(),
            tx: events_tx,
        };
        // Watch before the first scan so that nothing written in between is missed.
        let debouncer = if force_polling {
            Err("polling was requested".to_owned())
        } else {
            watch_tree(&root, debounce, raw_tx.clone())
        };
        // Cannot fail: the initial scan reports nothing, and the receiver is still here.
        let _ = worker.scan(Scan::Initial);
        let stop_flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("xstack-watch".to_owned())
            .spawn(move || match debouncer {
                Ok(debouncer) => worker.run_events(debouncer, &raw_rx, &stop_flag),
                Err(why) => worker.run_polling(&why, &stop_flag, false),
            })
            .map_err(WatchError::Thread)?;
        Ok((
            Self {
                stop,
                wake: raw_tx,
                worker: Some(handle),
            },
            events_rx,
        ))
    }
}

impl Drop for WorkspaceWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(worker) = self.worker.take() {
            // Wake the worker whether it waits for events or sleeps between polls.
            let _ = self.wake.send(Ok(Vec::new()));
            worker.thread().unpark();
            if worker.join().is_err() {
                tracing::warn!("the workspace watcher thread panicked");
            }
        }
    }
}

fn watch_tree(
    root: &Path,
    debounce: Duration,
    tx: Sender<DebounceEventResult>,
) -> Result<FsDebouncer, String> {
    let mut debouncer = new_debouncer(debounce, None, tx).map_err(|e| e.to_string())?;
    debouncer
        .watch(root, RecursiveMode::Recursive)
        .map_err(|e| e.to_string())?;
    Ok(debouncer)
}

/// Errors after which events cannot be trusted (a watch limit, a broken backend), as
/// opposed to a path that vanished while it was being watched.
fn is_fatal(error: &notify::Error) -> bool {
    match &error.kind {
        notify::ErrorKind::PathNotFound | notify::ErrorKind::WatchNotFound => false,
        notify::ErrorKind::Io(e) => e.kind() != io::ErrorKind::NotFound,
        _ => true,
    }
}

/// What was last seen of a file.
struct Seen {
    hash: [u8; 32],
    len: u64,
    modified: Option<SystemTime>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scan {
    /// Record what is there without reporting it.
    Initial,
    /// Report differences, re-reading every file.
    Full,
    /// Report differences, re-reading only files whose size or time moved (or recent ones).
    Poll,
}

struct Worker {
    root: PathBuf,
    known: HashMap<String, Seen>,
    tx: Sender<WatchEvent>,
}

/// The receiver is gone: stop working.
struct Closed;

impl Worker {
    fn run_events(
        mut self,
        debouncer: FsDebouncer,
        raw: &Receiver<DebounceEventResult>,
        stop: &AtomicBool,
    ) {
        let failure = loop {
            if stop.load(Ordering::Acquire) {
                debouncer.stop();
                return;
            }
            let outcome = match raw.recv_timeout(POLL_INTERVAL) {
                Ok(Ok(events)) => {
                    let rescan = events.iter().any(|e| e.need_rescan());
                    let paths: BTreeSet<PathBuf> =
                        events.into_iter().flat_map(|e| e.event.paths).collect();
                    if rescan {
                        self.scan(Scan::Full)
                    } else {
                        paths.iter().try_for_each(|p| self.refresh(p))
                    }
                }
                Ok(Err(errors)) => {
                    let (fatal, transient): (Vec<_>, Vec<_>) =
                        errors.into_iter().partition(is_fatal);
                    if !fatal.is_empty() {
                        let text: Vec<String> = fatal.iter().map(ToString::to_string).collect();
                        break text.join("; ");
                    }
                    // A folder that vanished while being watched: look at what is left.
                    let paths: BTreeSet<PathBuf> =
                        transient.into_iter().flat_map(|e| e.paths).collect();
                    paths.iter().try_for_each(|p| self.refresh(p))
                }
                Err(RecvTimeoutError::Timeout) => Ok(()),
                Err(RecvTimeoutError::Disconnected) => break "the event stream ended".to_owned(),
            };
            if outcome.is_err() {
                debouncer.stop();
                return;
            }
        };
        debouncer.stop();
        self.run_polling(&failure, stop, true);
    }

    /// Polls the tree until stopped, after a note saying why; `catch_up` first re-reads
    /// every file (events may have been lost before the switch).
    fn run_polling(mut self, why: &str, stop: &AtomicBool, catch_up: bool) {
        let note = format!(
            "file watching unavailable ({why}); polling the workspace every {} ms",
            POLL_INTERVAL.as_millis()
        );
        tracing::warn!("{note}");
        if self.send(WatchEvent::Note(note)).is_err()
            || (catch_up && self.scan(Scan::Full).is_err())
        {
            return;
        }
        while !stop.load(Ordering::Acquire) {
            std::thread::park_timeout(POLL_INTERVAL);
            if stop.load(Ordering::Acquire) || self.scan(Scan::Poll).is_err() {
                return;
            }
        }
    }

    /// Walks the whole tree, then reports files that disappeared.
    fn scan(&mut self, mode: Scan) -> Result<(), Closed> {
        let mut present = BTreeSet::new();
        let mut pending = vec![self.root.clone()];
        while let Some(dir) = pending.pop() {
            let Ok(listing) = fs::read_dir(&dir) else {
                continue;
            };
            for item in listing.flatten() {
                let path = item.path();
                let Ok(kind) = item.file_type() else { continue };
                let Some(rel) = self.relative(&path) else {
                    continue;
                };
                if kind.is_dir() {
                    pending.push(path);
                } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
                    self.check_file(&path, &rel, mode)?;
                    present.insert(rel);
                }
            }
        }
        let gone: Vec<String> = self
            .known
            .keys()
            .filter(|k| !present.contains(*k))
            .cloned()
            .collect();
        gone.into_iter().try_for_each(|rel| self.forget(&rel))
    }

    /// Re-examines one path named by an event: a file, a folder, or something gone.
    fn refresh(&mut self, path: &Path) -> Result<(), Closed> {
        let Some(rel) = self.relative(path) else {
            return if path == self.root {
                self.scan(Scan::Full)
            } else {
                Ok(())
            };
        };
        match fs::metadata(path) {
            Ok(meta) if meta.is_file() => self.check_file(path, &rel, Scan::Full),
            Ok(meta) if meta.is_dir() => {
                // A folder appeared or was replaced: look at everything under it.
                let prefix = format!("{rel}/");
                let mut pending = vec![path.to_path_buf()];
                let mut present = BTreeSet::new();
                while let Some(dir) = pending.pop() {
                    for item in fs::read_dir(&dir).into_iter().flatten().flatten() {
                        let child = item.path();
                        let Ok(kind) = item.file_type() else { continue };
                        let Some(child_rel) = self.relative(&child) else {
                            continue;
                        };
                        if kind.is_dir() {
                            pending.push(child);
                        } else if kind.is_file() || (kind.is_symlink() && child.is_file()) {
                            self.check_file(&child, &child_rel, Scan::Full)?;
                            present.insert(child_rel);
                        }
                    }
                }
                let gone: Vec<String> = self
                    .known
                    .keys()
                    .filter(|k| k.starts_with(&prefix) && !present.contains(*k))
                    .cloned()
                    .collect();
                gone.into_iter().try_for_each(|k| self.forget(&k))
            }
            Ok(_) => Ok(()),
            Err(_) => {
                // Gone: the file itself, or a folder with everything under it.
                let prefix = format!("{rel}/");
                let gone: Vec<String> = self
                    .known
                    .keys()
                    .filter(|k| **k == rel || k.starts_with(&prefix))
                    .cloned()
                    .collect();
                gone.into_iter().try_for_each(|k| self.forget(&k))
            }
        }
    }

    /// Reads a file if needed and reports it when its content changed.
    fn check_file(&mut self, path: &Path, rel: &str, mode: Scan) -> Result<(), Closed> {
        let meta = fs::metadata(path).ok();
        let len = meta.as_ref().map_or(0, fs::Metadata::len);
        let modified = meta.as_ref().and_then(|m| m.modified().ok());
        if mode == Scan::Poll
            && let Some(seen) = self.known.get(rel)
        {
            let recent = modified
                .and_then(|m| m.elapsed().ok())
                .is_none_or(|age| age < RECENT);
            if seen.len == len && seen.modified == modified && !recent {
                return Ok(());
            }
        }
        let content = match fs::read(path) {
            Ok(content) => content,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return self.forget(rel),
            Err(e) => {
                tracing::debug!(path = rel, error = %e, "cannot read a changed file");
                return Ok(());
            }
        };
        let hash: [u8; 32] = Sha256::digest(&content).into();
        let before = self.known.insert(
            rel.to_owned(),
            Seen {
                hash,
                len,
                modified,
            },
        );
        if mode == Scan::Initial || before.is_some_and(|b| b.hash == hash) {
            return Ok(());
        }
        self.send(WatchEvent::Changed {
            path: rel.to_owned(),
            content: Some(content),
        })
    }

    /// Reports a known file as deleted.
    fn forget(&mut self, rel: &str) -> Result<(), Closed> {
        if self.known.remove(rel).is_none() {
            return Ok(());
        }
        self.send(WatchEvent::Changed {
            path: rel.to_owned(),
            content: None,
        })
    }

    fn send(&self, event: WatchEvent) -> Result<(), Closed> {
        self.tx.send(event).map_err(|_| Closed)
    }

    /// The `/`-separated path under the root, or `None` for the root itself, paths
    /// outside it and anything inside an ignored folder.
    fn relative(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let mut parts = Vec::new();
        for part in rel.components() {
            let part = part.as_os_str().to_string_lossy();
            if IGNORED_DIRS.contains(&part.as_ref()) {
                return None;
            }
            parts.push(part);
        }
        (!parts.is_empty()).then(|| parts.join("/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    const WAIT: Duration = Duration::from_secs(10);

    /// Waits (up to a deadline) for an event matching `want`, returning it.
    fn wait_for(rx: &Receiver<WatchEvent>, want: impl Fn(&WatchEvent) -> bool) -> WatchEvent {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(e) if want(&e) => return e,
                Ok(e) => seen.push(e),
                Err(_) => break,
            }
        }
        panic!("no matching event within {WAIT:?}; got {seen:?}");
    }

    fn changed(path: &'static str, content: Option<&'static [u8]>) -> impl Fn(&WatchEvent) -> bool {
        move |e| {
            *e == WatchEvent::Changed {
                path: path.to_owned(),
                content: content.map(<[u8]>::to_vec),
            }
        }
    }

    fn exercise(rx: &Receiver<WatchEvent>, root: &Path) {
        fs::write(root.join("model.py"), "import jax\n").unwrap();
        wait_for(rx, changed("model.py", Some(b"import jax\n")));

        // Save as editors do: write a temporary file, then rename it over the target.
        fs::write(root.join(".model.py.swp"), "import jax.numpy as jnp\n").unwrap();
        fs::rename(root.join(".model.py.swp"), root.join("model.py")).unwrap();
        wait_for(rx, changed("model.py", Some(b"import jax.numpy as jnp\n")));

        fs::create_dir_all(root.join("pkg/sub")).unwrap();
        fs::write(root.join("pkg/sub/new.py"), "x = 1\n").unwrap();
        wait_for(rx, changed("pkg/sub/new.py", Some(b"x = 1\n")));

        fs::remove_file(root.join("model.py")).unwrap();
        wait_for(rx, changed("model.py", None));
    }

    #[test]
    fn events_report_writes_renames_over_and_deletes() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("model.py"), "import torch\n").unwrap();
        let (watcher, rx) = WorkspaceWatcher::start(dir.path(), Duration::from_millis(50)).unwrap();
        exercise(&rx, dir.path());
        drop(watcher);
        // The worker has exited and dropped its sender.
        assert!(matches!(
            rx.recv_timeout(WAIT),
            Err(RecvTimeoutError::Disconnected)
        ));
    }

    #[test]
    fn polling_fallback_says_so_and_reports_the_same_changes() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("model.py"), "import torch\n").unwrap();
        let (watcher, rx) =
            WorkspaceWatcher::spawn(dir.path(), Duration::from_millis(50), true).unwrap();
        let note = wait_for(&rx, |e| matches!(e, WatchEvent::Note(_)));
        assert!(matches!(note, WatchEvent::Note(n) if n.contains("polling")));
        exercise(&rx, dir.path());
        drop(watcher);
        assert!(matches!(
            rx.recv_timeout(WAIT),
            Err(RecvTimeoutError::Disconnected)
        ));
    }

    #[test]
    fn unchanged_rewrites_and_ignored_folders_are_not_reported() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.py"), "same\n").unwrap();
        fs::create_dir_all(dir.path().join(".git")).unwrap();
        fs::create_dir_all(dir.path().join("__pycache__")).unwrap();
        let (_watcher, rx) =
            WorkspaceWatcher::start(dir.path(), Duration::from_millis(50)).unwrap();
        fs::write(dir.path().join("a.py"), "same\n").unwrap();
        fs::write(dir.path().join(".git/index"), "x").unwrap();
        fs::write(dir.path().join("__pycache__/a.pyc"), "x").unwrap();
        // A marker written last: everything before it has been processed when it arrives.
        fs::write(dir.path().join("marker.txt"), "m").unwrap();
        let first = wait_for(&rx, |_| true);
        assert_eq!(
            first,
            WatchEvent::Changed {
                path: "marker.txt".to_owned(),
                content: Some(b"m".to_vec())
            }
        );
    }

    #[test]
    fn only_limit_and_backend_errors_switch_to_polling() {
        let fatal = notify::Error::new(notify::ErrorKind::MaxFilesWatch);
        let vanished = notify::Error::path_not_found().add_path(PathBuf::from("/w/tmp"));
        let io_gone = notify::Error::io(io::Error::from(io::ErrorKind::NotFound));
        assert!(is_fatal(&fatal));
        assert!(!is_fatal(&vanished) && !is_fatal(&io_gone));
    }

    #[test]
    fn a_missing_root_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = WorkspaceWatcher::start(&dir.path().join("nope"), Duration::from_millis(50))
            .unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }
}

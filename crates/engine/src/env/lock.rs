//! Advisory file locks (`flock`) on the cache: an environment's build lock (`envs/<key>.lock`,
//! exclusive while it is built or removed) and its use lock (`envs/<key>.use`, held shared by
//! every process that uses the environment, until it exits, so `xstack env prune` never
//! removes an environment a running session holds).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::Mutex;

/// An advisory lock held until dropped.
pub struct FileLock<'a> {
    file: &'a File,
}

impl<'a> FileLock<'a> {
    /// Waits for an exclusive lock on `file`.
    pub fn exclusive(file: &'a File) -> FileLock<'a> {
        // SAFETY: flock on a valid open descriptor has no memory-safety preconditions.
        unsafe {
            libc::flock(file.as_raw_fd(), libc::LOCK_EX);
        }
        FileLock { file }
    }

    /// An exclusive lock on `file` if no one else holds one, shared or exclusive.
    pub fn try_exclusive(file: &'a File) -> Option<FileLock<'a>> {
        // SAFETY: as above.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        (rc == 0).then_some(FileLock { file })
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

/// The use locks this process holds, kept open (so held) until it exits.
static HELD: Mutex<Vec<(std::path::PathBuf, File)>> = Mutex::new(Vec::new());

/// Holds a shared lock on the use lock file `path` until this process exits (once per
/// path).
pub fn hold_in_use(path: &Path) -> std::io::Result<()> {
    let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if held.iter().any(|(p, _)| p == path) {
        return Ok(());
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    // SAFETY: as above.
    unsafe {
        libc::flock(file.as_raw_fd(), libc::LOCK_SH);
    }
    held.push((path.to_path_buf(), file));
    Ok(())
}

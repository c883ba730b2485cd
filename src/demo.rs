//! The bundled demo task (`tasks/digits-mlp`: repository, oracle, trajectory), embedded in the
//! binary so that `xstack demo` works from any folder on a fresh machine.

use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};
use sha2::{Digest, Sha256};

/// The embedded task folder.
static DEMO_TASK: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/tasks/digits-mlp");

/// The demo task's id.
pub const DEMO_TASK_ID: &str = "digits-mlp";

fn content_hash(dir: &Dir<'_>, hasher: &mut Sha256) {
    for file in dir.files() {
        hasher.update(file.path().to_string_lossy().as_bytes());
        hasher.update(file.contents());
    }
    for sub in dir.dirs() {
        content_hash(sub, hasher);
    }
}

fn write_dir(dir: &Dir<'_>, root: &Path) -> std::io::Result<()> {
    for file in dir.files() {
        let target = root.join(file.path());
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, file.contents())?;
    }
    for sub in dir.dirs() {
        write_dir(sub, root)?;
    }
    Ok(())
}

/// Writes the embedded task into the cache (once per content) and returns its folder,
/// named `digits-mlp` as the task id requires.
pub fn materialize(cache: &Path) -> std::io::Result<PathBuf> {
    let mut hasher = Sha256::new();
    content_hash(&DEMO_TASK, &mut hasher);
    let digest = hasher.finalize();
    let key: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    let parent = cache.join("demo").join(key);
    let dir = parent.join(DEMO_TASK_ID);
    let marker = parent.join(".complete");
    if marker.is_file() {
        return Ok(dir);
    }
    let staging = cache
        .join("demo")
        .join(format!(".staging-{}", std::process::id()));
    remove_staging(&staging);
    write_dir(&DEMO_TASK, &staging.join(DEMO_TASK_ID))?;
    std::fs::write(staging.join(".complete"), b"")?;
    std::fs::create_dir_all(cache.join("demo"))?;
    match std::fs::rename(&staging, &parent) {
        Ok(()) => {}
        // Another xstack wrote the same content first.
        Err(_) if marker.is_file() => remove_staging(&staging),
        Err(e) => return Err(e),
    }
    Ok(dir)
}

/// Removes a staging folder left by this or an earlier process (absent is fine; anything
/// else is logged, since the folder only wastes space).
fn remove_staging(staging: &Path) {
    if let Err(e) = std::fs::remove_dir_all(staging)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("cannot remove {}: {e}", staging.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_task_is_valid_and_written_once() {
        let cache = tempfile::tempdir().unwrap();
        let dir = materialize(cache.path()).unwrap();
        let task = crate::task::Task::load(&dir).unwrap();
        assert_eq!(task.id(), DEMO_TASK_ID);
        assert!(task.demo_trajectory().is_some());
        assert!(task.solution_dir().is_some());
        let again = materialize(cache.path()).unwrap();
        assert_eq!(dir, again);
    }
}

//! Loading the two sides of `xstack diff OLD NEW` (two files or two folders) into
//! snapshots, skipping `.git`, `__pycache__` and `.xstack`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::pairing::{CompareOptions, FileEntry, FileStatus, Snapshot, compare_snapshots};
use super::text::is_binary;

/// Folder names never read into a snapshot.
pub const SKIPPED_DIRS: &[&str] = &[".git", "__pycache__", ".xstack"];

/// Errors of loading files for a diff.
#[derive(Debug, Error)]
pub enum LoadError {
    /// A path could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// One side is a file and the other a folder.
    #[error("{} and {} must both be files or both be folders", old.display(), new.display())]
    Mismatch {
        /// The old side.
        old: PathBuf,
        /// The new side.
        new: PathBuf,
    },
}

/// Both sides of a comparison and its file entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedPair {
    /// The old side's files.
    pub old: Snapshot,
    /// The new side's files.
    pub new: Snapshot,
    /// What differs, in path order.
    pub entries: Vec<FileEntry>,
}

/// Loads two files or two folders. Two files are always compared with each other (as a
/// pair when their names differ) and listed even when identical; two folders are compared
/// with [`compare_snapshots`].
pub fn load_pair(old: &Path, new: &Path, opts: &CompareOptions) -> Result<LoadedPair, LoadError> {
    let old_meta = metadata(old)?;
    let new_meta = metadata(new)?;
    match (old_meta.is_dir(), new_meta.is_dir()) {
        (true, true) => {
            let old_snap = read_tree(old)?;
            let new_snap = read_tree(new)?;
            let entries = compare_snapshots(&old_snap, &new_snap, opts);
            Ok(LoadedPair {
                old: old_snap,
                new: new_snap,
                entries,
            })
        }
        (false, false) => {
            let name = |p: &Path| {
                p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                )
            };
            let (old_name, new_name) = (name(old), name(new));
            let (old_bytes, new_bytes) = (read(old)?, read(new)?);
            let binary = is_binary(&old_bytes) || is_binary(&new_bytes);
            let old_snap: Snapshot = [(old_name.clone(), old_bytes)].into();
            let new_snap: Snapshot = [(new_name.clone(), new_bytes)].into();
            let entries = if old_name == new_name {
                let all = CompareOptions {
                    include_unchanged: true,
                    ..opts.clone()
                };
                compare_snapshots(&old_snap, &new_snap, &all)
            } else {
                vec![FileEntry {
                    path: new_name,
                    status: FileStatus::Paired { from: old_name },
                    binary,
                }]
            };
            Ok(LoadedPair {
                old: old_snap,
                new: new_snap,
                entries,
            })
        }
        _ => Err(LoadError::Mismatch {
            old: old.to_path_buf(),
            new: new.to_path_buf(),
        }),
    }
}

/// Reads every regular file under `root` (following file links, not folder links) into a
/// snapshot keyed by `/`-separated relative paths, skipping [`SKIPPED_DIRS`].
pub fn read_tree(root: &Path) -> Result<Snapshot, LoadError> {
    let mut snap = Snapshot::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let dir = root.join(&rel);
        let listing = fs::read_dir(&dir).map_err(|source| LoadError::Io {
            path: dir.clone(),
            source,
        })?;
        for item in listing {
            let item = item.map_err(|source| LoadError::Io {
                path: dir.clone(),
                source,
            })?;
            let name = item.file_name();
            let child = rel.join(&name);
            let path = item.path();
            let Ok(kind) = item.file_type() else { continue };
            if kind.is_dir() {
                if !SKIPPED_DIRS.iter().any(|s| name == *s) {
                    pending.push(child);
                }
            } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
                snap.insert(relative_key(&child), read(&path)?);
            }
        }
    }
    Ok(snap)
}

fn relative_key(rel: &Path) -> String {
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn metadata(path: &Path) -> Result<fs::Metadata, LoadError> {
    fs::metadata(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn read(path: &Path) -> Result<Vec<u8>, LoadError> {
    fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, content: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    #[test]
    fn folders_load_recursively_without_caches_and_git() {
        let old = tempfile::tempdir().unwrap();
        let new = tempfile::tempdir().unwrap();
        write(old.path(), "pkg/model.py", "import torch\n");
        write(old.path(), "pkg/__pycache__/model.cpython-312.pyc", "junk");
        write(old.path(), ".git/HEAD", "ref");
        write(new.path(), "pkg/model.py", "import jax\n");
        let pair = load_pair(old.path(), new.path(), &CompareOptions::default()).unwrap();
        assert_eq!(pair.old.keys().collect::<Vec<_>>(), vec!["pkg/model.py"]);
        assert_eq!(pair.entries.len(), 1);
        assert_eq!(pair.entries[0].status, FileStatus::Modified);
    }

    #[test]
    fn two_files_with_different_names_are_a_pair() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a/model.py", "x = 1\n");
        write(dir.path(), "b/model_flax.py", "x = 1\n");
        let pair = load_pair(
            &dir.path().join("a/model.py"),
            &dir.path().join("b/model_flax.py"),
            &CompareOptions::default(),
        )
        .unwrap();
        assert_eq!(pair.entries[0].label(), "model.py → model_flax.py");
    }

    #[test]
    fn identical_files_are_still_listed() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a/x.py", "x = 1\n");
        write(dir.path(), "b/x.py", "x = 1\n");
        let pair = load_pair(
            &dir.path().join("a/x.py"),
            &dir.path().join("b/x.py"),
            &CompareOptions::default(),
        )
        .unwrap();
        assert_eq!(pair.entries[0].status, FileStatus::Unchanged);
    }

    #[test]
    fn a_file_against_a_folder_or_a_missing_path_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "x.py", "x\n");
        let err = load_pair(
            &dir.path().join("x.py"),
            dir.path(),
            &CompareOptions::default(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("both be files or both be folders"),
            "{err}"
        );
        let err = load_pair(
            &dir.path().join("nope"),
            dir.path(),
            &CompareOptions::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }
}

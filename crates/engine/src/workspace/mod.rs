//! The agent's workspace: a copy of the source (the source is never written), snapshots of
//! its files for diffs and the journal, change tracking, and the clean verify copy with the
//! protected files restored from the source.

pub mod watch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use sha2::{Digest, Sha256};

use crate::event::FileContent;
use crate::grade::{Finding, FindingKind};

/// Files larger than this are recorded by size only.
pub const MAX_RECORDED_FILE: u64 = 1024 * 1024;

/// Folder names never copied into the workspace or the verify copy.
const ALWAYS_SKIPPED: &[&str] = &[".git", ".hg", ".svn"];
/// Folder and file names left out of the verify copy: caches and xstack's own markers.
const VERIFY_SKIPPED: &[&str] = &[
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".ipynb_checkpoints",
    ".xstack",
    ".venv",
    "venv",
];

/// aider's chat history, input history and tag cache (`.aider.chat.history.md`,
/// `.aider.tags.cache.v4/`, …), left out of the verify copy with the other caches.
const AIDER_PREFIX: &str = ".aider";

/// Workspace errors.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A protected glob does not compile (validated earlier; kept for completeness).
    #[error("protected glob `{glob}`: {message}")]
    Glob {
        /// The glob.
        glob: String,
        /// Why.
        message: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> WorkspaceError + '_ {
    move |source| WorkspaceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Copies the tree at `from` into `to` (created), skipping version-control folders and, when
/// `clean`, caches, logs and xstack markers. Symlinks are copied as the files they point to
/// when those lie inside `from`, and skipped otherwise.
pub fn copy_tree(from: &Path, to: &Path, clean: bool) -> Result<(), WorkspaceError> {
    std::fs::create_dir_all(to).map_err(io_err(to))?;
    let root = from.canonicalize().map_err(io_err(from))?;
    let walker = walkdir::WalkDir::new(from)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| {
            !skipped(
                e.file_name().to_string_lossy().as_ref(),
                e.file_type().is_dir(),
                clean,
            )
        });
    for entry in walker {
        let entry = entry.map_err(|e| WorkspaceError::Io {
            path: from.to_path_buf(),
            source: e.into(),
        })?;
        let rel = entry.path().strip_prefix(from).unwrap_or(entry.path());
        let target = to.join(rel);
        let ft = entry.file_type();
        if ft.is_dir() {
            std::fs::create_dir_all(&target).map_err(io_err(&target))?;
        } else if ft.is_file() {
            std::fs::copy(entry.path(), &target).map_err(io_err(&target))?;
        } else if ft.is_symlink() {
            let Ok(real) = entry.path().canonicalize() else {
                continue;
            };
            if real.starts_with(&root) && real.is_file() {
                std::fs::copy(&real, &target).map_err(io_err(&target))?;
            }
        }
    }
    Ok(())
}

/// The agent's workspace: the source at `from` copied into `to` ([`copy_tree`]), less the
/// files and folders `exclude` names (the task's `[source] exclude`, relative to the source).
pub fn copy_source(from: &Path, to: &Path, exclude: &[String]) -> Result<(), WorkspaceError> {
    copy_tree(from, to, false)?;
    for rel in exclude {
        let path = to.join(rel);
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(&path)(e)),
            _ => {}
        }
    }
    Ok(())
}

/// Every file of the source at `root` in recorded form, less those `exclude` leaves out of
/// the workspace ([`copy_source`]).
pub fn source_snapshot(root: &Path, exclude: &[String]) -> Vec<FileContent> {
    snapshot(root)
        .into_iter()
        .filter(|file| !is_excluded(&file.path, exclude))
        .collect()
}

/// Whether the relative path `rel` is one of `exclude` or lies in one of its folders.
pub fn is_excluded(rel: &str, exclude: &[String]) -> bool {
    exclude.iter().any(|ex| {
        let ex = ex.trim_end_matches('/');
        rel == ex
            || rel
                .strip_prefix(ex)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Each folder of `layers` copied into `into` in order ([`copy_tree`], clean), a later
/// layer's files over an earlier one's.
pub fn copy_layers(layers: &[PathBuf], into: &Path) -> Result<(), WorkspaceError> {
    for layer in layers {
        copy_tree(layer, into, true)?;
    }
    Ok(())
}

fn skipped(name: &str, is_dir: bool, clean: bool) -> bool {
    if ALWAYS_SKIPPED.contains(&name) {
        return true;
    }
    clean
        && (VERIFY_SKIPPED.contains(&name)
            || name.starts_with(AIDER_PREFIX)
            || (!is_dir && (name.ends_with(".pyc") || name.ends_with(".log"))))
}

/// Every regular file under `root` (relative paths with `/`), skipping version control,
/// caches and xstack markers.
pub fn list_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !skipped(
                e.file_name().to_string_lossy().as_ref(),
                e.file_type().is_dir(),
                true,
            ) || e.depth() == 0
        })
        .filter_map(Result::ok)
    {
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            files.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    files
}

/// Reads one file into its recorded form (text, or size only for binary or large files).
pub fn read_content(root: &Path, rel: &str) -> Option<FileContent> {
    let path = root.join(rel);
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let size = meta.len();
    let text = if size <= MAX_RECORDED_FILE {
        let bytes = std::fs::read(&path).ok()?;
        let binary = bytes.iter().take(8192).any(|&b| b == 0);
        (!binary).then(|| String::from_utf8_lossy(&bytes).into_owned())
    } else {
        None
    };
    Some(FileContent {
        path: rel.to_string(),
        text,
        size,
    })
}

/// Every file of `root` in recorded form.
pub fn snapshot(root: &Path) -> Vec<FileContent> {
    list_files(root)
        .iter()
        .filter_map(|rel| read_content(root, rel))
        .collect()
}

/// A file change found by [`Tracker::scan`].
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The file as it is now (text None when deleted).
    pub file: FileContent,
    /// Whether it was deleted.
    pub deleted: bool,
}

/// Tracks the workspace's files and reports what changed since the last scan.
#[derive(Debug, Default)]
pub struct Tracker {
    known: BTreeMap<String, (u64, std::time::SystemTime, [u8; 32])>,
}

impl Tracker {
    /// A tracker that knows `root`'s current files (nothing is reported for them).
    pub fn new(root: &Path) -> Tracker {
        let mut tracker = Tracker::default();
        tracker.scan(root);
        tracker
    }

    /// Re-reads one file (relative path); a change when its content differs from what the
    /// tracker knew, including its appearance or disappearance.
    fn check(&mut self, root: &Path, rel: &str) -> Option<Change> {
        let path = root.join(rel);
        let Some(meta) = std::fs::metadata(&path).ok().filter(|m| m.is_file()) else {
            return self.known.remove(rel).map(|_| Change {
                file: FileContent {
                    path: rel.to_string(),
                    text: None,
                    size: 0,
                },
                deleted: true,
            });
        };
        let mtime = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
        if let Some((size, time, _)) = self.known.get(rel)
            && *size == meta.len()
            && *time == mtime
        {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        let hash: [u8; 32] = Sha256::digest(&bytes).into();
        let changed = self.known.get(rel).is_none_or(|(_, _, h)| *h != hash);
        self.known
            .insert(rel.to_string(), (meta.len(), mtime, hash));
        if changed {
            read_content(root, rel).map(|file| Change {
                file,
                deleted: false,
            })
        } else {
            None
        }
    }

    /// Re-reads `root`; returns the files whose content changed, appeared or disappeared.
    pub fn scan(&mut self, root: &Path) -> Vec<Change> {
        let files = list_files(root);
        let seen: std::collections::BTreeSet<&String> = files.iter().collect();
        let mut changes: Vec<Change> = files
            .iter()
            .filter_map(|rel| self.check(root, rel))
            .collect();
        let gone: Vec<String> = self
            .known
            .keys()
            .filter(|k| !seen.contains(k))
            .cloned()
            .collect();
        changes.extend(gone.iter().filter_map(|rel| self.check(root, rel)));
        changes
    }

    /// Re-reads only `paths` (relative), e.g. those a file watcher reported.
    pub fn scan_paths(&mut self, root: &Path, paths: &[String]) -> Vec<Change> {
        paths
            .iter()
            .filter_map(|rel| self.check(root, rel))
            .collect()
    }
}

/// Compiles the task's protected globs.
pub fn protected_set(globs: &[String]) -> Result<GlobSet, WorkspaceError> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        let g = Glob::new(glob).map_err(|e| WorkspaceError::Glob {
            glob: glob.clone(),
            message: e.to_string(),
        })?;
        builder.add(g);
    }
    builder.build().map_err(|e| WorkspaceError::Glob {
        glob: globs.join(", "),
        message: e.to_string(),
    })
}

/// Builds the clean verify copy of `workspace` in `verify_dir` and restores the protected
/// files from `source`. Returns one finding per protected file the agent had changed, added
/// or deleted.
pub fn prepare_verify(
    workspace: &Path,
    source: &Path,
    verify_dir: &Path,
    protected: &[String],
) -> Result<Vec<Finding>, WorkspaceError> {
    if verify_dir.exists() {
        std::fs::remove_dir_all(verify_dir).map_err(io_err(verify_dir))?;
    }
    copy_tree(workspace, verify_dir, true)?;
    if protected.is_empty() {
        return Ok(Vec::new());
    }
    let set = protected_set(protected)?;
    let mut findings = Vec::new();
    let source_files: Vec<String> = list_files(source)
        .into_iter()
        .filter(|f| set.is_match(f))
        .collect();
    let verify_files: Vec<String> = list_files(verify_dir)
        .into_iter()
        .filter(|f| set.is_match(f))
        .collect();
    for rel in &source_files {
        let original = std::fs::read(source.join(rel)).map_err(io_err(&source.join(rel)))?;
        let target = verify_dir.join(rel);
        match std::fs::read(&target) {
            Ok(current) if current == original => continue,
            Ok(_) => findings.push(protected_finding(
                rel,
                format!("protected file {rel} was changed by the agent (restored from the source)"),
            )),
            Err(_) => findings.push(protected_finding(
                rel,
                format!("protected file {rel} was deleted by the agent (restored from the source)"),
            )),
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        std::fs::write(&target, &original).map_err(io_err(&target))?;
    }
    for rel in verify_files {
        if !source_files.contains(&rel) {
            let target = verify_dir.join(&rel);
            std::fs::remove_file(&target).map_err(io_err(&target))?;
            findings.push(protected_finding(
                &rel,
                format!("protected path {rel} was added by the agent (removed)"),
            ));
        }
    }
    Ok(findings)
}

fn protected_finding(rel: &str, text: String) -> Finding {
    Finding::at(FindingKind::ProtectedChanged, rel, None, text)
}

/// The protected files of `source` (relative paths), as `globs` select them.
pub fn protected_files(source: &Path, globs: &[String]) -> Result<Vec<String>, WorkspaceError> {
    if globs.is_empty() {
        return Ok(Vec::new());
    }
    let set = protected_set(globs)?;
    Ok(list_files(source)
        .into_iter()
        .filter(|f| set.is_match(f))
        .collect())
}

#[cfg(test)]
mod tests;

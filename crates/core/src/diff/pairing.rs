//! File-level comparison of two snapshots (the PyTorch source and the agent's workspace):
//! each path's status, and new files paired with the old file they were ported from
//! (`model.py → model_flax.py`) by name tokens and shared identifiers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::text::is_binary;

/// Files by relative path (`/`-separated) with their raw contents.
pub type Snapshot = BTreeMap<String, Vec<u8>>;

/// How a file differs between the two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Same path on both sides, different contents.
    Modified,
    /// Only in the new snapshot, and no old file resembles it.
    Added,
    /// Only in the old snapshot, and no new file was paired with it.
    Deleted,
    /// Same path and contents on both sides.
    Unchanged,
    /// A new file paired with the old file `from` it most resembles (a port or rename).
    Paired {
        /// The old file's path.
        from: String,
    },
}

/// One file of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// The file's path: the new path, or the old one for a deleted file.
    pub path: String,
    /// How it differs.
    pub status: FileStatus,
    /// Either side looks binary: the file is listed but its contents are not diffed.
    pub binary: bool,
}

impl FileEntry {
    /// Path of the old side, if there is one.
    pub fn old_path(&self) -> Option<&str> {
        match &self.status {
            FileStatus::Added => None,
            FileStatus::Paired { from } => Some(from),
            _ => Some(&self.path),
        }
    }

    /// Path of the new side, if there is one.
    pub fn new_path(&self) -> Option<&str> {
        match self.status {
            FileStatus::Deleted => None,
            _ => Some(&self.path),
        }
    }

    /// The path as shown to users: `old → new` for a pair, else the path.
    pub fn label(&self) -> String {
        match &self.status {
            FileStatus::Paired { from } => format!("{from} → {}", self.path),
            _ => self.path.clone(),
        }
    }

    /// One word for the status: modified, added, deleted, unchanged or paired.
    pub fn status_word(&self) -> &'static str {
        match self.status {
            FileStatus::Modified => "modified",
            FileStatus::Added => "added",
            FileStatus::Deleted => "deleted",
            FileStatus::Unchanged => "unchanged",
            FileStatus::Paired { .. } => "paired",
        }
    }
}

/// Knobs of [`compare_snapshots`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    /// List unchanged files too (hidden by default).
    pub include_unchanged: bool,
    /// Minimum resemblance (0..=1, half name, half content) for a new file to be paired.
    pub min_pair_score: f32,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            include_unchanged: false,
            min_pair_score: 0.4,
        }
    }
}

/// Name tokens that say which framework a file is for; they differ by design in a port.
const FRAMEWORK_WORDS: &[&str] = &[
    "torch", "pytorch", "pt", "th", "jax", "flax", "linen", "nnx", "haiku", "hk", "equinox", "eqx",
    "optax", "tf",
];

/// Identifiers too common to say two files are related.
const COMMON_IDENTIFIERS: &[&str] = &[
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "None",
    "True", "False", "self", "cls", "super", "__init__", "__name__", "__main__", "print", "range",
    "len", "int", "float", "str", "list", "dict", "tuple", "torch", "jax", "jnp", "flax", "numpy",
    "optax", "nn", "np", "args", "kwargs",
];

/// At most this many bytes of a file are read for its identifiers.
const CONTENT_SAMPLE: usize = 256 * 1024;

/// Compares two snapshots: one entry per path in path order, new files paired with the
/// deleted or unchanged old file they most resemble (each old file used at most once).
pub fn compare_snapshots(old: &Snapshot, new: &Snapshot, opts: &CompareOptions) -> Vec<FileEntry> {
    let binary = |o: Option<&Vec<u8>>, n: Option<&Vec<u8>>| {
        o.is_some_and(|b| is_binary(b)) || n.is_some_and(|b| is_binary(b))
    };
    let added: Vec<&String> = new.keys().filter(|p| !old.contains_key(*p)).collect();
    let candidates: Vec<&String> = old
        .iter()
        .filter(|(p, content)| new.get(*p).is_none_or(|n| n == *content))
        .map(|(p, _)| p)
        .collect();
    let pairs = pair_files(old, new, &added, &candidates, opts.min_pair_score);
    let paired_old: BTreeSet<&str> = pairs.values().map(String::as_str).collect();

    let mut entries = Vec::new();
    for (path, content) in old {
        match new.get(path) {
            Some(n) if n == content && !opts.include_unchanged => {}
            Some(n) => entries.push(FileEntry {
                path: path.clone(),
                status: if n == content {
                    FileStatus::Unchanged
                } else {
                    FileStatus::Modified
                },
                binary: binary(Some(content), Some(n)),
            }),
            None if paired_old.contains(path.as_str()) => {}
            None => entries.push(FileEntry {
                path: path.clone(),
                status: FileStatus::Deleted,
                binary: binary(Some(content), None),
            }),
        }
    }
    for path in added {
        let status = match pairs.get(path) {
            Some(from) => FileStatus::Paired { from: from.clone() },
            None => FileStatus::Added,
        };
        let old_content = match &status {
            FileStatus::Paired { from } => old.get(from),
            _ => None,
        };
        entries.push(FileEntry {
            path: path.clone(),
            binary: binary(old_content, new.get(path)),
            status,
        });
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    entries
}

/// Greedy best-first matching of added files to candidate old files.
fn pair_files(
    old: &Snapshot,
    new: &Snapshot,
    added: &[&String],
    candidates: &[&String],
    min_score: f32,
) -> BTreeMap<String, String> {
    let profiles_old: Vec<Profile> = candidates
        .iter()
        .map(|p| Profile::new(p, old.get(*p)))
        .collect();
    let mut scored = Vec::new();
    for new_path in added {
        let profile_new = Profile::new(new_path, new.get(*new_path));
        for (old_path, profile_old) in candidates.iter().zip(&profiles_old) {
            let score = profile_old.resemblance(&profile_new);
            if score >= min_score {
                scored.push((score, *new_path, *old_path));
            }
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(b.2)));
    let mut pairs = BTreeMap::new();
    let mut used_old = BTreeSet::new();
    for (_, new_path, old_path) in scored {
        if !pairs.contains_key(new_path) && used_old.insert(old_path) {
            pairs.insert(new_path.clone(), old_path.clone());
        }
    }
    pairs
}

/// What pairing looks at in one file.
struct Profile {
    extension: String,
    name_tokens: BTreeSet<String>,
    identifiers: BTreeSet<String>,
}

impl Profile {
    fn new(path: &str, content: Option<&Vec<u8>>) -> Self {
        let p = Path::new(path);
        let extension = p
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy())
            .unwrap_or_default();
        let identifiers = match content {
            Some(bytes) if !is_binary(bytes) => identifiers(&String::from_utf8_lossy(
                &bytes[..bytes.len().min(CONTENT_SAMPLE)],
            )),
            _ => BTreeSet::new(),
        };
        Self {
            extension,
            name_tokens: name_tokens(&stem),
            identifiers,
        }
    }

    /// Half name resemblance, half shared identifiers; 0 across different extensions.
    fn resemblance(&self, other: &Profile) -> f32 {
        if self.extension != other.extension {
            return 0.0;
        }
        0.5 * jaccard(&self.name_tokens, &other.name_tokens)
            + 0.5 * jaccard(&self.identifiers, &other.identifiers)
    }
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f32 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f32 / union as f32
}

/// Lower-case words of a file stem, split at punctuation, case changes and digits,
/// without framework words: `ModelFlax_v2` → {model, v, 2} minus {flax}.
fn name_tokens(stem: &str) -> BTreeSet<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut prev: Option<char> = None;
    for c in stem.chars() {
        let boundary = match prev {
            _ if !c.is_alphanumeric() => true,
            Some(p) => {
                (p.is_lowercase() && c.is_uppercase()) || (p.is_ascii_digit() != c.is_ascii_digit())
            }
            None => false,
        };
        if boundary && !current.is_empty() {
            tokens.push(std::mem::take(&mut current));
        }
        if c.is_alphanumeric() {
            current.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
        .into_iter()
        .filter(|t| !FRAMEWORK_WORDS.contains(&t.as_str()))
        .collect()
}

/// Identifiers of at least three characters, minus keywords and framework names.
fn identifiers(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3 && !w.starts_with(|c: char| c.is_ascii_digit()))
        .filter(|w| !COMMON_IDENTIFIERS.contains(w))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TORCH_MODEL: &str = "\
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, in_features, hidden, num_classes):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def count_params(model):
    return sum(p.numel() for p in model.parameters())
";

    const FLAX_MODEL: &str = "\
import jax
import jax.numpy as jnp
import flax.linen as nn


class MLP(nn.Module):
    hidden: int
    num_classes: int

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x))
        return nn.Dense(self.num_classes)(x)


def count_params(params):
    return sum(p.size for p in jax.tree_util.tree_leaves(params))
";

    const DATA_LOADER: &str = "\
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def load_split(seed):
    digits = load_digits()
    return train_test_split(digits.data, digits.target, test_size=0.2, random_state=seed)
";

    fn snap(files: &[(&str, &str)]) -> Snapshot {
        files
            .iter()
            .map(|(p, c)| (p.to_string(), c.as_bytes().to_vec()))
            .collect()
    }

    fn statuses(entries: &[FileEntry]) -> Vec<(String, FileStatus)> {
        entries
            .iter()
            .map(|e| (e.path.clone(), e.status.clone()))
            .collect()
    }

    #[test]
    fn ported_file_is_paired_with_its_deleted_source() {
        let old = snap(&[("model.py", TORCH_MODEL), ("data.py", DATA_LOADER)]);
        let new = snap(&[("model_flax.py", FLAX_MODEL), ("data.py", DATA_LOADER)]);
        let entries = compare_snapshots(&old, &new, &CompareOptions::default());
        assert_eq!(
            statuses(&entries),
            vec![(
                "model_flax.py".to_owned(),
                FileStatus::Paired {
                    from: "model.py".to_owned()
                }
            )]
        );
        assert_eq!(entries[0].label(), "model.py → model_flax.py");
        assert_eq!(entries[0].old_path(), Some("model.py"));
    }

    #[test]
    fn new_file_may_pair_with_an_unchanged_source_that_stays_listed() {
        let old = snap(&[("model.py", TORCH_MODEL)]);
        let new = snap(&[("model.py", TORCH_MODEL), ("jax_model.py", FLAX_MODEL)]);
        let opts = CompareOptions {
            include_unchanged: true,
            ..CompareOptions::default()
        };
        assert_eq!(
            statuses(&compare_snapshots(&old, &new, &opts)),
            vec![
                (
                    "jax_model.py".to_owned(),
                    FileStatus::Paired {
                        from: "model.py".to_owned()
                    }
                ),
                ("model.py".to_owned(), FileStatus::Unchanged),
            ]
        );
    }

    #[test]
    fn unrelated_files_are_not_paired() {
        let old = snap(&[("data.py", DATA_LOADER), ("README.md", "# Digits\n")]);
        let new = snap(&[("model_flax.py", FLAX_MODEL), ("NOTES.md", "port log\n")]);
        assert_eq!(
            statuses(&compare_snapshots(&old, &new, &CompareOptions::default())),
            vec![
                ("NOTES.md".to_owned(), FileStatus::Added),
                ("README.md".to_owned(), FileStatus::Deleted),
                ("data.py".to_owned(), FileStatus::Deleted),
                ("model_flax.py".to_owned(), FileStatus::Added),
            ]
        );
    }

    #[test]
    fn modified_and_unchanged_files_and_binary_flag() {
        let old: Snapshot = [
            ("a.py".to_owned(), b"x = 1\n".to_vec()),
            ("same.py".to_owned(), b"y = 2\n".to_vec()),
            ("w.bin".to_owned(), b"\0\x01".to_vec()),
        ]
        .into();
        let mut new = old.clone();
        new.insert("a.py".to_owned(), b"x = 2\n".to_vec());
        new.insert("w.bin".to_owned(), b"\0\x02".to_vec());
        let entries = compare_snapshots(&old, &new, &CompareOptions::default());
        assert_eq!(
            statuses(&entries),
            vec![
                ("a.py".to_owned(), FileStatus::Modified),
                ("w.bin".to_owned(), FileStatus::Modified),
            ]
        );
        assert!(!entries[0].binary && entries[1].binary);
    }

    #[test]
    fn each_old_file_pairs_at_most_once() {
        let old = snap(&[("model.py", TORCH_MODEL)]);
        let new = snap(&[("model_flax.py", FLAX_MODEL), ("model_jax.py", FLAX_MODEL)]);
        let entries = compare_snapshots(&old, &new, &CompareOptions::default());
        let paired = entries
            .iter()
            .filter(|e| matches!(e.status, FileStatus::Paired { .. }))
            .count();
        assert_eq!(paired, 1);
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn name_tokens_drop_framework_words() {
        let want: BTreeSet<String> = ["model".to_owned()].into();
        assert_eq!(name_tokens("model_flax"), want);
        assert_eq!(name_tokens("JaxModel"), want);
        assert_eq!(name_tokens("torch-model"), want);
        assert_eq!(
            name_tokens("resnet50"),
            ["resnet".to_owned(), "50".to_owned()].into()
        );
    }
}

//! What the environment cache holds (`xstack env list`), removing what is unused (`xstack env
//! prune`), and how big an environment not built yet will be.
//!
//! Each environment records its packages and the tasks and sides that used it in
//! `envs/<key>/.xstack-env.json`; its last use is the time of its `.xstack-complete` marker,
//! touched at every use. Every finished build also records its size in
//! `env-history.json`, which a later estimate of the same package set reads.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::lock::FileLock;
use super::{COMPLETE_MARKER, EnvError, Side};

/// The file in an environment that records its packages and users.
pub const RECORD_FILE: &str = ".xstack-env.json";
/// The file in the cache that records the size of each package set built.
const HISTORY_FILE: &str = "env-history.json";

/// A task and side that used an environment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Usage {
    /// The task's id (None: `xstack init`, before the task has one).
    pub task: Option<String>,
    /// Which side of the task.
    pub side: Side,
}

impl Usage {
    /// The `side` of task `task`.
    pub fn of(task: &str, side: Side) -> Usage {
        Usage {
            task: Some(task.to_string()),
            side,
        }
    }
}

/// What an environment records about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvRecord {
    /// Its packages, as the task lists them.
    pub packages: Vec<String>,
    /// Who used it.
    #[serde(default)]
    pub uses: BTreeSet<Usage>,
    /// The seconds its build took.
    #[serde(default)]
    pub build_seconds: f64,
}

impl EnvRecord {
    /// The record in `env_dir`, if it has a readable one.
    pub fn read(env_dir: &Path) -> Option<EnvRecord> {
        let text = std::fs::read_to_string(env_dir.join(RECORD_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes it into `env_dir`.
    pub fn write(&self, env_dir: &Path) -> Result<(), EnvError> {
        let path = env_dir.join(RECORD_FILE);
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(&path, text).map_err(|source| EnvError::Io { path, source })
    }
}

/// Disk use (allocated blocks, as `du` counts) of the files under a folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskUse {
    /// Every file counted once.
    pub total: u64,
    /// Only the files with no link outside the folder (what removing it frees).
    pub alone: u64,
}

/// The disk use of the files under `dir`, each inode counted once; `alone` counts the inodes
/// whose every link is under `dir`.
pub fn disk_use(dir: &Path) -> DiskUse {
    let mut inodes: HashMap<(u64, u64), (u64, u64, u64)> = HashMap::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
    {
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let slot = inodes.entry((meta.dev(), meta.ino())).or_insert((
            meta.blocks() * 512,
            meta.nlink(),
            0,
        ));
        slot.2 += 1;
    }
    let mut used = DiskUse::default();
    for (bytes, links, seen) in inodes.into_values() {
        used.total += bytes;
        if seen >= links {
            used.alone += bytes;
        }
    }
    used
}

/// `412 MB`, `5.6 GB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if value < 10.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// One cached environment.
#[derive(Debug, Clone)]
pub struct CachedEnv {
    /// Its key (its folder's name).
    pub key: String,
    /// Its folder.
    pub dir: PathBuf,
    /// Its record (empty for an environment whose build never finished).
    pub record: EnvRecord,
    /// Whether its build finished.
    pub complete: bool,
    /// When it was last used (its build finished, or a run took it).
    pub last_used: Option<SystemTime>,
}

impl CachedEnv {
    /// The sides it served, `target`, `reference` or `target+reference`; `?` when unknown.
    pub fn sides(&self) -> String {
        let sides: BTreeSet<&str> = self.record.uses.iter().map(|u| u.side.name()).collect();
        if sides.is_empty() {
            "?".to_string()
        } else {
            sides.into_iter().collect::<Vec<_>>().join("+")
        }
    }

    /// The tasks that used it, by id.
    pub fn tasks(&self) -> Vec<String> {
        let tasks: BTreeSet<String> = self
            .record
            .uses
            .iter()
            .map(|u| u.task.clone().unwrap_or_else(|| "(init)".to_string()))
            .collect();
        tasks.into_iter().collect()
    }
}

/// Every environment folder in `cache`, by key.
pub fn list(cache: &Path) -> Vec<CachedEnv> {
    let Ok(entries) = std::fs::read_dir(cache.join("envs")) else {
        return Vec::new();
    };
    let mut found: Vec<CachedEnv> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| {
            let dir = e.path();
            let marker = dir.join(COMPLETE_MARKER);
            let last_used = marker
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .or_else(|| dir.metadata().and_then(|m| m.modified()).ok());
            // An environment built before records were kept: its marker lists its packages.
            let record = EnvRecord::read(&dir).unwrap_or_else(|| EnvRecord {
                packages: std::fs::read_to_string(&marker)
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
                ..EnvRecord::default()
            });
            CachedEnv {
                key: e.file_name().to_string_lossy().into_owned(),
                record,
                complete: marker.is_file(),
                last_used,
                dir,
            }
        })
        .collect();
    found.sort_by(|a, b| a.key.cmp(&b.key));
    found
}

/// What `prune` did with one environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pruned {
    /// Removed.
    Removed,
    /// Kept: a running process holds it, or builds it.
    InUse,
    /// Kept: used within the period.
    Recent,
}

/// What `prune` did.
#[derive(Debug, Default)]
pub struct PruneReport {
    /// Each environment and what happened to it.
    pub envs: Vec<(CachedEnv, Pruned)>,
    /// Whether the package store was removed.
    pub store_removed: bool,
    /// The bytes freed (the cache's disk use before less after).
    pub freed: u64,
}

/// Removes the environments of `cache` unused for `unused_for` (all of them and the package
/// store when `all`), never one a running process holds or builds.
pub fn prune(cache: &Path, unused_for: Duration, all: bool) -> Result<PruneReport, EnvError> {
    let before = disk_use(cache).total;
    let now = SystemTime::now();
    let mut report = PruneReport::default();
    for env in list(cache) {
        let stale = all
            || env
                .last_used
                .is_none_or(|t| now.duration_since(t).unwrap_or_default() >= unused_for);
        if !stale {
            report.envs.push((env, Pruned::Recent));
            continue;
        }
        let outcome = remove_unless_held(cache, &env)?;
        report.envs.push((env, outcome));
    }
    if all && report.envs.iter().all(|(_, p)| *p == Pruned::Removed) {
        let store = cache.join(super::uv::STORE_DIR);
        if store.exists() {
            make_writable(&store);
            std::fs::remove_dir_all(&store).map_err(|source| EnvError::Io {
                path: store.clone(),
                source,
            })?;
            report.store_removed = true;
        }
    }
    report.freed = before.saturating_sub(disk_use(cache).total);
    Ok(report)
}

/// Removes `env` with its lock and log files unless a process holds its use lock or its
/// build lock.
fn remove_unless_held(cache: &Path, env: &CachedEnv) -> Result<Pruned, EnvError> {
    let envs = cache.join("envs");
    let open = |name: String| {
        let path = envs.join(name);
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| EnvError::Io { path, source })
    };
    let build = open(format!("{}.lock", env.key))?;
    let Some(_building) = FileLock::try_exclusive(&build) else {
        return Ok(Pruned::InUse);
    };
    let used = open(format!("{}.use", env.key))?;
    let Some(_using) = FileLock::try_exclusive(&used) else {
        return Ok(Pruned::InUse);
    };
    make_writable(&env.dir);
    std::fs::remove_dir_all(&env.dir).map_err(|source| EnvError::Io {
        path: env.dir.clone(),
        source,
    })?;
    for ext in ["log", "use", "lock"] {
        let _ = std::fs::remove_file(envs.join(format!("{}.{ext}", env.key)));
    }
    Ok(Pruned::Removed)
}

/// Makes the folders under `dir` writable, so read-only folders (uv's store makes some)
/// can be emptied.
fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
    {
        if let Ok(meta) = entry.metadata() {
            let mode = meta.permissions().mode();
            if mode & 0o700 != 0o700 {
                let _ = std::fs::set_permissions(
                    entry.path(),
                    std::fs::Permissions::from_mode(mode | 0o700),
                );
            }
        }
    }
}

/// A past build of a package set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct PastBuild {
    packages: Vec<String>,
    bytes: u64,
    seconds: f64,
}

/// Records the size and build time of the environment `key` in the cache's history.
pub fn remember(cache: &Path, key: &str, packages: &[String], bytes: u64, seconds: f64) {
    let path = cache.join(HISTORY_FILE);
    let mut history: BTreeMap<String, PastBuild> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    history.insert(
        key.to_string(),
        PastBuild {
            packages: packages.to_vec(),
            bytes,
            seconds,
        },
    );
    let tmp = path.with_extension(format!("json.{}", std::process::id()));
    let written = std::fs::write(
        &tmp,
        serde_json::to_string_pretty(&history).unwrap_or_default(),
    )
    .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        tracing::warn!(
            "cannot record the environment's size in {}: {e}",
            path.display()
        );
    }
}

/// Rough sizes of an environment's packages when no build of the same set was recorded
/// (docs/PERFORMANCE.md): PyTorch from PyPI on Linux with its CUDA libraries, jax with
/// jaxlib, and any other package.
const ROUGH_BYTES: &[(&str, u64)] = &[
    ("torch", 5_600_000_000),
    ("tensorflow", 2_000_000_000),
    ("jax", 300_000_000),
];
/// The rough size of a package not in [`ROUGH_BYTES`].
const ROUGH_OTHER_BYTES: u64 = 60_000_000;
/// The rough size of an empty virtualenv.
const ROUGH_VENV_BYTES: u64 = 30_000_000;

/// How big an environment not built yet will be, and where the figure comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The bytes.
    pub bytes: u64,
    /// Whether it comes from an earlier build of the same package set (else a rough figure).
    pub from_history: bool,
}

impl std::fmt::Display for Estimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let from = if self.from_history {
            "as its last build"
        } else {
            "a rough figure"
        };
        write!(
            f,
            "about {} ({from}; less what the package store already holds)",
            human_bytes(self.bytes)
        )
    }
}

/// The estimated size of the environment `key` of `packages`.
pub fn estimate(cache: &Path, key: &str, packages: &[String]) -> Estimate {
    let history: BTreeMap<String, PastBuild> = std::fs::read_to_string(cache.join(HISTORY_FILE))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if let Some(past) = history.get(key) {
        return Estimate {
            bytes: past.bytes,
            from_history: true,
        };
    }
    let bytes = packages
        .iter()
        .map(|p| {
            let name = p
                .split(|c: char| "[<>=!~; @".contains(c))
                .next()
                .unwrap_or_default()
                .trim()
                .to_lowercase();
            ROUGH_BYTES
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(ROUGH_OTHER_BYTES, |(_, b)| *b)
        })
        .sum::<u64>()
        + ROUGH_VENV_BYTES;
    Estimate {
        bytes,
        from_history: false,
    }
}

/// One line for each environment a run of `task` will build first (the target one, and the
/// reference one when the task has a parity probe), with its estimated size.
pub fn to_build(cache: &Path, task: &crate::task::Task) -> Vec<String> {
    let env = &task.spec.env;
    let mut sides = vec![(Side::Target, &env.packages)];
    if task.spec.parity.is_some() {
        sides.push((Side::Reference, &env.reference_packages));
    }
    sides
        .into_iter()
        .filter(|(_, packages)| !packages.is_empty() && !super::is_cached(cache, packages))
        .map(|(side, packages)| {
            format!(
                "the {} environment of {} [{}] will be built first: {}",
                side.name(),
                task.spec.id,
                packages.join(" "),
                estimate(cache, &super::env_key(packages), packages)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file linked from outside the folder is counted in its total but not as its own.
    #[test]
    fn disk_use_counts_a_file_linked_elsewhere_as_not_held_alone() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("env");
        let store = dir.path().join("store");
        std::fs::create_dir_all(&env).unwrap();
        std::fs::create_dir_all(&store).unwrap();
        std::fs::write(store.join("shared"), vec![1u8; 64 * 1024]).unwrap();
        std::fs::hard_link(store.join("shared"), env.join("shared")).unwrap();
        std::fs::write(env.join("own"), vec![2u8; 32 * 1024]).unwrap();
        std::fs::hard_link(env.join("own"), env.join("own-again")).unwrap();
        let used = disk_use(&env);
        assert!(used.total >= 96 * 1024, "{used:?}");
        assert!(
            used.alone >= 32 * 1024 && used.alone < 64 * 1024,
            "{used:?}"
        );
    }

    #[test]
    fn an_estimate_prefers_the_last_build_of_the_same_set() {
        let dir = tempfile::tempdir().unwrap();
        let packages = vec!["torch".to_string(), "numpy".to_string()];
        let rough = estimate(dir.path(), "k1", &packages);
        assert!(!rough.from_history);
        assert_eq!(rough.bytes, 5_600_000_000 + 60_000_000 + 30_000_000);
        assert!(rough.to_string().contains("rough figure"), "{rough}");
        remember(dir.path(), "k1", &packages, 5_400_000_000, 70.0);
        let known = estimate(dir.path(), "k1", &packages);
        assert_eq!(known.bytes, 5_400_000_000);
        assert!(
            known
                .to_string()
                .starts_with("about 5.4 GB (as its last build")
        );
    }

    /// An environment built before records were kept is listed with the packages its marker
    /// names, its side and tasks unknown.
    #[test]
    fn an_environment_without_a_record_is_listed_from_its_marker() {
        let dir = tempfile::tempdir().unwrap();
        let env = dir.path().join("envs").join("0fd37f1336b7b1af");
        std::fs::create_dir_all(&env).unwrap();
        std::fs::write(env.join(COMPLETE_MARKER), "torch numpy\n").unwrap();
        let listed = list(dir.path());
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].record.packages, vec!["torch", "numpy"]);
        assert!(listed[0].complete);
        assert_eq!(
            (listed[0].sides(), listed[0].tasks()),
            ("?".to_string(), Vec::new())
        );
    }

    #[test]
    fn human_bytes_reads_like_du() {
        assert_eq!(human_bytes(412_300_000), "412 MB");
        assert_eq!(human_bytes(5_612_000_000), "5.6 GB");
        assert_eq!(human_bytes(2_000), "2.0 kB");
    }
}

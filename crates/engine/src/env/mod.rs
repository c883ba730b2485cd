//! Cached Python environments (SPEC §1, §2): one virtualenv per package list under the cache
//! folder, built once with uv (from PATH, else brought by xstack itself: [`uv`]), else
//! `python3 -m venv` and pip, and put first on PATH for every command that runs Python code.
//! Their package files are hardlinks into one package store (uv's cache, `CACHE/uv-cache`), so
//! environments share what they hold in common. Each holds xstack's notebook runner
//! ([`crate::notebook`]). [`store`] lists and prunes them.

pub mod index;
mod lock;
pub mod store;
pub mod uv;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use lock::FileLock;
use store::{EnvRecord, Usage};

/// Marker written last into a finished environment; its time is the environment's last use.
const COMPLETE_MARKER: &str = ".xstack-complete";

/// Which of a task's two environments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The port's (`[env].packages`).
    Target,
    /// The source's (`[env].reference_packages`).
    Reference,
}

impl Side {
    /// `target` or `reference`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Target => "target",
            Side::Reference => "reference",
        }
    }
}

/// Environment build errors (an infrastructure failure: exit 3).
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// A build step failed; `tail` holds the last lines of its output.
    #[error("building the Python environment [{packages}] failed at `{step}`:\n{tail}\n(full log: {})", log.display())]
    Build {
        /// The packages.
        packages: String,
        /// The step that failed.
        step: String,
        /// Its last output lines.
        tail: String,
        /// The build log.
        log: PathBuf,
    },
    /// A file operation on the cache failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The cache folder: `$XSTACK_CACHE_DIR`, else `$XDG_CACHE_HOME/xstack`, else `~/.cache/xstack`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XSTACK_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("xstack");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".cache").join("xstack")
}

/// A ready virtualenv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonEnv {
    /// The virtualenv folder.
    pub dir: PathBuf,
}

impl PythonEnv {
    /// The `bin` folder to put first on PATH.
    pub fn bin(&self) -> PathBuf {
        self.dir.join("bin")
    }

    /// The variables that activate it: PATH with `bin` first, and VIRTUAL_ENV.
    pub fn vars(&self) -> Vec<(String, String)> {
        let path = std::env::var("PATH").unwrap_or_default();
        vec![
            (
                "PATH".to_string(),
                format!("{}:{path}", self.bin().display()),
            ),
            ("VIRTUAL_ENV".to_string(), self.dir.display().to_string()),
        ]
    }

    /// A bash start-up file (for `BASH_ENV`) that puts this environment first on `PATH` again
    /// and names it in `VIRTUAL_ENV`, after running `outer` (a `BASH_ENV` the caller already
    /// had). Bash reads `BASH_ENV` in every non-interactive shell, a login shell's included,
    /// after the login files, so a command an agent's CLI runs in `bash -lc` finds the
    /// environment's `python` even where `/etc/profile` reset `PATH`. It prints nothing.
    pub fn bash_env(&self, outer: Option<&str>) -> String {
        let bin = shell_words::quote(&self.bin().display().to_string()).into_owned();
        let dir = shell_words::quote(&self.dir.display().to_string()).into_owned();
        let mut text = String::from(
            "# Written by xstack: the task's Python environment first on PATH in every bash the\n\
             # agent starts, whatever its login files did to PATH.\n",
        );
        if let Some(outer) = outer.filter(|o| !o.is_empty()) {
            let outer = shell_words::quote(outer);
            text.push_str(&format!("if [ -r {outer} ]; then . {outer}; fi\n"));
        }
        text.push_str(&format!(
            "case \"$PATH\" in {bin}:*) ;; *) PATH={bin}:\"$PATH\" ;; esac\n\
             export PATH\nexport VIRTUAL_ENV={dir}\n"
        ));
        text
    }

    /// The installed versions of `packages` (their names without extras or version
    /// specifiers), as `torch 2.15.0, numpy 2.4.6`; a package the environment lacks is left
    /// out, and an environment whose Python cannot be run gives an empty text.
    pub fn package_versions(&self, packages: &[String]) -> String {
        let names: Vec<&str> = packages
            .iter()
            .map(|p| {
                p.split(|c: char| "[<>=!~; ".contains(c))
                    .next()
                    .unwrap_or_default()
            })
            .filter(|n| !n.is_empty())
            .collect();
        let script = "import sys, importlib.metadata as m\nfor n in sys.argv[1:]:\n    try:\n        print(n, m.version(n))\n    except m.PackageNotFoundError:\n        pass\n";
        let out = std::process::Command::new(self.bin().join("python"))
            .arg("-c")
            .arg(script)
            .args(&names)
            .stdin(std::process::Stdio::null())
            .output();
        match out {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(", "),
            _ => String::new(),
        }
    }
}

/// Every `lib/python*/site-packages` folder of the virtualenv at `env_dir` (where xstack
/// installs its audit and its notebook runner).
pub fn site_packages(env_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(env_dir.join("lib"))?.filter_map(Result::ok) {
        let site = entry.path().join("site-packages");
        if entry.file_name().to_string_lossy().starts_with("python") && site.is_dir() {
            found.push(site);
        }
    }
    Ok(found)
}

/// The cache key of a package list: order and duplicates do not matter; a package index
/// configured for the list's framework ([`index`]) is part of it.
pub fn env_key(packages: &[String]) -> String {
    key_with_index(packages, &index::index_args(packages))
}

/// The cache key of a package list installed with the index arguments `index`.
fn key_with_index(packages: &[String], index: &[String]) -> String {
    let mut sorted: Vec<&str> = packages.iter().map(|p| p.trim()).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut hasher = Sha256::new();
    hasher.update(b"xstack-env-v1\n");
    for p in sorted {
        hasher.update(p.as_bytes());
        hasher.update(b"\n");
    }
    if !index.is_empty() {
        hasher.update(b"index\n");
        for arg in index {
            hasher.update(arg.as_bytes());
            hasher.update(b"\n");
        }
    }
    let digest = hasher.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Where the environment of `packages` lives in `cache`.
pub fn env_dir(cache: &Path, packages: &[String]) -> PathBuf {
    cache.join("envs").join(env_key(packages))
}

/// Whether the environment of `packages` is already built.
pub fn is_cached(cache: &Path, packages: &[String]) -> bool {
    env_dir(cache, packages).join(COMPLETE_MARKER).is_file()
}

/// Returns the environment of `packages`, building it first when it is not cached; None for
/// an empty list. The environment is recorded as used by `usage` now, and held (against
/// `xstack env prune`) until this process exits. `progress` receives one line per step.
pub fn ensure(
    cache: &Path,
    packages: &[String],
    usage: &Usage,
    progress: &mut dyn FnMut(String),
) -> Result<Option<PythonEnv>, EnvError> {
    if packages.is_empty() {
        return Ok(None);
    }
    let index = index::index_args(packages);
    let key = key_with_index(packages, &index);
    let dir = cache.join("envs").join(&key);
    let env = PythonEnv { dir: dir.clone() };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EnvError::Io { path, source }
    };
    std::fs::create_dir_all(cache.join("envs")).map_err(io(cache))?;
    let lock_path = dir.with_extension("lock");
    let lock = std::fs::File::create(&lock_path).map_err(io(&lock_path))?;
    let _guard = FileLock::exclusive(&lock);
    let use_path = dir.with_extension("use");
    lock::hold_in_use(&use_path).map_err(io(&use_path))?;
    if dir.join(COMPLETE_MARKER).is_file() {
        progress(format!("using cached environment {}", dir.display()));
        install_runner(&env)?;
        record_use(&dir, packages, usage, None)?;
        return Ok(Some(env));
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
    }
    let started = Instant::now();
    let installer = uv::installer(cache, progress);
    let list = packages.join(" ");
    progress(format!(
        "building environment [{list}] in {}",
        dir.display()
    ));
    let steps = uv::build_steps(&installer, cache, &dir, packages, &index);
    let log_path = dir.with_extension("log");
    run_steps(&steps, &dir, &log_path, &list, progress)?;
    install_runner(&env)?;
    let seconds = started.elapsed().as_secs_f64();
    record_use(&dir, packages, usage, Some(seconds))?;
    let marker = dir.join(COMPLETE_MARKER);
    std::fs::write(&marker, format!("{list}\n")).map_err(io(&marker))?;
    store::remember(cache, &key, packages, store::disk_use(&dir).total, seconds);
    progress(format!("environment ready: {}", dir.display()));
    Ok(Some(env))
}

/// Records in the environment `dir` that `usage` used it now (its marker's time), and, for a
/// new build, its packages and build time.
fn record_use(
    dir: &Path,
    packages: &[String],
    usage: &Usage,
    built_in: Option<f64>,
) -> Result<(), EnvError> {
    let mut record = match built_in {
        Some(seconds) => EnvRecord {
            packages: packages.to_vec(),
            uses: Default::default(),
            build_seconds: seconds,
        },
        None => EnvRecord::read(dir).unwrap_or_else(|| EnvRecord {
            packages: packages.to_vec(),
            ..EnvRecord::default()
        }),
    };
    if record.uses.insert(usage.clone()) || built_in.is_some() {
        record.write(dir)?;
    }
    let marker = dir.join(COMPLETE_MARKER);
    if let Ok(file) = std::fs::File::options().write(true).open(&marker)
        && let Err(e) = file.set_modified(std::time::SystemTime::now())
    {
        tracing::warn!("cannot mark {} as used: {e}", dir.display());
    }
    Ok(())
}

/// Runs the build `steps` of the environment `dir`, logging their output to `log_path`; on a
/// failure removes `dir` and says which step failed with its last lines.
fn run_steps(
    steps: &[Vec<String>],
    dir: &Path,
    log_path: &Path,
    list: &str,
    progress: &mut dyn FnMut(String),
) -> Result<(), EnvError> {
    let mut log = std::fs::File::create(log_path).map_err(|source| EnvError::Io {
        path: log_path.to_path_buf(),
        source,
    })?;
    for step in steps {
        progress(format!("$ {}", step.join(" ")));
        let _ = writeln!(log, "$ {}", step.join(" "));
        let output = Command::new(&step[0])
            .args(&step[1..])
            .stdin(Stdio::null())
            .output();
        let failure = match output {
            Ok(out) => {
                if let Err(e) = log
                    .write_all(&out.stdout)
                    .and_then(|()| log.write_all(&out.stderr))
                {
                    tracing::warn!("cannot write the environment's build log: {e}");
                }
                if out.status.success() {
                    None
                } else {
                    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
                    text.push_str(&String::from_utf8_lossy(&out.stderr));
                    Some(text)
                }
            }
            Err(e) => Some(format!("cannot run `{}`: {e}", step[0])),
        };
        if let Some(text) = failure {
            let _ = std::fs::remove_dir_all(dir);
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(20)..].join("\n");
            return Err(EnvError::Build {
                packages: list.to_string(),
                step: step.join(" "),
                tail,
                log: log_path.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Installs (or refreshes) xstack's notebook runner in `env`, so a notebook task runs in it
/// whichever package list built it.
fn install_runner(env: &PythonEnv) -> Result<(), EnvError> {
    let sites = site_packages(&env.dir).map_err(|source| EnvError::Io {
        path: env.dir.join("lib"),
        source,
    })?;
    crate::notebook::install(&sites).map_err(|e| EnvError::Io {
        path: e.path,
        source: e.source,
    })
}

/// The full path of `program` on PATH, if it is there.
pub fn which(program: &str) -> Option<PathBuf> {
    which_in(program, &std::env::var("PATH").unwrap_or_default())
}

/// The full path of `program` on the given PATH string (a name with a `/` is checked as is).
pub fn which_in(program: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage() -> Usage {
        Usage {
            task: Some("t".into()),
            side: Side::Target,
        }
    }

    /// A login shell whose profile resets `PATH` (Debian's `/etc/profile` does for root)
    /// still finds the environment's `python` through the `BASH_ENV` file, and so does a
    /// plain `bash -c`; an outer `BASH_ENV` still runs.
    #[test]
    fn the_bash_env_file_puts_the_environment_first_after_a_login_shell_reset_path() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let env = PythonEnv {
            dir: dir.path().join("my env"),
        };
        std::fs::create_dir_all(env.bin()).unwrap();
        let python = env.bin().join("python");
        std::fs::write(&python, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        // The login shell's own profile, as /etc/profile does: PATH from scratch.
        std::fs::write(home.join(".bash_profile"), "PATH=/usr/bin:/bin\n").unwrap();
        let outer = dir.path().join("outer.sh");
        std::fs::write(&outer, "export OUTER_RAN=yes\n").unwrap();
        let file = dir.path().join("bash_env.sh");
        std::fs::write(&file, env.bash_env(Some(&outer.display().to_string()))).unwrap();
        for login in [true, false] {
            let out = Command::new("bash")
                .args(if login { ["-lc"] } else { ["-c"] })
                .arg("command -v python; echo \"$VIRTUAL_ENV $OUTER_RAN\"")
                .env_clear()
                .env("HOME", &home)
                .env("PATH", "/usr/bin:/bin")
                .env("BASH_ENV", &file)
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                format!("{}\n{} yes\n", python.display(), env.dir.display()),
                "login: {login}; {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    #[test]
    fn key_ignores_order_and_duplicates() {
        let a = env_key(&["jax".into(), "numpy".into()]);
        let b = env_key(&["numpy".into(), "jax".into(), "jax".into()]);
        let c = env_key(&["numpy".into()]);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// A package index is part of the key (a CPU build of torch is another environment), and
    /// without one the key is what it always was, so existing caches stay valid.
    #[test]
    fn an_index_changes_the_key_and_no_index_keeps_it() {
        let packages = vec!["torch".to_string(), "numpy".to_string()];
        assert_eq!(key_with_index(&packages, &[]), "0fd37f1336b7b1af");
        let cpu = key_with_index(
            &packages,
            &[
                "--extra-index-url".into(),
                "https://download.pytorch.org/whl/cpu".into(),
            ],
        );
        assert_ne!(cpu, key_with_index(&packages, &[]));
    }

    #[test]
    fn empty_package_list_needs_no_environment() {
        let dir = tempfile::tempdir().unwrap();
        let env = ensure(dir.path(), &[], &usage(), &mut |_| {}).unwrap();
        assert!(env.is_none());
        assert!(!dir.path().join("envs").exists());
    }

    #[test]
    fn failed_build_reports_the_step_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let packages = vec!["xstack-no-such-package-zzz==0.0.0".to_string()];
        let err = ensure(dir.path(), &packages, &usage(), &mut |_| {}).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("install"), "{text}");
        assert!(text.contains("xstack-no-such-package-zzz"), "{text}");
        assert!(!env_dir(dir.path(), &packages).exists());
        assert!(!is_cached(dir.path(), &packages));
    }
}

//! Cached Python environments (SPEC §1, §2): one virtualenv per package list under the cache
//! folder, built once with `uv` when it is on PATH, else `python3 -m venv` and pip, and put
//! first on PATH for every command that runs Python code. Each holds xstack's notebook
//! runner ([`crate::notebook`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

/// Marker written last into a finished environment.
const COMPLETE_MARKER: &str = ".xstack-complete";

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

/// The cache key of a package list: order and duplicates do not matter.
pub fn env_key(packages: &[String]) -> String {
    let mut sorted: Vec<&str> = packages.iter().map(|p| p.trim()).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut hasher = Sha256::new();
    hasher.update(b"xstack-env-v1\n");
    for p in sorted {
        hasher.update(p.as_bytes());
        hasher.update(b"\n");
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
/// an empty list. `progress` receives one line per step.
pub fn ensure(
    cache: &Path,
    packages: &[String],
    progress: &mut dyn FnMut(String),
) -> Result<Option<PythonEnv>, EnvError> {
    if packages.is_empty() {
        return Ok(None);
    }
    let dir = env_dir(cache, packages);
    let env = PythonEnv { dir: dir.clone() };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| EnvError::Io { path, source }
    };
    std::fs::create_dir_all(cache.join("envs")).map_err(io(cache))?;
    let lock_path = dir.with_extension("lock");
    let lock = std::fs::File::create(&lock_path).map_err(io(&lock_path))?;
    let _guard = FileLock::acquire(&lock);
    if dir.join(COMPLETE_MARKER).is_file() {
        progress(format!("using cached environment {}", dir.display()));
        install_runner(&env)?;
        return Ok(Some(env));
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
    }
    let log_path = dir.with_extension("log");
    let list = packages.join(" ");
    progress(format!(
        "building environment [{list}] in {}",
        dir.display()
    ));
    let uv = which("uv");
    let dir_s = dir.display().to_string();
    let python = dir.join("bin").join("python").display().to_string();
    let mut steps: Vec<Vec<String>> = Vec::new();
    match &uv {
        Some(uv) => {
            let uv = uv.display().to_string();
            steps.push(vec![
                uv.clone(),
                "venv".into(),
                "--quiet".into(),
                dir_s.clone(),
            ]);
            let mut install = vec![
                uv,
                "pip".into(),
                "install".into(),
                "--python".into(),
                python,
            ];
            install.extend(packages.iter().cloned());
            steps.push(install);
        }
        None => {
            steps.push(vec![
                "python3".into(),
                "-m".into(),
                "venv".into(),
                dir_s.clone(),
            ]);
            let mut install = vec![python, "-m".into(), "pip".into(), "install".into()];
            install.extend(packages.iter().cloned());
            steps.push(install);
        }
    }
    let mut log = std::fs::File::create(&log_path).map_err(io(&log_path))?;
    for step in &steps {
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
            let _ = std::fs::remove_dir_all(&dir);
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(20)..].join("\n");
            return Err(EnvError::Build {
                packages: list,
                step: step.join(" "),
                tail,
                log: log_path,
            });
        }
    }
    install_runner(&env)?;
    let marker = dir.join(COMPLETE_MARKER);
    std::fs::write(&marker, format!("{list}\n")).map_err(io(&marker))?;
    progress(format!("environment ready: {}", dir.display()));
    Ok(Some(env))
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

/// An exclusive advisory lock held until dropped.
struct FileLock<'a> {
    file: &'a std::fs::File,
}

impl<'a> FileLock<'a> {
    fn acquire(file: &'a std::fs::File) -> FileLock<'a> {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a valid open descriptor has no memory-safety preconditions.
        unsafe {
            libc::flock(file.as_raw_fd(), libc::LOCK_EX);
        }
        FileLock { file }
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: as above.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn empty_package_list_needs_no_environment() {
        let dir = tempfile::tempdir().unwrap();
        let env = ensure(dir.path(), &[], &mut |_| {}).unwrap();
        assert!(env.is_none());
        assert!(!dir.path().join("envs").exists());
    }

    #[test]
    fn failed_build_reports_the_step_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let packages = vec!["xstack-no-such-package-zzz==0.0.0".to_string()];
        let err = ensure(dir.path(), &packages, &mut |_| {}).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("install"), "{text}");
        assert!(text.contains("xstack-no-such-package-zzz"), "{text}");
        assert!(!env_dir(dir.path(), &packages).exists());
        assert!(!is_cached(dir.path(), &packages));
    }
}

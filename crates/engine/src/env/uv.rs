//! The installer that builds environments: `uv` from `PATH`, else the `uv` xstack brings
//! itself from PyPI once into `CACHE/uv` (a small virtualenv holding the pinned `uv` wheel),
//! else `python3 -m venv` and pip when that bootstrap cannot run. Environments are installed
//! with uv's package cache in `CACHE/uv-cache` (the package store) and hardlinked from it, so
//! environments holding the same package files share them on disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};

use super::lock::FileLock;

/// The uv release xstack bootstraps (and `scripts/setup` installs): a wheel on PyPI.
pub const UV_VERSION: &str = "0.13.9";
/// The folder under the cache of the bootstrapped uv.
pub const BOOTSTRAP_DIR: &str = "uv";
/// The folder under the cache of uv's package cache: the files environments link to.
pub const STORE_DIR: &str = "uv-cache";
/// Marker written last into a finished bootstrap.
const BOOTSTRAP_MARKER: &str = ".xstack-complete";

/// How environments are built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installer {
    /// With this `uv` program.
    Uv(PathBuf),
    /// With `python3 -m venv` and pip, for this reason (uv could not be had).
    Pip {
        /// Why not uv.
        reason: String,
    },
}

/// The installer chosen per cache folder in this process: the bootstrap runs (and a failure
/// is said) once.
static CHOSEN: Mutex<BTreeMap<PathBuf, Installer>> = Mutex::new(BTreeMap::new());

fn chosen() -> MutexGuard<'static, BTreeMap<PathBuf, Installer>> {
    CHOSEN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The installer for environments in `cache`: `uv` on `PATH`, else the bootstrapped one
/// (brought from PyPI the first time, said in one line), else pip (said once, with the
/// reason).
pub fn installer(cache: &Path, progress: &mut dyn FnMut(String)) -> Installer {
    if let Some(uv) = super::which("uv") {
        return Installer::Uv(uv);
    }
    let mut chosen = chosen();
    if let Some(found) = chosen.get(cache) {
        // A bootstrapped uv removed since (a pruned cache) is brought again.
        if !matches!(found, Installer::Uv(p) if !p.is_file()) {
            return found.clone();
        }
    }
    let found = match bootstrap(cache, progress) {
        Ok(uv) => Installer::Uv(uv),
        Err(reason) => {
            progress(format!(
                "uv is not on PATH and cannot be installed ({reason}): building environments with python3 -m venv and pip"
            ));
            Installer::Pip { reason }
        }
    };
    chosen.insert(cache.to_path_buf(), found.clone());
    found
}

/// The bootstrapped uv of `cache`, installed first when it is not there yet.
fn bootstrap(cache: &Path, progress: &mut dyn FnMut(String)) -> Result<PathBuf, String> {
    let dir = cache.join(BOOTSTRAP_DIR);
    let uv = dir.join("bin").join("uv");
    std::fs::create_dir_all(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let lock_path = cache.join("uv.lock");
    let lock_file =
        std::fs::File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    let _guard = FileLock::exclusive(&lock_file);
    if dir.join(BOOTSTRAP_MARKER).is_file() && uv.is_file() {
        return Ok(uv);
    }
    progress(format!(
        "uv is not on PATH: installing uv {UV_VERSION} from PyPI into {} (once)",
        dir.display()
    ));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let python = dir.join("bin").join("python");
    let steps: [Vec<String>; 3] = [
        vec![
            "python3".into(),
            "-m".into(),
            "venv".into(),
            dir.display().to_string(),
        ],
        vec![
            python.display().to_string(),
            "-m".into(),
            "pip".into(),
            "install".into(),
            "--quiet".into(),
            "--disable-pip-version-check".into(),
            format!("uv=={UV_VERSION}"),
        ],
        vec![uv.display().to_string(), "--version".into()],
    ];
    for step in &steps {
        let output = Command::new(&step[0])
            .args(&step[1..])
            .stdin(Stdio::null())
            .output();
        let failure = match output {
            Ok(out) if out.status.success() => None,
            Ok(out) => {
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                let last = text
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("no output")
                    .trim()
                    .to_string();
                Some(format!("`{}` failed: {last}", step.join(" ")))
            }
            Err(e) => Some(format!("cannot run `{}`: {e}", step[0])),
        };
        if let Some(reason) = failure {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(reason);
        }
    }
    let marker = dir.join(BOOTSTRAP_MARKER);
    std::fs::write(&marker, format!("uv {UV_VERSION}\n"))
        .map_err(|e| format!("{}: {e}", marker.display()))?;
    Ok(uv)
}

/// uv's link mode on this system: copy-on-write clones on macOS, hardlinks elsewhere (uv
/// copies instead, and says so, where the package store is on another file system).
pub fn link_mode() -> &'static str {
    if cfg!(target_os = "macos") {
        "clone"
    } else {
        "hardlink"
    }
}

/// The commands that build the environment `dir` holding `packages` with `installer`,
/// its package store in `cache`, with `index` (the package index arguments, see
/// [`super::index`]) before the packages.
pub fn build_steps(
    installer: &Installer,
    cache: &Path,
    dir: &Path,
    packages: &[String],
    index: &[String],
) -> Vec<Vec<String>> {
    let dir_s = dir.display().to_string();
    let python = dir.join("bin").join("python").display().to_string();
    match installer {
        Installer::Uv(uv) => {
            let uv = uv.display().to_string();
            let store = cache.join(STORE_DIR).display().to_string();
            let venv = vec![
                uv.clone(),
                "venv".into(),
                "--quiet".into(),
                "--cache-dir".into(),
                store.clone(),
                dir_s,
            ];
            let mut install = vec![
                uv,
                "pip".into(),
                "install".into(),
                "--cache-dir".into(),
                store,
                "--link-mode".into(),
                link_mode().into(),
                "--python".into(),
                python,
            ];
            install.extend(index.iter().cloned());
            install.extend(packages.iter().cloned());
            vec![venv, install]
        }
        Installer::Pip { .. } => {
            let venv = vec!["python3".into(), "-m".into(), "venv".into(), dir_s];
            let mut install = vec![python, "-m".into(), "pip".into(), "install".into()];
            install.extend(index.iter().cloned());
            install.extend(packages.iter().cloned());
            vec![venv, install]
        }
    }
}

/// The lines of a bash script that set `UV` to a uv program on a remote machine whose runner
/// folder is `$B`: uv on its `PATH`, else `$B/uv/bin/uv`, bootstrapped from PyPI there the
/// first time (one line says so); `UV` stays empty, and one line says why, when the bootstrap
/// cannot run.
pub fn remote_bootstrap_lines() -> String {
    format!(
        r#"UV=$(command -v uv 2>/dev/null || true)
if [ -z "$UV" ]; then
  exec 8>"$B/uv.lock"
  if command -v flock >/dev/null 2>&1; then flock 8; fi
  if [ -f "$B/{BOOTSTRAP_DIR}/{BOOTSTRAP_MARKER}" ] && [ -x "$B/{BOOTSTRAP_DIR}/bin/uv" ]; then
    UV="$B/{BOOTSTRAP_DIR}/bin/uv"
  else
    echo "uv is not on PATH on $(hostname): installing uv {UV_VERSION} from PyPI into $B/{BOOTSTRAP_DIR} (once)"
    rm -rf "$B/{BOOTSTRAP_DIR}"
    if R=$(python3 -m venv "$B/{BOOTSTRAP_DIR}" 2>&1 && "$B/{BOOTSTRAP_DIR}/bin/python" -m pip install --quiet --disable-pip-version-check uv=={UV_VERSION} 2>&1 && "$B/{BOOTSTRAP_DIR}/bin/uv" --version 2>&1); then
      echo "uv {UV_VERSION}" > "$B/{BOOTSTRAP_DIR}/{BOOTSTRAP_MARKER}"
      UV="$B/{BOOTSTRAP_DIR}/bin/uv"
    else
      rm -rf "$B/{BOOTSTRAP_DIR}"
      echo "uv cannot be installed on $(hostname) ($(printf '%s\n' "$R" | grep -v '^[[:space:]]*$' | tail -n 1)): building environments with python3 -m venv and pip"
    fi
  fi
  exec 8>&-
fi
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The uv command lines: the package store in the cache, the platform's link mode, the
    /// index arguments before the packages; pip gets the same index arguments.
    #[test]
    fn the_build_steps_link_from_the_store_and_pass_the_index() {
        let cache = Path::new("/c");
        let dir = Path::new("/c/envs/k");
        let packages = vec!["torch".to_string(), "numpy".to_string()];
        let index = vec![
            "--extra-index-url".to_string(),
            "https://download.pytorch.org/whl/cpu".to_string(),
        ];
        let uv = Installer::Uv(PathBuf::from("/bin/uv"));
        let steps = build_steps(&uv, cache, dir, &packages, &index);
        assert_eq!(
            steps,
            vec![
                shell_words::split("/bin/uv venv --quiet --cache-dir /c/uv-cache /c/envs/k")
                    .unwrap(),
                shell_words::split(&format!(
                    "/bin/uv pip install --cache-dir /c/uv-cache --link-mode {} --python /c/envs/k/bin/python --extra-index-url https://download.pytorch.org/whl/cpu torch numpy",
                    link_mode()
                ))
                .unwrap(),
            ]
        );
        let pip = Installer::Pip {
            reason: "offline".into(),
        };
        assert_eq!(
            build_steps(&pip, cache, dir, &packages, &index)[1],
            shell_words::split("/c/envs/k/bin/python -m pip install --extra-index-url https://download.pytorch.org/whl/cpu torch numpy").unwrap()
        );
    }
}

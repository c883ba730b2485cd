//! The confined verify run (SPEC §3, verify): bubblewrap around the experiment. Inside, the
//! verify copy is the only writable folder (its protected files read-only), the system
//! folders, the target environment and its base interpreter are read-only, `/tmp` is
//! private, `$HOME` is that private `/tmp`, the network is cut off unless the task says
//! `[run] network = true`, and nothing else of the machine is there: not the run folder (the
//! journal, `result.json`, the workspace), not the task folder, not the cache beyond the
//! run's own environment. The audit's configuration is bound read-only at
//! [`audit::CONFINED_CONFIG`], its log folder writable at [`audit::CONFINED_LOG`].

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::env::PythonEnv;
use crate::grade::audit::{self, AuditRun};

/// System folders bound read-only (or recreated as the symlinks they are here).
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
];
/// Device nodes of accelerators, bound when present.
const DEVICES: &[&str] = &["nvidia", "accel", "dri", "vfio", "kfd"];

/// Why a verify run here is not confined when bubblewrap is not installed, with the remedy.
pub const NOT_ON_PATH: &str =
    "bubblewrap (`bwrap`) is not on PATH: install it (`apt-get install bubblewrap`)";

/// Why a runner's verify run was not confined: its machine has no working bubblewrap; with
/// the remedy.
pub fn missing_on(runner: impl std::fmt::Display) -> String {
    format!(
        "no working bubblewrap on {runner}: install it there (`apt-get install bubblewrap`), \
         with unprivileged user namespaces allowed (README, set-up)"
    )
}

/// Whether bubblewrap can confine a process here: its path, or why not (with what would
/// let it). Probed once.
pub fn bwrap() -> Result<PathBuf, String> {
    static PROBE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            let path = std::env::var("PATH").unwrap_or_default();
            let bwrap =
                crate::env::which_in("bwrap", &path).ok_or_else(|| NOT_ON_PATH.to_string())?;
            let out = std::process::Command::new(&bwrap)
                .args(["--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc"])
                .args(["--dev", "/dev", "true"])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("cannot start {}: {e}", bwrap.display()))?;
            if out.status.success() {
                Ok(bwrap)
            } else {
                Err(format!(
                    "bubblewrap cannot create its namespaces here ({}): unprivileged user \
                     namespaces are off or restricted on this machine (README, set-up)",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        })
        .clone()
}

/// The prefix of the interpreter a virtualenv was made from (`home = …/bin` in
/// `pyvenv.cfg` → `…`), which the sandbox must show for the environment's Python to start.
fn base_prefix(env: &PythonEnv) -> Option<PathBuf> {
    let cfg = std::fs::read_to_string(env.dir.join("pyvenv.cfg")).ok()?;
    let home = cfg.lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    let home = home.canonicalize().unwrap_or(home);
    Some(home.parent().map_or(home.clone(), Path::to_path_buf))
}

/// The prefix of the `python3` on `path` (for runs without an environment of their own).
fn system_prefix(path: &str) -> Option<PathBuf> {
    let python = crate::env::which_in("python3", path)?;
    let out = std::process::Command::new(python)
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .ok()?;
    let prefix = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !prefix.is_empty()).then(|| PathBuf::from(prefix))
}

/// What one confined run is given.
#[derive(Debug, Clone)]
pub struct Sandbox<'a> {
    /// The verify copy (writable, the working folder).
    pub verify_dir: &'a Path,
    /// Files of the verify copy bound read-only (the protected files).
    pub read_only: &'a [PathBuf],
    /// The run's environment.
    pub env: Option<&'a PythonEnv>,
    /// The run's audit files.
    pub audit: &'a AuditRun,
    /// Whether the run may use the network.
    pub network: bool,
    /// The variables of the run (PATH included).
    pub vars: &'a [(String, String)],
}

/// `inner` wrapped in bubblewrap as the module says.
pub fn wrap(bwrap: &Path, inner: &[String], sb: &Sandbox<'_>) -> Vec<String> {
    let s = |p: &Path| p.display().to_string();
    let mut argv: Vec<String> = vec![s(bwrap), "--die-with-parent".into(), "--unshare-all".into()];
    if sb.network {
        argv.push("--share-net".into());
    }
    for dir in SYSTEM {
        let path = Path::new(dir);
        match std::fs::read_link(path) {
            Ok(target) => argv.extend(["--symlink".into(), s(&target), (*dir).into()]),
            Err(_) if path.is_dir() => {
                argv.extend(["--ro-bind".into(), (*dir).into(), (*dir).into()])
            }
            Err(_) => {}
        }
    }
    argv.extend([
        "--proc".into(),
        "/proc".into(),
        "--dev".into(),
        "/dev".into(),
    ]);
    argv.extend(["--ro-bind-try".into(), "/sys".into(), "/sys".into()]);
    if let Ok(devices) = std::fs::read_dir("/dev") {
        for dev in devices.filter_map(Result::ok) {
            let name = dev.file_name().to_string_lossy().to_string();
            if DEVICES.iter().any(|d| name.starts_with(d)) {
                let p = s(&dev.path());
                argv.extend(["--dev-bind".into(), p.clone(), p]);
            }
        }
    }
    argv.extend(["--tmpfs".into(), "/tmp".into()]);
    let path = sb
        .vars
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| std::env::var("PATH").unwrap_or_default());
    let mut path_front = Vec::new();
    let prefix = match sb.env {
        Some(env) => {
            argv.extend(["--ro-bind".into(), s(&env.dir), s(&env.dir)]);
            base_prefix(env)
        }
        None => system_prefix(&path),
    };
    if let Some(prefix) = prefix.filter(|p| !SYSTEM.iter().any(|d| p.starts_with(d))) {
        argv.extend(["--ro-bind".into(), s(&prefix), s(&prefix)]);
        if sb.env.is_none() {
            path_front.push(s(&prefix.join("bin")));
        }
    }
    argv.extend(["--bind".into(), s(sb.verify_dir), s(sb.verify_dir)]);
    for file in sb.read_only {
        argv.extend(["--ro-bind".into(), s(file), s(file)]);
    }
    argv.extend([
        "--ro-bind".into(),
        s(&sb.audit.config()),
        audit::CONFINED_CONFIG.into(),
        "--bind".into(),
        s(&sb.audit.log_dir()),
        audit::CONFINED_LOG.into(),
    ]);
    if sb.env.is_none() {
        argv.extend([
            "--ro-bind".into(),
            s(&sb.audit.hook_dir()),
            audit::CONFINED_HOOK.into(),
            "--setenv".into(),
            "PYTHONPATH".into(),
            audit::CONFINED_HOOK.into(),
        ]);
    }
    for (key, value) in sb.vars {
        if key != "PATH" {
            argv.extend(["--setenv".into(), key.clone(), value.clone()]);
        }
    }
    path_front.push(path);
    argv.extend(["--setenv".into(), "PATH".into(), path_front.join(":")]);
    for (key, value) in [("HOME", "/tmp"), ("TMPDIR", "/tmp")] {
        argv.extend(["--setenv".into(), key.into(), value.into()]);
    }
    for (key, _) in std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
        .filter(|(k, _)| {
            let upper = k.to_ascii_uppercase();
            crate::secrets::SECRET_SUFFIXES
                .iter()
                .any(|s| upper.ends_with(s))
                || k == audit::CONFIG_VAR
        })
    {
        argv.extend(["--unsetenv".into(), key]);
    }
    argv.extend(["--chdir".into(), s(sb.verify_dir), "--".into()]);
    argv.extend(inner.iter().cloned());
    argv
}

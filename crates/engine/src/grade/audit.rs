//! The runtime import audit of a verify run. `audit.py` is installed into the site-packages of
//! each cached environment with a `.pth` file (so every Python process of the environment
//! loads it, subprocesses included, whatever the migrated code does with its environment
//! variables); it stays inert unless a verify run gives it a configuration. This module
//! installs it, writes a run's configuration, and reads what it recorded back as findings.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Finding, FindingKind};

/// The audit module's source.
const AUDIT_PY: &str = include_str!("audit.py");
/// The module's name in site-packages.
const MODULE_FILE: &str = "_xstack_audit.py";
/// The `.pth` file that imports it at start-up.
const PTH_FILE: &str = "_xstack_audit.pth";
/// `sitecustomize.py` for a run without an environment of its own (PYTHONPATH).
const SITECUSTOMIZE: &str = "import _xstack_audit\n";

/// Where the confined run finds its configuration (a read-only file).
pub const CONFINED_CONFIG: &str = "/run/xstack/audit.json";
/// Where the confined run writes its log (the host's log folder, bound there).
pub const CONFINED_LOG: &str = "/run/xstack/log";
/// Where the confined run finds the module when it has no environment (PYTHONPATH).
pub const CONFINED_HOOK: &str = "/run/xstack/hook";
/// The variable naming the configuration when the run is not confined.
pub const CONFIG_VAR: &str = "XSTACK_AUDIT_CONFIG";

/// Audit errors: the audit could not be installed or configured (an infrastructure failure).
#[derive(Debug, thiserror::Error)]
#[error("import audit: {}: {source}", path.display())]
pub struct AuditError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

fn write(path: &Path, text: &str) -> Result<(), AuditError> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| AuditError {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|source| AuditError {
            path: path.to_path_buf(),
            source,
        })
}

/// Installs (or refreshes) the audit in the virtualenv at `env_dir`: the module and its
/// `.pth` file in every `lib/python*/site-packages` of it.
pub fn install(env_dir: &Path) -> Result<(), AuditError> {
    let sites = crate::env::site_packages(env_dir).map_err(|source| AuditError {
        path: env_dir.join("lib"),
        source,
    })?;
    for site in sites {
        write(&site.join(MODULE_FILE), AUDIT_PY)?;
        write(&site.join(PTH_FILE), "import _xstack_audit\n")?;
    }
    Ok(())
}

/// A protected Python file, as the audit checks it at the end of each process.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtectedModule {
    /// Module name (`eval`).
    pub module: String,
    /// File relative to the verify copy (`eval.py`).
    pub file: String,
    /// Its top-level functions.
    pub defs: Vec<String>,
}

/// The files of one verify run's audit, in a folder of the run folder (outside the verify
/// copy): the configuration, the log folder and the module for runs without an environment.
#[derive(Debug, Clone)]
pub struct AuditRun {
    /// The folder.
    pub dir: PathBuf,
}

impl AuditRun {
    /// Creates `dir` afresh with the configuration for a run in `root` (the verify copy).
    /// `confined`: the paths the configuration names are the ones inside the sandbox.
    pub fn create(
        dir: &Path,
        root: &Path,
        forbid: &[String],
        protected: &[ProtectedModule],
        confined: bool,
    ) -> Result<AuditRun, AuditError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| AuditError { path, source }
        };
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(io(dir))?;
        }
        let run = AuditRun {
            dir: dir.to_path_buf(),
        };
        std::fs::create_dir_all(run.log_dir()).map_err(io(&run.log_dir()))?;
        let log_dir = if confined {
            PathBuf::from(CONFINED_LOG)
        } else {
            run.log_dir()
        };
        let config = config_json(
            &root.display().to_string(),
            &log_dir.display().to_string(),
            forbid,
            protected,
        );
        write(&run.config(), &config)?;
        write(&run.hook_dir().join(MODULE_FILE), AUDIT_PY)?;
        write(&run.hook_dir().join("sitecustomize.py"), SITECUSTOMIZE)?;
        Ok(run)
    }

    /// The configuration file.
    pub fn config(&self) -> PathBuf {
        self.dir.join("audit.json")
    }

    /// The folder the processes write their records into.
    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("log")
    }

    /// The folder holding the module and a `sitecustomize.py`, for runs without an
    /// environment (put on PYTHONPATH).
    pub fn hook_dir(&self) -> PathBuf {
        self.dir.join("hook")
    }

    /// What the processes recorded, as findings (one per module and importing place).
    pub fn findings(&self) -> Vec<Finding> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.log_dir())
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        let text: String = files
            .iter()
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .collect::<Vec<_>>()
            .join("\n");
        findings_of(text.lines())
    }
}

/// The findings of the audit's log lines (from every process, in any order; repeats once).
pub fn findings_of<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<Finding> {
    let mut records: Vec<Record> = Vec::new();
    for line in lines {
        if let Ok(record) = serde_json::from_str::<Record>(line)
            && !records.contains(&record)
        {
            records.push(record);
        }
    }
    records.into_iter().map(Record::finding).collect()
}

/// The audit's module, for a remote environment.
pub fn module_source() -> &'static str {
    AUDIT_PY
}

/// The audit's configuration for a run in `root`, writing into `log_dir`.
pub fn config_json(
    root: &str,
    log_dir: &str,
    forbid: &[String],
    protected: &[ProtectedModule],
) -> String {
    let protected: serde_json::Map<String, serde_json::Value> = protected
        .iter()
        .map(|p| {
            (
                p.module.clone(),
                serde_json::json!({"file": p.file, "defs": p.defs}),
            )
        })
        .collect();
    serde_json::json!({
        "forbid": forbid,
        "root": root,
        "log_dir": log_dir,
        "protected": protected,
    })
    .to_string()
}

/// One line of the audit's log.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Record {
    kind: String,
    module: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    #[serde(default)]
    exec: bool,
    detail: String,
}

impl Record {
    fn finding(self) -> Finding {
        let place = match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{f}:{l}: "),
            (Some(f), None) => format!("{f}: "),
            _ => String::new(),
        };
        let through = if self.exec { " (through exec)" } else { "" };
        let (kind, text) = match self.kind.as_str() {
            "runtime_import" => (
                FindingKind::RuntimeImport,
                format!(
                    "{place}imported forbidden module `{}` at run time{through} ({})",
                    self.module.as_deref().unwrap_or("?"),
                    self.detail
                ),
            ),
            "protected_changed" => (
                FindingKind::ProtectedChanged,
                format!("{place}{}", self.detail),
            ),
            _ => (FindingKind::Other, format!("{place}{}", self.detail)),
        };
        Finding {
            kind,
            file: self.file,
            line: self.line,
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subprocess that imports torch (by a computed name, through exec, and in a child
    /// Python) is recorded with the file and line that did it, and a replaced function of a
    /// protected module is caught at exit.
    #[test]
    fn the_audit_records_forbidden_imports_of_every_python_process() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("verify");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("eval.py"), "def mse(a, b):\n    return 1.0\n").unwrap();
        std::fs::write(
            root.join("train.py"),
            "import importlib, base64, subprocess, sys\n\
             try:\n    importlib.import_module('tor' + 'ch')\nexcept ImportError:\n    pass\n\
             try:\n    exec(base64.b64decode(b'aW1wb3J0IHRvcmNo'))\nexcept ImportError:\n    pass\n\
             import eval\n\
             eval.mse = lambda a, b: 0.0\n\
             subprocess.run([sys.executable, 'child.py'])\n",
        )
        .unwrap();
        std::fs::write(root.join("child.py"), "\n\nimport torch\n").unwrap();
        let run = AuditRun::create(
            &dir.path().join("audit"),
            &root,
            &["torch".to_string()],
            &[ProtectedModule {
                module: "eval".into(),
                file: "eval.py".into(),
                defs: vec!["mse".into()],
            }],
            false,
        )
        .unwrap();
        let status = std::process::Command::new("python3")
            .arg("train.py")
            .current_dir(&root)
            .env(CONFIG_VAR, run.config())
            .env("PYTHONPATH", run.hook_dir())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        let mut texts: Vec<String> = run.findings().into_iter().map(|f| f.text).collect();
        texts.sort();
        assert_eq!(
            texts,
            [
                "child.py:3: imported forbidden module `torch` at run time (torch)",
                "train.py:11: `eval.mse` of the protected eval.py was replaced at run time",
                "train.py:3: imported forbidden module `torch` at run time (torch)",
                "train.py:7: imported forbidden module `torch` at run time (through exec) (torch)",
            ]
        );
    }

    #[test]
    fn without_a_configuration_the_audit_does_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let hook = dir.path().join("hook");
        write(&hook.join(MODULE_FILE), AUDIT_PY).unwrap();
        let out = std::process::Command::new("python3")
            .args(["-c", "import _xstack_audit, sys; print(len(sys.meta_path))"])
            .env("PYTHONPATH", &hook)
            .env_remove(CONFIG_VAR)
            .output()
            .unwrap();
        let plain = std::process::Command::new("python3")
            .args(["-c", "import sys; print(len(sys.meta_path))"])
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, plain.stdout);
    }
}

//! Runs a PyTorch source repository once per seed, the way `xstack calibrate` and
//! `xstack init` need it: a clean copy of the source, `[env].setup` then the command in a PTY
//! with `XSTACK_SEED` set and the reference environment first on PATH, bounded by a timeout;
//! the whole output is kept for metric extraction. [`usage`] reads what the source does with
//! its seed.

pub mod usage;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::env::PythonEnv;
use crate::metrics;
use crate::pty::supervise::Supervised;
use crate::pty::{ExitInfo, PtyError, PtySpec};
use crate::run_script::RunScript;
use crate::workspace::{self, WorkspaceError};

/// Lines shown from the end of a failed run.
pub const TAIL_LINES: usize = 20;

/// Errors that keep a seed run from happening at all (a run that fails is a [`SeedRun`]).
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The clean copy of the source could not be made.
    #[error("cannot make a clean copy of the source: {0}")]
    Copy(#[from] WorkspaceError),
    /// The PTY or the shell could not be started.
    #[error("cannot start the run: {0}")]
    Spawn(#[from] PtyError),
    /// The scratch folder or the async runtime could not be created.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

/// What to run for every seed.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The source repository; only read, each run gets a clean copy.
    pub source: PathBuf,
    /// `[env].setup`, run before the command in the same shell.
    pub setup: Option<String>,
    /// `[run].command`.
    pub command: String,
    /// A run past this is killed (None: no limit).
    pub timeout: Option<Duration>,
    /// The reference environment, None when the run needs none.
    pub env: Option<PythonEnv>,
    /// `XSTACK_TASK` for the child.
    pub task_id: String,
    /// Terminal width and height.
    pub size: (u16, u16),
}

/// One finished run of the source.
#[derive(Debug, Clone)]
pub struct SeedRun {
    /// `XSTACK_SEED`.
    pub seed: u64,
    /// Everything the run printed, decoded (terminal escapes included).
    pub output: String,
    /// Exit code; None when a signal ended it.
    pub code: Option<i32>,
    /// Whether it was killed at the timeout.
    pub timed_out: bool,
    /// Wall-clock seconds.
    pub duration_s: f64,
}

impl SeedRun {
    /// Whether the run exited with status 0 before its timeout.
    pub fn succeeded(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// The output as plain lines (escapes removed, each `\r`-rewritten segment a line), the
    /// lines the metric extractors see.
    pub fn lines(&self) -> Vec<String> {
        metrics::plain_lines(&self.output)
    }

    /// The last `n` plain lines, joined.
    pub fn tail(&self, n: usize) -> String {
        let lines = self.lines();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// How the run ended, in words: `exit 0`, `exit 1`, `killed by a signal`, `timed out`.
    pub fn ending(&self) -> String {
        match (self.timed_out, self.code) {
            (true, _) => "timed out".to_string(),
            (false, Some(code)) => format!("exit {code}"),
            (false, None) => "killed by a signal".to_string(),
        }
    }
}

/// A folder under the system temp folder, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Creates a fresh, empty folder named after `label`.
    pub fn new(label: &str) -> Result<Scratch, SeedError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "xstack-{label}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).map_err(|source| SeedError::Io {
            what: format!("cannot create {}", path.display()),
            source,
        })?;
        Ok(Scratch { path })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Runs the plan once with `XSTACK_SEED = seed` in a clean copy of the source made under
/// `scratch`; `on_output` receives the output as it arrives.
pub fn run_seed(
    plan: &RunPlan,
    seed: u64,
    scratch: &Path,
    on_output: &mut dyn FnMut(&str),
) -> Result<SeedRun, SeedError> {
    let dir = scratch.join(format!("seed-{seed}"));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|source| SeedError::Io {
            what: format!("cannot clear {}", dir.display()),
            source,
        })?;
    }
    workspace::copy_tree(&plan.source, &dir, true)?;
    let run = RunScript {
        setup: plan.setup.as_deref(),
        command: &plan.command,
        task_id: &plan.task_id,
        seed,
        phase: None,
    };
    let spec = PtySpec {
        argv: vec!["bash".to_string(), "-c".to_string(), run.script()],
        cwd: dir.clone(),
        env: run.env(plan.env.as_ref()),
        env_remove: Vec::new(),
        cols: plan.size.0,
        rows: plan.size.1,
    };
    let runtime = crate::process::runtime(crate::process::RuntimeThreads::CallingThread).map_err(
        |source| SeedError::Io {
            what: "cannot start the runtime".to_string(),
            source,
        },
    )?;
    let result = runtime.block_on(run_in_pty(&spec, plan.timeout, on_output));
    let _ = std::fs::remove_dir_all(&dir);
    let (output, exit, timed_out, duration_s) = result?;
    Ok(SeedRun {
        seed,
        output,
        code: exit.code,
        timed_out,
        duration_s,
    })
}

/// Runs `spec` in a PTY until it exits and its output is drained; returns the output, the
/// exit, whether it timed out, and the seconds it took.
async fn run_in_pty(
    spec: &PtySpec,
    timeout: Option<Duration>,
    on_output: &mut dyn FnMut(&str),
) -> Result<(String, ExitInfo, bool, f64), SeedError> {
    let started = Instant::now();
    let child = Supervised::spawn(spec, timeout)?;
    let mut output = String::new();
    let (exit, timed_out) = child
        .run_to_end(&mut |text| {
            on_output(text);
            output.push_str(text);
        })
        .await;
    Ok((output, exit, timed_out, started.elapsed().as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(dir: &Path, command: &str, timeout: Option<Duration>) -> RunPlan {
        RunPlan {
            source: dir.to_path_buf(),
            setup: Some("echo setup-ran".to_string()),
            command: command.to_string(),
            timeout,
            env: None,
            task_id: "t".to_string(),
            size: (100, 30),
        }
    }

    #[test]
    fn each_seed_runs_in_a_clean_copy_with_its_seed() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(
            src.path().join("run.sh"),
            "echo seed=$XSTACK_SEED; touch made\n",
        )
        .unwrap();
        std::fs::write(src.path().join("old.log"), "stale").unwrap();
        let scratch = Scratch::new("test").unwrap();
        let mut seen = String::new();
        let run = run_seed(
            &plan(src.path(), "test ! -e old.log && bash run.sh", None),
            3,
            scratch.path(),
            &mut |t| seen.push_str(t),
        )
        .unwrap();
        assert!(run.succeeded(), "{}", run.output);
        assert_eq!(run.lines(), ["setup-ran", "seed=3"]);
        assert_eq!(seen, run.output);
        // The source was only read.
        assert!(!src.path().join("made").exists());
        assert!(src.path().join("old.log").exists());
    }

    #[test]
    fn a_failing_run_keeps_its_output_and_status() {
        let src = tempfile::tempdir().unwrap();
        let scratch = Scratch::new("test").unwrap();
        let run = run_seed(
            &plan(src.path(), "echo one; echo two; exit 4", None),
            0,
            scratch.path(),
            &mut |_| {},
        )
        .unwrap();
        assert!(!run.succeeded());
        assert_eq!(run.code, Some(4));
        assert_eq!(run.ending(), "exit 4");
        assert_eq!(run.tail(2), "one\ntwo");
    }

    #[test]
    fn a_run_past_its_timeout_is_killed() {
        let src = tempfile::tempdir().unwrap();
        let scratch = Scratch::new("test").unwrap();
        let run = run_seed(
            &plan(
                src.path(),
                "echo started; exec sleep 30",
                Some(Duration::from_millis(300)),
            ),
            0,
            scratch.path(),
            &mut |_| {},
        )
        .unwrap();
        assert!(run.timed_out);
        assert!(!run.succeeded());
        assert!(run.duration_s < 10.0, "{}", run.duration_s);
        assert_eq!(run.ending(), "timed out");
    }
}

//! What `run`, `grade`, `bench` and a replay's re-grade share: the options of a run, their
//! validation (bad input is exit 2 before anything is created), the run folder and journal,
//! and a resumed run's state rebuilt from its journal.

use std::path::{Path, PathBuf};

use crate::agent::AgentSpec;
use crate::agent::sandbox::{Sandbox, SandboxNet};
use crate::agent::script::Trajectory;
use crate::config::Config;
use crate::event::{Event, Mode};
use crate::journal::{self, Header, JournalWriter};
use crate::runner::{RunnerPool, RunnerSpec};
use crate::session::driver::{SessionConfig, new_run_dir};
use crate::session::recorder::{Recorder, SharedState};
use crate::session::state::SessionState;
use crate::task::{self, Source, Task};

use super::AppError;

/// Options of `xstack run` and `xstack grade`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// TASK argument.
    pub task: String,
    /// `--agent`; None for the task's demo trajectory.
    pub agent: Option<String>,
    /// `grade --repo`: grade this folder, no agent.
    pub repo: Option<PathBuf>,
    /// Step or auto.
    pub mode: Mode,
    /// `--runs-dir`.
    pub runs_dir: Option<PathBuf>,
    /// `--runner`.
    pub runner: Option<String>,
    /// `--headless`: presets run their one-shot command lines (the TUI: interactive ones).
    pub headless: bool,
    /// `--sandbox`, with `--sandbox-net` when given: Some(None) confines with the default
    /// network setting.
    pub sandbox: Option<Option<SandboxNet>>,
    /// The user's config file.
    pub config: Config,
}

impl RunOptions {
    /// A run of `task` as every caller starts from: the task's demo agent, auto mode, the
    /// default runs folder and runner, the TUI's presets, no sandbox.
    pub fn new(task: impl Into<String>, config: Config) -> RunOptions {
        RunOptions {
            task: task.into(),
            agent: None,
            repo: None,
            mode: Mode::Auto,
            runs_dir: None,
            runner: None,
            headless: false,
            sandbox: None,
            config,
        }
    }

    /// `--agent`.
    pub fn agent(mut self, agent: Option<String>) -> RunOptions {
        self.agent = agent;
        self
    }

    /// `grade --repo`: grade this folder, no agent.
    pub fn repo(mut self, repo: PathBuf) -> RunOptions {
        self.repo = Some(repo);
        self
    }

    /// Step or auto.
    pub fn mode(mut self, mode: Mode) -> RunOptions {
        self.mode = mode;
        self
    }

    /// `--runs-dir`.
    pub fn runs_dir(mut self, runs_dir: Option<PathBuf>) -> RunOptions {
        self.runs_dir = runs_dir;
        self
    }

    /// `--runner`, else the config file's.
    pub fn runner(mut self, runner: Option<String>) -> RunOptions {
        self.runner = runner.or_else(|| self.config.runner.clone());
        self
    }

    /// `--headless`.
    pub fn headless(mut self, headless: bool) -> RunOptions {
        self.headless = headless;
        self
    }

    /// `--sandbox` (with `--sandbox-net`).
    pub fn sandbox(mut self, sandbox: Option<Option<SandboxNet>>) -> RunOptions {
        self.sandbox = sandbox;
        self
    }
}

/// A session ready to start: validated inputs and a created run folder.
pub struct Prepared {
    /// The session's configuration.
    pub config: SessionConfig,
    /// The shared state the panes draw from.
    pub state: SharedState,
    /// The recorder (journal writer) for the driver.
    pub recorder: Recorder,
    /// Signalled on every state change.
    pub changed: tokio::sync::watch::Receiver<u64>,
    /// Run id.
    pub run_id: String,
    /// Start time.
    pub started_at: String,
}

/// The runs folder: `--runs-dir`, else `$XSTACK_RUNS_DIR`, else `./runs`.
pub fn runs_dir(flag: Option<&Path>) -> PathBuf {
    flag.map(Path::to_path_buf)
        .or_else(|| std::env::var_os("XSTACK_RUNS_DIR").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("runs"))
}

fn seed() -> Result<u64, AppError> {
    match std::env::var("XSTACK_SEED") {
        Ok(s) if !s.trim().is_empty() => s.trim().parse().map_err(|_| {
            AppError::usage(format!("XSTACK_SEED=`{s}` is not a non-negative integer"))
        }),
        _ => Ok(0),
    }
}

/// The agent spec that names each task's own demo trajectory (so one bench can run every
/// task's demo).
pub const DEMO_AGENT: &str = "demo";

/// The agent of a run: `--agent` (a preset or config agent resolved for headless or TUI
/// use; [`DEMO_AGENT`] for the task's demo trajectory), else the task's demo trajectory.
pub fn agent_for(
    task: &Task,
    flag: Option<&str>,
    config: &Config,
    headless: bool,
) -> Result<AgentSpec, AppError> {
    match flag {
        Some(spec) if spec != DEMO_AGENT => Ok(AgentSpec::resolve(spec, &config.agents, headless)?),
        _ => match task.demo_trajectory() {
            Some(path) => Ok(AgentSpec::Script(path)),
            None => Err(AppError::usage(format!(
                "task {} has no demo trajectory: choose an agent with --agent script:PATH, shell, cmd:TEMPLATE, or a preset (claude, codex, aider, gemini, opencode)",
                task.spec.id
            ))),
        },
    }
}

/// The agent of a run, checked before anything starts: a trajectory must parse (exit 2) and
/// the agent's program must be installed (exit 3).
pub fn checked_agent(
    task: &Task,
    flag: Option<&str>,
    cache: &Path,
    config: &Config,
    headless: bool,
) -> Result<AgentSpec, AppError> {
    let agent = agent_for(task, flag, config, headless)?;
    if let AgentSpec::Script(path) = &agent {
        Trajectory::load(path)?;
    }
    let env_bin = crate::env::env_dir(cache, &task.spec.env.packages).join("bin");
    let path = format!(
        "{}:{}",
        env_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    agent.check_program(&path)?;
    Ok(agent)
}

/// Makes the source folder available: a local path as is, a git source cloned into the cache
/// at its pinned commit (reused afterwards).
pub fn source_dir(task: &Task, cache: &Path) -> Result<PathBuf, AppError> {
    match &task.source {
        Source::Path(p) => Ok(p.clone()),
        Source::Git { url, rev } => {
            let dir = cache.join("sources").join(format!(
                "{}-{}",
                task.spec.id,
                &rev[..rev.len().min(12)]
            ));
            if dir.join(".xstack-complete").is_file() {
                return Ok(dir);
            }
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)
                .map_err(|e| AppError::infra(format!("{}: {e}", dir.display())))?;
            let run = |args: &[&str]| {
                std::process::Command::new("git")
                    .args(args)
                    .stdin(std::process::Stdio::null())
                    .output()
                    .map_err(|e| format!("cannot run git: {e}"))
                    .and_then(|o| {
                        if o.status.success() {
                            Ok(())
                        } else {
                            Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
                        }
                    })
            };
            let dir_s = dir.display().to_string();
            let result = run(&["clone", "--quiet", url, &dir_s])
                .and_then(|()| run(&["-C", &dir_s, "checkout", "--quiet", rev]));
            if let Err(e) = result {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(AppError::infra(format!(
                    "cannot fetch the source repository {url} at {rev}: {e}"
                )));
            }
            if let Err(e) = std::fs::write(dir.join(".xstack-complete"), rev) {
                // The clone is complete; without its marker the next run fetches it again.
                tracing::warn!("cannot mark {} complete: {e}", dir.display());
            }
            Ok(dir)
        }
    }
}

/// Validates everything about a run and creates its run folder and journal.
pub fn prepare(opts: &RunOptions) -> Result<Prepared, AppError> {
    let runner = match &opts.runner {
        Some(spec) => vec![RunnerSpec::parse(spec).map_err(|e| AppError::usage(e.to_string()))?],
        None => Vec::new(),
    };
    let task = Task::load(&task::resolve(&opts.task)?)?;
    let seed = seed()?;
    let cache = crate::env::cache_dir();
    let agent = match &opts.repo {
        Some(_) => None,
        None => Some(checked_agent(
            &task,
            opts.agent.as_deref(),
            &cache,
            &opts.config,
            opts.headless,
        )?),
    };
    if let Some(repo) = &opts.repo
        && !repo.is_dir()
    {
        return Err(AppError::usage(format!(
            "--repo {}: no such folder",
            repo.display()
        )));
    }
    let sandbox = match (&opts.sandbox, &agent) {
        (Some(net), Some(agent)) => {
            let (hosts, state) = match agent {
                AgentSpec::Preset(def) => (def.hosts.clone(), def.state.clone()),
                _ => (Vec::new(), Vec::new()),
            };
            let path = std::env::var("PATH").unwrap_or_default();
            Some(Sandbox::new(&path, *net, &agent.slug(), &hosts, &state)?)
        }
        _ => None,
    };
    let source = source_dir(&task, &cache)?;
    let runs = runs_dir(opts.runs_dir.as_deref());
    let slug = agent
        .as_ref()
        .map_or_else(|| "grade".to_string(), AgentSpec::slug);
    let run_dir = new_run_dir(&runs, &task.spec.id, &slug);
    std::fs::create_dir_all(&run_dir)
        .map_err(|e| AppError::infra(format!("{}: {e}", run_dir.display())))?;
    let run_dir = run_dir.canonicalize().unwrap_or(run_dir);
    let run_id = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let agent_label = agent
        .as_ref()
        .map_or_else(|| "none (grade)".to_string(), AgentSpec::display);
    let agent_label = crate::secrets::Secrets::from_env().redact(&agent_label);
    let header = Header::new(&task.spec.id, &agent_label, &run_id, &started_at);
    let writer = JournalWriter::create(&run_dir.join(journal::JOURNAL_FILE), &header)
        .map_err(|e| AppError::infra(e.to_string()))?;
    let state: SharedState = crate::session::recorder::shared(SessionState::new());
    let (recorder, changed) = Recorder::new(writer, state.clone(), 0.0);
    let graded_repo = opts
        .repo
        .as_ref()
        .map(|r| r.canonicalize().unwrap_or_else(|_| r.clone()));
    let idle_limit = agent.as_ref().and_then(AgentSpec::idle_limit);
    let config = SessionConfig {
        task,
        agent,
        graded_repo,
        mode: opts.mode,
        run_dir,
        source_dir: source,
        cache_dir: cache,
        seed,
        agent_size: (120, 36),
        run_size: (120, 36),
        idle_limit,
        sandbox,
        resume: false,
        linger: false,
        runner: std::sync::Arc::new(RunnerPool::from_specs(&runner)),
    };
    Ok(Prepared {
        config,
        state,
        recorder,
        changed,
        run_id,
        started_at,
    })
}

/// Prepares `run --resume RUN_DIR`: the state rebuilt from the journal, the same task and
/// agent, the journal opened for appending.
pub fn prepare_resume(
    run_dir: &Path,
    mode: Option<Mode>,
    headless: bool,
) -> Result<Prepared, AppError> {
    let path = journal::path_in(run_dir);
    let recorded = journal::read(&path).map_err(|e| AppError::usage(e.to_string()))?;
    let mut state = SessionState::new();
    let mut task_dir = None;
    for entry in &recorded.entries {
        state.apply(entry.t, &entry.event);
        if let Event::Task(task) = &entry.event {
            task_dir = Some(task.dir.clone());
        }
    }
    match &state.finished {
        // An interrupted run (a hangup, SIGTERM, the user's abort) continues where it was
        // cut off: its end is taken back.
        Some(end) if end.interrupted.is_some() => state.finished = None,
        Some(_) => {
            return Err(AppError::usage(format!(
                "{} finished already; nothing to resume",
                run_dir.display()
            )));
        }
        None => {}
    }
    let header = &recorded.header;
    if header.agent.starts_with("none") {
        return Err(AppError::usage(
            "a grade run is not resumable: run `xstack grade` again",
        ));
    }
    let dir = task_dir
        .map(PathBuf::from)
        .filter(|d| d.join(task::TASK_FILE).is_file())
        .map_or_else(|| task::resolve(&header.task), Ok)?;
    let task = Task::load(&dir)?;
    let config = Config::load()?;
    let agent = AgentSpec::resolve(&header.agent, &config.agents, headless)?;
    let idle_limit = agent.idle_limit();
    let cache = crate::env::cache_dir();
    let source = source_dir(&task, &cache)?;
    let writer = JournalWriter::resume(run_dir).map_err(|e| AppError::infra(e.to_string()))?;
    let offset = recorded.entries.last().map_or(0.0, |e| e.t);
    let run_dir = run_dir
        .canonicalize()
        .unwrap_or_else(|_| run_dir.to_path_buf());
    let mode = mode.unwrap_or(state.mode);
    let state: SharedState = crate::session::recorder::shared(state);
    let (recorder, changed) = Recorder::new(writer, state.clone(), offset);
    let config = SessionConfig {
        task,
        agent: Some(agent),
        graded_repo: None,
        mode,
        run_dir: run_dir.clone(),
        source_dir: source,
        cache_dir: cache,
        seed: seed()?,
        agent_size: (120, 36),
        run_size: (120, 36),
        idle_limit,
        sandbox: None,
        resume: true,
        linger: false,
        runner: std::sync::Arc::new(RunnerPool::from_specs(&[])),
    };
    Ok(Prepared {
        config,
        state,
        recorder,
        changed,
        run_id: header.run_id.clone(),
        started_at: header.started_at.clone(),
    })
}

//! The subcommands behind the command line: each resolves its inputs, reports bad input with
//! exit status 2 before anything is created, and runs the library.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::agent::sandbox::{Sandbox, SandboxError, SandboxNet};
use crate::agent::script::{self, Trajectory};
use crate::agent::{AgentError, AgentSpec};
use crate::config::Config;
use crate::journal::{self, Header, JournalWriter};
use crate::runner::{RunnerPool, RunnerSpec};
use crate::session::driver::{Command, Driver, SessionConfig, new_run_dir};
use crate::session::event::{Event, Interruption, Mode};
use crate::session::progress::ProgressLines;
use crate::session::recorder::{Recorder, SharedState};
use crate::session::state::SessionState;
use crate::task::{self, Source, Task};

/// When the process started (set by `main` before anything else), for the first-frame log.
pub static STARTED: std::sync::LazyLock<std::time::Instant> =
    std::sync::LazyLock::new(std::time::Instant::now);

/// Exit status: the task passed.
pub const EXIT_PASS: i32 = 0;
/// Exit status: graded and failed.
pub const EXIT_FAIL: i32 = 1;
/// Exit status: bad usage or an invalid task or config.
pub const EXIT_USAGE: i32 = 2;
/// Exit status: infrastructure failure.
pub const EXIT_INFRA: i32 = 3;

/// An error that ends a command with a given exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct AppError {
    /// The exit status.
    pub code: i32,
    /// What to tell the user.
    pub message: String,
}

impl AppError {
    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> AppError {
        AppError {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }

    /// An infrastructure error (exit 3).
    pub fn infra(message: impl Into<String>) -> AppError {
        AppError {
            code: EXIT_INFRA,
            message: message.into(),
        }
    }
}

impl From<task::TaskError> for AppError {
    fn from(e: task::TaskError) -> Self {
        AppError::usage(e.to_string())
    }
}

impl From<script::TrajectoryError> for AppError {
    fn from(e: script::TrajectoryError) -> Self {
        AppError::usage(e.to_string())
    }
}

impl From<crate::config::ConfigError> for AppError {
    fn from(e: crate::config::ConfigError) -> Self {
        AppError::usage(e.to_string())
    }
}

impl From<SandboxError> for AppError {
    fn from(e: SandboxError) -> Self {
        match e {
            SandboxError::NetChoice { .. } => AppError::usage(e.to_string()),
            SandboxError::Missing | SandboxError::Unavailable(_) => AppError::infra(e.to_string()),
        }
    }
}

impl From<AgentError> for AppError {
    fn from(e: AgentError) -> Self {
        match e {
            AgentError::NotFound { .. } => AppError::infra(e.to_string()),
            _ => AppError::usage(e.to_string()),
        }
    }
}

/// `xstack check [TASK...]`: validates task folders; returns the exit status.
pub fn check(tasks: &[String], out: &mut dyn Write) -> i32 {
    let dirs: Vec<Result<PathBuf, task::TaskError>> = if tasks.is_empty() {
        let root = task::tasks_dir();
        let found = task::discover(&root);
        if found.is_empty() {
            let _ = writeln!(out, "no task folders under {}", root.display());
            return EXIT_USAGE;
        }
        found.into_iter().map(Ok).collect()
    } else {
        tasks.iter().map(|t| task::resolve(t)).collect()
    };
    let mut status = EXIT_PASS;
    for dir in dirs {
        match dir.and_then(|d| Task::load(&d)) {
            Ok(task) => {
                let _ = writeln!(out, "ok    {} ({})", task.spec.id, task.dir.display());
            }
            Err(e) => {
                let _ = writeln!(out, "error {e}");
                status = EXIT_USAGE;
            }
        }
    }
    status
}

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

/// The agent of a run: `--agent` (a preset or config agent resolved for headless or TUI
/// use), else the task's demo trajectory.
pub fn agent_for(
    task: &Task,
    flag: Option<&str>,
    config: &Config,
    headless: bool,
) -> Result<AgentSpec, AppError> {
    match flag {
        Some(spec) => Ok(AgentSpec::resolve(spec, &config.agents, headless)?),
        None => match task.demo_trajectory() {
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
            let _ = std::fs::write(dir.join(".xstack-complete"), rev);
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

/// Runs a prepared session without a screen, printing progress lines; returns the exit
/// status.
pub fn run_headless(prepared: Prepared, quiet: bool) -> Result<i32, AppError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| AppError::infra(format!("cannot start the runtime: {e}")))?;
    let Prepared {
        config,
        mut recorder,
        run_id,
        started_at,
        ..
    } = prepared;
    let run_dir = config.run_dir.clone();
    if !quiet {
        let mut progress = ProgressLines::new();
        recorder.set_observer(Box::new(move |t, event, _state| {
            let lines = progress.lines(t, event);
            if !lines.is_empty() {
                let mut stdout = std::io::stdout().lock();
                for line in lines {
                    let _ = writeln!(stdout, "{line}");
                }
                let _ = stdout.flush();
            }
        }));
    }
    if !quiet {
        println!("run folder: {}", run_dir.display());
    }
    let code = runtime.block_on(async move {
        let (tx, rx) = mpsc::channel::<Command>(64);
        spawn_signal_forwarder(tx.clone());
        let driver = Driver::new(config, recorder, rx, run_id, started_at);
        let code = driver.run().await;
        drop(tx);
        code
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    if !quiet {
        println!(
            "result: {}",
            run_dir.join(crate::session::result::RESULT_FILE).display()
        );
    }
    Ok(code)
}

/// Runs a prepared session in the TUI; returns the exit status.
pub fn run_tui(prepared: Prepared, theme: crate::ui::theme::Theme) -> Result<i32, AppError> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        let _ = std::fs::remove_dir_all(&prepared.config.run_dir);
        return Err(AppError::usage(
            "the TUI needs a terminal; use --headless to run without one",
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| AppError::infra(format!("cannot start the runtime: {e}")))?;
    let Prepared {
        mut config,
        state,
        recorder,
        changed,
        run_id,
        started_at,
    } = prepared;
    config.linger = true;
    let code = runtime.block_on(async move {
        let mut guard = crate::ui::terminal::TerminalGuard::enter()
            .map_err(|e| AppError::infra(format!("cannot set up the terminal: {e}")))?;
        let (tx, rx) = mpsc::channel::<Command>(64);
        let driver = Driver::new(config, recorder, rx, run_id, started_at);
        let handle = tokio::spawn(driver.run());
        let view = crate::ui::View {
            state,
            changed,
            commands: Some(tx),
            driver: Some(handle),
            theme,
        };
        let code = crate::ui::run(&mut guard.terminal, view).await;
        drop(guard);
        Ok::<i32, AppError>(code)
    })?;
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(code)
}

/// Turns SIGINT (the user's Ctrl-C), SIGTERM and SIGHUP into an interruption of the
/// session that records which it was.
pub fn spawn_signal_forwarder(tx: mpsc::Sender<Command>) {
    use tokio::signal::unix::{SignalKind, signal};
    for (interruption, kind) in [
        (Interruption::UserAbort, SignalKind::interrupt()),
        (Interruption::Terminated, SignalKind::terminate()),
        (Interruption::Hangup, SignalKind::hangup()),
    ] {
        let tx = tx.clone();
        if let Ok(mut stream) = signal(kind) {
            tokio::spawn(async move {
                while stream.recv().await.is_some() {
                    if tx.send(Command::Interrupt(interruption)).await.is_err() {
                        break;
                    }
                }
            });
        }
    }
}

/// `xstack replay RUN_DIR --headless`: prints the timeline rebuilt from the journal alone and
/// returns the exit status the run had (3 when the run was interrupted).
pub fn replay_headless(run_dir: &Path, out: &mut dyn Write) -> Result<i32, AppError> {
    let path = journal::path_in(run_dir);
    let reader = journal::JournalReader::open(&path).map_err(|e| AppError::usage(e.to_string()))?;
    let header = &reader.header;
    let _ = writeln!(
        out,
        "replay of {} (task {}, agent {}, started {})",
        header.run_id, header.task, header.agent, header.started_at
    );
    let mut state = SessionState::new();
    let mut progress = ProgressLines::new();
    let visited = reader
        .visit(|entry| {
            state.apply(entry.t, &entry.event);
            for line in progress.lines(entry.t, &entry.event) {
                let _ = writeln!(out, "{line}");
            }
        })
        .map_err(|e| AppError::usage(e.to_string()))?;
    if visited.torn {
        let _ = writeln!(
            out,
            "(the journal's last line or frame was cut off and skipped)"
        );
    }
    Ok(match &state.finished {
        Some(finish) => finish.exit_code,
        None => {
            let _ = writeln!(out, "the run was interrupted before it finished");
            EXIT_INFRA
        }
    })
}

/// `xstack agent-script PATH --phase N [--message-file F]`: plays one phase of a trajectory in
/// the current folder; returns its exit status.
pub fn agent_script(path: &Path, phase: u8, message_file: Option<&Path>) -> Result<i32, AppError> {
    let trajectory = Trajectory::load(path)?;
    let message = match message_file {
        Some(f) => Some(
            std::fs::read_to_string(f)
                .map_err(|e| AppError::usage(format!("--message-file {}: {e}", f.display())))?,
        ),
        None => None,
    };
    let mut stdout = std::io::stdout();
    Ok(script::play(
        path,
        &trajectory,
        phase,
        message.as_deref(),
        &mut stdout,
    ))
}

/// When `xstack diff` colours its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colours when stdout is a terminal.
    Auto,
    /// Always colours.
    Always,
    /// Never colours.
    Never,
}

/// `xstack diff OLD NEW`: prints the side-by-side diff of two files or folders.
pub fn diff(
    old: &Path,
    new: &Path,
    width: Option<usize>,
    color: ColorChoice,
    out: &mut dyn Write,
) -> Result<i32, AppError> {
    use crate::diff::{
        CompareOptions, DEFAULT_THEME, DiffOptions, HighlightRequest, HighlightScope, Highlighter,
        build_views, load_pair, render_text,
    };
    use std::io::IsTerminal;
    let is_terminal = std::io::stdout().is_terminal();
    let width = width
        .or_else(|| {
            std::env::var("COLUMNS")
                .ok()
                .and_then(|c| c.trim().parse().ok())
        })
        .or_else(|| {
            is_terminal
                .then(|| {
                    crossterm::terminal::size()
                        .ok()
                        .map(|(w, _)| usize::from(w))
                })
                .flatten()
        })
        .unwrap_or(160)
        .max(20);
    let color = match color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal,
    };
    let pair = load_pair(old, new, &CompareOptions::default())
        .map_err(|e| AppError::usage(e.to_string()))?;
    let highlighter = Highlighter::default();
    let request = HighlightRequest {
        highlighter: &highlighter,
        theme: DEFAULT_THEME,
        scope: HighlightScope::ShownLines,
    };
    let views = build_views(
        &pair.entries,
        &pair.old,
        &pair.new,
        &DiffOptions::default(),
        color.then_some(&request),
    )
    .map_err(|e| AppError::infra(e.to_string()))?;
    let text = render_text(&views, width, color);
    out.write_all(text.as_bytes())
        .map_err(|e| AppError::infra(format!("cannot write the diff: {e}")))?;
    Ok(EXIT_PASS)
}

/// `xstack replay RUN_DIR [--speed X]`: the recorded session in the TUI. Returns the exit
/// status, after a re-grade of the run's workspace when the user asked for one (`r`).
pub fn replay_tui(
    run_dir: &Path,
    speed: f64,
    theme: crate::ui::theme::Theme,
) -> Result<i32, AppError> {
    use std::io::IsTerminal;
    let path = journal::path_in(run_dir);
    // The header first: a missing or foreign journal is named before anything else.
    journal::JournalReader::open(&path).map_err(|e| AppError::usage(e.to_string()))?;
    if !std::io::stdout().is_terminal() {
        return Err(AppError::usage(
            "the replay TUI needs a terminal; use --headless to print the timeline",
        ));
    }
    if speed.is_nan() || speed <= 0.0 {
        return Err(AppError::usage(format!("--speed {speed}: must be above 0")));
    }
    let (header, mut player) =
        crate::replay::Player::open(&path).map_err(|e| AppError::usage(e.to_string()))?;
    let task_id = header.task;
    player.speed = speed.clamp(crate::replay::SPEEDS[0], crate::replay::SPEEDS[8]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| AppError::infra(format!("cannot start the runtime: {e}")))?;
    let exit = runtime.block_on(async {
        let mut guard = crate::ui::terminal::TerminalGuard::enter()
            .map_err(|e| AppError::infra(format!("cannot set up the terminal: {e}")))?;
        let exit = crate::ui::replay::run(&mut guard.terminal, player, &theme).await;
        drop(guard);
        Ok::<_, AppError>(exit)
    })?;
    runtime.shutdown_timeout(Duration::from_millis(200));
    match exit {
        crate::ui::replay::ReplayExit::Quit => Ok(EXIT_PASS),
        crate::ui::replay::ReplayExit::Regrade => {
            let workspace = run_dir.join("workspace");
            if !workspace.is_dir() {
                return Err(AppError::usage(format!(
                    "{} has no workspace to grade",
                    run_dir.display()
                )));
            }
            let opts = RunOptions {
                task: task_id,
                agent: None,
                repo: Some(workspace),
                mode: Mode::Auto,
                runs_dir: run_dir.parent().map(Path::to_path_buf),
                runner: None,
                headless: false,
                sandbox: None,
                config: Config::load()?,
            };
            run_tui(prepare(&opts)?, theme)
        }
    }
}

impl From<crate::calibrate::CalibrateError> for AppError {
    fn from(e: crate::calibrate::CalibrateError) -> Self {
        use crate::calibrate::CalibrateError as E;
        match e {
            E::TooFewSeeds(_) | E::MetricMissing { .. } => AppError::usage(e.to_string()),
            E::Env(_) | E::Seed(_) | E::RunFailed { .. } => AppError::infra(e.to_string()),
        }
    }
}

/// `xstack export RUN_DIR --cast FILE --pane agent|run`: writes an asciicast v2 file.
pub fn export_cast(
    run_dir: &Path,
    cast: &Path,
    pane: crate::replay::cast::CastPane,
) -> Result<i32, AppError> {
    let journal =
        journal::read(&journal::path_in(run_dir)).map_err(|e| AppError::usage(e.to_string()))?;
    let file = std::fs::File::create(cast)
        .map_err(|e| AppError::usage(format!("--cast {}: {e}", cast.display())))?;
    let mut out = std::io::BufWriter::new(file);
    let events = crate::replay::cast::export(&journal, pane, &mut out)
        .and_then(|n| out.flush().map(|()| n))
        .map_err(|e| AppError::infra(format!("{}: {e}", cast.display())))?;
    println!("wrote {} ({events} output events)", cast.display());
    Ok(EXIT_PASS)
}

/// `xstack runs [DIR]`: the recorded runs, newest first.
pub fn runs(dir: Option<&Path>, out: &mut dyn Write) -> Result<i32, AppError> {
    let dir = runs_dir(dir);
    if !dir.is_dir() {
        return Err(AppError::usage(format!(
            "{}: no such runs folder",
            dir.display()
        )));
    }
    let list = crate::replay::runs::list(&dir);
    let _ = out.write_all(crate::replay::runs::table(&list).as_bytes());
    Ok(EXIT_PASS)
}

/// Plain `xstack`: the picker, then the chosen run or replay.
pub fn pick(theme: crate::ui::theme::Theme) -> Result<i32, AppError> {
    use crate::ui::picker::{Choice, Picker};
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err(AppError::usage(
            "the picker needs a terminal; try `xstack run TASK --headless` or `xstack demo`",
        ));
    }
    let tasks: Vec<Task> = task::discover(&task::tasks_dir())
        .iter()
        .filter_map(|d| Task::load(d).ok())
        .filter(|t| t.source_path().is_some())
        .collect();
    let runs = crate::replay::runs::list(&runs_dir(None));
    let choice = {
        let mut guard = crate::ui::terminal::TerminalGuard::enter()
            .map_err(|e| AppError::infra(format!("cannot set up the terminal: {e}")))?;
        crate::ui::picker::run(&mut guard.terminal, Picker::new(tasks, runs), &theme)
            .map_err(|e| AppError::infra(format!("terminal error: {e}")))?
    };
    match choice {
        Choice::Quit => Ok(EXIT_PASS),
        Choice::Replay(dir) => replay_tui(&dir, 1.0, theme),
        Choice::NewTask(repo) => init(InitArgs {
            repo,
            command: None,
            setup: None,
            metrics: Vec::new(),
            direction: None,
            reference_packages: None,
            packages: None,
            seeds: None,
            id: None,
            yes: false,
        }),
        Choice::Run { task, agent, mode } => {
            let opts = RunOptions {
                task: task.display().to_string(),
                agent: Some(agent),
                repo: None,
                mode,
                runs_dir: None,
                runner: None,
                headless: false,
                sandbox: None,
                config: Config::load()?,
            };
            run_tui(prepare(&opts)?, theme)
        }
    }
}

/// `xstack calibrate TASK [--seeds N] [--json]`: runs the task's PyTorch source once per seed
/// and prints the spread of each criterion's metric with a suggested `published` and
/// `tolerance` (TOML ready to paste, or JSON). Progress goes to stderr.
pub fn calibrate(
    task: &str,
    seeds: u64,
    vary_fixed_seed: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<i32, AppError> {
    let task = Task::load(&task::resolve(task)?)?;
    if seeds < 2 {
        return Err(crate::calibrate::CalibrateError::TooFewSeeds(seeds).into());
    }
    let cache = crate::env::cache_dir();
    let source = source_dir(&task, &cache)?;
    let mut progress = |line: String| eprintln!("{line}");
    let cal = crate::calibrate::calibrate(
        &task,
        &source,
        seeds,
        vary_fixed_seed,
        &cache,
        &mut progress,
    )?;
    let text = if json {
        let mut s = serde_json::to_string_pretty(&crate::calibrate::to_json(&cal))
            .map_err(|e| AppError::infra(e.to_string()))?;
        s.push('\n');
        s
    } else {
        crate::calibrate::render_toml(&cal)
    };
    out.write_all(text.as_bytes())
        .map_err(|e| AppError::infra(format!("cannot write the result: {e}")))?;
    Ok(EXIT_PASS)
}

impl From<crate::init::InitError> for AppError {
    fn from(e: crate::init::InitError) -> Self {
        if e.is_infra() {
            AppError::infra(e.to_string())
        } else {
            AppError::usage(e.to_string())
        }
    }
}

/// `xstack init` on the user's terminal: messages and the live run on stdout, questions read
/// from stdin when it is a terminal.
struct TerminalConsole {
    interactive: bool,
}

impl crate::init::Console for TerminalConsole {
    fn say(&mut self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}");
        let _ = stdout.flush();
    }

    fn output(&mut self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }

    fn ask(&mut self, question: &str) -> Option<String> {
        if !self.interactive {
            return None;
        }
        self.output(question);
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    }

    fn interactive(&self) -> bool {
        self.interactive
    }
}

/// The options of `xstack init` as the command line gives them.
#[derive(Debug, Clone)]
pub struct InitArgs {
    /// REPO.
    pub repo: PathBuf,
    /// `--command`.
    pub command: Option<String>,
    /// `--setup`.
    pub setup: Option<String>,
    /// `--metric`.
    pub metrics: Vec<String>,
    /// `--direction`: higher, lower or within.
    pub direction: Option<String>,
    /// `--reference-packages`.
    pub reference_packages: Option<Vec<String>>,
    /// `--packages`.
    pub packages: Option<Vec<String>>,
    /// `--seeds`.
    pub seeds: Option<u64>,
    /// `--id`.
    pub id: Option<String>,
    /// `--yes`.
    pub yes: bool,
}

/// `xstack init REPO ...`: makes `tasks/<id>/task.toml` from a repository; returns 0 when it
/// was written, 1 when the user declined.
pub fn init(args: InitArgs) -> Result<i32, AppError> {
    use std::io::IsTerminal;
    let direction = match args.direction.as_deref() {
        None => None,
        Some("higher") => Some(task::Direction::Higher),
        Some("lower") => Some(task::Direction::Lower),
        Some("within") => Some(task::Direction::Within),
        Some(other) => {
            return Err(AppError::usage(format!(
                "--direction {other}: use higher, lower or within"
            )));
        }
    };
    let opts = crate::init::InitOptions {
        repo: args.repo,
        command: args.command,
        setup: args.setup,
        metrics: args.metrics,
        direction,
        reference_packages: args.reference_packages,
        packages: args.packages,
        seeds: args.seeds,
        id: args.id,
        yes: args.yes,
        tasks_dir: task::tasks_dir(),
        cache_dir: crate::env::cache_dir(),
    };
    let mut console = TerminalConsole {
        interactive: std::io::stdin().is_terminal(),
    };
    match crate::init::run(&opts, &mut console)? {
        crate::init::Outcome::Written(_) => Ok(EXIT_PASS),
        crate::init::Outcome::Declined => Ok(EXIT_FAIL),
    }
}

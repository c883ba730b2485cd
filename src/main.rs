//! The `xstack` command line (SPEC §1): each subcommand is a thin call into the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use xstack::app::{self, AppError, RunOptions};
use xstack::session::event::Mode;
use xstack::ui::theme::Theme;

#[derive(Debug, Parser)]
#[command(
    name = "xstack",
    version,
    about = "Watch and steer a coding agent porting a PyTorch repository to JAX, graded against the published result."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// The bundled digits-mlp task with its scripted agent, in auto mode.
    Demo,
    /// One supervised migration.
    Run {
        /// Task folder or task id.
        task: String,
        /// script:PATH, shell, or cmd:TEMPLATE (default: the task's demo trajectory).
        #[arg(long)]
        agent: Option<String>,
        /// No screen: print progress lines.
        #[arg(long)]
        headless: bool,
        /// Wait for `n` before each stage.
        #[arg(long, conflicts_with = "auto")]
        step: bool,
        /// Run through (the default).
        #[arg(long)]
        auto: bool,
        /// Where verify runs (default: local).
        #[arg(long)]
        runner: Option<String>,
        /// Folder for run folders (default: $XSTACK_RUNS_DIR or ./runs).
        #[arg(long)]
        runs_dir: Option<PathBuf>,
        /// Colour theme: dark, light, high-contrast, or a theme file.
        #[arg(long)]
        theme: Option<String>,
    },
    /// Verify and grade an existing repository against the task, no agent.
    Grade {
        /// Task folder or task id.
        task: String,
        /// The repository to grade.
        #[arg(long)]
        repo: PathBuf,
        /// Where verify runs (default: local).
        #[arg(long)]
        runner: Option<String>,
        /// No screen: print progress lines.
        #[arg(long)]
        headless: bool,
        /// Folder for run folders.
        #[arg(long)]
        runs_dir: Option<PathBuf>,
    },
    /// Headless batch: tasks × agents × repeats over a pool of runners; resumable.
    Bench {
        /// Task folders or ids.
        #[arg(long = "task", required = true, num_args = 1..)]
        tasks: Vec<String>,
        /// Agent specs.
        #[arg(long = "agent", required = true, num_args = 1..)]
        agents: Vec<String>,
        /// Trials per task and agent.
        #[arg(long, default_value_t = 1)]
        repeats: u32,
        /// Trials at once (default: the number of runners).
        #[arg(long)]
        jobs: Option<usize>,
        /// Where verify runs; several form a pool (default: local).
        #[arg(long = "runner", num_args = 1..)]
        runners: Vec<String>,
        /// The bench folder: one run folder per trial, report.md and report.json.
        #[arg(long)]
        out: PathBuf,
        /// Run trials that had an infrastructure failure again.
        #[arg(long)]
        retry_failed: bool,
        /// Stop a trial after this many seconds and count it as `timeout`.
        #[arg(long, value_name = "S")]
        trial_timeout: Option<u64>,
    },
    /// Validate task folders (all under the tasks folder when none is named).
    Check {
        /// Task folders or ids.
        tasks: Vec<String>,
    },
    /// A recorded run, rebuilt from its journal.
    Replay {
        /// The run folder.
        run_dir: PathBuf,
        /// Print the rebuilt timeline and exit as the run did.
        #[arg(long)]
        headless: bool,
        /// Playback speed.
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
    },
    /// Side-by-side, syntax-highlighted diff of two files or folders.
    Diff {
        /// The old file or folder (e.g. the PyTorch source).
        old: PathBuf,
        /// The new file or folder (e.g. the JAX port).
        new: PathBuf,
        /// Output width (default: $COLUMNS, the terminal's width, or 160).
        #[arg(long)]
        width: Option<usize>,
        /// Colours: auto (only on a terminal), always, never.
        #[arg(long, value_enum, default_value = "auto")]
        color: app::ColorChoice,
    },
    /// The bundled scripted agent (run by xstack inside the agent terminal).
    #[command(name = "agent-script", hide = true)]
    AgentScript {
        /// The trajectory file.
        path: PathBuf,
        /// The phase to play.
        #[arg(long)]
        phase: u8,
        /// The prompt or injected message.
        #[arg(long)]
        message_file: Option<PathBuf>,
    },
}

fn init_logging() {
    let dir = xstack::env::cache_dir();
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("xstack.log"))
    else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .try_init();
}

/// The theme named by `--theme`, else the default.
fn load_theme(flag: Option<&str>) -> Result<Theme, AppError> {
    match flag {
        Some(name) => Theme::load(name).map_err(|e| AppError::usage(e.to_string())),
        None => Ok(Theme::dark()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let result = dispatch(cli);
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("xstack: {}", e.message);
            ExitCode::from(e.code as u8)
        }
    }
}

fn dispatch(cli: Cli) -> Result<i32, AppError> {
    match cli.command {
        None => Err(AppError::usage(
            "the task picker needs the TUI; try `xstack run TASK --headless`",
        )),
        Some(Cmd::Demo) => {
            let task_dir = xstack::demo::materialize(&xstack::env::cache_dir())
                .map_err(|e| AppError::infra(format!("cannot write the demo task: {e}")))?;
            let opts = RunOptions {
                task: task_dir.display().to_string(),
                agent: None,
                repo: None,
                mode: Mode::Auto,
                runs_dir: None,
                runner: None,
            };
            app::run_tui(app::prepare(&opts)?, Theme::dark())
        }
        Some(Cmd::Run {
            task,
            agent,
            headless,
            theme,
            step,
            auto: _,
            runner,
            runs_dir,
        }) => {
            let opts = RunOptions {
                task,
                agent,
                repo: None,
                mode: if step { Mode::Step } else { Mode::Auto },
                runs_dir,
                runner,
            };
            let theme = load_theme(theme.as_deref())?;
            let prepared = app::prepare(&opts)?;
            if headless {
                app::run_headless(prepared, false)
            } else {
                app::run_tui(prepared, theme)
            }
        }
        Some(Cmd::Grade {
            task,
            repo,
            runner,
            headless,
            runs_dir,
        }) => {
            let opts = RunOptions {
                task,
                agent: None,
                repo: Some(repo),
                mode: Mode::Auto,
                runs_dir,
                runner,
            };
            let prepared = app::prepare(&opts)?;
            if headless {
                app::run_headless(prepared, false)
            } else {
                app::run_tui(prepared, Theme::dark())
            }
        }
        Some(Cmd::Bench {
            tasks,
            agents,
            repeats,
            jobs,
            runners,
            out,
            retry_failed,
            trial_timeout,
        }) => xstack::bench::run(
            &xstack::bench::BenchOptions {
                tasks,
                agents,
                repeats,
                jobs,
                runners,
                out,
                retry_failed,
                trial_timeout: trial_timeout.map(std::time::Duration::from_secs),
            },
            &mut std::io::stdout(),
        ),
        Some(Cmd::Check { tasks }) => Ok(app::check(&tasks, &mut std::io::stdout())),
        Some(Cmd::Replay {
            run_dir,
            headless: _,
            speed: _,
        }) => app::replay_headless(&run_dir, &mut std::io::stdout()),
        Some(Cmd::Diff {
            old,
            new,
            width,
            color,
        }) => app::diff(&old, &new, width, color, &mut std::io::stdout().lock()),
        Some(Cmd::AgentScript {
            path,
            phase,
            message_file,
        }) => app::agent_script(&path, phase, message_file.as_deref()),
    }
}

//! The `xstack` command line (SPEC §1): each subcommand is a thin call into the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand};
use strum::VariantArray;

use xstack::agent::sandbox::SandboxNet;
use xstack::cli::{self, AppError, ColorChoice, RunOptions};
use xstack::config::Config;
use xstack::event::Mode;
use xstack::init::InitOptions;
use xstack::replay::cast::CastPane;
use xstack::task::{Direction, Framework};
use xstack::ui::theme::Theme;

#[derive(Debug, Parser)]
#[command(
    name = "xstack",
    version,
    about = "Watch and steer a coding agent porting a repository between PyTorch and JAX (either way), graded against the published result."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// The bundled digits-mlp task with its scripted agent, in auto mode.
    Demo {
        /// Colour theme: dark, light, high-contrast, or a theme file.
        #[arg(long)]
        theme: Option<String>,
    },
    /// One supervised migration.
    Run(RunArgs),
    /// Verify and grade an existing repository against the task, no agent.
    Grade(GradeArgs),
    /// Headless batch: tasks × agents × repeats over a pool of runners; resumable.
    Bench(BenchArgs),
    /// The bench report (tables, intervals, figures) of loose run folders; runs nothing.
    Report {
        /// Run folders.
        #[arg(required = true)]
        run_dirs: Vec<PathBuf>,
        /// Where report.md, report.json, the figures and site/ go.
        #[arg(long, default_value = "report")]
        out: PathBuf,
    },
    /// A static site of a tasks folder (DIR/site/): an index of every task and a page per task.
    Catalog {
        /// The tasks folder (default: $XSTACK_TASKS_DIR, else ./tasks).
        tasks: Option<PathBuf>,
        /// Where site/ goes (`xstack view DIR` serves it).
        #[arg(long)]
        out: PathBuf,
        /// A bench folder whose trials give each task's verdicts (repeatable).
        #[arg(long = "bench")]
        benches: Vec<PathBuf>,
    },
    /// Serve the static site of a bench or report folder (DIR/site/) on localhost.
    View {
        /// The bench or report folder (or its site/ folder).
        dir: PathBuf,
        /// The port on 127.0.0.1 (0: any free one).
        #[arg(long, default_value_t = 8000)]
        port: u16,
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
        /// Colour theme: dark, light, high-contrast, or a theme file.
        #[arg(long)]
        theme: Option<String>,
    },
    /// Run the source (PyTorch or JAX, as the task says) once per seed; print each
    /// criterion's spread and a suggested published value and tolerance.
    Calibrate {
        /// Task folder or task id.
        task: String,
        /// Number of runs (XSTACK_SEED = 0..N-1).
        #[arg(long, default_value_t = xstack::calibrate::DEFAULT_SEEDS)]
        seeds: u64,
        /// When every seed gives the same values and the source fixes its seed, run the seeds
        /// again on a copy of the source whose fixed seed is offset by XSTACK_SEED.
        #[arg(long)]
        vary_fixed_seed: bool,
        /// Print a JSON object instead of TOML.
        #[arg(long)]
        json: bool,
    },
    /// Make a task from a PyTorch or JAX repository: run it once, find its metrics, write
    /// tasks/<id>/task.toml after review.
    Init(InitArgs),
    /// Side-by-side, syntax-highlighted diff of two files or folders.
    Diff {
        /// The old file or folder (e.g. the source).
        old: PathBuf,
        /// The new file or folder (e.g. the port).
        new: PathBuf,
        /// Output width (default: $COLUMNS, the terminal's width, or 160).
        #[arg(long)]
        width: Option<usize>,
        /// Colours: auto (only on a terminal), always, never.
        #[arg(long, default_value = "auto", value_parser = one_of(ColorChoice::VARIANTS, ColorChoice::as_str))]
        color: ColorChoice,
    },
    /// Run the task's parity probe in the source and in DIR and compare the tensors: exit 0
    /// all match, 1 a tensor diverges, 2 no [parity] section, 3 the probe could not run.
    Parity {
        /// Task folder or task id.
        task: String,
        /// The port to compare with the source (never written: the probe runs in a copy).
        #[arg(long)]
        repo: PathBuf,
        /// Print the report as JSON (result.json's `parity` object).
        #[arg(long)]
        json: bool,
    },
    /// asciicast v2 of a recorded terminal pane.
    Export {
        /// The run folder.
        run_dir: PathBuf,
        /// The asciicast file to write.
        #[arg(long)]
        cast: PathBuf,
        /// Which terminal.
        #[arg(long, default_value = "agent", value_parser = one_of(CastPane::VARIANTS, CastPane::as_str))]
        pane: CastPane,
    },
    /// The recorded runs, newest first.
    Runs {
        /// The runs folder (default: $XSTACK_RUNS_DIR or ./runs).
        dir: Option<PathBuf>,
    },
    /// The cached Python environments: build them ahead, list them, remove the unused.
    Env {
        #[command(subcommand)]
        command: EnvCmd,
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

/// The options of `xstack init`, as parsed; [`InitArgs::into_options`] makes the
/// library's [`InitOptions`] of them.
#[derive(Debug, Args)]
struct InitArgs {
    /// The repository (only read).
    repo: PathBuf,
    /// The experiment command (else proposed from the README and entry files, and asked).
    #[arg(long)]
    command: Option<String>,
    /// The experiment is this notebook (relative to REPO), run top to bottom; written as
    /// `[run] notebook`.
    #[arg(long, conflicts_with = "command")]
    notebook: Option<String>,
    /// The notebook's code cells that form the experiment (`0-6, 21-34`, indices from 0 as
    /// nbformat numbers cells), the others left out of every run; written as `[run] cells`.
    #[arg(long, requires = "notebook", value_name = "RANGES")]
    cells: Option<String>,
    /// A shell snippet run before the command in each run's copy (preparing data); written
    /// as `[env] setup`.
    #[arg(long)]
    setup: Option<String>,
    /// A metric to grade on (repeatable; default: those that look like evaluation results).
    #[arg(long = "metric", value_name = "NAME")]
    metrics: Vec<String>,
    /// Direction of every criterion (default: within, around the claim or the measured value).
    #[arg(long, value_parser = one_of(Direction::VARIANTS, Direction::as_str))]
    direction: Option<Direction>,
    /// The source's framework, torch or jax (default: from the experiment's imports); the
    /// port is in the other one.
    #[arg(long = "from", value_name = "FRAMEWORK", value_parser = one_of(Framework::VARIANTS, Framework::as_str))]
    from: Option<Framework>,
    /// The source side's packages (default: read from the repository: requirements files,
    /// setup.py, setup.cfg, pyproject.toml, environment.yml, and the experiment's imports);
    /// `none` for no environment.
    #[arg(long, num_args = 1.., value_delimiter = ',', value_name = "P")]
    reference_packages: Option<Vec<String>>,
    /// The port side's packages (default: the reference packages without the source's
    /// framework family, plus the port's: jax, flax, optax, or torch).
    #[arg(long, num_args = 1.., value_delimiter = ',', value_name = "P")]
    packages: Option<Vec<String>>,
    /// Runs for the published value and tolerance (XSTACK_SEED = 0..N-1; default: one run).
    #[arg(long)]
    seeds: Option<u64>,
    /// Task id (default: the folder's name, sanitized).
    #[arg(long)]
    id: Option<String>,
    /// A paper's text or markdown to read claims from, beside the repository's READMEs,
    /// docs and notebooks.
    #[arg(long, value_name = "FILE")]
    paper: Option<PathBuf>,
    /// Write the task graded against a claim its runs do not reproduce (recorded as
    /// `not_reproduced`).
    #[arg(long)]
    accept_unreproduced: bool,
    /// Install the repository's pinned requirements that cannot install on this Python
    /// without their versions (said in the review and in task.toml).
    #[arg(long)]
    relax_pins: bool,
    /// Seconds init's first run may take: an experiment that trains until stopped, or runs
    /// far past a budget, is stopped there and init says what can shorten it.
    #[arg(long, value_name = "SECONDS", default_value_t = xstack::init::DEFAULT_RUN_LIMIT_S)]
    run_limit: u64,
    /// Accept the proposal without review.
    #[arg(long)]
    yes: bool,
}

impl InitArgs {
    /// The options `xstack::init::run` takes, the folders from the environment.
    fn into_options(self) -> InitOptions {
        InitOptions {
            repo: self.repo,
            command: self.command,
            notebook: self.notebook,
            cells: self.cells,
            setup: self.setup,
            metrics: self.metrics,
            direction: self.direction,
            from: self.from,
            reference_packages: self.reference_packages,
            packages: self.packages,
            seeds: self.seeds,
            id: self.id,
            paper: self.paper,
            accept_unreproduced: self.accept_unreproduced,
            relax_pins: self.relax_pins,
            run_limit: self.run_limit,
            yes: self.yes,
            tasks_dir: xstack::task::tasks_dir(),
            cache_dir: xstack::env::cache_dir(),
        }
    }
}

/// A value parser for a closed set of values: clap lists each by `name` in the help and in
/// its error, and gives back the one named.
fn one_of<T: Copy + Send + Sync + 'static>(
    variants: &'static [T],
    name: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T> {
    clap::builder::PossibleValuesParser::new(variants.iter().map(|v| name(*v))).try_map(
        move |given: String| {
            variants
                .iter()
                .copied()
                .find(|v| name(*v) == given)
                .ok_or_else(|| format!("not one of the possible values: {given}"))
        },
    )
}

/// The options of `xstack run`.
#[derive(Debug, Args)]
struct RunArgs {
    /// Task folder or task id.
    #[arg(required_unless_present = "resume")]
    task: Option<String>,
    /// Continue an interrupted run from its journal, appending to it.
    #[arg(long, conflicts_with_all = ["task", "agent"])]
    resume: Option<PathBuf>,
    /// script:PATH, shell, cmd:TEMPLATE, a preset (claude, codex, aider, gemini,
    /// opencode) or an agent of the config file (default: the task's demo trajectory).
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
    /// Confine the agent with bubblewrap: the workspace writable, the rest read-only.
    #[arg(long)]
    sandbox: bool,
    /// The network in the sandbox: none, or allow (the host's network).
    #[arg(long, requires = "sandbox", value_parser = one_of(SandboxNet::VARIANTS, SandboxNet::as_str))]
    sandbox_net: Option<SandboxNet>,
}

/// The options of `xstack grade`.
#[derive(Debug, Args)]
struct GradeArgs {
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
}

/// The options of `xstack bench`.
#[derive(Debug, Args)]
struct BenchArgs {
    /// Task folders or ids.
    #[arg(long = "task", required_unless_present = "report", num_args = 1..)]
    tasks: Vec<String>,
    /// Agent specs.
    #[arg(long = "agent", required_unless_present = "report", num_args = 1..)]
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
    /// The bench folder: one run folder per trial, report.md, report.json, figures, site/.
    #[arg(long, required_unless_present = "report")]
    out: Option<PathBuf>,
    /// Rebuild the report, figures and site of this bench folder; runs nothing.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = [
            "tasks", "agents", "out", "repeats", "jobs", "runners", "retry_failed",
            "trial_timeout", "allow_unconfined"
        ]
    )]
    report: Option<PathBuf>,
    /// Run trials that had an infrastructure failure again.
    #[arg(long)]
    retry_failed: bool,
    /// Stop a trial after this many seconds and count it as `timeout`.
    #[arg(long, value_name = "S")]
    trial_timeout: Option<u64>,
    /// Run trials whose verify cannot be confined (no bubblewrap, a remote runner).
    #[arg(long)]
    allow_unconfined: bool,
}

#[derive(Debug, Subcommand)]
enum EnvCmd {
    /// Build (or reuse) each task's target and reference environments, one line each.
    Build {
        /// Task folders or ids.
        #[arg(required = true)]
        tasks: Vec<String>,
    },
    /// Every cached environment: side, size it alone holds, last use, tasks, packages.
    List,
    /// Remove the environments unused for N days (never one a running xstack holds).
    Prune {
        /// Remove those unused for this many days.
        #[arg(long, default_value_t = 30, value_name = "N")]
        unused_days: u64,
        /// Remove every environment and the package store they share.
        #[arg(long, conflicts_with = "unused_days")]
        all: bool,
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

/// The theme named by `--theme`, else the config's, else the default.
fn load_theme(flag: Option<&str>, config: &Config) -> Result<Theme, AppError> {
    match flag.or(config.theme.as_deref()) {
        Some(name) => Theme::load(name).map_err(|e| AppError::usage(e.to_string())),
        None => Ok(Theme::dark()),
    }
}

fn main() -> ExitCode {
    std::sync::LazyLock::force(&xstack::process::STARTED);
    let cli = Cli::parse();
    init_logging();
    xstack::reaper::become_subreaper();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        xstack::reaper::end_descendants(std::time::Duration::ZERO);
        previous(info);
    }));
    let result = dispatch(cli);
    // Whatever the agent or the run left behind (a `setsid` daemon, a double fork) ends here.
    xstack::reaper::end_descendants(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            eprintln!("xstack: {}", e.message);
            ExitCode::from(e.code as u8)
        }
    }
}

/// Runs the subcommand `cli` names (the picker without one); the process's exit code.
fn dispatch(cli: Cli) -> Result<i32, AppError> {
    match cli.command {
        None => cli::pick(Theme::dark()),
        Some(Cmd::Demo { theme }) => demo(theme.as_deref()),
        Some(Cmd::Run(args)) => run(args),
        Some(Cmd::Grade(args)) => grade(args),
        Some(Cmd::Bench(args)) => bench(args),
        Some(Cmd::Report { run_dirs, out }) => xstack::site::command::with_site(
            &out,
            xstack::bench::rebuild::loose_report(&run_dirs, &out, &mut std::io::stdout()),
            &mut std::io::stdout(),
        ),
        Some(Cmd::Catalog {
            tasks,
            out,
            benches,
        }) => xstack::site::command::catalog(
            &tasks.unwrap_or_else(xstack::task::tasks_dir),
            &out,
            &benches,
            &mut std::io::stdout(),
        ),
        Some(Cmd::View { dir, port }) => {
            xstack::site::command::view(&dir, port, &mut std::io::stdout())
        }
        Some(Cmd::Check { tasks }) => Ok(cli::check(&tasks, &mut std::io::stdout())),
        Some(Cmd::Replay {
            run_dir,
            headless,
            speed,
            theme,
        }) => replay(&run_dir, headless, speed, theme.as_deref()),
        Some(Cmd::Export {
            run_dir,
            cast,
            pane,
        }) => cli::export_cast(&cli::ExportOptions {
            run_dir,
            cast,
            pane,
        }),
        Some(Cmd::Runs { dir }) => cli::runs(dir.as_deref(), &mut std::io::stdout()),
        Some(Cmd::Calibrate {
            task,
            seeds,
            vary_fixed_seed,
            json,
        }) => cli::calibrate(
            &cli::CalibrateOptions {
                task,
                seeds,
                vary_fixed_seed,
                json,
            },
            &mut std::io::stdout(),
        ),
        Some(Cmd::Init(args)) => cli::init(args.into_options()),
        Some(Cmd::Diff {
            old,
            new,
            width,
            color,
        }) => cli::diff(
            &cli::DiffCommandOptions {
                old,
                new,
                width,
                color,
            },
            &mut std::io::stdout().lock(),
        ),
        Some(Cmd::Parity { task, repo, json }) => cli::parity(
            &cli::ParityOptions { task, repo, json },
            &mut std::io::stdout(),
        ),
        Some(Cmd::Env { command }) => env(command),
        Some(Cmd::AgentScript {
            path,
            phase,
            message_file,
        }) => cli::agent_script(&path, phase, message_file.as_deref()),
    }
}

/// `xstack demo`: the bundled task, written to the cache, run in the TUI with `theme`.
fn demo(theme: Option<&str>) -> Result<i32, AppError> {
    let config = Config::load()?;
    let theme = load_theme(theme, &config)?;
    let task_dir = xstack::demo::materialize(&xstack::env::cache_dir())
        .map_err(|e| AppError::infra(format!("cannot write the demo task: {e}")))?;
    let opts = RunOptions::new(task_dir.display().to_string(), config);
    cli::run_tui(cli::prepare(&opts)?, theme)
}

/// `xstack run`: a new run of a task, or an interrupted one resumed; headless or in the TUI.
fn run(args: RunArgs) -> Result<i32, AppError> {
    let config = Config::load()?;
    let theme = load_theme(args.theme.as_deref(), &config)?;
    let mode = if args.step { Mode::Step } else { Mode::Auto };
    let prepared = match args.resume {
        Some(run_dir) => {
            cli::prepare_resume(&run_dir, args.step.then_some(Mode::Step), args.headless)?
        }
        None => cli::prepare(
            &RunOptions::new(args.task.unwrap_or_default(), config)
                .agent(args.agent)
                .mode(mode)
                .runs_dir(args.runs_dir)
                .runner(args.runner)
                .headless(args.headless)
                .sandbox(args.sandbox.then_some(args.sandbox_net)),
        )?,
    };
    if args.headless {
        cli::run_headless(prepared, false)
    } else {
        cli::run_tui(prepared, theme)
    }
}

/// `xstack grade`: an existing repository verified and graded against the task, no agent.
fn grade(args: GradeArgs) -> Result<i32, AppError> {
    let config = Config::load()?;
    let theme = load_theme(None, &config)?;
    let opts = RunOptions::new(args.task, config)
        .repo(args.repo)
        .runs_dir(args.runs_dir)
        .runner(args.runner)
        .headless(args.headless);
    let prepared = cli::prepare(&opts)?;
    if args.headless {
        cli::run_headless(prepared, false)
    } else {
        cli::run_tui(prepared, theme)
    }
}

/// `xstack bench`: the trials run into `--out`, or the report of `--report` rebuilt; then
/// the site.
fn bench(args: BenchArgs) -> Result<i32, AppError> {
    match (args.report, args.out) {
        (Some(dir), _) => xstack::site::command::with_site(
            &dir,
            xstack::bench::rebuild::bench_report(&dir, &mut std::io::stdout()),
            &mut std::io::stdout(),
        ),
        (None, Some(out)) => xstack::site::command::with_site(
            &out,
            xstack::bench::run(
                &xstack::bench::BenchOptions {
                    tasks: args.tasks,
                    agents: args.agents,
                    repeats: args.repeats,
                    jobs: args.jobs,
                    runners: args.runners,
                    out: out.clone(),
                    retry_failed: args.retry_failed,
                    trial_timeout: args.trial_timeout.map(std::time::Duration::from_secs),
                    allow_unconfined: args.allow_unconfined,
                },
                &mut std::io::stdout(),
            ),
            &mut std::io::stdout(),
        ),
        (None, None) => Err(AppError::usage("bench needs --out DIR (or --report DIR)")),
    }
}

/// `xstack replay`: the timeline printed (`headless`) or the run played in the TUI.
fn replay(
    run_dir: &std::path::Path,
    headless: bool,
    speed: f64,
    theme: Option<&str>,
) -> Result<i32, AppError> {
    if headless {
        cli::replay_headless(run_dir, &mut std::io::stdout())
    } else {
        let theme = load_theme(theme, &Config::load()?)?;
        cli::replay_tui(run_dir, speed, theme)
    }
}

/// `xstack env`: the cached environments built, listed or pruned.
fn env(command: EnvCmd) -> Result<i32, AppError> {
    match command {
        EnvCmd::Build { tasks } => cli::env_build(&tasks, &mut std::io::stdout()),
        EnvCmd::List => cli::env_list(&mut std::io::stdout()),
        EnvCmd::Prune { unused_days, all } => {
            cli::env_prune(unused_days, all, &mut std::io::stdout())
        }
    }
}

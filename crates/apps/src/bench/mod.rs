//! `xstack bench` (SPEC §1): trials = tasks × agents × repeats, run headless and in parallel,
//! each a normal run folder under `--out` (so any trial opens in `xstack replay`), with their
//! verify runs spread over a pool of runners. Resumable: a trial settled in an earlier
//! invocation is not run again. Writes `report.json`, `report.md` and the figures, and
//! `bench.json` (its plan), from which `xstack bench --report` rebuilds them.
//!
//! Trials run in this process, each a [`Driver`] on a shared runtime (see
//! docs/ARCHITECTURE.md for why not a subprocess per trial).

pub mod figures;
pub mod model;
pub mod progress;
pub mod rebuild;
pub mod record;
pub mod report;
pub mod stats;
pub mod tables;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::agent::AgentSpec;
use crate::cli::{self, AppError, RunOptions};
use crate::config::Config;
use crate::event::Command;
use crate::event::PhaseOutcome;
use crate::process::{EXIT_INFRA, EXIT_PASS};
use crate::runner::{RunnerPool, RunnerSpec};
use crate::session::driver::Driver;
use crate::session::recorder::{SharedState, lock};
use crate::session::result::RunResult;
use crate::task::{self, Task};

use progress::{Progress, RunningTrial};
use rebuild::BenchFile;
use record::{Plan, TrialKey, TrialRecord, TrialStatus};
use report::{NoVerdict, Report, TrialFailure, TrialRow};

/// How often the live table is redrawn.
const REDRAW: Duration = Duration::from_millis(500);
/// The lock file that keeps two benches out of one `--out` folder.
const LOCK_FILE: &str = ".bench.lock";

/// Options of `xstack bench`.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// `--task`: task folders or ids.
    pub tasks: Vec<String>,
    /// `--agent`: agent specs.
    pub agents: Vec<String>,
    /// `--repeats`.
    pub repeats: u32,
    /// `--jobs`: trials at once (default: the pool's size).
    pub jobs: Option<usize>,
    /// `--runner`: the pool (default: local).
    pub runners: Vec<String>,
    /// `--out`: the bench folder.
    pub out: PathBuf,
    /// `--retry-failed`: run infrastructure failures again.
    pub retry_failed: bool,
    /// `--trial-timeout`: a trial running longer is stopped and counted as `timeout`.
    pub trial_timeout: Option<Duration>,
    /// `--allow-unconfined`: run trials whose verify cannot be confined.
    pub allow_unconfined: bool,
}

/// A trial of this bench.
#[derive(Debug, Clone)]
struct Trial {
    key: TrialKey,
    /// The task folder (what `prepare` resolves).
    task_dir: PathBuf,
}

/// A trial running now.
struct Running {
    commands: mpsc::Sender<Command>,
    state: SharedState,
    label: String,
    since: Instant,
}

/// What a finished trial task reports.
struct Ended {
    index: usize,
    run_dir: PathBuf,
    code: i32,
    timed_out: bool,
    wall: Duration,
}

/// Runs the bench; returns the exit status (0 every trial ran, 3 some trial had an
/// infrastructure failure or the bench was interrupted).
pub fn run(opts: &BenchOptions, out: &mut dyn Write) -> Result<i32, AppError> {
    check_options(opts)?;
    let specs = opts
        .runners
        .iter()
        .map(|r| RunnerSpec::parse(r).map_err(|e| AppError::usage(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let pool = Arc::new(RunnerPool::from_specs(&specs));
    let jobs = opts.jobs.unwrap_or(pool.size());
    let trials = plan_trials(opts)?;
    // Whether verify can be confined is asked of the runners (on Slurm, a job) only when
    // some trial is left to run: a rerun of a settled bench touches no runner.
    let keys: Vec<TrialKey> = trials.iter().map(|t| t.key.clone()).collect();
    let to_run = record::plan(&keys, &record::scan(&opts.out), opts.retry_failed)
        .iter()
        .any(|p| matches!(p, Plan::Run(_)));
    if to_run && !opts.allow_unconfined {
        refuse_unconfined(&specs)?;
    }

    std::fs::create_dir_all(&opts.out)
        .map_err(|e| AppError::infra(format!("--out {}: {e}", opts.out.display())))?;
    let _lock = lock_out(&opts.out)?;
    let plan = BenchFile {
        tasks: dedup(trials.iter().map(|t| t.key.task.clone())),
        agents: opts.agents.clone(),
        repeats: opts.repeats,
        runners: opts_runners(&specs),
    };
    plan.write(&opts.out)
        .map_err(|e| AppError::infra(format!("cannot write the bench's plan: {e}")))?;
    let found = record::scan(&opts.out);
    let (mut folders, queue) = keep_or_queue(record::plan(&keys, &found, opts.retry_failed))?;
    let shown = |dir: &Path| opts.out.join(dir.file_name().unwrap_or_default());
    // The report's rows of the trials that have a folder.
    let rows_of = |folders: &[Option<PathBuf>]| -> Vec<TrialRow> {
        folders
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                d.as_ref()
                    .map(|d| report::row(&trials[i].key, d, &shown(d)))
            })
            .collect()
    };
    let earlier = rows_of(&folders);
    let _ = writeln!(
        out,
        "bench: {} ({} × {} × {}): {} settled in {}, {} to run, {} at a time; runners: {}",
        count(trials.len(), "trial"),
        count(opts.tasks.len(), "task"),
        count(opts.agents.len(), "agent"),
        count(opts.repeats as usize, "repeat"),
        earlier.len(),
        opts.out.display(),
        queue.len(),
        jobs,
        pool.describe()
    );
    if !queue.is_empty() {
        print_to_build(&trials, out);
    }
    let live = std::io::stdout().is_terminal();
    let mut progress = Progress::new(live, trials.len(), &opts.agents, &earlier);

    let runtime = cli::runtime()?;
    let outcome = runtime.block_on(execute(
        Execution {
            opts,
            trials: &trials,
            pool,
            jobs,
            shown: &shown,
            config: Config::load()?,
        },
        queue,
        &mut folders,
        &mut progress,
        out,
    ));
    runtime.shutdown_timeout(Duration::from_millis(500));

    let rows = rows_of(&folders);
    let report = rebuild::write_report(&opts.out, &plan, trials.len(), rows, out)?;
    Ok(exit_status(&report, &outcome, out))
}

/// Refuses `--repeats 0`, `--jobs 0` and `--trial-timeout 0`.
fn check_options(opts: &BenchOptions) -> Result<(), AppError> {
    if opts.repeats == 0 {
        return Err(AppError::usage("--repeats must be at least 1"));
    }
    if opts.jobs == Some(0) {
        return Err(AppError::usage("--jobs must be at least 1"));
    }
    if opts.trial_timeout == Some(Duration::ZERO) {
        return Err(AppError::usage("--trial-timeout must be at least 1 second"));
    }
    Ok(())
}

/// An error naming what each runner of `specs` (the local one when none) lacks to confine
/// verify; none where all can.
fn refuse_unconfined(specs: &[RunnerSpec]) -> Result<(), AppError> {
    let local = [RunnerSpec::Local];
    let checked = if specs.is_empty() { &local[..] } else { specs };
    let gaps: Vec<String> = checked
        .iter()
        .filter_map(|s| crate::runner::confinement(s).err())
        .collect();
    if gaps.is_empty() {
        return Ok(());
    }
    Err(AppError::infra(format!(
        "bench: {}; a bench refuses trials whose verify is not confined (add --allow-unconfined to run them anyway)",
        gaps.join("; ")
    )))
}

/// Acts on each trial's plan: the folder of a settled trial kept, the folders of one to run
/// again removed and the trial queued. Returns each trial's folder (None for those to run)
/// and the queue.
fn keep_or_queue(plans: Vec<Plan>) -> Result<(Vec<Option<PathBuf>>, VecDeque<usize>), AppError> {
    let mut folders: Vec<Option<PathBuf>> = vec![None; plans.len()];
    let mut queue = VecDeque::new();
    for (i, plan) in plans.into_iter().enumerate() {
        match plan {
            Plan::Done(dir) => folders[i] = Some(dir),
            Plan::Run(earlier) => {
                for dir in earlier {
                    std::fs::remove_dir_all(&dir).map_err(|e| {
                        AppError::infra(format!("cannot remove {}: {e}", dir.display()))
                    })?;
                }
                queue.push_back(i);
            }
        }
    }
    Ok((folders, queue))
}

/// One line per environment the tasks of `trials` will build first (each task once).
fn print_to_build(trials: &[Trial], out: &mut dyn Write) {
    let cache = crate::env::cache_dir();
    let mut seen = Vec::new();
    for trial in trials {
        if seen.contains(&trial.task_dir) {
            continue;
        }
        seen.push(trial.task_dir.clone());
        if let Ok(task) = Task::load(&trial.task_dir) {
            for line in crate::env::store::to_build(&cache, &task) {
                let _ = writeln!(out, "bench: {line}");
            }
        }
    }
}

/// The bench's exit status from its `report` and how its trial loop ended, with a line
/// saying how to run the rest or the failed trials again.
fn exit_status(report: &Report, outcome: &Outcome, out: &mut dyn Write) -> i32 {
    let unsettled = report.trials.iter().any(|t| {
        matches!(
            t.failure,
            Some(TrialFailure::NoVerdict(
                NoVerdict::Infra | NoVerdict::Interrupted
            ))
        )
    });
    if outcome.interrupted {
        let _ = writeln!(
            out,
            "interrupted: run the same command again to run the rest"
        );
    }
    if outcome.interrupted || outcome.failed_to_start || unsettled {
        if unsettled && !outcome.interrupted {
            let _ = writeln!(
                out,
                "some trials had an infrastructure failure; --retry-failed runs them again"
            );
        }
        EXIT_INFRA
    } else {
        EXIT_PASS
    }
}

/// `1 task`, `3 tasks`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn opts_runners(specs: &[RunnerSpec]) -> String {
    if specs.is_empty() {
        "local".to_string()
    } else {
        specs
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// Resolves and checks every task and agent (exit 2 or 3 before anything runs) and lists the
/// trials in the order tasks × agents × repeats.
fn plan_trials(opts: &BenchOptions) -> Result<Vec<Trial>, AppError> {
    let cache = crate::env::cache_dir();
    let config = Config::load()?;
    let mut tasks: Vec<Task> = Vec::new();
    for t in &opts.tasks {
        let task = Task::load(&task::resolve(t)?)?;
        if tasks.iter().any(|other| other.spec.id == task.spec.id) {
            return Err(AppError::usage(format!(
                "--task {t}: task {} is given twice",
                task.spec.id
            )));
        }
        tasks.push(task);
    }
    for (i, agent) in opts.agents.iter().enumerate() {
        if opts.agents[..i].contains(agent) {
            return Err(AppError::usage(format!(
                "--agent {agent} is given twice (use --repeats)"
            )));
        }
    }
    let mut trials = Vec::new();
    for task in &tasks {
        for agent in &opts.agents {
            if cli::checked_agent(task, Some(agent), &cache, &config, true)? == AgentSpec::Shell {
                return Err(AppError::usage(
                    "--agent shell needs a person at the terminal; a bench runs without one",
                ));
            }
            for repeat in 1..=opts.repeats {
                trials.push(Trial {
                    key: TrialKey {
                        task: task.spec.id.clone(),
                        agent: agent.clone(),
                        repeat,
                    },
                    task_dir: task.dir.clone(),
                });
            }
        }
    }
    Ok(trials)
}

/// Holds an exclusive lock on `out` for the bench's life (or a report's rebuilding).
pub(crate) fn lock_out(out: &Path) -> Result<std::fs::File, AppError> {
    use std::os::fd::AsRawFd;
    let path = out.join(LOCK_FILE);
    let file = std::fs::File::create(&path)
        .map_err(|e| AppError::infra(format!("{}: {e}", path.display())))?;
    // SAFETY: flock on a valid open descriptor has no memory-safety preconditions.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if !locked {
        return Err(AppError::usage(format!(
            "another xstack bench is using {}",
            out.display()
        )));
    }
    Ok(file)
}

/// What the trial loop needs to know.
struct Execution<'a> {
    opts: &'a BenchOptions,
    trials: &'a [Trial],
    pool: Arc<RunnerPool>,
    jobs: usize,
    shown: &'a dyn Fn(&Path) -> PathBuf,
    /// The user's config file (agents defined there can be benched).
    config: Config,
}

/// How the trial loop ended.
struct Outcome {
    interrupted: bool,
    failed_to_start: bool,
}

/// Runs the queued trials, `jobs` at a time, until the queue is empty or a signal stops the
/// bench (running trials are then aborted and recorded as interrupted).
async fn execute(
    ex: Execution<'_>,
    mut queue: VecDeque<usize>,
    folders: &mut [Option<PathBuf>],
    progress: &mut Progress,
    out: &mut dyn Write,
) -> Outcome {
    let (signal_tx, mut signals) = mpsc::channel::<()>(4);
    spawn_signal_listener(signal_tx);
    let mut set: JoinSet<Ended> = JoinSet::new();
    let mut running: BTreeMap<usize, Running> = BTreeMap::new();
    let mut stopping = false;
    let mut failed_to_start = false;
    let mut retried: BTreeSet<usize> = BTreeSet::new();
    let mut redraw = tokio::time::interval(REDRAW);
    loop {
        while !stopping && running.len() < ex.jobs {
            let Some(index) = queue.pop_front() else {
                break;
            };
            match start(&ex, index, &mut set) {
                Ok(entry) => {
                    running.insert(index, entry);
                }
                Err(e) => {
                    failed_to_start = true;
                    progress.clear(out);
                    let _ = writeln!(
                        out,
                        "{} × {} #{}: cannot start: {}",
                        ex.trials[index].key.task,
                        crate::agent::label(&ex.trials[index].key.agent),
                        ex.trials[index].key.repeat,
                        e.message
                    );
                }
            }
        }
        if set.is_empty() {
            break;
        }
        tokio::select! {
            joined = set.join_next() => {
                let Some(Ok(ended)) = joined else { continue };
                running.remove(&ended.index);
                let row = settle(&ex, &ended, stopping);
                progress.clear(out);
                // An infrastructure failure is retried once, on another runner when the pool
                // has one (a runner that lost its connection has left the pool).
                if row.failure == Some(TrialFailure::NoVerdict(NoVerdict::Infra))
                    && !stopping
                    && ex.pool.size() > 1
                    && retried.insert(ended.index)
                {
                    let _ = writeln!(
                        out,
                        "{} × {} #{}: infrastructure failure, retrying once: {}",
                        row.task,
                        crate::agent::label(&row.agent),
                        row.repeat,
                        RunResult::read(&ended.run_dir)
                            .ok()
                            .and_then(|r| r.error)
                            .unwrap_or_default()
                    );
                    if let Err(e) = std::fs::remove_dir_all(&ended.run_dir) {
                        tracing::warn!("cannot remove {}: {e}", ended.run_dir.display());
                    }
                    queue.push_front(ended.index);
                    continue;
                }
                folders[ended.index] = Some(ended.run_dir.clone());
                let extra = match row.failure {
                    Some(TrialFailure::NoVerdict(NoVerdict::Infra)) => RunResult::read(&ended.run_dir)
                        .ok()
                        .and_then(|r| r.error)
                        .map(|e| format!(": {}", e.lines().next().unwrap_or_default()))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                progress.finished(&row, &extra, out);
                progress.draw(&running_view(&running), queue.len(), out);
            }
            _ = redraw.tick() => progress.draw(&running_view(&running), queue.len(), out),
            Some(()) = signals.recv() => {
                if !stopping {
                    stopping = true;
                    progress.clear(out);
                    let _ = writeln!(out, "stopping: ending {} running trials", running.len());
                    for r in running.values() {
                        if let Err(e) = r.commands.try_send(Command::Abort) {
                            tracing::warn!("cannot stop a trial: {e}");
                        }
                    }
                }
            }
        }
    }
    progress.clear(out);
    Outcome {
        interrupted: stopping,
        failed_to_start,
    }
}

fn running_view(running: &BTreeMap<usize, Running>) -> Vec<RunningTrial> {
    running
        .values()
        .map(|r| {
            let stage = {
                let (phase, stage) = lock(&r.state).at.step();
                if phase == 0 {
                    stage.as_str().to_string()
                } else {
                    format!("phase {phase} {}", stage.as_str())
                }
            };
            RunningTrial {
                label: r.label.clone(),
                stage,
                since: r.since,
            }
        })
        .collect()
}

/// Creates the trial's run folder and starts its session.
fn start(ex: &Execution<'_>, index: usize, set: &mut JoinSet<Ended>) -> Result<Running, AppError> {
    let trial = &ex.trials[index];
    let since = Instant::now();
    let prepared = cli::prepare(
        &RunOptions::new(trial.task_dir.display().to_string(), ex.config.clone())
            .agent(Some(trial.key.agent.clone()))
            .runs_dir(Some(ex.opts.out.clone()))
            .headless(true),
    )?;
    let cli::Prepared {
        mut config,
        state,
        recorder,
        run_id,
        started_at,
        ..
    } = prepared;
    config.runner = ex.pool.clone();
    let run_dir = config.run_dir.clone();
    TrialRecord {
        key: trial.key.clone(),
        status: TrialStatus::Running,
        exit_code: None,
        error: None,
        wall_s: None,
    }
    .write(&run_dir)
    .map_err(|e| AppError::infra(format!("{}: {e}", run_dir.display())))?;
    let (tx, rx) = mpsc::channel::<Command>(16);
    let timeout_tx = tx.clone();
    let limit = ex.opts.trial_timeout;
    set.spawn(async move {
        let mut handle = tokio::spawn(Driver::new(config, recorder, rx, run_id, started_at).run());
        let mut timed_out = false;
        let joined = match limit {
            Some(limit) => tokio::select! {
                joined = &mut handle => joined,
                _ = tokio::time::sleep(limit) => {
                    timed_out = true;
                    if let Err(e) = timeout_tx.send(Command::Abort).await {
                        tracing::warn!("cannot stop a trial past its limit: {e}");
                    }
                    handle.await
                }
            },
            None => handle.await,
        };
        Ended {
            index,
            run_dir,
            code: joined.unwrap_or(EXIT_INFRA),
            timed_out,
            wall: since.elapsed(),
        }
    });
    Ok(Running {
        commands: tx,
        state,
        label: format!(
            "{} × {} #{}",
            trial.key.task,
            crate::agent::label(&trial.key.agent),
            trial.key.repeat
        ),
        since,
    })
}

/// Records how a trial ended and returns its report row.
fn settle(ex: &Execution<'_>, ended: &Ended, stopping: bool) -> TrialRow {
    let trial = &ex.trials[ended.index];
    let result = RunResult::read(&ended.run_dir).ok();
    let agent_failed = result.as_ref().is_some_and(|r| {
        r.phases
            .iter()
            .any(|p| p.outcome == PhaseOutcome::AgentFailure)
    });
    let status = match ended.code {
        0 | 1 => TrialStatus::Finished,
        _ if ended.timed_out => TrialStatus::Timeout,
        _ if stopping => TrialStatus::Interrupted,
        _ if agent_failed => TrialStatus::AgentFailure,
        _ => TrialStatus::Infra,
    };
    let record = TrialRecord {
        key: trial.key.clone(),
        status,
        exit_code: Some(ended.code),
        error: result.and_then(|r| r.error),
        wall_s: Some((ended.wall.as_secs_f64() * 1000.0).round() / 1000.0),
    };
    if let Err(e) = record.write(&ended.run_dir) {
        tracing::error!("cannot record trial {}: {e}", ended.run_dir.display());
    }
    report::row(&trial.key, &ended.run_dir, &(ex.shown)(&ended.run_dir))
}

/// Sends one message per SIGINT, SIGTERM or SIGHUP.
fn spawn_signal_listener(tx: mpsc::Sender<()>) {
    use tokio::signal::unix::{SignalKind, signal};
    for kind in [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ] {
        let tx = tx.clone();
        if let Ok(mut stream) = signal(kind) {
            tokio::spawn(async move {
                while stream.recv().await.is_some() {
                    if tx.send(()).await.is_err() {
                        break;
                    }
                }
            });
        }
    }
}

//! `xstack init REPO`: makes a task from any PyTorch or JAX repository (the direction from the
//! experiment's imports, `framework.rs`). It finds the reference
//! packages and the experiment command, runs the command once in a PTY (output shown live),
//! detects the metrics in the output and verifies a proposed definition for each, takes the
//! published values and tolerances from `--seeds` runs (or the single run; seeds that move
//! nothing are found out as `xstack calibrate` does, and the repository's own seed option is
//! used when it has one), sketches `[phase2]` from the hyper-parameters it finds and what the
//! run does with its seed, shows the `task.toml`, and writes it with `reference.log` after
//! confirmation, only if `xstack check` accepts it; for a repository with an `nn.Module` and
//! a loss it also writes a `probe.py` skeleton for review, its `[parity]` section a comment
//! (`probe.rs`). `[upstream]` comes from the repository's git checkout when it can be told
//! (`upstream.rs`), else it is written as a comment saying what is missing. The repository is
//! only read.

pub mod claims;
pub mod deps;
pub mod detect;
pub mod framework;
pub mod limits;
pub mod probe;
pub mod render;
pub mod repo;
pub mod upstream;

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::calibrate::{
    self, CalibrateError, Calibration, Measurement, SeedRunner, Spread, Suggestion, short,
};
use crate::metrics::{self, Extractor};
use crate::seeds::usage::{self, SeedUse};
use crate::seeds::{self, RunPlan, Scratch, SeedError, SeedRun};
use crate::task::{CriterionSpec, Direction, MetricSpec, Reduce, Task};

use detect::Candidate;
use render::{Proposal, ProposedCriterion};

/// Why every criterion init proposes is `within` unless `--direction` says otherwise.
const WITHIN_REASON: &str = "within, the default: a port reproduces the result when it lands near it on either side; a value far better than the source reaches is a broken port too (a causal mask left out lets a language model see what it predicts)";

/// This machine, as a claim's measurement records it: `2 cores, x86_64 Linux`.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    format!(
        "{cores} core{}, {} {}",
        if cores == 1 { "" } else { "s" },
        std::env::consts::ARCH,
        std::env::consts::OS
    )
}

/// Relative part of the default tolerance of a single run: 2% of |value|.
pub const SINGLE_RUN_RELATIVE: f64 = 0.02;
/// The shortest `[run] timeout_s` written.
pub const MIN_TIMEOUT_S: u64 = 600;
/// How long init's first run may take unless `--run-limit` says otherwise: an hour.
pub const DEFAULT_RUN_LIMIT_S: u64 = 3600;

/// Why `xstack init` stopped (nothing is written in any case).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// REPO is not a folder.
    #[error("{0}: no such folder")]
    NoRepo(PathBuf),
    /// The task id is not valid.
    #[error("task id `{0}` must match [a-z0-9][a-z0-9-]* (choose one with --id)")]
    BadId(String),
    /// The task folder exists already.
    #[error("{0} exists already: choose another id with --id, or remove it")]
    Exists(PathBuf),
    /// Confirmation is needed but there is no terminal to ask on.
    #[error("stdin is not a terminal, so the proposal cannot be reviewed: pass --yes to accept it")]
    NeedsYes,
    /// No command was given and none can be asked for.
    #[error("no experiment command: pass --command CMD{}", candidates_hint(.0))]
    NoCommand(Vec<String>),
    /// `--notebook` names no notebook of the repository.
    #[error(
        "--notebook {0}: the repository has no such notebook (a .ipynb file, relative to REPO)"
    )]
    NoNotebook(String),
    /// `--seeds` below 2.
    #[error(
        "--seeds {0}: at least 2 seeds are needed to measure a spread (leave it out for a single run)"
    )]
    TooFewSeeds(u64),
    /// The reference environment could not be built.
    #[error("{0}")]
    Env(#[from] crate::env::EnvError),
    /// A run could not be started.
    #[error("{0}")]
    Seed(#[from] SeedError),
    /// The experiment failed.
    #[error(
        "the command failed ({ending}) after {duration_s:.1} s; nothing was written. Its last lines:\n{tail}"
    )]
    RunFailed {
        /// How it ended.
        ending: String,
        /// Seconds it ran.
        duration_s: f64,
        /// Its last lines.
        tail: String,
    },
    /// The repository's pinned requirements cannot install on this Python.
    #[error(
        "the reference environment does not build on this Python ({python}): {} cannot be installed as pinned; nothing was written. --relax-pins installs them without their versions (said in the review and in task.toml), or give the list with --reference-packages. The installer's last lines:\n{tail}",
        .pins.join(", ")
    )]
    PinsDoNotInstall {
        /// Each pin and where it came from.
        pins: Vec<String>,
        /// The Python version.
        python: String,
        /// The installer's last lines.
        tail: String,
    },
    /// The run could not import a module that no list of the repository provides.
    #[error(
        "the run failed: no module named `{module}`, which none of the reference packages ({}) provides; nothing was written. Add its package ({package}) with {flag}",
        listed_or_none(.listed)
    )]
    MissingModule {
        /// The module.
        module: String,
        /// The package that provides it.
        package: String,
        /// The reference packages of the run.
        listed: Vec<String>,
        /// The flag that adds it, spelled out.
        flag: String,
    },
    /// The experiment ran past `--run-limit`.
    #[error(
        "the command was still running after {limit_s} s, init's limit (--run-limit {limit_s}): an experiment that trains until stopped, or runs far past a budget; it was stopped and nothing was written. To go on, {advice}. Its last lines:\n{tail}"
    )]
    RunTooLong {
        /// The limit, in seconds.
        limit_s: u64,
        /// What can shorten it.
        advice: String,
        /// Its last lines.
        tail: String,
    },
    /// The experiment failed because it wants what this machine lacks (a GPU, the network).
    #[error("the command failed ({ending}): {why}; nothing was written. Its last lines:\n{tail}")]
    CannotRunHere {
        /// What it wanted and what the user can do.
        why: String,
        /// How it ended.
        ending: String,
        /// Its last lines.
        tail: String,
    },
    /// A seed run for the spread failed or lacked a metric.
    #[error("{0}")]
    Calibrate(#[from] CalibrateError),
    /// Nothing in the output looks like a metric.
    #[error(
        "no metric found in the output of `{0}`: xstack init reads name=value, name: value, JSON lines, progress bars, PyTorch Lightning and Hugging Face Trainer logs; nothing was written"
    )]
    NoMetrics(String),
    /// `--metric` names something that was not found.
    #[error("--metric {name}: not among the metrics found ({})", .found.join(", "))]
    UnknownMetric {
        /// The name asked for.
        name: String,
        /// The names found.
        found: Vec<String>,
    },
    /// No candidate looks like an evaluation metric.
    #[error("none of the metrics found looks like an evaluation result; choose with --metric NAME ({})", .0.join(", "))]
    NoEvaluationMetric(Vec<String>),
    /// A proposed regex does not compile (they are verified, so this is not expected).
    #[error("a proposed metric regex does not compile: {0}")]
    BadRegex(String),
    /// The written task did not pass `xstack check`; it was removed.
    #[error("the proposed task does not pass `xstack check`, nothing was written: {0}")]
    Invalid(crate::task::TaskError),
    /// The claim a criterion is graded against is not reproduced by the runs, and
    /// `--accept-unreproduced` was not given.
    #[error(
        "{0}; nothing was written. --accept-unreproduced writes the task graded against the claim all the same (recorded as not_reproduced), or choose another claim (or none) without --yes"
    )]
    ClaimNotReproduced(String),
    /// Claims that name the metric are equally plausible, and `--yes` leaves no one to choose.
    #[error(
        "{metric}: {} claims are equally plausible, and nothing in the repository's texts says which is its own: {}; nothing was written. Run without --yes to choose one in the review",
        .claims.len(),
        .claims.join("; ")
    )]
    AmbiguousClaim {
        /// The criterion's metric.
        metric: String,
        /// Each plausible claim: its value, place and quote.
        claims: Vec<String>,
    },
    /// The repository's claims could not be read (`--paper FILE` missing or unreadable).
    #[error("{0}")]
    Claims(#[from] crate::claims::ClaimsError),
    /// Writing the task folder failed; what was written was removed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// A list joined with `, `, or `none`.
fn listed_or_none(list: &[String]) -> String {
    if list.is_empty() {
        "none".to_string()
    } else {
        list.join(", ")
    }
}

fn candidates_hint(c: &[String]) -> String {
    if c.is_empty() {
        String::new()
    } else {
        format!(" (candidates: {})", c.join("; "))
    }
}

impl InitError {
    /// Whether this is an infrastructure failure (exit 3) rather than bad input (exit 2).
    pub fn is_infra(&self) -> bool {
        match self {
            InitError::Env(_)
            | InitError::Seed(_)
            | InitError::RunFailed { .. }
            | InitError::Write { .. } => true,
            InitError::Calibrate(e) => !matches!(
                e,
                CalibrateError::MetricMissing { .. } | CalibrateError::TooFewSeeds(_)
            ),
            _ => false,
        }
    }
}

/// What `xstack init` talks to: the user's terminal, or a test.
pub trait Console {
    /// Prints a line (or several) of its own.
    fn say(&mut self, text: &str);
    /// Shows the experiment's live output.
    fn output(&mut self, text: &str);
    /// Asks a question and returns the answer line; None when no one can answer.
    fn ask(&mut self, question: &str) -> Option<String>;
    /// Whether questions can be answered.
    fn interactive(&self) -> bool;
}

/// The options of `xstack init`: clap parses them from the command line (`xstack init
/// REPO ...`), and [`run`] reads them.
#[derive(Debug, Clone, clap::Args)]
pub struct InitOptions {
    /// The repository (only read).
    pub repo: PathBuf,
    /// The experiment command (else proposed from the README and entry files, and asked).
    #[arg(long)]
    pub command: Option<String>,
    /// The experiment is this notebook (relative to REPO), run top to bottom; written as
    /// `[run] notebook`.
    #[arg(long, conflicts_with = "command")]
    pub notebook: Option<String>,
    /// A shell snippet run before the command in each run's copy (preparing data); written
    /// as `[env] setup`.
    #[arg(long)]
    pub setup: Option<String>,
    /// A metric to grade on (repeatable; default: those that look like evaluation results).
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Direction of every criterion (default: within, around the claim or the measured value).
    #[arg(long, value_enum)]
    pub direction: Option<Direction>,
    /// The source's framework, torch or jax (default: from the experiment's imports); the
    /// port is in the other one.
    #[arg(long = "from", value_enum, value_name = "FRAMEWORK")]
    pub from: Option<crate::task::Framework>,
    /// The source side's packages (default: read from the repository: requirements files,
    /// setup.py, setup.cfg, pyproject.toml, environment.yml, and the experiment's imports);
    /// `none` for no environment.
    #[arg(long, num_args = 1.., value_delimiter = ',', value_name = "P")]
    pub reference_packages: Option<Vec<String>>,
    /// The port side's packages (default: the reference packages without the source's
    /// framework family, plus the port's: jax, flax, optax, or torch).
    #[arg(long, num_args = 1.., value_delimiter = ',', value_name = "P")]
    pub packages: Option<Vec<String>>,
    /// Runs for the published value and tolerance (XSTACK_SEED = 0..N-1; default: one run).
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Task id (default: the folder's name, sanitized).
    #[arg(long)]
    pub id: Option<String>,
    /// A paper's text or markdown to read claims from, beside the repository's READMEs,
    /// docs and notebooks.
    #[arg(long, value_name = "FILE")]
    pub paper: Option<PathBuf>,
    /// Write the task graded against a claim its runs do not reproduce (recorded as
    /// `not_reproduced`).
    #[arg(long)]
    pub accept_unreproduced: bool,
    /// Install the repository's pinned requirements that cannot install on this Python
    /// without their versions (said in the review and in task.toml).
    #[arg(long)]
    pub relax_pins: bool,
    /// Seconds init's first run may take: an experiment that trains until stopped, or runs
    /// far past a budget, is stopped there and init says what can shorten it.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_RUN_LIMIT_S)]
    pub run_limit: u64,
    /// Accept the proposal without review.
    #[arg(long)]
    pub yes: bool,
    /// The tasks folder (`XSTACK_TASKS_DIR`, else `tasks`).
    #[arg(skip = crate::task::tasks_dir())]
    pub tasks_dir: PathBuf,
    /// The cache folder (the environments).
    #[arg(skip = crate::env::cache_dir())]
    pub cache_dir: PathBuf,
}

impl InitOptions {
    /// `xstack init REPO` with no other option (the picker's new task).
    pub fn for_repo(repo: PathBuf) -> InitOptions {
        InitOptions {
            repo,
            command: None,
            notebook: None,
            setup: None,
            metrics: Vec::new(),
            direction: None,
            from: None,
            reference_packages: None,
            packages: None,
            seeds: None,
            id: None,
            paper: None,
            accept_unreproduced: false,
            relax_pins: false,
            run_limit: DEFAULT_RUN_LIMIT_S,
            yes: false,
            tasks_dir: crate::task::tasks_dir(),
            cache_dir: crate::env::cache_dir(),
        }
    }
}

/// `--direction`: higher, lower or within, as the task file writes them (clap lists them in
/// the help and in its error).
impl clap::ValueEnum for Direction {
    fn value_variants<'a>() -> &'a [Self] {
        &[Direction::Higher, Direction::Lower, Direction::Within]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

/// How `xstack init` ended without an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The task folder was written.
    Written(PathBuf),
    /// The user declined; nothing was written.
    Declined,
}

/// The direction a metric's name implies: accuracy, acc, f1, bleu, auc → higher; loss, mse,
/// error, perplexity, fid → lower (a token of the name equal to the word, or the word followed
/// by digits, like `acc1`); anything else → within.
pub fn direction_for(name: &str) -> Direction {
    const HIGHER: &[&str] = &["accuracy", "acc", "f1", "bleu", "auc"];
    const LOWER: &[&str] = &["loss", "mse", "error", "perplexity", "fid"];
    let name = detect::sanitize(name);
    let has = |words: &[&str]| {
        name.split('_').any(|t| {
            words.iter().any(|w| {
                t.strip_prefix(w)
                    .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
            })
        })
    };
    match (has(HIGHER), has(LOWER)) {
        (true, false) => Direction::Higher,
        (false, true) => Direction::Lower,
        _ => Direction::Within,
    }
}

/// The id from a folder name: lowercase, runs of other characters → `-`, trimmed.
pub fn sanitize_id(name: &str) -> String {
    let mut out = String::new();
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A path made absolute against the current folder, `.` and `..` resolved, with its longest
/// existing ancestor's symlinks resolved.
fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut clean = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    let mut existing = clean.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => break,
        }
        if !existing.pop() {
            break;
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    for name in rest.into_iter().rev() {
        out.push(name);
    }
    out
}

/// `to` relative to the folder `from` (both absolute), or `to` itself when they share
/// nothing but the root.
pub fn relative_path(from: &Path, to: &Path) -> String {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common <= 1 {
        return to.display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..a.len() {
        rel.push("..");
    }
    for c in &b[common..] {
        rel.push(c);
    }
    if rel.as_os_str().is_empty() {
        ".".to_string()
    } else {
        rel.display().to_string()
    }
}

/// `timeout_s` for the task: three times the longest run, rounded up to a minute, at least
/// [`MIN_TIMEOUT_S`].
pub fn timeout_for(longest_run_s: f64) -> u64 {
    let minutes = (3.0 * longest_run_s / 60.0).ceil() as u64;
    (minutes * 60).max(MIN_TIMEOUT_S)
}

/// The default tolerance of a single run: 2% of |value|, at least the print resolution when it
/// is known.
pub fn single_run_tolerance(value: f64, resolution: Option<f64>) -> f64 {
    (SINGLE_RUN_RELATIVE * value.abs()).max(resolution.unwrap_or(0.0))
}

/// A package list given on the command line: blanks dropped, `none` (or nothing) meaning an
/// empty list, so no environment.
fn package_flag(list: &[String]) -> Vec<String> {
    list.iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty() && p != "none")
        .collect()
}

/// The experiment's own files, relative to the repository: the notebook, else the Python
/// file the command runs (none for a command that runs no Python file of the repository).
fn experiment_files(opts: &InitOptions, repo: &Path, command: &str) -> Vec<String> {
    if let Some(notebook) = &opts.notebook {
        return vec![notebook.clone()];
    }
    let words = shell_words::split(command).unwrap_or_default();
    crate::command_line::entry_file(repo, &words)
        .and_then(|p| {
            p.strip_prefix(repo)
                .ok()
                .map(|r| r.to_string_lossy().into_owned())
        })
        .into_iter()
        .collect()
}

/// Picks the experiment command: the flag, else a question proposing the candidates.
fn choose_command(
    opts: &InitOptions,
    repo: &Path,
    console: &mut dyn Console,
) -> Result<String, InitError> {
    if let Some(notebook) = &opts.notebook {
        return Ok(crate::notebook::command(notebook));
    }
    if let Some(cmd) = &opts.command {
        return Ok(cmd.clone());
    }
    let candidates = repo::command_candidates(repo);
    if !console.interactive() {
        return Err(InitError::NoCommand(candidates));
    }
    let mut question = String::from("The experiment command");
    if candidates.is_empty() {
        question.push_str(": ");
    } else {
        for (i, c) in candidates.iter().enumerate() {
            question.push_str(&format!("\n  {}) {c}", i + 1));
        }
        question.push_str("\nA number, or a command [1]: ");
    }
    loop {
        let Some(answer) = console.ask(&question) else {
            return Err(InitError::NoCommand(candidates));
        };
        let answer = answer.trim();
        if answer.is_empty() {
            if let Some(first) = candidates.first() {
                return Ok(first.clone());
            }
            continue;
        }
        if let Ok(n) = answer.parse::<usize>() {
            if let Some(c) = n.checked_sub(1).and_then(|i| candidates.get(i)) {
                return Ok(c.clone());
            }
            continue;
        }
        return Ok(answer.to_string());
    }
}

/// Picks the criteria among the verified candidates, and says why: `--metric`, else the ones
/// that look like evaluation results, else the only candidate whose name gives a direction
/// (a script that prints nothing but its final loss).
fn choose_criteria<'a>(
    opts: &InitOptions,
    found: &'a [Candidate],
) -> Result<(Vec<&'a Candidate>, String), InitError> {
    let names = || found.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    if !opts.metrics.is_empty() {
        let chosen = opts
            .metrics
            .iter()
            .map(|want| {
                found
                    .iter()
                    .find(|c| c.name == *want)
                    .or_else(|| found.iter().find(|c| c.key.eq_ignore_ascii_case(want)))
                    .or_else(|| found.iter().find(|c| c.name == detect::sanitize(want)))
                    .ok_or_else(|| InitError::UnknownMetric {
                        name: want.clone(),
                        found: names(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((chosen, "--metric".to_string()));
    }
    let chosen: Vec<&Candidate> = found
        .iter()
        .filter(|c| detect::looks_like_evaluation(&c.name, &c.example))
        .collect();
    if !chosen.is_empty() {
        return Ok((
            chosen,
            "the metrics that look like evaluation results; choose others with --metric"
                .to_string(),
        ));
    }
    let directed: Vec<&Candidate> = found
        .iter()
        .filter(|c| direction_for(&c.name) != Direction::Within)
        .collect();
    match directed.as_slice() {
        [only] => Ok((
            directed.clone(),
            format!(
                "no metric looks like an evaluation result, and `{}` is the only one whose name says which way is better ({}); choose others with --metric",
                only.name,
                direction_for(&only.name).as_str()
            ),
        )),
        _ => Err(InitError::NoEvaluationMetric(names())),
    }
}

/// Runs `xstack init`. See the module documentation.
pub fn run(opts: &InitOptions, console: &mut dyn Console) -> Result<Outcome, InitError> {
    let target = Target::check(opts, console)?;
    let command = choose_command(opts, &target.repo, console)?;
    let entry = match &opts.notebook {
        Some(notebook) => Some(target.repo.join(notebook)),
        None => shell_words::split(&command)
            .ok()
            .and_then(|words| crate::command_line::entry_file(&target.repo, &words)),
    };
    let (migration, migration_from) = framework::choose(opts.from, &target.repo, entry.as_deref());
    let provenance_of_repo = upstream::detect(&target.repo, entry.as_deref());
    console.say(&provenance_of_repo.summary());
    console.say(&format!(
        "direction: {} ({migration_from})",
        migration.label()
    ));
    let needs = deps::read(
        &target.repo,
        &experiment_files(opts, &target.repo, &command),
    );
    let mut packages = Packages::choose(opts, &needs, migration, console);
    let mut first = FirstRun::run(opts, &target, &command, &mut packages, &needs, console)?;
    let network_note = limits::network_note(&needs.hazards);
    if let Some(note) = &network_note {
        console.say(&format!("note: {note}"));
    }
    let found = metrics_found(&first.run, &command, console)?;
    let (chosen, why) = choose_criteria(opts, &found)?;
    console.say(&format!(
        "criteria: {} ({why})",
        chosen
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    ));
    let criteria = criteria_of(opts, &chosen);
    let published = publish(
        opts, &target, &mut first, &found, &criteria, &command, console,
    )?;
    let command = published.command.clone().unwrap_or(command);
    let lines = published
        .first
        .as_ref()
        .map_or_else(|| first.run.lines(), SeedRun::lines);
    let provenance = provenance(&first.plan, &packages.reference);
    let settled = settle_claims(
        opts,
        &target.repo,
        &chosen,
        &published,
        &command,
        &provenance,
        console,
    )?;

    // The parity probe: a skeleton for review when the repository has a model and a loss and
    // no probe.py of its own; never run here.
    let probe_target = probe::find(&target.repo, &command);
    let has_probe = target.repo.join(probe::PROBE_FILE).is_file();
    let skeleton = probe_target
        .as_ref()
        .filter(|_| !has_probe)
        .map(probe::skeleton);
    let proposal = Proposal {
        id: target.id.clone(),
        title: repo::title(&target.repo),
        source_path: relative_path(&target.task_dir, &target.repo),
        repo_display: opts.repo.display().to_string(),
        citation: citation(opts, &settled, &command),
        target_from: if opts.packages.is_some() {
            "From --packages.".to_string()
        } else {
            repo::target_packages_note(migration)
        },
        migration,
        migration_from,
        packages: packages.target,
        reference_packages: packages.reference,
        packages_from: packages.from,
        command: command.clone(),
        notebook: opts.notebook.clone(),
        setup: opts.setup.clone(),
        network_note,
        command_note: published.command_note,
        timeout_s: timeout_for(published.longest_s.max(first.run.duration_s)),
        metrics: found.iter().map(metric_note).collect(),
        integrity: published.integrity,
        seed_note: published.seed_note,
        criteria: chosen
            .iter()
            .zip(&criteria)
            .zip(published.suggestions.into_iter().zip(published.evidence))
            .zip(settled)
            .map(|(((cand, crit), (suggestion, evidence)), settled)| {
                proposed_criterion(opts, cand, crit, suggestion, evidence, settled)
            })
            .collect(),
        settings: repo::hyper_parameters(&target.repo, &command),
        parity_note: probe_target
            .as_ref()
            .map(|t| probe::parity_note(t, skeleton.is_some())),
        upstream: provenance_of_repo,
    };
    let written = Written {
        text: render::task_toml(&proposal),
        lines,
        skeleton,
        probe_target,
    };
    review_and_write(opts, target, written, console)
}

/// Where the task goes: the repository, the id and the task folder, each checked before
/// anything runs.
struct Target {
    /// The repository, absolute.
    repo: PathBuf,
    /// The task id.
    id: String,
    /// `tasks/<id>`, absolute.
    task_dir: PathBuf,
}

impl Target {
    /// Checks every option that can be checked before a run: the repository, the id and its
    /// folder, `--seeds`, `--notebook`, and what a run without a terminal needs from flags.
    fn check(opts: &InitOptions, console: &mut dyn Console) -> Result<Target, InitError> {
        if !opts.repo.is_dir() {
            return Err(InitError::NoRepo(opts.repo.clone()));
        }
        let repo = absolute(&opts.repo);
        let id = match &opts.id {
            Some(id) => id.clone(),
            None => sanitize_id(&repo.file_name().unwrap_or_default().to_string_lossy()),
        };
        if !valid_id(&id) {
            return Err(InitError::BadId(id));
        }
        let task_dir = absolute(&opts.tasks_dir.join(&id));
        if task_dir.exists() {
            return Err(InitError::Exists(opts.tasks_dir.join(&id)));
        }
        if let Some(n) = opts.seeds
            && n < 2
        {
            return Err(InitError::TooFewSeeds(n));
        }
        if let Some(notebook) = &opts.notebook {
            let path = std::path::Path::new(notebook);
            let inside = path
                .components()
                .all(|part| matches!(part, std::path::Component::Normal(_)));
            if !inside || !crate::notebook::is_notebook(notebook) || !repo.join(path).is_file() {
                return Err(InitError::NoNotebook(notebook.clone()));
            }
        } else if opts.command.is_none() && !console.interactive() {
            return Err(InitError::NoCommand(repo::command_candidates(&repo)));
        }
        if !opts.yes && !console.interactive() {
            return Err(InitError::NeedsYes);
        }
        Ok(Target { repo, id, task_dir })
    }
}

/// The two sides' packages and where the reference side's came from.
struct Packages {
    /// The source side's.
    reference: Vec<String>,
    /// The port side's.
    target: Vec<String>,
    /// Where `reference` came from, in words (one line a package when read from the
    /// repository).
    from: String,
    /// The repository's requirements, with their sources, when `reference` came from them.
    found: Option<deps::Needs>,
    /// The direction, which decides the port side's packages.
    migration: crate::task::Migration,
}

impl Packages {
    /// From the flags, else from the repository's files and the experiment's imports; says
    /// what each environment is and where each package came from.
    fn choose(
        opts: &InitOptions,
        needs: &deps::Needs,
        migration: crate::task::Migration,
        console: &mut dyn Console,
    ) -> Packages {
        let (reference, from, found) = match &opts.reference_packages {
            Some(list) => (
                package_flag(list),
                "From --reference-packages.".to_string(),
                None,
            ),
            None => {
                for note in &needs.notes {
                    console.say(&format!("reference packages: {note}"));
                }
                let from = if needs.requirements.is_empty() {
                    "Nothing: no requirements file, setup.py, setup.cfg, pyproject.toml or environment.yml dependencies, and no import outside the standard library.".to_string()
                } else {
                    let mut text = String::from("From the repository:");
                    for r in &needs.requirements {
                        text.push_str(&format!("\n  {}: {}", r.spec, r.from));
                    }
                    text
                };
                (needs.specs(), from, Some(needs.clone()))
            }
        };
        let target = opts.packages.as_deref().map_or_else(
            || repo::target_packages(&reference, migration),
            package_flag,
        );
        if reference.is_empty() {
            console.say("reference environment: none (the command runs with the Python on PATH)");
        } else if let Some(needs) = &found {
            console.say("reference environment, from the repository:");
            for r in &needs.requirements {
                console.say(&format!("  {}: {}", r.spec, r.from));
            }
        } else {
            console.say(&format!(
                "reference environment: {} (from --reference-packages)",
                reference.join(" ")
            ));
        }
        if opts.packages.is_none() {
            console.say(&format!(
                "target environment: {} (the port's framework and its usual libraries, and the reference packages outside the PyTorch family)",
                target.join(" ")
            ));
        }
        Packages {
            reference,
            target,
            from,
            found,
            migration,
        }
    }

    /// The reference environment built, or found in the cache. Pins of the repository's
    /// requirements that cannot install on this Python stop init, naming them, unless
    /// `--relax-pins`: then they are installed unpinned and the review says so.
    fn environment(
        &mut self,
        opts: &InitOptions,
        console: &mut dyn Console,
    ) -> Result<Option<crate::env::PythonEnv>, InitError> {
        let with_runner = |list: &[String]| {
            if opts.notebook.is_some() {
                // A notebook runs in a kernel of the environment: the runner's packages are
                // added to it (and, by the task format, to the task's, which lists only its
                // own).
                crate::notebook::with_runner_packages(list)
            } else {
                list.to_vec()
            }
        };
        let usage = crate::env::store::Usage {
            task: opts.id.clone(),
            side: crate::env::Side::Reference,
        };
        let first = crate::env::ensure(
            &opts.cache_dir,
            &with_runner(&self.reference),
            &usage,
            &mut |l| console.say(&l),
        );
        let err = match first {
            Ok(env) => return Ok(env),
            Err(e) => e,
        };
        let (needs, tail) = match (&self.found, &err) {
            (Some(needs), crate::env::EnvError::Build { tail, .. }) => {
                (needs.clone(), tail.clone())
            }
            _ => return Err(err.into()),
        };
        let failing = deps::failing_pins(&needs.requirements, &tail);
        if failing.is_empty() {
            return Err(err.into());
        }
        let python = needs.python.clone().unwrap_or_else(|| "3".to_string());
        let named: Vec<String> = failing
            .iter()
            .map(|r| format!("{} ({})", r.spec, r.from))
            .collect();
        if !opts.relax_pins {
            return Err(InitError::PinsDoNotInstall {
                pins: named,
                python,
                tail,
            });
        }
        let relaxed: Vec<String> = needs
            .requirements
            .iter()
            .map(|r| {
                if failing.iter().any(|f| f.spec == r.spec) {
                    r.relaxed()
                } else {
                    r.spec.clone()
                }
            })
            .collect();
        let said = format!(
            "{} cannot install on Python {python}: installed {} instead (--relax-pins)",
            named.join(", "),
            failing
                .iter()
                .map(|r| format!("`{}`", r.relaxed()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        console.say(&format!("reference environment: {said}"));
        self.from.push_str(&format!("\n{said}."));
        self.reference = relaxed;
        if opts.packages.is_none() {
            self.target = repo::target_packages(&self.reference, self.migration);
        }
        Ok(crate::env::ensure(
            &opts.cache_dir,
            &with_runner(&self.reference),
            &usage,
            &mut |l| console.say(&l),
        )?)
    }
}

/// The first run (seed 0), with the plan and the scratch folder later runs reuse.
struct FirstRun {
    /// What every run of the repository runs.
    plan: RunPlan,
    /// Where the runs' copies go.
    scratch: Scratch,
    /// The run.
    run: SeedRun,
}

impl FirstRun {
    /// Builds or finds the reference environment and runs `command` once with seed 0 (for at
    /// most `--run-limit` seconds), its output shown live; a run that fails is an error that
    /// says, where it can, why (a module no list provides, a GPU, the network, the limit).
    fn run(
        opts: &InitOptions,
        target: &Target,
        command: &str,
        packages: &mut Packages,
        needs: &deps::Needs,
        console: &mut dyn Console,
    ) -> Result<FirstRun, InitError> {
        let env = packages.environment(opts, console)?;
        let plan = RunPlan {
            source: target.repo.clone(),
            setup: opts.setup.clone(),
            command: command.to_string(),
            timeout: Some(Duration::from_secs(opts.run_limit)),
            env,
            task_id: target.id.clone(),
            size: (120, 36),
        };
        let scratch = Scratch::new("init")?;
        console.say(&format!(
            "$ {command}    (XSTACK_SEED=0, in a copy of {}, at most {} s: --run-limit)",
            target.repo.display(),
            opts.run_limit
        ));
        let run = seeds::run_seed(&plan, 0, scratch.path(), &mut |text| console.output(text))?;
        if run.timed_out {
            return Err(InitError::RunTooLong {
                limit_s: opts.run_limit,
                advice: limits::shorten_advice(&target.repo, command),
                tail: run.tail(5),
            });
        }
        if !run.succeeded() {
            let tail = run.tail(seeds::TAIL_LINES);
            if let Some(module) = deps::missing_module(&tail) {
                let package = deps::packages_of(&module)
                    .into_iter()
                    .next()
                    .unwrap_or_else(|| module.clone());
                let mut with = packages.reference.clone();
                with.push(package.clone());
                return Err(InitError::MissingModule {
                    module,
                    package,
                    listed: packages.reference.clone(),
                    flag: format!("--reference-packages {}", with.join(",")),
                });
            }
            if let Some(why) = limits::explain_failure(&tail, &needs.hazards, &target.repo, command)
            {
                return Err(InitError::CannotRunHere {
                    why,
                    ending: run.ending(),
                    tail,
                });
            }
            return Err(InitError::RunFailed {
                ending: run.ending(),
                duration_s: run.duration_s,
                tail,
            });
        }
        console.say(&format!(
            "\nthe run ended ({}) after {:.1} s",
            run.ending(),
            run.duration_s
        ));
        Ok(FirstRun { plan, scratch, run })
    }
}

/// The metrics in the first run's output, each definition verified by extracting it again;
/// says which were found and which left out.
fn metrics_found(
    first: &SeedRun,
    command: &str,
    console: &mut dyn Console,
) -> Result<Vec<Candidate>, InitError> {
    // The notebook runner's cell lines are xstack's, not the repository's output.
    let printed: Vec<String> = first
        .lines()
        .into_iter()
        .filter(|l| !crate::notebook::is_cell_line(l))
        .collect();
    let (found, rejected) = detect::verify(detect::detect(&printed), &first.output);
    for r in &rejected {
        console.say(&format!("left out `{}`: {}", r.name, r.reason));
    }
    if found.is_empty() {
        return Err(InitError::NoMetrics(command.to_string()));
    }
    console.say("metrics found (each definition re-extracted from the output and checked):");
    for c in &found {
        let last = c.points.last().map_or(0.0, |p| p.value);
        console.say(&format!(
            "  {:<20} {:>4} value(s), last {}{}  [{}]",
            c.name,
            c.points.len(),
            short(last),
            if c.percent { " %" } else { "" },
            c.style.label()
        ));
    }
    Ok(found)
}

/// A criterion for each chosen metric: its last value, in `--direction` (else within); the
/// value and tolerance are published later.
fn criteria_of(opts: &InitOptions, chosen: &[&Candidate]) -> Vec<CriterionSpec> {
    chosen
        .iter()
        .map(|c| CriterionSpec {
            metric: c.name.clone(),
            reduce: Reduce::Last,
            published: 0.0,
            tolerance: 0.0,
            direction: opts.direction.unwrap_or(Direction::Within),
            claim: None,
        })
        .collect()
}

/// The published values and tolerances: from `--seeds` runs, or from the first run alone.
fn publish(
    opts: &InitOptions,
    target: &Target,
    first: &mut FirstRun,
    found: &[Candidate],
    criteria: &[CriterionSpec],
    command: &str,
    console: &mut dyn Console,
) -> Result<Published, InitError> {
    let specs: Vec<MetricSpec> = found.iter().map(|c| c.spec.clone()).collect();
    let extractor =
        Extractor::from_specs(&specs).map_err(|e| InitError::BadRegex(e.to_string()))?;
    calibrate::check_run(&first.run, extractor.clone(), criteria)?;
    let seed_use = usage::inspect(&target.repo, command);
    console.say(&seed_use.summary());
    Ok(match opts.seeds {
        Some(n) => {
            first.plan.timeout = Some(Duration::from_secs(timeout_for(first.run.duration_s)));
            let runner = SeedRunner {
                plan: &first.plan,
                extractor: &extractor,
                metrics: &specs,
                criteria,
                scratch: first.scratch.path(),
                vary_fixed_seed: false,
            };
            let m = calibrate::measure(
                &runner,
                n,
                Some(first.run.clone()),
                &seed_use,
                &mut |line| console.say(&line),
            )?;
            measured(opts, &target.id, criteria, m, &seed_use, console)
        }
        None => single_run(
            opts, criteria, &specs, &first.run, &extractor, &seed_use, console,
        )?,
    })
}

/// Where the runs were measured: today, the reference packages' versions, this machine.
fn provenance(plan: &RunPlan, reference: &[String]) -> claims::Provenance {
    claims::Provenance {
        date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
        versions: plan
            .env
            .as_ref()
            .map(|e| e.package_versions(reference))
            .unwrap_or_else(|| "the Python on PATH".to_string()),
        machine: machine(),
    }
}

/// What the repository (and the paper) claims, matched to each criterion and authenticated
/// by the runs.
fn settle_claims(
    opts: &InitOptions,
    repo: &Path,
    chosen: &[&Candidate],
    published: &Published,
    command: &str,
    provenance: &claims::Provenance,
    console: &mut dyn Console,
) -> Result<Vec<claims::Settled>, InitError> {
    let found_claims = crate::claims::find_claims(repo, opts.paper.as_deref())?;
    console.say(&format!(
        "claims found in the repository{}: {}",
        if opts.paper.is_some() {
            " and the paper"
        } else {
            ""
        },
        found_claims.len()
    ));
    let looked_up: Vec<claims::Criterion<'_>> = chosen
        .iter()
        .zip(&published.suggestions)
        .zip(&published.measured)
        .map(|((cand, suggestion), measured)| claims::Criterion {
            metric: &cand.name,
            line: &cand.last_example,
            key: &cand.key,
            measured: *measured,
            tolerance: suggestion.tolerance,
        })
        .collect();
    let names = repository_names(repo, command);
    claims::settle(
        &found_claims,
        &looked_up,
        &claims::Experiment {
            command,
            names: &names,
        },
        provenance,
        opts.yes,
        opts.accept_unreproduced,
        console,
    )
}

/// Words that name the repository and its script, as a README would: the folder's name and
/// the entry file's stem, split at `-`, `_` and `.`, without generic words (`train`, `main`).
fn repository_names(repo: &Path, command: &str) -> Vec<String> {
    const GENERIC: &[&str] = &[
        "train", "main", "run", "eval", "test", "model", "models", "src", "code", "repo", "py",
        "python", "the", "and", "master", "pytorch", "torch", "notebook", "ipynb",
    ];
    let words = shell_words::split(command).unwrap_or_default();
    let script = crate::command_line::entry_file(repo, &words);
    let mut names: Vec<String> = Vec::new();
    let texts = [
        repo.file_name().map(|n| n.to_string_lossy().into_owned()),
        script
            .as_ref()
            .and_then(|s| s.file_stem())
            .map(|n| n.to_string_lossy().into_owned()),
    ];
    for text in texts.into_iter().flatten() {
        for word in text
            .to_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 3 && !GENERIC.contains(w))
        {
            if !names.iter().any(|n| n == word) {
                names.push(word.to_string());
            }
        }
    }
    names
}

/// `[published] citation`: the claims' places and quotes, else how xstack init measured it.
fn citation(opts: &InitOptions, settled: &[claims::Settled], command: &str) -> String {
    if settled.iter().any(|s| s.citation.is_some()) {
        return settled
            .iter()
            .filter_map(|s| s.citation.clone())
            .collect::<Vec<_>>()
            .join("; ");
    }
    let n_runs = opts.seeds.unwrap_or(1);
    let date = chrono::Utc::now().format("%Y-%m-%d");
    if n_runs > 1 {
        format!(
            "measured by xstack init on {date}: mean of {n_runs} runs of `{command}` (XSTACK_SEED 0-{}); no published claim was found in the repository",
            n_runs - 1
        )
    } else {
        format!(
            "measured by xstack init on {date}: one run of `{command}` (XSTACK_SEED=0); no published claim was found in the repository"
        )
    }
}

/// A metric's definition and how it was read, for the comment over it.
fn metric_note(c: &Candidate) -> (MetricSpec, String) {
    let mut how = c.style.label().to_string();
    if c.percent {
        how.push_str(", a percentage");
    }
    how.push_str(&format!(" in lines like `{}`", c.example.trim()));
    (c.spec.clone(), how)
}

/// A criterion as the task file proposes it: around its claim when it is graded against one.
fn proposed_criterion(
    opts: &InitOptions,
    cand: &Candidate,
    crit: &CriterionSpec,
    suggestion: Suggestion,
    evidence: Vec<String>,
    settled: claims::Settled,
) -> ProposedCriterion {
    ProposedCriterion {
        metric: crit.metric.clone(),
        direction: crit.direction,
        direction_reason: if opts.direction.is_some() {
            "from --direction".to_string()
        } else {
            WITHIN_REASON.to_string()
        },
        suggestion: match settled.published {
            Some(claimed) => suggestion.around(claimed),
            None => suggestion,
        },
        evidence,
        example: cand.last_example.clone(),
        claim: Some(settled.claim),
    }
}

/// What is written into the task folder.
struct Written {
    /// `task.toml`.
    text: String,
    /// The reference run's plain lines (`reference.log`).
    lines: Vec<String>,
    /// `probe.py`, when a skeleton is proposed.
    skeleton: Option<String>,
    /// The model and loss the probe skeleton is for.
    probe_target: Option<probe::ProbeTarget>,
}

/// Shows the task file, asks to write it (unless `--yes`), writes it and says what was
/// written.
fn review_and_write(
    opts: &InitOptions,
    target: Target,
    written: Written,
    console: &mut dyn Console,
) -> Result<Outcome, InitError> {
    let written_files = if written.skeleton.is_some() {
        "task.toml, reference.log, probe.py"
    } else {
        "task.toml, reference.log"
    };
    let shown_dir = opts.tasks_dir.join(&target.id);
    console.say(&format!(
        "\n--- {} ---\n{}---",
        shown_dir.join(crate::task::TASK_FILE).display(),
        written.text
    ));
    if !opts.yes {
        let answer = console
            .ask(&format!(
                "Write {} ({written_files})? [y/N] ",
                shown_dir.display()
            ))
            .unwrap_or_default();
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            console.say("nothing written");
            return Ok(Outcome::Declined);
        }
    }
    let mut log = written.lines.join("\n");
    log.push('\n');
    write_task(
        &target.task_dir,
        &written.text,
        &log,
        written.skeleton.as_deref(),
    )?;
    console.say(&format!(
        "wrote {} and reference.log; `xstack check` accepts it",
        shown_dir.join(crate::task::TASK_FILE).display()
    ));
    if let Some(probed) = written
        .probe_target
        .as_ref()
        .filter(|_| written.skeleton.is_some())
    {
        console.say(&format!(
            "wrote {}: a parity probe skeleton for the model `{}` ({}:{}) and the loss at {}:{}, never run; complete it and copy it into the repository before enabling [parity] (see task.toml)",
            shown_dir.join(probe::PROBE_FILE).display(),
            probed.model.name,
            probed.model.site.file,
            probed.model.site.line,
            probed.loss.file,
            probed.loss.line
        ));
    }
    Ok(Outcome::Written(target.task_dir))
}

/// The published values and tolerances init writes, and what goes with them.
struct Published {
    /// One per criterion.
    suggestions: Vec<Suggestion>,
    /// The numbers behind each, as comment lines.
    evidence: Vec<Vec<String>>,
    /// The `[integrity] seed_check` block, when the runs moved a value.
    integrity: Option<String>,
    /// The `seed:` line of `[phase2]`.
    seed_note: String,
    /// A command that replaced the given one: the repository's seed option set from
    /// XSTACK_SEED.
    command: Option<String>,
    /// The comment over `[run] command`.
    command_note: Option<String>,
    /// The seed-0 run of that command (for `reference.log`).
    first: Option<SeedRun>,
    /// The longest run.
    longest_s: f64,
    /// What the runs measured of each criterion (for authenticating its claim).
    measured: Vec<crate::claims::Measured>,
}

/// Published values from `--seeds` runs: measured where the seeds moved a value; where they
/// moved nothing, asked on a terminal or, with `--yes`, the flagged relative guess.
fn measured(
    opts: &InitOptions,
    id: &str,
    criteria: &[CriterionSpec],
    m: Measurement,
    seed_use: &SeedUse,
    console: &mut dyn Console,
) -> Published {
    let longest_s = m.pass.durations_s.iter().copied().fold(0.0, f64::max);
    let (command, first, command_note) = match (&m.spread, &m.task_command) {
        (Spread::SeedOption(o), Some(given)) => {
            console.say(&format!(
                "the command is now `{}`: `{given}` ignores XSTACK_SEED, and {} sets the repository's own seed option ({} at {})",
                m.pass.command,
                o.setting(),
                o.kind,
                o.at.place()
            ));
            (
                Some(m.pass.command.clone()),
                Some(m.pass.first.clone()),
                Some(format!(
                    "`{given}` ignores XSTACK_SEED: every seed gave bit-identical values. `{}` sets the repository's own seed option ({} at {}) from XSTACK_SEED.",
                    o.setting(),
                    o.kind,
                    o.at.place()
                )),
            )
        }
        _ => (None, None, None),
    };
    let mut cal = calibrate::from_measurement(id, criteria, m, seed_use.clone());
    for c in cal.criteria.iter_mut().filter(|c| !c.moved()) {
        let value = c.summary.mean;
        let default = c.suggestion.clone();
        if opts.yes {
            console.say(&format!(
                "{}: every seed gave {}; tolerance {} ({}% of |value|, not measured: flagged in task.toml)",
                c.criterion.metric,
                short(value),
                default.tolerance_toml(),
                calibrate::UNMEASURED_RELATIVE * 100.0
            ));
            continue;
        }
        let question = format!(
            "{} = {} under every seed (nothing moved it, so no spread was measured); tolerance [{}]: ",
            c.criterion.metric,
            short(value),
            default.tolerance_toml()
        );
        let tolerance = ask_tolerance(console, &question, default.tolerance);
        if tolerance != default.tolerance {
            *c = c.clone().with_tolerance(tolerance);
        }
    }
    let evidence = cal
        .criteria
        .iter()
        .map(|c| {
            calibrate::summary_comment(&cal, c)
                .lines()
                .map(|l| l.trim_start_matches("# ").to_string())
                .collect()
        })
        .collect();
    let measured = cal
        .criteria
        .iter()
        .map(|c| crate::claims::Measured {
            runs: u32::try_from(c.summary.values.len()).unwrap_or(u32::MAX),
            mean: c.summary.mean,
            std: c.summary.std,
        })
        .collect();
    Published {
        measured,
        integrity: calibrate::seed_varies(&cal.criteria)
            .then(|| calibrate::seed_check_block(&cal.spread)),
        seed_note: seed_note(seed_use, Some(&cal)),
        suggestions: cal.criteria.iter().map(|c| c.suggestion.clone()).collect(),
        evidence,
        command,
        command_note,
        first,
        longest_s,
    }
}

/// Published values from the single run: its values, with a tolerance of 2% of |value| (at
/// least the print resolution), asked on a terminal.
fn single_run(
    opts: &InitOptions,
    criteria: &[CriterionSpec],
    specs: &[MetricSpec],
    first: &SeedRun,
    extractor: &Extractor,
    seed_use: &SeedUse,
    console: &mut dyn Console,
) -> Result<Published, InitError> {
    let values = calibrate::check_run(first, extractor.clone(), criteria)?;
    let resolutions = calibrate::printed_resolutions(specs, criteria, &first.output);
    let mut suggestions = Vec::new();
    let mut evidence = Vec::new();
    let measured = values
        .iter()
        .map(|v| crate::claims::Measured {
            runs: 1,
            mean: *v,
            std: 0.0,
        })
        .collect();
    for ((c, value), resolution) in criteria.iter().zip(&values).zip(resolutions) {
        let default = Suggestion::rounded(*value, single_run_tolerance(*value, resolution));
        let tolerance = if opts.yes {
            default.tolerance
        } else {
            let question = format!(
                "{} = {} from one run; tolerance [{}]: ",
                c.metric,
                short(*value),
                default.tolerance_toml()
            );
            ask_tolerance(console, &question, default.tolerance)
        };
        let s = if tolerance == default.tolerance {
            default
        } else {
            Suggestion::rounded(*value, tolerance)
        };
        let how = if opts.yes {
            match resolution {
                Some(r) => format!(
                    "the default, 2% of |value|, at least the print resolution {}",
                    short(r)
                ),
                None => "the default, 2% of |value|".to_string(),
            }
        } else {
            "confirmed".to_string()
        };
        evidence.push(vec![format!(
            "{}: {} in one run (XSTACK_SEED=0); tolerance {} ({how}). Run `xstack calibrate` for a measured spread.",
            c.metric,
            short(*value),
            s.tolerance_toml(),
        )]);
        suggestions.push(s);
    }
    Ok(Published {
        measured,
        suggestions,
        evidence,
        integrity: None,
        seed_note: seed_note(seed_use, None),
        command: None,
        command_note: None,
        first: None,
        longest_s: first.duration_s,
    })
}

/// Asks `question` until the answer is empty (the default) or a number >= 0.
fn ask_tolerance(console: &mut dyn Console, question: &str, default: f64) -> f64 {
    loop {
        let answer = console.ask(question).unwrap_or_default();
        let answer = answer.trim();
        if answer.is_empty() {
            return default;
        }
        match answer.parse::<f64>() {
            Ok(t) if t.is_finite() && t >= 0.0 => return t,
            _ => console.say("a number >= 0, please"),
        }
    }
}

/// The `seed:` line of the `[phase2]` skeleton: what the run does with its seed, as read from
/// the repository and, with `--seeds`, seen in the runs. It never says the seed comes from
/// XSTACK_SEED where the source ignores it.
pub fn seed_note(u: &SeedUse, measured: Option<&Calibration>) -> String {
    if let Some(cal) = measured
        && let Spread::SeedOption(o) = &cal.spread
    {
        return format!(
            "`{}` in the command sets the repository's own seed option ({} at {}) from XSTACK_SEED, 0 unless calibrate varies it; the code itself does not read XSTACK_SEED.",
            o.setting(),
            o.kind,
            o.at.place()
        );
    }
    let moved = measured.map(|c| calibrate::seed_varies(&c.criteria));
    let mut text = match (&u.reads, u.fixed_text()) {
        (Some(at), _) if at.line == 0 => {
            "the command passes XSTACK_SEED to the run (0 unless calibrate varies it).".to_string()
        }
        (Some(at), _) => format!(
            "read from XSTACK_SEED at {} (0 unless calibrate varies it).",
            at.place()
        ),
        (None, Some(fixed)) => {
            format!("fixed in the source, {fixed}; the run does not read XSTACK_SEED.")
        }
        (None, None) => {
            "none found: the run does not read XSTACK_SEED and sets no seed.".to_string()
        }
    };
    match (moved, u.reads.is_some(), u.fixed_text()) {
        (Some(true), false, _) => text.push_str(" Its numbers vary from run to run all the same."),
        (Some(false), true, Some(fixed)) => text.push_str(&format!(
            " Every seed gave the same numbers: a seed is also fixed, {fixed}."
        )),
        (Some(false), _, _) => text.push_str(" Every seed gave the same numbers."),
        _ => {}
    }
    if let Some(o) = &u.option {
        text.push_str(&format!(
            " It has a seed option of its own: {} ({} at {}).",
            o.name,
            o.kind,
            o.at.place()
        ));
    }
    text
}

/// Writes the task folder (with the probe skeleton, when there is one), then loads it as
/// `xstack check` does; on any failure the folder is removed again.
fn write_task(
    task_dir: &Path,
    text: &str,
    log: &str,
    probe: Option<&str>,
) -> Result<(), InitError> {
    if task_dir.exists() {
        return Err(InitError::Exists(task_dir.to_path_buf()));
    }
    let result = (|| {
        let io = |path: PathBuf| move |source| InitError::Write { path, source };
        std::fs::create_dir_all(task_dir).map_err(io(task_dir.to_path_buf()))?;
        let file = task_dir.join(crate::task::TASK_FILE);
        std::fs::write(&file, text).map_err(io(file.clone()))?;
        let log_file = task_dir.join("reference.log");
        std::fs::write(&log_file, log).map_err(io(log_file.clone()))?;
        if let Some(probe) = probe {
            let probe_file = task_dir.join(probe::PROBE_FILE);
            std::fs::write(&probe_file, probe).map_err(io(probe_file.clone()))?;
        }
        let task = Task::load(task_dir).map_err(InitError::Invalid)?;
        // The written definitions must still find every criterion in the reference log.
        let series = metrics::parse_log(&task, log);
        for c in &task.spec.criteria {
            let found = series
                .iter()
                .any(|(name, points)| name == &c.metric && !points.is_empty());
            if !found {
                return Err(InitError::NoMetrics(format!(
                    "{} (metric `{}` is not in reference.log)",
                    task.spec.run.command, c.metric
                )));
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(task_dir);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_folder_names() {
        assert_eq!(sanitize_id("My_Repo.v2"), "my-repo-v2");
        assert_eq!(sanitize_id("--x--"), "x");
        assert!(valid_id("digits-mlp"));
        assert!(!valid_id("-x"));
        assert!(!valid_id(""));
    }

    #[test]
    fn source_paths_are_relative_when_they_share_a_folder() {
        assert_eq!(
            relative_path(Path::new("/work/proj/tasks/x"), Path::new("/work/repos/x")),
            "../../../repos/x"
        );
        assert_eq!(
            relative_path(Path::new("/a/t/x"), Path::new("/b/r")),
            "/b/r"
        );
        assert_eq!(
            relative_path(Path::new("/a/t"), Path::new("/a/t/repo")),
            "repo"
        );
    }

    #[test]
    fn timeouts_and_single_run_tolerances() {
        assert_eq!(timeout_for(2.0), 600);
        assert_eq!(timeout_for(250.0), 780);
        assert!((single_run_tolerance(0.97, Some(1e-4)) - 0.0194).abs() < 1e-12);
        assert_eq!(single_run_tolerance(6.58e-5, None), 0.02 * 6.58e-5);
        assert_eq!(single_run_tolerance(0.01, Some(0.001)), 0.001);
    }
}

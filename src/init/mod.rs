//! `xstack init REPO`: makes a task from any PyTorch repository. It finds the reference
//! packages and the experiment command, runs the command once in a PTY (output shown live),
//! detects the metrics in the output and verifies a proposed definition for each, takes the
//! published values and tolerances from `--seeds` runs (or the single run), sketches
//! `[phase2]` from the hyper-parameters it finds, shows the `task.toml`, and writes it with
//! `reference.log` after confirmation, only if `xstack check` accepts it. The repository is
//! only read.

pub mod detect;
pub mod render;
pub mod repo;

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::calibrate::{self, CalibrateError, Suggestion, short};
use crate::metrics::{self, Extractor};
use crate::seeds::{self, RunPlan, Scratch, SeedError};
use crate::task::{CriterionSpec, Direction, MetricSpec, Reduce, Task};

use detect::Candidate;
use render::{Proposal, ProposedCriterion};

/// Relative part of the default tolerance of a single run: 2% of |value|.
pub const SINGLE_RUN_RELATIVE: f64 = 0.02;
/// The shortest `[run] timeout_s` written.
pub const MIN_TIMEOUT_S: u64 = 600;

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
    /// Writing the task folder failed; what was written was removed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
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

/// The options of `xstack init`.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The repository.
    pub repo: PathBuf,
    /// `--command`.
    pub command: Option<String>,
    /// `--metric` (repeatable).
    pub metrics: Vec<String>,
    /// `--direction`.
    pub direction: Option<Direction>,
    /// `--reference-packages`; `none` or an empty list means no environment.
    pub reference_packages: Option<Vec<String>>,
    /// `--packages`.
    pub packages: Option<Vec<String>>,
    /// `--seeds`.
    pub seeds: Option<u64>,
    /// `--id`.
    pub id: Option<String>,
    /// `--yes`.
    pub yes: bool,
    /// The tasks folder.
    pub tasks_dir: PathBuf,
    /// The cache folder.
    pub cache_dir: PathBuf,
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

/// The default tolerance of a single run: 2% of |value|, at least the calibration floor's
/// 0.001.
pub fn single_run_tolerance(value: f64) -> f64 {
    (SINGLE_RUN_RELATIVE * value.abs()).max(calibrate::FLOOR_ABSOLUTE)
}

/// A package list given on the command line: blanks dropped, `none` (or nothing) meaning an
/// empty list, so no environment.
fn package_flag(list: &[String]) -> Vec<String> {
    list.iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty() && p != "none")
        .collect()
}

/// Picks the experiment command: the flag, else a question proposing the candidates.
fn choose_command(
    opts: &InitOptions,
    repo: &Path,
    console: &mut dyn Console,
) -> Result<String, InitError> {
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

/// Picks the criteria among the verified candidates: `--metric`, else the ones that look like
/// evaluation results.
fn choose_criteria<'a>(
    opts: &InitOptions,
    found: &'a [Candidate],
) -> Result<Vec<&'a Candidate>, InitError> {
    let names = || found.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    if !opts.metrics.is_empty() {
        return opts
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
            .collect();
    }
    let chosen: Vec<&Candidate> = found
        .iter()
        .filter(|c| detect::looks_like_evaluation(&c.name, &c.example))
        .collect();
    if chosen.is_empty() {
        return Err(InitError::NoEvaluationMetric(names()));
    }
    Ok(chosen)
}

/// Runs `xstack init`. See the module documentation.
pub fn run(opts: &InitOptions, console: &mut dyn Console) -> Result<Outcome, InitError> {
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
    if opts.command.is_none() && !console.interactive() {
        return Err(InitError::NoCommand(repo::command_candidates(&repo)));
    }
    if !opts.yes && !console.interactive() {
        return Err(InitError::NeedsYes);
    }
    let command = choose_command(opts, &repo, console)?;

    let (reference_packages, packages_from) = match &opts.reference_packages {
        Some(list) => (package_flag(list), "--reference-packages".to_string()),
        None => {
            let found = repo::reference_packages(&repo);
            for line in &found.skipped {
                console.say(&format!("left out of the reference packages: {line}"));
            }
            let from = found.from.map_or_else(
                || "nothing: no requirements.txt or pyproject.toml dependencies".to_string(),
                |f| format!("the repository's {f}"),
            );
            (found.list, from)
        }
    };
    let packages = opts
        .packages
        .as_deref()
        .map_or_else(|| repo::target_packages(&reference_packages), package_flag);
    if reference_packages.is_empty() {
        console.say("reference environment: none (the command runs with the Python on PATH)");
    } else {
        console.say(&format!(
            "reference environment: {} (from {packages_from})",
            reference_packages.join(" ")
        ));
    }
    let env = crate::env::ensure(&opts.cache_dir, &reference_packages, &mut |line| {
        console.say(&line)
    })?;

    let mut plan = RunPlan {
        source: repo.clone(),
        setup: None,
        command: command.clone(),
        timeout: None,
        env,
        task_id: id.clone(),
        size: (120, 36),
    };
    let scratch = Scratch::new("init")?;
    console.say(&format!(
        "$ {command}    (XSTACK_SEED=0, in a copy of {})",
        repo.display()
    ));
    let first = seeds::run_seed(&plan, 0, scratch.path(), &mut |text| console.output(text))?;
    if !first.succeeded() {
        return Err(InitError::RunFailed {
            ending: first.ending(),
            duration_s: first.duration_s,
            tail: first.tail(seeds::TAIL_LINES),
        });
    }
    console.say(&format!(
        "\nthe run ended ({}) after {:.1} s",
        first.ending(),
        first.duration_s
    ));

    let lines = first.lines();
    let (found, rejected) = detect::verify(detect::detect(&lines), &first.output);
    for r in &rejected {
        console.say(&format!("left out `{}`: {}", r.name, r.reason));
    }
    if found.is_empty() {
        return Err(InitError::NoMetrics(command));
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
    let chosen = choose_criteria(opts, &found)?;
    console.say(&format!(
        "criteria: {} ({})",
        chosen
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        if opts.metrics.is_empty() {
            "the metrics that look like evaluation results; choose others with --metric"
        } else {
            "--metric"
        }
    ));

    let criteria: Vec<CriterionSpec> = chosen
        .iter()
        .map(|c| CriterionSpec {
            metric: c.name.clone(),
            reduce: Reduce::Last,
            published: 0.0,
            tolerance: 0.0,
            direction: opts.direction.unwrap_or_else(|| direction_for(&c.name)),
        })
        .collect();
    let specs: Vec<MetricSpec> = found.iter().map(|c| c.spec.clone()).collect();
    let extractor =
        Extractor::from_specs(&specs).map_err(|e| InitError::BadRegex(e.to_string()))?;
    let first_values = calibrate::check_run(&first, extractor.clone(), &criteria)?;

    let mut longest = first.duration_s;
    let mut seed_varies = false;
    let (suggestions, evidence): (Vec<Suggestion>, Vec<Vec<String>>) = match opts.seeds {
        Some(n) => {
            plan.timeout = Some(Duration::from_secs(timeout_for(first.duration_s)));
            let mut per_seed = vec![first_values];
            for seed in 1..n {
                console.say(&format!("seed {seed} (of 0-{}): $ {command}", n - 1));
                let run = seeds::run_seed(&plan, seed, scratch.path(), &mut |_| {})?;
                per_seed.push(calibrate::check_run(&run, extractor.clone(), &criteria)?);
                longest = longest.max(run.duration_s);
                console.say(&format!(
                    "seed {seed}: {} in {:.1} s",
                    run.ending(),
                    run.duration_s
                ));
            }
            let cals = calibrate::summarize(&criteria, &per_seed);
            seed_varies = calibrate::seed_varies(&cals);
            let evidence = cals
                .iter()
                .map(|c| {
                    calibrate::summary_comment(c)
                        .lines()
                        .map(|l| l.trim_start_matches("# ").to_string())
                        .collect()
                })
                .collect();
            (cals.into_iter().map(|c| c.suggestion).collect(), evidence)
        }
        None => {
            let mut suggestions = Vec::new();
            let mut evidence = Vec::new();
            for (c, value) in criteria.iter().zip(&first_values) {
                let default = Suggestion::rounded(*value, single_run_tolerance(*value));
                let tolerance = if opts.yes {
                    default.tolerance
                } else {
                    ask_tolerance(console, &c.metric, *value, &default)
                };
                let s = if tolerance == default.tolerance {
                    default
                } else {
                    Suggestion::rounded(*value, tolerance)
                };
                evidence.push(vec![format!(
                    "{}: {} in one run (XSTACK_SEED=0); tolerance {} ({}). Run `xstack calibrate` for a measured spread.",
                    c.metric,
                    short(*value),
                    s.tolerance_toml(),
                    if opts.yes { "the default, 2% of |value|, at least 0.001" } else { "confirmed" }
                )]);
                suggestions.push(s);
            }
            (suggestions, evidence)
        }
    };

    let n_runs = opts.seeds.unwrap_or(1);
    let date = chrono::Utc::now().format("%Y-%m-%d");
    let proposal = Proposal {
        id: id.clone(),
        title: repo::title(&repo),
        source_path: relative_path(&task_dir, &repo),
        repo_display: opts.repo.display().to_string(),
        citation: if n_runs > 1 {
            format!(
                "measured by xstack init on {date}: mean of {n_runs} runs of `{command}` (XSTACK_SEED 0-{}); cite the paper or README table when there is one",
                n_runs - 1
            )
        } else {
            format!(
                "measured by xstack init on {date}: one run of `{command}` (XSTACK_SEED=0); cite the paper or README table when there is one"
            )
        },
        target_from: if opts.packages.is_some() {
            "From --packages.".to_string()
        } else {
            "The JAX side: the reference packages without the PyTorch family, plus jax, flax, optax.".to_string()
        },
        packages,
        reference_packages,
        packages_from,
        command: command.clone(),
        timeout_s: timeout_for(longest),
        metrics: found
            .iter()
            .map(|c| {
                let mut how = c.style.label().to_string();
                if c.percent {
                    how.push_str(", a percentage");
                }
                how.push_str(&format!(" in lines like `{}`", c.example.trim()));
                (c.spec.clone(), how)
            })
            .collect(),
        seed_check: seed_varies,
        criteria: chosen
            .iter()
            .zip(&criteria)
            .zip(suggestions.into_iter().zip(evidence))
            .map(|((cand, crit), (suggestion, evidence))| ProposedCriterion {
                metric: crit.metric.clone(),
                direction: crit.direction,
                direction_reason: if opts.direction.is_some() {
                    "from --direction".to_string()
                } else {
                    format!("from the name `{}`", crit.metric)
                },
                suggestion,
                evidence,
                example: cand.last_example.clone(),
            })
            .collect(),
        settings: repo::hyper_parameters(&repo, &command),
    };
    let text = render::task_toml(&proposal);
    let shown_dir = opts.tasks_dir.join(&id);
    console.say(&format!(
        "\n--- {} ---\n{text}---",
        shown_dir.join(crate::task::TASK_FILE).display()
    ));
    if !opts.yes {
        let answer = console
            .ask(&format!(
                "Write {} (task.toml, reference.log)? [y/N] ",
                shown_dir.display()
            ))
            .unwrap_or_default();
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            console.say("nothing written");
            return Ok(Outcome::Declined);
        }
    }
    let mut log = lines.join("\n");
    log.push('\n');
    write_task(&task_dir, &text, &log)?;
    console.say(&format!(
        "wrote {} and reference.log; `xstack check` accepts it",
        shown_dir.join(crate::task::TASK_FILE).display()
    ));
    Ok(Outcome::Written(task_dir))
}

fn ask_tolerance(console: &mut dyn Console, metric: &str, value: f64, default: &Suggestion) -> f64 {
    loop {
        let answer = console
            .ask(&format!(
                "{metric} = {} from one run; tolerance [{}]: ",
                short(value),
                default.tolerance_toml()
            ))
            .unwrap_or_default();
        let answer = answer.trim();
        if answer.is_empty() {
            return default.tolerance;
        }
        match answer.parse::<f64>() {
            Ok(t) if t.is_finite() && t >= 0.0 => return t,
            _ => console.say("a number >= 0, please"),
        }
    }
}

/// Writes the task folder, then loads it as `xstack check` does; on any failure the folder
/// is removed again.
fn write_task(task_dir: &Path, text: &str, log: &str) -> Result<(), InitError> {
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
        assert!((single_run_tolerance(0.97) - 0.0194).abs() < 1e-12);
        assert_eq!(single_run_tolerance(0.01), 0.001);
    }
}

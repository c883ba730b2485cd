//! Why `xstack init` stopped, as one error enum: bad input (exit 2) or an infrastructure
//! failure (exit 3).

use std::path::PathBuf;

use crate::calibrate::CalibrateError;
use crate::seeds::SeedError;

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
    #[error("no experiment command: pass --command CMD{}{}", candidates_hint(.candidates), notebooks_hint(.notebooks))]
    NoCommand {
        /// The commands the repository names.
        candidates: Vec<String>,
        /// The notebooks it has, the ones its README names first.
        notebooks: Vec<String>,
    },
    /// `--notebook` names no notebook of the repository.
    #[error(
        "--notebook {0}: the repository has no such notebook (a .ipynb file, relative to REPO)"
    )]
    NoNotebook(String),
    /// `--cells` is malformed, or names a cell that is not one of the notebook's code cells.
    #[error("--cells {0}")]
    BadCells(String),
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
        "the command failed ({ending}) after {duration_s:.1} s; nothing was written.{} Its last lines:\n{tail}",
        .advice.as_deref().map(|a| format!(" {a}.")).unwrap_or_default()
    )]
    RunFailed {
        /// How it ended.
        ending: String,
        /// Seconds it ran.
        duration_s: f64,
        /// What to try next, where init can tell (an old repository's packages of its day).
        advice: Option<String>,
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
    /// A package of the reference list has no wheel for this machine and its build from
    /// source fails here.
    #[error(
        "the reference environment does not build: `{package}` ({from}) has no wheel for this machine and its build from source failed (it may need a system library or compiler this machine lacks); nothing was written. Leave it out if the experiment runs without it: {flag}; or install what its build needs. The installer's last lines:\n{tail}"
    )]
    PackageDoesNotBuild {
        /// The package as listed.
        package: String,
        /// Where it came from.
        from: String,
        /// The `--reference-packages` flag without it, spelled out.
        flag: String,
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
    /// The run could not import a package of the repository itself: the command runs a
    /// script in a subfolder, which puts that folder on the import path, not the root.
    #[error(
        "the run failed: no module named `{module}`, a package of the repository itself ({local} at its root) that the script's folder leaves off the import path; nothing was written. Put the repository's root on it with {flag}"
    )]
    LocalModuleOffPath {
        /// The module.
        module: String,
        /// The repository's file or folder that holds it.
        local: String,
        /// The flag that makes it importable, spelled out.
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

fn notebooks_hint(notebooks: &[String]) -> String {
    if notebooks.is_empty() {
        String::new()
    } else {
        format!(
            ", or --notebook PATH for a notebook experiment ({})",
            notebooks.join(", ")
        )
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
            | InitError::PackageDoesNotBuild { .. }
            | InitError::Write { .. } => true,
            InitError::Calibrate(e) => !matches!(
                e,
                CalibrateError::MetricMissing { .. } | CalibrateError::TooFewSeeds(_)
            ),
            _ => false,
        }
    }
}

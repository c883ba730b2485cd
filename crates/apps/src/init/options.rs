//! The options of `xstack init`: what the command line (the binary's `InitArgs`) or the
//! picker's new task asks for.

use std::path::PathBuf;

use crate::task::Direction;

/// How long init's first run may take unless `--run-limit` says otherwise: an hour.
pub const DEFAULT_RUN_LIMIT_S: u64 = 3600;

/// The options of `xstack init`: built from the parsed command line (`xstack init REPO
/// ...`) or by [`InitOptions::for_repo`], and read by [`run`].
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The repository (only read).
    pub repo: PathBuf,
    /// The experiment command (else proposed from the README and entry files, and asked).
    pub command: Option<String>,
    /// The experiment is this notebook (relative to REPO), run top to bottom; written as
    /// `[run] notebook`.
    pub notebook: Option<String>,
    /// The notebook's code cells that form the experiment (`0-6, 21-34`), the others left
    /// out of every run; written as `[run] cells`. Only with `notebook`.
    pub cells: Option<String>,
    /// A shell snippet run before the command in each run's copy (preparing data); written
    /// as `[env] setup`.
    pub setup: Option<String>,
    /// A metric to grade on (repeatable; default: those that look like evaluation results).
    pub metrics: Vec<String>,
    /// Direction of every criterion (default: within, around the claim or the measured value).
    pub direction: Option<Direction>,
    /// The source's framework, torch or jax (default: from the experiment's imports); the
    /// port is in the other one.
    pub from: Option<crate::task::Framework>,
    /// The source side's packages (default: read from the repository: requirements files,
    /// setup.py, setup.cfg, pyproject.toml, environment.yml, and the experiment's imports);
    /// `none` for no environment.
    pub reference_packages: Option<Vec<String>>,
    /// The port side's packages (default: the reference packages without the source's
    /// framework family, plus the port's: jax, flax, optax, or torch).
    pub packages: Option<Vec<String>>,
    /// Runs for the published value and tolerance (XSTACK_SEED = 0..N-1; default: one run).
    pub seeds: Option<u64>,
    /// Task id (default: the folder's name, sanitized).
    pub id: Option<String>,
    /// A paper's text or markdown to read claims from, beside the repository's READMEs,
    /// docs and notebooks.
    pub paper: Option<PathBuf>,
    /// Write the task graded against a claim its runs do not reproduce (recorded as
    /// `not_reproduced`).
    pub accept_unreproduced: bool,
    /// Install the repository's pinned requirements that cannot install on this Python
    /// without their versions (said in the review and in task.toml).
    pub relax_pins: bool,
    /// Seconds init's first run may take: an experiment that trains until stopped, or runs
    /// far past a budget, is stopped there and init says what can shorten it.
    pub run_limit: u64,
    /// Accept the proposal without review.
    pub yes: bool,
    /// The tasks folder (`XSTACK_TASKS_DIR`, else `tasks`).
    pub tasks_dir: PathBuf,
    /// The cache folder (the environments).
    pub cache_dir: PathBuf,
}

impl InitOptions {
    /// `xstack init REPO` with no other option (the picker's new task).
    pub fn for_repo(repo: PathBuf) -> InitOptions {
        InitOptions {
            repo,
            command: None,
            notebook: None,
            cells: None,
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

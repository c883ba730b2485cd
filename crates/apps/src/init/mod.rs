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
//!
//! The flow, a file a step: `target.rs` checks where the task goes, `choose.rs` picks the
//! command and the criteria, `packages.rs` the two environments, `first_run.rs` runs the
//! command once and finds its metrics, `publish.rs` measures the published values and
//! tolerances, `claims.rs` settles each criterion's claim, and `review.rs` shows the proposal
//! and writes it. `options.rs` holds the command line's options, `error.rs` why init stopped.

mod as_of;
mod choose;
pub mod claims;
pub mod deps;
pub mod detect;
mod error;
mod first_run;
pub mod framework;
pub mod limits;
mod options;
mod packages;
pub mod probe;
mod publish;
pub mod render;
pub mod repo;
mod review;
mod target;
pub mod upstream;

pub use choose::direction_for;
pub use error::InitError;
pub use options::{DEFAULT_RUN_LIMIT_S, InitOptions};
pub use publish::{
    MIN_TIMEOUT_S, SINGLE_RUN_RELATIVE, seed_note, single_run_tolerance, timeout_for,
};
pub use target::{relative_path, sanitize_id};

use std::path::PathBuf;

use crate::seeds::SeedRun;

use choose::{choose_command, choose_criteria, criteria_of};
use first_run::{FirstRun, metrics_found};
use packages::{Packages, experiment_files};
use publish::publish;
use render::Proposal;
use review::{Written, metric_note, proposed_criterion, review_and_write};
use target::Target;

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

/// How `xstack init` ended without an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The task folder was written.
    Written(PathBuf),
    /// The user declined; nothing was written.
    Declined,
}

/// Runs `xstack init`. See the module documentation.
pub fn run(opts: &InitOptions, console: &mut dyn Console) -> Result<Outcome, InitError> {
    let target = Target::check(opts, console)?;
    let command = choose_command(opts, &target.repo, console)?;
    let entry = experiment_entry(opts, &target.repo, &command);
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
    let own_packages_note = needs.own_packages_note();
    let with_own = with_own_packages(opts, &needs, console);
    let opts = &with_own;
    let mut packages = Packages::choose(opts, &needs, migration, console);
    let mut first = FirstRun::run(
        opts,
        &target,
        &command,
        entry.as_deref(),
        &mut packages,
        &needs,
        console,
    )?;
    let network_note = limits::network_note(&needs.hazards);
    if let Some(note) = &network_note {
        console.say(&format!("note: {note}"));
    }
    let found = metrics_found(&first.run, &command, console)?;
    let (chosen, why) = choose_criteria(opts, &found)?;
    let names: Vec<&str> = chosen.iter().map(|c| c.name.as_str()).collect();
    console.say(&format!("criteria: {} ({why})", names.join(", ")));
    let criteria = criteria_of(opts, &chosen);
    let published = publish(
        opts, &target, &mut first, &found, &criteria, &command, console,
    )?;
    let command = published.command.clone().unwrap_or(command);
    let lines = published
        .first
        .as_ref()
        .map_or_else(|| first.run.lines(), SeedRun::lines);
    let provenance = claims::provenance(&first.plan, &packages.reference);
    let settled = claims::settle_claims(
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
        citation: claims::citation(opts, &settled, &command),
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
        cells: opts.cells.clone(),
        setup: opts.setup.clone(),
        own_packages_note,
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

/// The experiment's file: the notebook, or the file the command runs (None when it cannot
/// tell).
fn experiment_entry(opts: &InitOptions, repo: &std::path::Path, command: &str) -> Option<PathBuf> {
    match &opts.notebook {
        Some(notebook) => Some(repo.join(notebook)),
        None => shell_words::split(command)
            .ok()
            .and_then(|words| crate::command_line::entry_file(repo, &words)),
    }
}

/// `opts` with the `[env] setup` line that lets every run import the repository's own
/// packages from the repository (before the user's `--setup`), when the experiment imports
/// one; says so.
fn with_own_packages(
    opts: &InitOptions,
    needs: &deps::Needs,
    console: &mut dyn Console,
) -> InitOptions {
    let mut opts = opts.clone();
    if let (Some(line), Some(note)) = (needs.own_packages_setup(), needs.own_packages_note()) {
        console.say(&format!("reference packages: {note}: `{line}`"));
        opts.setup = Some(match opts.setup.take() {
            Some(given) => format!("{line}\n{given}"),
            None => line,
        });
    }
    opts
}

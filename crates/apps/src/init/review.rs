//! The proposal reviewed and written: each criterion as the task file proposes it, the
//! task file shown and confirmed (unless `--yes`), then the task folder written and loaded
//! as `xstack check` does, removed again on any failure.

use std::path::{Path, PathBuf};

use crate::calibrate::Suggestion;
use crate::metrics;
use crate::task::{CriterionSpec, MetricSpec, Task};

use super::detect::Candidate;
use super::render::ProposedCriterion;
use super::target::Target;
use super::{Console, InitError, InitOptions, Outcome, claims, probe};

/// Why every criterion init proposes is `within` unless `--direction` says otherwise.
const WITHIN_REASON: &str = "within, the default: a port reproduces the result when it lands near it on either side; a value far better than the source reaches is a broken port too (a causal mask left out lets a language model see what it predicts)";

/// A metric's definition and how it was read, for the comment over it.
pub(super) fn metric_note(c: &Candidate) -> (MetricSpec, String) {
    let mut how = c.style.label().to_string();
    if c.percent {
        how.push_str(", a percentage");
    }
    how.push_str(&format!(" in lines like `{}`", c.example.trim()));
    (c.spec.clone(), how)
}

/// A criterion as the task file proposes it: around its claim when it is graded against one.
pub(super) fn proposed_criterion(
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
pub(super) struct Written {
    /// `task.toml`.
    pub(super) text: String,
    /// The reference run's plain lines (`reference.log`).
    pub(super) lines: Vec<String>,
    /// `probe.py`, when a skeleton is proposed.
    pub(super) skeleton: Option<String>,
    /// The model and loss the probe skeleton is for.
    pub(super) probe_target: Option<probe::ProbeTarget>,
}

/// Shows the task file, asks to write it (unless `--yes`), writes it and says what was
/// written.
pub(super) fn review_and_write(
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

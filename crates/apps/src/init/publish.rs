//! The published values and tolerances: measured from `--seeds` runs (seeds that move
//! nothing found out as `xstack calibrate` does), or the first run's values with a default
//! tolerance; asked on a terminal. Also the `[run] timeout_s` and the `[phase2]` seed line.

use std::time::Duration;

use crate::calibrate::{self, Calibration, Measurement, SeedRunner, Spread, Suggestion, short};
use crate::metrics::Extractor;
use crate::seeds::SeedRun;
use crate::seeds::usage::{self, SeedUse};
use crate::task::{CriterionSpec, MetricSpec};

use super::detect::Candidate;
use super::first_run::FirstRun;
use super::target::Target;
use super::{Console, InitError, InitOptions};

/// Relative part of the default tolerance of a single run: 2% of |value|.
pub const SINGLE_RUN_RELATIVE: f64 = 0.02;

/// The shortest `[run] timeout_s` written.
pub const MIN_TIMEOUT_S: u64 = 600;

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

/// The published values and tolerances init writes, and what goes with them.
pub(super) struct Published {
    /// One per criterion.
    pub(super) suggestions: Vec<Suggestion>,
    /// The numbers behind each, as comment lines.
    pub(super) evidence: Vec<Vec<String>>,
    /// The `[integrity] seed_check` block, when the runs moved a value.
    pub(super) integrity: Option<String>,
    /// The `seed:` line of `[phase2]`.
    pub(super) seed_note: String,
    /// A command that replaced the given one: the repository's seed option set from
    /// XSTACK_SEED.
    pub(super) command: Option<String>,
    /// The comment over `[run] command`.
    pub(super) command_note: Option<String>,
    /// The seed-0 run of that command (for `reference.log`).
    pub(super) first: Option<SeedRun>,
    /// The longest run.
    pub(super) longest_s: f64,
    /// What the runs measured of each criterion (for authenticating its claim).
    pub(super) measured: Vec<crate::claims::Measured>,
}

/// The published values and tolerances: from `--seeds` runs, or from the first run alone.
pub(super) fn publish(
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
                // A seed the source fixes (a constant, or a default such as
                // `def main(seed=5678)`) is varied in a copy when the seeds move nothing, so
                // that the tolerance is a measured spread, not a guess.
                vary_fixed_seed: true,
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
        integrity: calibrate::suggests_seed_check(&cal)
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
    let offset = measured.is_some_and(|c| matches!(c.spread, Spread::FixedSeedOffset(_)));
    let hash_order = measured.is_some_and(|c| matches!(c.spread, Spread::HashOrder(_)));
    match (moved, u.reads.is_some(), u.fixed_text()) {
        (Some(true), false, _) if hash_order => text.push_str(
            " Its numbers vary from run to run all the same, through Python's hash randomisation (the order of its sets and dicts of strings): with PYTHONHASHSEED=0 two runs were bit-identical.",
        ),
        (Some(true), false, _) if offset => text.push_str(
            " Offset by XSTACK_SEED in copies of the source, that seed moved the numbers: the tolerance is their spread. A port fixes a seed of its own; its generator draws other numbers from it.",
        ),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_and_single_run_tolerances() {
        assert_eq!(timeout_for(2.0), 600);
        assert_eq!(timeout_for(250.0), 780);
        assert!((single_run_tolerance(0.97, Some(1e-4)) - 0.0194).abs() < 1e-12);
        assert_eq!(single_run_tolerance(6.58e-5, None), 0.02 * 6.58e-5);
        assert_eq!(single_run_tolerance(0.01, Some(0.001)), 0.001);
    }
}

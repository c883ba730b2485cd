//! `xstack calibrate`: runs a task's PyTorch source once per seed and turns the spread of each
//! criterion's metric into a suggested `published` value and `tolerance`. The statistics and
//! the tolerance rule are shared with `xstack init`.
//!
//! The rule: `published` is the mean over the seeds; `tolerance` is the larger of three sample
//! standard deviations and a floor of 1% of |mean| (at least 0.001), rounded up to two
//! significant digits; `published` is rounded to the same decimal place.

use std::path::Path;
use std::time::Duration;

use crate::metrics::{self, Extractor};
use crate::seeds::{self, RunPlan, Scratch, SeedError, SeedRun};
use crate::task::{CriterionSpec, Direction, Reduce, Task};

/// The default number of seeds.
pub const DEFAULT_SEEDS: u64 = 5;
/// Relative part of the tolerance floor: 1% of |mean|.
pub const FLOOR_RELATIVE: f64 = 0.01;
/// Absolute part of the tolerance floor.
pub const FLOOR_ABSOLUTE: f64 = 1e-3;
/// Standard deviations in a suggested tolerance.
pub const STD_FACTOR: f64 = 3.0;

/// Why a calibration could not finish.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// Fewer than two seeds were asked for.
    #[error("--seeds {0}: at least 2 seeds are needed to measure a spread")]
    TooFewSeeds(u64),
    /// The reference environment could not be built.
    #[error("{0}")]
    Env(#[from] crate::env::EnvError),
    /// A run could not be started.
    #[error("{0}")]
    Seed(#[from] SeedError),
    /// A run failed.
    #[error(
        "the run with XSTACK_SEED={seed} failed ({ending}) after {duration_s:.1} s; its last lines:\n{tail}"
    )]
    RunFailed {
        /// The seed.
        seed: u64,
        /// How it ended.
        ending: String,
        /// Seconds it ran.
        duration_s: f64,
        /// Its last lines.
        tail: String,
    },
    /// A criterion's metric never appeared in a run's output.
    #[error(
        "the run with XSTACK_SEED={seed} never printed metric `{metric}` (check its [[metric]] definition); its last lines:\n{tail}"
    )]
    MetricMissing {
        /// The seed.
        seed: u64,
        /// The metric.
        metric: String,
        /// The run's last lines.
        tail: String,
    },
}

/// Mean, spread and range of one metric over the seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The values, one per seed in seed order.
    pub values: Vec<f64>,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for a single value.
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// The summary of `values`; None when there are none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let std = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Some(Summary {
            values: values.to_vec(),
            mean,
            std,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// The smallest tolerance suggested around `mean`: 1% of |mean|, at least 0.001.
pub fn floor(mean: f64) -> f64 {
    (FLOOR_RELATIVE * mean.abs()).max(FLOOR_ABSOLUTE)
}

/// A `published` value and `tolerance` as they are written into a task file.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// The published value, rounded to the tolerance's decimal place.
    pub published: f64,
    /// The tolerance, rounded up to two significant digits.
    pub tolerance: f64,
    /// Decimal places both are written with.
    pub decimals: usize,
}

impl Suggestion {
    /// Rounds a centre value and a raw tolerance the way task files get them: the tolerance
    /// up to two significant digits, the value to the same decimal place.
    pub fn rounded(value: f64, raw_tolerance: f64) -> Suggestion {
        let raw = raw_tolerance.max(f64::MIN_POSITIVE);
        let exponent = raw.log10().floor() as i32;
        let unit = 10f64.powi(exponent - 1);
        // A hair below the exact multiple so that 0.0031 stays 0.0031 despite binary noise.
        let tolerance = ((raw / unit) * (1.0 - 1e-12)).ceil() * unit;
        let exponent = tolerance.log10().floor() as i32;
        let decimals = (1 - exponent).max(0) as usize;
        let quantum = 10f64.powi(-(decimals as i32));
        let published = (value / quantum).round() * quantum;
        Suggestion {
            published: round_to(published, decimals),
            tolerance: round_to(tolerance, decimals),
            decimals,
        }
    }

    /// The suggestion for a seed summary: mean, and the larger of 3 std and the floor.
    pub fn from_summary(s: &Summary) -> Suggestion {
        Suggestion::rounded(s.mean, (STD_FACTOR * s.std).max(floor(s.mean)))
    }

    /// The published value as TOML (always a float).
    pub fn published_toml(&self) -> String {
        toml_float(self.published, self.decimals)
    }

    /// The tolerance as TOML (always a float).
    pub fn tolerance_toml(&self) -> String {
        toml_float(self.tolerance, self.decimals)
    }
}

fn round_to(v: f64, decimals: usize) -> f64 {
    format!("{v:.decimals$}").parse().unwrap_or(v)
}

/// `v` with `decimals` places, and a `.0` when that leaves an integer (TOML would read an
/// integer otherwise).
pub fn toml_float(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

/// A number for people: up to 6 significant digits, no trailing zeros.
pub fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    if !(-4..=9).contains(&magnitude) {
        return format!("{v:.5e}");
    }
    let decimals = (5 - magnitude).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One criterion over all seeds.
#[derive(Debug, Clone)]
pub struct CriterionCalibration {
    /// The criterion as the task has it.
    pub criterion: CriterionSpec,
    /// The reduced value of each seed.
    pub summary: Summary,
    /// The suggested values.
    pub suggestion: Suggestion,
}

/// The outcome of a calibration.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The task id.
    pub task: String,
    /// The command that ran.
    pub command: String,
    /// The seeds, in order.
    pub seeds: Vec<u64>,
    /// Seconds each run took.
    pub durations_s: Vec<f64>,
    /// One entry per criterion, in task order.
    pub criteria: Vec<CriterionCalibration>,
}

/// The reduced value of each criterion in one run's output, in criterion order; Err names
/// the first criterion metric that never appeared.
pub fn criterion_values(
    extractor: Extractor,
    criteria: &[CriterionSpec],
    output: &str,
) -> Result<Vec<f64>, String> {
    let series = metrics::parse_text(extractor, output);
    criteria
        .iter()
        .map(|c| {
            series
                .iter()
                .find(|(name, _)| name == &c.metric)
                .and_then(|(_, points)| metrics::reduce(points, c.reduce))
                .ok_or_else(|| c.metric.clone())
        })
        .collect()
}

/// Summarises per-seed criterion values (`per_seed[seed][criterion]`) into calibrations.
pub fn summarize(criteria: &[CriterionSpec], per_seed: &[Vec<f64>]) -> Vec<CriterionCalibration> {
    criteria
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let values: Vec<f64> = per_seed.iter().filter_map(|v| v.get(i).copied()).collect();
            let summary = Summary::of(&values)?;
            Some(CriterionCalibration {
                criterion: c.clone(),
                suggestion: Suggestion::from_summary(&summary),
                summary,
            })
        })
        .collect()
}

/// Checks that a finished run succeeded and printed every criterion's metric; returns its
/// criterion values.
pub fn check_run(
    run: &SeedRun,
    extractor: Extractor,
    criteria: &[CriterionSpec],
) -> Result<Vec<f64>, CalibrateError> {
    if !run.succeeded() {
        return Err(CalibrateError::RunFailed {
            seed: run.seed,
            ending: run.ending(),
            duration_s: run.duration_s,
            tail: run.tail(seeds::TAIL_LINES),
        });
    }
    criterion_values(extractor, criteria, &run.output).map_err(|metric| {
        CalibrateError::MetricMissing {
            seed: run.seed,
            metric,
            tail: run.tail(seeds::TAIL_LINES),
        }
    })
}

/// Runs the task's source `n` times (XSTACK_SEED = 0..n-1) in its reference environment and
/// summarises every criterion. `source` is the source folder (a git source already fetched);
/// `progress` receives one line per step.
pub fn calibrate(
    task: &Task,
    source: &Path,
    n: u64,
    cache: &Path,
    progress: &mut dyn FnMut(String),
) -> Result<Calibration, CalibrateError> {
    if n < 2 {
        return Err(CalibrateError::TooFewSeeds(n));
    }
    let env = crate::env::ensure(cache, &task.spec.env.reference_packages, progress)?;
    let plan = RunPlan {
        source: source.to_path_buf(),
        setup: task.spec.env.setup.clone(),
        command: task.spec.run.command.clone(),
        timeout: Some(Duration::from_secs(task.spec.run.timeout_s)),
        env,
        task_id: task.spec.id.clone(),
        size: (120, 36),
    };
    let scratch = Scratch::new("calibrate")?;
    let criteria = &task.spec.criteria;
    let mut per_seed = Vec::new();
    let mut durations_s = Vec::new();
    for seed in 0..n {
        progress(format!("seed {seed}: $ {}", plan.command));
        let run = seeds::run_seed(&plan, seed, scratch.path(), &mut |_| {})?;
        let values = check_run(&run, Extractor::for_task(task), criteria)?;
        let shown: Vec<String> = criteria
            .iter()
            .zip(&values)
            .map(|(c, v)| format!("{}={}", c.metric, short(*v)))
            .collect();
        progress(format!(
            "seed {seed}: {} in {:.1} s, {}",
            run.ending(),
            run.duration_s,
            shown.join(" ")
        ));
        durations_s.push(run.duration_s);
        per_seed.push(values);
    }
    Ok(Calibration {
        task: task.spec.id.clone(),
        command: plan.command,
        seeds: (0..n).collect(),
        durations_s,
        criteria: summarize(criteria, &per_seed),
    })
}

/// The `[[criterion]]` block of a suggestion, commented with the numbers behind it.
pub fn criterion_block(
    metric: &str,
    reduce: Reduce,
    direction: Direction,
    s: &Suggestion,
) -> String {
    format!(
        "[[criterion]]\nmetric = {}\nreduce = \"{}\"\npublished = {}\ntolerance = {}\ndirection = \"{}\"\n",
        toml_string(metric),
        reduce.as_str(),
        s.published_toml(),
        s.tolerance_toml(),
        direction.as_str()
    )
}

/// The comment lines describing one criterion's seeds, each starting with `# `.
pub fn summary_comment(c: &CriterionCalibration) -> String {
    let s = &c.summary;
    let values: Vec<String> = s.values.iter().map(|v| short(*v)).collect();
    let fl = floor(s.mean);
    format!(
        "# {} (reduce {}), seeds 0-{}: {}\n# mean {}  std {}  min {}  max {}\n# tolerance = max(3 std = {}, floor {}) rounded up: {}\n",
        c.criterion.metric,
        c.criterion.reduce.as_str(),
        s.values.len().saturating_sub(1),
        values.join(", "),
        short(s.mean),
        short(s.std),
        short(s.min),
        short(s.max),
        short(STD_FACTOR * s.std),
        short(fl),
        c.suggestion.tolerance_toml()
    )
}

/// Whether the seeds moved any criterion value (then `[integrity] seed_check` can tell a
/// seeded run from a constant result).
pub fn seed_varies(criteria: &[CriterionCalibration]) -> bool {
    criteria.iter().any(|c| c.summary.std > 0.0)
}

/// The calibration as TOML ready to paste: comments with the numbers, then one
/// `[[criterion]]` block per criterion, and `[integrity] seed_check = true` when the seeds
/// moved a value.
pub fn render_toml(cal: &Calibration) -> String {
    let mut out = format!(
        "# xstack calibrate {}: {} runs of `{}` (XSTACK_SEED 0-{})\n",
        cal.task,
        cal.seeds.len(),
        cal.command,
        cal.seeds.len().saturating_sub(1)
    );
    for c in &cal.criteria {
        out.push('\n');
        out.push_str(&summary_comment(c));
        out.push_str(&criterion_block(
            &c.criterion.metric,
            c.criterion.reduce,
            c.criterion.direction,
            &c.suggestion,
        ));
    }
    if seed_varies(&cal.criteria) {
        out.push_str(
            "\n# The seeds moved the result: a port whose numbers do not move with XSTACK_SEED is a bypass.\n[integrity]\nseed_check = true\n",
        );
    }
    out
}

/// The calibration as a JSON object for scripts.
pub fn to_json(cal: &Calibration) -> serde_json::Value {
    let criteria: Vec<serde_json::Value> = cal
        .criteria
        .iter()
        .map(|c| {
            let s = &c.summary;
            serde_json::json!({
                "metric": c.criterion.metric,
                "reduce": c.criterion.reduce.as_str(),
                "direction": c.criterion.direction.as_str(),
                "values": s.values.iter().zip(&cal.seeds)
                    .map(|(v, seed)| serde_json::json!({"seed": seed, "value": v}))
                    .collect::<Vec<_>>(),
                "mean": s.mean,
                "std": s.std,
                "min": s.min,
                "max": s.max,
                "floor": floor(s.mean),
                "published": c.suggestion.published,
                "tolerance": c.suggestion.tolerance,
                "current": {"published": c.criterion.published, "tolerance": c.criterion.tolerance},
            })
        })
        .collect();
    serde_json::json!({
        "task": cal.task,
        "command": cal.command,
        "seeds": cal.seeds,
        "durations_s": cal.durations_s,
        "criteria": criteria,
    })
}

/// A TOML basic string.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_std_uses_n_minus_one() {
        let s = Summary::of(&[1.0, 2.0, 4.0]).unwrap();
        assert!((s.mean - 7.0 / 3.0).abs() < 1e-12);
        assert!((s.std - (7.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!((s.min, s.max), (1.0, 4.0));
        assert_eq!(Summary::of(&[2.5]).unwrap().std, 0.0);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn tolerance_is_three_std_or_the_floor_rounded_up() {
        // The test task's seeds 0-2: 3 std = 0.003102 -> 0.0032, published to 4 places.
        let s = Summary::of(&[0.010148, 0.012203, 0.011379]).unwrap();
        let sug = Suggestion::from_summary(&s);
        assert_eq!(sug.tolerance_toml(), "0.0032");
        assert_eq!(sug.published_toml(), "0.0112");
        // digits-mlp's seeds: 3 std = 0.0047 is under the floor, 1% of 0.9778.
        let s = Summary::of(&[0.9756, 0.98, 0.9778, 0.9778, 0.9778]).unwrap();
        let sug = Suggestion::from_summary(&s);
        assert_eq!(sug.tolerance_toml(), "0.0098");
        assert_eq!(sug.published_toml(), "0.9778");
        // Identical values near zero: the absolute floor.
        let sug = Suggestion::from_summary(&Summary::of(&[0.0, 0.0]).unwrap());
        assert_eq!(
            (sug.published_toml().as_str(), sug.tolerance_toml().as_str()),
            ("0.0000", "0.0010")
        );
        // Large values stay floats.
        let sug = Suggestion::rounded(1234.5, 40.0);
        assert_eq!(
            (sug.published_toml().as_str(), sug.tolerance_toml().as_str()),
            ("1235.0", "40.0")
        );
        assert_eq!(Suggestion::rounded(1.0, 0.0031).tolerance_toml(), "0.0031");
    }

    #[test]
    fn rendered_blocks_parse_as_criteria() {
        let criterion = CriterionSpec {
            metric: "acc".into(),
            reduce: Reduce::Last,
            published: 0.5,
            tolerance: 0.1,
            direction: Direction::Higher,
        };
        let cal = Calibration {
            task: "t".into(),
            command: "python train.py".into(),
            seeds: vec![0, 1, 2],
            durations_s: vec![1.0; 3],
            criteria: summarize(&[criterion], &[vec![0.9], vec![0.92], vec![0.91]]),
        };
        let text = render_toml(&cal);
        #[derive(serde::Deserialize)]
        struct Doc {
            criterion: Vec<CriterionSpec>,
        }
        let doc: Doc = toml::from_str(&text).unwrap();
        assert_eq!(doc.criterion[0].metric, "acc");
        assert_eq!(doc.criterion[0].published, 0.91);
        assert_eq!(doc.criterion[0].tolerance, 0.03);
        assert!(
            text.contains("# mean 0.91  std 0.01  min 0.9  max 0.92"),
            "{text}"
        );
        let json = to_json(&cal);
        assert_eq!(json["criteria"][0]["values"][1]["value"], 0.92);
        assert_eq!(json["criteria"][0]["tolerance"], 0.03);
    }

    #[test]
    fn numbers_for_people_are_short() {
        assert_eq!(short(0.011243333), "0.0112433");
        assert_eq!(short(0.98), "0.98");
        assert_eq!(short(12.0), "12");
        assert_eq!(short(1.5e-7), "1.50000e-7");
        assert_eq!(toml_string("a\"b\\c"), r#""a\"b\\c""#);
    }
}

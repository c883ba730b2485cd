//! Matching claims to a printed metric: every claim is scored against a [`MetricTarget`]
//! from named signals, each adding to or taking from the score with a reason a person can
//! read; [`choose`] takes the best only when it is clearly ahead and names the metric.
//!
//! The weights, in score points:
//!
//! | signal | points |
//! |---|---|
//! | the command shown right before the claim is the task's (Jaccard of their arguments) | up to +5 |
//! | the label names the metric's measure (`loss`, `logprob`, `nll` are one measure) | +3 |
//! | the label names another measure (`f1` for an accuracy) | −4 |
//! | the label names the metric's split (`val`, `validation`, `dev`, `eval` are one split) | +2 |
//! | the label names another split (`train` for a val metric) | −3 |
//! | no measure (split) in the label, but the sentence names the metric's | +1 (+0.5) |
//! | the table row names arguments of the command (`Cora` for `--dataset cora`) | +3 |
//! | another row of the same table names more of them (`gpt2-medium` over `gpt2`) | −3 |
//! | the sentence names the value of a `--dataset`, `--model`, `--task`-like option | +1.5 |
//! | each setting the claim's line states that the command sets the same (or differently) | ±1, at most ±2 |
//! | closeness to the measured value: 1.5 × exp(−relative difference / 2 %) | up to +1.5 |
//!
//! The label's measure and split are read from its metric words nearest the number only
//! (`recall count-based 4-gram was 2.11` names no measure: `4-gram` is nearest).
//!
//! Closeness is deliberately weaker than any naming signal: a claim that clearly names the
//! metric is matched even when the measurement is far from it (that is what authenticating
//! then reports).

use super::command;
use super::scan::{self, ScanOptions};
use super::vocab::{self, Split};
use super::{Claim, Unit};

/// How far the best match must be ahead of the next for [`choose`] to take it.
pub const MARGIN: f64 = 2.0;

/// Two claims whose values (in the metric's units) differ by at most this fraction agree: a
/// rival that agrees with the best does not make the choice ambiguous.
pub const AGREEMENT: f64 = 0.005;
/// A rival claim further than this (relative) from the measured value, when the best one
/// agrees with it, is not a rival ([`choose`]).
pub const SINGLED_OUT: f64 = 0.01;

const COMMAND: f64 = 5.0;
const MEASURE_MATCH: f64 = 3.0;
const MEASURE_CONFLICT: f64 = -4.0;
const SPLIT_MATCH: f64 = 2.0;
const SPLIT_CONFLICT: f64 = -3.0;
const CONTEXT_MEASURE: f64 = 1.0;
const CONTEXT_SPLIT: f64 = 0.5;
const ROW_MATCH: f64 = 3.0;
const ROW_OTHER: f64 = -3.0;
const NAMES_VALUE: f64 = 1.5;
const SETTING: f64 = 1.0;
const SETTINGS_CAP: f64 = 2.0;
const CLOSENESS: f64 = 1.5;
const CLOSENESS_SCALE: f64 = 0.02;

/// Option keys whose values name what is evaluated (`--dataset cora`): a sentence naming
/// such a value is about this run.
const NAMING_KEYS: [&str; 9] = [
    "dataset",
    "data",
    "task",
    "model",
    "arch",
    "benchmark",
    "env",
    "corpus",
    "lang",
];

/// Measures whose values are fractions (printed as 0.81, published as 81 %).
const BOUNDED: [&str; 6] = ["accuracy", "f1", "precision", "recall", "auc", "iou"];

/// The metric a claim is matched to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricTarget {
    /// The metric's name in the task (`val_loss`, `test_acc`).
    pub name: String,
    /// A line the run prints it on (`Validation Accuracy: 0.7940 Test Accuracy: 0.8100`).
    pub line: String,
    /// The regex's literal text before the value (`Test Accuracy:`).
    pub literal: String,
    /// The command's arguments (`["citation.py", "--dataset", "cora", "--tuned"]`).
    pub args: Vec<String>,
    /// The measured value (a mean over runs), when there is one.
    pub measured: Option<f64>,
}

impl MetricTarget {
    /// The value printed after the literal in the line, if both are given.
    pub fn printed_value(&self) -> Option<f64> {
        if self.literal.is_empty() {
            return None;
        }
        let at = self.line.find(&self.literal)? + self.literal.len();
        scan::scan(&self.line[at..], ScanOptions::default())
            .first()
            .map(|f| f.value)
    }

    /// Whether the metric is printed as a fraction (at most 1 in magnitude), judged from the
    /// measured value, else the printed one; None when neither is known.
    pub fn is_fraction(&self) -> Option<bool> {
        self.measured
            .or_else(|| self.printed_value())
            .map(|v| v.abs() <= 1.0)
    }
}

/// A claim scored against a metric.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimMatch {
    /// The claim's index in the slice given to [`rank`].
    pub index: usize,
    /// The claim.
    pub claim: Claim,
    /// The score (higher is better).
    pub score: f64,
    /// The claim's value in the printed metric's units (0.810 for `81.0 %` of a fraction).
    pub value_in_metric_units: f64,
    /// The claim's label (or table headers) names the metric's measure, or its split with
    /// the measure said around it.
    pub names_metric: bool,
    /// Why it scored what it did, one reason a line.
    pub reasons: Vec<String>,
    /// The measured value it was ranked against, when there was one.
    pub measured: Option<f64>,
}

/// What [`choose`] decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// This match (an index into the matches) is the claim.
    Unambiguous(usize),
    /// These matches (best first) are all plausible.
    Ambiguous {
        /// Indices into the matches.
        candidates: Vec<usize>,
        /// Why no single one was taken.
        why: String,
    },
    /// No claim matches the metric.
    None,
}

#[derive(Debug, Default)]
struct Concepts {
    measures: Vec<&'static str>,
    splits: Vec<Split>,
}

impl Concepts {
    fn of<'a>(words: impl IntoIterator<Item = &'a str>) -> Concepts {
        let mut c = Concepts::default();
        for w in words {
            let (m, s) = vocab::concepts_of(&w.to_lowercase());
            for m in m {
                if !c.measures.contains(&m) {
                    c.measures.push(m);
                }
            }
            for s in s {
                if !c.splits.contains(&s) {
                    c.splits.push(s);
                }
            }
        }
        c
    }

    fn is_empty(&self) -> bool {
        self.measures.is_empty() && self.splits.is_empty()
    }

    fn shares_measure(&self, other: &Concepts) -> bool {
        self.measures.iter().any(|m| other.measures.contains(m))
    }

    fn shares_split(&self, other: &Concepts) -> bool {
        self.splits.iter().any(|s| other.splits.contains(s))
    }
}

fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.trim_matches('-').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn target_concepts(target: &MetricTarget) -> Concepts {
    let mut words = words_of(&target.name);
    words.extend(words_of(&target.literal));
    let c = Concepts::of(words.iter().map(String::as_str));
    if c.is_empty() {
        return Concepts::of(words_of(&target.line).iter().map(String::as_str));
    }
    c
}

fn join(items: &[&str]) -> String {
    items.join(", ")
}

fn splits_text(splits: &[Split]) -> String {
    splits
        .iter()
        .map(|s| s.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn same_table(a: &Claim, b: &Claim) -> bool {
    match (&a.table, &b.table) {
        (Some(x), Some(y)) => {
            x.table_line == y.table_line && a.location.path() == b.location.path()
        }
        _ => false,
    }
}

/// How many words of a row header the command's arguments name, all of them (0 if any is
/// not named): `gpt2-medium` is 2 for `config/eval_gpt2_medium.py`, `gpt2` is 1.
fn row_strength(row_header: &str, target_tokens: &std::collections::HashSet<String>) -> usize {
    let row: Vec<String> = words_of(row_header)
        .into_iter()
        .flat_map(|w| {
            w.split(|c: char| !c.is_alphanumeric())
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    if row.iter().all(|t| target_tokens.contains(t)) {
        row.len()
    } else {
        0
    }
}

/// Every claim scored against the target, best first (ties keep the claims' order).
pub fn rank(claims: &[Claim], target: &MetricTarget) -> Vec<ClaimMatch> {
    let wanted = target_concepts(target);
    let target_items = command::items(&target.args);
    let target_tokens = command::tokens(&target_items);
    let target_options = command::options(&target_items);
    let option_values: Vec<&str> = target_options
        .iter()
        .filter(|(k, _)| NAMING_KEYS.iter().any(|n| k.contains(n)))
        .map(|(_, v)| v.as_str())
        .filter(|v| v.len() >= 3 && v.chars().all(char::is_alphanumeric))
        .collect();
    let fraction = target.is_fraction();
    let mut matches: Vec<ClaimMatch> = claims
        .iter()
        .enumerate()
        .map(|(index, claim)| {
            let mut score = 0.0;
            let mut reasons = Vec::new();

            let mut label_words = scan::metric_run(&words_of(&claim.label));
            if let Some(cell) = &claim.table {
                label_words.extend(words_of(&cell.column_header));
                label_words.extend(words_of(&cell.row_header));
            }
            let label = Concepts::of(label_words.iter().map(String::as_str));
            let context_words = words_of(&claim.context);
            let context = Concepts::of(context_words.iter().map(String::as_str));
            let shown = if claim.label.is_empty() {
                "no label".to_string()
            } else {
                format!("label '{}'", claim.label)
            };

            let mut measure_named = false;
            if !wanted.measures.is_empty() {
                if label.shares_measure(&wanted) {
                    score += MEASURE_MATCH;
                    measure_named = true;
                    reasons.push(format!(
                        "{shown} names the measure ({})",
                        join(&wanted.measures)
                    ));
                } else if !label.measures.is_empty() {
                    score += MEASURE_CONFLICT;
                    reasons.push(format!(
                        "{shown} names {}, not {}",
                        join(&label.measures),
                        join(&wanted.measures)
                    ));
                } else if context.shares_measure(&wanted) {
                    score += CONTEXT_MEASURE;
                    reasons.push(format!(
                        "its surroundings mention {}",
                        join(&wanted.measures)
                    ));
                }
            }
            let mut split_named = false;
            if !wanted.splits.is_empty() {
                if label.shares_split(&wanted) {
                    score += SPLIT_MATCH;
                    split_named = true;
                    reasons.push(format!(
                        "{shown} names the split ({})",
                        splits_text(&wanted.splits)
                    ));
                } else if !label.splits.is_empty() {
                    score += SPLIT_CONFLICT;
                    reasons.push(format!(
                        "{shown} names the {} split, not {}",
                        splits_text(&label.splits),
                        splits_text(&wanted.splits)
                    ));
                } else if context.shares_split(&wanted) {
                    score += CONTEXT_SPLIT;
                    reasons.push(format!(
                        "its surroundings mention {}",
                        splits_text(&wanted.splits)
                    ));
                }
            }
            if reasons.is_empty() {
                reasons.push(format!("nothing around it names {}", target.name));
            }
            let names_metric = if wanted.measures.is_empty() {
                split_named
            } else {
                measure_named || (split_named && context.shares_measure(&wanted))
            };

            if !target_items.is_empty() {
                let best = claim
                    .commands
                    .iter()
                    .map(|c| {
                        let items = command::items(&command::split_command(c));
                        (command::jaccard(&items, &target_items), c)
                    })
                    .fold(None, |best: Option<(f64, &String)>, (j, c)| match best {
                        Some((b, _)) if b >= j => best,
                        _ => Some((j, c)),
                    });
                if let Some((j, c)) = best
                    && j > 0.0
                {
                    score += COMMAND * j;
                    let how = if j >= 1.0 {
                        "the task's command".to_string()
                    } else {
                        format!("{:.0}% of its arguments are the task's", j * 100.0)
                    };
                    reasons.push(format!("stated after `{c}` ({how})"));
                }
            }

            if let Some(cell) = &claim.table {
                let strength = row_strength(&cell.row_header, &target_tokens);
                let best_row = claims
                    .iter()
                    .filter(|o| same_table(o, claim))
                    .filter_map(|o| o.table.as_ref())
                    .max_by_key(|t| row_strength(&t.row_header, &target_tokens))
                    .filter(|t| row_strength(&t.row_header, &target_tokens) > strength);
                if let Some(best_row) = best_row {
                    score += ROW_OTHER;
                    reasons.push(format!(
                        "its row '{}' is not the command's (row '{}' is)",
                        cell.row_header, best_row.row_header
                    ));
                } else if strength > 0 {
                    score += ROW_MATCH;
                    reasons.push(format!(
                        "its row '{}' is named by the command's arguments",
                        cell.row_header
                    ));
                }
            } else if let Some(v) = option_values
                .iter()
                .find(|v| context_words.iter().any(|w| w == *v))
            {
                score += NAMES_VALUE;
                reasons.push(format!("its sentence names '{v}', as the command does"));
            }

            let mut settings = 0.0;
            for (k, v) in command::config_pairs(&claim.quote) {
                if let Some((_, tv)) = target_options.iter().find(|(tk, _)| *tk == k) {
                    if command::same_value(&v, tv) {
                        settings += SETTING;
                        reasons.push(format!("its line sets {k}={v}, as the command does"));
                    } else {
                        settings -= SETTING;
                        reasons.push(format!("its line sets {k}={v}, the command {k}={tv}"));
                    }
                }
            }
            score += settings.clamp(-SETTINGS_CAP, SETTINGS_CAP);

            let mut value = claim.value;
            if claim.unit == Unit::Percent {
                match fraction {
                    Some(true) => {
                        value = percent_to_fraction(claim);
                        reasons.push(format!(
                            "{} is {} in the metric's units (a fraction)",
                            claim.value_text(),
                            value
                        ));
                    }
                    Some(false) => {}
                    None => reasons.push(format!(
                        "{} kept as written: the metric's printed units are unknown",
                        claim.value_text()
                    )),
                }
            } else if fraction == Some(true)
                && claim.value > 1.0
                && claim.value <= 100.0
                && label.measures.iter().any(|m| BOUNDED.contains(m))
            {
                value = percent_to_fraction(claim);
                reasons.push(format!(
                    "{} has no unit; read as a percentage: {}",
                    claim.number, value
                ));
            }

            if let Some(m) = target.measured.filter(|m| m.is_finite()) {
                let rel = (value - m).abs() / m.abs().max(1e-12);
                let c = CLOSENESS * (-rel / CLOSENESS_SCALE).exp();
                score += c;
                reasons.push(format!(
                    "{:.1}% from the measured {m} (+{c:.2})",
                    rel * 100.0
                ));
            }

            ClaimMatch {
                index,
                claim: claim.clone(),
                score,
                value_in_metric_units: value,
                names_metric,
                reasons,
                measured: target.measured.filter(|m| m.is_finite()),
            }
        })
        .collect();
    matches.sort_by(|a, b| b.score.total_cmp(&a.score));
    matches
}

/// A percentage as a fraction, rounded to the digits written (71.9 gives 0.719, not
/// 0.7190000000000001).
fn percent_to_fraction(claim: &Claim) -> f64 {
    let decimals = claim.number.split_once('.').map_or(0, |(_, d)| {
        d.chars().take_while(char::is_ascii_digit).count()
    });
    let scale = 10f64.powi(i32::try_from(decimals + 2).unwrap_or(15).min(15));
    (claim.value / 100.0 * scale).round() / scale
}

/// The runs measured what `best` says (within [`AGREEMENT`]) and something else than `rival`
/// says (more than [`SINGLED_OUT`] away): a notebook's performance log lists earlier
/// experiments beside the one its code runs, and the runs tell which is the code's.
fn singled_out_by_the_runs(best: &ClaimMatch, rival: &ClaimMatch) -> bool {
    best.measured.is_some_and(|m| {
        agree(best.value_in_metric_units, m)
            && (rival.value_in_metric_units - m).abs() > SINGLED_OUT * m.abs()
    })
}

fn agree(a: f64, b: f64) -> bool {
    (a - b).abs() <= AGREEMENT * a.abs().max(b.abs())
}

fn describe(m: &ClaimMatch) -> String {
    format!(
        "{} ({}, score {:.1})",
        m.claim.where_text(),
        m.claim.value_text(),
        m.score
    )
}

/// The claim to take: the best match when it names the metric and no other that names it
/// (or scores as much) is within [`MARGIN`] of it with a different value; otherwise the
/// plausible ones, or none.
pub fn choose(matches: &[ClaimMatch]) -> Choice {
    let Some(best) = matches.first() else {
        return Choice::None;
    };
    if !best.names_metric {
        let candidates: Vec<usize> = matches
            .iter()
            .enumerate()
            .filter(|(_, m)| m.score > 0.0 || m.names_metric)
            .map(|(i, _)| i)
            .take(5)
            .collect();
        if candidates.is_empty() {
            return Choice::None;
        }
        return Choice::Ambiguous {
            why: format!(
                "the best match, {}, does not name the metric",
                describe(best)
            ),
            candidates,
        };
    }
    let rivals: Vec<usize> = matches
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, m)| {
            (m.names_metric || m.score >= best.score)
                && best.score - m.score < MARGIN
                && !agree(m.value_in_metric_units, best.value_in_metric_units)
                && !singled_out_by_the_runs(best, m)
        })
        .map(|(i, _)| i)
        .collect();
    if rivals.is_empty() {
        return Choice::Unambiguous(0);
    }
    let named: Vec<String> = rivals.iter().map(|&i| describe(&matches[i])).collect();
    let mut candidates = vec![0];
    candidates.extend(rivals);
    Choice::Ambiguous {
        why: format!(
            "{} is less than {MARGIN} ahead of {}",
            describe(best),
            named.join(", ")
        ),
        candidates,
    }
}

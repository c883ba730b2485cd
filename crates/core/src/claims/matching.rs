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
//! | no split in the label, but the last words before it on its line name the metric's (another) | +2 (−3) |
//! | no measure (split) in the label, but the sentence names the metric's | +1 (+0.5) |
//! | the table row names arguments of the command (`Cora` for `--dataset cora`) | +3 |
//! | another row of the same table names more of them (`gpt2-medium` over `gpt2`) | −3 |
//! | the sentence names the value of a `--dataset`, `--model`, `--task`-like option | +1.5 |
//! | each setting the claim's line states that the command sets the same (or differently) | ±1, at most ±2 |
//! | a committed output of the notebook the command runs (what this code printed) | +4 |
//! | a later line of the same cell's committed output prints the same label again (a progress line: the last one printed is the result) | −3 |
//! | its row or clause speaks of this repository (`this repo`, `ours`, `our model`, `we`) | +3 |
//! | its row or clause speaks of another's result (`baseline`, `paper`, `reported`, `[3]`) | −3 |
//! | its row or clause names the repository or its script (`linear` for `repos/linear`) | +2 |
//!
//! The label's measure and split are read from its metric words nearest the number only
//! (`recall count-based 4-gram was 2.11` names no measure: `4-gram` is nearest). A claim's
//! clause is its table row's first cell, else the words of its line between the results
//! stated before and after it (`we reach 91.0 %, the kNN baseline of [3] 98.3 %`).
//!
//! The measured value takes no part in the choice: which number is the repository's claim is
//! decided by what its text says, and how far the runs are from that number is what
//! authenticating then reports. It only decides the units a percentage is compared in.

use super::command;
use super::scan::{self, ScanOptions};
use super::vocab::{self, Split};
use super::{Claim, Unit};

/// How far the best match must be ahead of the next for [`choose`] to take it.
pub const MARGIN: f64 = 2.0;

/// Two claims whose values (in the metric's units) differ by at most this fraction agree: a
/// rival that agrees with the best does not make the choice ambiguous.
pub const AGREEMENT: f64 = 0.005;

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
const OWN_OUTPUT: f64 = 4.0;
const PRINTED_AGAIN: f64 = -3.0;
/// How many words before an unlabelled-split claim on its line may name its split.
const NEAR_WORDS: usize = 6;
const SELF: f64 = 3.0;
const OTHERS: f64 = -3.0;
const NAMES_REPOSITORY: f64 = 2.0;

/// Word sequences by which a text speaks of this repository's own result.
const SELF_WORDS: [&[&str]; 10] = [
    &["ours"],
    &["our"],
    &["we"],
    &["this", "repo"],
    &["this", "repository"],
    &["this", "code"],
    &["this", "implementation"],
    &["this", "project"],
    &["this", "notebook"],
    &["this", "script"],
];

/// Words by which a text speaks of another's result: a baseline, a paper, a report.
const OTHERS_WORDS: [&str; 12] = [
    "baseline",
    "baselines",
    "paper",
    "papers",
    "reported",
    "reports",
    "prior",
    "previous",
    "sota",
    "state-of-the-art",
    "official",
    "al",
];

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
    /// The measured value (a mean over runs), when there is one: it tells the metric's
    /// units (a fraction or not), never which claim is chosen.
    pub measured: Option<f64>,
    /// Words naming this repository and its script (`linear`, `digits`), lowercase.
    pub names: Vec<String>,
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
        self.printed_or_measured().map(|v| v.abs() <= 1.0)
    }

    /// The measured value, else the printed one.
    pub fn printed_or_measured(&self) -> Option<f64> {
        self.measured.or_else(|| self.printed_value())
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
    /// the measure said around it, or it has no label in a sentence about the measure that
    /// speaks of this repository.
    pub names_metric: bool,
    /// Why it scored what it did, one reason a line.
    pub reasons: Vec<String>,
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

/// The metric's measure and split, from its name and printed label, else from its line (a
/// measure only the line says: `test final score: 4998/5000 = 99.96% correct`).
fn target_concepts(target: &MetricTarget) -> Concepts {
    let mut words = words_of(&target.name);
    words.extend(words_of(&target.literal));
    let mut c = Concepts::of(words.iter().map(String::as_str));
    if c.measures.is_empty() {
        let line = Concepts::of(words_of(&target.line).iter().map(String::as_str));
        c.measures = line.measures;
        if c.splits.is_empty() {
            c.splits = line.splits;
        }
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

/// Whose result a claim's row or clause says it is.
#[derive(Debug, Default, PartialEq)]
struct Whose {
    /// The words that speak of this repository (`this repo`, `our`).
    own: Option<String>,
    /// The words that speak of another's result (`baseline`, `[3]`).
    others: Option<String>,
    /// The repository's or script's name it says.
    names: Option<String>,
}

impl Whose {
    fn of(text: &str, names: &[String]) -> Whose {
        let words = words_of(text);
        let own = SELF_WORDS.iter().find_map(|seq| {
            words
                .windows(seq.len())
                .any(|w| w.iter().zip(seq.iter()).all(|(a, b)| a == b))
                .then(|| seq.join(" "))
        });
        let citation = text.match_indices('[').find_map(|(at, _)| {
            let rest = &text[at + 1..];
            let end = rest.find(']')?;
            let inside = &rest[..end];
            (!inside.is_empty()
                && inside
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ',' || c == ' ' || c == '-'))
            .then(|| format!("[{inside}]"))
        });
        let others = words
            .iter()
            .find(|w| OTHERS_WORDS.contains(&w.as_str()))
            .cloned()
            .or(citation);
        let names = names
            .iter()
            .find(|n| words.iter().any(|w| w == *n))
            .cloned();
        Whose { own, others, names }
    }

    fn says_anything(&self) -> bool {
        self.own.is_some() || self.others.is_some() || self.names.is_some()
    }
}

/// Where `number` stands in `line` as a number of its own (not inside `191.05`).
fn number_at(line: &str, number: &str) -> Option<usize> {
    line.match_indices(number).map(|(at, _)| at).find(|&at| {
        let before = line[..at].chars().next_back();
        let after = line[at + number.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit() || c == '.')
            && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// A claim's clause, outside tables: the words of its line between the result stated before
/// it and the one after (each cut at a sentence's end), and whether the text after attributes
/// it (`91.0 % (ours)`, a parenthesis closed before the next result, or `91.0 % for our
/// model`), the parenthesis' inside then being the text after. None for a table cell, or a
/// number its line does not show.
fn clause<'c>(claim: &'c Claim, all: &[Claim], index: usize) -> Option<(&'c str, &'c str, bool)> {
    if claim.table.is_some() {
        return None;
    }
    let line = claim.quote.as_str();
    let at = number_at(line, &claim.number)?;
    let end = at + claim.number.len();
    let neighbours: Vec<(usize, usize)> = all
        .iter()
        .enumerate()
        .filter(|(i, o)| *i != index && o.location == claim.location && o.quote == claim.quote)
        .filter_map(|(_, o)| number_at(line, &o.number).map(|p| (p, p + o.number.len())))
        .collect();
    let previous_end = neighbours
        .iter()
        .filter(|(_, e)| *e <= at)
        .map(|(_, e)| *e)
        .max()
        .unwrap_or(0);
    let next_start = neighbours
        .iter()
        .filter(|(s, _)| *s >= end)
        .map(|(s, _)| *s)
        .min()
        .unwrap_or(line.len());
    const STOPS: [&str; 4] = [". ", "; ", "! ", "? "];
    let mut before = &line[previous_end..at];
    if let Some(cut) = STOPS.iter().filter_map(|s| before.rfind(s)).max() {
        before = &before[cut + 2..];
    }
    let mut after = &line[end..next_start];
    if let Some(cut) = STOPS.iter().filter_map(|s| after.find(s)).min() {
        after = &after[..cut];
    }
    let attributed = after.trim_start_matches([' ', '%']).trim_start();
    let after_first = if let Some(inside) = attributed.strip_prefix('(') {
        match inside.find(')') {
            Some(close) => {
                after = &inside[..close];
                true
            }
            None => false,
        }
    } else {
        words_of(attributed)
            .first()
            .is_some_and(|w| matches!(w.as_str(), "for" | "by" | "from"))
    };
    Some((before, after, after_first))
}

/// Whose result the claim `index` is, from its table row's first cell, else from its
/// [`clause`]: the text that attributes it first, the other when that says nothing.
fn whose(claim: &Claim, all: &[Claim], index: usize, names: &[String]) -> Whose {
    if let Some(cell) = &claim.table {
        return Whose::of(&cell.row_header, names);
    }
    let Some((before, after, after_first)) = clause(claim, all, index) else {
        return Whose::of(&claim.context, names);
    };
    let (first, second) = if after_first {
        (after, before)
    } else {
        (before, after)
    };
    let said = Whose::of(first, names);
    if said.says_anything() {
        said
    } else {
        Whose::of(second, names)
    }
}

/// Every claim scored against the target, best first (ties keep the claims' order).
pub fn rank(claims: &[Claim], target: &MetricTarget) -> Vec<ClaimMatch> {
    let ranking = Ranking::new(claims, target);
    let mut matches: Vec<ClaimMatch> = claims
        .iter()
        .enumerate()
        .map(|(index, claim)| ranking.score(index, claim))
        .collect();
    matches.sort_by(|a, b| b.score.total_cmp(&a.score));
    matches
}

/// What every claim is scored against: the metric's measure and split, its command's
/// arguments and options, and the units it is printed in.
struct Ranking<'a> {
    /// All the claims (a claim's neighbours, rows and later lines are among them).
    claims: &'a [Claim],
    /// The metric.
    target: &'a MetricTarget,
    /// The metric's measure and split.
    wanted: Concepts,
    /// The command's arguments as items.
    items: Vec<String>,
    /// The words of the command's arguments.
    tokens: std::collections::HashSet<String>,
    /// The command's options (`dataset`, `cora`).
    options: Vec<(String, String)>,
    /// The values of options that name what is evaluated (`cora`).
    naming_values: Vec<String>,
    /// Whether the metric is printed as a fraction, when known.
    fraction: Option<bool>,
}

/// A claim's score so far, with the reasons for it.
#[derive(Default)]
struct Tally {
    score: f64,
    reasons: Vec<String>,
}

impl Tally {
    fn add(&mut self, points: f64, reason: String) {
        self.score += points;
        self.reasons.push(reason);
    }
}

/// What a claim's label and sentence say, read once for every rule.
struct ClaimWords {
    /// The measures and splits its label (and table headers) name.
    label: Concepts,
    /// The words of its sentence.
    context_words: Vec<String>,
    /// The measures and splits its sentence names.
    context: Concepts,
    /// How a reason shows its label (`label 'val loss'`, `no label`).
    shown: String,
}

impl ClaimWords {
    fn of(claim: &Claim) -> ClaimWords {
        let mut label_words = scan::metric_run(&words_of(&claim.label));
        if let Some(cell) = &claim.table {
            label_words.extend(words_of(&cell.column_header));
            label_words.extend(words_of(&cell.row_header));
        }
        let context_words = words_of(&claim.context);
        ClaimWords {
            label: Concepts::of(label_words.iter().map(String::as_str)),
            context: Concepts::of(context_words.iter().map(String::as_str)),
            context_words,
            shown: if claim.label.is_empty() {
                "no label".to_string()
            } else {
                format!("label '{}'", claim.label)
            },
        }
    }
}

impl<'a> Ranking<'a> {
    fn new(claims: &'a [Claim], target: &'a MetricTarget) -> Ranking<'a> {
        let items = command::items(&target.args);
        let tokens = command::tokens(&items);
        let options = command::options(&items);
        let naming_values = options
            .iter()
            .filter(|(k, _)| NAMING_KEYS.iter().any(|n| k.contains(n)))
            .map(|(_, v)| v.clone())
            .filter(|v| v.len() >= 3 && v.chars().all(char::is_alphanumeric))
            .collect();
        Ranking {
            claims,
            target,
            wanted: target_concepts(target),
            items,
            tokens,
            options,
            naming_values,
            fraction: target.is_fraction(),
        }
    }

    /// The claim `index` scored by every rule in turn.
    fn score(&self, index: usize, claim: &Claim) -> ClaimMatch {
        let words = ClaimWords::of(claim);
        let mut tally = Tally::default();
        let measure_named = self.measure_rule(&words, &mut tally);
        let split_named = self.split_rule(index, claim, &words, &mut tally);
        if tally.reasons.is_empty() {
            tally
                .reasons
                .push(format!("nothing around it names {}", self.target.name));
        }
        let wanted = &self.wanted;
        let mut names_metric = if wanted.measures.is_empty() {
            split_named
        } else {
            measure_named || (split_named && words.context.shares_measure(wanted))
        };
        self.command_rule(claim, &mut tally);
        self.row_rule(claim, &words, &mut tally);
        self.settings_rule(claim, &mut tally);
        self.output_rules(index, claim, &mut tally);
        let own = self.whose_rule(index, claim, &mut tally);
        // An unlabelled number in a sentence about the measure, said of this repository
        // (`… test accuracy: 98.3 % for the baseline, 91.0 % for ours`).
        if own && words.label.is_empty() && words.context.shares_measure(wanted) {
            names_metric = true;
        }
        let value = self.value_in_metric_units(claim, &words, &mut tally.reasons);
        ClaimMatch {
            index,
            claim: claim.clone(),
            score: tally.score,
            value_in_metric_units: value,
            names_metric,
            reasons: tally.reasons,
        }
    }

    /// The label names the metric's measure (or another), else the sentence names it;
    /// whether the label names it.
    fn measure_rule(&self, words: &ClaimWords, tally: &mut Tally) -> bool {
        let (wanted, label, shown) = (&self.wanted, &words.label, &words.shown);
        if wanted.measures.is_empty() {
            return false;
        }
        if label.shares_measure(wanted) {
            tally.add(
                MEASURE_MATCH,
                format!("{shown} names the measure ({})", join(&wanted.measures)),
            );
            return true;
        }
        if !label.measures.is_empty() {
            tally.add(
                MEASURE_CONFLICT,
                format!(
                    "{shown} names {}, not {}",
                    join(&label.measures),
                    join(&wanted.measures)
                ),
            );
        } else if words.context.shares_measure(wanted) {
            tally.add(
                CONTEXT_MEASURE,
                format!("its surroundings mention {}", join(&wanted.measures)),
            );
        }
        false
    }

    /// The label names the metric's split (or another), else the last words before it on
    /// its line do, else the sentence names it; whether the label or those words name it.
    fn split_rule(
        &self,
        index: usize,
        claim: &Claim,
        words: &ClaimWords,
        tally: &mut Tally,
    ) -> bool {
        let (wanted, label, shown) = (&self.wanted, &words.label, &words.shown);
        // The last words before it on its line name its split when its label does not.
        let clause_splits = clause(claim, self.claims, index)
            .map(|(before, _, _)| {
                let words = words_of(before);
                let near = &words[words.len().saturating_sub(NEAR_WORDS)..];
                Concepts::of(near.iter().map(String::as_str)).splits
            })
            .unwrap_or_default();
        if wanted.splits.is_empty() {
            return false;
        }
        if label.shares_split(wanted) {
            tally.add(
                SPLIT_MATCH,
                format!("{shown} names the split ({})", splits_text(&wanted.splits)),
            );
            return true;
        }
        if !label.splits.is_empty() {
            tally.add(
                SPLIT_CONFLICT,
                format!(
                    "{shown} names the {} split, not {}",
                    splits_text(&label.splits),
                    splits_text(&wanted.splits)
                ),
            );
        } else if !clause_splits.is_empty() {
            // The words before it on its line (`train final score: 5000/5000 = 100.00%
            // correct`, whose label is `correct`).
            if clause_splits.iter().any(|s| wanted.splits.contains(s)) {
                tally.add(
                    SPLIT_MATCH,
                    format!(
                        "its clause names the split ({})",
                        splits_text(&wanted.splits)
                    ),
                );
                return true;
            }
            tally.add(
                SPLIT_CONFLICT,
                format!(
                    "its clause names the {} split, not {}",
                    splits_text(&clause_splits),
                    splits_text(&wanted.splits)
                ),
            );
        } else if words.context.shares_split(wanted) {
            tally.add(
                CONTEXT_SPLIT,
                format!("its surroundings mention {}", splits_text(&wanted.splits)),
            );
        }
        false
    }

    /// The command shown before the claim that shares most arguments with the task's.
    fn command_rule(&self, claim: &Claim, tally: &mut Tally) {
        if self.items.is_empty() {
            return;
        }
        let best = claim
            .commands
            .iter()
            .map(|c| {
                let items = command::items(&command::split_command(c));
                (command::jaccard(&items, &self.items), c)
            })
            .fold(None, |best: Option<(f64, &String)>, (j, c)| match best {
                Some((b, _)) if b >= j => best,
                _ => Some((j, c)),
            });
        if let Some((j, c)) = best
            && j > 0.0
        {
            let how = if j >= 1.0 {
                "the task's command".to_string()
            } else {
                format!("{:.0}% of its arguments are the task's", j * 100.0)
            };
            tally.add(COMMAND * j, format!("stated after `{c}` ({how})"));
        }
    }

    /// A table claim's row is (or another row is more) the one the command's arguments
    /// name; a claim outside tables is in a sentence naming the value of a naming option.
    fn row_rule(&self, claim: &Claim, words: &ClaimWords, tally: &mut Tally) {
        if let Some(cell) = &claim.table {
            let strength = row_strength(&cell.row_header, &self.tokens);
            let best_row = self
                .claims
                .iter()
                .filter(|o| same_table(o, claim))
                .filter_map(|o| o.table.as_ref())
                .max_by_key(|t| row_strength(&t.row_header, &self.tokens))
                .filter(|t| row_strength(&t.row_header, &self.tokens) > strength);
            if let Some(best_row) = best_row {
                tally.add(
                    ROW_OTHER,
                    format!(
                        "its row '{}' is not the command's (row '{}' is)",
                        cell.row_header, best_row.row_header
                    ),
                );
            } else if strength > 0 {
                tally.add(
                    ROW_MATCH,
                    format!(
                        "its row '{}' is named by the command's arguments",
                        cell.row_header
                    ),
                );
            }
        } else if let Some(v) = self
            .naming_values
            .iter()
            .find(|v| words.context_words.iter().any(|w| w == *v))
        {
            tally.add(
                NAMES_VALUE,
                format!("its sentence names '{v}', as the command does"),
            );
        }
    }

    /// Each setting the claim's line states that the command sets the same (or
    /// differently), capped.
    fn settings_rule(&self, claim: &Claim, tally: &mut Tally) {
        let mut settings = 0.0;
        for (k, v) in command::config_pairs(&claim.quote) {
            if let Some((_, tv)) = self.options.iter().find(|(tk, _)| *tk == k) {
                if command::same_value(&v, tv) {
                    settings += SETTING;
                    tally
                        .reasons
                        .push(format!("its line sets {k}={v}, as the command does"));
                } else {
                    settings -= SETTING;
                    tally
                        .reasons
                        .push(format!("its line sets {k}={v}, the command {k}={tv}"));
                }
            }
        }
        tally.score += settings.clamp(-SETTINGS_CAP, SETTINGS_CAP);
    }

    /// A committed output of the notebook the command runs, and one its cell prints again
    /// later (a progress line).
    fn output_rules(&self, index: usize, claim: &Claim, tally: &mut Tally) {
        if claim.output
            && let super::Location::Cell { notebook, .. } = &claim.location
            && self.target.args.iter().any(|a| a == notebook)
        {
            tally.add(
                OWN_OUTPUT,
                format!(
                    "printed by {notebook}, the notebook the command runs, when its authors ran it"
                ),
            );
        }
        if claim.output
            && !claim.label.is_empty()
            && let Some(later) = self.claims[index + 1..]
                .iter()
                .find(|o| o.output && o.location == claim.location && o.label == claim.label)
        {
            tally.add(
                PRINTED_AGAIN,
                format!(
                    "its cell prints '{}' again later (\"{}\"): a progress line, the last one printed is the result",
                    claim.label, later.quote
                ),
            );
        }
    }

    /// Whose result its row or clause says it is: this repository's, another's, one naming
    /// the repository; whether it speaks of this repository.
    fn whose_rule(&self, index: usize, claim: &Claim, tally: &mut Tally) -> bool {
        let evidence = whose(claim, self.claims, index, &self.target.names);
        let place = if claim.table.is_some() {
            "its row"
        } else {
            "its clause"
        };
        if let Some(words) = &evidence.own {
            tally.add(
                SELF,
                format!("{place} speaks of this repository ('{words}')"),
            );
        }
        if let Some(words) = &evidence.others {
            tally.add(
                OTHERS,
                format!("{place} speaks of another's result ('{words}')"),
            );
        }
        if let Some(name) = &evidence.names {
            tally.add(
                NAMES_REPOSITORY,
                format!("{place} names the repository or its script ('{name}')"),
            );
        }
        evidence.own.is_some()
    }

    /// The claim's value in the metric's units: a percentage of a fraction (or a bounded
    /// measure's unitless percentage) as a fraction, a fraction of a percentage as one.
    fn value_in_metric_units(
        &self,
        claim: &Claim,
        words: &ClaimWords,
        reasons: &mut Vec<String>,
    ) -> f64 {
        let (fraction, label) = (self.fraction, &words.label);
        if claim.unit == Unit::Percent {
            match fraction {
                Some(true) => {
                    let value = percent_to_fraction(claim);
                    reasons.push(format!(
                        "{} is {} in the metric's units (a fraction)",
                        claim.value_text(),
                        value
                    ));
                    return value;
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
            let value = percent_to_fraction(claim);
            reasons.push(format!(
                "{} has no unit; read as a percentage: {}",
                claim.number, value
            ));
            return value;
        } else if fraction == Some(false)
            && claim.unit == Unit::None
            && claim.value > 0.0
            && claim.value <= 1.0
            && self
                .target
                .printed_or_measured()
                .is_some_and(|v| v > 1.0 && v <= 100.0)
            && label.measures.iter().all(|m| BOUNDED.contains(m))
            && label
                .measures
                .iter()
                .chain(&self.wanted.measures)
                .any(|m| BOUNDED.contains(m))
        {
            let value = fraction_to_percent(claim);
            reasons.push(format!(
                "{} is a fraction; the metric is printed as a percentage: {value}",
                claim.number
            ));
            return value;
        }
        claim.value
    }
}

/// A fraction as a percentage, rounded to the digits written (0.915 gives 91.5).
fn fraction_to_percent(claim: &Claim) -> f64 {
    let decimals = claim.number.split_once('.').map_or(0, |(_, d)| {
        d.chars().take_while(char::is_ascii_digit).count()
    });
    let scale = 10f64.powi(
        i32::try_from(decimals.saturating_sub(2))
            .unwrap_or(0)
            .min(15),
    );
    (claim.value * 100.0 * scale).round() / scale
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

//! Metric candidates in a run's captured output, for `xstack init`: the plain lines (escapes
//! removed, every `\r`-rewritten progress segment a line) are searched for values in the
//! styles training scripts print them, and each metric found gets a proposed `[[metric]]`
//! (a regex with a `value` group and, where the lines carry one, a `step` group; or a
//! `json_key` with a `step_key`) that is then verified by re-extracting it with
//! [`crate::metrics`] from the same output.
//!
//! Styles: JSON lines; Python dicts (Hugging Face Trainer's `{'eval_loss': 0.3, 'epoch': 1.0}`,
//! also after words on the line and with NumPy 2's `np.float64(0.91)` or a `tensor(0.91)`);
//! `name=value` (also tqdm and PyTorch Lightning progress-bar postfixes and the Trainer's
//! `log_metrics` tables); `name: value` (also `Accuracy: 9905/10000 (99%)`, `test final
//! score: 5000/5000 = 100.00% correct`, `Test acc.:85.5`); `Name value` for names that contain
//! a metric word; result-table rows (`│ test_acc │ 0.97 │`, Lightning); pipe tables with a
//! header row, each value named by its row and column (`| test | 0.91 |` under `| split |
//! acc |` is `test_acc`).
//! A value followed by `%` is a percentage and is kept as printed. Fragments are not metrics:
//! a value that an arithmetic expression continues (a printed formula, `y = +11.74 x^1 …`),
//! one followed by two more bare numbers (a row of a numeric table), a one-letter name, a
//! number with a thousands separator, and names that count things (`tokens per iteration`).

use std::collections::HashMap;

use regex::Regex;

use crate::metrics::{self, Extractor, Point};
use crate::task::MetricSpec;

mod names;

use names::*;
pub use names::{is_noise, looks_like_evaluation, sanitize};

/// A number as the proposed regexes match it.
pub const NUM: &str = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?";
/// A number as the short proposals match it (the form hand-written tasks use).
const SHORT_NUM: &str = r"[-+0-9.eE]+";
/// What must precede a metric name (so that `loss` does not match inside `val_loss`).
const BEFORE: &str = r"(?:^|[^\w./-])";
/// What must follow a value that is not a percentage: not `12s`, `9905/10000`, `12:30` or
/// `71.2 %` (the regex crate has no look-ahead, so this consumes one character).
const AFTER: &str = r"(?:[ \t]+[^%\s]|[ \t]*$|[^\w\s./:%])";
/// What may wrap a value printed in a Python dict: NumPy 2's `np.float64(0.91)`, a tensor's
/// `tensor(0.9100)`.
const WRAPPED: &str = r"(?:(?:np\.|numpy\.)?float(?:16|32|64)\(|tensor\()?";
/// JSON keys and step words that carry the step, in order of preference.
const STEP_KEYS: &[&str] = &["step", "global_step", "epoch", "iter", "iteration"];
/// How a metric was printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Style {
    /// One JSON object per line.
    JsonLines,
    /// A Python dict per line (Hugging Face Trainer).
    PythonDict,
    /// `name=value`.
    KeyEquals,
    /// `name: value`.
    KeyColon,
    /// `Name value`.
    NameValue,
    /// A result-table row, `│ name │ value │`.
    TableRow,
}

impl Style {
    /// Words for the user.
    pub fn label(self) -> &'static str {
        match self {
            Style::JsonLines => "JSON lines",
            Style::PythonDict => "Python dict (Hugging Face Trainer)",
            Style::KeyEquals => "name=value",
            Style::KeyColon => "name: value",
            Style::NameValue => "Name value",
            Style::TableRow => "results table row",
        }
    }
}

/// One value seen in one line.
#[derive(Debug, Clone)]
struct Observation {
    line: usize,
    key: String,
    value: f64,
    step: Option<f64>,
    style: Style,
    percent: bool,
    /// The regex core (or JSON key) matching this value; observations of one metric share it.
    core: String,
    /// A shorter, more readable core, used when it finds exactly the same values.
    short: Option<String>,
    /// Regex capturing the line's step, and whether it stands before the value.
    step_pattern: Option<(StepPattern, bool)>,
    /// JSON key of the line's step.
    step_key: Option<String>,
}

/// A proposed metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The metric name proposed (lowercase, `[a-z0-9_]`).
    pub name: String,
    /// The name as the log prints it.
    pub key: String,
    /// How it was printed.
    pub style: Style,
    /// Whether the values are percentages (kept as printed).
    pub percent: bool,
    /// The proposed `[[metric]]` (after [`verify`], the one that reproduces the values).
    pub spec: MetricSpec,
    /// A stricter definition to fall back to when `spec` does not reproduce the values.
    pub fallback: Option<MetricSpec>,
    /// The values found, in order.
    pub points: Vec<Point>,
    /// The first line it was seen in.
    pub example: String,
    /// The last line it was seen in.
    pub last_example: String,
    /// The notebook cell whose output holds its last value, when the run was a notebook's
    /// (the runner's `── NOTEBOOK#cell=N ──` line before it; the first run's reading sets
    /// it, [`detect`] reads lines without those).
    pub last_cell: Option<usize>,
}

/// A candidate whose proposal did not reproduce its values, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The metric name.
    pub name: String,
    /// Why it was left out.
    pub reason: String,
}

struct Patterns {
    step: Regex,
    key_equals: Regex,
    key_colon: Regex,
    name_value: Regex,
    dict_pair: Regex,
}

/// The detection patterns, compiled once.
static PATTERNS: std::sync::LazyLock<Patterns> = std::sync::LazyLock::new(Patterns::new);

impl Patterns {
    fn new() -> Patterns {
        let name = r"(?:[A-Za-z][\w./-]*|\p{Han}+)";
        let words = format!(r"{name}(?:[ \t]+{name}){{0,2}}");
        // Invariant: these patterns are built from constants only, and the unit tests compile
        // every one of them.
        let re = crate::patterns::constant;
        Patterns {
            step: re(
                r"(?i)\b(epoch|step|iter|iteration|global_step)\b([ \t]*[:=]?[ \t]*\[?[ \t]*)(\d+)",
            ),
            key_equals: re(&format!(
                r"{BEFORE}({name})([ \t]*=[ \t]*)(?:({NUM})([ \t]*%)?|\[[ \t]*({NUM})[ \t]*\])"
            )),
            key_colon: re(&format!(
                r"{BEFORE}({words})[ \t]*:[ \t]*(\d+[ \t]*/[ \t]*\d+[ \t]*[(=][ \t]*)?({NUM})([ \t]*%)?"
            )),
            name_value: re(&format!(
                r"{BEFORE}({words})([ \t]*[│┃|][ \t]*|[ \t]+)({NUM})([ \t]*%)?"
            )),
            dict_pair: re(&format!(
                r#"(?:'([^']+)'|"([^"]+)"):[ \t]*{WRAPPED}({NUM})"#
            )),
        }
    }
}

/// Keeps the trailing words of a multi-word name that form the metric's name: from the first
/// qualifier or metric word on (`model reached accuracy` → `accuracy`). Names without a
/// metric word are kept whole when `keep_plain`, else dropped. Returns the byte offset of the
/// kept part in `words` and the kept text as printed.
fn trim_name(words: &str, keep_plain: bool) -> Option<(usize, &str)> {
    let parts: Vec<(usize, &str)> = words
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - words.as_ptr() as usize, w))
        .collect();
    let metricish = |w: &str| {
        let s = sanitize(w);
        has_metric_word(&s) || QUALIFIERS.contains(&s.as_str())
    };
    if !parts.iter().any(|(_, w)| has_metric_word(&sanitize(w))) {
        // A split's name alone (`val 1.9937`, as a notebook's `print(split, loss.item())`
        // prints it) names that split's result.
        let split_only = !parts.is_empty()
            && parts
                .iter()
                .all(|(_, w)| QUALIFIERS.contains(&sanitize(w).as_str()));
        return (keep_plain || split_only).then_some((0, words));
    }
    let mut start = parts.len();
    while start > 0 && metricish(parts[start - 1].1) {
        start -= 1;
    }
    let offset = parts.get(start)?.0;
    Some((offset, &words[offset..]))
}

/// What a multi-word name's regex requires before it: the punctuation that precedes it in
/// the line (`|`, `│`, `,`, `:`) or the line's start, so that `accuracy` does not also match
/// inside `Final test accuracy`; when a word precedes it, only a word boundary.
fn lead(line: &str, name_start: usize) -> String {
    match line[..name_start].trim_end().chars().last() {
        None => r"^\s*".to_string(),
        Some(c) if !(c.is_alphanumeric() || c == '_') => {
            format!(r"{}\s*", regex::escape(&c.to_string()))
        }
        Some(_) => BEFORE.to_string(),
    }
}

/// Escapes printed text for a regex, any run of blanks matching any run of blanks.
fn literal(text: &str) -> String {
    text.split_whitespace()
        .map(regex::escape)
        .collect::<Vec<_>>()
        .join(r"\s+")
}

fn parse_number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Whether the text right after a value ends it, the same rule as [`AFTER`]; a comma
/// before digits (`16,384`) is a thousands separator, not the end.
fn value_ends(rest: &str) -> bool {
    match rest.chars().next() {
        None => true,
        Some(' ' | '\t') => !rest.trim_start_matches([' ', '\t']).starts_with('%'),
        Some(',') => !rest[1..].starts_with(|c: char| c.is_ascii_digit()),
        Some(c) => !(c.is_alphanumeric() || c.is_whitespace() || "_./:%".contains(c)),
    }
}

/// Whether text starts with a one-letter variable: `x`, `x^2`, `x*…`, `x + …`.
fn variable_term(t: &str) -> bool {
    let mut chars = t.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    let rest = chars.as_str();
    match rest.chars().next() {
        None | Some('^' | '*' | '(') => true,
        Some(' ' | '\t') => {
            let r = rest.trim_start();
            r.is_empty() || r.starts_with(['+', '-', '*', '/', '^', '=', ')'])
        }
        _ => false,
    }
}

/// Whether the text after a value makes it a fragment of something else: an arithmetic
/// expression (`y = 2.0 * x + 1`, `y = +11.74 x^1 -3.27 x^2`, a printed formula) or a row of
/// a numeric table (the value followed by two more bare numbers).
fn is_fragment(rest: &str) -> bool {
    let t = rest.trim_start_matches([' ', '\t']);
    let spaced = t.len() < rest.len();
    let mut chars = t.chars();
    let formula = match chars.next() {
        Some('*' | '^' | '×' | '·') => true,
        Some('/') => spaced,
        Some('+' | '-') if spaced => {
            let after = chars.as_str().trim_start();
            after.starts_with(|c: char| c.is_ascii_digit() || c == '.') || variable_term(after)
        }
        Some(_) if spaced => variable_term(t),
        _ => false,
    };
    let row = t
        .split_whitespace()
        .take(2)
        .filter(|w| parse_number(w).is_some())
        .count()
        == 2;
    formula || row
}

/// Whether the text right after a percentage is a progress bar (tqdm's `45%|███`).
fn is_progress_bar(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_some_and(|c| c == '|' || ('\u{2580}'..='\u{259F}').contains(&c))
}

/// A regex capturing a line's step: as printed, and with any spacing around the separator
/// (`epoch  3` and `epoch 12` of a padded `epoch {e:2d}` are one metric's steps).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct StepPattern {
    exact: String,
    flexible: String,
}

impl StepPattern {
    /// The step pattern for a step word and the separator printed between it and the number.
    fn new(word: &str, sep: &str) -> StepPattern {
        let word = regex::escape(word);
        let flexible = if sep.trim().is_empty() {
            r"[ \t]+".to_string()
        } else {
            let mut out = String::new();
            let mut blank = false;
            for c in sep.chars() {
                if c == ' ' || c == '\t' {
                    if !blank {
                        out.push_str(r"[ \t]*");
                    }
                    blank = true;
                } else {
                    out.push_str(&regex::escape(&c.to_string()));
                    blank = false;
                }
            }
            out
        };
        StepPattern {
            exact: format!(r"\b{word}{}(?P<step>\d+)", regex::escape(sep)),
            flexible: format!(r"\b{word}{flexible}(?P<step>\d+)"),
        }
    }

    /// A pattern that is already as general as it can be.
    fn fixed(pattern: String) -> StepPattern {
        StepPattern {
            flexible: pattern.clone(),
            exact: pattern,
        }
    }
}

/// One value a line pattern found, before the checks every value gets.
struct Found<'a> {
    key: String,
    value_text: &'a str,
    value_range: std::ops::Range<usize>,
    percent: bool,
    style: Style,
    core: String,
    short: String,
}

struct LineScan<'a> {
    p: &'a Patterns,
    line: &'a str,
    index: usize,
    step: Option<(f64, StepPattern, usize)>,
    taken: Vec<std::ops::Range<usize>>,
    out: Vec<Observation>,
}

impl LineScan<'_> {
    fn free(&self, r: &std::ops::Range<usize>) -> bool {
        !self
            .taken
            .iter()
            .any(|t| t.start < r.end && r.start < t.end)
    }

    fn push(&mut self, f: Found<'_>) {
        let Found {
            key,
            value_text,
            value_range,
            percent,
            style,
            core,
            short,
        } = f;
        let name = sanitize(&key);
        // A one-letter name is a formula's variable (`y = 2.0 * x`), not a metric.
        if is_noise(&name) || name.len() < 2 || !self.free(&value_range) {
            return;
        }
        let Some(value) = parse_number(value_text) else {
            return;
        };
        // A step word right before the value is the step, not part of a metric.
        let (step, step_pattern) = match &self.step {
            Some((step, pattern, at)) if *at != value_range.start => (
                Some(*step),
                Some((pattern.clone(), *at < value_range.start)),
            ),
            _ => (None, None),
        };
        self.taken.push(value_range);
        self.out.push(Observation {
            line: self.index,
            key,
            value,
            step,
            style,
            percent,
            core,
            short: Some(short),
            step_pattern,
            step_key: None,
        });
    }

    /// Every metric of the line: its step first, then `key=value`, `key: value` and
    /// `name value` (or a table row) pairs, each value taken once.
    fn scan(&mut self) {
        if self.line.contains("Namespace(") {
            return; // argparse settings, not results
        }
        if !self.read_step() {
            return;
        }
        self.key_equals();
        self.key_colon();
        self.name_value();
    }

    /// The line's step (`step 120`, `epoch: 3`), taken so that no metric reads it; false
    /// when the step pattern matches without its parts.
    fn read_step(&mut self) -> bool {
        let Some(c) = self.p.step.captures(self.line) else {
            return true;
        };
        let (Some(word), Some(sep), Some(num)) = (c.get(1), c.get(2), c.get(3)) else {
            return false;
        };
        if let Some(step) = parse_number(num.as_str()) {
            let pattern = StepPattern::new(word.as_str(), sep.as_str());
            self.step = Some((step, pattern, num.start()));
            self.taken.push(num.range());
        }
        true
    }

    /// `key=value` pairs (`loss=0.25`, `acc=91.3%`), and a one-element array's value in its
    /// brackets (`episodic_return=[500.]`, a NumPy array printed whole).
    fn key_equals(&mut self) {
        let line = self.line;
        for c in self.p.key_equals.captures_iter(line) {
            let bracketed = c.get(5);
            let (Some(key), Some(num)) = (c.get(1), c.get(3).or(bracketed)) else {
                continue;
            };
            let percent = c.get(4).is_some();
            let end = c.get(0).map_or(num.end(), |m| m.end());
            let ends = if bracketed.is_some() {
                value_ends(&line[end..])
            } else {
                ends_a_value(line, num.end(), end, percent)
            };
            if !ends {
                continue;
            }
            let key_text = regex::escape(key.as_str());
            let (core, short) = if bracketed.is_some() {
                (
                    format!(r"{BEFORE}{key_text}\s*=\s*\[\s*(?P<value>{NUM})\s*\]"),
                    format!(r"\b{key_text}\s*=\s*\[\s*(?P<value>{SHORT_NUM})\s*\]"),
                )
            } else {
                (
                    format!(
                        r"{BEFORE}{key_text}\s*=\s*(?P<value>{NUM}){}",
                        if percent { r"\s*%" } else { AFTER }
                    ),
                    format!(
                        r"\b{key_text}\s*=\s*(?P<value>{SHORT_NUM}){}",
                        if percent { r"\s*%" } else { "" }
                    ),
                )
            };
            self.push(Found {
                key: key.as_str().to_string(),
                value_text: num.as_str(),
                value_range: num.range(),
                percent,
                style: Style::KeyEquals,
                core,
                short,
            });
        }
    }

    /// `key: value` pairs (`Test Accuracy: 0.81`, `score: 4998/5000 = 99.96%`).
    fn key_colon(&mut self) {
        let line = self.line;
        for c in self.p.key_colon.captures_iter(line) {
            let (Some(words), Some(num)) = (c.get(1), c.get(3)) else {
                continue;
            };
            let fraction = c.get(2).is_some();
            let percent = c.get(4).is_some();
            let end = c.get(0).map_or(num.end(), |m| m.end());
            if !ends_a_value(line, num.end(), end, percent) {
                continue;
            }
            let Some((offset, name)) = trim_name(words.as_str(), true) else {
                continue;
            };
            let core = format!(
                r"{}{}\s*:\s*{}(?P<value>{NUM}){}",
                lead(line, words.start() + offset),
                literal(name),
                if fraction {
                    r"\d+\s*/\s*\d+\s*[(=]\s*"
                } else {
                    ""
                },
                if percent { r"\s*%" } else { AFTER }
            );
            let short = format!(
                r"\b{}\s*:\s*{}(?P<value>{SHORT_NUM}){}",
                literal(name),
                if fraction {
                    r"\d+\s*/\s*\d+\s*[(=]\s*"
                } else {
                    ""
                },
                if percent { r"\s*%" } else { "" }
            );
            self.push(Found {
                key: name.to_string(),
                value_text: num.as_str(),
                value_range: num.range(),
                percent,
                style: Style::KeyColon,
                core,
                short,
            });
        }
    }

    /// `name value` pairs, and table rows (`│ test_acc │ 0.81 │`).
    fn name_value(&mut self) {
        let line = self.line;
        for c in self.p.name_value.captures_iter(line) {
            let (Some(words), Some(sep), Some(num)) = (c.get(1), c.get(2), c.get(3)) else {
                continue;
            };
            let table = !sep.as_str().trim().is_empty();
            let percent = c.get(4).is_some();
            let end = c.get(0).map_or(num.end(), |m| m.end());
            if !ends_a_value(line, num.end(), end, percent) {
                continue;
            }
            let Some((offset, name)) = trim_name(words.as_str(), table) else {
                continue;
            };
            let core = format!(
                r"{}{}{}(?P<value>{NUM}){}",
                lead(line, words.start() + offset),
                literal(name),
                if table { r"\s*[│┃|]\s*" } else { r"\s+" },
                if percent { r"\s*%" } else { AFTER }
            );
            let short = format!(
                r"\b{}{}(?P<value>{SHORT_NUM}){}",
                literal(name),
                if table { r"\s*[│┃|]\s*" } else { r"\s+" },
                if percent { r"\s*%" } else { "" }
            );
            let style = if table {
                Style::TableRow
            } else {
                Style::NameValue
            };
            self.push(Found {
                key: name.to_string(),
                value_text: num.as_str(),
                value_range: num.range(),
                percent,
                style,
                core,
                short,
            });
        }
    }
}

/// Whether the number ending at `num_end` (its match, a `%` included, at `end`) is a value
/// of its own: a percentage not in a progress bar, else a number that ends there and is no
/// fragment of a formula or a numeric table's row.
fn ends_a_value(line: &str, num_end: usize, end: usize, percent: bool) -> bool {
    if percent {
        !is_progress_bar(&line[end..])
    } else {
        value_ends(&line[num_end..]) && !is_fragment(&line[num_end..])
    }
}

fn json_number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => parse_number(s.trim()),
        _ => None,
    }
}

fn scan_json(index: usize, obj: &serde_json::Map<String, serde_json::Value>) -> Vec<Observation> {
    let step_key = STEP_KEYS
        .iter()
        .find(|k| obj.get(**k).and_then(json_number).is_some())
        .map(|k| (*k).to_string());
    let step = step_key
        .as_ref()
        .and_then(|k| obj.get(k))
        .and_then(json_number);
    obj.iter()
        .filter(|(k, _)| !is_noise(&sanitize(k)))
        .filter_map(|(k, v)| {
            Some(Observation {
                line: index,
                key: k.clone(),
                value: json_number(v)?,
                step,
                style: Style::JsonLines,
                percent: false,
                core: k.clone(),
                short: None,
                step_pattern: None,
                step_key: step_key.clone(),
            })
        })
        .collect()
}

fn scan_dict(p: &Patterns, index: usize, line: &str) -> Vec<Observation> {
    let pairs: Vec<(String, char, f64, usize)> = p
        .dict_pair
        .captures_iter(line)
        .filter_map(|c| {
            let (key, quote) = match (c.get(1), c.get(2)) {
                (Some(k), _) => (k, '\''),
                (None, Some(k)) => (k, '"'),
                (None, None) => return None,
            };
            let num = c.get(3)?;
            if !value_ends(&line[num.end()..]) {
                return None;
            }
            Some((
                key.as_str().to_string(),
                quote,
                parse_number(num.as_str())?,
                key.start(),
            ))
        })
        .collect();
    let step = STEP_KEYS
        .iter()
        .find_map(|k| pairs.iter().find(|(key, _, _, _)| key == k));
    pairs
        .iter()
        .filter(|(k, _, _, _)| !is_noise(&sanitize(k)))
        .map(|(k, q, v, at)| Observation {
            line: index,
            key: k.clone(),
            value: *v,
            step: step.map(|s| s.2),
            style: Style::PythonDict,
            percent: false,
            core: format!(
                r"{q}{}{q}:\s*{WRAPPED}(?P<value>{NUM}){AFTER}",
                regex::escape(k)
            ),
            short: Some(format!(
                r"{q}{}{q}:\s*{WRAPPED}(?P<value>{SHORT_NUM})",
                regex::escape(k)
            )),
            step_pattern: step.map(|(sk, sq, _, sat)| {
                (
                    StepPattern::fixed(format!(
                        r"{sq}{}{sq}:\s*{WRAPPED}(?P<step>{NUM})",
                        regex::escape(sk)
                    )),
                    sat < at,
                )
            }),
            step_key: None,
        })
        .collect()
}

/// A row of a pipe table (`| test | 0.31 | 0.91 |`): its cells, trimmed, without the empty
/// ones its leading and trailing pipes make; None for a line with fewer than two pipes.
fn pipe_cells(line: &str) -> Option<Vec<&str>> {
    let t = line.trim();
    if t.matches('|').count() < 2 {
        return None;
    }
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    Some(t.split('|').map(str::trim).collect())
}

/// A table cell's value: a number alone, or followed by `%`.
fn cell_number(cell: &str) -> Option<(f64, bool)> {
    let (text, percent) = match cell.strip_suffix('%') {
        Some(rest) => (rest.trim_end(), true),
        None => (cell, false),
    };
    parse_number(text).map(|v| (v, percent))
}

fn is_delimiter_cell(cell: &str) -> bool {
    let c = cell.trim_matches(':');
    !c.is_empty() && c.chars().all(|ch| ch == '-' || ch == '=')
}

/// The values of pipe tables with a header row (`| split | loss | acc |`, a delimiter row or
/// not, then `| test | 0.31 | 0.91 |`), by line: each number of a data row is the metric
/// named by its row's first cell and its column's header (`test_acc`), when that name has a
/// metric word.
fn scan_tables(lines: &[String]) -> HashMap<usize, Vec<Observation>> {
    let mut out: HashMap<usize, Vec<Observation>> = HashMap::new();
    let mut header: Option<Vec<String>> = None;
    for (index, line) in lines.iter().enumerate() {
        let Some(cells) = pipe_cells(line) else {
            header = None;
            continue;
        };
        if cells.iter().all(|c| is_delimiter_cell(c)) {
            continue;
        }
        let numbers: Vec<Option<(f64, bool)>> = cells.iter().map(|c| cell_number(c)).collect();
        let all_words = cells
            .iter()
            .zip(&numbers)
            .all(|(c, n)| n.is_none() && c.chars().any(char::is_alphabetic));
        let is_row = numbers.first().is_some_and(Option::is_none)
            && cells
                .first()
                .is_some_and(|c| c.chars().any(char::is_alphabetic))
            && numbers.iter().skip(1).any(Option::is_some)
            && cells
                .iter()
                .zip(&numbers)
                .skip(1)
                .all(|(c, n)| n.is_some() || c.is_empty() || c.chars().all(|ch| ch == '-'));
        match &header {
            Some(h) if is_row && h.len() == cells.len() => {
                let row = cells[0];
                let mut found = Vec::new();
                for (k, (column, number)) in h.iter().zip(&numbers).enumerate().skip(1) {
                    let Some((value, percent)) = number else {
                        continue;
                    };
                    let key = format!("{row} {column}");
                    let name = sanitize(&key);
                    if is_noise(&name) || !has_metric_word(&name) {
                        continue;
                    }
                    let core = format!(
                        r"^\s*\|?\s*{}\s*\|(?:[^|\n]*\|){{{}}}\s*(?P<value>{NUM})\s*{}(?:\||\s*$)",
                        literal(row),
                        k - 1,
                        if *percent { r"%\s*" } else { "" }
                    );
                    found.push(Observation {
                        line: index,
                        key,
                        value: *value,
                        step: None,
                        style: Style::TableRow,
                        percent: *percent,
                        core,
                        short: None,
                        step_pattern: None,
                        step_key: None,
                    });
                }
                out.insert(index, found);
            }
            _ if all_words => header = Some(cells.iter().map(|c| (*c).to_string()).collect()),
            _ => header = None,
        }
    }
    out
}

/// Every metric value in the plain lines of a captured output.
fn observe(lines: &[String]) -> Vec<Observation> {
    let p: &Patterns = &PATTERNS;
    let mut out = Vec::new();
    let mut tables = scan_tables(lines);
    for (index, line) in lines.iter().enumerate() {
        if let Some(found) = tables.remove(&index) {
            out.extend(found);
            continue;
        }
        let trimmed = line.trim();
        if trimmed.starts_with('{')
            && trimmed.ends_with('}')
            && let Ok(serde_json::Value::Object(obj)) = serde_json::from_str(trimmed)
        {
            out.extend(scan_json(index, &obj));
            continue;
        }
        // A Python dict, alone on its line or printed after words (`metrics: {'test_acc':
        // np.float64(0.91)}`); the words around it are read as any line's.
        if let Some(open) = trimmed.find('{')
            && trimmed[open + 1..].trim_start().starts_with(['\'', '"'])
            && trimmed[open..].contains('}')
        {
            out.extend(scan_dict(p, index, line));
            if open == 0 {
                continue;
            }
        }
        let mut scan = LineScan {
            p,
            line,
            index,
            step: None,
            taken: Vec::new(),
            out: Vec::new(),
        };
        scan.scan();
        out.extend(scan.out);
    }
    out
}

/// The most common element.
fn most_common<T: Eq + std::hash::Hash + Clone>(items: impl Iterator<Item = T>) -> Option<T> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for item in items {
        match counts.iter_mut().find(|(i, _)| *i == item) {
            Some((_, n)) => *n += 1,
            None => counts.push((item, 1)),
        }
    }
    counts
        .into_iter()
        .fold(None, |best: Option<(T, usize)>, (i, n)| match best {
            Some((_, bn)) if bn >= n => best,
            _ => Some((i, n)),
        })
        .map(|(i, _)| i)
}

/// Metric candidates in the plain lines of a captured output, in order of first appearance,
/// not yet verified.
pub fn detect(lines: &[String]) -> Vec<Candidate> {
    let observations = observe(lines);
    let mut groups: Vec<(String, Vec<Observation>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for o in observations {
        match index.get(&o.core) {
            Some(&i) => groups[i].1.push(o),
            None => {
                index.insert(o.core.clone(), groups.len());
                groups.push((o.core.clone(), vec![o]));
            }
        }
    }
    let mut used: Vec<String> = Vec::new();
    let mut candidates = Vec::new();
    for (core, obs) in groups {
        let first = &obs[0];
        let base = sanitize(&first.key);
        let mut name = base.clone();
        let mut n = 2;
        while used.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        used.push(name.clone());
        let (spec, fallback) = if first.style == Style::JsonLines {
            let spec = MetricSpec {
                name: name.clone(),
                regex: None,
                json_key: Some(core),
                step_key: most_common(obs.iter().filter_map(|o| o.step_key.clone())),
            };
            (spec, None)
        } else {
            let all_stepped = obs.iter().all(|o| o.step_pattern.is_some());
            // The step as printed when every line prints it alike, else with any spacing.
            let patterns: Vec<&(StepPattern, bool)> =
                obs.iter().filter_map(|o| o.step_pattern.as_ref()).collect();
            let alike = patterns.windows(2).all(|w| w[0] == w[1]);
            let step = most_common(patterns.iter().map(|(pattern, before)| {
                let chosen = if alike {
                    &pattern.exact
                } else {
                    &pattern.flexible
                };
                (chosen.clone(), *before)
            }));
            let with_step = |core: &str| match &step {
                None => core.to_string(),
                Some((step, true)) if all_stepped => format!("{step}.*?{core}"),
                Some((step, true)) => format!("(?:{step}.*?)?{core}"),
                Some((step, false)) => format!("{core}(?:.*?{step})?"),
            };
            let regex_spec = |re: String| MetricSpec {
                name: name.clone(),
                regex: Some(re),
                json_key: None,
                step_key: None,
            };
            let strict = regex_spec(with_step(&core));
            match &first.short {
                Some(short) => (regex_spec(with_step(short)), Some(strict)),
                None => (strict, None),
            }
        };
        candidates.push(Candidate {
            name,
            key: first.key.clone(),
            style: first.style,
            percent: first.percent,
            example: lines.get(first.line).cloned().unwrap_or_default(),
            last_example: obs
                .last()
                .and_then(|o| lines.get(o.line))
                .cloned()
                .unwrap_or_default(),
            last_cell: None,
            points: obs
                .iter()
                .map(|o| Point {
                    step: o.step,
                    value: o.value,
                })
                .collect(),
            spec,
            fallback,
        });
    }
    candidates
}

/// The values a metric definition extracts from a captured output; Err when its regex does
/// not compile.
fn extract(spec: &MetricSpec, output: &str) -> Result<Vec<Point>, regex::Error> {
    let extractor = Extractor::from_specs(std::slice::from_ref(spec))?;
    let series = metrics::parse_text(extractor, output);
    Ok(series
        .into_iter()
        .next()
        .map(|(_, p)| p)
        .unwrap_or_default())
}

/// Keeps the candidates whose proposed `[[metric]]`, run through the metric extractors over
/// the same captured output, finds exactly the values (and steps) detected — the short
/// definition when it does, else the strict one; the others are returned with the reason.
pub fn verify(candidates: Vec<Candidate>, output: &str) -> (Vec<Candidate>, Vec<Rejected>) {
    let mut kept = Vec::new();
    let mut rejected = Vec::new();
    for mut c in candidates {
        let mut outcome = extract(&c.spec, output);
        if outcome.as_ref().is_ok_and(|found| *found != c.points)
            && let Some(strict) = c.fallback.take()
        {
            outcome = extract(&strict, output);
            c.spec = strict;
        }
        match outcome {
            Ok(found) if found == c.points => {
                c.fallback = None;
                kept.push(c);
            }
            Ok(found) => rejected.push(Rejected {
                reason: format!(
                    "its proposed definition extracts {} value(s) where the log shows {}",
                    found.len(),
                    c.points.len()
                ),
                name: c.name,
            }),
            Err(e) => rejected.push(Rejected {
                name: c.name,
                reason: format!("its regex does not compile: {e}"),
            }),
        }
    }
    (kept, rejected)
}

#[cfg(test)]
mod tests;

//! Reads the numbers out of one piece of text (a paragraph, a table cell, a log line) and
//! classifies each: a stated result, or something else (a version, a date, a duration, a
//! size, a count, a hyper-parameter, a reference, an identifier, list numbering), from the
//! word that labels it and the unit it is written in, never from a list of known numbers.
//!
//! A number is a result when the words right before it (its label, read back to the start of
//! the clause through filler words like `of`, `is`, `about`) end in metric words (`val loss
//! 2.06`, `Acc: 81.0 %`, `test logprob of ~1.92`), or the words right after it start with them
//! (`81.0% accuracy`); or, failing a label, when it has decimals or a `%` and its sentence
//! names a measure (`recall count-based 4-gram was 2.11` in a sentence about val loss). A unit
//! or suffix that is not a result's (`0.13s`, `124M`, `1MB`, `3 minutes`, `5000 iterations`)
//! or a label word that names a setting (`lr`, `batch size`, `n_layer`, `PyTorch`, `Issue`)
//! makes it no result. URLs, link targets, images, HTML and code spans are masked first: a
//! number inside them is never read.

use std::sync::LazyLock;

use regex::Regex;

use crate::patterns;

use super::Unit;
use super::vocab::{self, NonResult, WordClass};

/// What a number in text was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberKind {
    /// A stated result: a claim.
    Result,
    /// Not a result, for the reason named.
    NotResult(NonResult),
    /// Part of a name or a path (`A100`, `gpt2`, `0x7f..`, `#L119`).
    Identifier,
    /// One end of a range (`2-3X`, `6861--6871`).
    Range,
    /// A ratio or a fraction written with a slash (`0/ 200000`).
    Ratio,
    /// List numbering at the start of a line (`1. `, `2) `).
    ListNumber,
    /// Nothing says it is a result (a bare integer, a number in a sentence about no metric).
    Unlabeled,
}

/// One number found in a text, with what it was read as.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Byte offset of the number in the text.
    pub start: usize,
    /// The number as written (sign and digits, without its unit).
    pub number: String,
    /// Its value.
    pub value: f64,
    /// `%` or none.
    pub unit: Unit,
    /// Marked approximate (`~`, `≈`, `about`, `around`, `roughly`).
    pub approximate: bool,
    /// What it was read as.
    pub kind: NumberKind,
    /// The label's words, lowercased: the metric words nearest the number when there are
    /// any, else the content words before it in its clause.
    pub label: Vec<String>,
    /// The lowercased words of its sentence.
    pub sentence: Vec<String>,
}

const MASK: char = '\u{1}';
const CODE_MASK: char = '\u{2}';

static MARKDOWN_MASKS: LazyLock<Vec<(Regex, char)>> = LazyLock::new(|| {
    [
        (r"(?s)<!--.*?-->", MASK),
        ("```[^`]*```|``[^`]*``|`[^`\n]*`", CODE_MASK),
        (r"!\[[^\]\n]*\]\([^)\n]*\)", MASK),
        (r"\]\([^)\n]*\)", MASK),
        (r"<(?:https?|ftp)://[^>\s]*>", MASK),
        (r"(?:https?|ftp)://[^\s<>()\[\]`]+", MASK),
        (r"\bwww\.[^\s<>()\[\]`]+", MASK),
        (r"</?[A-Za-z][^>\n]*>", MASK),
    ]
    .into_iter()
    .map(|(p, c)| (patterns::constant(p), c))
    .collect()
});

static PLAIN_MASKS: LazyLock<Vec<(Regex, char)>> = LazyLock::new(|| {
    [
        (r"(?:https?|ftp)://[^\s<>()\[\]`]+", MASK),
        (r"\bwww\.[^\s<>()\[\]`]+", MASK),
        (r"\x1b\[[0-9;?]*[A-Za-z]", MASK),
    ]
    .into_iter()
    .map(|(p, c)| (patterns::constant(p), c))
    .collect()
});

static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    patterns::constant(r"^[-+−]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*)(?:[eE][-+]?\d+)?")
});

/// The text with everything that is not prose replaced, byte for byte, by mask characters:
/// in Markdown, HTML comments, code spans (a mask of their own: they end a label), images,
/// link targets, URLs and tags; in plain text (logs, outputs) URLs and terminal escapes.
pub fn mask(text: &str, markdown: bool) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let masks = if markdown {
        &*MARKDOWN_MASKS
    } else {
        &*PLAIN_MASKS
    };
    for (re, c) in masks {
        // Later patterns run on the already masked text so that a URL inside a code span is
        // not masked twice with a different character.
        let current = String::from_utf8_lossy(&bytes).into_owned();
        for m in re.find_iter(&current) {
            let (from, to) = if *c == MASK && m.as_str().starts_with("](") {
                (m.start() + 1, m.end())
            } else {
                (m.start(), m.end())
            };
            for b in &mut bytes[from..to] {
                *b = *c as u8;
            }
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[derive(Debug, Clone, PartialEq)]
enum TokKind {
    Word,
    Num { num_end: usize, suffix: String },
    Punct(char),
    Mask,
}

#[derive(Debug, Clone, PartialEq)]
struct Tok {
    kind: TokKind,
    start: usize,
    end: usize,
}

/// The index of the first of `cs` from `from` on that `keep` does not accept (`cs.len()` when
/// it accepts them all).
fn skip_while(cs: &[(usize, char)], from: usize, keep: impl Fn(usize, char) -> bool) -> usize {
    from + cs
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&(pos, c)| keep(pos, c))
        .count()
}

fn tokenize(s: &str) -> Vec<Tok> {
    let cs: Vec<(usize, char)> = s.char_indices().collect();
    let n = cs.len();
    let at = |k: usize| if k < n { cs[k].0 } else { s.len() };
    let ch = |k: usize| if k < n { Some(cs[k].1) } else { None };
    let word = |start: usize, end: usize| Tok {
        kind: TokKind::Word,
        start,
        end: at(end),
    };
    let mut toks = Vec::new();
    let mut k = 0;
    while k < n {
        let (pos, c) = cs[k];
        if c == MASK || c == CODE_MASK {
            let j = skip_while(&cs, k, |_, c| c == MASK || c == CODE_MASK);
            toks.push(Tok {
                kind: TokKind::Mask,
                start: pos,
                end: at(j),
            });
            k = j;
            continue;
        }
        if c.is_whitespace() {
            k += 1;
            continue;
        }
        let prev = if k > 0 { Some(cs[k - 1].1) } else { None };
        let sign = matches!(c, '-' | '+' | '−')
            && ch(k + 1).is_some_and(|d| d.is_ascii_digit())
            && prev.is_none_or(|p| {
                p.is_whitespace()
                    || matches!(
                        p,
                        '(' | '[' | '{' | ':' | '=' | ',' | '|' | MASK | CODE_MASK
                    )
            });
        if c.is_ascii_digit() || sign {
            let len = NUMBER.find(&s[pos..]).map_or(c.len_utf8(), |m| m.end());
            let num_end = pos + len;
            let j = skip_while(&cs, k, |p, _| p < num_end);
            let is_word_char = |x: char| x.is_alphanumeric() || x == '_';
            // `4-gram`, `6-layer`, `300-line`: a compound word, not a number.
            if ch(j) == Some('-') && ch(j + 1).is_some_and(char::is_alphabetic) {
                let e = skip_while(&cs, j + 1, |_, x| is_word_char(x) || x == '-');
                toks.push(word(pos, e));
                k = e;
                continue;
            }
            let sj = skip_while(&cs, j, |_, x| x.is_alphabetic());
            // `8XA100`, `0x7fb5`, `3x3`, `2_000`: an identifier.
            if ch(sj).is_some_and(is_word_char) {
                let e = skip_while(&cs, sj, |_, x| is_word_char(x) || x == '.');
                toks.push(word(pos, e));
                k = e;
                continue;
            }
            toks.push(Tok {
                kind: TokKind::Num {
                    num_end,
                    suffix: s[num_end..at(sj)].to_lowercase(),
                },
                start: pos,
                end: at(sj),
            });
            k = sj;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let mut j = k + 1;
            loop {
                match (ch(j), ch(j + 1)) {
                    (Some(x), _) if x.is_alphanumeric() || x == '_' => j += 1,
                    (Some('-' | '.' | '\''), Some(y)) if y.is_alphanumeric() => j += 2,
                    _ => break,
                }
            }
            toks.push(word(pos, j));
            k = j;
            continue;
        }
        toks.push(Tok {
            kind: TokKind::Punct(c),
            start: pos,
            end: at(k + 1),
        });
        k += 1;
    }
    toks
}

fn is_sentence_end(s: &str, pos: usize) -> bool {
    let rest = &s[pos..];
    let mut it = rest.chars();
    matches!(it.next(), Some('.' | '!' | '?')) && it.next().is_none_or(char::is_whitespace)
}

fn sentence_range(s: &str, pos: usize) -> (usize, usize) {
    let mut start = 0;
    for (i, _) in s[..pos].char_indices().rev() {
        if is_sentence_end(s, i) {
            start = i + 1;
            break;
        }
    }
    let mut end = s.len();
    for (i, _) in s[pos..].char_indices() {
        if is_sentence_end(s, pos + i) {
            end = pos + i + 1;
            break;
        }
    }
    (start, end)
}

/// Options for [`scan`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanOptions<'a> {
    /// The text is Markdown (mask code spans, links, HTML); otherwise plain (a log line).
    pub markdown: bool,
    /// Words that label the text as a whole (a table cell's column header): a label read
    /// back to the start of the text continues with them.
    pub header: &'a [String],
    /// Further words of the number's surroundings (a table's row header and caption) for
    /// deciding whether a sentence names a measure.
    pub surroundings: &'a [String],
}

/// Every number in `text`, classified.
pub fn scan(text: &str, options: ScanOptions<'_>) -> Vec<Found> {
    let masked = mask(text, options.markdown);
    let toks = tokenize(&masked);
    let mut out = Vec::new();
    for (t, tok) in toks.iter().enumerate() {
        let TokKind::Num { num_end, suffix } = &tok.kind else {
            continue;
        };
        let number = masked[tok.start..*num_end].to_string();
        let value = number.replace(',', "").replace('−', "-").parse::<f64>();
        let Ok(value) = value else { continue };
        let reading = Reading {
            text: &masked,
            toks: &toks,
            t,
            suffix,
            options,
        };
        out.push(reading.read(number, value));
    }
    out
}

struct Reading<'a> {
    text: &'a str,
    toks: &'a [Tok],
    t: usize,
    suffix: &'a str,
    options: ScanOptions<'a>,
}

struct Label {
    words: Vec<String>,
    approximate: bool,
}

fn lower(s: &str) -> String {
    s.to_lowercase()
}

fn is_metric_class(c: WordClass) -> bool {
    matches!(
        c,
        WordClass::Measure(_) | WordClass::Split(_) | WordClass::Score
    )
}

/// The metric words at the end of a label (`val loss` of `evaluated owt val loss`); empty
/// when the word nearest the number is no metric word, or the run is only `score`/`rate`.
pub fn metric_run(words: &[String]) -> Vec<String> {
    let mut run: Vec<String> = words
        .iter()
        .rev()
        .take_while(|w| is_metric_class(vocab::class_of(w)))
        .cloned()
        .collect();
    run.reverse();
    if run.iter().all(|w| vocab::class_of(w) == WordClass::Score) {
        run.clear();
    }
    run
}

impl Reading<'_> {
    fn tok(&self, i: usize) -> Option<&Tok> {
        self.toks.get(i)
    }

    fn punct(&self, i: usize) -> Option<char> {
        match self.tok(i)?.kind {
            TokKind::Punct(c) => Some(c),
            _ => None,
        }
    }

    fn is_num(&self, i: usize) -> bool {
        matches!(self.tok(i).map(|t| &t.kind), Some(TokKind::Num { .. }))
    }

    /// A token's text, lower-cased.
    fn text_of(&self, tok: &Tok) -> String {
        lower(&self.text[tok.start..tok.end])
    }

    fn word(&self, i: usize) -> Option<String> {
        let tok = self.tok(i)?;
        (tok.kind == TokKind::Word).then(|| self.text_of(tok))
    }

    /// Token `a` ends exactly where token `b` starts.
    fn adjacent(&self, a: usize, b: usize) -> bool {
        match (self.tok(a), self.tok(b)) {
            (Some(x), Some(y)) => x.end == y.start,
            _ => false,
        }
    }

    fn read(&self, number: String, value: f64) -> Found {
        let t = self.t;
        let start = self.toks[t].start;
        let (s0, s1) = sentence_range(self.text, start);
        let sentence: Vec<String> = self
            .toks
            .iter()
            .filter(|k| k.kind == TokKind::Word && k.start >= s0 && k.end <= s1)
            .map(|k| self.text_of(k))
            .collect();
        let label = self.label_before();
        let unit = self.unit();
        let mut found = Found {
            start,
            number: number.clone(),
            value,
            unit,
            approximate: label.approximate,
            kind: NumberKind::Unlabeled,
            label: Vec::new(),
            sentence: sentence.clone(),
        };
        if let Some(kind) = self.shape_kind(&number, unit) {
            found.kind = kind;
            found.label = label.words;
            return found;
        }
        let decimal = number.contains(['.', 'e', 'E']) || unit == Unit::Percent;
        let run = metric_run(&label.words);
        if !run.is_empty() {
            let names_measure = run
                .iter()
                .any(|w| matches!(vocab::class_of(w), WordClass::Measure(_) | WordClass::Score));
            found.label = run;
            found.kind = if names_measure || decimal {
                NumberKind::Result
            } else {
                NumberKind::Unlabeled
            };
            return found;
        }
        if let Some(n) = label
            .words
            .iter()
            .rev()
            .find_map(|w| match vocab::class_of(w) {
                WordClass::NonResult(n) => Some(n),
                _ => None,
            })
        {
            found.kind = NumberKind::NotResult(n);
            found.label = label.words;
            return found;
        }
        let after = self.label_after();
        let after_run: Vec<String> = after
            .iter()
            .take_while(|w| is_metric_class(vocab::class_of(w)))
            .cloned()
            .collect();
        if after_run
            .iter()
            .any(|w| matches!(vocab::class_of(w), WordClass::Measure(_)))
            || (!after_run.is_empty() && decimal)
        {
            found.kind = NumberKind::Result;
            found.label = after_run;
            return found;
        }
        let names_measure = |w: &String| !vocab::concepts_of(w).0.is_empty();
        if decimal
            && (sentence.iter().any(names_measure)
                || self.options.surroundings.iter().any(names_measure))
        {
            found.kind = NumberKind::Result;
        }
        found.label = label.words;
        found
    }

    /// A kind read from the number's shape, its suffix, its unit word and its place, before
    /// any label is considered.
    fn shape_kind(&self, number: &str, unit: Unit) -> Option<NumberKind> {
        let t = self.t;
        let prev = t.checked_sub(1);
        if number.matches('.').count() >= 2 {
            return Some(NumberKind::NotResult(NonResult::Version));
        }
        if let Some(p) = prev.filter(|&p| self.adjacent(p, t))
            && let Some(c) = self.punct(p)
        {
            match c {
                '#' => return Some(NumberKind::NotResult(NonResult::Reference)),
                '/' | '\\' | '@' | '$' | '^' | '.' | '_' => return Some(NumberKind::Identifier),
                '>' | '<' => return Some(NumberKind::NotResult(NonResult::Version)),
                ':' if p
                    .checked_sub(1)
                    .is_some_and(|b| self.adjacent(b, p) && self.is_num(b)) =>
                {
                    return Some(NumberKind::NotResult(NonResult::Duration));
                }
                '=' => {
                    let before = p.checked_sub(1).filter(|&b| self.adjacent(b, p));
                    if before
                        .and_then(|b| self.punct(b))
                        .is_some_and(|b| matches!(b, '>' | '<' | '=' | '~' | '!'))
                    {
                        return Some(NumberKind::NotResult(NonResult::Version));
                    }
                }
                '-' | '–' | '—' => {
                    let mut b = p.checked_sub(1).filter(|&b| self.adjacent(b, p));
                    if let Some(bb) = b
                        && self.punct(bb) == Some('-')
                    {
                        b = bb.checked_sub(1).filter(|&x| self.adjacent(x, bb));
                    }
                    if b.is_some_and(|b| self.is_num(b)) {
                        return Some(NumberKind::Range);
                    }
                }
                _ => {}
            }
        }
        let next = t + 1;
        if self.adjacent(t, next)
            && let Some(c) = self.punct(next)
        {
            match c {
                '-' | '–' | '—' => {
                    let mut i = next + 1;
                    if self.punct(i) == Some('-') && self.adjacent(next, i) {
                        i += 1;
                    }
                    if self.adjacent(i - 1, i) && self.is_num(i) {
                        return Some(NumberKind::Range);
                    }
                }
                '/' => return Some(NumberKind::Ratio),
                ':' if self.adjacent(next, next + 1) && self.is_num(next + 1) => {
                    return Some(NumberKind::NotResult(NonResult::Duration));
                }
                ',' if self.adjacent(next, next + 1) && self.is_num(next + 1) => {
                    return Some(NumberKind::Identifier);
                }
                _ => {}
            }
        }
        if !self.suffix.is_empty() {
            return Some(match vocab::unit_word(self.suffix) {
                Some(n) => NumberKind::NotResult(n),
                None => NumberKind::Identifier,
            });
        }
        if unit != Unit::Percent
            && let Some(w) = self.word(next)
            && let Some(n) = vocab::unit_word(&w)
        {
            return Some(NumberKind::NotResult(n));
        }
        if self.is_list_number() {
            return Some(NumberKind::ListNumber);
        }
        let month_near = prev
            .and_then(|p| self.word(p))
            .is_some_and(|w| vocab::is_month(&w))
            || self.word(next).is_some_and(|w| vocab::is_month(&w));
        let integer = number.bytes().all(|b| b.is_ascii_digit());
        if month_near && integer {
            return Some(NumberKind::NotResult(NonResult::Date));
        }
        if integer
            && number.len() == 4
            && unit == Unit::None
            && number
                .parse::<u32>()
                .is_ok_and(|y| (1900..=2099).contains(&y))
        {
            return Some(NumberKind::NotResult(NonResult::Date));
        }
        None
    }

    fn unit(&self) -> Unit {
        let next = self.t + 1;
        if self.suffix.is_empty() {
            if self.punct(next) == Some('%') {
                return Unit::Percent;
            }
            if self
                .word(next)
                .is_some_and(|w| matches!(w.as_str(), "percent" | "pct" | "percentage"))
            {
                return Unit::Percent;
            }
        }
        Unit::None
    }

    /// The number is the first thing on its line and is followed by `. ` or `) `.
    fn is_list_number(&self) -> bool {
        let tok = &self.toks[self.t];
        let line_start = self.text[..tok.start].rfind('\n').map_or(0, |i| i + 1);
        let lead = &self.text[line_start..tok.start];
        if !lead.chars().all(|c| c.is_whitespace() || c == '>') {
            return false;
        }
        let next = self.t + 1;
        if !(self.adjacent(self.t, next) && matches!(self.punct(next), Some('.' | ')'))) {
            return false;
        }
        let after = self.tok(next).map_or(self.text.len(), |k| k.end);
        self.text[after..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
    }

    /// Content words before the number, read back through fillers and one `:`/`=` to the
    /// start of the clause; `~`/`≈`/`about` right before it mark it approximate. The second
    /// number of a range (`between 84.2 and 85.3`) has the first's label.
    fn label_before(&self) -> Label {
        let label = self.label_before_at(self.t);
        if !label.words.is_empty() || self.t < 3 {
            return label;
        }
        let word = |i: usize| {
            self.tok(i)
                .filter(|t| matches!(t.kind, TokKind::Word))
                .map(|t| self.text_of(t))
        };
        let range = word(self.t - 1).as_deref() == Some("and")
            && self.is_num(self.t - 2)
            && word(self.t - 3).as_deref() == Some("between");
        if range {
            self.label_before_at(self.t - 2)
        } else {
            label
        }
    }

    /// [`Reading::label_before`] for the number at token `t`.
    fn label_before_at(&self, t: usize) -> Label {
        let mut words: Vec<String> = Vec::new();
        let mut approximate = false;
        let mut skipped_separator = false;
        let mut reached_start = true;
        let mut i = t;
        while i > 0 {
            i -= 1;
            let tok = &self.toks[i];
            match &tok.kind {
                TokKind::Punct(c) => match c {
                    '~' | '≈' if words.is_empty() => approximate = true,
                    ':' | '=' if words.is_empty() && !skipped_separator => skipped_separator = true,
                    '*' | '_' | '"' | '\'' | '[' | ']' | '“' | '”' | '’' => {}
                    _ => {
                        reached_start = false;
                        break;
                    }
                },
                TokKind::Mask | TokKind::Num { .. } => {
                    reached_start = false;
                    break;
                }
                TokKind::Word => {
                    let w = self.text_of(tok);
                    if words.is_empty() && vocab::is_approx_word(&w) {
                        approximate = true;
                        continue;
                    }
                    match vocab::class_of(&w) {
                        WordClass::Stop => {
                            reached_start = false;
                            break;
                        }
                        WordClass::Filler => {}
                        _ => {
                            words.push(w);
                            if words.len() == 4 {
                                reached_start = false;
                                break;
                            }
                        }
                    }
                }
            }
        }
        words.reverse();
        if reached_start && !self.options.header.is_empty() {
            let mut with_header: Vec<String> = self
                .options
                .header
                .iter()
                .map(|w| lower(w))
                .filter(|w| vocab::class_of(w) != WordClass::Filler)
                .collect();
            with_header.extend(words);
            words = with_header;
        }
        Label { words, approximate }
    }

    /// Content words right after the number (and its `%`), up to the end of the clause.
    fn label_after(&self) -> Vec<String> {
        let mut words = Vec::new();
        let mut i = self.t + 1;
        if self.punct(i) == Some('%') {
            i += 1;
        }
        while let Some(tok) = self.tok(i) {
            i += 1;
            match &tok.kind {
                TokKind::Word => {
                    let w = self.text_of(tok);
                    match vocab::class_of(&w) {
                        WordClass::Stop => break,
                        WordClass::Filler => {
                            if !words.is_empty() {
                                break;
                            }
                        }
                        _ => {
                            if matches!(w.as_str(), "percent" | "pct" | "percentage") {
                                continue;
                            }
                            words.push(w);
                            if words.len() == 3 {
                                break;
                            }
                        }
                    }
                }
                _ => break,
            }
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(String, NumberKind)> {
        scan(
            text,
            ScanOptions {
                markdown: true,
                ..Default::default()
            },
        )
        .into_iter()
        .map(|f| (f.number, f.kind))
        .collect()
    }

    fn results(text: &str) -> Vec<String> {
        kinds(text)
            .into_iter()
            .filter(|(_, k)| *k == NumberKind::Result)
            .map(|(n, _)| n)
            .collect()
    }

    #[test]
    fn masking_keeps_byte_offsets() {
        let text = "see [PyTorch 2.0](https://x.org/a_1.2) and `--lr=3e-4` ok";
        let masked = mask(text, true);
        assert_eq!(masked.len(), text.len());
        assert!(masked.contains("[PyTorch 2.0]"));
        assert!(!masked.contains("x.org"));
        assert!(!masked.contains("3e-4"));
    }

    #[test]
    fn labelled_results() {
        assert_eq!(results("gets us a loss of only 1.88 and"), vec!["1.88"]);
        assert_eq!(
            results("the best validation loss is 1.4697."),
            vec!["1.4697"]
        );
        assert_eq!(
            results("step 2000: train loss 1.7648, val loss 1.8857"),
            vec!["1.7648", "1.8857"]
        );
        assert_eq!(results("Acc: 81.0 %"), vec!["81.0"]);
        assert_eq!(results("reaches 81.0% accuracy on Cora"), vec!["81.0"]);
        assert_eq!(
            results("a F1 score of 95.0 (previously, it was 94.9)."),
            vec!["95.0", "94.9"]
        );
        assert_eq!(results("val_loss=1.25"), vec!["1.25"]);
    }

    #[test]
    fn approximate_markers() {
        for text in [
            "test logprob of ~1.92",
            "val loss of about 3.11",
            "loss around 2.2",
            "loss roughly 2.2",
            "loss ≈ 2.2",
        ] {
            let f = scan(text, ScanOptions::default());
            assert!(f[0].approximate, "{text}");
            assert_eq!(f[0].kind, NumberKind::Result, "{text}");
        }
        assert!(!scan("loss of only 1.88", ScanOptions::default())[0].approximate);
    }

    #[test]
    fn versions_dates_and_references_are_not_results() {
        for text in [
            "turn off PyTorch 2.0 compile, val loss fine",
            "requires python 3.8 for the loss",
            "Our implementation works with PyTorch>=1.0.0",
            "release v1.2 of the accuracy code",
            "version 2.0.1 of the loss",
            "At the time of writing (Dec 29, 2022) the loss",
            "Bengio et al. 2003 loss",
            "see Issue 28 for the loss",
            "As pointed out by #23, accuracy",
        ] {
            assert!(results(text).is_empty(), "{text}: {:?}", kinds(text));
        }
    }

    #[test]
    fn settings_sizes_durations_counts_are_not_results() {
        for text in [
            "learning rate 3e-4 gives a lower loss",
            "with lr=3e-4 the loss",
            "batch size 32 and the accuracy",
            "dropout 0.2 for the val loss",
            "weight decay 5e-4, loss",
            "n_layer 4 loss",
            "This still runs in about ~3 minutes",
            "0.13s",
            "4 days of training to a loss",
            "cutting down iteration time from ~250ms / iter to 135ms / iter",
            "GPT-2 (124M) loss",
            "(76K params): the loss",
            "a single (1MB) file, loss",
            "1M characters of loss",
            "5000 iterations of val loss",
            "on 8 GPUs the accuracy",
            "8XA100 40GB node, loss",
            "accelerate training (2-3X) loss",
            "a 6-layer Transformer with 6 heads, loss",
            "count-based 4-gram loss",
        ] {
            assert!(results(text).is_empty(), "{text}: {:?}", kinds(text));
        }
    }

    #[test]
    fn list_numbers_urls_and_code_spans_are_not_results() {
        assert!(results("1. the accuracy is reported").is_empty());
        assert!(results("see https://x.org/acc/81.0 accuracy").is_empty());
        assert!(results("loss with `--eval_iters=20`, down from 200").is_empty());
        assert!(results("python train.py `--dropout=0.0` loss").is_empty());
    }

    #[test]
    fn a_label_naming_another_thing_is_kept_as_written() {
        let f = scan(
            "(currently seeing val loss 2.06, recall count-based 4-gram was 2.11)",
            ScanOptions::default(),
        );
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].label, vec!["val", "loss"]);
        assert_eq!(f[1].kind, NumberKind::Result);
        assert_eq!(f[1].label, vec!["recall", "count-based", "4-gram"]);
    }

    #[test]
    fn bare_integers_and_unlabelled_numbers_are_not_results() {
        assert!(results("32033").is_empty());
        assert!(results("      0/ 200000: 3.3167").is_empty());
        assert!(results("torch.Size([182625, 8])").is_empty());
        assert!(results("the batch size only 12 examples per iteration, not 64").is_empty());
        assert!(results("train 2").is_empty());
    }

    #[test]
    fn a_header_continues_a_label_read_to_the_start() {
        let header = vec!["val".to_string(), "loss".to_string()];
        let f = scan(
            " 3.12 ",
            ScanOptions {
                markdown: true,
                header: &header,
                surroundings: &[],
            },
        );
        assert_eq!(f[0].kind, NumberKind::Result);
        assert_eq!(f[0].label, vec!["val", "loss"]);
    }
}

//! Emphasis inside a pair of changed lines: a word diff (or a character diff for
//! whitespace-only changes) turned into byte ranges of each side's text.

use std::ops::Range;
use std::time::Instant;

use similar::{Algorithm, DiffOp, TextDiff};

/// The changed parts of one pair of lines.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineDiff {
    /// Similarity of the two lines in `0.0..=1.0`: matched non-blank bytes over all
    /// non-blank bytes (blanks are ignored so indentation does not make lines look alike).
    pub ratio: f32,
    /// Byte ranges of the old line that changed.
    pub old: Vec<Range<usize>>,
    /// Byte ranges of the new line that changed.
    pub new: Vec<Range<usize>>,
    /// The deadline cut the diff short, so the ranges are approximate.
    pub timed_out: bool,
}

/// How a line is cut into the units that are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// Identifier runs, blank runs and single punctuation characters.
    Words,
    /// Single characters (for whitespace-only changes).
    Chars,
}

/// Diffs two lines at the given granularity, giving up approximately at `deadline`.
pub fn inline_diff(
    old: &str,
    new: &str,
    granularity: Granularity,
    deadline: Instant,
) -> InlineDiff {
    let old_tokens = tokenize(old, granularity);
    let new_tokens = tokenize(new, granularity);
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(deadline)
        .diff_slices(&old_tokens, &new_tokens);
    let timed_out = Instant::now() >= deadline;
    let old_offsets = offsets(&old_tokens);
    let new_offsets = offsets(&new_tokens);

    let mut old_ranges = Vec::new();
    let mut new_ranges = Vec::new();
    let mut matched = 0usize;
    for op in diff.ops() {
        let (old_r, new_r) = (op.old_range(), op.new_range());
        if let DiffOp::Equal { .. } = op {
            matched += old_tokens[old_r]
                .iter()
                .map(|t| solid_len(t))
                .sum::<usize>();
            continue;
        }
        if !old_r.is_empty() {
            old_ranges.push(old_offsets[old_r.start]..old_offsets[old_r.end]);
        }
        if !new_r.is_empty() {
            new_ranges.push(new_offsets[new_r.start]..new_offsets[new_r.end]);
        }
    }
    let total = solid_len(old) + solid_len(new);
    let ratio = if total == 0 {
        1.0
    } else {
        (2 * matched) as f32 / total as f32
    };
    InlineDiff {
        ratio,
        old: merge_across_blanks(old, old_ranges),
        new: merge_across_blanks(new, new_ranges),
        timed_out,
    }
}

/// Bytes that are not whitespace.
fn solid_len(s: &str) -> usize {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(char::len_utf8)
        .sum()
}

/// Start offset of every token, plus the end of the line.
fn offsets(tokens: &[&str]) -> Vec<usize> {
    let mut out = Vec::with_capacity(tokens.len() + 1);
    let mut at = 0;
    out.push(at);
    for t in tokens {
        at += t.len();
        out.push(at);
    }
    out
}

/// Cuts a line into tokens of the given granularity (their concatenation is the line).
pub(super) fn tokenize(s: &str, granularity: Granularity) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut start = 0;
    let mut current: Option<u8> = None;
    for (i, c) in s.char_indices() {
        let class = match granularity {
            Granularity::Chars => None,
            Granularity::Words if c.is_alphanumeric() || c == '_' => Some(1),
            Granularity::Words if c.is_whitespace() => Some(2),
            Granularity::Words => None,
        };
        if i > start && (class.is_none() || class != current) {
            tokens.push(&s[start..i]);
            start = i;
        }
        current = class;
    }
    if start < s.len() {
        tokens.push(&s[start..]);
    }
    tokens
}

/// Joins neighbouring ranges separated only by whitespace, so "a b" → "x y" is one span.
fn merge_across_blanks(text: &str, ranges: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if text[last.end..r.start].chars().all(char::is_whitespace) => {
                last.end = r.end;
            }
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[test]
    fn tokens_split_words_blanks_and_punctuation() {
        assert_eq!(
            tokenize("self.fc1 = nn.Linear(64,  128)", Granularity::Words),
            vec![
                "self", ".", "fc1", " ", "=", " ", "nn", ".", "Linear", "(", "64", ",", "  ",
                "128", ")"
            ]
        );
        assert_eq!(tokenize("ab", Granularity::Chars), vec!["a", "b"]);
        assert!(tokenize("", Granularity::Words).is_empty());
    }

    #[test]
    fn changed_words_are_the_only_emphasis() {
        let d = inline_diff(
            "x = torch.relu(self.fc1(x))",
            "x = jax.nn.relu(self.fc1(x))",
            Granularity::Words,
            soon(),
        );
        assert!(d.ratio > 0.5, "ratio {}", d.ratio);
        assert_eq!(d.old, vec![4..9], "only `torch` changed on the left");
        let new = "x = jax.nn.relu(self.fc1(x))";
        let marked: String = d.new.iter().map(|r| &new[r.clone()]).collect();
        assert!(marked.contains("jax") && marked.contains("nn"), "{marked}");
        assert!(
            !marked.contains("relu") && !marked.contains("fc1"),
            "{marked}"
        );
    }

    #[test]
    fn identical_blank_lines_are_fully_similar() {
        let d = inline_diff("  ", "    ", Granularity::Chars, soon());
        assert_eq!(d.ratio, 1.0);
        assert!(d.old.is_empty());
        assert_eq!(d.new, vec![2..4]);
    }

    #[test]
    fn ranges_merge_across_blanks() {
        let d = inline_diff("a foo bar b", "a FOO BAR b", Granularity::Words, soon());
        assert_eq!(d.old, vec![2..9]);
        assert_eq!(d.new, vec![2..9]);
    }
}

//! A matcher for the shape most metric regexes have, `step (?P<step>\d+) .*acc=(?P<value>[0-9.]+)`:
//! literals, one class repeated (`\d+`, `[0-9.]+`) alone or as a whole capture group, and
//! at most one `.*`. It finds exactly the matches and group spans the regex finds, for a fraction of
//! the work: the regex needs its backtracking engine for the groups of such a pattern, and
//! that was the largest part of reading a flood's metrics (docs/PERFORMANCE.md). A pattern
//! of any other shape keeps the regex ([`ShapeMatcher::of`] says `None`).
//!
//! Why the shape decides the match: the pattern starts with a literal, so a match starts
//! where that literal does, and the leftmost such start that matches is the regex's match.
//! A run `C+` is followed by a literal whose first character `C` does not hold, or ends
//! the pattern, so its greedy run is the longest one and no shorter run could match
//! instead. A greedy `.*` is followed by a literal: the backtracking engine tries the
//! longest `.*` first, so the rest of the pattern matches at the rightmost place it can
//! (before the first line feed, for a `.` that does not match one).

use memchr::memmem;
use regex_syntax::hir::{Class, ClassUnicode, Dot, Hir, HirKind};

/// One part of a pattern of the shape.
#[derive(Debug, Clone)]
enum Part {
    /// Exactly this text.
    Literal(Box<str>),
    /// One or more characters of `class`, as many as there are; the whole of capture
    /// group `group`, if it is one.
    Run {
        group: Option<usize>,
        class: CharClass,
    },
}

/// The parts after the `.*`, and whether the `.*` stops at a line feed (`.` without `s`).
#[derive(Debug, Clone)]
struct AfterAny {
    parts: Vec<Part>,
    stops_at_line_feed: bool,
    /// Finds the literal the parts begin with, from the right.
    first: memmem::FinderRev<'static>,
    /// That literal's length in bytes.
    first_len: usize,
}

/// A character class, ASCII looked up in a table.
#[derive(Debug, Clone)]
struct CharClass {
    ascii: [bool; 128],
    ranges: Vec<(char, char)>,
}

impl CharClass {
    fn new(class: &ClassUnicode) -> CharClass {
        let ranges: Vec<(char, char)> = class
            .ranges()
            .iter()
            .map(|r| (r.start(), r.end()))
            .collect();
        let mut ascii = [false; 128];
        for (byte, slot) in ascii.iter_mut().enumerate() {
            let c = char::from(byte as u8);
            *slot = ranges.iter().any(|&(low, high)| low <= c && c <= high);
        }
        CharClass { ascii, ranges }
    }

    fn contains(&self, c: char) -> bool {
        match self.ascii.get(c as usize) {
            Some(&holds) => holds,
            None => self.ranges.iter().any(|&(low, high)| low <= c && c <= high),
        }
    }

    /// The length in bytes of the run of this class at the start of `text`.
    fn run_len(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        let mut len = 0;
        while len < bytes.len() {
            let byte = bytes[len];
            if byte < 0x80 {
                if !self.ascii[usize::from(byte)] {
                    break;
                }
                len += 1;
                continue;
            }
            let Some(c) = text[len..].chars().next() else {
                break;
            };
            if !self.contains(c) {
                break;
            }
            len += c.len_utf8();
        }
        len
    }
}

/// A metric regex of the shape this module matches by hand.
#[derive(Debug, Clone)]
pub struct ShapeMatcher {
    /// The parts before the `.*` (all of them when there is none); the first is a literal.
    head: Vec<Part>,
    /// Finds the first literal.
    first: memmem::Finder<'static>,
    after_any: Option<AfterAny>,
}

impl ShapeMatcher {
    /// The matcher for `pattern` (as `regex::Regex::new` reads it), when it has the shape.
    pub fn of(pattern: &str) -> Option<ShapeMatcher> {
        let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
        let items: Vec<&Hir> = match hir.kind() {
            HirKind::Concat(items) => items.iter().collect(),
            _ => vec![&hir],
        };
        let mut head = Vec::new();
        let mut after: Option<(bool, Vec<Part>)> = None;
        for item in items {
            let part = match item.kind() {
                HirKind::Literal(literal) => {
                    Part::Literal(std::str::from_utf8(&literal.0).ok()?.into())
                }
                HirKind::Capture(capture) => Part::Run {
                    group: Some(usize::try_from(capture.index).ok()?),
                    class: CharClass::new(greedy_run(&capture.sub)?),
                },
                HirKind::Repetition(rep) if rep.min == 1 => Part::Run {
                    group: None,
                    class: CharClass::new(greedy_run(item)?),
                },
                HirKind::Repetition(rep)
                    if rep.min == 0 && rep.max.is_none() && rep.greedy && after.is_none() =>
                {
                    let stops_at_line_feed = if *rep.sub == Hir::dot(Dot::AnyCharExceptLF) {
                        true
                    } else if *rep.sub == Hir::dot(Dot::AnyChar) {
                        false
                    } else {
                        return None;
                    };
                    after = Some((stops_at_line_feed, Vec::new()));
                    continue;
                }
                _ => return None,
            };
            match &mut after {
                Some((_, parts)) => parts.push(part),
                None => head.push(part),
            }
        }
        let decided = |parts: &[Part]| {
            parts.windows(2).all(|pair| match pair {
                [Part::Run { class, .. }, Part::Literal(next)] => {
                    next.chars().next().is_some_and(|c| !class.contains(c))
                }
                [Part::Literal(_), Part::Run { .. }] => true,
                _ => false,
            })
        };
        let first_literal = |parts: &[Part]| match parts.first() {
            Some(Part::Literal(text)) if !text.is_empty() => Some(text.as_bytes().to_vec()),
            _ => None,
        };
        let first = first_literal(&head)?;
        if !decided(&head) {
            return None;
        }
        let after_any = match after {
            None => None,
            Some((stops_at_line_feed, parts)) => {
                // A group right before the `.*` could give up characters to it.
                let literal = first_literal(&parts)?;
                if matches!(head.last(), Some(Part::Run { .. })) || !decided(&parts) {
                    return None;
                }
                Some(AfterAny {
                    parts,
                    stops_at_line_feed,
                    first_len: literal.len(),
                    first: memmem::FinderRev::new(&literal).into_owned(),
                })
            }
        };
        Some(ShapeMatcher {
            head,
            first: memmem::Finder::new(&first).into_owned(),
            after_any,
        })
    }

    /// The first match in `line` that starts at or after `at`, as the regex's
    /// `captures_read_at` finds it: its start and end, with each group's span in `spans`
    /// (indexed by group number, as the regex numbers them).
    pub fn find_at(
        &self,
        line: &str,
        at: usize,
        spans: &mut [Option<(usize, usize)>],
    ) -> Option<(usize, usize)> {
        let mut from = at;
        while from <= line.len() {
            let start = from + self.first.find(&line.as_bytes()[from..])?;
            from = start + 1;
            let Some(end) = match_parts(&self.head, line, start, spans) else {
                continue;
            };
            let Some(after) = &self.after_any else {
                return Some((start, end));
            };
            // The `.*` runs from `end` to where the rest matches, as far right as it can.
            let limit = if after.stops_at_line_feed {
                memchr::memchr(b'\n', &line.as_bytes()[end..]).map_or(line.len(), |i| end + i)
            } else {
                line.len()
            };
            let mut window_end = (limit + after.first_len).min(line.len());
            while let Some(found) = after.first.rfind(&line.as_bytes()[end..window_end]) {
                let p = end + found;
                if let Some(match_end) = match_parts(&after.parts, line, p, spans) {
                    return Some((start, match_end));
                }
                // The next occurrence to the left may overlap this one.
                window_end = p + after.first_len - 1;
                if window_end < end + after.first_len {
                    break;
                }
            }
        }
        None
    }
}

/// The class of `hir` when it is one class repeated once or more, greedily (`C+`).
fn greedy_run(hir: &Hir) -> Option<&ClassUnicode> {
    let HirKind::Repetition(rep) = hir.kind() else {
        return None;
    };
    let HirKind::Class(Class::Unicode(class)) = rep.sub.kind() else {
        return None;
    };
    (rep.min == 1 && rep.max.is_none() && rep.greedy).then_some(class)
}

/// Matches `parts` in `line` at `at`, each group's run as long as it goes; the end.
fn match_parts(
    parts: &[Part],
    line: &str,
    at: usize,
    spans: &mut [Option<(usize, usize)>],
) -> Option<usize> {
    let mut pos = at;
    for part in parts {
        match part {
            Part::Literal(text) => {
                if !line[pos..].starts_with(&**text) {
                    return None;
                }
                pos += text.len();
            }
            Part::Run { group, class } => {
                let len = class.run_len(&line[pos..]);
                if len == 0 {
                    return None;
                }
                if let Some(span) = group.and_then(|group| spans.get_mut(group)) {
                    *span = Some((pos, pos + len));
                }
                pos += len;
            }
        }
    }
    Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every match of `re` in `line` as `captures_iter` finds them: each group's span.
    fn by_regex(re: &regex::Regex, line: &str) -> Vec<Vec<Option<(usize, usize)>>> {
        re.captures_iter(line)
            .map(|caps| {
                caps.iter()
                    .map(|m| m.map(|m| (m.start(), m.end())))
                    .collect()
            })
            .collect()
    }

    /// The same through the shape matcher, resuming after each match as the regex does.
    fn by_shape(
        shape: &ShapeMatcher,
        groups: usize,
        line: &str,
    ) -> Vec<Vec<Option<(usize, usize)>>> {
        let mut found = Vec::new();
        let mut at = 0;
        loop {
            let mut spans = vec![None; groups];
            let Some((start, end)) = shape.find_at(line, at, &mut spans) else {
                break;
            };
            spans[0] = Some((start, end));
            found.push(spans);
            at = end;
        }
        found
    }

    const SHAPED: [&str; 10] = [
        r"step (?P<step>\d+) .*acc=(?P<value>[0-9.]+)",
        r"loss=(?P<value>[0-9.]+)",
        r"ep (?P<step>\d+): .*val_acc (?P<value>[0-9.e-]+)%",
        r"a(?P<value>\d+)b.*ab(?P<step>\d+)",
        r"(?s)x.*xx(?P<value>[0-9]+)",
        r"st(?P<step>[0-9]+)st.*t(?P<value>\d+)",
        r"it (?P<step>\d+) .*=(?P<value>\d+)\.(?P<frac>\d+)e",
        r"q.*a1a(?P<value>\d+)",
        r"epoch (?P<step>\d+)/\d+ .*test_acc=(?P<value>[-+0-9.eE]+)",
        r"ep\d+ (?P<step>\d+)/\d+ train_loss=(?P<value>[-+0-9.eE]+)",
    ];

    #[test]
    fn patterns_of_the_shape_are_recognised_and_others_keep_the_regex() {
        for pattern in SHAPED {
            assert!(ShapeMatcher::of(pattern).is_some(), "{pattern}");
        }
        for pattern in [
            r"acc=(?P<value>[0-9.]+)|unused",
            r"(?P<value>\d+)",
            r"(?i)acc=(?P<value>[0-9.]+)",
            r"acc=(?P<value>\d+)1",
            r"acc=\d+1(?P<value>\d+)",
            r"acc(?P<value>\d+).*x",
            r"acc.*?x(?P<value>\d+)",
            r"acc.*x.*y(?P<value>\d+)",
            r"acc\s*(?P<value>\d+)",
            r"acc=(?P<value>\d*)",
            r"acc=(?P<value>\d+?)x",
            r"acc=(?P<value>(\d)+)",
            r"^acc=(?P<value>\d+)",
            r"acc.*",
        ] {
            assert!(ShapeMatcher::of(pattern).is_none(), "{pattern}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn the_shape_matcher_finds_what_the_regex_finds(
            pattern in 0..SHAPED.len(),
            fragments in proptest::collection::vec(
                proptest::sample::select(vec![
                    "step ", "acc=", "a", "b", "x", "xx", "t", "s", "ab", "st", "0", "1",
                    "42", "9", ".", " ", ":", "ep ", "val_acc ", "%", "loss=", "\n", "٣",
                    "é", "e", "-", "=", "it ", "\r", "a1a", "q", "epoch ", "/",
                    "test_acc=", " train_loss=", "+", "E",
                ]),
                0..40,
            ),
        ) {
            let shape = ShapeMatcher::of(SHAPED[pattern]).unwrap();
            let re = regex::Regex::new(SHAPED[pattern]).unwrap();
            let line: String = fragments.concat();
            proptest::prop_assert_eq!(
                by_shape(&shape, re.captures_len(), &line),
                by_regex(&re, &line),
                "{:?} on {:?}", SHAPED[pattern], line
            );
        }
    }

    #[test]
    fn line_feeds_overlapping_literals_and_unicode_digits_match_as_the_regex_does() {
        let cases = [
            // `.` stops at a line feed; with `s` it does not.
            (SHAPED[0], "step 1 loss acc=\nacc=2"),
            (SHAPED[0], "step 1 acc=3\nacc=2"),
            (SHAPED[4], "x\nxx5"),
            // The rightmost `a1a` is not followed by a digit; the one it overlaps is.
            (SHAPED[7], "qa1a1ab"),
            // `\d` is Unicode's, `[0-9]` is not.
            (SHAPED[0], "step ٣ acc=1"),
            (SHAPED[1], "loss=٣"),
            // Several matches in one line, the second after the first ends.
            (SHAPED[1], "loss=1 loss=2.5 loss=."),
        ];
        let mut matched = 0;
        for (pattern, line) in cases {
            let re = regex::Regex::new(pattern).unwrap();
            let shape = ShapeMatcher::of(pattern).unwrap();
            let found = by_shape(&shape, re.captures_len(), line);
            assert_eq!(found, by_regex(&re, line), "{pattern:?} on {line:?}");
            matched += found.len();
        }
        assert_eq!(matched, 7);
    }

    #[test]
    fn the_flood_lines_give_the_regex_groups() {
        let pattern = SHAPED[0];
        let re = regex::Regex::new(pattern).unwrap();
        let shape = ShapeMatcher::of(pattern).unwrap();
        let mut compared = 0;
        for i in [0usize, 7, 99, 12_345, 999_999] {
            let line = format!(
                "{:3}%|{:<30}| step {i} loss={:.4} acc={:.4}",
                i / 10_000,
                "#".repeat(i % 30),
                1.0 / (i as f64 + 1.0),
                (i % 1000) as f64 / 1000.0
            );
            let found = by_shape(&shape, re.captures_len(), &line);
            assert_eq!(found, by_regex(&re, &line), "{line}");
            assert_eq!(found.len(), 1, "{line}");
            compared += 1;
        }
        assert_eq!(compared, 5);
    }
}

//! Metrics read from a run's output as it streams: ANSI escapes stripped, `\r`-rewritten
//! progress lines split, then each line matched by the task's regex or JSON-lines extractors;
//! series and their reductions (last / max / min / mean).

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::task::{MetricSpec, Reduce, Task};

mod series;
mod shape;
pub use series::Series;
use shape::ShapeMatcher;

/// One metric observation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The step the log gave, if any.
    pub step: Option<f64>,
    /// The value.
    pub value: f64,
}

/// Longest line kept for matching; the rest of a longer line is dropped.
const MAX_LINE: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Esc,
    Csi,
    /// OSC, DCS, SOS, PM, APC: a string ended by BEL or ESC \.
    Str,
    StrEsc,
}

/// Splits streamed terminal text into plain lines: escape sequences removed, `\n`, `\r\n`
/// and a lone `\r` (a progress bar rewriting its line) all end a line.
#[derive(Debug)]
pub struct LineSplitter {
    line: String,
    escape: Escape,
    after_cr: bool,
    last_cr_line: Option<String>,
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl LineSplitter {
    /// An empty splitter.
    pub fn new() -> Self {
        LineSplitter {
            line: String::new(),
            escape: Escape::None,
            after_cr: false,
            last_cr_line: None,
        }
    }

    /// Feeds text and calls `on_line` for every completed line.
    pub fn feed(&mut self, text: &str, on_line: &mut impl FnMut(&str)) {
        let bytes = text.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            if self.escape == Escape::None {
                // A run of ordinary text is copied at once. It ends before a C0 control or
                // DEL (ASCII, so on a character boundary) or before 0xC2, the lead byte of
                // the C1 controls, which the per-character path below decides on.
                let run = bytes[at..]
                    .iter()
                    .position(|&b| (b < 0x20 && b != b'\t') || b == 0x7f || b == 0xc2)
                    .unwrap_or(bytes.len() - at);
                if run > 0 {
                    self.push_text(&text[at..at + run]);
                    at += run;
                    continue;
                }
            }
            let Some(ch) = text[at..].chars().next() else {
                break;
            };
            at += ch.len_utf8();
            self.step(ch, on_line);
        }
    }

    /// Appends ordinary text to the line, keeping the characters that start before
    /// [`MAX_LINE`] bytes.
    fn push_text(&mut self, piece: &str) {
        self.after_cr = false;
        let room = MAX_LINE.saturating_sub(self.line.len());
        let mut cut = room.min(piece.len());
        while cut < piece.len() && !piece.is_char_boundary(cut) {
            cut += 1;
        }
        self.line.push_str(&piece[..cut]);
    }

    /// Takes one character through the escape, line-ending and control handling.
    fn step(&mut self, ch: char, on_line: &mut impl FnMut(&str)) {
        match self.escape {
            Escape::Esc => {
                self.escape = match ch {
                    '[' => Escape::Csi,
                    ']' | 'P' | 'X' | '^' | '_' => Escape::Str,
                    _ => Escape::None,
                };
                return;
            }
            Escape::Csi => {
                if ('@'..='~').contains(&ch) {
                    self.escape = Escape::None;
                }
                return;
            }
            Escape::Str => {
                match ch {
                    '\u{7}' => self.escape = Escape::None,
                    '\u{1b}' => self.escape = Escape::StrEsc,
                    _ => {}
                }
                return;
            }
            Escape::StrEsc => {
                self.escape = if ch == '\\' {
                    Escape::None
                } else {
                    Escape::Str
                };
                return;
            }
            Escape::None => {}
        }
        match ch {
            '\u{1b}' => self.escape = Escape::Esc,
            '\n' => {
                if !(self.after_cr && self.line.is_empty()) {
                    self.emit(false, on_line);
                }
                self.after_cr = false;
                self.last_cr_line = None;
            }
            '\r' => {
                self.emit(true, on_line);
                self.after_cr = true;
            }
            c if c.is_control() && c != '\t' => {}
            c => {
                self.after_cr = false;
                if self.line.len() < MAX_LINE {
                    self.line.push(c);
                }
            }
        }
    }

    /// Emits the unfinished last line, if any (call at end of stream).
    pub fn finish(&mut self, on_line: &mut impl FnMut(&str)) {
        if !self.line.is_empty() {
            self.emit(false, on_line);
        }
    }

    fn emit(&mut self, by_cr: bool, on_line: &mut impl FnMut(&str)) {
        if self.line.is_empty() {
            return;
        }
        let repeated = self.last_cr_line.as_deref() == Some(self.line.as_str());
        if !repeated {
            on_line(&self.line);
        }
        if by_cr {
            if !repeated {
                match &mut self.last_cr_line {
                    Some(last) => last.clone_from(&self.line),
                    None => self.last_cr_line = Some(self.line.clone()),
                }
            }
        } else {
            self.last_cr_line = None;
        }
        self.line.clear();
    }
}

/// A whole captured output as the plain lines the extractors see, through the one
/// [`LineSplitter`]: what `xstack init` detects metrics in and writes to `reference.log`,
/// and what a failed run's tail shows.
pub fn plain_lines(text: &str) -> Vec<String> {
    let mut splitter = LineSplitter::new();
    let mut lines = Vec::new();
    splitter.feed(text, &mut |l| lines.push(l.to_string()));
    splitter.finish(&mut |l| lines.push(l.to_string()));
    lines
}

/// A metric's regex with its `value` and `step` group numbers resolved once, and capture
/// slots reused from line to line; matched by hand when it has the common shape
/// ([`ShapeMatcher`]), with the same result.
#[derive(Debug, Clone)]
struct RegexMatcher {
    re: Regex,
    slots: regex::CaptureLocations,
    shape: Option<Box<ShapeMatcher>>,
    spans: Vec<Option<(usize, usize)>>,
    value: Option<usize>,
    step: Option<usize>,
}

impl RegexMatcher {
    fn new(re: Regex) -> Self {
        let group = |name: &str| re.capture_names().position(|n| n == Some(name));
        RegexMatcher {
            slots: re.capture_locations(),
            shape: ShapeMatcher::of(re.as_str()).map(Box::new),
            spans: vec![None; re.captures_len()],
            value: group("value"),
            step: group("step"),
            re,
        }
    }

    /// Every point in `line`: one per match, as `captures_iter` would find them.
    fn extract(&mut self, line: &str, index: usize, out: &mut Vec<(usize, Point)>) {
        let Some(value_group) = self.value else {
            return;
        };
        if let Some(shape) = &self.shape {
            let mut at = 0;
            while let Some((_, end)) = shape.find_at(line, at, &mut self.spans) {
                at = end;
                let text = |group: usize| self.spans[group].map(|(s, e)| &line[s..e]);
                let Some(value) = text(value_group).and_then(parse_number) else {
                    continue;
                };
                let step = self.step.and_then(text).and_then(parse_number);
                out.push((index, Point { step, value }));
            }
            return;
        }
        let mut at = 0;
        let mut last_end = None;
        while at <= line.len() {
            let Some(m) = self.re.captures_read_at(&mut self.slots, line, at) else {
                break;
            };
            let empty = m.start() == m.end();
            // Past an empty match, the search resumes one character further on.
            let next = if empty {
                m.end() + line[m.end()..].chars().next().map_or(1, char::len_utf8)
            } else {
                m.end()
            };
            // An empty match right where the previous match ended is not a new match.
            if empty && last_end == Some(m.end()) {
                at = next;
                continue;
            }
            last_end = Some(m.end());
            at = next;
            let text = |group: usize| self.slots.get(group).map(|(s, e)| &line[s..e]);
            let Some(value) = text(value_group).and_then(parse_number) else {
                continue;
            };
            let step = self.step.and_then(text).and_then(parse_number);
            out.push((index, Point { step, value }));
        }
    }
}

/// How one metric is recognised in a line.
#[derive(Debug, Clone)]
enum Matcher {
    Regex(RegexMatcher),
    Json {
        key: String,
        step_key: Option<String>,
    },
}

/// The task's metric extractors.
#[derive(Debug, Clone)]
pub struct Extractor {
    metrics: Vec<(String, Matcher)>,
}

impl Extractor {
    /// The extractors of a validated task.
    pub fn for_task(task: &Task) -> Extractor {
        let metrics = task
            .spec
            .metrics
            .iter()
            .zip(&task.metric_regexes)
            .map(|(m, re)| {
                let matcher = match re {
                    Some(re) => Matcher::Regex(RegexMatcher::new(re.clone())),
                    None => Matcher::Json {
                        key: m.json_key.clone().unwrap_or_default(),
                        step_key: m.step_key.clone(),
                    },
                };
                (m.name.clone(), matcher)
            })
            .collect();
        Extractor { metrics }
    }

    /// Extractors for metric definitions that are not (yet) part of a task, such as the
    /// proposals of `xstack init`; a regex that does not compile is an error.
    pub fn from_specs(specs: &[MetricSpec]) -> Result<Extractor, regex::Error> {
        let mut metrics = Vec::with_capacity(specs.len());
        for m in specs {
            let matcher = match (&m.regex, &m.json_key) {
                (Some(re), _) => Matcher::Regex(RegexMatcher::new(Regex::new(re)?)),
                (None, key) => Matcher::Json {
                    key: key.clone().unwrap_or_default(),
                    step_key: m.step_key.clone(),
                },
            };
            metrics.push((m.name.clone(), matcher));
        }
        Ok(Extractor { metrics })
    }

    /// The metric names, in task order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.metrics.iter().map(|(n, _)| n.as_str())
    }

    /// Every metric observation in one plain line, as (metric index, point).
    pub fn extract(&mut self, line: &str, out: &mut Vec<(usize, Point)>) {
        let json = {
            let trimmed = line.trim();
            if trimmed.starts_with('{') && trimmed.ends_with('}') {
                serde_json::from_str::<serde_json::Value>(trimmed).ok()
            } else {
                None
            }
        };
        for (i, (_, matcher)) in self.metrics.iter_mut().enumerate() {
            match matcher {
                Matcher::Regex(re) => re.extract(line, i, out),
                Matcher::Json { key, step_key } => {
                    let Some(obj) = json.as_ref().and_then(|j| j.as_object()) else {
                        continue;
                    };
                    let Some(value) = obj.get(key).and_then(json_number) else {
                        continue;
                    };
                    let step = step_key
                        .as_ref()
                        .and_then(|k| obj.get(k))
                        .and_then(json_number);
                    out.push((i, Point { step, value }));
                }
            }
        }
    }
}

fn parse_number(s: &str) -> Option<f64> {
    let s = s.trim().trim_end_matches('%');
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn json_number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Number(n) => n.as_f64(),
        serde_json::Value::String(s) => parse_number(s),
        _ => None,
    }
}

/// A splitter and the extractors together: text in, metric points out.
#[derive(Debug)]
pub struct MetricStream {
    splitter: LineSplitter,
    extractor: Extractor,
}

impl MetricStream {
    /// A stream for the given extractors.
    pub fn new(extractor: Extractor) -> Self {
        MetricStream {
            splitter: LineSplitter::new(),
            extractor,
        }
    }

    /// Feeds output text; returns the points found in lines it completed.
    pub fn feed(&mut self, text: &str) -> Vec<(usize, Point)> {
        let mut out = Vec::new();
        let extractor = &mut self.extractor;
        self.splitter
            .feed(text, &mut |line| extractor.extract(line, &mut out));
        out
    }

    /// Ends the stream; returns the points of the unfinished last line.
    pub fn finish(&mut self) -> Vec<(usize, Point)> {
        let mut out = Vec::new();
        let extractor = &mut self.extractor;
        self.splitter
            .finish(&mut |line| extractor.extract(line, &mut out));
        out
    }

    /// The metric names, in task order.
    pub fn names(&self) -> Vec<String> {
        self.extractor.names().map(str::to_string).collect()
    }
}

/// Reduces a series to one value; `None` for an empty series.
pub fn reduce(points: &[Point], how: Reduce) -> Option<f64> {
    let values = points.iter().map(|p| p.value);
    match how {
        Reduce::Last => points.last().map(|p| p.value),
        Reduce::Max => values.reduce(f64::max),
        Reduce::Min => values.reduce(f64::min),
        Reduce::Mean => {
            if points.is_empty() {
                None
            } else {
                Some(values.sum::<f64>() / points.len() as f64)
            }
        }
    }
}

/// Parses a whole recorded log (such as `reference.log`) into one series per metric, in task
/// order.
pub fn parse_log(task: &Task, text: &str) -> Vec<(String, Vec<Point>)> {
    parse_text(Extractor::for_task(task), text)
}

/// Parses a whole captured output with the given extractors into one series per metric, in
/// the extractors' order.
pub fn parse_text(extractor: Extractor, text: &str) -> Vec<(String, Vec<Point>)> {
    let mut stream = MetricStream::new(extractor);
    let names = stream.names();
    let mut series: Vec<(String, Vec<Point>)> =
        names.into_iter().map(|n| (n, Vec::new())).collect();
    let mut points = stream.feed(text);
    points.extend(stream.finish());
    for (i, p) in points {
        series[i].1.push(p);
    }
    series
}

#[cfg(test)]
mod tests;

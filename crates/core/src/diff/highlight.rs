//! Syntax highlighting with syntect: whole files highlighted once per content hash and
//! kept in a bounded, thread-safe cache, or only the lines a diff shows (for one-shot
//! output). Results are per-line lists of styled byte ranges.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use sha2::{Digest, Sha256};
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter as ThemeHighlighter, Style, Theme,
    ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use thiserror::Error;

use super::text::display_width;

/// Lines wider than this many columns are left plain (and not fed to the parser).
pub const MAX_HIGHLIGHT_COLUMNS: usize = 400;

/// The theme used when none is configured.
pub const DEFAULT_THEME: &str = "base16-ocean.dark";

/// How far back [`Highlighter::highlight_lines`] looks for a line to start parsing from
/// (see [`is_anchor`]), so that a window starts in a sensible parser state.
const RESYNC_LOOKBACK: usize = 40;

/// Most threads one file's shown lines are highlighted on.
const MAX_WORKERS: usize = 4;

/// Fewest lines of a file per highlighting thread.
const MIN_LINES_PER_WORKER: usize = 300;

/// Gaps between windows up to this many lines are parsed through (exact state) rather
/// than skipped with a fresh start.
const PARSE_THROUGH_GAP: usize = 8;

/// Errors of highlighting.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum HighlightError {
    /// The theme name is not one of syntect's default themes.
    #[error("unknown syntax theme `{name}` (available: {available})")]
    UnknownTheme {
        /// The name asked for.
        name: String,
        /// The names that exist, comma-separated.
        available: String,
    },
}

/// Foreground colour and font of a piece of code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanStyle {
    /// Foreground colour as RGB.
    pub fg: [u8; 3],
    /// Bold font.
    pub bold: bool,
    /// Italic font.
    pub italic: bool,
    /// Underlined.
    pub underline: bool,
}

/// A styled byte range of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StyledSpan {
    /// The style of the range.
    pub style: SpanStyle,
    /// Byte range in the line (line ending excluded).
    pub range: Range<usize>,
}

/// Highlighting of a whole text: styled spans per line (empty for plain lines).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HighlightedFile {
    /// Name of the syntax used ("Plain Text" when none matched the path).
    pub syntax: String,
    lines: Vec<Vec<StyledSpan>>,
}

impl HighlightedFile {
    /// Spans of the line at 0-based `index`; empty when the line is plain or absent.
    pub fn line(&self, index: usize) -> &[StyledSpan] {
        self.lines.get(index).map_or(&[], Vec::as_slice)
    }

    /// Gives line `to` of this file the spans of line `from` of `other`, for each pair
    /// (used for unchanged lines, whose colours are the same on both sides of a diff).
    pub(super) fn copy_lines(
        &mut self,
        other: &HighlightedFile,
        pairs: impl Iterator<Item = (usize, usize)>,
    ) {
        for (to, from) in pairs {
            if let Some(slot) = self.lines.get_mut(to) {
                slot.clone_from(&other.lines.get(from).cloned().unwrap_or_default());
            }
        }
    }

    /// Takes the colours away from every line whose entry in `keep` is false (or absent).
    pub(super) fn keep_only(&mut self, keep: &[bool]) {
        for (index, line) in self.lines.iter_mut().enumerate() {
            if !keep.get(index).copied().unwrap_or(false) {
                line.clear();
            }
        }
    }

    fn span_count(&self) -> usize {
        self.lines.iter().map(Vec::len).sum()
    }
}

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn themes() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(ThemeSet::load_defaults)
}

/// Names of the available syntax themes.
pub fn theme_names() -> Vec<&'static str> {
    themes().themes.keys().map(String::as_str).collect()
}

fn theme(name: &str) -> Result<&'static Theme, HighlightError> {
    themes()
        .themes
        .get(name)
        .ok_or_else(|| HighlightError::UnknownTheme {
            name: name.to_owned(),
            available: theme_names().join(", "),
        })
}

/// The syntax for a path, by extension (then by file name, e.g. `Makefile`); `None` for plain text.
fn syntax_for(path: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let path = Path::new(path);
    let by_ext = path
        .extension()
        .and_then(|e| e.to_str())
        .and_then(|e| set.find_syntax_by_extension(e));
    let found = by_ext.or_else(|| {
        path.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| set.find_syntax_by_extension(n))
    })?;
    (found.name != set.find_syntax_plain_text().name).then_some(found)
}

/// Highlights files, caching whole-file results by content hash, syntax and theme.
/// Share one between threads (it is `Send + Sync`); highlighting runs outside the lock.
#[derive(Debug)]
pub struct Highlighter {
    cache: Mutex<Cache>,
}

#[derive(Debug)]
struct Cache {
    entries: HashMap<[u8; 32], CacheEntry>,
    tick: u64,
    spans: usize,
    max_files: usize,
    max_spans: usize,
}

#[derive(Debug)]
struct CacheEntry {
    file: Arc<HighlightedFile>,
    last_used: u64,
    spans: usize,
}

impl Default for Highlighter {
    /// Up to 64 files and 2 million spans (roughly 50 MB).
    fn default() -> Self {
        Self::new(64, 2_000_000)
    }
}

impl Highlighter {
    /// A highlighter whose cache keeps at most `max_files` files and `max_spans` spans,
    /// evicting the least recently used (the most recent file is always kept).
    pub fn new(max_files: usize, max_spans: usize) -> Self {
        Self {
            cache: Mutex::new(Cache {
                entries: HashMap::new(),
                tick: 0,
                spans: 0,
                max_files: max_files.max(1),
                max_spans,
            }),
        }
    }

    /// Highlights a whole normalised text (see `PreparedText`), or returns the cached
    /// result for the same content, syntax (from `path`) and theme.
    pub fn highlight(
        &self,
        text: &str,
        path: &str,
        theme_name: &str,
    ) -> Result<Arc<HighlightedFile>, HighlightError> {
        let theme = theme(theme_name)?;
        let syntax = syntax_for(path);
        let key = cache_key(text, syntax.map_or("", |s| s.name.as_str()), theme_name);
        if let Some(hit) = self.lock().get(&key) {
            return Ok(hit);
        }
        let lines = line_pieces(text);
        let mut out = vec![Vec::new(); lines.len()];
        if let Some(syntax) = syntax {
            let mut parser = LineParser::new(syntax, theme);
            parser.highlight(&lines, 0..lines.len(), &mut out);
        }
        let file = Arc::new(HighlightedFile {
            syntax: syntax_label(syntax),
            lines: out,
        });
        self.lock().insert(key, Arc::clone(&file));
        Ok(file)
    }

    /// Highlights only the lines in `wanted` (0-based line ranges) of a normalised text,
    /// each window parsed from a nearby earlier top-level line or definition (or through
    /// a short gap from the window before), as a diff viewer does; other lines stay
    /// plain. Colours can differ from whole-file highlighting inside long multi-line
    /// strings. Not cached.
    pub fn highlight_lines(
        &self,
        text: &str,
        path: &str,
        theme_name: &str,
        wanted: &[Range<usize>],
    ) -> Result<HighlightedFile, HighlightError> {
        let theme = theme(theme_name)?;
        let syntax = syntax_for(path);
        let lines = line_pieces(text);
        let mut out = vec![Vec::new(); lines.len()];
        if let Some(syntax) = syntax {
            let mut windows: Vec<Range<usize>> = wanted
                .iter()
                .map(|r| r.start.min(lines.len())..r.end.min(lines.len()))
                .filter(|r| !r.is_empty())
                .collect();
            windows.sort_by_key(|r| r.start);
            let wanted_lines = windows.iter().map(Range::len).sum();
            let groups = split_windows(windows, worker_count(wanted_lines));
            if let [only] = groups.as_slice() {
                highlight_windows(syntax, theme, &lines, only, &mut out);
            } else {
                let parts: Vec<Vec<Vec<StyledSpan>>> = std::thread::scope(|s| {
                    let workers: Vec<_> = groups
                        .iter()
                        .map(|group| {
                            let lines = &lines;
                            s.spawn(move || {
                                let mut part = vec![Vec::new(); lines.len()];
                                highlight_windows(syntax, theme, lines, group, &mut part);
                                part
                            })
                        })
                        .collect();
                    workers
                        .into_iter()
                        // A panic in a worker is re-raised here rather than hidden.
                        .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                        .collect()
                });
                for part in parts {
                    for (slot, spans) in out.iter_mut().zip(part) {
                        if !spans.is_empty() {
                            *slot = spans;
                        }
                    }
                }
            }
        }
        Ok(HighlightedFile {
            syntax: syntax_label(syntax),
            lines: out,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        // A panic while holding the lock cannot leave the map inconsistent.
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Cache {
    fn get(&mut self, key: &[u8; 32]) -> Option<Arc<HighlightedFile>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|e| {
            e.last_used = tick;
            Arc::clone(&e.file)
        })
    }

    fn insert(&mut self, key: [u8; 32], file: Arc<HighlightedFile>) {
        self.tick += 1;
        let spans = file.span_count();
        if let Some(old) = self.entries.insert(
            key,
            CacheEntry {
                file,
                last_used: self.tick,
                spans,
            },
        ) {
            self.spans -= old.spans;
        }
        self.spans += spans;
        while self.entries.len() > 1
            && (self.entries.len() > self.max_files || self.spans > self.max_spans)
        {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| *k);
            match oldest.and_then(|k| self.entries.remove(&k)) {
                Some(evicted) => self.spans -= evicted.spans,
                None => break,
            }
        }
    }
}

fn cache_key(text: &str, syntax: &str, theme: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in [theme, syntax] {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hasher.update(text.as_bytes());
    hasher.finalize().into()
}

fn syntax_label(syntax: Option<&SyntaxReference>) -> String {
    syntax.map_or_else(|| "Plain Text".to_owned(), |s| s.name.clone())
}

/// Lines with their `\n` (the parser expects it).
fn line_pieces(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// True when skipping `lines` is unlikely to change the parser's state: brackets balance,
/// block strings and comments open and close on the same line, and no line continues.
fn is_neutral(lines: &[&str]) -> bool {
    let mut depth = 0i64;
    for line in lines {
        let code = line.trim_end();
        let odd = |d: &str| code.matches(d).count() % 2 == 1;
        if odd("\"\"\"")
            || odd("'''")
            || odd("`")
            || code.matches("/*").count() != code.matches("*/").count()
            || code.ends_with('\\')
        {
            return false;
        }
        for b in code.bytes() {
            match b {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return false;
            }
        }
    }
    depth == 0
}

/// A line where parsing can start from scratch with little risk: top-level code (a letter
/// or `@` in the first column) or a definition or decorator at any indentation.
fn is_anchor(line: &str) -> bool {
    let trimmed = line.trim_start();
    line.starts_with(|c: char| c.is_ascii_alphabetic() || c == '@')
        || ["def ", "class ", "async def ", "@"]
            .iter()
            .any(|k| trimmed.starts_with(k))
}

/// Highlights sorted, non-overlapping `windows` of `lines` with one parser, carrying its
/// state over gaps that cannot change it and restarting at anchor lines otherwise.
fn highlight_windows(
    syntax: &SyntaxReference,
    theme: &Theme,
    lines: &[&str],
    windows: &[Range<usize>],
    out: &mut [Vec<StyledSpan>],
) {
    let mut parser = LineParser::new(syntax, theme);
    let mut parsed_to = 0;
    for window in windows {
        if window.end <= parsed_to {
            continue;
        }
        let start = window.start.max(parsed_to);
        let gap = start - parsed_to;
        let floor = start.saturating_sub(RESYNC_LOOKBACK).max(parsed_to);
        let anchor = (floor..=start).rev().find(|&i| is_anchor(lines[i]));
        // Carry the previous window's state on: over a gap that cannot change it without
        // parsing it, else through a short gap. Otherwise start afresh at an anchor line
        // (or parse through a gap with no anchor in reach).
        let from = if parsed_to > 0 && is_neutral(&lines[parsed_to..start]) {
            start
        } else if parsed_to > 0
            && (gap <= PARSE_THROUGH_GAP || (anchor.is_none() && gap <= RESYNC_LOOKBACK))
        {
            parsed_to
        } else {
            parser.reset();
            anchor.unwrap_or(start)
        };
        parser.highlight(lines, from..window.end, out);
        parsed_to = window.end;
    }
}

/// How many threads share the windows of one file: one per [`MIN_LINES_PER_WORKER`]
/// wanted lines, at most the machine's parallelism and [`MAX_WORKERS`].
fn worker_count(wanted_lines: usize) -> usize {
    let available = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    available
        .min(MAX_WORKERS)
        .min(wanted_lines / MIN_LINES_PER_WORKER)
        .max(1)
}

/// Cuts sorted windows into at most `groups` runs with about equal line counts.
fn split_windows(windows: Vec<Range<usize>>, groups: usize) -> Vec<Vec<Range<usize>>> {
    let total: usize = windows.iter().map(Range::len).sum();
    let per_group = total.div_ceil(groups.max(1)).max(1);
    let mut out: Vec<Vec<Range<usize>>> = vec![Vec::new()];
    let mut in_group = 0;
    for window in windows {
        if in_group >= per_group {
            out.push(Vec::new());
            in_group = 0;
        }
        in_group += window.len();
        if let Some(group) = out.last_mut() {
            group.push(window);
        }
    }
    out
}

/// A syntax parser and theme highlighter whose state carries from line to line.
struct LineParser<'t> {
    syntax: &'t SyntaxReference,
    theme: ThemeHighlighter<'t>,
    parse: ParseState,
    state: HighlightState,
}

impl<'t> LineParser<'t> {
    fn new(syntax: &'t SyntaxReference, theme: &'t Theme) -> Self {
        let theme = ThemeHighlighter::new(theme);
        let state = HighlightState::new(&theme, ScopeStack::new());
        Self {
            syntax,
            theme,
            parse: ParseState::new(syntax),
            state,
        }
    }

    /// Back to the state at the top of a file (the theme's selectors are kept).
    fn reset(&mut self) {
        self.parse = ParseState::new(self.syntax);
        self.state = HighlightState::new(&self.theme, ScopeStack::new());
    }

    /// Feeds lines `range` through the parser, storing their spans; long lines are
    /// skipped (plain). A parse error leaves the rest of the range plain.
    fn highlight(&mut self, lines: &[&str], range: Range<usize>, out: &mut [Vec<StyledSpan>]) {
        let set = syntaxes();
        let mut owned = String::new();
        for i in range {
            let piece = lines[i];
            if piece.len() > MAX_HIGHLIGHT_COLUMNS && display_width(piece) > MAX_HIGHLIGHT_COLUMNS {
                continue;
            }
            let input = if piece.ends_with('\n') {
                piece
            } else {
                owned.clear();
                owned.push_str(piece);
                owned.push('\n');
                owned.as_str()
            };
            let ops = match self.parse.parse_line(input, set) {
                Ok(ops) => ops,
                Err(err) => {
                    tracing::warn!(line = i + 1, %err, "syntax highlighting stopped");
                    return;
                }
            };
            let regions = HighlightIterator::new(&mut self.state, &ops, input, &self.theme);
            out[i] = to_spans(regions, piece.trim_end_matches('\n').len());
        }
    }
}

/// Converts syntect regions to byte ranges, merging neighbours of the same look
/// (blank regions take the style of the region before them).
fn to_spans<'a>(
    regions: impl Iterator<Item = (Style, &'a str)>,
    line_len: usize,
) -> Vec<StyledSpan> {
    let mut spans: Vec<StyledSpan> = Vec::new();
    let mut at = 0;
    for (style, piece) in regions {
        let range = at..(at + piece.len()).min(line_len);
        at += piece.len();
        if range.is_empty() {
            continue;
        }
        let style = span_style(&style);
        match spans.last_mut() {
            Some(last)
                if last.style == style
                    || (!last.style.underline && piece.chars().all(char::is_whitespace)) =>
            {
                last.range.end = range.end;
            }
            _ => spans.push(StyledSpan { style, range }),
        }
    }
    spans
}

fn span_style(style: &Style) -> SpanStyle {
    let fg = style.foreground;
    SpanStyle {
        fg: [fg.r, fg.g, fg.b],
        bold: style.font_style.contains(FontStyle::BOLD),
        italic: style.font_style.contains(FontStyle::ITALIC),
        underline: style.font_style.contains(FontStyle::UNDERLINE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: &str =
        "import torch\n\n\ndef f(x):\n    \"\"\"Doc.\"\"\"\n    return torch.relu(x)  # note\n";

    fn colours(file: &HighlightedFile, line: usize, text: &str) -> Vec<(String, [u8; 3])> {
        file.line(line)
            .iter()
            .map(|s| (text[s.range.clone()].to_owned(), s.style.fg))
            .collect()
    }

    #[test]
    fn python_is_highlighted_by_extension() {
        let h = Highlighter::default();
        let file = h.highlight(PY, "pkg/model.py", DEFAULT_THEME).unwrap();
        assert_eq!(file.syntax, "Python");
        let spans = colours(&file, 0, "import torch");
        assert!(spans.len() >= 2, "{spans:?}");
        assert_eq!(spans[0].0.trim_end(), "import");
        assert_ne!(
            spans[0].1,
            spans[spans.len() - 1].1,
            "keyword and name differ"
        );
        let covered: usize = file.line(5).iter().map(|s| s.range.len()).sum();
        assert_eq!(covered, "    return torch.relu(x)  # note".len());
    }

    #[test]
    fn unknown_extension_is_plain_text() {
        let h = Highlighter::default();
        let file = h
            .highlight("just words\n", "notes.unknownext", DEFAULT_THEME)
            .unwrap();
        assert_eq!(file.syntax, "Plain Text");
        assert!(file.line(0).is_empty());
    }

    #[test]
    fn unknown_theme_is_an_error_naming_the_choices() {
        let err = Highlighter::default()
            .highlight(PY, "a.py", "no-such-theme")
            .unwrap_err();
        assert!(err.to_string().contains("InspiredGitHub"), "{err}");
    }

    #[test]
    fn whole_files_are_cached_by_content() {
        let h = Highlighter::default();
        let a = h.highlight(PY, "a.py", DEFAULT_THEME).unwrap();
        let b = h.highlight(PY, "b/c.py", DEFAULT_THEME).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let other_theme = h.highlight(PY, "a.py", "InspiredGitHub").unwrap();
        assert!(!Arc::ptr_eq(&a, &other_theme));
    }

    #[test]
    fn cache_evicts_the_least_recently_used() {
        let h = Highlighter::new(2, usize::MAX);
        let a = h.highlight("a = 1\n", "a.py", DEFAULT_THEME).unwrap();
        let _b = h.highlight("b = 2\n", "a.py", DEFAULT_THEME).unwrap();
        let _a_again = h.highlight("a = 1\n", "a.py", DEFAULT_THEME).unwrap();
        let _c = h.highlight("c = 3\n", "a.py", DEFAULT_THEME).unwrap();
        assert_eq!(h.lock().entries.len(), 2);
        let a2 = h.highlight("a = 1\n", "a.py", DEFAULT_THEME).unwrap();
        assert!(Arc::ptr_eq(&a, &a2), "a was used recently and kept");
    }

    #[test]
    fn very_long_lines_stay_plain_without_panicking() {
        let long = format!("x = '{}'\ny = 2\n", "é".repeat(100_000));
        let file = Highlighter::default()
            .highlight(&long, "a.py", DEFAULT_THEME)
            .unwrap();
        assert!(file.line(0).is_empty());
        assert!(!file.line(1).is_empty());
    }

    #[test]
    fn shown_lines_match_whole_file_highlighting_for_top_level_code() {
        let text: String = (0..200)
            .map(|i| format!("def f{i}(x):\n    return x * {i}  # c\n\n"))
            .collect();
        let h = Highlighter::default();
        let whole = h.highlight(&text, "m.py", DEFAULT_THEME).unwrap();
        let part = h
            .highlight_lines(&text, "m.py", DEFAULT_THEME, &[301..304, 10..12, 590..700])
            .unwrap();
        for i in [10, 11, 301, 302, 303, 590, 599] {
            assert_eq!(part.line(i), whole.line(i), "line {i}");
        }
        assert!(part.line(200).is_empty(), "unwanted lines stay plain");
    }

    #[test]
    fn gaps_with_open_brackets_or_block_strings_are_not_skipped() {
        assert!(is_neutral(&["x = f(a, b)\n", "    y = [1]\n"]));
        assert!(!is_neutral(&["x = f(\n"]));
        assert!(!is_neutral(&["    \"\"\"Doc\n"]));
        assert!(is_neutral(&[
            "    \"\"\"One-line doc.\"\"\"\n",
            "/* c */ x\n"
        ]));
        assert!(!is_neutral(&["x /* open\n"]));
        assert!(!is_neutral(&["x = 1 + \\\n"]));
        assert!(is_neutral(&[]));
    }

    #[test]
    fn a_window_after_a_docstring_gap_keeps_string_colours_right() {
        let text =
            "def f():\n    \"\"\"\n    Docs (\n    more\n    \"\"\"\n    return 1\n\n\nx = 2\n";
        let h = Highlighter::default();
        let whole = h.highlight(text, "m.py", DEFAULT_THEME).unwrap();
        let part = h
            .highlight_lines(text, "m.py", DEFAULT_THEME, &[0..1, 3..4, 8..9])
            .unwrap();
        for i in [0, 3, 8] {
            assert_eq!(part.line(i), whole.line(i), "line {i}");
        }
    }

    #[test]
    fn windows_split_into_balanced_groups() {
        let groups = split_windows(vec![0..100, 200..250, 300..350, 400..500], 2);
        assert_eq!(
            groups,
            vec![vec![0..100, 200..250], vec![300..350, 400..500]]
        );
        let one: Vec<Range<usize>> = std::iter::once(0..10).collect();
        assert_eq!(split_windows(one.clone(), 4), vec![one]);
    }

    #[test]
    fn shown_lines_on_several_threads_match_one_thread() {
        let text: String = (0..900)
            .map(|i| format!("class C{i}:\n    x = '{i}'  # c\n    y = f({i})\n"))
            .collect();
        let wanted: Vec<Range<usize>> = (0..2700).step_by(5).map(|i| i..i + 3).collect();
        let h = Highlighter::default();
        let many = h
            .highlight_lines(&text, "m.py", DEFAULT_THEME, &wanted)
            .unwrap();
        let lines = line_pieces(&text);
        let mut one = vec![Vec::new(); lines.len()];
        let syntax = syntax_for("m.py").unwrap();
        highlight_windows(
            syntax,
            theme(DEFAULT_THEME).unwrap(),
            &lines,
            &wanted,
            &mut one,
        );
        assert_eq!(many.lines, one);
    }

    #[test]
    fn highlighter_is_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Highlighter>();
        let h = Arc::new(Highlighter::default());
        let worker = {
            let h = Arc::clone(&h);
            std::thread::spawn(move || {
                h.highlight(PY, "a.py", DEFAULT_THEME)
                    .map(|f| f.syntax.clone())
            })
        };
        assert_eq!(worker.join().unwrap().unwrap(), "Python");
    }
}

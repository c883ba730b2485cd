//! A file's diff ready to draw: its entry, side-by-side rows and the syntax colours of
//! both sides. A notebook is diffed as its cells (a header line per cell, its source, its
//! outputs folded to one line), with the cell numbers for the gutter.

use std::ops::Range;
use std::sync::Arc;

use super::engine::{DiffOptions, Row, RowKind, TextDiffResult, diff_prepared};
use super::highlight::{HighlightError, HighlightedFile, Highlighter};
use super::pairing::{FileEntry, Snapshot};
use super::text::PreparedText;
use crate::notebook::{self, RenderedNotebook};

/// Which lines to highlight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighlightScope {
    /// Whole files, cached by content hash (exact colours; for the live pane).
    WholeFile,
    /// Only the lines the rows show, not cached (fast; for one-shot output).
    ShownLines,
}

/// How to colour a view's code.
#[derive(Debug, Clone, Copy)]
pub struct HighlightRequest<'a> {
    /// The highlighter (and its cache) to use.
    pub highlighter: &'a Highlighter,
    /// A syntect theme name, e.g. "base16-ocean.dark" or "InspiredGitHub".
    pub theme: &'a str,
    /// Which lines to highlight.
    pub scope: HighlightScope,
}

/// One file's diff with everything the renderers need.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDiffView {
    /// The file and its status.
    pub entry: FileEntry,
    /// Its rows (empty for binary files).
    pub diff: TextDiffResult,
    /// Syntax colours of the old side, when highlighted.
    pub old_highlight: Option<Arc<HighlightedFile>>,
    /// Syntax colours of the new side, when highlighted.
    pub new_highlight: Option<Arc<HighlightedFile>>,
    /// For a side that is a notebook, shown as its cells ([`crate::notebook::render_cells`]):
    /// what the gutter shows per line instead of its number (the cell's number on its
    /// header line); old side first.
    pub cell_labels: [Option<Arc<[String]>>; 2],
}

/// Whole-file pairs with fewer lines than this are highlighted on the calling thread;
/// larger pairs on two threads at once.
const PARALLEL_MIN_LINES: usize = 500;

impl FileDiffView {
    /// Diffs (and optionally highlights) one entry of a comparison of `old` and `new`.
    pub fn build(
        entry: &FileEntry,
        old: &Snapshot,
        new: &Snapshot,
        opts: &DiffOptions,
        highlight: Option<&HighlightRequest<'_>>,
    ) -> Result<Self, HighlightError> {
        // A notebook is compared as its cells, not its JSON.
        let side = |snap: &Snapshot, path: Option<&str>| {
            let bytes = path
                .and_then(|p| snap.get(p))
                .map_or(&[][..], Vec::as_slice);
            let cells = path
                .filter(|p| notebook::is_notebook(p))
                .and_then(|_| notebook::cells(bytes));
            match cells {
                Some(cells) => {
                    let rendered = notebook::render_cells(&cells);
                    let text = PreparedText::new(rendered.text.as_bytes(), opts.tab_width);
                    (text, Some(rendered))
                }
                None => (PreparedText::new(bytes, opts.tab_width), None),
            }
        };
        let (old_text, old_cells) = side(old, entry.old_path());
        let (new_text, new_cells) = side(new, entry.new_path());
        // A notebook's code is highlighted as Python, its other lines not at all.
        let syntax_path = |path: &str, cells: &Option<RenderedNotebook>| match cells {
            Some(_) => format!("{path}.py"),
            None => path.to_string(),
        };
        let old_syntax = syntax_path(entry.old_path().unwrap_or(&entry.path), &old_cells);
        let new_syntax = syntax_path(entry.new_path().unwrap_or(&entry.path), &new_cells);
        let diff = diff_prepared(&old_text, &new_text, opts);
        let (old_highlight, new_highlight) = match highlight {
            Some(req) if !diff.binary => {
                // With `ShownLines`, unchanged rows take the new side's colours on the
                // old side too, so the old side only needs its changed lines.
                let old_job = SideJob {
                    text: &old_text.text,
                    path: &old_syntax,
                    shown: shown_lines(&diff.rows, |r| {
                        r.left
                            .as_ref()
                            .filter(|_| r.kind != RowKind::Equal)
                            .map(|c| c.lineno)
                    }),
                };
                let new_job = SideJob {
                    text: &new_text.text,
                    path: &new_syntax,
                    shown: shown_lines(&diff.rows, |r| r.right.as_ref().map(|c| c.lineno)),
                };
                let (a, b) = highlight_both(req, &diff.rows, &old_job, &new_job);
                (
                    Some(only_code(a?, old_cells.as_ref())),
                    Some(only_code(b?, new_cells.as_ref())),
                )
            }
            _ => (None, None),
        };
        let labels = |cells: Option<RenderedNotebook>| cells.map(|c| Arc::from(c.labels));
        Ok(Self {
            entry: entry.clone(),
            diff,
            old_highlight,
            new_highlight,
            cell_labels: [labels(old_cells), labels(new_cells)],
        })
    }
}

/// `highlighted` with the colours of a notebook's lines that are not code taken away.
fn only_code(
    mut highlighted: Arc<HighlightedFile>,
    cells: Option<&RenderedNotebook>,
) -> Arc<HighlightedFile> {
    if let Some(cells) = cells {
        Arc::make_mut(&mut highlighted).keep_only(&cells.code);
    }
    highlighted
}

/// Builds the views of several entries in order.
pub fn build_views(
    entries: &[FileEntry],
    old: &Snapshot,
    new: &Snapshot,
    opts: &DiffOptions,
    highlight: Option<&HighlightRequest<'_>>,
) -> Result<Vec<FileDiffView>, HighlightError> {
    entries
        .iter()
        .map(|e| FileDiffView::build(e, old, new, opts, highlight))
        .collect()
}

struct SideJob<'a> {
    text: &'a str,
    path: &'a str,
    shown: Vec<Range<usize>>,
}

type SideResult = Result<Arc<HighlightedFile>, HighlightError>;

/// Highlights both sides. With [`HighlightScope::ShownLines`] the old side's unchanged
/// rows are copied from the new side.
fn highlight_both(
    req: &HighlightRequest<'_>,
    rows: &[Row],
    old: &SideJob<'_>,
    new: &SideJob<'_>,
) -> (SideResult, SideResult) {
    let h = req.highlighter;
    match req.scope {
        HighlightScope::WholeFile => {
            let big = old.text.lines().count() + new.text.lines().count() >= PARALLEL_MIN_LINES;
            on_two_threads(big, old, new, |j| h.highlight(j.text, j.path, req.theme))
        }
        HighlightScope::ShownLines => {
            // Each side spreads its own windows over threads.
            let run = |j: &SideJob<'_>| h.highlight_lines(j.text, j.path, req.theme, &j.shown);
            let (a, b) = (run(old), run(new));
            match (a, b) {
                (Ok(mut a), Ok(b)) => {
                    let equal = rows
                        .iter()
                        .filter(|r| r.kind == RowKind::Equal)
                        .filter_map(|r| {
                            Some((r.left.as_ref()?.lineno - 1, r.right.as_ref()?.lineno - 1))
                        });
                    a.copy_lines(&b, equal);
                    (Ok(Arc::new(a)), Ok(Arc::new(b)))
                }
                (a, b) => (a.map(Arc::new), b.map(Arc::new)),
            }
        }
    }
}

/// Runs `job` for both sides, on two threads when `parallel`.
fn on_two_threads<T: Send>(
    parallel: bool,
    old: &SideJob<'_>,
    new: &SideJob<'_>,
    job: impl Fn(&SideJob<'_>) -> T + Sync,
) -> (T, T) {
    if !parallel {
        return (job(old), job(new));
    }
    std::thread::scope(|s| {
        let worker = s.spawn(|| job(old));
        let b = job(new);
        // A panic in the worker is re-raised here rather than hidden.
        let a = worker
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (a, b)
    })
}

/// 0-based line ranges of one side that the rows show.
fn shown_lines(rows: &[Row], lineno: impl Fn(&Row) -> Option<usize>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for n in rows.iter().filter_map(lineno) {
        let i = n - 1;
        match out.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::highlight::DEFAULT_THEME;
    use crate::diff::pairing::{CompareOptions, FileStatus, compare_snapshots};

    #[test]
    fn paired_view_diffs_against_the_source_and_highlights_both_sides() {
        let old: Snapshot = [("model.py".to_owned(), b"import torch\nx = 1\n".to_vec())].into();
        let new: Snapshot = [("model_flax.py".to_owned(), b"import jax\nx = 1\n".to_vec())].into();
        let entry = FileEntry {
            path: "model_flax.py".to_owned(),
            status: FileStatus::Paired {
                from: "model.py".to_owned(),
            },
            binary: false,
        };
        let h = Highlighter::default();
        for scope in [HighlightScope::WholeFile, HighlightScope::ShownLines] {
            let req = HighlightRequest {
                highlighter: &h,
                theme: DEFAULT_THEME,
                scope,
            };
            let view = FileDiffView::build(&entry, &old, &new, &DiffOptions::default(), Some(&req))
                .unwrap();
            assert_eq!(view.diff.stats.added, 1);
            assert_eq!(view.diff.stats.removed, 1);
            let hl = view.new_highlight.as_ref().unwrap();
            assert_eq!(hl.syntax, "Python");
            assert!(!hl.line(0).is_empty());
        }
    }

    #[test]
    fn binary_files_are_listed_but_not_diffed_or_highlighted() {
        let old: Snapshot = [("w.npz".to_owned(), b"PK\0\x03".to_vec())].into();
        let new: Snapshot = [("w.npz".to_owned(), b"PK\0\x04".to_vec())].into();
        let entries = compare_snapshots(&old, &new, &CompareOptions::default());
        let h = Highlighter::default();
        let req = HighlightRequest {
            highlighter: &h,
            theme: DEFAULT_THEME,
            scope: HighlightScope::WholeFile,
        };
        let views = build_views(&entries, &old, &new, &DiffOptions::default(), Some(&req)).unwrap();
        assert_eq!(views.len(), 1);
        assert!(views[0].entry.binary && views[0].diff.binary);
        assert!(views[0].diff.rows.is_empty() && views[0].new_highlight.is_none());
    }

    #[test]
    fn shown_lines_are_merged_into_ranges() {
        let r = crate::diff::engine::diff_texts(
            b"a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n",
            b"a\nB\nc\nd\ne\nf\ng\nh\ni\nj\n",
            &DiffOptions::default(),
        );
        assert_eq!(
            shown_lines(&r.rows, |r| r.left.as_ref().map(|c| c.lineno)),
            vec![0..5]
        );
    }
}

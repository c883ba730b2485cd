//! The line diff: two texts in, side-by-side rows out (hunks with context, folded
//! unchanged runs, replace blocks zipped pairwise, inline emphasis), always under a deadline.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, TextDiff};

use super::align::{align_block, zipped};
use super::inline::{Granularity, inline_diff};
use super::text::PreparedText;

/// The longest deadline honoured; larger values are clamped so no diff is unbounded.
pub const MAX_DEADLINE: Duration = Duration::from_secs(60);

/// Knobs of one diff.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffOptions {
    /// Unchanged lines shown around each change; longer unchanged runs are folded.
    pub context: usize,
    /// Time budget of the whole diff (line diff and inline word diffs together).
    pub deadline: Duration,
    /// Minimum similarity (0..=1) of a paired line for word emphasis; below it the
    /// whole line is shown as changed without word emphasis. Also the token overlap two
    /// lines of a replace block need to be kept on one row.
    pub inline_min_ratio: f32,
    /// Distance between tab stops when tabs are expanded.
    pub tab_width: usize,
}

impl Default for DiffOptions {
    fn default() -> Self {
        Self {
            context: 3,
            deadline: Duration::from_millis(500),
            inline_min_ratio: 0.5,
            tab_width: 4,
        }
    }
}

/// What a side-by-side row shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// The same line on both sides (context).
    Equal,
    /// A paired old and new line that differ in more than whitespace.
    Changed,
    /// A paired old and new line that differ only in whitespace.
    WhitespaceOnly,
    /// A new line with no old partner (left cell empty).
    Added,
    /// An old line with no new partner (right cell empty).
    Removed,
    /// A folded run of unchanged lines (no cells).
    Fold {
        /// How many unchanged lines the fold hides.
        hidden: usize,
    },
}

/// One side of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// 1-based line number in that side's file.
    pub lineno: usize,
    /// The normalised line (tabs expanded, no line ending).
    pub text: String,
    /// Byte ranges of `text` to emphasise (changed words, or changed whitespace).
    pub emphasis: Vec<Range<usize>>,
}

/// One side-by-side row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// What the row shows.
    pub kind: RowKind,
    /// The old side, absent for added lines, padding and folds.
    pub left: Option<Cell>,
    /// The new side, absent for removed lines, padding and folds.
    pub right: Option<Cell>,
}

/// Line counts of a diff.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffStats {
    /// New lines that are added or changed.
    pub added: usize,
    /// Old lines that are removed or changed.
    pub removed: usize,
}

/// The outcome of [`diff_texts`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextDiffResult {
    /// Side-by-side rows, hunks and folds in file order (empty for binary input).
    pub rows: Vec<Row>,
    /// One side looked binary; nothing was diffed.
    pub binary: bool,
    /// Added and removed line counts.
    pub stats: DiffStats,
    /// The deadline was reached, so the rows may show a coarser diff than the minimal one.
    pub timed_out: bool,
    /// One side uses CRLF line endings where the other does not.
    pub line_endings_changed: bool,
    /// The texts are identical apart from their line endings.
    pub crlf_only: bool,
    /// One side ends with a newline and the other does not (both non-empty).
    pub final_newline_changed: bool,
}

impl TextDiffResult {
    /// True when the texts differ in at least one line (line endings aside).
    pub fn has_changes(&self) -> bool {
        self.stats.added + self.stats.removed > 0
    }
}

/// Diffs two raw texts (lossy UTF-8, CRLF normalised, tabs expanded).
pub fn diff_texts(old: &[u8], new: &[u8], opts: &DiffOptions) -> TextDiffResult {
    diff_prepared(
        &PreparedText::new(old, opts.tab_width),
        &PreparedText::new(new, opts.tab_width),
        opts,
    )
}

/// Diffs two texts already normalised with [`PreparedText::new`].
pub fn diff_prepared(old: &PreparedText, new: &PreparedText, opts: &DiffOptions) -> TextDiffResult {
    let line_endings_changed = (old.crlf_lines > 0) != (new.crlf_lines > 0);
    if old.binary || new.binary {
        return TextDiffResult {
            binary: true,
            ..TextDiffResult::default()
        };
    }
    let deadline = Instant::now() + opts.deadline.min(MAX_DEADLINE);
    let old_lines = old.lines();
    let new_lines = new.lines();
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .deadline(deadline)
        .diff_slices(&old_lines, &new_lines);
    let mut builder = RowBuilder {
        old: &old_lines,
        new: &new_lines,
        opts,
        deadline,
        timed_out: Instant::now() >= deadline,
        rows: Vec::new(),
        stats: DiffStats::default(),
    };
    let segments = segments(diff.ops());
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.into_iter().enumerate() {
        match segment {
            Segment::Equal {
                old_start,
                new_start,
                len,
            } => {
                builder.equal_run(old_start, new_start, len, i == 0, i == last);
            }
            Segment::Change { old, new } => builder.change_block(old, new),
        }
    }
    let crlf_only = line_endings_changed && old.text == new.text;
    let final_newline_changed = !old.text.is_empty()
        && !new.text.is_empty()
        && old.text.ends_with('\n') != new.text.ends_with('\n');
    TextDiffResult {
        rows: builder.rows,
        binary: false,
        stats: builder.stats,
        timed_out: builder.timed_out,
        line_endings_changed,
        crlf_only,
        final_newline_changed,
    }
}

/// A run of equal lines, or a block of changes (deletes and inserts merged).
enum Segment {
    Equal {
        old_start: usize,
        new_start: usize,
        len: usize,
    },
    Change {
        old: Range<usize>,
        new: Range<usize>,
    },
}

fn segments(ops: &[DiffOp]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for op in ops {
        match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => out.push(Segment::Equal {
                old_start: old_index,
                new_start: new_index,
                len,
            }),
            _ => {
                let (old_r, new_r) = (op.old_range(), op.new_range());
                if let Some(Segment::Change { old, new }) = out.last_mut() {
                    old.end = old_r.end.max(old.end);
                    new.end = new_r.end.max(new.end);
                } else {
                    out.push(Segment::Change {
                        old: old_r,
                        new: new_r,
                    });
                }
            }
        }
    }
    out
}

struct RowBuilder<'a> {
    old: &'a [&'a str],
    new: &'a [&'a str],
    opts: &'a DiffOptions,
    deadline: Instant,
    timed_out: bool,
    rows: Vec<Row>,
    stats: DiffStats,
}

impl RowBuilder<'_> {
    /// Shows `context` lines next to changes and folds the rest (never a fold of one line).
    fn equal_run(
        &mut self,
        old_start: usize,
        new_start: usize,
        len: usize,
        first: bool,
        last: bool,
    ) {
        let ctx = self.opts.context;
        let head = if first { 0 } else { ctx.min(len) };
        let tail = if last { 0 } else { ctx.min(len - head) };
        let hidden = len - head - tail;
        if hidden < 2 {
            (0..len).for_each(|i| self.equal_row(old_start + i, new_start + i));
            return;
        }
        (0..head).for_each(|i| self.equal_row(old_start + i, new_start + i));
        self.rows.push(Row {
            kind: RowKind::Fold { hidden },
            left: None,
            right: None,
        });
        (len - tail..len).for_each(|i| self.equal_row(old_start + i, new_start + i));
    }

    fn equal_row(&mut self, old_i: usize, new_i: usize) {
        self.rows.push(Row {
            kind: RowKind::Equal,
            left: Some(cell(old_i, self.old[old_i], Vec::new())),
            right: Some(cell(new_i, self.new[new_i], Vec::new())),
        });
    }

    /// Lays out a replace block: similar lines anchored on one row, the rest zipped
    /// pairwise with the shorter side padded (plain zip once the deadline has passed).
    fn change_block(&mut self, old: Range<usize>, new: Range<usize>) {
        let plan = if Instant::now() >= self.deadline {
            self.timed_out = true;
            zipped(old.len(), new.len())
        } else {
            align_block(
                &self.old[old.clone()],
                &self.new[new.clone()],
                self.opts.inline_min_ratio,
            )
        };
        for (o, n) in plan {
            let row = match (o.map(|i| old.start + i), n.map(|i| new.start + i)) {
                (Some(o), Some(n)) => self.paired_row(o, n),
                (Some(o), None) => Row {
                    kind: RowKind::Removed,
                    left: Some(cell(o, self.old[o], Vec::new())),
                    right: None,
                },
                (None, Some(n)) => Row {
                    kind: RowKind::Added,
                    left: None,
                    right: Some(cell(n, self.new[n], Vec::new())),
                },
                (None, None) => continue,
            };
            self.stats.removed += usize::from(row.kind != RowKind::Equal && row.left.is_some());
            self.stats.added += usize::from(row.kind != RowKind::Equal && row.right.is_some());
            self.rows.push(row);
        }
    }

    fn paired_row(&mut self, o: usize, n: usize) -> Row {
        let (old_text, new_text) = (self.old[o], self.new[n]);
        if old_text == new_text {
            return Row {
                kind: RowKind::Equal,
                left: Some(cell(o, old_text, Vec::new())),
                right: Some(cell(n, new_text, Vec::new())),
            };
        }
        let whitespace_only = old_text
            .chars()
            .filter(|c| !c.is_whitespace())
            .eq(new_text.chars().filter(|c| !c.is_whitespace()));
        let (kind, granularity) = if whitespace_only {
            (RowKind::WhitespaceOnly, Granularity::Chars)
        } else {
            (RowKind::Changed, Granularity::Words)
        };
        let (mut old_emph, mut new_emph) = (Vec::new(), Vec::new());
        if Instant::now() >= self.deadline {
            self.timed_out = true;
        } else {
            let inline = inline_diff(old_text, new_text, granularity, self.deadline);
            self.timed_out |= inline.timed_out;
            if whitespace_only || inline.ratio >= self.opts.inline_min_ratio {
                old_emph = inline.old;
                new_emph = inline.new;
            }
        }
        Row {
            kind,
            left: Some(cell(o, old_text, old_emph)),
            right: Some(cell(n, new_text, new_emph)),
        }
    }
}

fn cell(index: usize, text: &str, emphasis: Vec<Range<usize>>) -> Cell {
    Cell {
        lineno: index + 1,
        text: text.to_owned(),
        emphasis,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> DiffOptions {
        DiffOptions {
            deadline: Duration::from_secs(10),
            ..DiffOptions::default()
        }
    }

    fn kinds(r: &TextDiffResult) -> Vec<RowKind> {
        r.rows.iter().map(|r| r.kind).collect()
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn replace_block_is_zipped_and_the_shorter_side_padded() {
        let old = "keep\nx = torch.zeros(3)\ny = x + 1\nkeep2\n";
        let new = "keep\nx = jnp.zeros(3)\ny = x + 1.0\nz = y * 2\nw = z\nkeep2\n";
        let r = diff_texts(old.as_bytes(), new.as_bytes(), &opts());
        assert_eq!(
            kinds(&r),
            vec![
                RowKind::Equal,
                RowKind::Changed,
                RowKind::Changed,
                RowKind::Added,
                RowKind::Added,
                RowKind::Equal
            ]
        );
        let added = &r.rows[3];
        assert!(added.left.is_none());
        assert_eq!(added.right.as_ref().map(|c| c.lineno), Some(4));
        assert_eq!(r.rows[5].left.as_ref().map(|c| c.lineno), Some(4));
        assert_eq!(r.rows[5].right.as_ref().map(|c| c.lineno), Some(6));
        assert_eq!(
            r.stats,
            DiffStats {
                added: 4,
                removed: 2
            }
        );
    }

    #[test]
    fn paired_line_emphasises_only_the_changed_word() {
        let r = diff_texts(b"x = torch.zeros(3)\n", b"x = jnp.zeros(3)\n", &opts());
        let row = &r.rows[0];
        assert_eq!(row.kind, RowKind::Changed);
        let (left, right) = (row.left.as_ref().unwrap(), row.right.as_ref().unwrap());
        assert_eq!(left.emphasis, vec![4..9]);
        assert_eq!(&left.text[4..9], "torch");
        assert_eq!(right.emphasis, vec![4..7]);
        assert_eq!(&right.text[4..7], "jnp");
    }

    #[test]
    fn dissimilar_pair_is_marked_whole_without_word_emphasis() {
        let r = diff_texts(
            b"self.fc1 = nn.Linear(64, 128)\n",
            b"return optax.adam(lr)\n",
            &opts(),
        );
        assert_eq!(kinds(&r), vec![RowKind::Changed]);
        assert!(r.rows[0].left.as_ref().unwrap().emphasis.is_empty());
        assert!(r.rows[0].right.as_ref().unwrap().emphasis.is_empty());
    }

    #[test]
    fn long_unchanged_runs_fold_with_a_count() {
        let old = numbered(30);
        let new = old.replace("line 15\n", "line fifteen\n");
        let r = diff_texts(old.as_bytes(), new.as_bytes(), &opts());
        assert_eq!(
            kinds(&r),
            [
                vec![RowKind::Fold { hidden: 11 }],
                vec![RowKind::Equal; 3],
                vec![RowKind::Changed],
                vec![RowKind::Equal; 3],
                vec![RowKind::Fold { hidden: 12 }],
            ]
            .concat()
        );
        assert_eq!(r.rows[1].left.as_ref().unwrap().lineno, 12);
    }

    #[test]
    fn gaps_between_changes_fold_only_when_longer_than_twice_the_context() {
        let old = numbered(20);
        let near = old
            .replace("line 5\n", "five\n")
            .replace("line 11\n", "eleven\n");
        let r = diff_texts(old.as_bytes(), near.as_bytes(), &opts());
        let folds: Vec<_> = kinds(&r)
            .into_iter()
            .filter(|k| matches!(k, RowKind::Fold { .. }))
            .collect();
        // Before: 4 lines, a fold would hide 1, so none; between: 5 lines, shown; after: 6 hidden.
        assert_eq!(folds, vec![RowKind::Fold { hidden: 6 }]);
        let far = old
            .replace("line 2\n", "two\n")
            .replace("line 12\n", "twelve\n");
        let r = diff_texts(old.as_bytes(), far.as_bytes(), &opts());
        assert!(kinds(&r).contains(&RowKind::Fold { hidden: 3 }));
    }

    #[test]
    fn identical_texts_are_one_fold() {
        let text = numbered(10);
        let r = diff_texts(text.as_bytes(), text.as_bytes(), &opts());
        assert_eq!(kinds(&r), vec![RowKind::Fold { hidden: 10 }]);
        assert!(!r.has_changes());
    }

    #[test]
    fn whitespace_only_changes_have_their_own_kind() {
        let r = diff_texts(
            b"def f(x):\n    return x+1\n",
            b"def f(x):\n        return x+1  \n",
            &opts(),
        );
        assert_eq!(kinds(&r), vec![RowKind::Equal, RowKind::WhitespaceOnly]);
        let right = r.rows[1].right.as_ref().unwrap();
        let marked: String = right
            .emphasis
            .iter()
            .map(|e| &right.text[e.clone()])
            .collect();
        assert_eq!(marked, "      ", "4 added indent spaces and 2 trailing");
    }

    #[test]
    fn crlf_only_difference_is_flagged_not_shown() {
        let r = diff_texts(b"a\r\nb\r\n", b"a\nb\n", &opts());
        assert!(r.crlf_only && r.line_endings_changed);
        assert!(!r.has_changes());
        let r = diff_texts(b"a\r\nb\r\n", b"a\nc\n", &opts());
        assert!(r.line_endings_changed && !r.crlf_only);
        assert_eq!(
            r.stats,
            DiffStats {
                added: 1,
                removed: 1
            }
        );
    }

    #[test]
    fn a_missing_final_newline_is_flagged() {
        let r = diff_texts(b"a\nb\n", b"a\nb", &opts());
        assert!(r.final_newline_changed && !r.has_changes());
        assert!(!diff_texts(b"", b"a", &opts()).final_newline_changed);
    }

    #[test]
    fn tabs_are_expanded_in_cells() {
        let r = diff_texts(b"\tx = 1\n", b"\tx = 2\n", &opts());
        assert_eq!(r.rows[0].left.as_ref().unwrap().text, "    x = 1");
        let r = diff_texts(
            b"\tx = 1\n",
            b"\tx = 2\n",
            &DiffOptions {
                tab_width: 2,
                ..opts()
            },
        );
        assert_eq!(r.rows[0].right.as_ref().unwrap().text, "  x = 2");
    }

    #[test]
    fn invalid_utf8_is_shown_as_replacement_characters() {
        let r = diff_texts(b"name = 'caf\xe9'\n", b"name = 'cafe'\n", &opts());
        assert_eq!(
            r.rows[0].left.as_ref().unwrap().text,
            "name = 'caf\u{FFFD}'"
        );
    }

    #[test]
    fn binary_input_is_reported_not_diffed() {
        let r = diff_texts(b"\x89PNG\r\n\x1a\n\0\0", b"text\n", &opts());
        assert!(r.binary);
        assert!(r.rows.is_empty());
    }

    #[test]
    fn large_disjoint_inputs_return_under_a_short_deadline() {
        let old: String = (0..20_000)
            .map(|i| format!("old line {i} alpha\n"))
            .collect();
        let new: String = (0..20_000)
            .map(|i| format!("new row {} beta\n", i * 7))
            .collect();
        let short = DiffOptions {
            deadline: Duration::from_millis(50),
            ..opts()
        };
        let r = diff_texts(old.as_bytes(), new.as_bytes(), &short);
        assert_eq!(r.stats.removed, 20_000);
        assert_eq!(r.stats.added, 20_000);
        assert_eq!(r.rows.len(), 20_000);
    }

    #[test]
    fn a_changed_100k_character_line_is_diffed_word_by_word() {
        let old = "w ".repeat(50_000);
        let new = format!("{}x {}", "w ".repeat(25_000), "w ".repeat(24_999));
        let r = diff_texts(old.as_bytes(), new.as_bytes(), &opts());
        assert_eq!(kinds(&r), vec![RowKind::Changed]);
        let right = r.rows[0].right.as_ref().unwrap();
        assert_eq!(right.emphasis, vec![50_000..50_001]);
    }

    #[test]
    fn added_and_deleted_files_diff_against_empty() {
        let r = diff_texts(b"", b"a\nb\n", &opts());
        assert_eq!(kinds(&r), vec![RowKind::Added, RowKind::Added]);
        let r = diff_texts(b"a\n", b"", &opts());
        assert_eq!(kinds(&r), vec![RowKind::Removed]);
    }
}

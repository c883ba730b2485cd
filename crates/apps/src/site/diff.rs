//! Two snapshots of a repository as a side-by-side HTML diff, from xstack's own diff engine
//! (the Diff pane's: file pairing, line and word diff, notebooks by cell, syntax colours).
//! Every line shown on the new side has an anchor, so a finding's `file:line` links to it;
//! files with a finding are shown whole.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use crate::diff::{
    CompareOptions, DiffOptions, FileDiffView, FileStatus, HighlightRequest, HighlightScope,
    HighlightedFile, Highlighter, RowKind, Snapshot, compare_snapshots,
};

use super::html::escape;

/// The syntax theme of the site's code (a light one, as the pages are light).
const THEME: &str = "InspiredGitHub";
/// Unchanged lines shown around a change.
const CONTEXT: usize = 3;
/// Lines of context that show a file whole.
const WHOLE: usize = 1_000_000;

/// A rendered diff: its HTML, the style sheet of its code colours, and where each file's
/// lines are.
pub struct DiffHtml {
    /// The `<section>`s, one per file.
    pub html: String,
    /// Rules for the colour classes the code uses.
    pub css: String,
    /// Each shown file (new path, or old path when deleted) and the prefix of its anchors.
    pub anchors: BTreeMap<String, String>,
    /// How many files differ.
    pub changed: usize,
}

/// The anchor of line `line` of the file whose anchors start with `prefix`.
pub fn line_anchor(prefix: &str, line: u32) -> String {
    format!("{prefix}-L{line}")
}

/// Colour classes in the order they were first used.
#[derive(Default)]
struct Palette {
    classes: HashMap<(u8, u8, u8, bool, bool), usize>,
    order: Vec<(u8, u8, u8, bool, bool)>,
}

impl Palette {
    fn class(&mut self, key: (u8, u8, u8, bool, bool)) -> usize {
        if let Some(&i) = self.classes.get(&key) {
            return i;
        }
        let i = self.order.len();
        self.order.push(key);
        self.classes.insert(key, i);
        i
    }

    fn css(&self, scope: &str) -> String {
        let mut css = String::new();
        for (i, (r, g, b, bold, italic)) in self.order.iter().enumerate() {
            let _ = write!(css, "{scope} .c{i}{{color:#{r:02x}{g:02x}{b:02x}");
            if *bold {
                css.push_str(";font-weight:600");
            }
            if *italic {
                css.push_str(";font-style:italic");
            }
            css.push_str("}\n");
        }
        css
    }
}

/// The diff of `old` against `new`; `whole` names files shown whole (those with findings,
/// which are shown even when unchanged). `scope` is the CSS selector its colour rules are
/// limited to, and `id` the prefix of its anchors (two diffs can share a page).
pub fn render(
    old: &Snapshot,
    new: &Snapshot,
    whole: &BTreeSet<String>,
    scope: &str,
    id: &str,
) -> DiffHtml {
    let entries: Vec<_> = compare_snapshots(
        old,
        new,
        &CompareOptions {
            include_unchanged: true,
            ..CompareOptions::default()
        },
    )
    .into_iter()
    .filter(|e| e.status != FileStatus::Unchanged || whole.contains(&e.path))
    .collect();
    let highlighter = Highlighter::default();
    let request = HighlightRequest {
        highlighter: &highlighter,
        theme: THEME,
        scope: HighlightScope::ShownLines,
    };
    let mut palette = Palette::default();
    let mut html = String::new();
    let mut anchors = BTreeMap::new();
    let mut changed = 0;
    for (index, entry) in entries.iter().enumerate() {
        let prefix = format!("{id}f{index}");
        anchors.insert(entry.path.clone(), prefix.clone());
        if entry.status != FileStatus::Unchanged {
            changed += 1;
        }
        let opts = DiffOptions {
            context: if whole.contains(&entry.path) {
                WHOLE
            } else {
                CONTEXT
            },
            ..DiffOptions::default()
        };
        let view = FileDiffView::build(entry, old, new, &opts, Some(&request))
            .or_else(|_| FileDiffView::build(entry, old, new, &opts, None));
        let _ = write!(
            html,
            "<section class=\"file\" id=\"{prefix}\" data-path=\"{}\"><h4><span class=\"status {}\">{}</span> {}",
            escape(&entry.path),
            entry.status_word(),
            entry.status_word(),
            escape(&entry.label())
        );
        match view {
            // The engine gives an unchanged file no rows: it is shown whole, as it is.
            Ok(view) if entry.status == FileStatus::Unchanged && !view.diff.binary => {
                html.push_str(" <span class=\"stats\">unchanged</span></h4>");
                let text = new.get(&entry.path).map(|b| String::from_utf8_lossy(b));
                unchanged_table(&mut html, text.as_deref().unwrap_or(""), &prefix);
            }
            Ok(view) if !view.diff.binary => {
                let _ = write!(
                    html,
                    " <span class=\"stats\">+{} −{}</span></h4>",
                    view.diff.stats.added, view.diff.stats.removed
                );
                file_table(&mut html, &view, &prefix, &mut palette);
            }
            _ => html.push_str(" <span class=\"stats\">binary</span></h4>"),
        }
        html.push_str("</section>\n");
    }
    if entries.is_empty() {
        html.push_str("<p class=\"empty\">The workspace is the same as the source.</p>\n");
    }
    DiffHtml {
        html,
        css: palette.css(scope),
        anchors,
        changed,
    }
}

/// A diff table's start: two halves of equal width, each a line-number column and a code
/// column, so that a long line wraps in its half instead of pushing the other side out of view.
const TABLE_OPEN: &str = "<div class=\"scroll\"><table class=\"diff\"><colgroup><col class=\"ln\">\
<col class=\"code\"><col class=\"ln\"><col class=\"code\"></colgroup>";

/// One file's rows as a table.
fn file_table(html: &mut String, view: &FileDiffView, prefix: &str, palette: &mut Palette) {
    html.push_str(TABLE_OPEN);
    let label = |side: usize, lineno: usize| -> String {
        view.cell_labels[side]
            .as_ref()
            .and_then(|labels| labels.get(lineno - 1).cloned())
            .unwrap_or_else(|| lineno.to_string())
    };
    for row in &view.diff.rows {
        let kind = match row.kind {
            RowKind::Equal => "eq",
            RowKind::Changed => "chg",
            RowKind::WhitespaceOnly => "ws",
            RowKind::Added => "add",
            RowKind::Removed => "del",
            RowKind::Fold { hidden } => {
                let _ = write!(
                    html,
                    "<tr class=\"fold\"><td colspan=\"4\">⋯ {hidden} unchanged lines</td></tr>"
                );
                continue;
            }
        };
        let id = match (&row.right, &row.left) {
            (Some(cell), _) => format!(" id=\"{prefix}-L{}\"", cell.lineno),
            (None, Some(cell)) => format!(" id=\"{prefix}-old-L{}\"", cell.lineno),
            (None, None) => String::new(),
        };
        let _ = write!(html, "<tr class=\"{kind}\"{id}>");
        for (side, cell, highlight) in [
            (0, &row.left, &view.old_highlight),
            (1, &row.right, &view.new_highlight),
        ] {
            match cell {
                Some(cell) => {
                    let _ = write!(
                        html,
                        "<td class=\"ln\">{}</td><td class=\"code\">{}</td>",
                        escape(&label(side, cell.lineno)),
                        code(
                            &cell.text,
                            highlight.as_deref(),
                            cell.lineno,
                            &cell.emphasis,
                            palette
                        )
                    );
                }
                None => html.push_str("<td class=\"ln\"></td><td class=\"code none\"></td>"),
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</table></div>");
}

/// An unchanged file's lines, the same on both sides, each with its anchor.
fn unchanged_table(html: &mut String, text: &str, prefix: &str) {
    html.push_str(TABLE_OPEN);
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = escape(line);
        let _ = write!(
            html,
            "<tr class=\"eq\" id=\"{prefix}-L{n}\"><td class=\"ln\">{n}</td><td class=\"code\">{line}</td>\
             <td class=\"ln\">{n}</td><td class=\"code\">{line}</td></tr>"
        );
    }
    html.push_str("</table></div>");
}

/// A line's text with its syntax colours (classes) and its changed words (`<mark>`).
fn code(
    text: &str,
    highlight: Option<&HighlightedFile>,
    lineno: usize,
    emphasis: &[std::ops::Range<usize>],
    palette: &mut Palette,
) -> String {
    let spans = highlight.map_or(&[][..], |h| h.line(lineno - 1));
    // Cut the line wherever a colour or an emphasis starts or ends.
    let mut cuts: Vec<usize> = vec![0, text.len()];
    for s in spans {
        cuts.extend([s.range.start, s.range.end]);
    }
    for e in emphasis {
        cuts.extend([e.start, e.end]);
    }
    cuts.retain(|&c| c <= text.len() && text.is_char_boundary(c));
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = String::new();
    for pair in cuts.windows(2) {
        let (start, end) = (pair[0], pair[1]);
        let piece = escape(&text[start..end]);
        let colour = spans
            .iter()
            .find(|s| s.range.start <= start && end <= s.range.end)
            .map(|s| {
                palette.class((
                    s.style.fg[0],
                    s.style.fg[1],
                    s.style.fg[2],
                    s.style.bold,
                    s.style.italic,
                ))
            });
        let marked = emphasis.iter().any(|e| e.start <= start && end <= e.end);
        let piece = match colour {
            Some(c) => format!("<span class=\"c{c}\">{piece}</span>"),
            None => piece,
        };
        if marked {
            let _ = write!(out, "<mark>{piece}</mark>");
        } else {
            out.push_str(&piece);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(files: &[(&str, &str)]) -> Snapshot {
        files
            .iter()
            .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn a_changed_file_has_anchored_lines_colours_and_marked_words() {
        let old = snap(&[
            ("train.py", "import torch\nx = 1\n"),
            ("same.py", "y = 2\n"),
        ]);
        let new = snap(&[("train.py", "import jax\nx = 1\n"), ("same.py", "y = 2\n")]);
        let diff = render(&old, &new, &BTreeSet::new(), ".diffs", "");
        assert_eq!(diff.changed, 1);
        assert_eq!(diff.anchors.len(), 1, "unchanged files are left out");
        let prefix = &diff.anchors["train.py"];
        assert!(
            diff.html
                .contains(&format!("id=\"{}\"", line_anchor(prefix, 1)))
        );
        assert!(diff.html.contains("<mark>"), "{}", diff.html);
        assert!(diff.css.contains(".diffs .c0{color:#"), "{}", diff.css);
        let again = render(&old, &new, &BTreeSet::new(), ".diffs", "");
        assert_eq!(diff.html, again.html);
    }

    #[test]
    fn a_file_with_a_finding_is_shown_whole_even_unchanged() {
        let body: String = (1..=40).map(|i| format!("v{i} = {i}\n")).collect();
        let changed = body.replace("v1 = 1", "v1 = 100");
        let old = snap(&[("a.py", &body), ("b.py", &body)]);
        let new = snap(&[("a.py", &changed), ("b.py", &body)]);
        let whole: BTreeSet<String> = ["a.py".to_string(), "b.py".to_string()].into();
        let diff = render(&old, &new, &whole, "", "x");
        let prefix = &diff.anchors["b.py"];
        assert!(diff.html.contains(&format!("id=\"{prefix}-L40\"")));
        assert!(
            diff.html
                .contains(&format!("id=\"{}-L40\"", diff.anchors["a.py"]))
        );
        assert!(!diff.html.contains("unchanged lines"));
    }
}

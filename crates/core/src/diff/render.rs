//! Drawing side-by-side rows: ratatui lines for the Diff pane, and text for `xstack diff`
//! (24-bit ANSI colours, or plain with `-`/`+`/`~` markers for pipes). Both share one
//! layout: per side a line-number gutter and the code, cut or padded to exactly half the
//! width, with a `│` between the sides.

use std::ops::Range;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::engine::{Cell, Row, RowKind};
use super::highlight::{HighlightedFile, StyledSpan};
use super::text::{cluster_end, display_width};
use super::view::FileDiffView;

/// Colours of the diff, as ratatui colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffPalette {
    /// Background of added and changed new lines.
    pub added_bg: Color,
    /// Background of removed and changed old lines.
    pub removed_bg: Color,
    /// Background of changed words on the new side.
    pub added_emph_bg: Color,
    /// Background of changed words on the old side.
    pub removed_emph_bg: Color,
    /// Line numbers and the separator.
    pub gutter: Color,
    /// Fold rows and notes.
    pub fold: Color,
    /// Background marking changed whitespace in whitespace-only rows.
    pub whitespace: Color,
}

impl Default for DiffPalette {
    /// Colours for a dark terminal.
    fn default() -> Self {
        Self {
            added_bg: Color::Rgb(0x00, 0x28, 0x00),
            removed_bg: Color::Rgb(0x3f, 0x00, 0x01),
            added_emph_bg: Color::Rgb(0x00, 0x60, 0x00),
            removed_emph_bg: Color::Rgb(0x90, 0x10, 0x11),
            gutter: Color::Rgb(0x6c, 0x6c, 0x6c),
            fold: Color::Rgb(0x80, 0x80, 0x80),
            whitespace: Color::Rgb(0x5f, 0x5f, 0x00),
        }
    }
}

/// Side-by-side lines of one file, each exactly `width` columns wide: notes first
/// (binary, line endings, deadline), then one line per row.
pub fn render_ratatui(
    file: &FileDiffView,
    width: u16,
    palette: &DiffPalette,
) -> Vec<Line<'static>> {
    let mut painter = Painter::new(Mode::Styled, usize::from(width), palette);
    let mut lines = Vec::with_capacity(file.diff.rows.len() + 1);
    for note in notes(file) {
        painter.note(&note);
        lines.push(painter.take_line());
    }
    lines.extend(render_rows(
        file,
        0..file.diff.rows.len(),
        width,
        0,
        None,
        palette,
    ));
    lines
}

/// Only the rows in `rows` (indices into `file.diff.rows`, clamped), without notes, laid
/// out exactly as [`render_ratatui`] lays them out: for drawing just the visible window.
/// Each side's code starts `skip` columns in (scrolled right; `‹` marks a cut start). The
/// new side's line `mark` (1-based), when given, has its number reversed and `▶` after it.
pub fn render_rows(
    file: &FileDiffView,
    rows: Range<usize>,
    width: u16,
    skip: usize,
    mark: Option<usize>,
    palette: &DiffPalette,
) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let all = &file.diff.rows;
    let rows = &all[rows.start.min(all.len())..rows.end.min(all.len())];
    let mut painter = Painter::new(Mode::Styled, width, palette);
    painter.skip = skip;
    painter.mark = mark;
    let layout = Layout::new(file, width, false);
    rows.iter()
        .map(|row| {
            painter.row(row, file, &layout);
            painter.take_line()
        })
        .collect()
}

/// The diff of several files as text: per file a header line (status, `old → new` for
/// pairs, counts and notes), then its side-by-side rows `width` columns wide. With
/// `color`, 24-bit ANSI colours (syntax over diff backgrounds); without, plain text
/// with `-` (removed), `+` (added) and `~` (changed) after the line numbers.
pub fn render_text(entries: &[FileDiffView], width: usize, color: bool) -> String {
    let palette = DiffPalette::default();
    let mode = if color { Mode::Styled } else { Mode::Plain };
    let mut painter = Painter::new(mode, width, &palette);
    let mut out = String::new();
    for (i, file) in entries.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let header = header(file);
        if color {
            out.push_str(&format!("\x1b[1m{header}\x1b[0m\n"));
        } else {
            out.push_str(&header);
            out.push('\n');
        }
        if file.diff.binary {
            continue;
        }
        let layout = Layout::new(file, width, !color);
        for row in &file.diff.rows {
            painter.row(row, file, &layout);
            let runs = painter.take_runs();
            if color {
                push_ansi(&mut out, &runs);
            } else {
                let line: String = runs.iter().map(|(t, _)| t.as_str()).collect();
                out.push_str(line.trim_end());
            }
            out.push('\n');
        }
    }
    out
}

fn header(file: &FileDiffView) -> String {
    let entry = &file.entry;
    let mut text = format!("{} {}", entry.status_word(), entry.label());
    if !file.diff.binary && file.diff.has_changes() {
        text.push_str(&format!(
            "  +{} -{}",
            file.diff.stats.added, file.diff.stats.removed
        ));
    }
    let notes = notes(file);
    if !notes.is_empty() {
        text.push_str(&format!("  [{}]", notes.join("; ")));
    }
    text
}

fn notes(file: &FileDiffView) -> Vec<String> {
    let d = &file.diff;
    let mut notes = Vec::new();
    if d.binary {
        notes.push("binary file, not shown".to_owned());
    }
    if d.crlf_only {
        notes.push("only line endings differ (CRLF/LF)".to_owned());
    } else if d.line_endings_changed {
        notes.push("line endings changed (CRLF/LF)".to_owned());
    }
    if d.final_newline_changed {
        notes.push("newline at end of file added or removed".to_owned());
    }
    if d.timed_out {
        notes.push("diff deadline reached: a coarser diff is shown".to_owned());
    }
    notes
}

/// Writes styled runs as text with SGR sequences, ending with a reset.
fn push_ansi(out: &mut String, runs: &[(String, Style)]) {
    let mut current: Option<Style> = None;
    for (text, style) in runs {
        if current != Some(*style) {
            out.push_str(&sgr(*style));
            current = Some(*style);
        }
        out.push_str(text);
    }
    out.push_str("\x1b[0m");
}

fn sgr(style: Style) -> String {
    let mut s = String::from("\x1b[0");
    for (flag, code) in [
        (Modifier::BOLD, ";1"),
        (Modifier::DIM, ";2"),
        (Modifier::ITALIC, ";3"),
        (Modifier::UNDERLINED, ";4"),
    ] {
        if style.add_modifier.contains(flag) {
            s.push_str(code);
        }
    }
    if let Some(fg) = style.fg {
        push_sgr_color(&mut s, fg, 38);
    }
    if let Some(bg) = style.bg {
        push_sgr_color(&mut s, bg, 48);
    }
    s.push('m');
    s
}

fn push_sgr_color(s: &mut String, color: Color, base: u8) {
    let indexed = |i: u8| format!(";{base};5;{i}");
    let part = match color {
        Color::Reset => format!(";{}", base + 1),
        Color::Rgb(r, g, b) => format!(";{base};2;{r};{g};{b}"),
        Color::Indexed(i) => indexed(i),
        Color::Black => indexed(0),
        Color::Red => indexed(1),
        Color::Green => indexed(2),
        Color::Yellow => indexed(3),
        Color::Blue => indexed(4),
        Color::Magenta => indexed(5),
        Color::Cyan => indexed(6),
        Color::Gray => indexed(7),
        Color::DarkGray => indexed(8),
        Color::LightRed => indexed(9),
        Color::LightGreen => indexed(10),
        Color::LightYellow => indexed(11),
        Color::LightBlue => indexed(12),
        Color::LightMagenta => indexed(13),
        Color::LightCyan => indexed(14),
        Color::White => indexed(15),
    };
    s.push_str(&part);
}

/// Styled output (ratatui or ANSI) or plain text with markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Styled,
    Plain,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// Column budget of one file's rows.
struct Layout<'f> {
    /// Columns of the widest gutter number.
    num_width: usize,
    /// Per side, the gutter's text per line of a notebook shown as cells (old side first).
    labels: [Option<&'f [String]>; 2],
    /// Columns of the left half (the right half takes the rest after the separator).
    left: usize,
    /// Plain mode: a marker column after the line number.
    markers: bool,
}

impl<'f> Layout<'f> {
    fn new(file: &'f FileDiffView, width: usize, markers: bool) -> Self {
        let mut layout = Self {
            num_width: 1,
            labels: [
                file.cell_labels[0].as_deref(),
                file.cell_labels[1].as_deref(),
            ],
            left: width.saturating_sub(1) / 2,
            markers,
        };
        layout.num_width = file
            .diff
            .rows
            .iter()
            .flat_map(|r| [(Side::Left, &r.left), (Side::Right, &r.right)])
            .filter_map(|(side, c)| c.as_ref().map(|c| layout.number(side, c.lineno).len()))
            .max()
            .unwrap_or(1);
        layout
    }

    /// What the gutter shows for line `lineno` of `side`: its number, or for a notebook
    /// the cell's number on the cell's header line.
    fn number(&self, side: Side, lineno: usize) -> String {
        let labels = match side {
            Side::Left => self.labels[0],
            Side::Right => self.labels[1],
        };
        match labels {
            Some(labels) => labels.get(lineno - 1).cloned().unwrap_or_default(),
            None => lineno.to_string(),
        }
    }
}

/// Builds one line as styled runs, never wider than its width.
struct Painter<'p> {
    mode: Mode,
    width: usize,
    palette: &'p DiffPalette,
    runs: Vec<(String, Style)>,
    used: usize,
    /// Columns of each side's code scrolled out to the left.
    skip: usize,
    /// The new side's marked line (1-based).
    mark: Option<usize>,
}

impl<'p> Painter<'p> {
    fn new(mode: Mode, width: usize, palette: &'p DiffPalette) -> Self {
        Self {
            mode,
            width,
            palette,
            runs: Vec::new(),
            used: 0,
            skip: 0,
            mark: None,
        }
    }

    fn take_runs(&mut self) -> Vec<(String, Style)> {
        self.used = 0;
        std::mem::take(&mut self.runs)
    }

    fn take_line(&mut self) -> Line<'static> {
        Line::from(
            self.take_runs()
                .into_iter()
                .map(|(text, style)| Span::styled(text, style))
                .collect::<Vec<_>>(),
        )
    }

    fn style(&self, style: Style) -> Style {
        match self.mode {
            Mode::Styled => style,
            Mode::Plain => Style::default(),
        }
    }

    /// Appends `text` if it fits before column `limit`; returns false when it does not.
    fn push(&mut self, text: &str, columns: usize, style: Style, limit: usize) -> bool {
        if self.used + columns > limit {
            return false;
        }
        let style = self.style(style);
        match self.runs.last_mut() {
            Some((last, s)) if *s == style => last.push_str(text),
            _ => self.runs.push((text.to_owned(), style)),
        }
        self.used += columns;
        true
    }

    /// Appends as much of `text` as fits before `limit`, cluster by cluster.
    fn push_clipped(&mut self, text: &str, style: Style, limit: usize) {
        let mut at = 0;
        while at < text.len() {
            let end = cluster_end(text, at);
            let cluster = &text[at..end];
            if !self.push(cluster, display_width(cluster), style, limit) {
                break;
            }
            at = end;
        }
    }

    fn pad_to(&mut self, limit: usize, style: Style) {
        let n = limit.saturating_sub(self.used);
        if n > 0 {
            self.push(&" ".repeat(n), n, style, limit);
        }
    }

    fn note(&mut self, text: &str) {
        let style = Style::default()
            .fg(self.palette.fold)
            .add_modifier(Modifier::DIM);
        self.push_clipped(text, style, self.width);
        self.pad_to(self.width, Style::default());
    }

    fn row(&mut self, row: &Row, file: &FileDiffView, layout: &Layout) {
        if let RowKind::Fold { hidden } = row.kind {
            self.fold(hidden);
            return;
        }
        let left_end = layout.left;
        self.half(
            row,
            Side::Left,
            file.old_highlight.as_deref(),
            layout,
            left_end,
        );
        let separator = Style::default().fg(self.palette.gutter);
        self.push("│", 1, separator, self.width);
        self.half(
            row,
            Side::Right,
            file.new_highlight.as_deref(),
            layout,
            self.width,
        );
    }

    fn fold(&mut self, hidden: usize) {
        let plural = if hidden == 1 { "" } else { "s" };
        let text = format!("⋯ {hidden} unchanged line{plural} ⋯");
        let lead = self.width.saturating_sub(display_width(&text)) / 2;
        self.pad_to(lead, Style::default());
        let style = Style::default()
            .fg(self.palette.fold)
            .add_modifier(Modifier::DIM);
        self.push_clipped(&text, style, self.width);
        self.pad_to(self.width, Style::default());
    }

    /// One side: gutter, then code up to `end`, cut with `…` or padded.
    fn half(
        &mut self,
        row: &Row,
        side: Side,
        highlight: Option<&HighlightedFile>,
        layout: &Layout,
        end: usize,
    ) {
        let cell = match side {
            Side::Left => row.left.as_ref(),
            Side::Right => row.right.as_ref(),
        };
        let (bg, emph_bg) = self.backgrounds(row.kind, side);
        let marked =
            side == Side::Right && self.mark.is_some() && cell.map(|c| c.lineno) == self.mark;
        let mut gutter_style = Style::default().fg(self.palette.gutter);
        if marked {
            gutter_style = gutter_style.add_modifier(Modifier::REVERSED | Modifier::BOLD);
        }
        let number = cell.map_or_else(String::new, |c| layout.number(side, c.lineno));
        let mut gutter = format!("{number:>w$}", w = layout.num_width);
        if layout.markers {
            gutter.push(if cell.is_some() {
                marker(row.kind, side)
            } else {
                ' '
            });
        }
        gutter.push(if marked { '▶' } else { ' ' });
        self.push_clipped(&gutter, gutter_style, end);
        let fill = Style::default().bg_opt(if cell.is_some() { bg } else { None });
        if let Some(cell) = cell {
            let spans = highlight.map_or(&[][..], |h| h.line(cell.lineno - 1));
            self.code(cell, spans, bg, emph_bg, row.kind, end);
        }
        self.pad_to(end, fill);
    }

    fn backgrounds(&self, kind: RowKind, side: Side) -> (Option<Color>, Option<Color>) {
        let p = self.palette;
        match (kind, side) {
            (RowKind::Changed, Side::Left) => (Some(p.removed_bg), Some(p.removed_emph_bg)),
            (RowKind::Changed, Side::Right) => (Some(p.added_bg), Some(p.added_emph_bg)),
            (RowKind::Removed, Side::Left) => (Some(p.removed_bg), None),
            (RowKind::Added, Side::Right) => (Some(p.added_bg), None),
            (RowKind::WhitespaceOnly, _) => (None, Some(p.whitespace)),
            _ => (None, None),
        }
    }

    /// The code of a cell: syntax foreground over the row background, emphasis on top.
    fn code(
        &mut self,
        cell: &Cell,
        spans: &[StyledSpan],
        bg: Option<Color>,
        emph_bg: Option<Color>,
        kind: RowKind,
        end: usize,
    ) {
        let text = cell.text.as_str();
        let room = end.saturating_sub(self.used);
        let scrolled = self.skip > 0 && display_width(text) > 0;
        if scrolled {
            let cut = Style::default().fg(self.palette.gutter).bg_opt(bg);
            self.push("‹", 1, cut, end);
        }
        let overflow = display_width(text).saturating_sub(self.skip) + usize::from(scrolled) > room;
        let mut skipped = 0;
        // Leave one column for the cut marker when the text does not fit.
        let limit = if overflow { end.saturating_sub(1) } else { end };
        let visible_ws = kind == RowKind::WhitespaceOnly && self.mode == Mode::Plain;
        let (mut si, mut ei) = (0, 0);
        let mut at = 0;
        while at < text.len() {
            let next = cluster_end(text, at);
            while si < spans.len() && spans[si].range.end <= at {
                si += 1;
            }
            while ei < cell.emphasis.len() && cell.emphasis[ei].end <= at {
                ei += 1;
            }
            let emphasised = cell.emphasis.get(ei).is_some_and(|r| r.start <= at);
            let mut style = Style::default().bg_opt(if emphasised { emph_bg.or(bg) } else { bg });
            if let Some(span) = spans.get(si).filter(|s| s.range.start <= at) {
                let [r, g, b] = span.style.fg;
                style = style.fg(Color::Rgb(r, g, b));
                for (on, m) in [
                    (span.style.bold, Modifier::BOLD),
                    (span.style.italic, Modifier::ITALIC),
                    (span.style.underline, Modifier::UNDERLINED),
                ] {
                    if on {
                        style = style.add_modifier(m);
                    }
                }
            }
            let cluster = &text[at..next];
            if skipped < self.skip {
                skipped += display_width(cluster);
                at = next;
                continue;
            }
            let shown = if visible_ws && emphasised && cluster == " " {
                "·"
            } else {
                cluster
            };
            if !self.push(shown, display_width(cluster), style, limit) {
                break;
            }
            at = next;
        }
        if overflow {
            self.pad_to(limit, Style::default().bg_opt(bg));
            let cut = Style::default().fg(self.palette.gutter).bg_opt(bg);
            self.push("…", 1, cut, end);
        }
    }
}

fn marker(kind: RowKind, side: Side) -> char {
    match (kind, side) {
        (RowKind::Removed, Side::Left) => '-',
        (RowKind::Added, Side::Right) => '+',
        (RowKind::Changed | RowKind::WhitespaceOnly, _) => '~',
        _ => ' ',
    }
}

/// `Style::bg` for an optional colour.
trait BgOpt {
    fn bg_opt(self, bg: Option<Color>) -> Self;
}

impl BgOpt for Style {
    fn bg_opt(self, bg: Option<Color>) -> Self {
        match bg {
            Some(c) => self.bg(c),
            None => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::engine::DiffOptions;
    use crate::diff::highlight::{DEFAULT_THEME, Highlighter};
    use crate::diff::pairing::{CompareOptions, Snapshot, compare_snapshots};
    use crate::diff::view::{HighlightRequest, HighlightScope, build_views};

    const TORCH_TRAIN: &str = "\
import torch
import torch.nn as nn
from data import load_split
from model import MLP


def train(epochs=20, lr=1e-3, seed=0):
    torch.manual_seed(seed)
    x_train, x_test, y_train, y_test = load_split(seed)
    model = MLP(64, 128, 10)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        opt.zero_grad()
        loss = loss_fn(model(x_train), y_train)
        loss.backward()
        opt.step()
        print(f\"epoch={epoch} loss={loss.item():.4f}\")
    acc = (model(x_test).argmax(-1) == y_test).float().mean()
    print(f\"test_acc={acc:.4f}\")
";

    const JAX_TRAIN: &str = "\
import jax
import jax.numpy as jnp
import optax
from data import load_split
from model import MLP


def train(epochs=20, lr=1e-3, seed=0):
    key = jax.random.PRNGKey(seed)
    x_train, x_test, y_train, y_test = load_split(seed)
    model = MLP(128, 10)
    params = model.init(key, jnp.zeros((1, 64)))
    opt = optax.adam(lr)
    state = opt.init(params)
    for epoch in range(epochs):
        loss, grads = jax.value_and_grad(loss_fn)(params, x_train, y_train)
        updates, state = opt.update(grads, state)
        params = optax.apply_updates(params, updates)
        print(f\"epoch={epoch} loss={loss:.4f}\")
    acc = (model.apply(params, x_test).argmax(-1) == y_test).mean()
    print(f\"test_acc={acc:.4f}\")
";

    const TORCH_MODEL: &str = "\
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, in_features, hidden, num_classes):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = nn.functional.relu(self.fc1(x))
        return self.fc2(x)
";

    const FLAX_MODEL: &str = "\
import flax.linen as nn


class MLP(nn.Module):
    hidden: int
    num_classes: int

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x))
        return nn.Dense(self.num_classes)(x)
";

    fn snap(files: &[(&str, &[u8])]) -> Snapshot {
        files
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_vec()))
            .collect()
    }

    fn views(old: &Snapshot, new: &Snapshot, highlight: bool) -> Vec<FileDiffView> {
        let entries = compare_snapshots(old, new, &CompareOptions::default());
        let h = Highlighter::default();
        let req = HighlightRequest {
            highlighter: &h,
            theme: DEFAULT_THEME,
            scope: HighlightScope::WholeFile,
        };
        build_views(
            &entries,
            old,
            new,
            &DiffOptions::default(),
            highlight.then_some(&req),
        )
        .unwrap()
    }

    fn port() -> (Snapshot, Snapshot) {
        let old = snap(&[
            ("model.py", TORCH_MODEL.as_bytes()),
            ("train.py", TORCH_TRAIN.as_bytes()),
            ("weights.bin", b"\x00\x01\x02"),
            ("README.md", b"# digits\n"),
        ]);
        let new = snap(&[
            ("model_flax.py", FLAX_MODEL.as_bytes()),
            ("train.py", JAX_TRAIN.as_bytes()),
            ("weights.bin", b"\x00\x01\x03"),
            ("README.md", b"# digits\n"),
        ]);
        (old, new)
    }

    /// Snapshot files are named without the crate and module path, so they stay valid
    /// wherever this module lives.
    fn snapshot(name: &str, value: &str) {
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!(name, value));
    }

    /// The text of rendered lines, trailing blanks trimmed.
    fn plain_lines(lines: &[Line<'_>]) -> String {
        lines
            .iter()
            .map(|l| {
                let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
                text.trim_end().to_owned()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn plain_text_of_a_small_port() {
        let (old, new) = port();
        let text = render_text(&views(&old, &new, false), 110, false);
        assert!(!text.contains('\x1b'));
        snapshot("render_plain_text_port", &text);
    }

    #[test]
    fn colour_text_uses_24_bit_syntax_over_diff_backgrounds() {
        let (old, new) = port();
        let text = render_text(&views(&old, &new, true), 110, true);
        let palette = DiffPalette::default();
        let Color::Rgb(r, g, b) = palette.removed_emph_bg else {
            unreachable!("the default palette is RGB")
        };
        assert!(
            text.contains(&format!("48;2;{r};{g};{b}")),
            "emphasis background"
        );
        assert!(text.contains(";38;2;"), "syntax foreground");
        assert!(
            text.lines()
                .skip(1)
                .all(|l| l.is_empty() || l.ends_with("\x1b[0m"))
        );
    }

    #[test]
    fn binary_files_are_named_but_not_shown() {
        let (old, new) = port();
        let text = render_text(&views(&old, &new, false), 110, false);
        assert!(
            text.ends_with("\nmodified weights.bin  [binary file, not shown]\n"),
            "{text}"
        );
        let weights = views(&old, &new, false)
            .into_iter()
            .find(|v| v.entry.path == "weights.bin")
            .unwrap();
        let lines = render_ratatui(&weights, 40, &DiffPalette::default());
        assert_eq!(plain_lines(&lines).trim_end(), "binary file, not shown");
    }

    #[test]
    fn ratatui_rows_of_a_paired_file() {
        let (old, new) = port();
        let all = views(&old, &new, true);
        let pair = all
            .iter()
            .find(|v| v.entry.path == "model_flax.py")
            .unwrap();
        let lines = render_ratatui(pair, 90, &DiffPalette::default());
        assert!(lines.iter().all(|l| l.width() == 90));
        snapshot("render_ratatui_paired_model", &plain_lines(&lines));
    }

    #[test]
    fn a_window_of_rows_renders_like_the_same_rows_of_the_whole() {
        let (old, new) = port();
        let all = views(&old, &new, true);
        let train = all.iter().find(|v| v.entry.path == "train.py").unwrap();
        let palette = DiffPalette::default();
        let whole = render_ratatui(train, 70, &palette);
        assert_eq!(
            render_rows(train, 5..9, 70, 0, None, &palette),
            whole[5..9].to_vec()
        );
        assert_eq!(
            render_rows(train, 20..usize::MAX, 70, 0, None, &palette),
            whole[20..].to_vec()
        );
    }

    #[test]
    fn a_diff_scrolled_sideways_shows_the_rest_of_long_lines() {
        let long = "x = some_function_with_a_long_name(argument_one, argument_two, argument_three)";
        let old = snap(&[("a.py", format!("{long}\n").as_bytes())]);
        let new = snap(&[(
            "a.py",
            format!("{}\n", long.replace("some", "any")).as_bytes(),
        )]);
        let v = views(&old, &new, true);
        let palette = DiffPalette::default();
        let row = |skip| plain_lines(&render_rows(&v[0], 0..1, 60, skip, None, &palette));
        let start = row(0);
        assert!(
            start.contains("x = some_function") && start.contains('…'),
            "{start}"
        );
        assert!(!start.contains("argument_three"), "{start}");
        // Scrolled 56 columns: each side starts with `‹` and shows the end of its line.
        let end = row(56);
        let sides: Vec<&str> = end.split('│').collect();
        assert_eq!(sides.len(), 2, "{end}");
        assert!(
            sides[0].contains("‹") && sides[0].contains("argument_three)"),
            "{end}"
        );
        assert!(
            sides[1].contains("‹") && sides[1].contains("argument_three)"),
            "{end}"
        );
        assert!(
            render_rows(&v[0], 0..1, 60, 56, None, &palette)
                .iter()
                .all(|l| l.width() == 60)
        );
    }

    #[test]
    fn changed_words_get_the_emphasis_background() {
        let old = snap(&[("a.py", b"x = torch.zeros(3)\n")]);
        let new = snap(&[("a.py", b"x = jnp.zeros(3)\n")]);
        let v = views(&old, &new, true);
        let palette = DiffPalette::default();
        let lines = render_ratatui(&v[0], 60, &palette);
        // The last span holding the text: the right side's when both sides have it.
        let span_bg = |text: &str| {
            lines[0]
                .spans
                .iter()
                .rfind(|s| s.content.contains(text))
                .and_then(|s| s.style.bg)
        };
        assert_eq!(span_bg("torch"), Some(palette.removed_emph_bg));
        assert_eq!(span_bg("jnp"), Some(palette.added_emph_bg));
        assert_eq!(
            span_bg("zeros"),
            Some(palette.added_bg),
            "unchanged word: line background"
        );
    }

    #[test]
    fn wide_characters_keep_every_line_at_the_requested_width() {
        let old = snap(&[(
            "notes.txt",
            "名前 = 'テスト'\nemoji 🦀 ok\ncafé\n".as_bytes(),
        )]);
        let new = snap(&[(
            "notes.txt",
            "名前 = '試験データ'\nemoji 🦀🦀 ok ❤\u{fe0f} 👨\u{200d}👩\ncafe\u{301}\n".as_bytes(),
        )]);
        let v = views(&old, &new, true);
        for width in [0u16, 1, 7, 12, 13, 31, 40, 81] {
            for line in render_ratatui(&v[0], width, &DiffPalette::default()) {
                assert_eq!(line.width(), usize::from(width), "width {width}: {line:?}");
            }
        }
        let text = render_text(&v, 41, false);
        let rows: Vec<&str> = text.lines().skip(1).collect();
        let bar = |l: &str| display_width(&l[..l.find('│').unwrap()]);
        assert!(rows.iter().all(|l| bar(l) == 20), "{text}");
    }

    #[test]
    fn a_100k_character_line_is_cut_not_highlighted_and_does_not_panic() {
        let long = format!("data = \"{}\"\nx = 1\n", "ab".repeat(50_000));
        let old = snap(&[("big.py", long.as_bytes())]);
        let new = snap(&[("big.py", long.replace("x = 1", "x = 2").as_bytes())]);
        let v = views(&old, &new, true);
        assert!(v[0].new_highlight.as_ref().unwrap().line(0).is_empty());
        let lines = render_ratatui(&v[0], 60, &DiffPalette::default());
        assert!(lines.iter().all(|l| l.width() == 60));
        let first = plain_lines(&lines[..1]);
        assert!(first.contains('…'), "{first}");
    }

    #[test]
    fn fold_rows_say_how_many_lines_are_hidden() {
        let body: String = (1..=40).map(|i| format!("v{i} = {i}\n")).collect();
        let old = snap(&[("a.py", body.as_bytes())]);
        let new = snap(&[("a.py", body.replace("v20 = 20", "v20 = 21").as_bytes())]);
        let v = views(&old, &new, false);
        let text = plain_lines(&render_ratatui(&v[0], 50, &DiffPalette::default()));
        assert!(text.contains("⋯ 16 unchanged lines ⋯"), "{text}");
        assert!(text.contains("⋯ 17 unchanged lines ⋯"), "{text}");
    }

    #[test]
    fn whitespace_only_changes_are_visible_in_plain_text() {
        let old = snap(&[("a.py", b"def f():\n    return 1\n")]);
        let new = snap(&[("a.py", b"def f():\n    return 1   \n")]);
        let text = render_text(&views(&old, &new, false), 60, false);
        assert!(text.contains("2~     return 1···"), "{text}");
    }
}

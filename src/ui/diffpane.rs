//! The Diff pane: the workspace against the source (or against the agent's previous version
//! of each file), a file list with status and pairings, and the selected file's highlighted
//! side-by-side rows. Diffing and highlighting run on a blocking thread; the pane draws the
//! latest finished result.

use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use tokio::sync::mpsc;

use crate::diff::{
    CompareOptions, DiffOptions, DiffPalette, FileDiffView, FileEntry, FileStatus,
    HighlightRequest, HighlightScope, Highlighter, Snapshot, compare_snapshots, render_rows,
};
use crate::session::state::SessionState;

use super::app::App;
use super::theme::Theme;

/// Identifies the inputs of a built view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ViewKey {
    files_version: u64,
    against_previous: bool,
    index: usize,
}

/// A finished background build.
pub struct Built {
    key: ViewKey,
    view: FileDiffView,
}

/// The Diff pane's model.
pub struct DiffPane {
    syntax_theme: String,
    highlighter: Arc<Highlighter>,
    key: Option<(u64, bool)>,
    old: Arc<Snapshot>,
    new: Arc<Snapshot>,
    entries: Vec<FileEntry>,
    view: Option<(ViewKey, Arc<FileDiffView>)>,
    pending: Option<ViewKey>,
    results: mpsc::UnboundedSender<Built>,
}

impl DiffPane {
    /// An empty pane; finished builds arrive on the returned receiver, to be handed back to
    /// [`DiffPane::accept`].
    pub fn new(syntax_theme: String) -> (DiffPane, mpsc::UnboundedReceiver<Built>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            DiffPane {
                syntax_theme,
                highlighter: Arc::new(Highlighter::default()),
                key: None,
                old: Arc::new(Snapshot::new()),
                new: Arc::new(Snapshot::new()),
                entries: Vec::new(),
                view: None,
                pending: None,
                results: tx,
            },
            rx,
        )
    }

    /// The files with changes.
    pub fn entries(&self) -> &[FileEntry] {
        &self.entries
    }

    /// Takes a finished build.
    pub fn accept(&mut self, built: Built) {
        if self.pending == Some(built.key) {
            self.pending = None;
        }
        self.view = Some((built.key, Arc::new(built.view)));
    }

    /// Brings the file list up to date with the state and starts building the selected
    /// file's view when its inputs changed. Cheap when nothing changed.
    pub fn update(&mut self, state: &SessionState, app: &mut App) {
        let key = (state.files_version, app.diff_against_previous);
        if self.key != Some(key) {
            self.key = Some(key);
            let new: Snapshot = state
                .files
                .iter()
                .filter_map(|(p, f)| f.text.as_ref().map(|t| (p.clone(), t.clone().into_bytes())))
                .collect();
            let old: Snapshot = if app.diff_against_previous {
                let mut old = new.clone();
                for (path, before) in &state.previous {
                    match before.as_ref().and_then(|f| f.text.as_ref()) {
                        Some(text) => old.insert(path.clone(), text.clone().into_bytes()),
                        None => old.remove(path),
                    };
                }
                old
            } else {
                state
                    .baseline
                    .iter()
                    .filter_map(|(p, f)| {
                        f.text.as_ref().map(|t| (p.clone(), t.clone().into_bytes()))
                    })
                    .collect()
            };
            self.entries = compare_snapshots(&old, &new, &CompareOptions::default());
            self.old = Arc::new(old);
            self.new = Arc::new(new);
        }
        if self.entries.is_empty() {
            return;
        }
        if let Some(path) = app.diff_goto.take()
            && let Some(i) = self
                .entries
                .iter()
                .position(|e| e.path == path || e.old_path() == Some(path.as_str()))
        {
            app.diff_file = i;
            app.scroll[1] = 0;
        }
        app.diff_file = app.diff_file.min(self.entries.len() - 1);
        let want = ViewKey {
            files_version: state.files_version,
            against_previous: app.diff_against_previous,
            index: app.diff_file,
        };
        let have = self.view.as_ref().map(|(k, _)| *k);
        if have == Some(want) || self.pending == Some(want) {
            return;
        }
        self.pending = Some(want);
        let entry = self.entries[app.diff_file].clone();
        let (old, new) = (self.old.clone(), self.new.clone());
        let highlighter = self.highlighter.clone();
        let theme = self.syntax_theme.clone();
        let tx = self.results.clone();
        let build = move || {
            let request = HighlightRequest {
                highlighter: &highlighter,
                theme: &theme,
                scope: HighlightScope::WholeFile,
            };
            let opts = DiffOptions::default();
            let view = FileDiffView::build(&entry, &old, &new, &opts, Some(&request))
                .or_else(|_| FileDiffView::build(&entry, &old, &new, &opts, None));
            if let Ok(view) = view {
                let _ = tx.send(Built { key: want, view });
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(build);
            }
            Err(_) => build(),
        }
    }

    /// A note for the pane title: the selected file and the diff base.
    pub fn title_note(&self, app: &App) -> Option<String> {
        let entry = self.entries.get(app.diff_file)?;
        Some(format!(
            "{} ({}/{}) {} ",
            entry.label(),
            app.diff_file + 1,
            self.entries.len(),
            if app.diff_against_previous {
                "vs previous"
            } else {
                "vs source"
            }
        ))
    }

    /// Draws the pane.
    pub fn draw(
        &self,
        frame: &mut Frame<'_>,
        rect: Rect,
        block: Block<'_>,
        app: &App,
        theme: &Theme,
    ) {
        let c = &theme.colors;
        let inner = block.inner(rect);
        frame.render_widget(block, rect);
        if self.entries.is_empty() {
            frame.render_widget(
                Paragraph::new(Span::styled("no changes yet", Style::default().fg(c.dim))),
                inner,
            );
            return;
        }
        let list_width = if inner.width >= 70 {
            (inner.width / 5).clamp(16, 30)
        } else {
            0
        };
        let cols = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([Constraint::Length(list_width), Constraint::Min(10)])
            .split(inner);
        if list_width > 0 {
            let items: Vec<Line> = self
                .entries
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let (mark, color) = match e.status {
                        FileStatus::Added => ("A", c.added),
                        FileStatus::Deleted => ("D", c.removed),
                        FileStatus::Paired { .. } => ("P", c.emphasis),
                        FileStatus::Modified => ("M", c.waiting),
                        FileStatus::Unchanged => (" ", c.dim),
                    };
                    let mut style = Style::default().fg(c.text);
                    if i == app.diff_file {
                        style = style.add_modifier(Modifier::REVERSED);
                    }
                    Line::from(vec![
                        Span::styled(format!("{mark} "), Style::default().fg(color)),
                        Span::styled(e.label(), style),
                    ])
                })
                .collect();
            frame.render_widget(Paragraph::new(items), cols[0]);
        }
        let area = cols[1];
        let Some((key, view)) = &self.view else {
            frame.render_widget(
                Paragraph::new(Span::styled("diffing…", Style::default().fg(c.dim))),
                area,
            );
            return;
        };
        let stale = key.index != app.diff_file;
        let palette = DiffPalette {
            added_bg: c.added_bg,
            removed_bg: c.removed_bg,
            added_emph_bg: c.added_emphasis,
            removed_emph_bg: c.removed_emphasis,
            gutter: c.dim,
            fold: c.dim,
            whitespace: c.emphasis,
        };
        let header = Line::from(vec![
            Span::styled(
                format!("{} ", view.entry.status_word()),
                Style::default().fg(c.waiting),
            ),
            Span::styled(
                view.entry.label(),
                Style::default().fg(c.title).add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!(
                    "  +{} −{}{}",
                    view.diff.stats.added,
                    view.diff.stats.removed,
                    if stale { "  (updating…)" } else { "" }
                ),
                Style::default().fg(c.dim),
            ),
        ]);
        let height = usize::from(area.height.saturating_sub(1));
        let total = view.diff.rows.len();
        let top = app.scroll[1].min(total.saturating_sub(height));
        let mut lines = vec![header];
        if view.diff.binary {
            lines.push(Line::from(Span::styled(
                "binary file: not shown",
                Style::default().fg(c.dim),
            )));
        }
        lines.extend(render_rows(view, top..top + height, area.width, &palette));
        frame.render_widget(Paragraph::new(lines), area);
    }
}

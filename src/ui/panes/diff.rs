//! The Diff pane: the workspace against the source (or against the agent's previous version
//! of each file), a file list with status and pairings, and the selected file's highlighted
//! side-by-side rows. The state's files are copied when they change; building the snapshots,
//! comparing them, diffing and highlighting run on a blocking thread, and the pane draws the
//! latest finished result. A line asked for from the Verdict pane ([`App::diff_mark`]) is
//! shown in its file's whole view (nothing folded), scrolled into view once and marked.

use std::collections::BTreeMap;
use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use tokio::sync::mpsc;

use crate::diff::{
    CompareOptions, DiffOptions, DiffPalette, FileDiffView, FileEntry, FileStatus,
    HighlightRequest, HighlightScope, Highlighter, Snapshot, compare_snapshots, render_rows,
};
use crate::event::FileContent;
use crate::session::state::SessionState;
use crate::task::Migration;

use super::super::app::{App, DiffMark, PaneId};
use super::super::keymap::KeyAction;
use super::super::text::keep_end;
use super::super::theme::Colors;
use super::{Pane, PaneContext, PaneKey, Summary};

/// Identifies the inputs of a built view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ViewKey {
    files: FilesKey,
    index: usize,
    /// The whole file, unchanged runs unfolded (the file holds the marked line).
    whole: bool,
}

/// Identifies the inputs of a file list: the state's files version and the diff base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FilesKey {
    files_version: u64,
    against_previous: bool,
}

/// The two snapshots compared and the files with changes between them.
struct Compared {
    old: Arc<Snapshot>,
    new: Arc<Snapshot>,
    entries: Vec<FileEntry>,
}

/// A finished background build: a new file list (when the files changed) and the selected
/// file's view.
pub struct Built {
    files: FilesKey,
    compared: Option<Compared>,
    view: Option<(ViewKey, FileDiffView)>,
}

/// The files of the session state that a comparison needs, copied while its lock is held.
struct FilesCopy {
    baseline: BTreeMap<String, FileContent>,
    files: BTreeMap<String, FileContent>,
    previous: BTreeMap<String, Option<FileContent>>,
}

/// What the Diff pane reads of the session state ([`DiffPane::read`]).
pub struct DiffInputs {
    files: FilesKey,
    /// The files, copied when they or the diff base changed since the newest file list
    /// asked for.
    copy: Option<FilesCopy>,
}

/// The Diff pane's model.
pub struct DiffPane {
    syntax_theme: String,
    highlighter: Arc<Highlighter>,
    /// The inputs of the newest file list asked for.
    wanted: Option<FilesKey>,
    /// The inputs of the file list held.
    held: Option<FilesKey>,
    old: Arc<Snapshot>,
    new: Arc<Snapshot>,
    entries: Vec<FileEntry>,
    view: Option<(ViewKey, Arc<FileDiffView>)>,
    pending: Option<ViewKey>,
    results: mpsc::UnboundedSender<Built>,
}

impl DiffPane {
    /// The file list's width: only where there is a choice, as wide as its longest name
    /// needs, at most a fifth of the pane; 0 for no list.
    fn list_width(&self, inner_width: u16) -> u16 {
        let longest = self
            .entries
            .iter()
            .map(|e| e.label().chars().count() + 3)
            .max()
            .unwrap_or(0) as u16;
        if self.entries.len() > 1 && inner_width >= 70 {
            longest.clamp(12, (inner_width / 5).max(12))
        } else {
            0
        }
    }

    /// The changed files, each with its status letter, the selected one reversed.
    fn draw_file_list(
        &self,
        frame: &mut Frame<'_>,
        rect: Rect,
        selected: usize,
        c: &Colors<Color>,
    ) {
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
                if i == selected {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                // A name too long for the list keeps its end, where the file name is.
                let label = keep_end(&e.label(), usize::from(rect.width).saturating_sub(3));
                Line::from(vec![
                    Span::styled(format!("{mark} "), Style::default().fg(color)),
                    Span::styled(label, style),
                ])
            })
            .collect();
        frame.render_widget(Paragraph::new(items), rect);
    }

    /// An empty pane; finished builds arrive on the returned receiver, to be handed back to
    /// [`DiffPane::accept`].
    pub fn new(syntax_theme: String) -> (DiffPane, mpsc::UnboundedReceiver<Built>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            DiffPane {
                syntax_theme,
                highlighter: Arc::new(Highlighter::default()),
                wanted: None,
                held: None,
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

    /// Takes a finished build; a file list older than the newest asked for is dropped.
    pub fn accept(&mut self, built: Built) {
        if let Some(compared) = built.compared {
            if self.wanted != Some(built.files) {
                return;
            }
            self.held = Some(built.files);
            self.old = compared.old;
            self.new = compared.new;
            self.entries = compared.entries;
        }
        if let Some((key, view)) = built.view {
            if self.pending == Some(key) {
                self.pending = None;
            }
            if self.held == Some(key.files) {
                self.view = Some((key, Arc::new(view)));
            }
        }
    }

    /// Reads what the pane needs of the state, for a live session under its lock: the files'
    /// version and, when it or the diff base changed since the newest file list asked for,
    /// a copy of the files. Changes nothing; [`DiffPane::update`] takes it in once the lock
    /// is released.
    pub fn read(&self, state: &SessionState, app: &App) -> DiffInputs {
        let files = FilesKey {
            files_version: state.files_version,
            against_previous: app.diff_against_previous,
        };
        let copy = (self.wanted != Some(files)).then(|| FilesCopy {
            baseline: state.baseline.clone(),
            files: state.files.clone(),
            previous: state.previous.clone(),
        });
        DiffInputs { files, copy }
    }

    /// Brings the pane up to date with what [`DiffPane::read`] read: when the files or the
    /// diff base changed, compares the copied files in the background (with the selected
    /// file's view); otherwise starts building the selected file's view when it changed; then
    /// keeps the view state's selection, and its scroll to a marked line, in step. Cheap when
    /// nothing changed.
    pub fn update(&mut self, inputs: DiffInputs, app: &mut App) {
        let DiffInputs { files, copy } = inputs;
        if let Some(copy) = copy {
            self.wanted = Some(files);
            let index = app.diff_file;
            let marked = app.diff_mark.as_ref().map(|m| m.path.clone());
            let (highlighter, theme, tx) = self.job_parts();
            self.pending = None;
            spawn(move || {
                let compared = compare(&copy, files.against_previous);
                let view = (!compared.entries.is_empty()).then(|| {
                    let index = index.min(compared.entries.len() - 1);
                    let entry = &compared.entries[index];
                    let whole = marked.as_deref() == Some(entry.path.as_str());
                    let key = ViewKey {
                        files,
                        index,
                        whole,
                    };
                    build_view(entry, &compared, &highlighter, &theme, whole).map(|v| (key, v))
                });
                let _ = tx.send(Built {
                    files,
                    compared: Some(compared),
                    view: view.flatten(),
                });
            });
        }
        self.select(app);
        self.scroll_to_mark(app);
    }

    /// Resolves a file (and line) asked for from the Verdict pane, keeps the selection in
    /// the file list and starts building the selected file's view when it is not built or
    /// being built.
    fn select(&mut self, app: &mut App) {
        let Some(files) = self.held else { return };
        if self.entries.is_empty() || self.wanted != Some(files) {
            return;
        }
        if let Some(target) = app.diff_goto.take()
            && let Some(i) = self
                .entries
                .iter()
                .position(|e| e.path == target.path || e.old_path() == Some(target.path.as_str()))
        {
            app.diff_file = i;
            app.scroll[PaneId::Diff] = 0;
            app.diff_mark = target.line.map(|line| DiffMark {
                path: self.entries[i].path.clone(),
                line,
                scrolled: false,
            });
        }
        app.diff_file = app.diff_file.min(self.entries.len() - 1);
        let whole = self.marked_line(app).is_some();
        let want = ViewKey {
            files,
            index: app.diff_file,
            whole,
        };
        let have = self.view.as_ref().map(|(k, _)| *k);
        if have == Some(want) || self.pending == Some(want) {
            return;
        }
        self.pending = Some(want);
        let compared = Compared {
            old: self.old.clone(),
            new: self.new.clone(),
            entries: Vec::new(),
        };
        let entry = self.entries[app.diff_file].clone();
        let (highlighter, theme, tx) = self.job_parts();
        spawn(move || {
            if let Some(view) = build_view(&entry, &compared, &highlighter, &theme, whole) {
                let _ = tx.send(Built {
                    files,
                    compared: None,
                    view: Some((want, view)),
                });
            }
        });
    }

    /// The marked line, when the mark is in the selected file.
    fn marked_line(&self, app: &App) -> Option<usize> {
        let mark = app.diff_mark.as_ref()?;
        let entry = self.entries.get(self.selected(app))?;
        (entry.path == mark.path).then_some(mark.line as usize)
    }

    /// The index of the marked line's row in the view held, when the view is the marked
    /// file's whole view.
    fn marked_row(&self, app: &App) -> Option<usize> {
        let line = self.marked_line(app)?;
        let (key, view) = self.view.as_ref()?;
        if !key.whole || key.index != self.selected(app) {
            return None;
        }
        view.diff
            .rows
            .iter()
            .position(|r| r.right.as_ref().is_some_and(|c| c.lineno == line))
    }

    /// Once the marked file's whole view has arrived and been drawn in a pane of its own,
    /// keeps the scroll that frame showed (the marked line a third of the way down, see
    /// [`DiffPane::draw`]); from then on the pane scrolls freely.
    fn scroll_to_mark(&self, app: &mut App) {
        if app.diff_mark.as_ref().is_none_or(|m| m.scrolled) {
            return;
        }
        let Some(row) = self.marked_row(app) else {
            return;
        };
        // The last frame's Diff pane, when it had rows (a compact screen draws an unfocused
        // pane as a one-line summary): its rows below the border and the file header.
        let rect = app.pane_rects[PaneId::Diff];
        if rect.height < 4 {
            return;
        }
        app.scroll[PaneId::Diff] = mark_top(row, usize::from(rect.height - 3));
        if let Some(mark) = app.diff_mark.as_mut() {
            mark.scrolled = true;
        }
    }

    fn job_parts(&self) -> (Arc<Highlighter>, String, mpsc::UnboundedSender<Built>) {
        (
            self.highlighter.clone(),
            self.syntax_theme.clone(),
            self.results.clone(),
        )
    }

    /// The selected file's index, within the list.
    fn selected(&self, app: &App) -> usize {
        app.diff_file.min(self.entries.len().saturating_sub(1))
    }

    /// A note for the pane title: the frameworks of the two sides (`PyTorch ↔ JAX`), the
    /// selected file and the diff base.
    pub fn title_note(&self, app: &App, migration: Migration) -> Option<String> {
        let selected = self.selected(app);
        let Some(entry) = self.entries.get(selected) else {
            return Some(format!("{} ", migration.sides()));
        };
        Some(format!(
            "{} · {} ({}/{}) {} ",
            migration.sides(),
            entry.label(),
            selected + 1,
            self.entries.len(),
            if app.diff_against_previous {
                "vs previous"
            } else {
                "vs source"
            }
        ))
    }
}

impl Pane for DiffPane {
    fn keys(&self, _cx: &PaneContext<'_>) -> Vec<PaneKey> {
        vec![
            PaneKey {
                action: KeyAction::PreviousFile,
                enabled: self.entries.len() > 1,
            },
            PaneKey {
                action: KeyAction::ToggleDiffBase,
                enabled: !self.entries.is_empty(),
            },
        ]
    }

    fn title_note(&self, cx: &PaneContext<'_>) -> Option<String> {
        DiffPane::title_note(self, cx.view, cx.scene.task.migration)
    }

    fn draw(&self, frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, cx: &PaneContext<'_>) {
        let (app, c) = (cx.view, &cx.theme.colors);
        let inner = block.inner(rect);
        frame.render_widget(block, rect);
        if self.entries.is_empty() {
            frame.render_widget(
                Paragraph::new(Span::styled("no changes yet", Style::default().fg(c.dim))),
                inner,
            );
            return;
        }
        let list_width = self.list_width(inner.width);
        let selected = self.selected(app);
        let cols = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([Constraint::Length(list_width), Constraint::Min(10)])
            .split(inner);
        if list_width > 0 {
            self.draw_file_list(frame, cols[0], selected, c);
        }
        let area = cols[1];
        let Some((key, view)) = &self.view else {
            frame.render_widget(
                Paragraph::new(Span::styled("diffing…", Style::default().fg(c.dim))),
                area,
            );
            return;
        };
        let stale = key.index != selected;
        let mark = self.marked_line(app).filter(|_| key.whole && !stale);
        let palette = DiffPalette {
            added_bg: c.added_bg,
            removed_bg: c.removed_bg,
            added_emph_bg: c.added_emphasis,
            removed_emph_bg: c.removed_emphasis,
            gutter: c.dim,
            fold: c.dim,
            whitespace: c.emphasis,
        };
        let status = format!("{} ", view.entry.status_word());
        let counts = format!(
            "  +{} −{}{}",
            view.diff.stats.added,
            view.diff.stats.removed,
            if stale { "  (updating…)" } else { "" }
        );
        let marked = mark.map_or_else(String::new, |line| format!("  ▶ line {line}"));
        // The name gets what the rest of the line leaves; too long, it keeps its end.
        let room = usize::from(area.width).saturating_sub(
            [&status, &counts, &marked]
                .iter()
                .map(|s| s.chars().count())
                .sum(),
        );
        let header = Line::from(vec![
            Span::styled(status, Style::default().fg(c.waiting)),
            Span::styled(
                keep_end(&view.entry.label(), room.max(12)),
                Style::default().fg(c.title).add_modifier(Modifier::BOLD),
            ),
            Span::styled(counts, Style::default().fg(c.dim)),
            Span::styled(marked, Style::default().fg(c.emphasis)),
        ]);
        let height = usize::from(area.height.saturating_sub(1));
        let total = view.diff.rows.len();
        // A mark not scrolled to yet is put in view here, as `scroll_to_mark` keeps it.
        let pending = app.diff_mark.as_ref().is_some_and(|m| !m.scrolled);
        let top = match self.marked_row(app).filter(|_| pending) {
            Some(row) => mark_top(row, height),
            None => app.scroll[PaneId::Diff],
        }
        .min(total.saturating_sub(height));
        let mut lines = vec![header];
        if view.diff.binary {
            lines.push(Line::from(Span::styled(
                "binary file: not shown",
                Style::default().fg(c.dim),
            )));
        }
        lines.extend(render_rows(
            view,
            top..top + height,
            area.width,
            app.diff_column,
            mark,
            &palette,
        ));
        frame.render_widget(Paragraph::new(lines), area);
    }

    /// The selected file and the diff base.
    fn summary<'a>(&'a self, cx: &PaneContext<'a>) -> Summary<'a> {
        Summary::Line(Line::from(Span::styled(
            DiffPane::title_note(self, cx.view, cx.scene.task.migration).unwrap_or_default(),
            Style::default().fg(cx.theme.colors.dim),
        )))
    }
}

/// The first row shown when `row` is to be a third of the way down `height` rows.
fn mark_top(row: usize, height: usize) -> usize {
    row.saturating_sub(height / 3)
}

/// Runs a build on a blocking thread of the runtime, or here when there is none (tests,
/// one-off renders).
fn spawn(build: impl FnOnce() + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => {
            handle.spawn_blocking(build);
        }
        Err(_) => build(),
    }
}

/// The snapshots of the copied files (the source, or each changed file's previous version,
/// against the workspace) and the files with changes between them.
fn compare(copy: &FilesCopy, against_previous: bool) -> Compared {
    let text = |f: &FileContent| f.text.as_ref().map(|t| t.clone().into_bytes());
    let new: Snapshot = copy
        .files
        .iter()
        .filter_map(|(p, f)| Some((p.clone(), text(f)?)))
        .collect();
    let old: Snapshot = if against_previous {
        let mut old = new.clone();
        for (path, before) in &copy.previous {
            match before.as_ref().and_then(text) {
                Some(bytes) => old.insert(path.clone(), bytes),
                None => old.remove(path),
            };
        }
        old
    } else {
        copy.baseline
            .iter()
            .filter_map(|(p, f)| Some((p.clone(), text(f)?)))
            .collect()
    };
    let entries = compare_snapshots(&old, &new, &CompareOptions::default());
    Compared {
        old: Arc::new(old),
        new: Arc::new(new),
        entries,
    }
}

/// One file's highlighted side-by-side view (plain when highlighting fails); `whole`: every
/// line, no unchanged run folded.
fn build_view(
    entry: &FileEntry,
    compared: &Compared,
    highlighter: &Highlighter,
    theme: &str,
    whole: bool,
) -> Option<FileDiffView> {
    let request = HighlightRequest {
        highlighter,
        theme,
        scope: HighlightScope::WholeFile,
    };
    let mut opts = DiffOptions::default();
    if whole {
        opts.context = usize::MAX;
    }
    let (old, new) = (&compared.old, &compared.new);
    FileDiffView::build(entry, old, new, &opts, Some(&request))
        .or_else(|_| FileDiffView::build(entry, old, new, &opts, None))
        .ok()
}

//! The diff engine behind the Diff pane and `xstack diff`: line diffs under a deadline
//! with inline word emphasis ([`engine`], [`inline`], [`align`]), input normalisation ([`text`]),
//! file status and port pairing between two snapshots ([`pairing`]), cached syntax
//! highlighting ([`highlight`]), views ready to draw ([`view`]), ratatui and text
//! rendering ([`render`]), and loading two files or folders ([`load`]).
//!
//! Typical use: `compare_snapshots` → `build_views` (off the UI thread) →
//! `render_ratatui` (or `render_rows` for the visible window) per file, or `render_text`
//! for the whole list.

pub mod align;
pub mod engine;
pub mod highlight;
pub mod inline;
pub mod load;
pub mod pairing;
pub mod render;
pub mod text;
pub mod view;

pub use engine::{
    Cell, DiffOptions, DiffStats, Row, RowKind, TextDiffResult, diff_prepared, diff_texts,
};
pub use highlight::{
    DEFAULT_THEME, HighlightError, HighlightedFile, Highlighter, SpanStyle, StyledSpan, theme_names,
};
pub use load::{LoadError, LoadedPair, load_pair, read_tree};
pub use pairing::{CompareOptions, FileEntry, FileStatus, Snapshot, compare_snapshots};
pub use render::{DiffPalette, render_ratatui, render_rows, render_text};
pub use view::{FileDiffView, HighlightRequest, HighlightScope, build_views};

//! `xstack diff`: the side-by-side diff of two files or folders, as text.

use std::io::Write;
use std::path::Path;

use crate::process::EXIT_PASS;

use super::AppError;

/// When `xstack diff` colours its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colours when stdout is a terminal.
    Auto,
    /// Always colours.
    Always,
    /// Never colours.
    Never,
}

/// `xstack diff OLD NEW`: prints the side-by-side diff of two files or folders.
pub fn diff(
    old: &Path,
    new: &Path,
    width: Option<usize>,
    color: ColorChoice,
    out: &mut dyn Write,
) -> Result<i32, AppError> {
    use crate::diff::{
        CompareOptions, DEFAULT_THEME, DiffOptions, HighlightRequest, HighlightScope, Highlighter,
        build_views, load_pair, render_text,
    };
    use std::io::IsTerminal;
    let is_terminal = std::io::stdout().is_terminal();
    let width = width
        .or_else(|| {
            std::env::var("COLUMNS")
                .ok()
                .and_then(|c| c.trim().parse().ok())
        })
        .or_else(|| {
            is_terminal
                .then(|| {
                    crossterm::terminal::size()
                        .ok()
                        .map(|(w, _)| usize::from(w))
                })
                .flatten()
        })
        .unwrap_or(160)
        .max(20);
    let color = match color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal,
    };
    let pair = load_pair(old, new, &CompareOptions::default())
        .map_err(|e| AppError::usage(e.to_string()))?;
    let highlighter = Highlighter::default();
    let request = HighlightRequest {
        highlighter: &highlighter,
        theme: DEFAULT_THEME,
        scope: HighlightScope::ShownLines,
    };
    let views = build_views(
        &pair.entries,
        &pair.old,
        &pair.new,
        &DiffOptions::default(),
        color.then_some(&request),
    )
    .map_err(|e| AppError::infra(e.to_string()))?;
    let text = render_text(&views, width, color);
    out.write_all(text.as_bytes())
        .map_err(|e| AppError::infra(format!("cannot write the diff: {e}")))?;
    Ok(EXIT_PASS)
}

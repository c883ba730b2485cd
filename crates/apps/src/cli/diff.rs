//! `xstack diff`: the side-by-side diff of two files or folders, as text.

use std::io::Write;
use std::path::PathBuf;

use crate::process::EXIT_PASS;
use crate::task::{Framework, Migration};

use super::AppError;

/// When `xstack diff` colours its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum ColorChoice {
    /// Colours when stdout is a terminal.
    Auto,
    /// Always colours.
    Always,
    /// Never colours.
    Never,
}

impl ColorChoice {
    /// The name `--color` takes: `auto`, `always` or `never`.
    pub fn as_str(self) -> &'static str {
        match self {
            ColorChoice::Auto => "auto",
            ColorChoice::Always => "always",
            ColorChoice::Never => "never",
        }
    }
}

/// The frameworks of the two sides, `PyTorch ↔ JAX`, when each side's Python (its `.py`
/// files and notebooks' code cells) imports one and they differ; None otherwise.
fn sides_title(old: &crate::diff::Snapshot, new: &crate::diff::Snapshot) -> Option<String> {
    let framework = |side: &crate::diff::Snapshot| {
        let modules: Vec<String> = side
            .iter()
            .filter(|(path, _)| path.ends_with(".py") || crate::notebook::is_notebook(path))
            .flat_map(|(path, bytes)| {
                let code = crate::notebook::python_code(path, &String::from_utf8_lossy(bytes));
                crate::source_text::imported_modules(&code)
            })
            .collect();
        Framework::of_modules(&modules)
    };
    match (framework(old), framework(new)) {
        (Some(from), Some(to)) if from != to => Some(Migration { from, to }.sides()),
        _ => None,
    }
}

/// What `xstack diff` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffCommandOptions {
    /// The old file or folder (the source).
    pub old: PathBuf,
    /// The new file or folder (the port).
    pub new: PathBuf,
    /// The output width; None: `$COLUMNS`, the terminal's, or 160.
    pub width: Option<usize>,
    /// When to colour.
    pub color: ColorChoice,
}

/// `xstack diff OLD NEW`: prints the side-by-side diff of two files or folders, under the
/// frameworks of its sides when they differ (`PyTorch ↔ JAX`).
pub fn diff(opts: &DiffCommandOptions, out: &mut dyn Write) -> Result<i32, AppError> {
    let (old, new, width, color) = (
        opts.old.as_path(),
        opts.new.as_path(),
        opts.width,
        opts.color,
    );
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
    let mut text = String::new();
    if let Some(title) = sides_title(&pair.old, &pair.new) {
        text.push_str(&if color {
            format!("\x1b[1m{title}\x1b[0m\n\n")
        } else {
            format!("{title}\n\n")
        });
    }
    text.push_str(&render_text(&views, width, color));
    out.write_all(text.as_bytes())
        .map_err(|e| AppError::infra(format!("cannot write the diff: {e}")))?;
    Ok(EXIT_PASS)
}

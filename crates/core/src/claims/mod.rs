//! Published claims (SPEC §2b): finds the results a repository states (README files,
//! `docs/**/*.md`, notebooks' markdown and committed outputs, a paper's text), matches them
//! to a metric the run prints, and authenticates the chosen one against measured runs.
//!
//! Pure: it reads files and returns values; nothing here runs anything or writes anything.
//!
//! # Finding
//!
//! [`find_claims`] reads prose, Markdown tables (keeping the row's first cell and the column
//! header), logs pasted in code blocks and notebook outputs. Every number is classified by the
//! words that label it and the unit it is written in ([`scan`]): a result is labelled by
//! metric words (`val loss 2.06`, `Acc: 81.0 %`) or sits in a sentence about a measure; a
//! version, a date, a duration, a size, a parameter count, a hyper-parameter, a step count, a
//! hardware count, list numbering, a URL or anything in a code span or a command line is not.
//!
//! # Matching
//!
//! [`rank`] scores every claim against a [`MetricTarget`] (the metric's name, the line it is
//! printed on, the command's arguments, the measured value), best first, each with its
//! reasons; [`choose`] takes the best only when it names the metric and is clearly ahead.
//! The signals, strongest first: the command the README shows right before the claim is the
//! task's command; the claim's label names the metric's measure and split (with synonyms:
//! `validation` is `val`, `logprob` is `loss`); a table row names an argument the command
//! uses (and its sibling rows, naming values it does not use, lose); a notebook's committed
//! output when the command runs that notebook, and of the lines a cell prints again (a
//! progress log), the last; the row or clause speaks of this repository
//! (`this repo`, `ours`) or names it, and not of a baseline's or a paper's result. How close a
//! claim is to the measured value takes no part: that is what authenticating reports.
//!
//! How this decides nanoGPT, whose README states several losses: `1.4697` (`best validation
//! loss`, after `python train.py config/train_shakespeare_char.py`), `1.88` (`a loss of only
//! 1.88`, after the CPU command with `--device=cpu --n_layer=4 ...`), `~2.85` and `about 3.11`
//! (the GPT-2 reproduction) and a table of GPT-2 baselines. For the CPU command, the claim
//! right after that very command wins (`1.88`) although `1.4697` names `validation`; for the
//! GPU command it is `1.4697`; for a command shown nowhere, the several `val loss` claims are
//! reported as ambiguous rather than guessed. mlp's `val loss 2.06, recall count-based 4-gram
//! was 2.11`: the words nearest `2.11` are the 4-gram's, so it does not name the metric and
//! `2.06` is taken. A notebook's committed output (`val 1.9936515092849731`, printed by
//! `split_loss('val')`) names the loss through its cell's code, and is what the notebook the
//! command runs printed: it is taken over the performance log's markdown lines (`val 1.993`,
//! `val 2.022`, ...), which name only the split.
//!
//! # Authenticating
//!
//! [`authenticate`] compares a claim (in the metric's units) with the mean of calibrated runs:
//! `reproduced` when within the tolerance.

mod authenticate;
mod command;
mod markdown;
mod matching;
mod notebook;
pub mod scan;
pub mod vocab;

#[cfg(test)]
mod upstream_tests;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use authenticate::{Authentication, ClaimStatus, Measured, authenticate};
pub use command::split_command;
pub use matching::{AGREEMENT, Choice, ClaimMatch, MARGIN, MetricTarget, choose, rank};

/// Files bigger than this are not read for claims.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// Errors that keep claims from being read.
#[derive(Debug, thiserror::Error)]
pub enum ClaimsError {
    /// The repository is not a directory.
    #[error("{}: not a directory", path.display())]
    NotADirectory {
        /// The path given.
        path: PathBuf,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The repository could not be listed.
    #[error("cannot list {}: {source}", path.display())]
    Walk {
        /// The repository.
        path: PathBuf,
        /// The error.
        source: walkdir::Error,
    },
    /// The paper is not UTF-8 text (a PDF, say).
    #[error("{}: the paper is not text; give its text or Markdown", path.display())]
    PaperNotText {
        /// The paper.
        path: PathBuf,
    },
}

/// The unit a claim is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Unit {
    /// A percentage (`81.0 %`, `81%`): a printed fraction times 100.
    #[serde(rename = "%")]
    Percent,
    /// No unit.
    #[serde(rename = "")]
    None,
}

impl Unit {
    /// As `[criterion.claim].unit` writes it: `%` or empty.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Percent => "%",
            Unit::None => "",
        }
    }
}

/// Where a claim is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Location {
    /// A line of a text file.
    Line {
        /// The file, relative to the repository, with `/` separators.
        file: String,
        /// 1-based line.
        line: usize,
    },
    /// A notebook cell (its markdown or its committed output).
    Cell {
        /// The notebook, relative to the repository, with `/` separators.
        notebook: String,
        /// 0-based cell index.
        cell: usize,
    },
}

impl Location {
    /// The file or notebook.
    pub fn path(&self) -> &str {
        match self {
            Location::Line { file, .. } => file,
            Location::Cell { notebook, .. } => notebook,
        }
    }
}

/// A table cell a claim was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableCell {
    /// The row's first cell, as written (trimmed).
    pub row_header: String,
    /// The column's header, as written (trimmed).
    pub column_header: String,
    /// 1-based line of the table's header row (identifies the table in its file).
    pub table_line: usize,
}

/// A number a repository states as a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claim {
    /// The value as written (81.0 for `81.0 %`).
    pub value: f64,
    /// The number as written (`81.0`, `1.9936515092849731`).
    pub number: String,
    /// `%` or none.
    pub unit: Unit,
    /// Marked approximate (`~`, `≈`, `about`, `around`, `roughly`).
    pub approximate: bool,
    /// The line or table row as written, trimmed.
    pub quote: String,
    /// Lowercased words around it, for matching: its sentence; for a table cell, the row
    /// header, the column header and the cell's own label; for a notebook output, its line
    /// and the words of the cell's code.
    pub context: String,
    /// Lowercased label words right before it (`val loss`, `test logprob`, `acc`), or the
    /// column header of a table cell that has none of its own.
    pub label: String,
    /// The table cell it is in, if any.
    pub table: Option<TableCell>,
    /// Command lines shown before it in its section (the nearest code block with commands),
    /// as written, without a prompt.
    pub commands: Vec<String>,
    /// Where it is written.
    pub location: Location,
    /// A committed output of a notebook's code cell: what the code printed when its authors
    /// ran it, not what they wrote about it.
    pub output: bool,
}

impl Claim {
    /// `README.md:31` or `part5.ipynb#cell=14`, as `[criterion.claim].where` writes it.
    pub fn where_text(&self) -> String {
        match &self.location {
            Location::Line { file, line } => format!("{file}:{line}"),
            Location::Cell { notebook, cell } => format!("{notebook}#cell={cell}"),
        }
    }

    /// The value with its unit as written (`81.0 %`, `1.88`).
    pub fn value_text(&self) -> String {
        match self.unit {
            Unit::Percent => format!("{} %", self.number),
            Unit::None => self.number.clone(),
        }
    }
}

/// Directories never searched: besides hidden ones (`.git`, `.ipynb_checkpoints`).
const SKIPPED_DIRS: [&str; 3] = ["node_modules", "__pycache__", "site-packages"];

fn relative(repo: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(repo).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

enum Source {
    Markdown,
    Notebook,
}

fn source_kind(rel: &str) -> Option<Source> {
    let name = rel.rsplit('/').next().unwrap_or(rel).to_lowercase();
    if name.ends_with(".ipynb") {
        return Some(Source::Notebook);
    }
    if name.starts_with("readme") {
        return Some(Source::Markdown);
    }
    let in_docs = rel.starts_with("docs/");
    if in_docs && (name.ends_with(".md") || name.ends_with(".markdown")) {
        return Some(Source::Markdown);
    }
    None
}

fn read(path: &Path) -> Result<Vec<u8>, ClaimsError> {
    std::fs::read(path).map_err(|source| ClaimsError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The claims a repository states, in file order: README files at any depth, `docs/**/*.md`,
/// notebooks (markdown cells and committed outputs), then the paper (text or Markdown) when
/// given (located relative to the repository when inside it, else by the path given). Hidden
/// directories, `node_modules`, `__pycache__` and `site-packages` are skipped,
/// and so are files over [`MAX_FILE_BYTES`] and notebooks that are not valid JSON.
pub fn find_claims(repo: &Path, paper: Option<&Path>) -> Result<Vec<Claim>, ClaimsError> {
    if !repo.is_dir() {
        return Err(ClaimsError::NotADirectory {
            path: repo.to_path_buf(),
        });
    }
    let mut claims = Vec::new();
    let walk = walkdir::WalkDir::new(repo)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            let hidden = name.starts_with('.');
            let skipped = e.file_type().is_dir() && SKIPPED_DIRS.contains(&name.as_ref());
            e.depth() == 0 || !(hidden || skipped)
        });
    for entry in walk {
        let entry = entry.map_err(|source| ClaimsError::Walk {
            path: repo.to_path_buf(),
            source,
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = relative(repo, entry.path());
        let Some(kind) = source_kind(&rel) else {
            continue;
        };
        let too_big = entry.metadata().is_ok_and(|m| m.len() > MAX_FILE_BYTES);
        if too_big {
            tracing::warn!("claims: {rel} is over {MAX_FILE_BYTES} bytes, not read");
            continue;
        }
        let bytes = read(entry.path())?;
        let text = String::from_utf8_lossy(&bytes);
        match kind {
            Source::Markdown => claims.extend(claims_in_markdown(&text, &rel)),
            Source::Notebook => match claims_in_notebook(&text, &rel) {
                Ok(found) => claims.extend(found),
                Err(e) => tracing::warn!("claims: {rel} is not a notebook: {e}"),
            },
        }
    }
    if let Some(paper) = paper {
        let bytes = read(paper)?;
        let text = String::from_utf8(bytes).map_err(|_| ClaimsError::PaperNotText {
            path: paper.to_path_buf(),
        })?;
        let rel = match paper.canonicalize().ok().zip(repo.canonicalize().ok()) {
            Some((p, r)) if p.starts_with(&r) => relative(&r, &p),
            _ => paper.to_string_lossy().into_owned(),
        };
        claims.extend(claims_in_markdown(&text, &rel));
    }
    Ok(claims)
}

/// The claims in a Markdown (or plain) text, located in `file` (relative to the repository).
pub fn claims_in_markdown(text: &str, file: &str) -> Vec<Claim> {
    markdown::claims(text, &|line| Location::Line {
        file: file.to_string(),
        line: line + 1,
    })
}

/// The claims in a notebook's JSON (nbformat 4): its markdown cells and the committed
/// outputs of its code cells (stream text, `text/plain` of execute results), located by
/// cell index in `notebook` (relative to the repository).
pub fn claims_in_notebook(json: &str, notebook: &str) -> Result<Vec<Claim>, serde_json::Error> {
    notebook::claims(json, notebook)
}

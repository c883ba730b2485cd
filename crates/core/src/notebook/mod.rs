//! Notebooks as experiments (docs/TASKS.md, "Notebook tasks"): the runner xstack installs
//! into every environment it builds (`runner.py`, run as `python -m _xstack_notebook`), the
//! command that runs a task's notebook with it, and a notebook's cells as the Diff pane and
//! `xstack diff` show them ([`cells`]).

mod cells;

use std::path::{Path, PathBuf};

pub use cells::{
    NotebookCell, NotebookCellKind, RenderedNotebook, cells, is_notebook, python_code, render_cells,
};

/// The runner's source.
const RUNNER_PY: &str = include_str!("runner.py");
/// The runner's module name, as `python -m` takes it.
pub const MODULE: &str = "_xstack_notebook";
/// What running a notebook needs besides the task's own packages: the client that drives a
/// kernel and the kernel itself (versions pinned so environments stay reproducible).
pub const PACKAGES: &[&str] = &["nbclient==0.11.0", "ipykernel==7.4.0"];

/// The runner could not be installed into an environment (an infrastructure failure).
#[derive(Debug, thiserror::Error)]
#[error("notebook runner: {}: {source}", path.display())]
pub struct NotebookError {
    /// The file or folder.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// The runner's source, for environments built on another machine.
pub fn runner_source() -> &'static str {
    RUNNER_PY
}

/// `[run] cells` (or init's `--cells`) that a notebook cannot run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CellsError {
    /// Not a list of cell indices and ranges (`0-6, 21-34`).
    #[error("`{text}` is not a list of cell indices and ranges such as \"0-6, 21-34\": {reason}")]
    Malformed {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The notebook cannot be read.
    #[error("cannot read {} as a notebook", .0.display())]
    Unreadable(PathBuf),
    /// An index past the notebook's last cell.
    #[error("{notebook} has no cell {index} (it has {count} cells, numbered from 0)")]
    NoCell {
        /// The notebook, as the task names it.
        notebook: String,
        /// The index.
        index: usize,
        /// How many cells it has.
        count: usize,
    },
    /// An index of a markdown or raw cell.
    #[error("{notebook}#cell={index} is a {kind} cell, not a code cell")]
    NotCode {
        /// The notebook, as the task names it.
        notebook: String,
        /// The index.
        index: usize,
        /// The cell's kind (`markdown`, `raw`).
        kind: &'static str,
    },
}

/// The code cells a notebook task runs (`[run] cells`): ranges of cell indices, numbered as
/// nbformat numbers cells (from 0, markdown cells included), in increasing order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellSelection {
    ranges: Vec<(usize, usize)>,
}

impl CellSelection {
    /// Reads `0-6, 21-34`: comma-separated indices (`5`) and inclusive ranges (`0-6`), each
    /// after the one before it, none empty.
    pub fn parse(text: &str) -> Result<Self, CellsError> {
        let fail = |reason: String| CellsError::Malformed {
            text: text.to_string(),
            reason,
        };
        let index = |word: &str| {
            word.trim()
                .parse::<usize>()
                .map_err(|_| fail(format!("`{}` is not a cell index", word.trim())))
        };
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for item in text.split(',') {
            if item.trim().is_empty() {
                return Err(fail("an empty entry".to_string()));
            }
            let (first, last) = match item.split_once('-') {
                Some((a, b)) => (index(a)?, index(b)?),
                None => (index(item)?, index(item)?),
            };
            if last < first {
                return Err(fail(format!("the range `{}` runs backwards", item.trim())));
            }
            if let Some(&(_, before)) = ranges.last()
                && first <= before
            {
                return Err(fail(format!(
                    "`{}` does not come after cell {before}: list the cells in increasing order, once each",
                    item.trim()
                )));
            }
            ranges.push((first, last));
        }
        Ok(Self { ranges })
    }

    /// Whether cell `index` is run.
    pub fn contains(&self, index: usize) -> bool {
        self.ranges.iter().any(|&(a, b)| (a..=b).contains(&index))
    }

    /// Every index the selection names, in order.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.ranges.iter().flat_map(|&(a, b)| a..=b)
    }

    /// Checks that each index is a code cell of the notebook at `file` (`notebook` as the
    /// task names it).
    pub fn check_code_cells(&self, file: &Path, notebook: &str) -> Result<(), CellsError> {
        let found = std::fs::read(file)
            .ok()
            .and_then(|bytes| cells(&bytes))
            .ok_or_else(|| CellsError::Unreadable(file.to_path_buf()))?;
        for index in self.indices() {
            let Some(cell) = found.get(index) else {
                return Err(CellsError::NoCell {
                    notebook: notebook.to_string(),
                    index,
                    count: found.len(),
                });
            };
            if cell.kind != NotebookCellKind::Code {
                return Err(CellsError::NotCode {
                    notebook: notebook.to_string(),
                    index,
                    kind: cell.kind.name(),
                });
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for CellSelection {
    /// The selection as the runner takes it: `0-6,21-34`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let items: Vec<String> = self
            .ranges
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        f.write_str(&items.join(","))
    }
}

/// The shell command that runs `notebook` (a path relative to the repository) with the
/// environment's Python: top to bottom, or only the code cells `cells` selects.
pub fn command(notebook: &str, cells: Option<&CellSelection>) -> String {
    let run = format!("python -m {MODULE} {}", shell_words::quote(notebook));
    match cells {
        Some(cells) => format!("{run} --cells {cells}"),
        None => run,
    }
}

/// Whether `line` is the runner's own line before a cell (`── part5.ipynb#cell=3 ──`), or in
/// place of a cell `[run] cells` leaves out (`── part5.ipynb#cell=8 left out ([run] cells) ──`).
pub fn is_cell_line(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("── ") && line.ends_with(" ──") && line.contains(".ipynb#cell=")
}

/// The cell index a runner's line before a cell names (`── part5.ipynb#cell=3 ──` → 3).
pub fn cell_line_index(line: &str) -> Option<usize> {
    if !is_cell_line(line) {
        return None;
    }
    let (_, rest) = line.trim().rsplit_once("#cell=")?;
    rest.strip_suffix(" ──")?.parse().ok()
}

/// The runner's last word on a notebook that failed (`part5.ipynb#cell=3 raised
/// ZeroDivisionError: division by zero`), when it is among the last lines of `output`.
pub fn crash_line(output: &str) -> Option<String> {
    output
        .lines()
        .rev()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(5)
        .find(|l| {
            l.split_once(".ipynb#cell=").is_some_and(|(_, rest)| {
                rest.starts_with(|c: char| c.is_ascii_digit())
                    && (rest.contains(" raised ") || rest.contains(": the kernel died"))
            })
        })
        .map(str::to_string)
}

/// `packages` with the notebook runner's own added (those already listed by name are kept as
/// the task pins them).
pub fn with_runner_packages(packages: &[String]) -> Vec<String> {
    let name = |p: &str| {
        p.split(|c: char| "[<>=!~; ".contains(c))
            .next()
            .unwrap_or_default()
            .to_lowercase()
    };
    let mut all = packages.to_vec();
    for wanted in PACKAGES {
        if !packages.iter().any(|p| name(p) == name(wanted)) {
            all.push((*wanted).to_string());
        }
    }
    all
}

/// Installs (or refreshes) the runner module in each of an environment's `site-packages`
/// folders (which [`crate::env`], the layer that builds environments, finds).
pub fn install(sites: &[PathBuf]) -> Result<(), NotebookError> {
    for site in sites {
        let file = site.join(format!("{MODULE}.py"));
        if std::fs::read_to_string(&file).is_ok_and(|old| old == RUNNER_PY) {
            continue;
        }
        std::fs::write(&file, RUNNER_PY).map_err(|source| NotebookError {
            path: file.clone(),
            source,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_quotes_the_notebook_path() {
        assert_eq!(
            command("lectures/make more/part 5.ipynb", None),
            "python -m _xstack_notebook 'lectures/make more/part 5.ipynb'"
        );
        assert_eq!(
            command("nb.ipynb", None),
            "python -m _xstack_notebook nb.ipynb"
        );
        let cells = CellSelection::parse(" 0-6, 21 - 34 ,40").unwrap();
        assert_eq!(
            command("nb.ipynb", Some(&cells)),
            "python -m _xstack_notebook nb.ipynb --cells 0-6,21-34,40"
        );
    }

    #[test]
    fn cell_ranges_are_read_in_order_and_a_malformed_one_says_why() {
        let cells = CellSelection::parse("0-2, 5, 7-8").unwrap();
        assert_eq!(cells.indices().collect::<Vec<_>>(), [0, 1, 2, 5, 7, 8]);
        assert!(cells.contains(5) && !cells.contains(3) && !cells.contains(9));
        assert_eq!(cells.to_string(), "0-2,5,7-8");
        for (text, says) in [
            ("", "an empty entry"),
            ("0-6,", "an empty entry"),
            ("0-6; 8", "`6; 8` is not a cell index"),
            ("a-3", "`a` is not a cell index"),
            ("-1", "`` is not a cell index"),
            ("7-3", "the range `7-3` runs backwards"),
            ("0-6, 5-9", "`5-9` does not come after cell 6"),
            ("4, 2", "`2` does not come after cell 4"),
        ] {
            let err = CellSelection::parse(text).unwrap_err().to_string();
            assert!(err.contains(says) && err.contains(text), "{text}: {err}");
        }
    }

    #[test]
    fn the_crash_line_is_the_runners_last_word() {
        let output = "step 1\nTraceback ...\nZeroDivisionError: division by zero\nlectures/part5.ipynb#cell=3 raised ZeroDivisionError: division by zero\n\n";
        assert_eq!(
            crash_line(output).as_deref(),
            Some("lectures/part5.ipynb#cell=3 raised ZeroDivisionError: division by zero")
        );
        assert_eq!(
            crash_line("print('a.ipynb#cell=3 raised')\nok\n1\n2\n3\n4\n5\n"),
            None
        );
        assert_eq!(crash_line("a.ipynb#cell=x raised Error: e\n"), None);
        assert_eq!(crash_line("Traceback\nValueError: x\n"), None);
    }

    #[test]
    fn the_runners_cell_lines_are_told_from_the_notebooks_own() {
        assert!(is_cell_line("── lectures/part5.ipynb#cell=13 ──"));
        assert!(is_cell_line(
            "── lectures/part5.ipynb#cell=8 left out ([run] cells) ──"
        ));
        assert!(!is_cell_line("cell=13"));
        assert!(!is_cell_line("── epoch 3 ──"));
        assert_eq!(
            cell_line_index("── lectures/part5.ipynb#cell=13 ──"),
            Some(13)
        );
        assert_eq!(cell_line_index("── epoch 3 ──"), None);
    }

    #[test]
    fn the_runner_packages_are_added_once_and_a_pinned_one_is_kept() {
        let listed = vec!["torch".to_string(), "ipykernel==6.29.5".to_string()];
        assert_eq!(
            with_runner_packages(&listed),
            vec!["torch", "ipykernel==6.29.5", "nbclient==0.11.0"]
        );
        let twice = with_runner_packages(&with_runner_packages(&[]));
        assert_eq!(twice, vec!["nbclient==0.11.0", "ipykernel==7.4.0"]);
    }

    #[test]
    fn install_writes_the_module_into_each_site_packages() {
        let env = tempfile::tempdir().unwrap();
        let site = env.path().join("lib/python3.12/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        install(std::slice::from_ref(&site)).unwrap();
        let module = std::fs::read_to_string(site.join("_xstack_notebook.py")).unwrap();
        assert_eq!(module, runner_source());
        let err = install(&[env.path().join("missing")]).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
    }
}

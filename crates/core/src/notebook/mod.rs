//! Notebooks as experiments (docs/TASKS.md, "Notebook tasks"): the runner xstack installs
//! into every environment it builds (`runner.py`, run as `python -m _xstack_notebook`), the
//! command that runs a task's notebook with it, and a notebook's cells as the Diff pane and
//! `xstack diff` show them ([`cells`]).

mod cells;

use std::path::PathBuf;

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

/// The shell command that runs `notebook` (a path relative to the repository) top to bottom
/// with the environment's Python.
pub fn command(notebook: &str) -> String {
    format!("python -m {MODULE} {}", shell_words::quote(notebook))
}

/// Whether `line` is the runner's own line before a cell (`── part5.ipynb#cell=3 ──`).
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
            command("lectures/make more/part 5.ipynb"),
            "python -m _xstack_notebook 'lectures/make more/part 5.ipynb'"
        );
        assert_eq!(command("nb.ipynb"), "python -m _xstack_notebook nb.ipynb");
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

//! The framework of the experiment `xstack init` makes a task of (SPEC §2c), read from its
//! imports without running anything: the file the command runs (a notebook's code cells)
//! and the repository's own modules it imports, followed from there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::task::{Framework, Migration};

/// How many of the repository's files are read at most, following imports from the entry.
const MAX_FILES: usize = 64;

/// The direction of the task: `--from` when given, else the experiment's imports (PyTorch
/// when they import neither), with the reason in words for the proposal.
pub fn choose(
    from_flag: Option<Framework>,
    repo: &Path,
    entry: Option<&Path>,
) -> (Migration, String) {
    if let Some(from) = from_flag {
        return (
            Migration {
                from,
                to: from.other(),
            },
            "From --from.".to_string(),
        );
    }
    let found = entry.map(|entry| of_experiment(repo, entry));
    match found {
        Some(Imports {
            framework: Some(from),
            file: Some(file),
        }) => (
            Migration {
                from,
                to: from.other(),
            },
            format!(
                "The experiment imports {} ({file}); `--from` overrides.",
                from.name()
            ),
        ),
        _ => (
            Migration::default(),
            "The experiment imports neither framework: PyTorch to JAX, the default; `--from` overrides.".to_string(),
        ),
    }
}

/// What the experiment imports, and from which file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imports {
    /// The framework: JAX when the files import JAX or a library of it and not torch,
    /// PyTorch when they import torch; None when they import neither.
    pub framework: Option<Framework>,
    /// The file (relative to the repository) whose import decided it.
    pub file: Option<String>,
}

/// The framework of the experiment whose entry is `entry` (a script or a notebook) in
/// `repo`: its imports and those of the repository's modules it imports.
pub fn of_experiment(repo: &Path, entry: &Path) -> Imports {
    let mut queue = vec![entry.to_path_buf()];
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let (mut torch, mut jax): (Option<String>, Option<String>) = (None, None);
    while let Some(file) = queue.pop() {
        if seen.len() >= MAX_FILES || !seen.insert(file.clone()) {
            continue;
        }
        let shown = file
            .strip_prefix(repo)
            .unwrap_or(&file)
            .display()
            .to_string();
        for module in imported_modules(&file) {
            if Framework::Torch.modules().contains(&module.as_str()) {
                torch.get_or_insert_with(|| shown.clone());
            } else if Framework::Jax.modules().contains(&module.as_str()) {
                jax.get_or_insert_with(|| shown.clone());
            } else {
                let folder = file.parent().unwrap_or(repo);
                for dir in [folder, repo] {
                    let local = dir.join(&module);
                    queue.extend(
                        [local.with_extension("py"), local.join("__init__.py")]
                            .into_iter()
                            .filter(|p| p.is_file()),
                    );
                }
            }
        }
    }
    match (torch, jax) {
        (Some(file), _) => Imports {
            framework: Some(Framework::Torch),
            file: Some(file),
        },
        (None, Some(file)) => Imports {
            framework: Some(Framework::Jax),
            file: Some(file),
        },
        (None, None) => Imports {
            framework: None,
            file: None,
        },
    }
}

/// The top-level modules a Python file (or a notebook's code cells) imports.
fn imported_modules(file: &Path) -> Vec<String> {
    let name = file.to_string_lossy();
    // A notebook carries its outputs (pictures among them): it is read whatever its size.
    let text = if crate::notebook::is_notebook(&name) {
        std::fs::read_to_string(file).ok()
    } else {
        crate::source_text::read_small(file)
    };
    let Some(text) = text else {
        return Vec::new();
    };
    let code = crate::notebook::python_code(&name, &text);
    crate::source_text::imported_modules(&code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn the_imports_of_the_entry_and_its_own_modules_decide() {
        let jax = repo(&[
            ("train.py", "import numpy as np\nfrom model import Net\n"),
            ("model.py", "import os, equinox as eqx\n"),
        ]);
        let found = of_experiment(jax.path(), &jax.path().join("train.py"));
        assert_eq!(found.framework, Some(Framework::Jax));
        assert_eq!(found.file.as_deref(), Some("model.py"));

        let torch = repo(&[
            ("train.py", "def main():\n    import torch\n"),
            ("utils.py", "import jax\n"),
        ]);
        let found = of_experiment(torch.path(), &torch.path().join("train.py"));
        assert_eq!(found.framework, Some(Framework::Torch));

        let both = repo(&[("train.py", "import jax\nimport torch.nn as nn\n")]);
        let found = of_experiment(both.path(), &both.path().join("train.py"));
        assert_eq!(found.framework, Some(Framework::Torch));

        let neither = repo(&[("train.py", "import numpy\n")]);
        let found = of_experiment(neither.path(), &neither.path().join("train.py"));
        assert_eq!(found.framework, None);
    }

    #[test]
    fn a_notebook_is_read_by_its_code_cells() {
        let notebook = serde_json::json!({
            "cells": [
                {"cell_type": "markdown", "metadata": {}, "source": ["import torch is what we do not do"]},
                {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,
                 "source": ["import diffrax\n", "import jax.numpy as jnp\n"]}
            ],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5
        });
        let dir = repo(&[("docs/neural_cde.ipynb", &notebook.to_string())]);
        let found = of_experiment(dir.path(), &dir.path().join("docs/neural_cde.ipynb"));
        assert_eq!(found.framework, Some(Framework::Jax));
        assert_eq!(found.file.as_deref(), Some("docs/neural_cde.ipynb"));
    }
}

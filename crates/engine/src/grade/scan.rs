//! The static integrity scan of a verify copy. Python source is read by Python's own parser
//! (`scan.py`, run isolated with the target environment's interpreter), so the declared
//! source encoding, NFKC identifiers and every statement of a compound statement are seen as
//! Python sees them; this module prepares its input, adds what needs no parser (symlinks out
//! of the workspace, a missing required import) and turns its answer into [`Finding`]s.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;

use super::{Finding, FindingKind};
use crate::task::{Framework, IntegritySpec};

/// The scanner, run as `python -I -S -c SCAN CONFIG`.
const SCAN_PY: &str = include_str!("scan.py");

/// Scan errors: the scanner could not run (an infrastructure failure).
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The interpreter could not be started.
    #[error("cannot run the integrity scan with {}: {source}", python.display())]
    Start {
        /// The interpreter.
        python: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The scanner failed or printed something that is not its answer.
    #[error("the integrity scan failed: {0}")]
    Failed(String),
}

/// What the scan is told about the task.
#[derive(Debug, Clone)]
pub struct ScanInput<'a> {
    /// The task's `[integrity]`.
    pub integrity: &'a IntegritySpec,
    /// The target environment's packages (their modules must not be shadowed).
    pub packages: &'a [String],
    /// The experiment's shell text (`[env].setup` and `[run].command`): the folders of the
    /// scripts it names are on `sys.path`, like the top level.
    pub command: &'a str,
    /// Module names of the protected Python files (`eval`, `pkg.metrics`).
    pub protected_modules: Vec<String>,
    /// The port's framework: its modules must not be shadowed.
    pub port: Framework,
    /// Notebooks the scan leaves out: byte for byte the source's and not the one the task
    /// runs ([`unrun_source_notebooks`]).
    pub unrun_notebooks: Vec<String>,
}

#[derive(Deserialize)]
struct ScanAnswer {
    findings: Vec<Finding>,
    python_files: usize,
    required_seen: bool,
}

/// Scans the verify copy at `root` with `python`; returns the findings by file and line, a
/// missing required import last.
pub fn scan(python: &Path, root: &Path, input: &ScanInput<'_>) -> Result<Vec<Finding>, ScanError> {
    let mut guarded: Vec<String> = input.packages.iter().map(|p| module_of(p)).collect();
    guarded.extend(input.integrity.require_imports.iter().cloned());
    guarded.extend(input.port.runtime_modules().iter().map(|m| m.to_string()));
    guarded.push("numpy".to_string());
    guarded.sort();
    guarded.dedup();
    let config = serde_json::json!({
        "root": root,
        "forbid": input.integrity.forbid_imports,
        "require": input.integrity.require_imports,
        "guarded": guarded,
        "path_dirs": path_dirs(input.command),
        "protected_modules": input.protected_modules,
        "unrun_notebooks": input.unrun_notebooks,
    });
    let out = Command::new(python)
        .args(["-I", "-S", "-c", SCAN_PY, &config.to_string()])
        .stdin(Stdio::null())
        .output()
        .map_err(|source| ScanError::Start {
            python: python.to_path_buf(),
            source,
        })?;
    if !out.status.success() {
        return Err(ScanError::Failed(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    let answer: ScanAnswer = serde_json::from_slice(&out.stdout)
        .map_err(|e| ScanError::Failed(format!("unreadable answer: {e}")))?;
    let mut findings = answer.findings;
    // By file; within a file the scan gives them in line order (a notebook's cell by cell).
    findings.sort_by(|a, b| a.file.cmp(&b.file));
    if !answer.required_seen {
        let text = if answer.python_files == 0 {
            "no Python file in the migrated repository".to_string()
        } else {
            format!(
                "no migrated .py file imports any of: {}",
                input.integrity.require_imports.join(", ")
            )
        };
        findings.push(Finding::other(FindingKind::MissingImport, text));
    }
    Ok(findings)
}

/// The folders Python puts on `sys.path` for the scripts `command` runs (`python src/train.py`
/// → `src`; a notebook's kernel runs in the notebook's folder), relative to the repository
/// root; the root itself always.
fn path_dirs(command: &str) -> Vec<String> {
    let mut dirs = vec![String::new()];
    let tokens = shell_words::split(command)
        .unwrap_or_else(|_| command.split_whitespace().map(str::to_string).collect());
    let words = tokens
        .iter()
        .flat_map(|t| t.split([';', '&', '|']))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'));
    for word in words {
        if let Some(script) = word
            .strip_suffix(".py")
            .or_else(|| word.strip_suffix(".ipynb"))
        {
            let dir = Path::new(script)
                .parent()
                .map(|p| p.to_string_lossy().trim_start_matches("./").to_string())
                .unwrap_or_default();
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The notebooks of the verify copy at `root` that are byte for byte the source's and are
/// not `run_notebook` (the one the task runs), relative paths sorted: a source with several
/// notebooks whose task ports one of them keeps the others as they were, and an untouched
/// notebook that nothing runs is not part of the port (a run that starts it, with `%run`,
/// is seen by the runtime audit).
pub fn unrun_source_notebooks(
    root: &Path,
    source: &Path,
    run_notebook: Option<&str>,
) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel_text = rel.to_string_lossy().into_owned();
        if !crate::notebook::is_notebook(&rel_text) || run_notebook == Some(rel_text.as_str()) {
            continue;
        }
        let same = match (std::fs::read(entry.path()), std::fs::read(source.join(rel))) {
            (Ok(here), Ok(there)) => here == there,
            _ => false,
        };
        if same {
            found.push(rel_text);
        }
    }
    found
}

/// Symlinks in `workspace` that point out of it (the verify copy leaves them out, so the
/// scan of the copy cannot see them).
pub fn symlinks_out(workspace: &Path) -> Vec<Finding> {
    let Ok(root) = workspace.canonicalize() else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    for entry in walkdir::WalkDir::new(workspace)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path_is_symlink())
    {
        let rel = entry
            .path()
            .strip_prefix(workspace)
            .unwrap_or(entry.path())
            .display()
            .to_string();
        let target = std::fs::read_link(entry.path())
            .map(|t| t.display().to_string())
            .unwrap_or_default();
        let inside = entry
            .path()
            .canonicalize()
            .is_ok_and(|real| real.starts_with(&root));
        if !inside {
            findings.push(Finding::at(
                FindingKind::SymlinkOut,
                &rel,
                None,
                format!("{rel} -> {target}: a symlink out of the workspace"),
            ));
        }
    }
    findings
}

/// The module name of a repository file (`pkg/metrics.py` → `pkg.metrics`), for `.py` files.
pub fn module_name(rel: &str) -> Option<String> {
    let stem = rel.strip_suffix(".py")?;
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    Some(stem.replace('/', "."))
}

/// The names of the top-level functions a Python file defines (`def name(` at column 0).
pub fn top_level_defs(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix("async def ")
                .or_else(|| line.strip_prefix("def "))?;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The module a package installs under (`scikit-learn` → `sklearn`).
fn module_of(package: &str) -> String {
    let name = package
        .split(|c: char| "=<>!~[; ".contains(c))
        .next()
        .unwrap_or(package)
        .trim()
        .to_ascii_lowercase()
        .replace('-', "_");
    match name.as_str() {
        "scikit_learn" => "sklearn".to_string(),
        "pyyaml" => "yaml".to_string(),
        "pillow" => "PIL".to_string(),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Migration;

    #[test]
    fn script_folders_are_on_the_path() {
        assert_eq!(path_dirs("python train.py"), [""]);
        assert_eq!(
            path_dirs("cd . && python src/train.py --x 1; python ./tools/eval.py"),
            ["", "src", "tools"]
        );
    }

    #[test]
    fn module_names_and_defs() {
        assert_eq!(module_name("eval.py").as_deref(), Some("eval"));
        assert_eq!(
            module_name("pkg/metrics.py").as_deref(),
            Some("pkg.metrics")
        );
        assert_eq!(module_name("pkg/__init__.py").as_deref(), Some("pkg"));
        assert_eq!(module_name("data/x.csv"), None);
        assert_eq!(
            top_level_defs(
                "import x\ndef mse(a, b):\n    def inner(): pass\nasync def report():\n"
            ),
            ["mse", "report"]
        );
        assert_eq!(module_of("scikit-learn>=1.0"), "sklearn");
    }

    fn scan_tree(files: &[(&str, &[u8])], command: &str) -> Vec<Finding> {
        scan_port(Migration::default(), files, command, Vec::new())
    }

    /// The findings of a port in the direction `migration` (its integrity defaults), with
    /// the notebooks of `unrun_notebooks` left out.
    fn scan_port(
        migration: Migration,
        files: &[(&str, &[u8])],
        command: &str,
        unrun_notebooks: Vec<String>,
    ) -> Vec<Finding> {
        let dir = tempfile::tempdir().unwrap();
        for (path, body) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
        let integrity = IntegritySpec {
            forbid_imports: migration.default_forbid_imports(),
            require_imports: migration.default_require_imports(),
            ..IntegritySpec::default()
        };
        scan(
            Path::new("python3"),
            dir.path(),
            &ScanInput {
                integrity: &integrity,
                packages: &[migration.to.module().into(), "scikit-learn".into()],
                command,
                protected_modules: vec!["eval".into()],
                port: migration.to,
                unrun_notebooks,
            },
        )
        .unwrap()
    }

    const JAX_TO_TORCH: Migration = Migration {
        from: Framework::Jax,
        to: Framework::Torch,
    };

    #[test]
    fn a_port_to_pytorch_that_keeps_jax_is_found_by_every_route() {
        let found = scan_port(
            JAX_TO_TORCH,
            &[
                ("train.py", b"import torch\nimport jax.numpy as jnp\nfrom flax import linen\n"),
                ("dyn.py", b"import importlib\nm = importlib.import_module('ja' + 'x')\nd = __import__('diffrax')\n"),
                ("typed.py", b"import torch\nfrom jaxtyping import Float\n"),
                ("optax/__init__.py", b""),
            ],
            "python train.py",
            Vec::new(),
        );
        assert_eq!(
            texts(&found),
            [
                "dyn.py:2: imports forbidden module `jax` through import_module()",
                "dyn.py:3: imports forbidden module `diffrax` through __import__()",
                "optax: named after the forbidden module `optax`",
                "train.py:2: imports forbidden module `jax`",
                "train.py:3: imports forbidden module `flax`",
                "typed.py:2: imports forbidden module `jaxtyping`",
            ]
        );
        let magics = notebook(&[
            "import torch\n%pip install -q jax[cpu]==0.4.30",
            "!pip install dm-haiku\n!python -c \"import equinox\"",
        ]);
        let found = scan_port(
            JAX_TO_TORCH,
            &[("neural_cde.ipynb", &magics)],
            "python -m _xstack_notebook neural_cde.ipynb",
            Vec::new(),
        );
        assert_eq!(
            texts(&found),
            [
                "neural_cde.ipynb#cell=1:2: installs forbidden module `jax` (`%pip install -q jax[cpu]==0.4.30`)",
                "neural_cde.ipynb#cell=2:1: installs forbidden module `haiku` (`!pip install dm-haiku`)",
                "neural_cde.ipynb#cell=2:2: a shell command imports forbidden module `equinox` (`!python -c \"import equinox\"`)",
            ]
        );
    }

    #[test]
    fn a_port_to_pytorch_needs_torch_and_may_not_shadow_it() {
        let found = scan_port(
            JAX_TO_TORCH,
            &[("train.py", b"import numpy\n"), ("torch.py", b"")],
            "python train.py",
            Vec::new(),
        );
        assert_eq!(
            texts(&found),
            [
                "torch.py: shadows the installed module `torch`",
                "no migrated .py file imports any of: torch",
            ]
        );
    }

    #[test]
    fn an_untouched_notebook_nothing_runs_is_not_part_of_the_port() {
        let sibling = notebook(&["import jax\nimport diffrax"]);
        let port = notebook(&["import torch\nimport torchdiffeq"]);
        let files: [(&str, &[u8]); 2] = [
            ("docs/neural_cde.ipynb", &port),
            ("docs/neural_ode.ipynb", &sibling),
        ];
        let command = "python -m _xstack_notebook docs/neural_cde.ipynb";
        let left_out = vec!["docs/neural_ode.ipynb".to_string()];
        assert!(scan_port(JAX_TO_TORCH, &files, command, left_out).is_empty());
        assert_eq!(
            texts(&scan_port(JAX_TO_TORCH, &files, command, Vec::new())),
            [
                "docs/neural_ode.ipynb#cell=1:1: imports forbidden module `jax`",
                "docs/neural_ode.ipynb#cell=1:2: imports forbidden module `diffrax`",
            ]
        );

        let source = tempfile::tempdir().unwrap();
        let port_dir = tempfile::tempdir().unwrap();
        for (dir, cde) in [(&source, &sibling), (&port_dir, &port)] {
            std::fs::create_dir_all(dir.path().join("docs")).unwrap();
            std::fs::write(dir.path().join("docs/neural_cde.ipynb"), cde).unwrap();
            std::fs::write(dir.path().join("docs/neural_ode.ipynb"), &sibling).unwrap();
        }
        std::fs::write(port_dir.path().join("docs/extra.ipynb"), &sibling).unwrap();
        assert_eq!(
            unrun_source_notebooks(
                port_dir.path(),
                source.path(),
                Some("docs/neural_cde.ipynb")
            ),
            ["docs/neural_ode.ipynb"],
            "the run notebook, a changed notebook and a new one are all scanned"
        );
        assert_eq!(
            unrun_source_notebooks(
                port_dir.path(),
                source.path(),
                Some("docs/neural_ode.ipynb")
            ),
            Vec::<String>::new()
        );
    }

    fn texts(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(|f| f.text.clone()).collect()
    }

    #[test]
    fn faithful_ports_have_no_findings() {
        let found = scan_tree(
            &[
                (
                    "train.py",
                    b"\"\"\"Ported from the torch version; no torch here.\"\"\"\nfrom jax import numpy as jnp\nimport utils.jax as uj\nimport eval\nprint('import torch')\nx = eval.mse(1, 2)\n",
                ),
                ("utils/__init__.py", b""),
                ("utils/jax.py", b"import jax\n"),
                ("README.md", b"Run `python train.py`. The source used `import torch`.\n"),
                ("requirements.txt", b"jax\nnumpy\n"),
                ("eval.py", b"def mse(a, b):\n    return 0.0\n"),
            ],
            "python train.py",
        );
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn every_way_of_writing_an_import_is_seen_as_python_sees_it() {
        let found = scan_tree(
            &[
                (
                    "train.py",
                    b"import jax\nif True: import torch\ntry:\n    from torch import nn\nexcept ImportError:\n    pass\n",
                ),
                ("dyn.py", b"import importlib\nm = importlib.import_module('tor' + 'ch')\nn = __import__(f\"tor{'ch'}\")\n"),
                ("wide.py", "import \u{ff54}orch\n".as_bytes()),
                ("enc.py", b"# -*- coding: utf-7 -*-\nimport +AHQ-orch\n"),
                ("reference_impl.txt", b"import torch\nprint(torch.ones(2))\n"),
                ("vendor/torch/__init__.py", b""),
            ],
            "python train.py",
        );
        assert_eq!(
            texts(&found),
            [
                "dyn.py:2: imports forbidden module `torch` through import_module()",
                "dyn.py:3: imports forbidden module `torch` through __import__()",
                "enc.py:2: imports forbidden module `torch`",
                "reference_impl.txt:1: holds Python that imports forbidden module `torch`",
                "train.py:2: imports forbidden module `torch`",
                "train.py:4: imports forbidden module `torch`",
                "vendor/torch: named after the forbidden module `torch`",
                "wide.py:1: imports forbidden module `torch`",
            ]
        );
        assert!(found.iter().all(|f| f.file.is_some()));
        assert_eq!(found[0].line, Some(2));
    }

    /// A notebook of `cells` (code cells, with a markdown cell first).
    fn notebook(cells: &[&str]) -> Vec<u8> {
        let mut list = vec![serde_json::json!({
            "cell_type": "markdown", "metadata": {}, "source": ["We `import torch` in the source."]
        })];
        for source in cells {
            list.push(serde_json::json!({
                "cell_type": "code", "metadata": {}, "execution_count": null,
                "outputs": [], "source": source.split_inclusive('\n').collect::<Vec<_>>()
            }));
        }
        serde_json::to_vec(
            &serde_json::json!({"cells": list, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
        )
        .unwrap()
    }

    #[test]
    fn a_notebooks_code_cells_and_magics_are_read_and_findings_name_the_cell() {
        let port = notebook(&[
            "import jax\n%matplotlib inline\nx = 1",
            "!pip install -q torch==2.5\nimport numpy as np",
            "for i in range(2):\n    !python -c \"import torch; print(1)\"\n    from torch import nn",
            "%%bash\nconda install pytorch\necho done",
            "%run -m torch.utils.collect_env\n%run helper.py\nfiles = !ls",
            "%%time\nimport torch",
            "print('import torch is not an import')\n%pip install jax",
            "%pip install -q \\\n    torch\nfrom torch import nn",
        ]);
        let found = scan_tree(
            &[
                ("lectures/part5.ipynb", &port),
                ("helper.py", b"import jax\n"),
            ],
            "python -m _xstack_notebook lectures/part5.ipynb",
        );
        assert_eq!(
            texts(&found),
            [
                "lectures/part5.ipynb#cell=2:1: installs forbidden module `torch` (`!pip install -q torch==2.5`)",
                "lectures/part5.ipynb#cell=3:2: a shell command imports forbidden module `torch` (`!python -c \"import torch; print(1)\"`)",
                "lectures/part5.ipynb#cell=3:3: imports forbidden module `torch`",
                "lectures/part5.ipynb#cell=4:2: installs forbidden module `torch` (`!conda install pytorch`)",
                "lectures/part5.ipynb#cell=5:1: runs forbidden module `torch` (`%run -m torch.utils.collect_env`)",
                "lectures/part5.ipynb#cell=6:2: imports forbidden module `torch`",
                "lectures/part5.ipynb#cell=8:1: installs forbidden module `torch` (`%pip install -q torch`)",
                "lectures/part5.ipynb#cell=8:3: imports forbidden module `torch`",
            ]
        );
        assert!(
            found
                .iter()
                .all(|f| f.file.as_deref() == Some("lectures/part5.ipynb")),
            "{found:#?}"
        );
        // A faithful notebook port: its `import jax` counts as the required import.
        let faithful = notebook(&["import jax\n%matplotlib inline\n!echo hi", "x = !ls"]);
        let found = scan_tree(
            &[("part5.ipynb", &faithful)],
            "python -m _xstack_notebook part5.ipynb",
        );
        assert!(found.is_empty(), "{found:#?}");
        assert_eq!(
            path_dirs("python -m _xstack_notebook 'lectures/make more/part5.ipynb'"),
            ["", "lectures/make more"]
        );
    }

    #[test]
    fn shadowing_only_where_a_name_can_shadow() {
        let found = scan_tree(
            &[
                ("src/train.py", b"import jax\n"),
                ("src/jax.py", b""),
                ("sklearn/__init__.py", b""),
                ("lib/numpy.py", b""),
                ("sitecustomize.py", b""),
                ("tools/sitecustomize.py", b""),
            ],
            "python src/train.py",
        );
        assert_eq!(
            texts(&found),
            [
                "sitecustomize.py: runs code at every Python start-up",
                "sklearn/: shadows the installed package `sklearn`",
                "src/jax.py: shadows the installed module `jax`",
            ]
        );
        assert!(found.iter().all(|f| f.kind == FindingKind::Shadowing));
    }

    #[test]
    fn replacing_a_protected_function_is_found_and_a_missing_jax_import_too() {
        let found = scan_tree(
            &[
                ("train.py", b"import numpy\nimport eval as E\nE.mse = lambda a, b: 0.0\nsetattr(E, 'report', print)\nimport sys\nsys.modules['eval'] = None\n"),
                ("eval.py", b"def mse(a, b):\n    return 1.0\n"),
            ],
            "python train.py",
        );
        assert_eq!(
            texts(&found),
            [
                "train.py:3: replaces `E.mse` of the protected module `eval`",
                "train.py:4: changes the protected module `eval` at run time (setattr)",
                "train.py:6: replaces the protected module `eval` in sys.modules",
                "no migrated .py file imports any of: jax",
            ]
        );
        assert_eq!(found[3].kind, FindingKind::MissingImport);
    }

    #[test]
    fn a_symlink_out_of_the_workspace_is_reported_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("a.py"), "").unwrap();
        std::os::unix::fs::symlink(ws.join("a.py"), ws.join("inside.py")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", ws.join("out.txt")).unwrap();
        let found = symlinks_out(&ws);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, FindingKind::SymlinkOut);
        assert_eq!(
            found[0].text,
            "out.txt -> /etc/passwd: a symlink out of the workspace"
        );
    }
}

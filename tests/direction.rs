//! The direction of a migration (SPEC §2c) end to end with the real binary: a JAX source
//! (`tests/tasks/jax-notebook`) whose faithful port passes beside an untouched sibling
//! notebook that imports JAX, whose port that keeps JAX (through `importlib`, a plain import
//! and a notebook magic) is a bypass naming each, with the direction in `result.json` and
//! the journal; a task with `from = to` or an unknown framework refused naming the key; and
//! `xstack init` proposing a JAX source from the experiment's imports, `--from` overriding.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Stdio;

use common::*;

const TASK: &str = "tests/tasks/jax-notebook";

/// `xstack grade TASK --repo PORT --headless`: the exit status, the run folder and the
/// output.
fn grade(port: &Path, runs: &Path) -> (Option<i32>, std::path::PathBuf, String) {
    let out = run(&[
        "grade",
        root().join(TASK).to_str().unwrap(),
        "--repo",
        port.to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    (out.status.code(), only_run_dir(runs), text(&out))
}

/// A notebook of code cells.
fn notebook(cells: &[&str]) -> String {
    let cells: Vec<serde_json::Value> = cells
        .iter()
        .map(|source| {
            serde_json::json!({
                "cell_type": "code", "metadata": {}, "execution_count": null, "outputs": [],
                "source": source.split_inclusive('\n').collect::<Vec<_>>()
            })
        })
        .collect();
    serde_json::json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        .to_string()
}

#[test]
fn a_jax_source_is_ported_to_pytorch_and_graded_that_way() {
    let before = tree_hash(&root().join(TASK));
    let oracle = tempfile::tempdir().unwrap();
    oracle_into(&root().join(TASK), oracle.path());
    let runs = tempfile::tempdir().unwrap();
    let (code, run_dir, out) = grade(oracle.path(), runs.path());
    // The untouched sibling notebook imports jax, diffrax and equinox: not part of the port.
    assert_eq!(code, Some(0), "{out}");
    let passed = result(&run_dir);
    assert_eq!(
        passed["migration"],
        serde_json::json!({"from": "jax", "to": "torch"})
    );
    let events = journal_events(&run_dir);
    let task = events
        .iter()
        .find(|e| e["type"] == "task")
        .expect("a task event");
    assert_eq!(
        task["migration"],
        serde_json::json!({"from": "jax", "to": "torch"})
    );

    // A port that keeps JAX, three ways: each is a finding naming its cell and `jax`.
    let kept = tempfile::tempdir().unwrap();
    oracle_into(&root().join(TASK), kept.path());
    std::fs::write(
        kept.path().join("train.ipynb"),
        notebook(&[
            "import importlib\njnp = importlib.import_module(\"jax\").numpy",
            "import jax.numpy as jnp",
            "%pip install -q jax[cpu]",
            "print('final loss 0.015625')",
        ]),
    )
    .unwrap();
    let runs = tempfile::tempdir().unwrap();
    let (code, run_dir, out) = grade(kept.path(), runs.path());
    assert_eq!(code, Some(1), "{out}");
    let phase = &result(&run_dir)["phases"][0];
    assert_eq!(phase["failure"], "bypass", "{out}");
    let findings: Vec<&str> = phase["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    let mut checked = 0;
    for expected in [
        "train.ipynb#cell=0:2: imports forbidden module `jax` through import_module()",
        "train.ipynb#cell=1:1: imports forbidden module `jax`",
        "train.ipynb#cell=2:1: installs forbidden module `jax` (`%pip install -q jax[cpu]`)",
    ] {
        assert!(findings.contains(&expected), "{expected}: {findings:#?}");
        checked += 1;
    }
    assert_eq!(checked, 3);
    assert_eq!(
        tree_hash(&root().join(TASK)),
        before,
        "the task folder was written"
    );
}

#[test]
fn a_migration_to_its_own_framework_or_an_unknown_one_is_refused() {
    let mut checked = 0;
    for (migration, named) in [
        ("from = \"torch\"\nto = \"torch\"", "field `migration`"),
        ("from = \"tensorflow\"", "field `migration.from`"),
        ("to = \"mlx\"", "field `migration.to`"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("jax-notebook");
        overlay(&root().join(TASK), &dir);
        let toml = std::fs::read_to_string(dir.join("task.toml")).unwrap();
        let toml = toml.replace("from = \"jax\"\nto = \"torch\"", migration);
        std::fs::write(dir.join("task.toml"), toml).unwrap();
        let out = run(&["check", dir.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(named), "{named}: {}", text(&out));
        checked += 1;
    }
    assert_eq!(checked, 3);
}

#[test]
fn init_proposes_a_jax_source_from_its_imports_and_from_overrides_it() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repos").join("rnn");
    std::fs::create_dir_all(&repo).unwrap();
    // The experiment's model imports JAX inside a function the run never calls: the run needs
    // no JAX here, and its imports still say what the repository is written in.
    std::fs::write(
        repo.join("train.py"),
        "import os\nfrom model import build\n\nseed = int(os.environ.get('XSTACK_SEED', '0'))\nprint(f'test_acc={0.9 + seed / 1000:.4f}')\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("model.py"),
        "def build():\n    import equinox as eqx\n    return eqx\n",
    )
    .unwrap();
    let tasks = tmp.path().join("tasks");
    let init = |extra: &[&str]| {
        xstack()
            .env("XSTACK_TASKS_DIR", &tasks)
            .env("XSTACK_CACHE_DIR", tmp.path().join("cache"))
            .arg("init")
            .arg(&repo)
            .args([
                "--yes",
                "--command",
                "python3 train.py",
                "--reference-packages",
                "none",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = init(&["--id", "rnn-jax"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("direction: JAX → PyTorch (The experiment imports JAX (model.py)"),
        "{}",
        text(&out)
    );
    let toml = std::fs::read_to_string(tasks.join("rnn-jax/task.toml")).unwrap();
    assert!(
        toml.contains("[migration]\nfrom = \"jax\"\nto = \"torch\"\n"),
        "{toml}"
    );
    let task = xstack::task::Task::load(&tasks.join("rnn-jax")).unwrap();
    assert_eq!(task.spec.env.packages, ["torch"]);
    assert_eq!(task.spec.integrity.require_imports, ["torch"]);
    assert!(
        task.spec
            .integrity
            .forbid_imports
            .iter()
            .any(|m| m == "equinox")
    );

    let out = init(&["--id", "rnn-torch", "--from", "torch"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let toml = std::fs::read_to_string(tasks.join("rnn-torch/task.toml")).unwrap();
    assert!(
        toml.contains("# From --from.\n[migration]\nfrom = \"torch\"\nto = \"jax\"\n"),
        "{toml}"
    );
}

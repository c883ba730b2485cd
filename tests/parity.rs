//! The numeric parity probe (SPEC §3a) end to end: every task from a public repository has
//! one (each real task's probe runs in `tests/catalog.rs`, `scripts/catalog`: half a minute to
//! minutes each); each synthetic task's demo phase 1 names the tensor where that demo's
//! pitfall shows first, and the oracle's probe matches everywhere; a probe that crashes or
//! never writes its file is reported as such, and after a failed grade the probe explains the
//! verdict without changing it.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::parity::{check_bundled, phase1, port_of};
use common::*;

/// `xstack parity TASK --repo PORT --json`: the exit status, the report and the output.
fn parity(task: &Path, port: &Path) -> (Option<i32>, serde_json::Value, String) {
    let out = run(&[
        "parity",
        task.to_str().unwrap(),
        "--repo",
        port.to_str().unwrap(),
        "--json",
    ]);
    let report = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), report, text(&out))
}

#[test]
fn digits_cnn_bn_diverges_first_in_the_batchnorm_running_mean() {
    check_bundled("digits-cnn-bn", phase1("bn1.running_mean"));
}

#[test]
fn char_transformer_diverges_first_in_the_attention_output() {
    check_bundled("char-transformer", phase1("block0.attn"));
}

#[test]
fn adamw_cosine_diverges_first_in_the_weights_after_the_second_step() {
    check_bundled("adamw-cosine", phase1("step2.0.weight"));
}

/// Every bundled task made from a public repository (an `[upstream]` table, its source a
/// folder of the task) has a probe: a `[parity]` section, and the script its command names in
/// the oracle, the port's side (the source's side is checked by each task's own test above or
/// in `tests/catalog.rs`).
#[test]
fn every_real_task_has_a_parity_probe() {
    let mut real = Vec::new();
    for dir in xstack::task::discover(&root().join("tasks")) {
        let task = xstack::task::Task::load(&dir).unwrap();
        if task.spec.upstream.is_none() || !matches!(task.source, xstack::task::Source::Path(_)) {
            continue;
        }
        let id = task.spec.id.clone();
        let parity = task
            .spec
            .parity
            .as_ref()
            .unwrap_or_else(|| panic!("{id}: no [parity]"));
        let script = parity.command.split_whitespace().nth(1).unwrap();
        let oracle = port_of(&dir, &["solution"]);
        assert!(
            oracle.path().join(script).is_file(),
            "{id}: the oracle has no {script}, the port's side of `{}`",
            parity.command
        );
        real.push(id);
    }
    assert!(real.len() >= 10, "{real:?}");
}

/// A copy of the `jsonl-protected` test task with `parity` as its `[parity]` section
/// (None: without one).
fn jsonl_task(parity: Option<&str>) -> tempfile::TempDir {
    let root_dir = tempfile::tempdir().unwrap();
    let task = root_dir.path().join("jsonl-protected");
    overlay(&root().join("tests/tasks/jsonl-protected"), &task);
    if let Some(parity) = parity {
        let file = task.join("task.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, format!("{text}\n[parity]\n{parity}\n")).unwrap();
    }
    root_dir
}

/// A probe that writes a plain `numpy.savez` archive on the source's side and fails with
/// exit status 4 on the port's.
const PORT_CRASHES: &str = r#"command = '''python -c "
import os, sys, numpy as np
if 'XSTACK_PARITY_IN' in os.environ:
    sys.exit('the port probe broke')
np.savez(os.environ['XSTACK_PARITY_OUT'], w=np.zeros(3))
"'''"#;

#[test]
fn a_probe_that_crashes_or_writes_nothing_is_reported_as_such() {
    let cases = [
        (
            PORT_CRASHES,
            "the port's probe failed (exit 1): the port probe broke and wrote no file (XSTACK_PARITY_OUT)",
        ),
        (
            "command = \"true\"",
            "the source's probe wrote no file (XSTACK_PARITY_OUT)",
        ),
        (
            "command = \"echo source broke; exit 3\"",
            "the source's probe failed (exit 3): source broke",
        ),
        (
            "command = \"sleep 30\"\ntimeout_s = 1",
            "the source's probe timed out after 1 s",
        ),
    ];
    let mut checked = 0;
    for (section, error) in cases {
        let dir = jsonl_task(Some(section));
        let task = dir.path().join("jsonl-protected");
        let port = port_of(&task, &["solution"]);
        let (code, report, out) = parity(&task, port.path());
        assert_eq!(code, Some(3), "{section}:\n{out}");
        assert_eq!(report["error"], error, "{out}");
        assert_eq!(report["passed"], false);
        assert_eq!(report["compared"], 0);
        checked += 1;
    }
    assert_eq!(checked, 4);
}

#[test]
fn a_task_without_parity_is_a_usage_error() {
    let dir = jsonl_task(None);
    let task = dir.path().join("jsonl-protected");
    let (code, _, out) = parity(&task, &task.join("repo"));
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("task.toml: the task has no [parity] section"),
        "{out}"
    );
}

#[test]
fn after_a_fidelity_gap_the_probe_explains_and_the_verdict_stays() {
    let dir = jsonl_task(Some("command = \"echo probe broke; exit 5\""));
    let task = dir.path().join("jsonl-protected");
    let port = port_of(&task, &["solution", "agents/files/gap_then_pass/phase1"]);
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "grade",
        task.to_str().unwrap(),
        "--repo",
        port.path().to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let run_dir = only_run_dir(runs.path());
    let phase = &result(&run_dir)["phases"][0];
    assert_eq!(phase["verdict"], "fail");
    assert_eq!(phase["failure"], "fidelity_gap");
    assert_eq!(
        phase["parity"]["error"],
        "the source's probe failed (exit 5): probe broke"
    );
    assert!(
        text(&out).contains("phase 1 parity probe could not run: the source's probe failed"),
        "{}",
        text(&out)
    );
    // The journal carries the report: a replay rebuilds it.
    let events = journal_events(&run_dir);
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "parity" && e["phase"] == 1)
            .count(),
        1,
        "{events:?}"
    );
}

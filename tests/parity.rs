//! The numeric parity probe (SPEC §3a) end to end: `xstack parity` on each bundled task's
//! demo phase 1 names the tensor where that demo's pitfall shows first, and the oracle's
//! probe matches everywhere; a probe that crashes or never writes its file is reported as
//! such, and after a failed grade the probe explains the verdict without changing it.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::*;

/// `xstack parity TASK --repo PORT --json`: the exit status and the report.
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

/// The port made of the task's `repo/` with `layers` (folders of the task) laid over it.
fn port_of(task: &Path, layers: &[&str]) -> tempfile::TempDir {
    let port = tempfile::tempdir().unwrap();
    overlay(&task.join("repo"), port.path());
    for layer in layers {
        overlay(&task.join(layer), port.path());
    }
    port
}

/// Runs the demo's phase-1 port and the oracle through `xstack parity`: the demo diverges
/// first at `expected` (exit 1), the oracle matches every tensor (exit 0), and neither the
/// task folder nor the ports are written.
fn check_bundled(id: &str, expected: &str) {
    let task = root().join("tasks").join(id);
    let before = tree_hash(&task);

    let phase1 = port_of(&task, &["demo/phase1"]);
    let phase1_before = tree_hash(phase1.path());
    let (code, report, out) = parity(&task, phase1.path());
    assert_eq!(code, Some(1), "{id}: the demo's phase 1:\n{out}");
    assert_eq!(report["error"], serde_json::Value::Null, "{id}: {out}");
    assert_eq!(report["first_divergent"]["name"], expected, "{id}: {out}");
    let tensors = report["tensors"].as_array().unwrap();
    let first = tensors.iter().position(|t| t["name"] == expected).unwrap();
    assert!(
        tensors[..first].iter().all(|t| t["passed"] == true),
        "{id}: a tensor before {expected} fails: {out}"
    );
    assert_eq!(tensors[first]["passed"], false);
    assert!(
        tensors[first]["port_location"]["file"] == "probe.py",
        "{id}: the port's location is recorded: {out}"
    );
    assert_eq!(
        tree_hash(phase1.path()),
        phase1_before,
        "{id}: the port was written"
    );

    let oracle = port_of(&task, &["solution"]);
    let (code, report, out) = parity(&task, oracle.path());
    assert_eq!(code, Some(0), "{id}: the oracle:\n{out}");
    assert_eq!(report["passed"], true, "{id}: {out}");
    assert_eq!(report["compared"], tensors.len(), "{id}: {out}");
    assert_eq!(
        tree_hash(&task),
        before,
        "{id}: the task folder was written"
    );
}

#[test]
fn digits_cnn_bn_diverges_first_in_the_batchnorm_running_mean() {
    check_bundled("digits-cnn-bn", "bn1.running_mean");
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

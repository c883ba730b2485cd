//! The numeric parity probe (SPEC §3a) end to end: each bundled task's demo phase 1 names
//! the tensor where that demo's pitfall shows first, and the oracle's probe matches
//! everywhere; a probe that crashes or never writes its file is reported as
//! such, and after a failed grade the probe explains the verdict without changing it.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

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

/// The port made of the task's source with `layers` (folders of the task; `solution`: the
/// oracle's folders, `[solution] base` first) laid over it.
fn port_of(task: &Path, layers: &[&str]) -> tempfile::TempDir {
    let loaded = xstack::task::Task::load(task).unwrap();
    let port = tempfile::tempdir().unwrap();
    overlay(loaded.source_path().unwrap(), port.path());
    for layer in layers {
        if *layer == "solution" {
            for folder in loaded.solution_layers() {
                overlay(&folder, port.path());
            }
        } else {
            overlay(&task.join(layer), port.path());
        }
    }
    port
}

/// What the demo's phase-1 port is and where its probe diverges first.
struct Phase1 {
    /// The task's folders laid over `repo/`, in order, to make the port.
    layers: &'static [&'static str],
    /// The first divergent tensor.
    first: &'static str,
    /// Where the port records it (file, line); None: anywhere in `probe.py`.
    at: Option<(&'static str, u32)>,
    /// Its largest absolute error, when the test pins it (an integer tensor's is exact).
    max_abs: Option<f64>,
}

/// A demo whose phase 1 writes `demo/phase1/` and diverges first at `first`, which its
/// `probe.py` records.
fn phase1(first: &'static str) -> Phase1 {
    Phase1 {
        layers: &["demo/phase1"],
        first,
        at: None,
        max_abs: None,
    }
}

/// Runs the task's probe in its source once, then in the demo's phase-1 port and in the
/// oracle (the library's `run_source` and `run_port`, as `xstack parity` runs them, sharing
/// one source run): the demo diverges first at `expected`, every tensor before it matching,
/// the oracle matches every tensor, and the task folder is not written.
fn check_bundled(id: &str, demo: Phase1) {
    let expected = demo.first;
    use std::sync::atomic::AtomicBool;
    use xstack::parity::{ProbePlan, ProbeSide, run_port, run_source};

    let dir = root().join("tasks").join(id);
    let before = tree_hash(&dir);
    let task = xstack::task::Task::load(&dir).unwrap();
    let cache = xstack::env::cache_dir();
    let reference =
        xstack::env::ensure(&cache, &task.spec.env.reference_packages, &mut |_| {}).unwrap();
    let target = xstack::env::ensure(&cache, &task.spec.env.packages, &mut |_| {}).unwrap();
    xstack::grade::audit::install(&target.as_ref().unwrap().dir).unwrap();
    let source_dir = task.source_path().unwrap().to_path_buf();
    let source_before = tree_hash(&source_dir);
    let scratch = tempfile::tempdir().unwrap();
    let source_copy = scratch.path().join("source");
    let layers = task.parity_source_layers(&source_dir);
    xstack::workspace::copy_layers(&layers, &source_copy).unwrap();
    let phase1 = port_of(&dir, demo.layers);
    let oracle = port_of(&dir, &["solution"]);
    let mut plan = ProbePlan::for_task(
        &task,
        ProbeSide {
            dir: source_copy,
            env: reference,
            forbid: Vec::new(),
        },
        ProbeSide {
            dir: phase1.path().to_path_buf(),
            env: target,
            forbid: task.spec.integrity.forbid_imports.clone(),
        },
        0,
        None,
        scratch.path().join("out"),
        (120, 36),
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cancel = AtomicBool::new(false);
    let mut output = String::new();
    let source = runtime
        .block_on(run_source(&plan, &cancel, &mut |t| output.push_str(t)))
        .unwrap_or_else(|report| panic!("{id}: {report:?}\n{output}"));

    let report = runtime.block_on(run_port(&plan, &source, &cancel, &mut |t| {
        output.push_str(t)
    }));
    let text = xstack::parity::render_text(&report);
    assert_eq!(
        report.error, None,
        "{id}: the demo's phase 1:\n{text}\n{output}"
    );
    let first = report.first_divergent.as_ref().unwrap();
    assert_eq!(first.name, expected, "{id}:\n{text}");
    let at = report
        .tensors
        .iter()
        .position(|t| t.name == expected)
        .unwrap();
    assert!(
        report.tensors[..at].iter().all(|t| t.passed),
        "{id}: a tensor before {expected} fails:\n{text}"
    );
    if let Some(max_abs) = demo.max_abs {
        assert_eq!(first.max_abs, Some(max_abs), "{id}:\n{text}");
    }
    let location = report.tensors[at].port_location.as_ref().unwrap();
    match demo.at {
        None => assert_eq!(location.file, "probe.py", "{id}: where:\n{text}"),
        Some((file, line)) => assert_eq!(
            (location.file.as_str(), location.line),
            (file, line),
            "{id}: where the port computes it:\n{text}"
        ),
    }

    plan.port.dir = oracle.path().to_path_buf();
    let report = runtime.block_on(run_port(&plan, &source, &cancel, &mut |t| {
        output.push_str(t)
    }));
    let text = xstack::parity::render_text(&report);
    assert!(report.passed, "{id}: the oracle:\n{text}\n{output}");
    assert_eq!(report.compared, source.tensors.len(), "{id}:\n{text}");
    assert_eq!(tree_hash(&dir), before, "{id}: the task folder was written");
    assert_eq!(
        tree_hash(&source_dir),
        source_before,
        "{id}: the source was written"
    );
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

/// nanoGPT's demo ports model.py, sample.py, bench.py and probe.py as the oracle does and
/// train.py with a JAX key that is never split: the probe's first wrong number is how many
/// different windows eight calls of get_batch draw (an integer: 4 against the source's 32),
/// recorded at the port's `def get_batch`.
#[test]
fn nanogpt_diverges_first_in_the_batch_sampling() {
    check_bundled(
        "nanogpt-shakespeare-char",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "batch.train.distinct_windows",
            at: Some(("train.py", 92)),
            max_abs: Some(28.0),
        },
    );
}

/// SGC's demo ports Adam(weight_decay=…) as optax.adamw: the first wrong numbers are the
/// weights after the first training step, recorded at the port's `def train_regression`.
#[test]
fn sgc_cora_diverges_first_in_the_weights_after_one_step() {
    check_bundled(
        "sgc-cora",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "step1.W.weight",
            at: Some(("citation.py", 46)),
            max_abs: None,
        },
    );
}

#[test]
fn sgc_citeseer_diverges_first_in_the_weights_after_one_step() {
    check_bundled(
        "sgc-citeseer",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "step1.W.weight",
            at: Some(("citation.py", 46)),
            max_abs: None,
        },
    );
}

/// mlp's demo computes the cosine schedule but never hands it to the optimizer: every tensor
/// of the one-step run matches, and the first wrong one is the learning rate applied in the
/// three-step run.
#[test]
fn mlp_ngram_diverges_first_in_the_learning_rate_applied() {
    check_bundled(
        "mlp-ngram",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "steps3.optimizer.lr",
            at: Some(("mlp_pytorch.py", 188)),
            max_abs: None,
        },
    );
}

/// makemore's demo takes optax's cross-entropy over every position: the `-1` padding targets
/// count, and the first wrong number is the loss, recorded in the port's forward.
#[test]
fn makemore_diverges_first_in_the_loss() {
    check_bundled(
        "makemore",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "loss",
            at: Some(("makemore.py", 150)),
            max_abs: None,
        },
    );
}

/// equinox's train_rnn, a JAX source (the probe records in JAX; the port's in PyTorch): the
/// demo leaves torch's nn.GRU time-major; the data, the weights it loads match, and the first
/// wrong numbers are the hidden states the classifier reads.
#[test]
fn equinox_train_rnn_diverges_first_in_the_last_hidden_state() {
    check_bundled(
        "equinox-train-rnn",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "hidden.last",
            at: None,
            max_abs: None,
        },
    );
}

/// diffrax's neural ODE, a JAX source: the demo trains both stages on the whole series; the
/// data, the vector field, the solutions, the loss, its gradients and two AdaBelief steps
/// match, and the first wrong numbers are the series' lengths main's data loader is given
/// (100 and 100 against the source's 10 and 100).
#[test]
fn diffrax_neural_ode_diverges_first_in_the_length_curriculum() {
    check_bundled(
        "diffrax-neural-ode",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "curriculum.lengths",
            at: None,
            max_abs: Some(90.0),
        },
    );
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

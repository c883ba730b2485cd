//! The numeric parity probe (SPEC §3a) end to end: every task from a public repository has
//! one; each bundled task's demo phase 1 names the tensor where that demo's pitfall shows
//! first, and the oracle's probe matches everywhere (diffrax's neural CDE's and neural ODE's,
//! probes of about two minutes, in `tests/catalog.rs`); a probe that crashes or never writes
//! its file is reported as such, and after a failed grade the probe explains the verdict
//! without changing it.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::parity::{Phase1, check_bundled, phase1, port_of};
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

/// google-deepmind/educational's jraph karate club, a JAX/Haiku/jraph source: the demo
/// writes jraph.segment_softmax as one softmax over all 190 edges; the graph, both networks'
/// weights it loads and everything of the GCN match, and the first wrong numbers are the
/// attention weights of the GAT's first layer (about 1/190 each against a softmax over each
/// node's incoming edges).
#[test]
fn jraph_karate_club_diverges_first_in_the_gat_attention() {
    check_bundled(
        "jraph-karate-club",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "gat.layer1.attention",
            at: None,
            max_abs: None,
        },
    );
}

/// makemore part 5's notebook, a PyTorch source whose probe runs four steps of its training
/// cell (0, 1, 149999, 150000): the demo keeps the learning rate at 0.1 throughout; the data,
/// the batches, the logits, the gradients and the first three steps match, and the first wrong
/// number is the learning rate the step-150,000 update applies (0.1 against 0.01). The source's
/// first cell holds `%matplotlib inline`, which the helper's `notebook_namespace` leaves out.
#[test]
fn makemore_cnn_diverges_first_in_the_learning_rate_at_step_150000() {
    check_bundled(
        "makemore-cnn",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "step150000.lr",
            at: None,
            max_abs: None,
        },
    );
}

/// makemore part 3's notebook, a PyTorch source whose probe runs four steps of its training
/// cell (0, 1, 99999, 100000): the demo reads the gradient with `(loss, _)` and so discards the
/// running statistics its forward pass returns; the data, the batches, the batch statistics,
/// the loss, the gradients, the learning rate and the parameters after the first step match,
/// and the first wrong number is the running mean after it (still the initial zeros against
/// 0.001 times the batch's mean).
#[test]
fn makemore_part3_bn_diverges_first_in_the_running_mean_after_step_0() {
    check_bundled(
        "makemore-part3-bn",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "step0.running.bnmean_running",
            at: None,
            max_abs: None,
        },
    );
}

/// cleanrl's dqn_jax.py, a JAX source whose probe runs the script itself for 1,500 steps: the
/// demo picks the taken action's Q-value with `gather(1, actions)` and no squeeze, so the
/// (batch, 1) values broadcast against the (batch,) targets; the initial weights and every
/// episode before learning starts match, and the first wrong number is the first update's
/// loss.
#[test]
fn cleanrl_dqn_jax_cartpole_diverges_first_in_the_first_updates_loss() {
    check_bundled(
        "cleanrl-dqn-jax-cartpole",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "td_loss.1100",
            at: None,
            max_abs: None,
        },
    );
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

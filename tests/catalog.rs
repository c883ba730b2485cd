//! The catalog's full check of the real tasks whose runs take minutes (`scripts/catalog`
//! runs it, with the bench of every real task's demo; `docs/TESTING.md` gives its time
//! and last result). Built only with the `catalog` feature, so the per-commit suite
//! (`scripts/test`) does not run it; `.ci/run`'s clippy builds it, so it keeps compiling.
//!
//! The bench shows each demo failing phase 1 as a `fidelity_gap` and passing phase 2 on the
//! oracle's files (the script compares them); here, every real task's parity probe (half a
//! minute to minutes each; `tests/parity.rs` has the synthetic tasks'),
//! each source in its reference environment lands inside its task's tolerance (nanoGPT's,
//! makemore-cnn's and diffrax's neural ODE's through `init` on the snapshot, whose run of the
//! untouched source also shows `init` finding the task's criterion and claim), and each
//! held-out port (`tests/heldout/TASK/PORT/`: public code nobody on the team wrote, with its
//! licence and a `PROVENANCE.md`) is graded as its numbers say.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::oracle::*;
use common::parity::{Phase1, check_bundled};
use common::upstream::init_jax_notebook;
use common::*;
use xstack::metrics::parse_log;
use xstack::task::{ClaimStatus, Task};

/// nanoGPT's CPU command, as its README gives it.
const NANOGPT_COMMAND: &str = "python train.py config/train_shakespeare_char.py --device=cpu --compile=False --eval_iters=20 --log_interval=1 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0";

/// EurekaLabsAI/mlp, unmodified: the source lands inside 2.06 ± 0.005.
#[test]
fn source_within_tolerance_mlp_ngram() {
    check_source_within_tolerance("mlp-ngram", &bundled("mlp-ngram"));
}

/// karpathy/makemore at 2,000 steps, unmodified: the source lands inside its measured
/// tolerance.
#[test]
fn source_within_tolerance_makemore() {
    check_source_within_tolerance("makemore", &bundled("makemore"));
}

/// cleanrl's dqn_jax.py on CartPole-v1, unmodified (500,000 steps, 4 to 9 minutes here): the
/// source in its reference environment lands inside both criteria (the last 50,000 steps'
/// mean return at least 350, every return's mean within 122.32 ± 8.0).
#[test]
fn source_within_tolerance_cleanrl_dqn_jax_cartpole() {
    check_source_within_tolerance(
        "cleanrl-dqn-jax-cartpole",
        &bundled("cleanrl-dqn-jax-cartpole"),
    );
}

/// cleanrl's dqn.py on CartPole-v1, unmodified: the source in its reference environment
/// lands inside both criteria, and the untouched source, graded as the agent's workspace
/// starts (its JAX twin left out), is a `bypass` (no JAX import) after its full run.
#[test]
fn source_within_tolerance_cleanrl_dqn_cartpole() {
    let task = bundled("cleanrl-dqn-cartpole");
    check_source_within_tolerance("cleanrl-dqn-cartpole", &task);
    check_source_is_a_bypass("cleanrl-dqn-cartpole", &task);
}

/// google-deepmind/educational's jraph tutorial cut before its downloads, about two minutes:
/// the source (JAX, Haiku, jraph at their pinned versions) prints the GAT's last accuracy
/// inside 0.97 - 0.065 (it prints 0.97 with its own PRNGKey(42)).
#[test]
fn source_within_tolerance_jraph_karate_club() {
    check_source_within_tolerance("jraph-karate-club", &bundled("jraph-karate-club"));
}

/// makemore part 3's notebook, unmodified, top to bottom (its 200,000 PyTorch steps, 30 to 50
/// minutes on the loaded 2-core machine, then the deeper network's 1,001 steps and the bonus
/// cells): cell 10's train and val losses land inside 2.0674 and 2.1057 ± 0.021 (the notebook
/// fixes its generator's seed, so the run is the committed one).
#[test]
fn source_within_tolerance_makemore_part3_bn() {
    check_source_within_tolerance("makemore-part3-bn", &bundled("makemore-part3-bn"));
}

/// equinox's mnist notebook, a JAX source, unmodified (300 steps; this test 166 s at load 10,
/// a source run 393 to 480 s at load 30):
/// its test accuracy at step 299 lands inside 0.9040 ± 0.03 (the loaders' shuffle is
/// unseeded, so every run draws another batch order).
#[test]
fn source_within_tolerance_equinox_mnist() {
    check_source_within_tolerance("equinox-mnist", &bundled("equinox-mnist"));
}

/// The notebook's 200,000 PyTorch steps, about 10 minutes: `xstack init --notebook`
/// on the unmodified snapshot writes a notebook task whose criterion is the val loss, finds
/// the published 1.993 (or the printed 1.99365) in the notebook and authenticates it, leaves
/// the repository as it was; and that run of the untouched source in the reference
/// environment lands inside the bundled task's tolerance.
#[test]
fn init_on_the_makemore_cnn_notebook_and_the_source_within_tolerance() {
    let id = "makemore-cnn";
    let bundled = Task::load(&root().join("tasks").join(id)).unwrap();
    let notebook = bundled.spec.run.notebook.clone().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("zero-to-hero");
    overlay(&bundled.dir.join("repo"), &repo);
    let before = tree_hash(&repo);
    let tasks = tmp.path().join("tasks");
    let out = xstack()
        .env("XSTACK_TASKS_DIR", &tasks)
        .arg("init")
        .arg(&repo)
        .args([
            "--yes",
            "--notebook",
            &notebook,
            "--setup",
            bundled.spec.env.setup.as_deref().unwrap(),
            "--reference-packages",
            "torch",
            "numpy",
            "matplotlib",
            "--packages",
            "jax",
            "numpy",
            "matplotlib",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert_eq!(tree_hash(&repo), before, "init wrote into the repository");
    let made = Task::load(&tasks.join("zero-to-hero")).unwrap();
    assert_eq!(made.spec.run.notebook.as_deref(), Some(notebook.as_str()));
    assert_eq!(made.spec.run.command, bundled.spec.run.command);
    let written = std::fs::read_to_string(made.dir.join("task.toml")).unwrap();
    assert!(
        written.contains(&format!("notebook = \"{notebook}\"")) && !written.contains("command ="),
        "{written}"
    );
    assert_eq!(made.spec.criteria.len(), 1, "{:?}", made.spec.criteria);
    let criterion = &made.spec.criteria[0];
    assert_eq!(criterion.metric, "val");
    let claim = criterion.claim.as_ref().expect("a claim");
    let location = claim.location.as_deref().unwrap_or_default();
    assert!(
        location.starts_with(&format!("{notebook}#cell=1")),
        "the claim is the notebook's own (cell 13's output or cell 14's log): {claim:?}"
    );
    assert_eq!(claim.status, ClaimStatus::Reproduced, "{claim:?}");

    // The untouched source, run in the reference environment, is inside the tolerance.
    let log = std::fs::read_to_string(made.dir.join("reference.log")).unwrap();
    assert_within_tolerance(id, &bundled, &log);
}

/// A real PyTorch run of nanoGPT, minutes: `xstack init` on the unmodified snapshot
/// (the task's `repo/`) with the README's command finds the val loss, points at the seed the
/// source fixes and never claims XSTACK_SEED; the definitions it writes read the same curve
/// as the bundled task's; and that run of the untouched source in the reference environment
/// lands inside the bundled task's tolerance.
#[test]
fn init_on_the_nanogpt_snapshot_and_the_source_within_tolerance() {
    let id = "nanogpt-shakespeare-char";
    let bundled = Task::load(&root().join("tasks").join(id)).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("nanoGPT");
    overlay(&bundled.dir.join("repo"), &repo);
    let before = tree_hash(&repo);
    let tasks = tmp.path().join("tasks");
    let setup = bundled.spec.env.setup.clone().unwrap();
    let out = xstack()
        .env("XSTACK_TASKS_DIR", &tasks)
        .arg("init")
        .arg(&repo)
        .args([
            "--yes",
            "--command",
            NANOGPT_COMMAND,
            "--setup",
            &setup,
            "--reference-packages",
        ])
        .args(&bundled.spec.env.reference_packages)
        .arg("--packages")
        .args(&bundled.spec.env.packages)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let fixed = "`torch.manual_seed(1337 + seed_offset)` at train.py:106";
    assert!(
        all.contains(&format!(
            "seed: the source does not read XSTACK_SEED; fixes a seed: {fixed}"
        )),
        "{all}"
    );
    assert_eq!(tree_hash(&repo), before, "init wrote into the repository");

    let made = Task::load(&tasks.join("nanogpt")).unwrap();
    assert_eq!(made.spec.run.command, bundled.spec.run.command);
    assert_eq!(made.spec.env.setup, bundled.spec.env.setup);
    assert_eq!(made.spec.criteria.len(), 1, "{:?}", made.spec.criteria);
    assert_eq!(made.spec.criteria[0].metric, "val_loss");
    assert!(!made.spec.integrity.seed_check);
    let details = &made.spec.phase2.details;
    assert!(
        details.contains(&format!(
            "- seed: fixed in the source, {fixed}; the run does not read XSTACK_SEED."
        )),
        "{details}"
    );
    assert!(!details.contains("from XSTACK_SEED"), "{details}");

    // Both tasks read the same evaluation curve from the run: steps 0, 250, ..., 2000.
    let log = std::fs::read_to_string(made.dir.join("reference.log")).unwrap();
    let curve = |task: &Task| {
        parse_log(task, &log)
            .into_iter()
            .find(|(m, _)| m == "val_loss")
            .map(|(_, points)| points)
            .unwrap_or_default()
    };
    let ours = curve(&bundled);
    assert_eq!(curve(&made), ours);
    let steps: Vec<Option<f64>> = ours.iter().map(|p| p.step).collect();
    let expected: Vec<Option<f64>> = (0..=8).map(|k| Some(f64::from(k * 250))).collect();
    assert_eq!(steps, expected);

    // The untouched source, run in the reference environment, is inside the tolerance.
    assert_within_tolerance(id, &bundled, &log);
}

/// torchcde's own spiral classifier (patrick-kidger/torchcde's
/// `example/time_series_classification.py`, the PyTorch experiment diffrax's notebook
/// mirrors), changed only where the task's notebook path, printed lines, data and settings
/// require (`tests/heldout/diffrax-neural-cde/torchcde-example/PROVENANCE.md`), passes: its
/// Test Accuracy is 1.0, inside the task's 0.7.
#[test]
fn heldout_torchcde_example_passes_diffrax_neural_cde() {
    check_heldout(
        "diffrax-neural-cde",
        "torchcde-example/faithful",
        Expected::Pass,
        (0.99, 1.0),
    );
}

/// The same port with diffrax's sigmoid read-out kept before torch's
/// `binary_cross_entropy_with_logits` (the sigmoid applied twice): every test series is
/// called 1, chance (0.5), a `fidelity_gap`.
#[test]
fn heldout_torchcde_example_with_the_sigmoid_twice_is_a_fidelity_gap() {
    check_heldout(
        "diffrax-neural-cde",
        "torchcde-example/sigmoid-twice",
        Expected::Fail("fidelity_gap"),
        (0.5, 0.5),
    );
}

/// The same port with diffrax's series left in their order (labels 1 then 0) and torch's
/// `DataLoader` left unshuffled (its default), so every batch is one class: a real mistake
/// that the task's criterion does not separate. The model learns all the same (1.0) and
/// the port passes, as its numbers say; this test shows that limit of the task.
#[test]
fn heldout_torchcde_example_with_the_shuffle_lost_still_passes() {
    check_heldout(
        "diffrax-neural-cde",
        "torchcde-example/shuffle-lost",
        Expected::Pass,
        (0.99, 1.0),
    );
}

/// How a held-out port must be graded: passed, or failed with this class.
enum Expected {
    /// Exit 0, verdict `pass`.
    Pass,
    /// Exit 1, verdict `fail` with this failure class.
    Fail(&'static str),
}

/// `xstack grade` of a held-out port (a PyTorch port nobody on the team wrote, kept under
/// `tests/heldout/TASK/PORT/`: its files laid over the task's source, as an agent's port is)
/// gives `expected`, with the graded value inside `value_range`; neither the task folder
/// nor the held-out port nor the graded repository is written.
fn check_heldout(id: &str, port: &str, expected: Expected, value_range: (f64, f64)) {
    let task = bundled(id);
    let layer = root().join("tests/heldout").join(id).join(port);
    assert!(layer.is_dir(), "{}: no such port", layer.display());
    let repo = tempfile::tempdir().unwrap();
    overlay(task.source_path().unwrap(), repo.path());
    overlay(&layer, repo.path());
    let before = [
        tree_hash(&task.dir),
        tree_hash(&layer),
        tree_hash(repo.path()),
    ];
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "grade",
        task.dir.to_str().unwrap(),
        "--repo",
        repo.path().to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    let printed = text(&out);
    let (code, verdict, failure, says) = match expected {
        Expected::Pass => (
            0,
            "pass",
            serde_json::Value::Null,
            "PASSED in phase 1".into(),
        ),
        Expected::Fail(class) => (
            1,
            "fail",
            serde_json::json!(class),
            format!("phase 1 verdict: FAIL {class}"),
        ),
    };
    assert_eq!(out.status.code(), Some(code), "{id}/{port}:\n{printed}");
    assert!(
        printed.contains(&says),
        "{id}/{port}: no `{says}`:\n{printed}"
    );
    let r = result(&only_run_dir(runs.path()));
    let phase = &r["phases"][0];
    assert_eq!(phase["verdict"], verdict, "{id}/{port}: {r:#}");
    assert_eq!(phase["failure"], failure, "{id}/{port}: {r:#}");
    let criterion = &phase["criteria"][0];
    let metric = criterion["metric"].as_str().unwrap_or_default();
    let value = criterion["value"].as_f64().unwrap_or(f64::NAN);
    println!("{id}/{port}: {metric} = {value}");
    assert!(
        (value_range.0..=value_range.1).contains(&value),
        "{id}/{port}: {metric} = {value}, outside {value_range:?}: {r:#}"
    );
    assert_eq!(
        [
            tree_hash(&task.dir),
            tree_hash(&layer),
            tree_hash(repo.path())
        ],
        before,
        "{id}/{port}: grade wrote into the task, the port or the graded repository"
    );
}

/// diffrax's neural_ode notebook, a JAX source, about two minutes: `init --notebook` on a copy
/// of the snapshot proposes `from = "jax"` and, of the twelve `Loss` lines cell 13's committed
/// output prints (two stages, each ending at `Step: 499`), takes the last, 0.002007. Its one
/// run prints 0.001865 (7 % lower, as every run here: nothing reads XSTACK_SEED, so no spread
/// is measured), outside the single run's 2 %: with `--accept-unreproduced` init writes the
/// task and records the claim `not_reproduced`. That run of the untouched source lands inside
/// the bundled task's tolerance.
#[test]
fn init_on_the_diffrax_neural_ode_notebook_takes_the_last_loss_printed() {
    let notebook = "docs/examples/neural_ode.ipynb";
    let Some((task, printed)) = init_jax_notebook(
        "diffrax",
        "neural-ode",
        notebook,
        "loss",
        "diffrax-neural-ode",
        &["--accept-unreproduced"],
    ) else {
        return;
    };
    let c = &task.spec.criteria[0];
    let text = "Step: 499, Loss: 0.002007006434723735, Computation time: 0.039736032485961914";
    // Graded against the claim, written to four significant digits (the tolerance needs no more).
    assert_eq!(c.published, 0.002007, "{printed}");
    let claim = c.claim.as_ref().unwrap();
    assert_eq!(claim.text.as_deref(), Some(text), "{printed}");
    assert_eq!(
        claim.location.as_deref(),
        Some(format!("{notebook}#cell=13").as_str()),
        "{printed}"
    );
    assert_eq!(claim.value, Some(0.002007006434723735), "{printed}");
    assert_eq!(claim.status, ClaimStatus::NotReproduced, "{printed}");
    assert!(
        printed.contains(&format!(
            "loss: published 0.002007006434723735 ({notebook}#cell=13, \"{text}\") — NOT reproduced: 0.001865 ± 0 over 1 run"
        )),
        "{printed}"
    );
}

/// diffrax's neural CDE, a JAX source: the demo never clears torch's gradients (no
/// `optim.zero_grad()`); the data, the path, the weights it loads, the vector field, the
/// predictions, one step's gradients and Adam's first step match, and the first wrong numbers
/// are the gradients `main`'s optimiser is handed at its second step (the sum of both steps').
/// About two minutes, most of it JAX compiling: the catalog's, not the suite's.
/// diffrax's latent ODE, a JAX source: the demo drops jax.vmap and keeps `_loss` as written for
/// one series, so its sums run over the whole batch; the data, the weights it loads, the
/// encoder's posterior, the decoder's solution match, and the first wrong numbers are the
/// losses per series (one number, the batch's total, against eight). Minutes, most of it JAX
/// compiling: the catalog's, not the suite's.
#[test]
fn diffrax_latent_ode_diverges_first_in_the_loss_per_series() {
    check_bundled(
        "diffrax-latent-ode",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "loss.per_series",
            at: None,
            max_abs: None,
        },
    );
}

#[test]
fn diffrax_neural_cde_diverges_first_in_the_second_steps_gradients() {
    check_bundled(
        "diffrax-neural-cde",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "main.grad2.initial.1.weight",
            at: None,
            max_abs: None,
        },
    );
}

/// equinox's mnist notebook, a JAX source: the demo takes torch's `MaxPool2d(2)`, whose stride
/// defaults to the kernel size (equinox's to 1), and shrinks the first Linear to fit; the
/// parameters it loads, the images and the convolution match, and the first wrong numbers are
/// the pooled activations ([8, 3, 12, 12] against [8, 3, 24, 24]). Minutes a side on a loaded
/// machine (the demo's 201 s): the catalog's, not the suite's (`tests/oracles.rs` shows the
/// oracle's first steps).
#[test]
fn equinox_mnist_diverges_first_in_the_pooled_activations() {
    check_bundled(
        "equinox-mnist",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "act.pool",
            at: None,
            max_abs: None,
        },
    );
}

/// diffrax's neural ODE, a JAX source: the demo trains both stages on the whole series; the
/// data, the vector field, the solutions, the loss, its gradients and two AdaBelief steps
/// match, and the first wrong numbers are the series' lengths main's data loader is given
/// (100 and 100 against the source's 10 and 100). About 100 s on a loaded machine: the
/// catalog's, not the suite's (`tests/oracles.rs` shows the same mistake in the demo's
/// first loss).
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

/// diffrax's Kalman filter, a JAX source: the demo makes every array of the two equinox
/// modules an `nn.Parameter` and hands them all to Adam (the source's `filter_spec` trains
/// Q_root and R_root only). main's defaults, the true system's states, the filter's estimates
/// on the source's measurements, the loss and its gradients match; the first wrong numbers
/// are main's model system once two steps of main have run (its A moved by 0.02: each
/// Adam step moves it by the learning rate). A few minutes on a loaded machine, most of it
/// JAX compiling: the catalog's, not the suite's.
#[test]
fn diffrax_kalman_filter_diverges_first_in_the_trained_model_system() {
    check_bundled(
        "diffrax-kalman-filter",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "after_main.sys_model.A",
            at: None,
            max_abs: None,
        },
    );
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

/// klicperajo/ppnp's APPNP notebook, unmodified but for the task's setup (the device set to
/// the CPU, the best epoch's weights copied as CUDA's `.cpu()` copied them): one run, 1,000
/// to 2,800 epochs with early stopping, lands inside 84.7 ± the task's tolerance.
#[test]
fn source_within_tolerance_ppnp_appnp_cora_ml() {
    check_source_within_tolerance("ppnp-appnp-cora-ml", &bundled("ppnp-appnp-cora-ml"));
}

/// karpathy/minGPT's sort demo, unmodified but for the task's setup (any GPU hidden, one
/// intra-op thread): one run, 2,000 steps, both accuracies 100 % and the mean of the losses
/// printed at iters 1000 to 1900 under the task's bound (its split drawn by the hash salt of
/// the run's process).
#[test]
fn source_within_tolerance_mingpt_sort() {
    check_source_within_tolerance("mingpt-sort", &bundled("mingpt-sort"));
}

/// minGPT's sort demo, a PyTorch notebook whose probe runs one training step of the
/// trainer's pieces with dropout off: the demo's JAX port sums the per-token losses instead of
/// averaging them over the targets that are not -1; the data's structure, the initial
/// parameters, the batch and the logits match, and the first wrong number is the loss.
#[test]
fn mingpt_sort_diverges_first_in_the_loss() {
    check_bundled(
        "mingpt-sort",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "eval.loss",
            at: None,
            max_abs: None,
        },
    );
}

/// APPNP's demo evaluates, after the training loop, the parameters the loop ended with
/// (train_model's `load_state_dict(best_state)` left out): the split, the normalised
/// attributes, the propagation matrix, the hyper-parameters, the loss, its gradients, the
/// log-probabilities and the dropout shares all match, and the first wrong number is the best
/// logged early-stopping accuracy less the reported one on a short run of train_model (0 in the
/// source with the task's setup and in the oracle), recorded at the port's `def train_model`.
/// Minutes a side on a loaded machine: the catalog's, not the suite's.
#[test]
fn ppnp_appnp_cora_ml_diverges_first_in_the_restored_weights() {
    check_bundled(
        "ppnp-appnp-cora-ml",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "restore.best_minus_reported",
            at: Some(("ppnp/jax/training.py", 46)),
            max_abs: None,
        },
    );
}

/// gordicaleksa/pytorch-GAT on Cora, unmodified but for the task's setup (the copy made a git
/// repository, as a clone is: the checkpoints record its commit): one unseeded run, 1,100 to
/// 2,000 epochs with early stopping (602 s at a load of 6-10, 40-50 minutes at 12-34),
/// lands inside 0.829 ± the task's tolerance.
#[test]
fn source_within_tolerance_pytorch_gat_cora() {
    check_source_within_tolerance("pytorch-gat-cora", &bundled("pytorch-gat-cora"));
}

/// pytorch-GAT's demo evaluates with dropout on: every tensor of the model (the data, the
/// scores in evaluation mode, the loss, its gradients, two optimizer steps) matches, and the
/// first wrong number is the validation accuracy the training loop's VAL phase keeps, recorded
/// at the port's `def get_main_loop`. 139 s at a load of 10-13, the JAX side's compilation
/// most of it: the catalog's, not the suite's.
#[test]
fn pytorch_gat_cora_diverges_first_in_the_loops_validation_accuracy() {
    check_bundled(
        "pytorch-gat-cora",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "loop.val_acc",
            at: Some(("training_script_cora.py", 38)),
            max_abs: None,
        },
    );
}

/// cleanrl's dqn.py, a PyTorch source whose probe runs the script itself for 1,500 steps: the
/// demo's JAX port indexes the Q-values with the buffer's (batch, 1) actions unsqueezed, a
/// (batch, batch) matrix against the (batch,) targets; the initial weights and every episode
/// before learning starts match, and the first wrong number is the first update's loss.
#[test]
fn cleanrl_dqn_cartpole_diverges_first_in_the_first_updates_loss() {
    check_bundled(
        "cleanrl-dqn-cartpole",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "td_loss.1100",
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

/// makemore part 2's notebook, unmodified, its experiment's cells (0 to 6 and 21 to 34; the
/// lecture's sketch, cells 7 to 20, left out by `[run] cells`): its 200,000 PyTorch steps,
/// 5 to 10 minutes on the loaded 2-core machine. Cells 29 and 30's train and dev losses land
/// inside 2.1260 ± 0.035 and 2.1701 ± 0.026 (the parameters' generator is seeded, the batches'
/// is torch's unseeded global one, as a fresh process has it).
#[test]
fn source_within_tolerance_makemore_part2_mlp() {
    check_source_within_tolerance("makemore-part2-mlp", &bundled("makemore-part2-mlp"));
}

/// makemore part 2's notebook, a PyTorch source whose probe runs four steps of its training
/// cell (0, 1, 99999, 100000): the demo writes the learning rate as 0.1 inside its compiled
/// loop, where the source's `if` on the step cannot run; the data, the initial parameters, the
/// batches, the losses, the gradients and the first three steps match, and the first wrong
/// number is the learning rate the step-100,000 update applies (0.1 against 0.01).
#[test]
fn makemore_part2_mlp_diverges_first_in_the_learning_rate_at_step_100000() {
    check_bundled(
        "makemore-part2-mlp",
        Phase1 {
            layers: &["solution", "demo/phase1"],
            first: "step100000.lr",
            at: None,
            max_abs: None,
        },
    );
}

//! Oracle checks of every bundled task, at the depth `docs/TESTING.md` ("What the suite
//! runs of each task") gives it.
//!
//! The tasks written for xstack, SGC and equinox's train_rnn, minutes in all: the oracle (the
//! source with `solution/` laid over it) passes its grader (SGC's and train_rnn's through
//! the demo, whose phase 1 fails as a `fidelity_gap` and whose phase 2 passes on the oracle's
//! files), the untouched source fails as `bypass` (a PyTorch source ported to JAX imports
//! torch; a JAX source ported to PyTorch imports jax), and the source run in its reference
//! environment lands inside its own tolerance (SGC's: the runs `tests/claims.rs` makes for
//! `init`).
//!
//! The real tasks whose runs take minutes each (nanoGPT, mlp, makemore, the makemore
//! notebook, diffrax's neural ODE, equinox's mnist): the untouched source is a `bypass`, and
//! the oracle, run as verify runs it, prints the reference log's first points of a metric the
//! task reads, each close to the source's (the port runs, is read, and learns as the source
//! does); `tests/parity.rs` shows each demo's phase-1 mistake in the tensors of its first
//! steps (`tests/catalog.rs` diffrax's and mnist's, here their first printed losses).
//! Their full runs (the demo through both phases, the source inside its tolerance, `init` on
//! the snapshot) are the catalog's check, `scripts/catalog` (`tests/catalog.rs` and the bench
//! of every real task's demo).
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::oracle::*;
use common::*;

/// The bundled tasks this suite checks; a new task must be added here.
const BUNDLED: &[&str] = &[
    "adamw-cosine",
    "char-transformer",
    "cleanrl-dqn-cartpole",
    "cleanrl-dqn-jax-cartpole",
    "diffrax-kalman-filter",
    "diffrax-latent-ode",
    "diffrax-neural-cde",
    "diffrax-neural-ode",
    "digits-cnn-bn",
    "digits-mlp",
    "equinox-mnist",
    "equinox-train-rnn",
    "jraph-karate-club",
    "label-smoothing-init",
    "makemore",
    "makemore-cnn",
    "makemore-part2-mlp",
    "makemore-part3-bn",
    "mingpt-sort",
    "mlp-ngram",
    "nanogpt-shakespeare-char",
    "ppnp-appnp-cora-ml",
    "pytorch-gat-cora",
    "sgc-citeseer",
    "sgc-cora",
];

fn check_task(id: &str) {
    check_task_with(id, SourceRun::Here, OracleRun::Graded);
}

/// The oracle's first `count` points of `metric` within `band` of the reference log's, and
/// the untouched source a `bypass`.
fn check_first_steps(id: &str, metric: &str, count: usize, band: f64) {
    check_oracle_first_steps(id, metric, count, band);
    check_source_is_a_bypass(id, &bundled(id));
}

#[test]
fn every_bundled_task_has_an_oracle_check() {
    let found: Vec<String> = std::fs::read_dir(root().join("tasks"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().join("task.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut found = found;
    found.sort();
    assert_eq!(found, BUNDLED);
}

#[test]
fn oracle_adamw_cosine() {
    check_task("adamw-cosine");
}

#[test]
fn oracle_char_transformer() {
    check_task("char-transformer");
}

#[test]
fn oracle_digits_cnn_bn() {
    check_task("digits-cnn-bn");
}

#[test]
fn oracle_digits_mlp() {
    check_task("digits-mlp");
}

#[test]
fn oracle_label_smoothing_init() {
    check_task("label-smoothing-init");
}

/// Tiiiger/SGC on Cora, unmodified: the demo (Adam's coupled weight decay ported as AdamW's
/// decoupled one) fails phase 1 and passes phase 2 on the oracle, whose `[solution] remove`
/// deletes the PyTorch files the command never runs. The source's runs inside 0.810 ± 0.005
/// are `tests/claims.rs`'s, which runs it for `init` (once a suite, not twice).
#[test]
fn oracle_sgc_cora() {
    check_task_with("sgc-cora", SourceRun::Elsewhere, OracleRun::ByDemo);
}

/// Tiiiger/SGC on Citeseer, as for Cora.
#[test]
fn oracle_sgc_citeseer() {
    check_task_with("sgc-citeseer", SourceRun::Elsewhere, OracleRun::ByDemo);
}

/// nanoGPT's oracle: the val loss at steps 0 and 250 (the mean of 20 random batches, from a
/// different initialisation in JAX) near the source's 4.165 and 2.445 (measured: 0.031 and
/// 0.008 away; the band is three times the larger).
#[test]
fn oracle_first_steps_nanogpt_shakespeare_char() {
    check_first_steps("nanogpt-shakespeare-char", "val_loss", 2, 0.1);
}

/// nanoGPT's demo draws the same 12 windows on every call: at step 250 its val loss is 6.0
/// against the source's 2.4.
#[test]
fn demo_phase1_strays_in_its_first_steps_nanogpt_shakespeare_char() {
    check_demo_phase1_strays_within_first_steps("nanogpt-shakespeare-char", "val_loss", 2, 0.1);
}

/// EurekaLabsAI/mlp's oracle: the val loss at steps 0, 200 and 400 equal to the source's to
/// the six decimals printed (the port replays the source's initialisation and batches).
/// The demo's mistake (the schedule never applied) moves the learning rate by 0.01% in these
/// steps: `tests/parity.rs` shows it in the learning rate applied.
#[test]
fn oracle_first_steps_mlp_ngram() {
    check_first_steps("mlp-ngram", "val_loss", 3, 0.001);
}

/// karpathy/makemore's oracle: the test loss at steps 500 and 1,000 near the source's 2.197
/// and 2.134 (measured: 0.036 and 0.028 away; the band is about three times the larger).
#[test]
fn oracle_first_steps_makemore() {
    check_first_steps("makemore", "test_loss", 2, 0.1);
}

/// makemore's demo counts the `-1` padding targets in the loss: its test loss at step 500 is
/// 1.01 against the source's 2.20.
#[test]
fn demo_phase1_strays_in_its_first_steps_makemore() {
    check_demo_phase1_strays_within_first_steps("makemore", "test_loss", 2, 0.1);
}

/// The makemore notebook's oracle: the minibatch loss at steps 0 and 10,000 near the source's
/// 3.317 and 2.058 (measured: 0.022 and 0.321 away: one batch of 32, so noisy; the band is
/// about twice the larger, and a port that does not learn stays near 3.3). The demo's
/// mistake (the learning rate's decay at step 150,000 left out) shows only at the end: the
/// catalog's bench runs it.
#[test]
fn oracle_first_steps_makemore_cnn() {
    check_first_steps("makemore-cnn", "loss", 2, 0.6);
}

/// klicperajo/ppnp's APPNP notebook: the oracle's train loss at epochs 0, 20 and 40 (the
/// 140 training nodes' loss with dropout, two decimals; its own weights and dropout masks from
/// a fresh JAX seed) near the reference log's 2.00, 1.94 and 1.90 (measured: 2.00, 1.94, 1.90
/// with seed 1; the published CUDA run printed the same). The whole run is 1,000-2,800 epochs
/// with early stopping, minutes here: the catalog's bench runs the demo (dropout of the sparse
/// attributes left out, which shows only in the final accuracy) through both phases.
#[test]
fn oracle_first_steps_ppnp_appnp_cora_ml() {
    check_first_steps("ppnp-appnp-cora-ml", "train_loss", 3, 0.05);
}

/// gordicaleksa/pytorch-GAT on Cora: the oracle's validation accuracy at epochs 1 and 101 (its
/// own weights and dropout masks, JAX's key from XSTACK_SEED) near the source's 0.128 and 0.82
/// (measured: 0.062 and 0.766 with seed 0; the untrained model's accuracy is near chance for
/// any port, so epoch 101 is the point that shows learning; a second source run printed 0.766
/// there). The whole run is 1,100-2,000 epochs with early stopping: the catalog's bench runs it.
#[test]
fn oracle_first_steps_pytorch_gat_cora() {
    check_first_steps("pytorch-gat-cora", "val_acc", 2, 0.1);
}

/// pytorch-GAT's demo evaluates with dropout on (`training=True` in `evaluate`): its
/// validation accuracy at epoch 101 is 0.332 against the source's 0.82.
#[test]
fn demo_phase1_strays_in_its_first_steps_pytorch_gat_cora() {
    check_demo_phase1_strays_within_first_steps("pytorch-gat-cora", "val_acc", 2, 0.1);
}

/// The makemore part 2 notebook's oracle, graded whole: the notebook shows no loss before
/// cells 29 and 30 (the train and dev losses after all 200,000 steps), so there are no first
/// steps to read early, and the JAX port's whole run (10,000-step compiled chunks) is under a
/// minute here (51 s graded at load 6): its losses 2.1176 and 2.1577 inside 2.1260 ± 0.035
/// and 2.1701 ± 0.026, with `[run] cells` leaving out the lecture's sketch (cells 7 to 20).
/// The untouched source is a `bypass`. The demo's mistake (the step decay at 100,000 left
/// out) shows only at the end: the catalog's bench runs it, and its probe.
#[test]
fn oracle_makemore_part2_mlp() {
    check_task_with(
        "makemore-part2-mlp",
        SourceRun::Elsewhere,
        OracleRun::Graded,
    );
}

/// The makemore part 3 notebook's oracle: the minibatch loss at steps 0 and 10,000 near the
/// source's 3.3239 and 2.0322 (measured: 0.047 and 0.389 away: one batch of 32, so noisy; the
/// band is about one and a half times the larger, and a port that does not learn stays near
/// 3.3). The demo's mistake (the running statistics never carried out of the step) leaves the
/// training as the source's and shows only in the evaluation: the catalog's probe shows it after
/// the first step, the catalog's bench at the end.
#[test]
fn oracle_first_steps_makemore_part3_bn() {
    check_first_steps("makemore-part3-bn", "loss", 2, 0.6);
}

/// karpathy/minGPT's sort demo: the oracle's train loss at iters 0 and 100 (one batch of 64,
/// dropout on; its own weights from jax.random.PRNGKey(3407), its own split under the hash
/// salt) near the reference log's 1.06295 and 0.15109 (measured: 1.10727 and 0.15830, 0.044
/// and 0.007 away; a port that does not learn stays near 1.1). The demo's phase 1 (the loss
/// summed over the batch's graded targets) prints 425.19 at iter 0, 384 times the mean. Both
/// accuracies saturate at 100 %; the whole run, its late losses and the demo through both
/// phases, is the catalog's bench.
#[test]
fn oracle_first_steps_mingpt_sort() {
    check_first_steps("mingpt-sort", "loss", 2, 0.2);
    check_demo_phase1_strays_within_first_steps("mingpt-sort", "loss", 1, 0.2);
}

/// equinox's train_rnn notebook, a JAX source ported to PyTorch: the demo (torch's nn.GRU
/// left time-major, so each sequence runs across the batch) fails phase 1 and passes phase 2
/// on the oracle; the untouched JAX source is a `bypass`. The source's run inside the
/// tolerance is `tests/claims.rs`'s, which runs it for `init`.
#[test]
fn oracle_equinox_train_rnn() {
    check_task_with("equinox-train-rnn", SourceRun::Elsewhere, OracleRun::ByDemo);
}

/// google-deepmind/educational's jraph tutorial cut before its downloads, a JAX/Haiku/jraph
/// notebook ported to PyTorch, about two minutes a run here: the oracle passes its grader
/// (the GAT's last accuracy 0.97, published 0.97; its own truncated-normal weights from
/// torch's generator), and the untouched source is a `bypass`. The demo (a softmax over all
/// edges for jraph's per-node segment_softmax) is `tests/parity.rs`'s and the catalog's bench's.
#[test]
fn oracle_jraph_karate_club() {
    check_task_with("jraph-karate-club", SourceRun::Elsewhere, OracleRun::Graded);
}

/// equinox's mnist notebook, a JAX source ported to PyTorch: the oracle's test loss at steps
/// 0, 30 and 60 (the mean over the shuffled test set; its own weights and batch order from
/// torch's generator) near the source's 2.308, 2.124 and 1.845 (measured: 0.006, 0.036 and
/// 0.007 away; the band is about four times the largest). The whole run takes minutes: the
/// catalog's bench runs the demo through both phases.
#[test]
fn oracle_first_steps_equinox_mnist() {
    check_first_steps("equinox-mnist", "test_loss", 3, 0.15);
}

/// The mnist demo pools with torch's default stride (2, not equinox's 1) and learns more
/// slowly: its test loss at step 60 is 2.155 against the source's 1.845.
#[test]
fn demo_phase1_strays_in_its_first_steps_equinox_mnist() {
    check_demo_phase1_strays_within_first_steps("equinox-mnist", "test_loss", 3, 0.15);
}

/// diffrax's neural_ode notebook, a JAX source ported to PyTorch: the oracle's first two
/// printed losses (the first stage's steps 0 and 100, one batch of 32 each, its own data and
/// weights from torch's generators) near the source's 0.1585 and 0.0087 (measured: 0.021 and
/// 0.002 away; the band is about three times the larger). The whole run takes minutes: the
/// catalog's bench runs the demo through both phases.
#[test]
fn oracle_first_steps_diffrax_neural_ode() {
    check_first_steps("diffrax-neural-ode", "loss", 2, 0.06);
}

/// diffrax's neural_cde notebook, a JAX source ported to PyTorch: the oracle's first printed
/// batch loss, the untrained model's (its own data and weights from torch's generators), near
/// the source's 1.46 (measured 2.08, 1.86, 1.37 and 1.37 with seeds 5678, 0, 1 and 2). The
/// whole run is 24 to 56 s wall here: the catalog's bench runs the demo through both phases.
#[test]
fn oracle_first_steps_diffrax_neural_cde() {
    check_first_steps("diffrax-neural-cde", "loss", 1, 1.0);
}

/// cleanrl's dqn_jax.py, a JAX source ported to PyTorch: the oracle's first ten episodes'
/// returns near the source's (seed 1 in both; the first 10,000 steps explore with epsilon
/// near 1, drawn from the same seeded `random` and action space, so the returns are the
/// source's until a rare greedy step meets the oracle's own weights: measured equal; a
/// random CartPole episode lasts 10 to 40 steps). The whole run is minutes: the catalog's
/// bench runs the demo through both phases, and `tests/parity.rs` shows its mistake in the
/// first update.
#[test]
fn oracle_first_steps_cleanrl_dqn_jax_cartpole() {
    check_first_steps("cleanrl-dqn-jax-cartpole", "episodic_return", 10, 30.0);
}

/// cleanrl's dqn.py, a PyTorch source ported to JAX: the oracle's first ten episodes' returns
/// near the source's (seed 1 in both; the first 10,000 steps explore with epsilon near 1,
/// drawn from the same seeded `random` and action space, so the returns are the source's
/// until a rare greedy step meets the oracle's own weights; a random CartPole episode lasts 10
/// to 40 steps). The untouched source is not graded here: the port's environment holds torch
/// (the replay buffer and the TensorBoard writer are PyTorch), so it would run its 500,000
/// steps before the grade calls it a `bypass`; `tests/catalog.rs` does that, and
/// `tests/parity.rs` shows the demo's mistake in the first update.
#[test]
fn oracle_first_steps_cleanrl_dqn_cartpole() {
    check_oracle_first_steps("cleanrl-dqn-cartpole", "episodic_return", 10, 30.0);
}

/// diffrax's kalman_filter notebook, a JAX source ported to PyTorch: the oracle's first
/// printed MSE, the untrained filter's on its own noise draw (torch's generator), near the
/// source's 0.1038 (measured 0.1289; the source's own draws, keys 0 to 3, print 0.104 to
/// 0.131 at step 0; the band is twice the distance). Its demo (the model system trained with
/// Q and R) starts at the same number, and its mistake shows in the probe
/// (`tests/catalog.rs`); the whole run takes minutes: the catalog's bench runs it.
#[test]
fn oracle_first_steps_diffrax_kalman_filter() {
    check_first_steps("diffrax-kalman-filter", "mse", 1, 0.05);
}

/// diffrax's latent_ode notebook, a JAX source ported to PyTorch: the oracle's first printed
/// batch loss, the untrained model's (its own data, weights and noise from torch's
/// generators), near the source's 17.63 (measured: 19.53 with seed 5678; 18.58 and 19.32 with
/// seeds 0 and 1, against the source's 20.88 and 22.76: the band is about twice the oracle's
/// distance). The whole run is minutes: the catalog's bench runs the demo through both phases.
#[test]
fn oracle_first_steps_diffrax_latent_ode() {
    check_first_steps("diffrax-latent-ode", "loss", 1, 4.0);
}

/// The latent ODE's demo sums its loss over the whole batch (jax.vmap dropped, `_loss` kept as
/// written for one series): its first printed loss is the batch's total, 256 times the
/// oracle's (about 5000), against the source's 17.63.
#[test]
fn demo_phase1_strays_in_its_first_steps_diffrax_latent_ode() {
    check_demo_phase1_strays_within_first_steps("diffrax-latent-ode", "loss", 1, 4.0);
}

/// The neural ODE's demo trains the first stage on the whole series (the length curriculum
/// dropped): its first printed loss is 1.83 against the source's 0.16.
#[test]
fn demo_phase1_strays_in_its_first_steps_diffrax_neural_ode() {
    check_demo_phase1_strays_within_first_steps("diffrax-neural-ode", "loss", 2, 0.06);
}

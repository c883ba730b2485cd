//! Oracle checks of every bundled task: the JAX oracle (`repo/` with `solution/` laid over
//! it) passes its grader, the untouched PyTorch source fails as `bypass`, and the PyTorch
//! source run in its reference environment lands inside its own tolerance (the calibration
//! holds).

mod common;

use common::*;
use xstack::metrics::{parse_log, reduce};
use xstack::seeds::{RunPlan, run_seed};
use xstack::task::Task;

/// The bundled tasks this suite checks; a new task must be added here.
const BUNDLED: &[&str] = &[
    "adamw-cosine",
    "char-transformer",
    "digits-cnn-bn",
    "digits-mlp",
    "label-smoothing-init",
];

fn check_task(id: &str) {
    let dir = root().join("tasks").join(id);
    let task = Task::load(&dir).unwrap();
    let before = tree_hash(&dir);

    // The oracle passes.
    let oracle = tempfile::tempdir().unwrap();
    overlay(&dir.join("repo"), oracle.path());
    overlay(&dir.join("solution"), oracle.path());
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "grade",
        dir.to_str().unwrap(),
        "--repo",
        oracle.path().to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{id}: the oracle fails:\n{}",
        text(&out)
    );

    // The untouched PyTorch source is a bypass.
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "grade",
        dir.to_str().unwrap(),
        "--repo",
        dir.join("repo").to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{id}: {}", text(&out));
    assert_eq!(
        result(&only_run_dir(runs.path()))["phases"][0]["failure"],
        "bypass",
        "{id}"
    );

    // The PyTorch source, in its reference environment, lands inside its own tolerance.
    let cache = xstack::env::cache_dir();
    let env = xstack::env::ensure(&cache, &task.spec.env.reference_packages, &mut |_| {}).unwrap();
    let plan = RunPlan {
        source: dir.join("repo"),
        setup: task.spec.env.setup.clone(),
        command: task.spec.run.command.clone(),
        timeout: Some(std::time::Duration::from_secs(task.spec.run.timeout_s)),
        env,
        task_id: id.to_string(),
        size: (120, 40),
    };
    let scratch = tempfile::tempdir().unwrap();
    let seed_run = run_seed(&plan, 0, scratch.path(), &mut |_| {}).unwrap();
    assert!(
        seed_run.succeeded(),
        "{id}: the source run failed:\n{}",
        seed_run.tail(20)
    );
    let series = parse_log(&task, &seed_run.output);
    for c in &task.spec.criteria {
        let points = &series.iter().find(|(m, _)| m == &c.metric).unwrap().1;
        let value =
            reduce(points, c.reduce).unwrap_or_else(|| panic!("{id}: {} never printed", c.metric));
        assert!(
            c.direction.accepts(value, c.published, c.tolerance),
            "{id}: the source's {} = {value} is outside {} ± {} ({})",
            c.metric,
            c.published,
            c.tolerance,
            c.direction.as_str()
        );
    }
    assert_eq!(tree_hash(&dir), before, "{id}: the task folder was written");
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

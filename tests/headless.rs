//! End to end without a screen: real PTYs, real Python, real JAX on CPU. One scripted
//! trajectory per outcome on the JSON-lines test task, and the bundled digits-mlp demo.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;

const TASK: &str = "tests/tasks/jsonl-protected";

/// `replay --headless` of a run gives the same verdicts and exit status as the run.
fn assert_replay_matches(dir: &std::path::Path, code: i32) {
    let out = run(&["replay", dir.to_str().unwrap(), "--headless"]);
    assert_eq!(out.status.code(), Some(code), "{}", text(&out));
    let replayed = text(&out);
    let result = result(dir);
    for phase in result["phases"].as_array().unwrap() {
        let label = match phase["failure"].as_str() {
            None => "PASS".to_string(),
            Some(class) => format!("FAIL {class}"),
        };
        let line = format!("phase {} verdict: {label}", phase["phase"]);
        assert!(
            replayed.contains(&line),
            "replay lacks `{line}`:\n{replayed}"
        );
    }
}

#[test]
fn pass_in_phase_one() {
    let (code, dir, out, _runs) = run_scripted(TASK, "pass");
    assert_eq!(code, 0, "{out}");
    let r = result(&dir);
    assert_eq!(r["passed"], true);
    assert_eq!(r["passed_in_phase"], 1);
    assert_eq!(r["phases"].as_array().unwrap().len(), 1);
    assert_eq!(r["phases"][0]["verdict"], "pass");
    assert_eq!(r["phases"][0]["failure"], serde_json::Value::Null);
    assert_eq!(r["phases"][0]["criteria"][0]["metric"], "eval_mse");
    assert_eq!(r["task"], "jsonl-protected");
    assert!(out.contains("metric eval_mse="), "{out}");
    assert_replay_matches(&dir, 0);
}

#[test]
fn fidelity_gap_then_pass() {
    let (code, dir, out, _runs) = run_scripted(TASK, "gap_then_pass");
    assert_eq!(code, 0, "{out}");
    let r = result(&dir);
    assert_eq!(r["passed_in_phase"], 2);
    assert_eq!(r["phases"][0]["failure"], "fidelity_gap");
    assert_eq!(r["phases"][0]["criteria"][0]["passed"], false);
    assert_eq!(r["phases"][1]["verdict"], "pass");
    // The phase-two prompt names the failure and carries the task's details.
    let prompt = std::fs::read_to_string(dir.join("prompts/phase-2.txt")).unwrap();
    assert!(prompt.contains("fidelity_gap"), "{prompt}");
    assert!(prompt.contains("learning rate 0.05"), "{prompt}");
    assert_replay_matches(&dir, 0);
}

#[test]
fn bypass_when_torch_is_still_imported() {
    let (code, dir, out, _runs) = run_scripted(TASK, "bypass_torch");
    assert_eq!(code, 1, "{out}");
    let r = result(&dir);
    assert_eq!(r["passed"], false);
    assert_eq!(r["passed_in_phase"], serde_json::Value::Null);
    for phase in 0..2 {
        assert_eq!(r["phases"][phase]["failure"], "bypass");
        let findings = r["phases"][phase]["findings"].to_string();
        assert!(
            findings.contains("imports forbidden module `torch`"),
            "{findings}"
        );
    }
    assert_replay_matches(&dir, 1);
}

#[test]
fn bypass_when_a_protected_file_is_edited() {
    let (code, dir, out, _runs) = run_scripted(TASK, "bypass_protected");
    assert_eq!(code, 1, "{out}");
    let r = result(&dir);
    assert_eq!(r["phases"][0]["failure"], "bypass");
    let findings = r["phases"][0]["findings"].to_string();
    assert!(
        findings.contains("protected file eval.py was changed"),
        "{findings}"
    );
    // The verify copy ran the original eval.py, so the metric is the honest one.
    let verify_eval = std::fs::read_to_string(dir.join("verify/eval.py")).unwrap();
    let source_eval = std::fs::read_to_string(root().join(TASK).join("repo/eval.py")).unwrap();
    assert_eq!(verify_eval, source_eval);
    assert_replay_matches(&dir, 1);
}

#[test]
fn crash() {
    let (code, dir, out, _runs) = run_scripted(TASK, "crash");
    assert_eq!(code, 1, "{out}");
    let r = result(&dir);
    assert_eq!(r["phases"][0]["failure"], "crash");
    assert_ne!(r["phases"][0]["exit_code"], 0);
    assert_eq!(r["phases"][1]["failure"], "crash");
    assert_replay_matches(&dir, 1);
}

#[test]
fn missed_eval() {
    let (code, dir, out, _runs) = run_scripted(TASK, "missed_eval");
    assert_eq!(code, 1, "{out}");
    let r = result(&dir);
    assert_eq!(r["phases"][0]["failure"], "missed_eval");
    assert_eq!(
        r["phases"][0]["criteria"][0]["value"],
        serde_json::Value::Null
    );
    assert_eq!(r["phases"][0]["exit_code"], 0);
    assert_replay_matches(&dir, 1);
}

#[test]
fn digits_mlp_demo_passes_in_phase_two_and_leaves_the_task_untouched() {
    let task_dir = root().join("tasks/digits-mlp");
    let before = tree_hash(&task_dir);
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "run",
        "digits-mlp",
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let dir = only_run_dir(runs.path());
    let r = result(&dir);
    assert_eq!(r["passed_in_phase"], 2);
    assert_eq!(r["phases"][0]["failure"], "fidelity_gap");
    assert_eq!(r["agent"], "script:tasks/digits-mlp/demo/trajectory.jsonl");
    assert!(all.contains("phase 1 verdict: FAIL fidelity_gap"), "{all}");
    assert!(all.contains("PASSED in phase 2"), "{all}");
    assert_eq!(tree_hash(&task_dir), before, "the task folder was written");
    // The workspace holds the migrated code; the source still holds PyTorch.
    let migrated = std::fs::read_to_string(dir.join("workspace/train.py")).unwrap();
    assert!(migrated.contains("import jax"));
    assert_replay_matches(&dir, 0);
}

#[test]
fn grade_an_existing_repository() {
    // The oracle: the source with the solution's files laid over it.
    let oracle = tempfile::tempdir().unwrap();
    overlay(&root().join(TASK).join("repo"), oracle.path());
    overlay(&root().join(TASK).join("solution"), oracle.path());
    let before = tree_hash(oracle.path());
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "grade",
        TASK,
        "--repo",
        oracle.path().to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = result(&only_run_dir(runs.path()));
    assert_eq!(r["passed_in_phase"], 1);
    assert_eq!(r["phases"].as_array().unwrap().len(), 1);
    assert_eq!(
        tree_hash(oracle.path()),
        before,
        "the graded folder was written"
    );

    // The untouched PyTorch source is a bypass.
    let runs2 = tempfile::tempdir().unwrap();
    let source = root().join(TASK).join("repo");
    let out2 = run(&[
        "grade",
        TASK,
        "--repo",
        source.to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs2.path().to_str().unwrap(),
    ]);
    assert_eq!(out2.status.code(), Some(1), "{}", text(&out2));
    let r2 = result(&only_run_dir(runs2.path()));
    assert_eq!(r2["phases"][0]["failure"], "bypass");
}

#[test]
fn file_changes_are_recorded_while_the_agent_still_works() {
    let tmp = tempfile::tempdir().unwrap();
    let solution = root().join(TASK).join("solution/train.py");
    let traj = tmp.path().join("slow.jsonl");
    std::fs::write(
        &traj,
        format!(
            "{{\"phase\": 1}}\n{{\"write\": \"train.py\", \"from\": \"{}\"}}\n{{\"write\": \"notes/plan.md\", \"text\": \"port the model\"}}\n{{\"sleep_ms\": 1500}}\n{{\"delete\": \"notes/plan.md\"}}\n{{\"say\": \"done\"}}\n",
            solution.display()
        ),
    )
    .unwrap();
    let runs = tmp.path().join("runs");
    let out = run(&[
        "run",
        TASK,
        "--agent",
        &format!("script:{}", traj.display()),
        "--headless",
        "--runs-dir",
        runs.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = only_run_dir(&runs);
    let events = journal_events(&dir);
    let time_of = |pred: &dyn Fn(&serde_json::Value) -> bool| {
        events
            .iter()
            .find(|e| pred(e))
            .map(|e| e["t"].as_f64().unwrap())
    };
    let written = time_of(&|e| {
        e["type"] == "file_changed" && e["file"]["path"] == "notes/plan.md" && e["deleted"] == false
    })
    .expect("the new file was recorded");
    let deleted = time_of(&|e| {
        e["type"] == "file_changed" && e["file"]["path"] == "notes/plan.md" && e["deleted"] == true
    })
    .expect("the deletion was recorded");
    let exited = time_of(&|e| e["type"] == "agent_exited").unwrap();
    // The write was seen while the agent was still sleeping, well before it exited.
    assert!(written < deleted, "written {written}, deleted {deleted}");
    assert!(
        exited - written > 0.5,
        "the write was only seen at the end: written {written}, exited {exited}"
    );
    // Each change is recorded once.
    let train_changes = events
        .iter()
        .filter(|e| e["type"] == "file_changed" && e["file"]["path"] == "train.py")
        .count();
    assert_eq!(train_changes, 1, "{events:?}");
}

/// A run that logs its metrics on each of 300,000 lines: the grade reduces over every line,
/// the progress output stays readable (a metric line per second, not one per point), and
/// the replay prints the same.
#[test]
fn a_metric_on_every_line_is_graded_exactly_and_printed_sparingly() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("every-line");
    let repo = task.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("gen.py"),
        "for i in range(300000):\n    print(f'step {i} loss={1.0 / (i + 1):.6f} acc={(i % 1000) / 1000:.3f}')\n",
    )
    .unwrap();
    std::fs::write(
        task.join("task.toml"),
        r#"id = "every-line"
title = "A metric on every line"
[source]
path = "repo"
[published]
citation = "none"
[env]
packages = []
[run]
command = "python3 gen.py"
[[metric]]
name = "acc"
regex = 'step (?P<step>\d+) .*acc=(?P<value>[0-9.]+)'
[[metric]]
name = "loss"
regex = 'step (?P<step>\d+) loss=(?P<value>[0-9.]+)'
[[criterion]]
metric = "acc"
reduce = "mean"
published = 0.4995
tolerance = 0.0001
direction = "within"
[[criterion]]
metric = "loss"
reduce = "max"
published = 1.0
tolerance = 0.000001
direction = "within"
[integrity]
forbid_imports = []
require_imports = []
[phase2]
details = "none"
"#,
    )
    .unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "grade",
        task.to_str().unwrap(),
        "--repo",
        repo.to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    let dir = only_run_dir(runs.path());
    let r = result(&dir);
    let criteria = &r["phases"][0]["criteria"];
    let mean = criteria[0]["value"].as_f64().unwrap();
    assert!((mean - 0.4995).abs() < 1e-9, "mean of every point: {mean}");
    assert_eq!(criteria[1]["value"].as_f64(), Some(1.0));
    // The first point of each metric, about one a second after, and the last at the exit.
    let metric_lines = printed.lines().filter(|l| l.contains("] metric ")).count();
    assert!(
        (2..200).contains(&metric_lines),
        "{metric_lines} lines:\n{printed}"
    );
    assert!(
        printed.contains("metric acc=0.999 (step 299999)"),
        "{printed}"
    );
    let replayed = run(&["replay", dir.to_str().unwrap(), "--headless"]);
    let replayed_lines = text(&replayed)
        .lines()
        .filter(|l| l.contains("] metric "))
        .count();
    assert!((2..200).contains(&replayed_lines), "{}", text(&replayed));
}

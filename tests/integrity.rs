//! Verdicts that cannot be fooled (SPEC §3, grade step 1): adversarial migrations of the
//! `jsonl-protected` test task, each graded through the real binary with the real confined
//! verify (bubblewrap), the runtime import audit and the seed check, asserting the verdict,
//! the class and the finding. Faithful ports must pass. The cases live in
//! `tests/tasks/jsonl-protected/adversarial/` (see its README).
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{only_run_dir, overlay, require_tool, result, root, run, runs_ok, text};

const TASK: &str = "tests/tasks/jsonl-protected";

fn bwrap_here() -> bool {
    require_tool("bubblewrap (bwrap)", || {
        runs_ok(
            "bwrap",
            &[
                "--unshare-all",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "true",
            ],
        )
    })
}

/// The source repository with the oracle over it, then the case's files over that.
fn port(case: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let task = root().join(TASK);
    overlay(&task.join("repo"), &repo);
    overlay(&task.join("solution"), &repo);
    if !case.is_empty() {
        overlay(&task.join("adversarial").join(case), &repo);
    }
    (dir, repo)
}

/// `xstack grade` of `repo`: its exit status, its one phase of `result.json`, and what it
/// printed followed by its journal.
fn grade(repo: &Path) -> (i32, serde_json::Value, String) {
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "grade",
        TASK,
        "--repo",
        repo.to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    let run_dir = only_run_dir(runs.path());
    let phase = result(&run_dir)["phases"][0].clone();
    let seen = format!("{}\n{}", text(&out), common::journal_text(&run_dir));
    (out.status.code().unwrap_or(-1), phase, seen)
}

/// Grades `case` and checks it fails with `class` and a finding of `kind` whose text
/// contains `says`; returns the phase.
fn assert_caught(case: &str, class: &str, kind: &str, says: &str) -> serde_json::Value {
    let (_dir, repo) = port(case);
    let (code, phase, output) = grade(&repo);
    assert_eq!(code, 1, "{case}: {output}");
    assert_eq!(phase["failure"], class, "{case}: {phase:#}");
    assert_eq!(phase["verify_confined"], true, "{case}: {phase:#}");
    let records = phase["finding_records"].as_array().unwrap();
    assert!(
        records
            .iter()
            .any(|r| r["kind"] == kind && r["text"].as_str().unwrap().contains(says)),
        "{case}: no {kind} finding saying {says:?}: {records:#?}"
    );
    phase
}

#[test]
fn faithful_ports_pass_with_the_seed_check() {
    if !bwrap_here() {
        return;
    }
    for case in ["", "faithful"] {
        let (_dir, repo) = port(case);
        let (code, phase, output) = grade(&repo);
        assert_eq!(code, 0, "{case:?}: {output}");
        assert_eq!(phase["verdict"], "pass", "{case:?}: {phase:#}");
        assert_eq!(phase["verify_confined"], true);
        assert!(phase["finding_records"].as_array().unwrap().is_empty());
        assert!(
            output.contains("seed check: the run again with XSTACK_SEED=1"),
            "{output}"
        );
    }
}

#[test]
fn dynamic_imports_are_caught_at_run_time() {
    if !bwrap_here() {
        return;
    }
    let phase = assert_caught(
        "dynamic_join",
        "bypass",
        "runtime_import",
        "imported forbidden module `torch` at run time",
    );
    let record = phase["finding_records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "runtime_import")
        .cloned()
        .unwrap();
    assert_eq!(record["file"], "train.py");
    assert!(record["line"].as_u64().is_some());
    assert_caught(
        "exec_base64",
        "bypass",
        "runtime_import",
        "at run time (through exec)",
    );
}

#[test]
fn imports_python_would_run_are_found_statically() {
    if !bwrap_here() {
        return;
    }
    assert_caught(
        "compound_statement",
        "bypass",
        "forbidden_import",
        "train.py:16: imports forbidden module `torch`",
    );
    assert_caught(
        "fullwidth_name",
        "bypass",
        "forbidden_import",
        "imports forbidden module `torch`",
    );
    assert_caught(
        "declared_encoding",
        "bypass",
        "forbidden_import",
        "helper.py:3: imports forbidden module `torch`",
    );
}

#[test]
fn a_kept_pytorch_script_launched_by_subprocess_is_caught() {
    if !bwrap_here() {
        return;
    }
    let phase = assert_caught(
        "kept_script",
        "bypass",
        "forbidden_import",
        "reference_impl.txt:",
    );
    let kinds: Vec<&str> = phase["finding_records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"runtime_import"), "{kinds:?}");
}

#[test]
fn torch_from_outside_the_workspace_is_not_there_and_the_attempt_is_caught() {
    if !bwrap_here() {
        return;
    }
    let planted = Path::new("/tmp/xstack-planted/torch");
    std::fs::create_dir_all(planted).unwrap();
    std::fs::write(
        planted.join("__init__.py"),
        "print('PLANTED TORCH LOADED')\n",
    )
    .unwrap();
    let (_dir, repo) = port("planted_in_tmp");
    let (code, phase, output) = grade(&repo);
    std::fs::remove_dir_all("/tmp/xstack-planted").unwrap();
    assert_eq!(code, 1, "{output}");
    assert_eq!(phase["failure"], "bypass");
    assert!(!output.contains("PLANTED TORCH LOADED"), "{output}");
    assert!(
        phase["finding_records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["kind"] == "runtime_import"),
        "{phase:#}"
    );
    let phase = assert_caught("other_environment", "bypass", "runtime_import", "`torch`");
    assert!(
        !phase
            .to_string()
            .contains("loaded torch from another environment")
    );
}

/// A port that keeps PyTorch by loading another environment's `torch/__init__.py` from its
/// path (`importlib.util.spec_from_file_location`): confined, it cannot see that file, and
/// the attempt is a bypass naming torch, not the port's crash: the scan sees the loader
/// called with torch's name, and the audit sees the file opened when every name is built at
/// run time.
#[test]
fn torch_loaded_by_its_path_is_a_bypass_not_a_crash() {
    if !bwrap_here() {
        return;
    }
    assert_caught(
        "torch_by_path",
        "bypass",
        "forbidden_import",
        "train.py:22: loads forbidden module `torch` from a file (spec_from_file_location)",
    );
    let phase = assert_caught(
        "torch_by_guessed_path",
        "bypass",
        "runtime_import",
        "imported forbidden module `torch` at run time",
    );
    let opened = phase["finding_records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "runtime_import")
        .map(|r| r["text"].as_str().unwrap())
        .collect::<Vec<_>>();
    assert!(
        opened
            .iter()
            .any(|t| t.contains("opened") && t.contains("/torch/__init__.py")),
        "{opened:?}"
    );
}

#[test]
fn a_published_number_without_training_fails_the_seed_check() {
    if !bwrap_here() {
        return;
    }
    assert_caught(
        "hard_coded",
        "bypass",
        "seed_check",
        "`eval_mse` is 0.0112 under seeds 0 and 1: the result does not come from the seeded run",
    );
    // The seed check's own points are in the journal, so a replay shows that run's values.
    let (_dir, repo) = port("hard_coded");
    let (_, _, output) = grade(&repo);
    let seed_points: Vec<serde_json::Value> = output
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "seed_check_metrics")
        .flat_map(|e| e["points"].as_array().unwrap().clone())
        .collect();
    assert!(
        seed_points.iter().any(|p| p[2] == 0.0112),
        "{seed_points:?}\n{output}"
    );
}

#[test]
fn the_run_folder_is_not_visible_to_verify() {
    if !bwrap_here() {
        return;
    }
    let (_dir, repo) = port("reads_the_journal");
    let (code, phase, output) = grade(&repo);
    assert_eq!(code, 1, "{output}");
    assert_eq!(phase["failure"], "crash", "{phase:#}");
    assert!(output.contains("No such file or directory"), "{output}");
}

#[test]
fn replacing_the_protected_evaluation_is_caught() {
    if !bwrap_here() {
        return;
    }
    assert_caught(
        "patch_protected",
        "bypass",
        "protected_changed",
        "replaces `evaluation.mse` of the protected module `eval`",
    );
    assert_caught(
        "patch_protected_at_run_time",
        "bypass",
        "protected_changed",
        "`eval.mse` of the protected eval.py was replaced at run time",
    );
}

#[test]
fn names_symlinks_and_start_up_tricks_are_findings() {
    if !bwrap_here() {
        return;
    }
    assert_caught(
        "forbidden_name",
        "bypass",
        "forbidden_name",
        "vendor/torch: named after the forbidden module `torch`",
    );
    assert_caught(
        "python_without_site",
        "bypass",
        "other",
        "started Python with -S",
    );
    let (_dir, repo) = port("");
    std::os::unix::fs::symlink(root().join(TASK).join("solution"), repo.join("oracle")).unwrap();
    let (code, phase, output) = grade(&repo);
    assert_eq!(code, 1, "{output}");
    assert_eq!(phase["failure"], "bypass");
    let record = &phase["finding_records"][0];
    assert_eq!(record["kind"], "symlink_out", "{phase:#}");
    assert_eq!(record["file"], "oracle");
}

/// The agent that copies the oracle through the journal: it works when the agent is not
/// confined (the documented risk of running without `--sandbox`), and finds nothing to
/// read under `--sandbox`.
#[test]
fn a_sandboxed_agent_cannot_find_the_oracle() {
    if !bwrap_here() {
        return;
    }
    let agent = format!("script:{TASK}/agents/steal_solution.jsonl");
    for sandboxed in [false, true] {
        let runs = tempfile::tempdir().unwrap();
        let mut args = vec![
            "run",
            TASK,
            "--agent",
            &agent,
            "--headless",
            "--runs-dir",
            runs.path().to_str().unwrap(),
        ];
        if sandboxed {
            args.push("--sandbox");
        }
        let out = run(&args);
        let run_dir = only_run_dir(runs.path());
        let journal = common::journal_text(&run_dir);
        let result = result(&run_dir);
        if sandboxed {
            assert_eq!(out.status.code(), Some(1), "{}", text(&out));
            assert!(journal.contains("no journal and no task folder to read"));
            assert_eq!(result["phases"][0]["failure"], "bypass");
        } else {
            assert_eq!(out.status.code(), Some(0), "{}", text(&out));
            assert!(journal.contains("copied the oracle from the task folder"));
            assert_eq!(result["passed_in_phase"], 1);
        }
    }
}

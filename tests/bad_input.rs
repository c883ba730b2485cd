//! Bad input: a clear message naming the file, field or program, the right exit status, no
//! run folder, no panic.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use std::path::Path;

/// An edit of a task.toml text.
type Edit = Box<dyn Fn(String) -> String>;

const GOOD_TASK: &str = "tests/tasks/jsonl-protected";

/// A copy of the test task under a temp folder, with its task.toml edited by `edit`.
fn broken_task(edit: impl Fn(String) -> String) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("jsonl-protected");
    std::fs::create_dir_all(dir.join("repo")).unwrap();
    for f in ["train.py", "eval.py"] {
        std::fs::copy(
            root().join(GOOD_TASK).join("repo").join(f),
            dir.join("repo").join(f),
        )
        .unwrap();
    }
    let text = std::fs::read_to_string(root().join(GOOD_TASK).join("task.toml")).unwrap();
    std::fs::write(dir.join("task.toml"), edit(text)).unwrap();
    (tmp, dir)
}

fn assert_run_refused(task: &Path, agent: &str, code: i32, needle: &str) {
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "run",
        task.to_str().unwrap(),
        "--agent",
        agent,
        "--headless",
        "--runs-dir",
        runs.path().join("r").to_str().unwrap(),
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(code), "{all}");
    assert!(all.contains(needle), "expected `{needle}` in:\n{all}");
    assert!(!all.contains("panicked"), "{all}");
    assert!(!runs.path().join("r").exists(), "a run folder was created");
}

#[test]
fn each_task_rule_is_reported_with_file_field_and_line() {
    let cases: Vec<(&str, Edit)> = vec![
        (
            "unknown field `colour`",
            Box::new(|t: String| t.replace("[run]\n", "[run]\ncolour = 1\n")),
        ),
        (
            "field `id`",
            Box::new(|t: String| t.replace("id = \"jsonl-protected\"", "id = \"other-id\"")),
        ),
        (
            "exactly one of `regex` or `json_key`",
            Box::new(|t: String| {
                t.replace(
                    "json_key = \"eval_mse\"",
                    "json_key = \"eval_mse\"\nregex = 'x(?P<value>1)'",
                )
            }),
        ),
        (
            "named group `value`",
            Box::new(|t: String| {
                t.replace("json_key = \"eval_mse\"", "regex = 'eval_mse=([0-9.]+)'")
            }),
        ),
        (
            "does not compile",
            Box::new(|t: String| {
                t.replace("json_key = \"eval_mse\"", "regex = '(?P<value>[0-9.+'")
            }),
        ),
        (
            "not a [[metric]] name",
            Box::new(|t: String| t.replace("metric = \"eval_mse\"", "metric = \"mse\"")),
        ),
        (
            "must be a finite number >= 0",
            Box::new(|t: String| t.replace("tolerance = 0.0031", "tolerance = -1.0")),
        ),
        (
            "unknown variant `sideways`",
            Box::new(|t: String| t.replace("direction = \"lower\"", "direction = \"sideways\"")),
        ),
        (
            "unknown variant `median`",
            Box::new(|t: String| t.replace("reduce = \"last\"", "reduce = \"median\"")),
        ),
        (
            "field `source.path`",
            Box::new(|t: String| t.replace("path = \"repo\"", "path = \"nowhere\"")),
        ),
    ];
    for (needle, edit) in cases {
        let (_tmp, dir) = broken_task(edit);
        let out = run(&["check", dir.to_str().unwrap()]);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{needle}: {all}");
        assert!(all.contains(needle), "expected `{needle}` in:\n{all}");
        assert!(all.contains("task.toml:"), "no file:line in:\n{all}");
        assert_run_refused(
            &dir,
            &format!(
                "script:{}",
                root().join(GOOD_TASK).join("agents/pass.jsonl").display()
            ),
            2,
            needle,
        );
    }
}

#[test]
fn check_accepts_the_bundled_tasks() {
    let out = run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("ok    digits-mlp"));
    let out = run(&["check", GOOD_TASK, "no-such-task"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("task `no-such-task` not found"));
}

#[test]
fn broken_trajectory_is_a_usage_error_naming_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let traj = tmp.path().join("t.jsonl");
    std::fs::write(
        &traj,
        "{\"phase\": 1}\n{\"say\": \"ok\"}\n{\"say\": oops}\n",
    )
    .unwrap();
    let needle = format!("{}:3:", traj.display());
    assert_run_refused(
        &root().join(GOOD_TASK),
        &format!("script:{}", traj.display()),
        2,
        &needle,
    );
}

#[test]
fn missing_agent_program_is_an_infrastructure_error_before_anything_starts() {
    assert_run_refused(
        &root().join(GOOD_TASK),
        "cmd:xstack-missing-agent-program --go {prompt}",
        3,
        "`xstack-missing-agent-program` not found",
    );
}

#[test]
fn unknown_agent_and_task_are_usage_errors() {
    assert_run_refused(
        &root().join(GOOD_TASK),
        "telepathy",
        2,
        "unknown agent `telepathy`",
    );
    let out = run(&["run", "no-such-task", "--headless"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no-such-task"));
}

#[test]
fn an_unknown_theme_is_refused_by_demo_and_replay_before_anything_starts() {
    let cwd = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for args in [
        vec!["demo", "--theme", "no-such-theme"],
        vec!["replay", "runs/nothing", "--theme", "no-such-theme"],
    ] {
        let out = xstack()
            .args(&args)
            .current_dir(cwd.path())
            .env("XSTACK_CACHE_DIR", cache.path())
            .output()
            .unwrap();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {all}");
        assert!(all.contains("no-such-theme"), "{args:?}: {all}");
        assert!(!all.contains("panicked"), "{all}");
        checked += 1;
    }
    // Nothing was written: not the demo task into the cache (only the log), not a run folder.
    let cached: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(cached, ["xstack.log"]);
    assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);
    assert_eq!(checked, 2);
}

/// After the demo a newcomer types `xstack …`: the README's set-up says how that command
/// gets onto the PATH, right after the demo, and the binary Cargo installs is the one the
/// README's commands name.
#[test]
fn the_readme_says_how_xstack_gets_onto_the_path_after_the_demo() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let demo = readme
        .find("cargo run --release -- demo")
        .expect("the README's first command runs the demo");
    let next_section = readme[demo..]
        .find("\n## ")
        .map_or(readme.len(), |i| demo + i);
    let setup = &readme[demo..next_section];
    assert!(
        setup.contains("cargo install --path . --locked"),
        "the set-up section does not say how to install xstack:\n{setup}"
    );
    assert!(setup.contains("target/release/xstack"), "{setup}");
    // `cargo install --path .` installs the package's binary, named after the package.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let name = manifest
        .lines()
        .find_map(|l| l.strip_prefix("name = "))
        .unwrap();
    assert_eq!(name, "\"xstack\"");
    assert!(
        !manifest.contains("[[bin]]"),
        "a [[bin]] section may rename it"
    );
    assert!(
        readme.contains("| `xstack demo"),
        "the commands are written `xstack …`"
    );
}

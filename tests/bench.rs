//! `xstack bench` end to end: the report of the test task × three scripted agents × 2
//! repeats over two runners, resuming (a second invocation runs nothing, an interrupted one
//! finishes the rest), `--retry-failed`, an unreachable runner in the pool, trial timeouts.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::*;
use serde_json::{Value, json};

const TASK: &str = "tests/tasks/jsonl-protected";

fn bench(args: &[&str], out: &Path) -> Output {
    xstack()
        .arg("bench")
        .args(args)
        .arg("--out")
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn report(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

/// The trial run folders under `out`.
fn trial_dirs(out: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("bench-trial.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn statuses(out: &Path) -> Vec<String> {
    trial_dirs(out)
        .iter()
        .map(|d| {
            let record: Value =
                serde_json::from_str(&std::fs::read_to_string(d.join("bench-trial.json")).unwrap())
                    .unwrap();
            record["status"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn a_bench_over_two_runners_reports_every_trial_and_a_second_run_runs_none() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path();
    let agents: Vec<String> = ["pass", "gap_then_pass", "crash"]
        .iter()
        .map(|a| format!("script:{TASK}/agents/{a}.jsonl"))
        .collect();
    let mut args = vec!["--task", TASK, "--agent"];
    args.extend(agents.iter().map(String::as_str));
    args.extend(["--repeats", "2", "--runner", "local", "--runner", "local"]);
    let first = bench(&args, out);
    let text1 = text(&first);
    assert_eq!(first.status.code(), Some(0), "{text1}");
    assert!(
        text1.contains("6 to run, 2 at a time; runners: local, local"),
        "{text1}"
    );
    // Without a terminal: one line per finished trial.
    assert_eq!(
        text1
            .lines()
            .filter(|l| l.contains("/6 jsonl-protected × "))
            .count(),
        6,
        "{text1}"
    );

    let r = report(out);
    let trials = r["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 6);
    let expected = [
        (0, true, json!(1), Value::Null),
        (1, true, json!(2), Value::Null),
        (2, false, Value::Null, json!("crash")),
    ];
    for (i, trial) in trials.iter().enumerate() {
        let (agent, passed, phase, failure) = &expected[i / 2];
        assert_eq!(trial["task"], "jsonl-protected");
        assert_eq!(trial["agent"], agents[*agent]);
        assert_eq!(trial["repeat"], json!(i % 2 + 1));
        assert_eq!(trial["passed"], json!(passed), "{trial}");
        assert_eq!(trial["passed_in_phase"], *phase, "{trial}");
        assert_eq!(trial["failure"], *failure, "{trial}");
        assert!(trial["duration_s"].as_f64().unwrap() > 0.0);
        // Each trial is a normal run folder: it replays, with the run's exit status.
        let dir = PathBuf::from(trial["run_dir"].as_str().unwrap());
        assert!(dir.starts_with(out), "{}", dir.display());
        assert_eq!(result(&dir)["passed"], json!(passed));
    }
    let replay = run(&[
        "replay",
        trials[4]["run_dir"].as_str().unwrap(),
        "--headless",
    ]);
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay));
    let zero = json!({"bypass": 0, "crash": 0, "missed_eval": 0, "fidelity_gap": 0});
    let no_claims = json!({"claims": 0, "overclaims": 0, "overclaim_rate": null, "cost_usd": null});
    let mut summary = json!([
        {"agent": agents[0], "trials": 2, "graded": 2, "passed": 2, "pass_rate": 1.0,
         "pass_rate_ci95": [0.3424, 1.0], "passed_phase1": 2, "passed_phase2": 0,
         "failures": zero},
        {"agent": agents[1], "trials": 2, "graded": 2, "passed": 2, "pass_rate": 1.0,
         "pass_rate_ci95": [0.3424, 1.0], "passed_phase1": 0, "passed_phase2": 2,
         "failures": zero},
        {"agent": agents[2], "trials": 2, "graded": 2, "passed": 0, "pass_rate": 0.0,
         "pass_rate_ci95": [0.0, 0.6576], "passed_phase1": 0, "passed_phase2": 0,
         "failures": {"bypass": 0, "crash": 2, "missed_eval": 0, "fidelity_gap": 0}},
    ]);
    for row in summary.as_array_mut().unwrap() {
        row.as_object_mut()
            .unwrap()
            .extend(no_claims.as_object().unwrap().clone());
    }
    assert_eq!(r["summary"], summary);
    // One task: Wilson's intervals; two trials each cannot tell a pass from a crash.
    assert_eq!(r["interval_method"], "wilson");
    assert_eq!(
        r["pairs"],
        json!([
            {"a": agents[0], "b": agents[1], "difference": 0.0,
             "difference_ci95": [-0.8021, 0.8021], "distinguishable": false},
            {"a": agents[0], "b": agents[2], "difference": 1.0,
             "difference_ci95": [-0.1344, 1.0], "distinguishable": false},
            {"a": agents[1], "b": agents[2], "difference": 1.0,
             "difference_ci95": [-0.1344, 1.0], "distinguishable": false},
        ])
    );
    // Per phase, how it ended: these scripted agents exit 0, report nothing else of
    // themselves (no claim, usage, session or tool calls) and run no Python of their own.
    let said_nothing = json!({"exit_code": 0, "claimed_success": null, "claim": null,
        "tokens_in": null, "tokens_out": null, "cost_usd": null, "session": null,
        "tool_calls": null, "tool_failures": null, "first_tool_error": null,
        "ran_port": false});
    let mut phases = json!([{"phase": 1, "outcome": "graded", "verdict": "fail"},
                            {"phase": 2, "outcome": "graded", "verdict": "pass"}]);
    for phase in phases.as_array_mut().unwrap() {
        phase
            .as_object_mut()
            .unwrap()
            .extend(said_nothing.as_object().unwrap().clone());
    }
    assert_eq!(trials[2]["agent_outcome"], phases);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| `script:gap_then_pass.jsonl` | 2 | 2 | 2 | 100% | 34–100% | 0 | 2 |"),
        "{md}"
    );
    assert!(
        md.contains("| jsonl-protected | PyTorch → JAX | 2/2 (34–100%) · "),
        "{md}"
    );
    for figure in ["pass_rate", "failures", "grid"] {
        assert!(md.contains(&format!("(figures/{figure}.svg)")), "{md}");
        assert!(md.contains(&format!("(figures/{figure}.png)")), "{md}");
    }
    assert!(md.contains("there is no figure of claims"), "{md}");

    // Everything is settled: a second invocation runs no trial and reports the same.
    let before = trial_dirs(out);
    let second = bench(&args, out);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    assert!(text(&second).contains("6 settled"), "{}", text(&second));
    assert!(text(&second).contains("0 to run"), "{}", text(&second));
    assert_eq!(trial_dirs(out), before);
    assert_eq!(report(out), r);

    // The report is rebuilt from the folder alone, byte for byte, as often as asked.
    let written = report_files(out);
    assert_eq!(
        written.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        [
            "figures/failures.png",
            "figures/failures.svg",
            "figures/grid.png",
            "figures/grid.svg",
            "figures/pass_rate.png",
            "figures/pass_rate.svg",
            "figures/ran_port.png",
            "figures/ran_port.svg",
            "report.json",
            "report.md"
        ]
    );
    std::fs::remove_dir_all(out.join("figures")).unwrap();
    std::fs::remove_file(out.join("report.md")).unwrap();
    for _ in 0..2 {
        let rebuilt = run(&["bench", "--report", out.to_str().unwrap()]);
        assert_eq!(rebuilt.status.code(), Some(0), "{}", text(&rebuilt));
        assert!(text(&rebuilt).contains("report: "), "{}", text(&rebuilt));
        assert_eq!(report_files(out), written);
    }
    assert_eq!(trial_dirs(out), before, "--report runs nothing");

    // The same report of the loose run folders.
    let loose_dir = tempfile::tempdir().unwrap();
    let mut args = vec!["report".to_string()];
    args.extend(before.iter().map(|d| d.display().to_string()));
    args.extend(["--out".to_string(), loose_dir.path().display().to_string()]);
    let loose = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(loose.status.code(), Some(0), "{}", text(&loose));
    let l = report(loose_dir.path());
    assert_eq!(l["summary"], r["summary"]);
    assert_eq!(l["pairs"], r["pairs"]);
    assert!(loose_dir.path().join("figures/grid.svg").is_file());
}

/// The report files of a bench folder (report.md, report.json, figures/*), by name.
fn report_files(out: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = ["report.md", "report.json"]
        .iter()
        .map(|n| (n.to_string(), std::fs::read(out.join(n)).unwrap()))
        .collect();
    for entry in std::fs::read_dir(out.join("figures")).unwrap() {
        let path = entry.unwrap().path();
        let name = format!("figures/{}", path.file_name().unwrap().to_string_lossy());
        files.push((name, std::fs::read(&path).unwrap()));
    }
    files.sort();
    files
}

#[test]
fn reports_of_what_is_not_a_bench_or_a_run_are_exit_2() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().to_str().unwrap();
    let done = run(&["bench", "--report", dir]);
    assert_eq!(done.status.code(), Some(2), "{}", text(&done));
    assert!(
        text(&done).contains("not a bench folder"),
        "{}",
        text(&done)
    );
    let done = run(&["report", dir, "--out", dir]);
    assert_eq!(done.status.code(), Some(2), "{}", text(&done));
    assert!(text(&done).contains("not a run folder"), "{}", text(&done));
    let done = run(&["bench", "--report", dir, "--task", TASK]);
    assert_eq!(done.status.code(), Some(2), "{}", text(&done));
    assert!(!empty.path().join("report.md").exists());
}

/// A task that needs no Python environment and runs in an instant: its run prints the
/// `acc=` line of `score.txt`, which must reach 1.0. Trajectories in `agents/`.
fn quick_task() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    common::quick_task(
        root.path(),
        "cat score.txt",
        &[("train.py", "import jax\n"), ("score.txt", "acc=0.5\n")],
        "",
    );
    let agents = root.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    let fix = r#"{"write": "score.txt", "text": "acc=1.0\n"}"#;
    for (name, steps) in [
        (
            "noop",
            r#"{"phase": 1}
{"say": "Looking."}
{"phase": 2}
{"say": "Still looking."}"#
                .to_string(),
        ),
        ("fix", format!("{{\"phase\": 1}}\n{fix}")),
        (
            "steady",
            format!("{{\"phase\": 1}}\n{{\"sleep_ms\": 1500}}\n{fix}"),
        ),
        ("stuck", "{\"phase\": 1}\n{\"sleep_ms\": 60000}".to_string()),
    ] {
        std::fs::write(agents.join(format!("{name}.jsonl")), format!("{steps}\n")).unwrap();
    }
    root
}

fn quick_args(root: &Path, agents: &[&str]) -> Vec<String> {
    let mut args = vec![
        "--task".to_string(),
        root.join("quick").display().to_string(),
        "--agent".to_string(),
    ];
    for a in agents {
        args.push(format!(
            "script:{}",
            root.join("agents").join(format!("{a}.jsonl")).display()
        ));
    }
    args
}

fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn closed_port_runner() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("ssh://127.0.0.1:{port}/tmp/xstack-nowhere")
}

#[test]
fn an_interrupted_bench_resumes_and_finishes_the_rest() {
    let root = quick_task();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path();
    let mut args = quick_args(root.path(), &["steady"]);
    args.extend(["--repeats", "4", "--jobs", "1"].map(String::from));
    let mut child = xstack()
        .arg("bench")
        .args(&args)
        .arg("--out")
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(60), || statuses(out)
            .contains(&"finished".to_string())),
        "no trial finished"
    );
    let first = trial_dirs(out)[0].clone();
    let first_result = std::fs::read_to_string(first.join("result.json")).unwrap();
    // SAFETY: kill with a pid this test spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let mut status = None;
    assert!(wait_until(Duration::from_secs(30), || {
        status = child.try_wait().unwrap();
        status.is_some()
    }));
    assert_eq!(status.unwrap().code(), Some(3));
    let after_stop = statuses(out);
    let finished = after_stop.iter().filter(|s| *s == "finished").count();
    assert!(finished < 4, "{after_stop:?}");
    assert!(
        after_stop
            .iter()
            .all(|s| s == "finished" || s == "interrupted"),
        "{after_stop:?}"
    );

    let resumed = bench(&refs(&args), out);
    let text = text(&resumed);
    assert_eq!(resumed.status.code(), Some(0), "{text}");
    assert!(text.contains(&format!("{finished} settled")), "{text}");
    assert!(text.contains(&format!("{} to run", 4 - finished)), "{text}");
    assert_eq!(statuses(out), vec!["finished"; 4]);
    // The trial finished before the interruption was kept as it was.
    assert_eq!(
        std::fs::read_to_string(first.join("result.json")).unwrap(),
        first_result
    );
    let r = report(out);
    assert_eq!(r["summary"][0]["trials"], 4);
    assert_eq!(r["summary"][0]["passed"], 4);
}

#[test]
fn retry_failed_reruns_infrastructure_failures_and_never_graded_ones() {
    let root = quick_task();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path();
    let base = quick_args(root.path(), &["noop", "fix"]);
    let unreachable = closed_port_runner();

    let mut args = base.clone();
    args.extend(["--runner".to_string(), unreachable.clone()]);
    let first = bench(&refs(&args), out);
    assert_eq!(first.status.code(), Some(3), "{}", text(&first));
    assert!(
        text(&first).contains("Connection refused"),
        "{}",
        text(&first)
    );
    let r = report(out);
    assert_eq!(r["summary"][0]["failures"]["infra"], 1);
    assert_eq!(r["trials"][1]["failure"], "infra");

    // Without --retry-failed an infrastructure failure is settled: nothing runs.
    let again = bench(&refs(&args), out);
    assert_eq!(again.status.code(), Some(3));
    assert!(text(&again).contains("0 to run"), "{}", text(&again));

    let mut retry = base.clone();
    retry.extend(["--runner", "local", "--retry-failed"].map(String::from));
    let retried = bench(&refs(&retry), out);
    assert_eq!(retried.status.code(), Some(0), "{}", text(&retried));
    assert!(text(&retried).contains("2 to run"), "{}", text(&retried));
    let r = report(out);
    assert_eq!(r["trials"][0]["failure"], "fidelity_gap");
    assert_eq!(r["trials"][1]["passed"], true);
    assert_eq!(
        trial_dirs(out).len(),
        2,
        "the failed attempts were replaced"
    );

    // A graded failure is a result: --retry-failed does not run it again.
    let settled = bench(&refs(&retry), out);
    assert_eq!(settled.status.code(), Some(0));
    assert!(text(&settled).contains("0 to run"), "{}", text(&settled));
}

#[test]
fn an_unreachable_runner_in_the_pool_sends_trials_to_another() {
    let root = quick_task();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path();
    let mut args = quick_args(root.path(), &["fix"]);
    args.extend([
        "--repeats".to_string(),
        "2".to_string(),
        "--runner".to_string(),
        closed_port_runner(),
        "--runner".to_string(),
        "local".to_string(),
    ]);
    let done = bench(&refs(&args), out);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let r = report(out);
    assert_eq!(r["summary"][0]["passed"], 2);
    let journals: String = trial_dirs(out).iter().map(|d| journal_text(d)).collect();
    assert!(journals.contains("is unreachable"), "{journals}");
    assert!(journals.contains("trying another runner"), "{journals}");
}

#[test]
fn a_trial_past_its_time_limit_is_a_timeout_not_an_infrastructure_failure() {
    let root = quick_task();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path();
    let mut args = quick_args(root.path(), &["stuck"]);
    args.extend(["--trial-timeout", "1"].map(String::from));
    let done = bench(&refs(&args), out);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    assert!(text(&done).contains("TIMEOUT"), "{}", text(&done));
    let r = report(out);
    assert_eq!(r["trials"][0]["failure"], "timeout");
    assert_eq!(r["summary"][0]["failures"]["timeout"], 1);
    let again = bench(&refs(&args), out);
    assert!(text(&again).contains("0 to run"), "{}", text(&again));
}

#[test]
fn bad_bench_usage_is_exit_2_and_runs_nothing() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out");
    let agent = format!("script:{TASK}/agents/pass.jsonl");
    for (args, words) in [
        (
            vec!["--task", TASK, "--agent", &agent, "--repeats", "0"],
            "--repeats",
        ),
        (
            vec!["--task", TASK, "--agent", &agent, "--jobs", "0"],
            "--jobs",
        ),
        (
            vec!["--task", TASK, "--agent", &agent, "--runner", "ftp://x"],
            "runner `ftp://x`",
        ),
        (vec!["--task", TASK, "--agent", "shell"], "shell"),
        (
            vec!["--task", "no-such-task", "--agent", &agent],
            "no-such-task",
        ),
        (
            vec!["--task", TASK, "--agent", &agent, &agent],
            "given twice",
        ),
    ] {
        let done = bench(&args, &out);
        assert_eq!(done.status.code(), Some(2), "{args:?}: {}", text(&done));
        assert!(text(&done).contains(words), "{args:?}: {}", text(&done));
        assert!(!out.exists(), "{args:?} created the bench folder");
    }
}

/// Where verify cannot be confined (here: no bubblewrap on PATH), a bench refuses to start
/// its trials unless `--allow-unconfined` says otherwise.
#[test]
fn a_bench_refuses_trials_whose_verify_cannot_be_confined() {
    let out_dir = tempfile::tempdir().unwrap();
    let agent = format!("script:{TASK}/agents/pass.jsonl");
    let refused = xstack()
        .args(["bench", "--task", TASK, "--agent", &agent, "--out"])
        .arg(out_dir.path())
        .env("PATH", "/nonexistent")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(3), "{}", text(&refused));
    assert!(
        text(&refused).contains("bubblewrap (`bwrap`) is not on PATH")
            && text(&refused).contains("--allow-unconfined"),
        "{}",
        text(&refused)
    );
    assert!(trial_dirs(out_dir.path()).is_empty(), "nothing ran");
}

/// `--agent demo` runs each task's own demo trajectory, so one bench covers the demos of
/// several tasks; a task without one is refused before anything runs.
#[test]
fn the_demo_agent_runs_each_tasks_own_trajectory() {
    let root = quick_task();
    let first = root.path().join("quick");
    let second = root.path().join("quick-two");
    copy_dir(&first, &second);
    let toml = std::fs::read_to_string(second.join("task.toml")).unwrap();
    std::fs::write(
        second.join("task.toml"),
        toml.replace("id = \"quick\"", "id = \"quick-two\""),
    )
    .unwrap();
    for (task, steps) in [
        // Fixed in phase 1.
        (
            &first,
            "{\"phase\": 1}\n{\"write\": \"score.txt\", \"text\": \"acc=1.0\\n\"}\n",
        ),
        // Fixed only in phase 2.
        (
            &second,
            "{\"phase\": 1}\n{\"say\": \"Looking.\"}\n{\"phase\": 2}\n{\"write\": \"score.txt\", \"text\": \"acc=1.0\\n\"}\n",
        ),
    ] {
        std::fs::create_dir_all(task.join("demo")).unwrap();
        std::fs::write(task.join("demo/trajectory.jsonl"), steps).unwrap();
    }
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out");
    let (a, b) = (first.display().to_string(), second.display().to_string());
    let done = bench(&["--task", &a, &b, "--agent", "demo"], &out);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let r = report(&out);
    let mut phases: Vec<(String, Value)> = r["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task"].as_str().unwrap().to_string(),
                t["passed_in_phase"].clone(),
            )
        })
        .collect();
    phases.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        phases,
        vec![
            ("quick".to_string(), Value::from(1)),
            ("quick-two".to_string(), Value::from(2))
        ]
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for row in [
        "| quick | PyTorch → JAX | 1/1",
        "| quick-two | PyTorch → JAX | 1/1",
    ] {
        assert!(md.contains(row), "no row `{row}`: {md}");
    }
    // A task without a demo trajectory: exit 2, the task named, nothing made.
    std::fs::remove_dir_all(second.join("demo")).unwrap();
    let refused = out_dir.path().join("refused");
    let done = bench(&["--task", &a, &b, "--agent", "demo"], &refused);
    assert_eq!(done.status.code(), Some(2), "{}", text(&done));
    assert!(
        text(&done).contains("task quick-two has no demo trajectory"),
        "{}",
        text(&done)
    );
    assert!(!refused.exists());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_task_from_a_public_repository_carries_its_repository_and_commit_to_every_output() {
    let root = quick_task();
    let repo = root.path().join("quick/repo");
    std::fs::write(repo.join("LICENSE"), "MIT License\n").unwrap();
    let toml = root.path().join("quick/task.toml");
    let mut written = std::fs::read_to_string(&toml).unwrap();
    written.push_str(
        "\n[upstream]\nrepository = \"Tiiiger/SGC\"\n\
         commit = \"2c7a2727e82e462d8ef9d6e57f0b08888e16488f\"\nlicence = \"MIT\"\n\
         experiment = \"train.py\"\nchanged = [\"score.txt: added\"]\n",
    );
    std::fs::write(&toml, written).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path();
    let done = bench(&refs(&quick_args(root.path(), &["fix"])), out);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));

    let upstream = json!({
        "repository": "Tiiiger/SGC",
        "commit": "2c7a2727e82e462d8ef9d6e57f0b08888e16488f",
        "licence": "MIT",
        "experiment": "train.py",
        "changed": ["score.txt: added"]
    });
    let trial = &trial_dirs(out)[0];
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(trial.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["upstream"], upstream);
    assert_eq!(result["task"], "quick");
    assert_eq!(report(out)["trials"][0]["upstream"], upstream);

    let tree = "https://github.com/Tiiiger/SGC/tree/2c7a2727e82e462d8ef9d6e57f0b08888e16488f";
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains(&format!(
            "| quick | PyTorch → JAX | [Tiiiger/SGC@2c7a272]({tree}) | "
        )),
        "{md}"
    );
    let index = std::fs::read_to_string(out.join("site/index.html")).unwrap();
    assert!(
        index.contains(&format!("<td>quick</td><td><a class=\"upstream\" href=\"{tree}\">Tiiiger/SGC@2c7a272</a></td><td>MIT</td>")),
        "{index}"
    );
    let pages: Vec<String> = std::fs::read_dir(out.join("site/trials"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path().join("index.html")).unwrap())
        .collect();
    assert_eq!(pages.len(), 1);
    assert!(
        pages[0].contains(&format!(
            "from <a class=\"upstream\" href=\"{tree}\">Tiiiger/SGC@2c7a272</a> (MIT)"
        )),
        "{}",
        pages[0]
    );
}

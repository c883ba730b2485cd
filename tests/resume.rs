//! Record, replay and resume: a run killed with SIGKILL at each phase continues with
//! `run --resume` to the same result as an uninterrupted run; `runs` marks it interrupted
//! meanwhile; asciicast export of a recorded run.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::*;

const TASK: &str = "tests/tasks/jsonl-protected";

fn agent() -> String {
    format!(
        "script:{}/{TASK}/agents/gap_then_pass.jsonl",
        root().display()
    )
}

/// (phase, failure, criterion values) of each phase: what must match between runs.
fn outcome(r: &serde_json::Value) -> Vec<(i64, String, String)> {
    r["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["phase"].as_i64().unwrap(),
                p["failure"].to_string(),
                p["criteria"].to_string(),
            )
        })
        .collect()
}

fn uninterrupted() -> serde_json::Value {
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "run",
        TASK,
        "--agent",
        &agent(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    result(&only_run_dir(runs.path()))
}

#[test]
fn resume_after_sigkill_at_each_phase_reaches_the_same_result() {
    let reference = uninterrupted();
    for cut in [
        "phase 1: migrate",
        "phase 1: verify",
        "phase 2: migrate",
        "phase 2: verify",
    ] {
        let runs = tempfile::tempdir().unwrap();
        let mut child = xstack()
            .args([
                "run",
                TASK,
                "--agent",
                &agent(),
                "--headless",
                "--runs-dir",
                runs.path().to_str().unwrap(),
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut seen = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if line.ends_with(cut) {
                break;
            }
        }
        assert!(seen.contains(cut), "never reached `{cut}`:\n{seen}");
        child.kill().unwrap();
        child.wait().unwrap();
        let dir = only_run_dir(runs.path());
        kill_processes_mentioning(&dir.display().to_string());

        let listed = run(&["runs", runs.path().to_str().unwrap()]);
        assert!(
            text(&listed).contains("(interrupted: no end recorded)"),
            "{cut}: {}",
            text(&listed)
        );
        let replayed = run(&["replay", dir.to_str().unwrap(), "--headless"]);
        assert_eq!(
            replayed.status.code(),
            Some(3),
            "{cut}: {}",
            text(&replayed)
        );

        let out = run(&["run", "--resume", dir.to_str().unwrap(), "--headless"]);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(0), "{cut}: {all}");
        assert!(all.contains("resumed from the journal"), "{all}");
        let resumed = result(&dir);
        assert_eq!(resumed["passed_in_phase"], 2, "{cut}");
        assert_eq!(outcome(&resumed), outcome(&reference), "{cut}");
        let replayed = run(&["replay", dir.to_str().unwrap(), "--headless"]);
        assert_eq!(
            replayed.status.code(),
            Some(0),
            "{cut}: {}",
            text(&replayed)
        );
        let listed = run(&["runs", runs.path().to_str().unwrap()]);
        assert!(
            !text(&listed).contains("(interrupted"),
            "{cut}: {}",
            text(&listed)
        );
        assert!(
            text(&listed).contains("FAIL fidelity_gap → PASS"),
            "{}",
            text(&listed)
        );
    }
}

#[test]
fn a_finished_run_is_not_resumed() {
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "run",
        TASK,
        "--agent",
        &agent(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let dir = only_run_dir(runs.path());
    let out = run(&["run", "--resume", dir.to_str().unwrap(), "--headless"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("nothing to resume"), "{}", text(&out));

    // The recorded agent terminal exports as a valid asciicast v2 file.
    let cast = runs.path().join("agent.cast");
    let out = run(&[
        "export",
        dir.to_str().unwrap(),
        "--cast",
        cast.to_str().unwrap(),
        "--pane",
        "agent",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let content = std::fs::read_to_string(&cast).unwrap();
    let mut lines = content.lines();
    let header: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["version"], 2);
    assert!(header["width"].as_u64().unwrap() > 0 && header["height"].as_u64().unwrap() > 0);
    assert!(
        header["title"]
            .as_str()
            .unwrap()
            .contains("jsonl-protected")
    );
    let mut last = 0.0;
    let mut output = String::new();
    let mut markers = Vec::new();
    for line in lines {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        let t = event[0].as_f64().unwrap();
        assert!(t >= last, "times go backwards: {line}");
        last = t;
        match event[1].as_str().unwrap() {
            "o" => output.push_str(event[2].as_str().unwrap()),
            "m" => markers.push(event[2].as_str().unwrap().to_string()),
            "r" => assert!(event[2].as_str().unwrap().contains('x')),
            other => panic!("unexpected event type {other}"),
        }
    }
    assert!(output.contains("[xstack scripted agent]"), "{output}");
    assert!(
        markers.contains(&"phase 1: verify".to_string()),
        "{markers:?}"
    );
    assert!(
        markers.contains(&"phase 1: FAIL fidelity_gap".to_string()),
        "{markers:?}"
    );
}

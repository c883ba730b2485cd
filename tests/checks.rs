//! What the agent checked (docs/CHECKS.md): scripted agents of known behaviour (one runs its
//! port and the source, one runs nothing, one sees its port crash, one leaves a run going in
//! the background) are recorded exactly in the journal, `result.json`, the TUI and a bench
//! report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use common::tmux::Tmux;
use common::{journal_text, only_run_dir, quick_task, text, xstack};
use serde_json::Value;

/// A task whose `train.py` prints `acc=` and the number in `score.txt` (0.5 in the source;
/// the criterion wants at least 0.9), run by the system's Python; and four agents.
fn setting() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let task = quick_task(
        root.path(),
        "python3 train.py",
        &[
            (
                "train.py",
                "import sys\nprint('acc=' + open('score.txt').read().strip())\nif sys.argv[1:] == ['crash']:\n    raise RuntimeError('asked to crash')\n",
            ),
            ("score.txt", "0.5\n"),
            (
                "sleeper.py",
                "import time\nprint('acc=0.95', flush=True)\ntime.sleep(300)\n",
            ),
        ],
        "\n[integrity]\nrequire_imports = [\"sys\"]\nseed_check = false\n",
    );
    let agents = root.path().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    let fix = r#"{"write": "score.txt", "text": "1.0\n"}"#;
    // The source run: its script by its path under the task's source, from its folder.
    let source = format!(
        r#"{{"run": "cd {} && python3 train.py"}}"#,
        task.join("repo").display()
    );
    for (name, steps) in [
        (
            "checks",
            format!("{{\"phase\": 1}}\n{source}\n{fix}\n{{\"run\": \"python3 train.py\"}}"),
        ),
        ("blind", format!("{{\"phase\": 1}}\n{fix}")),
        (
            "crash",
            "{\"phase\": 1}\n{\"run\": \"python3 train.py crash\"}".to_string(),
        ),
        (
            "idle",
            "{\"phase\": 1}\n{\"say\": \"Looking.\"}".to_string(),
        ),
        (
            "background",
            format!(
                "{{\"phase\": 1}}\n{fix}\n{{\"run\": \"python3 sleeper.py > /dev/null 2>&1 &\"}}\n{{\"sleep_ms\": 1500}}"
            ),
        ),
    ] {
        std::fs::write(agents.join(format!("{name}.jsonl")), format!("{steps}\n")).unwrap();
    }
    root
}

fn agent(root: &Path, name: &str) -> String {
    format!(
        "script:{}",
        root.join("agents").join(format!("{name}.jsonl")).display()
    )
}

/// Runs `agent` headless on the task; the run folder.
fn headless(root: &Path, name: &str) -> PathBuf {
    let runs = root.join(format!("runs-{name}"));
    let out = xstack()
        .args(["run", root.join("quick").to_str().unwrap(), "--headless"])
        .args([
            "--agent",
            &agent(root, name),
            "--runs-dir",
            runs.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{}", text(&out));
    only_run_dir(&runs)
}

fn phase1_checked(dir: &Path) -> Value {
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    result["phases"][0]["agent_checked"].clone()
}

/// The journal's `agent_run` events, in order.
fn agent_runs(dir: &Path) -> Vec<Value> {
    journal_text(dir)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "agent_run")
        .collect()
}

#[test]
fn the_runs_of_each_agent_are_recorded_exactly() {
    let root = setting();
    let root = root.path();

    // (a) The source once, then its port once, which prints a value inside the criterion.
    let dir = headless(root, "checks");
    let runs = agent_runs(&dir);
    let seen: Vec<(&str, &str, i64, f64)> = runs
        .iter()
        .map(|r| {
            (
                r["target"].as_str().unwrap(),
                r["program"].as_str().unwrap(),
                r["exit_code"].as_i64().unwrap(),
                r["metrics"][0]["value"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![("source", "train.py", 0, 0.5), ("port", "train.py", 0, 1.0)],
        "{runs:?}"
    );
    assert_eq!(runs[1]["metrics"][0]["within"], true);
    assert_eq!(runs[0]["metrics"][0]["within"], false);
    let checked = phase1_checked(&dir);
    assert_eq!(checked["port_runs"], 1);
    assert_eq!(checked["source_runs"], 1);
    assert_eq!(checked["last_port_exit"], 0);
    assert_eq!(checked["last_port_metrics"][0]["value"], 1.0);
    assert_eq!(checked["compared"], true);
    assert!(checked["since_last_run_s"].as_f64().is_some(), "{checked}");

    // (b) Nothing run: zero runs, not unknown.
    let dir = headless(root, "blind");
    assert!(agent_runs(&dir).is_empty());
    let checked = phase1_checked(&dir);
    assert_eq!(checked["port_runs"], 0);
    assert_eq!(checked["compared"], false);
    assert_eq!(checked["since_last_run_s"], Value::Null);

    // (c) Its port crashes: the status, the exception and the value it printed before.
    let dir = headless(root, "crash");
    let runs = agent_runs(&dir);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["exit_code"], 1);
    assert_eq!(runs[0]["exception"], "RuntimeError: asked to crash");
    assert_eq!(runs[0]["metrics"][0]["value"], 0.5);
    assert_eq!(phase1_checked(&dir)["last_port_exit"], 1);

    // A run left going in the background: recorded, and ended at the end of the turn.
    let dir = headless(root, "background");
    let runs = agent_runs(&dir);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["program"], "sleeper.py");
    assert_eq!(runs[0]["exit_code"], Value::Null);
    assert_eq!(runs[0]["metrics"][0]["value"], 0.95);
    let still = std::process::Command::new("pgrep")
        .args(["-f", &format!("{}/workspace/sleeper.py", dir.display())])
        .output()
        .unwrap();
    assert!(still.stdout.is_empty(), "the background run is still going");
    assert_eq!(
        std::process::Command::new("pgrep")
            .args(["-f", "python3 sleeper.py"])
            .output()
            .unwrap()
            .stdout,
        b""
    );
}

#[test]
fn the_agent_pane_says_what_the_agent_ran_live_and_in_replay() {
    let root = setting();
    let root = root.path();
    let runs = root.join("runs-tui");
    let command = format!(
        "cd {} && {} run {} --agent {} --auto --runs-dir {}; sleep 600",
        root.display(),
        env!("CARGO_BIN_EXE_xstack"),
        root.join("quick").display(),
        agent(root, "checks"),
        runs.display()
    );
    let wanted = "ran train.py 1× · last acc 1 ✓ · source 1×";
    let tmux = Tmux::start(&command, 200, 50);
    let screen = tmux.wait_until(
        "the verdict and the agent's runs",
        Duration::from_secs(120),
        |s| s.contains("PASSED in phase 1") && s.contains(wanted),
    );
    assert!(screen.contains(" 1 Agent ran train.py 1×"), "{screen}");
    // The Metrics pane's legend: the agent's own run beside the graded run's.
    assert!(screen.contains("◇ agent's run 1"), "{screen}");
    tmux.keys(&["q"]);
    drop(tmux);
    let dir = only_run_dir(&runs);
    let command = format!(
        "{} replay {} --speed 100; sleep 600",
        env!("CARGO_BIN_EXE_xstack"),
        dir.display()
    );
    let tmux = Tmux::start(&command, 200, 50);
    tmux.wait_until("the replay's agent runs", Duration::from_secs(60), |s| {
        s.contains(wanted)
    });
}

#[test]
fn a_bench_splits_the_pass_rate_by_whether_the_agent_ran_its_port() {
    let root = setting();
    let root = root.path();
    let out = root.join("bench");
    let mut args = vec![
        "bench".to_string(),
        "--task".into(),
        root.join("quick").display().to_string(),
        "--agent".into(),
    ];
    // Counted by hand: `checks` ran its port and passed, `crash` ran it and failed;
    // `blind` never ran it and passed, `idle` never ran it and failed.
    for name in ["checks", "blind", "crash", "idle"] {
        args.push(agent(root, name));
    }
    args.extend(["--out".into(), out.display().to_string()]);
    let done = xstack().args(&args).stdin(Stdio::null()).output().unwrap();
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let ran: Vec<(String, Value)> = report["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["agent"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string();
            (name, t["ran_port"].clone())
        })
        .collect();
    assert_eq!(
        ran,
        vec![
            ("checks.jsonl".to_string(), Value::from(true)),
            ("blind.jsonl".to_string(), Value::from(false)),
            ("crash.jsonl".to_string(), Value::from(true)),
            ("idle.jsonl".to_string(), Value::from(false)),
        ]
    );
    let all = report["ran_port"]
        .as_array()
        .unwrap()
        .iter()
        .find(|line| line["agent"] == "all")
        .unwrap()
        .clone();
    assert_eq!(
        (all["ran"]["passed"].clone(), all["ran"]["graded"].clone()),
        (1.into(), 2.into())
    );
    assert_eq!(
        (
            all["did_not"]["passed"].clone(),
            all["did_not"]["graded"].clone()
        ),
        (1.into(), 2.into())
    );
    // Wilson's 95% interval of 1 in 2: 9.45% to 90.55%.
    for side in ["ran", "did_not"] {
        let (low, high) = (
            all[side]["low"].as_f64().unwrap(),
            all[side]["high"].as_f64().unwrap(),
        );
        assert!(
            (low - 0.0945).abs() < 5e-4 && (high - 0.9055).abs() < 5e-4,
            "{all}"
        );
    }
    assert_eq!(all["difference"]["points"].as_f64(), Some(0.0), "{all}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Did the agent run its port?"), "{md}");
    assert!(out.join("figures/ran_port.svg").is_file());
}

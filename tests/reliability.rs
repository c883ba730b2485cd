//! Reliability and security: no orphans on any exit path, secrets never recorded, bounded
//! memory under hostile output, a crash-safe journal, and a source that stays untouched.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

const TASK: &str = "tests/tasks/jsonl-protected";

/// The arguments of `xstack run TASK --agent AGENT --headless --runs-dir RUNS`.
fn headless_args<'a>(task: &'a str, agent: &'a str, runs: &'a str) -> [&'a str; 7] {
    [
        "run",
        task,
        "--agent",
        agent,
        "--headless",
        "--runs-dir",
        runs,
    ]
}

/// Whether a process whose command line is exactly `sleep <seconds>` runs.
fn sleeper_alive(seconds: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rfind(')')
                .is_some_and(|i| stat[i + 2..].starts_with('Z'));
            !zombie && cmdline == format!("sleep\0{seconds}\0").as_bytes()
        })
}

#[test]
fn no_descendant_survives_any_exit_path() {
    let solution = root().join(TASK).join("solution/train.py");
    // Normal end: the agent leaves a daemon behind and exits.
    let runs = tempfile::tempdir().unwrap();
    let agent = format!(
        "cmd:bash -c 'setsid sleep 3131 </dev/null >/dev/null 2>&1 & cp {} train.py'",
        solution.display()
    );
    let out = run(&headless_args(TASK, &agent, runs.path().to_str().unwrap()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        wait_until(Duration::from_secs(5), || !sleeper_alive("3131")),
        "the daemon of a finished run outlived it"
    );

    // Each signal while the agent works.
    for (signal, seconds, kind) in [
        (libc::SIGTERM, "3132", "terminated"),
        (libc::SIGINT, "3133", "user_abort"),
        (libc::SIGHUP, "3134", "hangup"),
    ] {
        let runs = tempfile::tempdir().unwrap();
        let agent =
            format!("cmd:bash -c 'setsid sleep {seconds} </dev/null >/dev/null 2>&1 & sleep 120'");
        let mut child = xstack()
            .args(headless_args(TASK, &agent, runs.path().to_str().unwrap()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(
            wait_until(Duration::from_secs(60), || sleeper_alive(seconds)),
            "the agent's daemon never started"
        );
        unsafe {
            libc::kill(child.id() as i32, signal);
        }
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(3), "signal {signal}");
        assert!(
            wait_until(Duration::from_secs(5), || !sleeper_alive(seconds)),
            "a descendant outlived signal {signal}"
        );
        let dir = only_run_dir(runs.path());
        let r = result(&dir);
        // Recorded as what interrupted it.
        assert_eq!(r["interrupted"], kind, "{r}");
    }
}

#[test]
fn secrets_are_redacted_from_everything_recorded() {
    let secret = "s3cr3t-value-0123456789";
    let runs = tempfile::tempdir().unwrap();
    let solution = root().join(TASK).join("solution/train.py");
    // The value is printed in two writes with a pause between, so it spans two chunks.
    let agent = format!(
        "cmd:bash -c 'printf \"token: s3cr3t-val\"; sleep 0.3; printf \"ue-0123456789 end\\n\"; echo \"$XSTACK_DEMO_API_KEY\" > leaked.txt; python -c \"import sys\" \"$XSTACK_DEMO_API_KEY\"; cp {} train.py'",
        solution.display()
    );
    let out = xstack()
        .env("XSTACK_DEMO_API_KEY", secret)
        .args(headless_args(TASK, &agent, runs.path().to_str().unwrap()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !text(&out).contains(secret),
        "the progress lines hold the secret"
    );
    let dir = only_run_dir(runs.path());
    let journal = journal_text(&dir);
    assert!(!journal.contains(secret), "the journal holds the secret");
    let events = journal_events(&dir);
    let agent_text: String = events
        .iter()
        .filter(|e| e["type"] == "agent_output")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert!(agent_text.contains("token: [redacted] end"), "{agent_text}");
    // The agent's own Python run, its command line redacted; its raw records gone once read.
    let runs: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["type"] == "agent_run").collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["program"], "-c");
    assert_eq!(runs[0]["exit_code"], 0);
    assert_eq!(
        runs[0]["argv"].as_array().unwrap().last().unwrap(),
        "[redacted]"
    );
    let records = dir.join("workspace/.xstack/agent-runs/records");
    assert!(!records.exists(), "{}", records.display());
    // The agent's exit is recorded after the last of its output, never before it.
    let mut exited = false;
    for event in &events {
        match event["type"].as_str() {
            Some("agent_started") => exited = false,
            Some("agent_exited") => exited = true,
            Some("agent_output") => assert!(!exited, "output after the agent's exit: {event}"),
            _ => {}
        }
    }
    let cast = dir.join("agent.cast");
    let out = run(&[
        "export",
        dir.to_str().unwrap(),
        "--cast",
        cast.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(assert_no_recorded_file_holds(&dir, secret) >= 3);
}

#[test]
fn an_agent_that_is_a_python_program_leaves_no_secret_in_the_run_folder() {
    let (key, token) = ("sk-ant-0123456789abcdef", "tok-9876543210fedcba");
    let runs = tempfile::tempdir().unwrap();
    // The agent is itself a Python program (as aider is): the recorder loads in its own
    // process, which echoes two keys of its environment (the first in two writes) and works
    // on past a driver tick, so its records are those of the agent's own process.
    let bin = tempfile::tempdir().unwrap();
    let program = bin.path().join("agent.py");
    std::fs::write(
        &program,
        format!(
            "import os, shutil, sys, time\n\
             key = os.environ['XSTACK_DEMO_API_KEY']\n\
             sys.stdout.write('key: ' + key[:6]); sys.stdout.flush(); time.sleep(0.3)\n\
             print(key[6:] + ' token: ' + os.environ['XSTACK_DEMO_TOKEN'], flush=True)\n\
             time.sleep(1)\n\
             shutil.copy({:?}, 'train.py')\n",
            root()
                .join(TASK)
                .join("solution/train.py")
                .display()
                .to_string()
        ),
    )
    .unwrap();
    let agent = format!("cmd:python3 {}", program.display());
    let out = xstack()
        .env("XSTACK_DEMO_API_KEY", key)
        .env("XSTACK_DEMO_TOKEN", token)
        .args(headless_args(TASK, &agent, runs.path().to_str().unwrap()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = only_run_dir(runs.path());
    let agent_text: String = journal_events(&dir)
        .iter()
        .filter(|e| e["type"] == "agent_output")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert!(
        agent_text.contains("key: [redacted] token: [redacted]"),
        "{agent_text}"
    );
    // No file holds a key, the recorder's in the workspace included, and nothing of the
    // recorder's is left there.
    for secret in [key, token] {
        assert!(assert_no_recorded_file_holds(&dir, secret) >= 3);
        assert_no_recorded_file_holds(&dir.join("workspace/.xstack"), secret);
    }
    let records = dir.join("workspace/.xstack/agent-runs/records");
    assert!(!records.exists(), "{}", records.display());
}

/// A task in a temp folder whose run prints hostile output, then a metric.
fn hostile_task(root_dir: &Path, body: &str) -> PathBuf {
    let dir = root_dir.join("hostile");
    std::fs::create_dir_all(dir.join("repo")).unwrap();
    std::fs::write(dir.join("repo/run.py"), body).unwrap();
    std::fs::write(
        dir.join("task.toml"),
        r#"id = "hostile"
title = "Hostile output"
[source]
path = "repo"
[published]
citation = "none"
[env]
packages = []
[run]
command = "python3 run.py"
timeout_s = 120
[[metric]]
name = "acc"
regex = 'acc=(?P<value>[0-9.]+)'
[[criterion]]
metric = "acc"
published = 0.5
tolerance = 0.01
direction = "within"
[integrity]
forbid_imports = []
require_imports = []
[phase2]
details = "none"
"#,
    )
    .unwrap();
    dir
}

#[test]
fn hostile_output_keeps_memory_bounded_and_the_run_graded() {
    let tmp = tempfile::tempdir().unwrap();
    let script = r#"import os, random, sys
out = sys.stdout.buffer
random.seed(7)
out.write(b"\x1b]0;")
chunk = b"x" * (1 << 20)
for _ in range(64):
    out.write(chunk)
out.write(b"\n")
out.write(b"y" * (10 << 20))
out.write(bytes(random.getrandbits(8) for _ in range(1 << 20)))
out.write(b"\xff\xfe\xc3(\xe2\x82\n\x1bP" + b"z" * (2 << 20))
out.write(b"\x1b\\\nacc=0.5\n")
out.flush()
"#;
    let task = hostile_task(tmp.path(), script);
    let runs = tmp.path().join("runs");
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak_kb=%M"])
        .arg(env!("CARGO_BIN_EXE_xstack"))
        .args([
            "grade",
            task.to_str().unwrap(),
            "--repo",
            task.join("repo").to_str().unwrap(),
            "--headless",
            "--runs-dir",
            runs.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        &all[all.len().saturating_sub(3000)..]
    );
    assert!(!all.contains("panicked"));
    let peak_kb: u64 = all
        .lines()
        .find_map(|l| l.strip_prefix("peak_kb="))
        .and_then(|v| v.trim().parse().ok())
        .expect("peak memory reported");
    assert!(peak_kb < 150 * 1024, "peak resident memory {peak_kb} KiB");
    let r = result(&only_run_dir(&runs));
    assert_eq!(r["phases"][0]["criteria"][0]["value"], 0.5);
}

#[test]
fn a_journal_killed_at_random_moments_replays_consistently() {
    let solution = root().join(TASK).join("solution/train.py");
    let delays = [0u64, 150, 700, 1300, 2100, 3400];
    let (mut checked, mut interrupted) = (0, 0);
    for (i, delay_ms) in delays.into_iter().enumerate() {
        let runs = tempfile::tempdir().unwrap();
        let agent = format!(
            "cmd:bash -c 'sleep 0.{i}; cp {} train.py'",
            solution.display()
        );
        let mut child = xstack()
            .args(headless_args(TASK, &agent, runs.path().to_str().unwrap()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let journal_made = || {
            std::fs::read_dir(runs.path())
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .any(|e| e.path().join("journal.jsonl.zst").is_file())
        };
        assert!(
            wait_until(Duration::from_secs(60), journal_made),
            "the run's journal was never created"
        );
        // The kill lands at an arbitrary moment of the run: that is the point of the test.
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        let dir = only_run_dir(runs.path());
        kill_processes_mentioning(&dir.display().to_string());
        let replay = run(&["replay", dir.to_str().unwrap(), "--headless"]);
        let out = text(&replay);
        assert!(!out.contains("panicked"), "{out}");
        let finished = out.contains("PASSED in phase") || out.contains("FAILED");
        assert_eq!(
            replay.status.code(),
            Some(if finished { 0 } else { 3 }),
            "{out}"
        );
        let listed = text(&run(&["runs", runs.path().to_str().unwrap()]));
        assert_eq!(
            listed.contains("(interrupted: no end recorded)"),
            !finished,
            "{listed}"
        );
        checked += 1;
        interrupted += usize::from(!finished);
    }
    assert_eq!(checked, delays.len(), "every kill is checked");
    assert!(
        interrupted >= 3,
        "only {interrupted} of {checked} kills landed before the run's end"
    );
}

#[test]
fn the_source_is_not_written_through_workspace_links_or_parent_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let task = tmp.path().join("jsonl-protected");
    overlay(&root().join(TASK), &task);
    // The source holds a symlink to one of its own files.
    std::os::unix::fs::symlink("train.py", task.join("repo/alias.py")).unwrap();
    let before = tree_hash(&task);
    let solution = root().join(TASK).join("solution/train.py");
    let agent = format!(
        "cmd:bash -c 'echo hacked > alias.py; echo hacked > ../escape.txt; cp {} train.py'",
        solution.display()
    );
    let runs = tmp.path().join("runs");
    let out = run(&headless_args(
        task.to_str().unwrap(),
        &agent,
        runs.to_str().unwrap(),
    ));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(tree_hash(&task), before, "the task folder changed");
    let dir = only_run_dir(&runs);
    assert_eq!(
        std::fs::read_to_string(dir.join("workspace/alias.py")).unwrap(),
        "hacked\n"
    );
    assert!(
        !std::fs::symlink_metadata(dir.join("workspace/alias.py"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn shadowing_packages_and_start_up_hooks_are_a_bypass() {
    let tmp = tempfile::tempdir().unwrap();
    let solution = root().join(TASK).join("solution/train.py");
    let agent = format!(
        "cmd:bash -c 'cp {} train.py; mkdir -p numpy && touch numpy/__init__.py; echo \"import os\" > evil.pth'",
        solution.display()
    );
    let runs = tmp.path().join("runs");
    let out = run(&headless_args(TASK, &agent, runs.to_str().unwrap()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = result(&only_run_dir(&runs));
    assert_eq!(r["phases"][0]["failure"], "bypass");
    let findings = r["phases"][0]["findings"].to_string();
    assert!(
        findings.contains("numpy/: shadows the installed package `numpy`"),
        "{findings}"
    );
    assert!(findings.contains("evil.pth"), "{findings}");
}

#[test]
fn zstdcat_prints_the_journal_as_json_lines_up_to_a_torn_last_frame() {
    use xstack::event::Event;
    use xstack::journal::{self, Header, JournalWriter};
    if !require_tool("zstd (zstdcat)", || runs_ok("zstdcat", &["--version"])) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(journal::JOURNAL_FILE);
    let mut writer = JournalWriter::create(&path, &Header::new("t", "a", "r", "s")).unwrap();
    let mut last_frame = 0;
    for i in 0..3 {
        last_frame = std::fs::metadata(&path).unwrap().len();
        writer
            .append(
                f64::from(i),
                &Event::Note {
                    text: format!("note {i}"),
                },
            )
            .unwrap();
        writer.flush().unwrap();
    }
    drop(writer);
    let zstdcat = |path: &Path| Command::new("zstdcat").arg(path).output().unwrap();
    let whole = zstdcat(&path);
    assert!(whole.status.success());
    let printed = String::from_utf8(whole.stdout).unwrap();
    assert_eq!(printed, journal_text(dir.path()));
    let lines: Vec<serde_json::Value> = printed
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["format"], "xstack-journal");
    assert_eq!(lines[3]["text"], "note 2");
    // Cut inside the last frame's block: zstdcat and xstack both keep the frames before it.
    let bytes = std::fs::read(&path).unwrap();
    let cut = (last_frame as usize + bytes.len()) / 2;
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let torn = zstdcat(&path);
    assert!(!torn.status.success());
    let kept = String::from_utf8_lossy(&torn.stdout);
    assert!(
        kept.contains("note 1") && !kept.contains("note 2"),
        "{kept}"
    );
    let read = journal::read(&path).unwrap();
    assert!(read.torn);
    assert_eq!(read.entries.len(), 2);
}

#[test]
fn a_run_recorded_as_a_plain_journal_replays_exports_and_lists_the_same() {
    let runs = tempfile::tempdir().unwrap();
    let solution = root().join(TASK).join("solution/train.py");
    let agent = format!("cmd:cp {} train.py", solution.display());
    let out = run(&headless_args(TASK, &agent, runs.path().to_str().unwrap()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = only_run_dir(runs.path());
    let readers = |dir: &Path| {
        let replay = run(&["replay", dir.to_str().unwrap(), "--headless"]);
        assert_eq!(replay.status.code(), Some(0), "{}", text(&replay));
        let cast = dir.join("run.cast");
        let export = run(&[
            "export",
            dir.to_str().unwrap(),
            "--cast",
            cast.to_str().unwrap(),
            "--pane",
            "run",
        ]);
        assert_eq!(export.status.code(), Some(0), "{}", text(&export));
        let listed = text(&run(&["runs", runs.path().to_str().unwrap()]));
        (
            text(&replay),
            std::fs::read_to_string(&cast).unwrap(),
            listed,
        )
    };
    let compressed = readers(&dir);
    // The same run as an earlier version recorded it: the same lines, uncompressed.
    std::fs::write(dir.join("journal.jsonl"), journal_text(&dir)).unwrap();
    std::fs::remove_file(dir.join("journal.jsonl.zst")).unwrap();
    let plain = readers(&dir);
    assert_eq!(plain, compressed);
    assert!(!plain.2.contains("(interrupted"), "{}", plain.2);
    // `runs` rebuilds an interrupted plain run from its journal: no result, no end.
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let cut = journal.rfind("{\"t\"").unwrap();
    std::fs::write(dir.join("journal.jsonl"), &journal[..cut]).unwrap();
    std::fs::remove_file(dir.join("result.json")).unwrap();
    let listed = text(&run(&["runs", runs.path().to_str().unwrap()]));
    assert!(
        listed.contains("(interrupted: no end recorded)"),
        "{listed}"
    );
    assert!(listed.contains("jsonl-protected"), "{listed}");
}

//! Blame the right party (SPEC §3 `outcome`): an agent that fails before doing any work and
//! a session interrupted by a signal are not verdicts on a port; an agent that fails after
//! changing files still has its work graded.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;

const TASK: &str = "tests/tasks/jsonl-protected";

#[test]
fn an_agent_that_exits_at_once_with_an_error_is_an_agent_failure_not_a_verdict() {
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "run",
        TASK,
        "--agent",
        "cmd:sh -c 'echo Invalid auth method selected. >&2; exit 41'",
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let r = result(&only_run_dir(runs.path()));
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(
        phases.len(),
        1,
        "no second phase after an agent failure: {r:#}"
    );
    assert_eq!(phases[0]["outcome"], "agent_failure");
    assert_eq!(phases[0]["verdict"], serde_json::Value::Null);
    assert_eq!(phases[0]["failure"], serde_json::Value::Null);
    assert_eq!(
        phases[0]["outcome_detail"],
        "Invalid auth method selected. (exit status 41)"
    );
    assert_eq!(r["passed"], false);
    assert!(
        text(&out).contains("phase 1: not graded (agent_failure)"),
        "{}",
        text(&out)
    );
}

#[test]
fn an_agent_that_fails_after_changing_files_has_its_work_graded() {
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "run",
        TASK,
        "--agent",
        "cmd:sh -c 'echo \"# touched\" >> train.py; echo quota exceeded >&2; exit 2'",
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = result(&only_run_dir(runs.path()));
    assert_eq!(r["phases"][0]["outcome"], "graded");
    assert_eq!(r["phases"][0]["failure"], "bypass");
}

#[test]
fn sigterm_during_a_headless_run_is_recorded_as_terminated() {
    let runs = tempfile::tempdir().unwrap();
    let mut child = xstack()
        .args([
            "run",
            TASK,
            "--agent",
            "cmd:sleep 120",
            "--headless",
            "--runs-dir",
        ])
        .arg(runs.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = || {
        std::fs::read_dir(runs.path())
            .ok()
            .and_then(|mut d| d.next())
            .and_then(Result::ok)
            .is_some_and(|e| {
                journal_events(&e.path())
                    .iter()
                    .any(|ev| ev["type"] == "agent_started")
            })
    };
    assert!(
        wait_until(Duration::from_secs(60), started),
        "the agent never started"
    );
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    assert_eq!(child.wait().unwrap().code(), Some(3));
    let r = result(&only_run_dir(runs.path()));
    assert_eq!(r["interrupted"], "terminated", "{r:#}");
    assert_eq!(r["phases"][0]["outcome"], "interrupted");
}

/// An interactive agent that never acts on its prompt (a dialog took it, say) and goes idle
/// is an agent failure, not a bypass of the untouched source.
#[test]
fn an_interactive_agent_that_does_nothing_with_its_prompt_is_an_agent_failure() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[agents.deaf]\ncommand = \"sh -c 'echo Do you trust this folder?; exec sleep 300'\"\nmode = \"interactive\"\nidle_s = 2\n",
    )
    .unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = xstack()
        .args(["run", TASK, "--agent", "deaf", "--headless", "--runs-dir"])
        .arg(runs.path())
        .env("XSTACK_CONFIG", &config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let r = result(&only_run_dir(runs.path()));
    assert_eq!(r["phases"][0]["outcome"], "agent_failure", "{r:#}");
    let detail = r["phases"][0]["outcome_detail"].as_str().unwrap();
    assert!(
        detail.contains("may never have received its prompt"),
        "{detail}"
    );
}

/// An agent whose every command failed (a stand-in for Codex whose `exec --json` reports
/// each command panicking in its sandbox, and which writes no session file, so the
/// commands of its output count): it runs nothing, writes nothing and says "Done". Every
/// tool call failed and the workspace is untouched, so the phase is the agent's failure,
/// with how many failed and the first error, not a `bypass` verdict on the untouched
/// source. The real Codex, whose output shows none of those commands, is in
/// tests/agents_real.rs.
#[test]
fn an_agent_whose_every_tool_call_failed_and_that_changed_nothing_is_an_agent_failure() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let codex = dir.path().join("codex");
    let panic = r#"thread 'main' panicked at linux-sandbox/src/main.rs:9:5:\nfailed to resolve synthetic mount registry temp directory\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"#;
    let command = |id: &str, cmd: &str| {
        format!(
            r#"{{"type":"item.completed","item":{{"id":"{id}","type":"command_execution","command":"{cmd}","aggregated_output":"{panic}","exit_code":101,"status":"failed"}}}}"#
        )
    };
    let events = [
        r#"{"type":"thread.started","thread_id":"t-1"}"#.to_string(),
        command("i1", "bash -lc ls"),
        command("i2", "bash -lc 'python train.py'"),
        r#"{"type":"item.completed","item":{"id":"i3","type":"agent_message","text":"Done"}}"#
            .to_string(),
        r#"{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":2}}"#.to_string(),
    ];
    std::fs::write(
        &codex,
        format!("#!/bin/sh\ncat <<'EOF'\n{}\nEOF\n", events.join("\n")),
    )
    .unwrap();
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o755)).unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = xstack()
        .args(["run", TASK, "--agent", "codex", "--headless", "--runs-dir"])
        .arg(runs.path())
        .env(
            "PATH",
            format!(
                "{}:{}",
                dir.path().display(),
                std::env::var("PATH").unwrap()
            ),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let r = result(&only_run_dir(runs.path()));
    let phase = &r["phases"][0];
    assert_eq!(phase["outcome"], "agent_failure", "{r:#}");
    let error = "shell: exit 101: failed to resolve synthetic mount registry temp directory";
    assert_eq!(
        phase["outcome_detail"],
        format!(
            "every one of its 2 tool calls failed, the first: {error}; the agent changed no file"
        )
    );
    let agent = &phase["agent"];
    assert_eq!(
        (
            agent["tool_calls"].clone(),
            agent["tool_failures"].clone(),
            agent["first_tool_error"].clone()
        ),
        (2.into(), 2.into(), error.into()),
        "{agent}"
    );
    assert_eq!(agent["claim"], "Done");
}

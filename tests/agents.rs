//! The agent presets end to end, headless: each CLI is replaced by a fake program of the same
//! name first on PATH (tests/fake_agent.py) that records how it was started and prints what
//! the real CLI documents. Also the config file, and the bubblewrap sandbox.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::Value;

const TASK: &str = "tests/tasks/jsonl-protected";
const FAKE: &str = include_str!("fake_agent.py");

/// A temp folder holding the fake CLIs, a runs folder and a config file.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for name in ["claude", "codex", "aider", "gemini", "opencode"] {
            let path = bin.join(name);
            std::fs::write(&path, FAKE).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir(dir.path().join("runs")).unwrap();
        Setup { dir }
    }

    fn runs(&self) -> PathBuf {
        self.dir.path().join("runs")
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    /// PATH with the fakes first.
    fn path(&self) -> String {
        format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap()
        )
    }

    /// The port files `files` (a folder of the task), copied next to the fakes so that a
    /// sandboxed agent, whose /tmp is private, sees them wherever the repository is checked
    /// out.
    fn files(&self, files: &str) -> PathBuf {
        let copied = self
            .dir
            .path()
            .join("bin")
            .join(format!("files-{}", files.replace('/', "-")));
        if !copied.exists() {
            let from = root().join(TASK).join(files);
            for entry in walkdir::WalkDir::new(&from)
                .into_iter()
                .filter_map(Result::ok)
            {
                let target = copied.join(entry.path().strip_prefix(&from).unwrap());
                if entry.file_type().is_dir() {
                    std::fs::create_dir_all(&target).unwrap();
                } else {
                    std::fs::copy(entry.path(), &target).unwrap();
                }
            }
        }
        copied
    }

    /// `xstack run TASK --agent AGENT --headless` with the fakes, porting with `files`.
    fn run(&self, agent: &str, files: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let copied = self.files(files);
        let mut cmd = xstack();
        cmd.args(["run", TASK, "--agent", agent, "--headless", "--runs-dir"])
            .arg(self.runs())
            .args(extra)
            .env("PATH", self.path())
            .env("XSTACK_CONFIG", self.config())
            .env("FAKE_FILES", &copied);
        if !self.config().exists() {
            std::fs::write(self.config(), "").unwrap();
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("xstack runs")
    }
}

/// The fake's records, one per start (or per typed prompt for an interactive one).
fn agent_log(run_dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(run_dir.join("workspace/.xstack/agent-log.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The transcript items of the journal, as (phase, item).
fn transcript(run_dir: &Path) -> Vec<(u64, Value)> {
    journal_events(run_dir)
        .into_iter()
        .filter(|e| e["type"] == "transcript")
        .map(|e| (e["phase"].as_u64().unwrap(), e["item"].clone()))
        .collect()
}

fn argv(record: &Value) -> Vec<String> {
    record["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// The phase-one prompt states the task's metric, published value and tolerance.
fn assert_phase_one_prompt(prompt: &str) {
    for needle in [
        "eval_mse",
        "0.0112",
        "0.0031",
        "python train.py",
        "torch",
        "eval.py",
    ] {
        assert!(
            prompt.contains(needle),
            "prompt lacks `{needle}`:\n{prompt}"
        );
    }
}

/// The phase-two prompt names the failure and carries the task's details.
fn assert_phase_two_prompt(prompt: &str) {
    assert!(prompt.contains("fidelity_gap"), "{prompt}");
    assert!(prompt.contains("learning rate 0.05"), "{prompt}");
}

/// A two-phase run of a one-shot preset: returns the run folder and the fake's two records,
/// after checking what every preset shares (it ran in the workspace, with the task's
/// variables, passed in phase 2).
fn two_phase(setup: &Setup, agent: &str) -> (PathBuf, Vec<Value>, String) {
    let out = setup.run(agent, "agents/files/gap_then_pass", &[], &[]);
    let text = text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let dir = only_run_dir(&setup.runs());
    let r = result(&dir);
    assert_eq!(r["passed_in_phase"], 2, "{r}");
    assert_eq!(r["phases"][0]["failure"], "fidelity_gap");
    assert_eq!(r["agent"], agent);
    let log = agent_log(&dir);
    assert_eq!(log.len(), 2, "one start per phase: {log:?}");
    let workspace = dir.join("workspace").canonicalize().unwrap();
    for (i, record) in log.iter().enumerate() {
        assert_eq!(record["agent"], agent);
        assert_eq!(Path::new(record["cwd"].as_str().unwrap()), workspace);
        assert_eq!(record["env"]["XSTACK_PHASE"], (i + 1).to_string());
        assert_eq!(record["env"]["XSTACK_TASK"], "jsonl-protected");
        assert_eq!(record["stdin_tty"], true);
    }
    assert_phase_one_prompt(log[0]["prompt"].as_str().unwrap());
    assert_phase_two_prompt(log[1]["prompt"].as_str().unwrap());
    (dir, log, text)
}

#[test]
fn claude_streams_json_and_resumes_its_session_in_phase_two() {
    let setup = Setup::new();
    let (dir, log, out) = two_phase(&setup, "claude");
    let p1 = log[0]["prompt"].as_str().unwrap();
    assert_eq!(
        argv(&log[0]),
        [
            "-p",
            p1,
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash"
        ]
    );
    let p2 = log[1]["prompt"].as_str().unwrap();
    assert_eq!(
        argv(&log[1]),
        [
            "-p",
            p2,
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--resume",
            "fake-claude-session",
            "--allowedTools",
            "Bash"
        ]
    );
    let items = transcript(&dir);
    let phase1: Vec<&Value> = items
        .iter()
        .filter(|(p, _)| *p == 1)
        .map(|(_, i)| i)
        .collect();
    assert_eq!(phase1[0]["kind"], "session");
    assert!(
        phase1
            .iter()
            .any(|i| i["kind"] == "tool_call" && i["tool"] == "Write")
    );
    assert!(
        phase1
            .iter()
            .any(|i| i["kind"] == "file_edit" && i["path"] == "train.py")
    );
    assert!(phase1.iter().any(|i| i["kind"] == "usage"
        && i["input_tokens"] == 1000
        && i["output_tokens"] == 200
        && i["cost_usd"] == 0.0125));
    assert!(items.iter().any(|(p, i)| *p == 2
        && i["kind"] == "final"
        && i["success"] == true
        && i["text"] == "The JAX port is complete (phase 2)."));
    assert!(
        out.contains("agent usage: 1000 input tokens, 200 output tokens, cost $0.0125"),
        "{out}"
    );
    // result.json keeps the agent's own account of each phase.
    let recorded = result(&dir);
    for (i, phase) in recorded["phases"].as_array().unwrap().iter().enumerate() {
        let agent = &phase["agent"];
        assert_eq!(agent["exit_code"], 0, "{agent}");
        assert_eq!(agent["claimed_success"], true, "{agent}");
        assert_eq!(
            agent["claim"],
            format!("The JAX port is complete (phase {}).", i + 1)
        );
        assert_eq!(agent["tokens_in"], 1000, "{agent}");
        assert_eq!(agent["tokens_out"], 200, "{agent}");
        assert_eq!(agent["cost_usd"], 0.0125, "{agent}");
        assert_eq!(agent["session"], "fake-claude-session", "{agent}");
    }
    // The replay rebuilds the transcript from the journal alone.
    let replay = run(&["replay", dir.to_str().unwrap(), "--headless"]);
    assert!(
        text(&replay)
            .contains("agent's final message (success): The JAX port is complete (phase 1)."),
        "{}",
        text(&replay)
    );
}

#[test]
fn codex_exec_json_resumes_its_thread() {
    let setup = Setup::new();
    let (dir, log, _) = two_phase(&setup, "codex");
    let prompt = |i: usize| log[i]["prompt"].as_str().unwrap().to_string();
    let base = [
        "exec",
        "--json",
        "--sandbox",
        "workspace-write",
        "--skip-git-repo-check",
    ];
    let mut first: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    first.push(prompt(0));
    assert_eq!(argv(&log[0]), first);
    let mut second: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    second.extend([
        "resume".to_string(),
        "fake-codex-thread".to_string(),
        prompt(1),
    ]);
    assert_eq!(argv(&log[1]), second);
    let items = transcript(&dir);
    assert!(items.iter().any(|(p, i)| *p == 1
        && i["kind"] == "tool_call"
        && i["tool"] == "shell"
        && i["input"] == "bash -lc 'python train.py' (exit 0)"));
    assert!(
        items
            .iter()
            .any(|(_, i)| i["kind"] == "file_edit" && i["path"] == "train.py")
    );
    // `exec resume` reports the thread's running total; each phase counts its own turn.
    assert!(items.iter().any(|(p, i)| *p == 1
        && i["kind"] == "usage"
        && i["input_tokens"] == 500
        && i["output_tokens"] == 50));
    assert!(items.iter().any(|(p, i)| *p == 2
        && i["kind"] == "usage"
        && i["input_tokens"] == 600
        && i["output_tokens"] == 60));
    let recorded = result(&dir);
    assert_eq!(recorded["phases"][1]["agent"]["tokens_in"], 600);
    assert_eq!(
        recorded["phases"][1]["agent"]["session"],
        "fake-codex-thread"
    );
    assert!(items.iter().any(|(p, i)| *p == 2
        && i["kind"] == "final"
        && i["text"] == "Migrated train.py to JAX (phase 2)."));
}

#[test]
fn gemini_stream_json_resumes_its_session() {
    let setup = Setup::new();
    let (dir, log, _) = two_phase(&setup, "gemini");
    let p1 = log[0]["prompt"].as_str().unwrap();
    assert_eq!(
        argv(&log[0]),
        [
            "-p",
            p1,
            "--output-format",
            "stream-json",
            "--yolo",
            "--skip-trust"
        ]
    );
    let p2 = log[1]["prompt"].as_str().unwrap();
    assert_eq!(
        argv(&log[1]),
        [
            "--resume",
            "fake-gemini-session",
            "-p",
            p2,
            "--output-format",
            "stream-json",
            "--yolo",
            "--skip-trust"
        ]
    );
    let items = transcript(&dir);
    assert!(
        items
            .iter()
            .any(|(_, i)| i["kind"] == "message" && i["text"] == "Porting train.py.")
    );
    assert!(
        items
            .iter()
            .any(|(_, i)| i["kind"] == "usage" && i["input_tokens"] == 60)
    );
}

#[test]
fn aider_restores_its_chat_history_in_phase_two() {
    let setup = Setup::new();
    let (dir, log, _) = two_phase(&setup, "aider");
    let p1 = log[0]["prompt"].as_str().unwrap();
    let history = [
        "--chat-history-file",
        ".aider.chat.history.md",
        "--input-history-file",
        ".aider.input.history",
    ];
    let mut first = vec!["--message", p1, "--yes-always", "--no-git"];
    first.extend(history);
    assert_eq!(argv(&log[0]), first);
    let p2 = log[1]["prompt"].as_str().unwrap();
    let mut second = vec!["--message", p2, "--yes-always", "--no-git"];
    second.extend(history);
    second.push("--restore-chat-history");
    assert_eq!(argv(&log[1]), second);
    assert!(transcript(&dir).is_empty(), "aider prints text, not events");
}

#[test]
fn opencode_continues_its_session_in_phase_two() {
    let setup = Setup::new();
    let (_, log, _) = two_phase(&setup, "opencode");
    let p1 = log[0]["prompt"].as_str().unwrap();
    assert_eq!(argv(&log[0]), ["run", p1]);
    let p2 = log[1]["prompt"].as_str().unwrap();
    assert_eq!(argv(&log[1]), ["run", "--continue", p2]);
}

#[test]
fn an_interactive_agent_gets_its_prompts_typed_and_ends_its_phases_with_the_done_file() {
    let setup = Setup::new();
    std::fs::write(
        setup.config(),
        "[agents.claude]\nmode = \"interactive\"\nidle_s = 120\nenv = { FAKE_MODEL = \"from-config\" }\n",
    )
    .unwrap();
    let out = setup.run("claude", "agents/files/gap_then_pass", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = only_run_dir(&setup.runs());
    assert_eq!(result(&dir)["passed_in_phase"], 2);
    let log = agent_log(&dir);
    assert_eq!(log.len(), 2, "one typed prompt per phase: {log:?}");
    // One process for both phases, started with the interactive command line.
    for record in &log {
        assert_eq!(argv(record), ["--permission-mode", "acceptEdits"]);
        assert_eq!(record["env"]["FAKE_MODEL"], "from-config");
    }
    let typed = |i: usize| {
        log[i]["stdin"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_phase_one_prompt(&typed(0));
    assert!(typed(0).contains(".xstack/done"));
    assert_phase_two_prompt(&typed(1));
    let journal = journal_text(&dir);
    assert_eq!(journal.matches("\"type\":\"agent_started\"").count(), 1);
    assert!(journal.contains("the agent wrote .xstack/done"));
}

#[test]
fn a_missing_agent_program_is_exit_3_with_how_to_install_it() {
    let setup = Setup::new();
    // A PATH of one empty folder: the CLI may well be installed on this machine.
    let empty = tempfile::tempdir().unwrap();
    let out = xstack()
        .args(["run", TASK, "--agent", "codex", "--headless", "--runs-dir"])
        .arg(setup.runs())
        .env("PATH", empty.path())
        .env("XSTACK_CONFIG", "/dev/null")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("agent program `codex` not found on PATH: install it with `npm install -g @openai/codex`"),
        "{}",
        text(&out)
    );
    assert!(std::fs::read_dir(setup.runs()).unwrap().next().is_none());
}

#[test]
fn config_errors_name_file_line_and_key() {
    let setup = Setup::new();
    std::fs::write(
        setup.config(),
        "theme = \"dark\"\n\n[agents.claude]\nidle_s = 30\ncolour = \"red\"\n",
    )
    .unwrap();
    let out = setup.run("claude", "solution", &[], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let expected = format!(
        "{}:5: key `agents.claude.colour`: unknown field `colour`",
        setup.config().display()
    );
    assert!(text(&out).contains(&expected), "{}", text(&out));
    std::fs::write(setup.config(), "[agents.mine]\nmode = \"interactive\"\n").unwrap();
    let out = setup.run("claude", "solution", &[], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(":1: key `agents.mine`: `mine` is not a preset"),
        "{}",
        text(&out)
    );
    // A missing file named by XSTACK_CONFIG is an error too.
    let out = xstack()
        .args(["run", TASK, "--headless"])
        .env("XSTACK_CONFIG", setup.dir.path().join("absent.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("absent.toml: cannot read"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_config_agent_runs_its_own_command_line() {
    let setup = Setup::new();
    std::fs::write(
        setup.config(),
        "[agents.my-port]\ncommand = \"aider --message {prompt} --no-git\"\nenv = { FAKE_MODEL = \"mine\" }\n",
    )
    .unwrap();
    let out = setup.run("my-port", "solution", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let dir = only_run_dir(&setup.runs());
    assert!(
        dir.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("-my-port")
    );
    let log = agent_log(&dir);
    let prompt = log[0]["prompt"].as_str().unwrap();
    assert_eq!(argv(&log[0]), ["--message", prompt, "--no-git"]);
    assert_eq!(log[0]["env"]["FAKE_MODEL"], "mine");
}

/// Whether bubblewrap can confine processes here at all.
fn bwrap_works() -> bool {
    runs_ok("bwrap", &["--ro-bind", "/", "/", "--unshare-net", "true"])
}

#[test]
fn the_sandbox_confines_writes_to_the_workspace_and_cuts_the_network() {
    if !require_tool("bubblewrap (bwrap)", bwrap_works) {
        return;
    }
    let setup = Setup::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let outside = setup.dir.path().join("escaped.txt");
    // Outside /tmp (private in the sandbox) and outside the workspace: read-only there.
    let readonly = std::path::PathBuf::from("/var/tmp/xstack-sandbox-escape-test.txt");
    let _ = std::fs::remove_file(&readonly);
    let probe = serde_json::json!({
        "outside": outside,
        "readonly": readonly,
        "port": port,
    })
    .to_string();
    let out = setup.run(
        "claude",
        "solution",
        &["--sandbox", "--sandbox-net", "none"],
        &[("FAKE_PROBE", &probe)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("agent started: "), "{}", text(&out));
    assert!(
        text(&out).contains("bwrap --die-with-parent"),
        "{}",
        text(&out)
    );
    let dir = only_run_dir(&setup.runs());
    let result = &agent_log(&dir)[0]["probe"];
    assert_eq!(result["inside"], "ok", "{result}");
    assert!(dir.join("workspace/sandbox-inside.txt").is_file());
    // /tmp is private: the write went to the sandbox's own /tmp, not here.
    assert!(!outside.exists(), "{result}");
    assert!(
        result["readonly"]
            .as_str()
            .unwrap()
            .contains("Read-only file system"),
        "{result}"
    );
    assert!(!readonly.exists());
    let _ = std::fs::remove_file(&readonly);
    assert_ne!(result["connect"], "ok", "{result}");
    drop(listener);
}

#[test]
fn the_sandbox_refuses_to_start_without_bubblewrap_or_a_network_choice() {
    let setup = Setup::new();
    let bin = setup.dir.path().join("bin");
    let out = xstack()
        .args([
            "run",
            TASK,
            "--agent",
            "claude",
            "--headless",
            "--sandbox",
            "--runs-dir",
        ])
        .arg(setup.runs())
        .env("PATH", format!("{}:/nonexistent", bin.display()))
        .env("XSTACK_CONFIG", "/dev/null")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("needs bubblewrap (`bwrap`)"),
        "{}",
        text(&out)
    );
    assert!(std::fs::read_dir(setup.runs()).unwrap().next().is_none());
    if require_tool("bubblewrap (bwrap)", bwrap_works) {
        let out = setup.run("claude", "solution", &["--sandbox"], &[]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains("--sandbox-net allow"), "{}", text(&out));
    }
}

#[test]
fn a_secret_an_agent_echoes_in_its_structured_output_reaches_nothing_recorded() {
    let setup = Setup::new();
    let secret = "sk-fake-Q9x7w5v3u1t0";
    let env = [
        ("XSTACK_TEST_API_KEY", secret),
        ("FAKE_ECHO_ENV", "XSTACK_TEST_API_KEY"),
    ];
    let out = setup.run("claude", "solution", &[], &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!text(&out).contains(secret), "the progress lines hold it");
    let dir = only_run_dir(&setup.runs());
    // The agent did say it, in a message, a tool call and its final word: each is recorded
    // with the value replaced.
    let items: Vec<Value> = transcript(&dir).into_iter().map(|(_, i)| i).collect();
    let said = |kind: &str, field: &str| {
        items
            .iter()
            .filter(|i| i["kind"] == kind)
            .filter_map(|i| i[field].as_str())
            .any(|t| t.contains("[redacted]"))
    };
    assert!(said("message", "text"), "{items:?}");
    assert!(said("tool_call", "input"), "{items:?}");
    assert!(said("final", "text"), "{items:?}");
    let replay = run(&["replay", dir.to_str().unwrap(), "--headless"]);
    assert!(text(&replay).contains("agent says: The key in my environment is [redacted]."));
    assert!(!text(&replay).contains(secret));
    let cast = dir.join("agent.cast");
    let exported = xstack()
        .args(["export", dir.to_str().unwrap(), "--cast"])
        .arg(&cast)
        .output()
        .unwrap();
    assert_eq!(exported.status.code(), Some(0), "{}", text(&exported));
    // A bench of the same agent: its report too.
    let bench_dir = setup.dir.path().join("bench");
    let bench = xstack()
        .args(["bench", "--task", TASK, "--agent", "claude", "--out"])
        .arg(&bench_dir)
        .env("PATH", setup.path())
        .env("XSTACK_CONFIG", setup.config())
        .env("FAKE_FILES", root().join(TASK).join("solution"))
        .envs(env)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(bench.status.code(), Some(0), "{}", text(&bench));
    assert!(!text(&bench).contains(secret));
    assert!(cast.is_file());
    assert!(bench_dir.join("report.md").is_file());
    assert!(assert_no_recorded_file_holds(&dir, secret) >= 4);
    assert!(assert_no_recorded_file_holds(&bench_dir, secret) >= 5);
}

#[test]
fn the_tui_shows_the_prompt_the_transcript_and_the_agents_claim() {
    use common::tmux::Tmux;
    use std::time::Duration;
    let setup = Setup::new();
    std::fs::write(setup.config(), "[agents.claude]\nmode = \"oneshot\"\n").unwrap();
    let command = format!(
        "PATH={} XSTACK_CONFIG={} FAKE_FILES={} {} run {TASK} --agent claude --runs-dir {}; echo EXIT=$?; sleep 600",
        setup.path(),
        setup.config().display(),
        root().join(TASK).join("solution").display(),
        env!("CARGO_BIN_EXE_xstack"),
        setup.runs().display(),
    );
    let tmux = Tmux::start(&command, 200, 60);
    // Captures can land in the middle of a frame: wait for everything to be on one.
    tmux.wait_until(
        "PASSED in phase 1 beside the agent's claim",
        Duration::from_secs(240),
        |screen| {
            screen.contains("PASSED in phase 1")
                && screen.contains("agent's claim: \"The JAX port is complete")
        },
    );
    tmux.keys(&["t"]);
    tmux.wait_until(
        "the transcript's tool calls, file, final message and cost",
        Duration::from_secs(10),
        |screen| {
            [
                "prompts and transcript (t: terminal)",
                "▸ Write",
                "✎ train.py",
                "■ done: The JAX port is complete",
                "$0.0125",
            ]
            .iter()
            .all(|needle| screen.contains(needle))
        },
    );
    // The prompt is above the transcript: `g` goes to the top of the view.
    tmux.keys(&["g"]);
    tmux.wait_until(
        "the phase 1 prompt with the criterion",
        Duration::from_secs(10),
        |screen| {
            ["phase 1: prompt", "eval_mse (its last value", "0.0112"]
                .iter()
                .all(|needle| screen.contains(needle))
        },
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(30));
}

#[test]
fn interactive_claude_in_a_new_folder_is_trusted_in_auto_mode_and_gets_its_prompt_once_the_paste_shows()
 {
    use common::tmux::Tmux;
    use std::time::Duration;
    let setup = Setup::new();
    std::fs::write(
        setup.config(),
        "[agents.claude]\nmode = \"interactive\"\nidle_s = 120\nenv = { FAKE_TUI = \"claude\" }\n",
    )
    .unwrap();
    let files = root().join(TASK).join("agents/files/gap_then_pass");
    let command = format!(
        "PATH={} XSTACK_CONFIG={} FAKE_FILES={} {} run {TASK} --agent claude --runs-dir {}; echo EXIT=$?; sleep 600",
        setup.path(),
        setup.config().display(),
        files.display(),
        env!("CARGO_BIN_EXE_xstack"),
        setup.runs().display(),
    );
    let tmux = Tmux::start(&command, 160, 45);
    // Auto mode: the folder-trust dialog about the run's own workspace is answered by xstack,
    // never by the prompt; then the prompt is pasted, shows as a placeholder, and Enter
    // follows: both phases run with no key pressed.
    tmux.wait_until("PASSED in phase 2", Duration::from_secs(240), |screen| {
        screen.contains("PASSED in phase 2")
    });
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(30));
    let dir = only_run_dir(&setup.runs());
    let log = agent_log(&dir);
    assert!(
        log.iter().all(|record| record.get("swallowed").is_none()),
        "the dialog took typed text: {log:?}"
    );
    assert_eq!(log.len(), 2, "one submitted prompt per phase: {log:?}");
    let typed = |i: usize| {
        log[i]["stdin"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_phase_one_prompt(&typed(0));
    assert_phase_two_prompt(&typed(1));
    let journal = journal_text(&dir);
    assert!(
        journal.contains("auto mode: the agent asked whether to trust")
            && journal.contains("this run's own copy of the source: answered yes"),
        "the journal says what xstack answered: {journal}"
    );
    assert!(
        !journal.contains("the agent asks whether to trust"),
        "a dialog read before it was drawn whole went to the human: {journal}"
    );
}

#[test]
fn a_bench_counts_the_agents_claims_against_the_grader() {
    let setup = Setup::new();
    let files = setup.files("agents/files/gap_then_pass");
    std::fs::write(setup.config(), "").unwrap();
    let out = setup.dir.path().join("bench");
    let bench = xstack()
        .args(["bench", "--task", TASK, "--agent", "claude", "--out"])
        .arg(&out)
        .env("PATH", setup.path())
        .env("XSTACK_CONFIG", setup.config())
        .env("FAKE_FILES", &files)
        .output()
        .expect("xstack bench runs");
    assert_eq!(bench.status.code(), Some(0), "{}", text(&bench));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let summary = &report["summary"][0];
    // Phase 1 claimed success and failed the grade; phase 2 claimed it and passed.
    assert_eq!(summary["passed_phase2"], 1, "{summary}");
    assert_eq!(summary["claims"], 2, "{summary}");
    assert_eq!(summary["overclaims"], 1, "{summary}");
    assert_eq!(summary["overclaim_rate"], 0.5, "{summary}");
    assert_eq!(summary["cost_usd"], 0.025, "{summary}");
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(markdown.contains("overclaim"), "{markdown}");
}

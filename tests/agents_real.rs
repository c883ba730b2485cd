//! The presets against their real CLIs (installed by scripts/setup), headless, on the
//! two-second jsonl-protected task (digits-mlp's 20-second training runs would cost CI
//! minutes that prove nothing more about the agents), started from an empty folder: a
//! scripted model server (tests/model_server) answers each CLI through its documented
//! base-URL setting, failing phase 1 (a port off by a fidelity gap) and fixing it in phase 2. Each agent process runs in a network namespace of its
//! own that has only loopback, with the server started inside it (`unshare -n`); the server
//! is stateless (it answers from the conversation it is sent), so one per process is the
//! same server. xstack, the environment build and the verify runs stay outside.

// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

/// A preset and what its CLI reports.
struct Cli {
    preset: &'static str,
    program: &'static str,
    /// The server answers with the whole file in the reply (aider has no tools).
    edit_in_text: bool,
    /// The CLI's structured output gives a session id, usage and a final word.
    structured: bool,
    /// It reports a cost in dollars.
    cost: bool,
    /// Where under `$HOME` it may keep state (the preset's `state`, the sandbox's list).
    state: &'static [&'static str],
}

/// Claude Code as the preset knows it.
const CLAUDE: Cli = Cli {
    preset: "claude",
    program: "claude",
    edit_in_text: false,
    structured: true,
    cost: true,
    state: &[".claude", ".claude.json"],
};

/// Codex as the preset knows it.
const CODEX: Cli = Cli {
    preset: "codex",
    program: "codex",
    edit_in_text: false,
    structured: true,
    cost: false,
    state: &[".codex"],
};

/// The settings tests/model_server/isolated writes under `$HOME` for every CLI.
const HARNESS_FILES: [&str; 2] = [".codex/config.toml", ".gemini/settings.json"];

const PHASE1_MARKER: &str = "(jsonl-protected)";
const PHASE2_MARKER: &str = "Phase 1 of the migration failed grading";
/// What the model server answers aider's request to summarise the chat so far.
const SUMMARY: &str = "I asked you to port train.py to JAX; you wrote it.";
const PHASE1_FINAL: &str = "Ported train.py to JAX.";
const PHASE2_FINAL: &str = "Fixed the port as the details say.";

/// The program's absolute path on this machine's PATH.
fn installed(program: &str) -> Option<PathBuf> {
    std::env::var("PATH").ok().and_then(|path| {
        path.split(':')
            .map(|dir| Path::new(dir).join(program))
            .find(|p| p.is_file())
    })
}

/// A folder under `base` or, when unset, `$HOME/default`.
fn cache_home(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var).map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(default),
        PathBuf::from,
    )
}

/// Every file under `dir`, relative, with `/`.
fn files_under(dir: &Path) -> Vec<String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

fn requests(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Whether any user message of `request`'s conversation holds `text`.
fn conversation_has(request: &Value, text: &str) -> bool {
    request["conversation"]
        .as_array()
        .unwrap()
        .iter()
        .any(|item| item[0] == "user" && item[1].as_str().unwrap().contains(text))
}

/// A new work folder, made a Git repository of its own (so Codex asks whether to trust the
/// repository's root, not the run's workspace, whether or not the checkout is a Git
/// repository): in Cargo's folder for test files; or, when that lies under a temporary
/// folder (`/tmp`, where Codex will not set up its sandbox helpers and its commands then
/// fail), in `xstack-tests` in the user's cache folder.
fn work_folder() -> tempfile::TempDir {
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let work = if !target.starts_with(std::env::temp_dir()) && !target.starts_with("/tmp") {
        tempfile::tempdir_in(target).unwrap()
    } else {
        let base = cache_home("XDG_CACHE_HOME", ".cache").join("xstack-tests");
        std::fs::create_dir_all(&base).unwrap();
        tempfile::tempdir_in(base).unwrap()
    };
    assert!(runs_ok(
        "git",
        &["init", "-q", work.path().to_str().unwrap()]
    ));
    work
}

/// A CLI ready to run against the model server: a work folder (not under /tmp: Codex
/// refuses to set up its sandbox helpers below a temporary folder; see [`work_folder`])
/// with a new `$HOME`, an empty launch folder, a runs folder, and a `bin` whose program of
/// the CLI's name starts the real one in a network namespace of its own with the model
/// server, passing its arguments on unchanged.
struct Prepared {
    work: tempfile::TempDir,
    home: PathBuf,
    launch: PathBuf,
    runs: PathBuf,
    bin: PathBuf,
    log: PathBuf,
    task: PathBuf,
}

impl Prepared {
    /// None when the CLI or network namespaces are missing (a failure under `CI=true`).
    fn new(cli: &Cli) -> Option<Prepared> {
        Prepared::serving(cli, false, false)
    }

    /// As [`Prepared::new`], the server writing the port with the CLI's own `Read` and
    /// `Write` tools (file edits, which Claude Code's `acceptEdits` takes without asking)
    /// when `file_tools`, else with its shell tool. With `run_code`, the server then has the
    /// agent run its port, and the source where [`runs_the_source`], in phase 1
    /// ([`PHASE1_RUN`]) and its port, which crashes, in phase 2 ([`PHASE2_RUN`]).
    fn serving(cli: &Cli, file_tools: bool, run_code: bool) -> Option<Prepared> {
        let Some(real) = installed(cli.program) else {
            require_tool(cli.program, || false);
            return None;
        };
        if !require_tool("unshare -n (network namespaces)", || {
            runs_ok("unshare", &["-n", "true"])
        }) {
            return None;
        }
        let work = work_folder();
        let (home, launch, runs, bin) = (
            work.path().join("home"),
            work.path().join("launch"),
            work.path().join("runs"),
            work.path().join("bin"),
        );
        for dir in [&home, &launch, &runs, &bin] {
            std::fs::create_dir(dir).unwrap();
        }
        let task = root().join("tests/tasks/jsonl-protected");
        let script = work.path().join("script.json");
        let phase = |marker: &str, source: &str, final_word: &str, run: String| {
            let mut phase = serde_json::json!({
                "marker": marker,
                "source": task.join(source),
                "target": "train.py",
                "final": final_word,
            });
            if run_code {
                phase["run"] = run.into();
            }
            phase
        };
        let script_json = serde_json::json!({
            "edit_in_text": cli.edit_in_text,
            "file_tools": file_tools,
            "phases": [
                phase(
                    PHASE1_MARKER,
                    "agents/files/gap_then_pass/phase1/train.py",
                    PHASE1_FINAL,
                    if runs_the_source(cli) {
                        PHASE1_RUN.replace("{source}", &task.join("repo").display().to_string())
                    } else {
                        PHASE1_PORT_RUN.to_string()
                    },
                ),
                phase(
                    PHASE2_MARKER,
                    "agents/files/gap_then_pass/phase2/train.py",
                    PHASE2_FINAL,
                    PHASE2_RUN.to_string(),
                ),
            ],
        });
        std::fs::write(&script, script_json.to_string()).unwrap();
        let log = work.path().join("requests.jsonl");
        let shim = bin.join(cli.program);
        std::fs::write(
            &shim,
            format!(
                "#!/bin/sh\nexec unshare -n {} {} {} -- {} \"$@\"\n",
                root().join("tests/model_server/isolated").display(),
                script.display(),
                log.display(),
                real.display()
            ),
        )
        .unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Some(Prepared {
            work,
            home,
            launch,
            runs,
            bin,
            log,
            task,
        })
    }

    /// The environment xstack runs with: the shims first on PATH, the new `$HOME`, the
    /// machine's environment caches (the task's environments are built once), and a config
    /// file (empty unless written).
    fn env(&self) -> Vec<(&'static str, String)> {
        let config = self.work.path().join("config.toml");
        if !config.exists() {
            std::fs::write(&config, "").unwrap();
        }
        vec![
            (
                "PATH",
                format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap()),
            ),
            (
                "XSTACK_CACHE_DIR",
                cache_home("XSTACK_CACHE_DIR", ".cache/xstack")
                    .display()
                    .to_string(),
            ),
            (
                "UV_CACHE_DIR",
                cache_home("UV_CACHE_DIR", ".cache/uv")
                    .display()
                    .to_string(),
            ),
            ("HOME", self.home.display().to_string()),
            ("XSTACK_CONFIG", config.display().to_string()),
        ]
    }
}

/// Variables of this machine's user that would point a CLI elsewhere than the new `$HOME`.
const UNSET: [&str; 5] = [
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "CODEX_HOME",
];

/// The names at the top of this repository's checkout: the run folders lie inside it
/// (CARGO_TARGET_TMPDIR), so a CLI that takes the enclosing Git repository as its own would
/// write there.
fn root_listing() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What the agent runs after writing its port in phase 1 (where the server has it run
/// anything), through its CLI's own shell tool: its port, whose value is outside the
/// criterion, then the PyTorch source, which cannot import torch in the JAX environment
/// (`-B`: the task folder is not written). Plain `python`: the one the task's environment
/// puts first on `PATH`, whatever shell the CLI starts (Codex's login shell resets `PATH`
/// from `/etc/profile`; docs/AGENTS.md, "The agent's shell").
const PHASE1_RUN: &str = "python train.py; cd {source} && python -B train.py";
/// …phase 1's run for a CLI that may not leave its workspace: the port alone.
const PHASE1_PORT_RUN: &str = "python train.py";
/// …and in phase 2: its port with a seed it cannot read, so that it crashes.
const PHASE2_RUN: &str = "XSTACK_SEED=oops python train.py";

/// The CLIs the headless test has run what they wrote, through their own shell tool. aider
/// has no tools (its edits come in the reply's text), so both its runs are those of an agent
/// that checked nothing.
fn runs_its_port(cli: &Cli) -> bool {
    matches!(cli.preset, "claude" | "codex" | "gemini" | "opencode")
}

/// The CLIs that also run the source, in the task's folder outside the workspace. `opencode
/// run` rejects every command that reaches outside the project's folder (its
/// `external_directory` permission asks, and a one-shot run answers no to every question:
/// "permission requested: external_directory (…/repo/*); auto-rejecting"), and the whole
/// call with it, port included; the preset keeps that default.
fn runs_the_source(cli: &Cli) -> bool {
    runs_its_port(cli) && cli.preset != "opencode"
}

fn headless_two_phases(cli: &Cli) {
    let Some(p) = Prepared::serving(cli, false, runs_its_port(cli)) else {
        return;
    };
    let (home, launch, runs, log, task) = (&p.home, &p.launch, &p.runs, &p.log, &p.task);
    let root_before = root_listing();
    let launch_before = tree_hash(launch);
    let task_before = tree_hash(task);
    let mut cmd = xstack();
    cmd.current_dir(launch)
        .arg("run")
        .arg(task)
        .args(["--agent", cli.preset, "--headless"])
        .arg("--runs-dir")
        .arg(runs)
        .envs(p.env());
    for var in UNSET {
        cmd.env_remove(var);
    }
    let out = cmd.output().expect("xstack runs");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let dir = only_run_dir(runs);
    let r = result(&dir);
    assert_eq!(r["passed_in_phase"], 2, "{all}");
    assert_eq!(r["phases"][0]["verdict"], "fail");

    // Phase 2 resumed the conversation: the server was sent phase 1's prompt with it.
    let prompt1 = std::fs::read_to_string(dir.join("prompts/phase-1.txt")).unwrap();
    let prompt2 = std::fs::read_to_string(dir.join("prompts/phase-2.txt")).unwrap();
    let first_line = prompt1.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert!(!prompt2.contains(first_line), "{first_line}");
    let sent = requests(log);
    let phase2: Vec<&Value> = sent.iter().filter(|q| q["phase"] == 2).collect();
    assert!(!phase2.is_empty(), "no request of phase 2: {sent:?}");
    // aider restores its chat history summarised (by a request the server answers with
    // SUMMARY); the others send it whole.
    let history = if cli.edit_in_text {
        SUMMARY
    } else {
        first_line
    };
    assert!(
        phase2.iter().all(|q| conversation_has(q, history)),
        "phase 2 did not resume phase 1's conversation: {}",
        serde_json::to_string_pretty(&phase2).unwrap()
    );

    // The agent's own account of each phase.
    for (index, final_word) in [PHASE1_FINAL, PHASE2_FINAL].iter().enumerate() {
        let agent = &r["phases"][index]["agent"];
        assert_eq!(agent["exit_code"], 0, "{agent}");
        if cli.structured {
            assert_eq!(agent["claimed_success"], true, "{agent}");
            assert_eq!(agent["claim"], *final_word, "{agent}");
            assert!(agent["session"].is_string(), "{agent}");
            assert!(agent["tokens_in"].as_u64().unwrap() > 0, "{agent}");
            assert!(agent["tokens_out"].as_u64().unwrap() > 0, "{agent}");
            assert_eq!(agent["cost_usd"].is_number(), cli.cost, "{agent}");
        } else {
            assert!(agent["session"].is_null(), "{agent}");
        }
    }
    if cli.structured {
        // Both phases speak of one conversation.
        assert_eq!(
            r["phases"][0]["agent"]["session"],
            r["phases"][1]["agent"]["session"]
        );
        let tools: Vec<u64> = journal_events(&dir)
            .into_iter()
            .filter(|e| e["type"] == "transcript" && e["item"]["kind"] == "tool_call")
            .map(|e| e["phase"].as_u64().unwrap())
            .collect();
        assert!(tools.contains(&1) && tools.contains(&2), "{tools:?}");
    }
    if cli.preset == "codex" {
        // `exec resume` reports the thread's running total: phase 2 counts only its turn.
        let sent_in_phase2: u64 = phase2
            .iter()
            .map(|q| q["input_tokens"].as_u64().unwrap())
            .sum();
        assert_eq!(r["phases"][1]["agent"]["tokens_in"], sent_in_phase2);
    }

    // What the agent ran, as the recorder saw it (docs/CHECKS.md).
    let frameworks: Vec<Value> = journal_events(&dir)
        .into_iter()
        .filter(|e| e["type"] == "agent_run" && e["target"] != "other")
        .map(|e| e["frameworks"].clone())
        .collect();
    let ran: Vec<(u64, String, String, Value, Value)> = journal_events(&dir)
        .into_iter()
        .filter(|e| e["type"] == "agent_run" && e["target"] != "other")
        .map(|e| {
            (
                e["phase"].as_u64().unwrap(),
                e["target"].as_str().unwrap().to_string(),
                e["program"].as_str().unwrap().to_string(),
                e["exit_code"].clone(),
                e["exception"].clone(),
            )
        })
        .collect();
    let checked = |phase: usize| r["phases"][phase]["agent_checked"].clone();
    if runs_its_port(cli) {
        // Plain `python` in the CLI's own shell was the task environment's: the port ran to
        // its end with JAX imported (the machine's python has no JAX, and a login shell's
        // PATH has no `python` at all), and the source failed on torch, not on a missing
        // interpreter.
        let torch = Value::from("ModuleNotFoundError: No module named 'torch'");
        let seed = Value::from("ValueError: invalid literal for int() with base 10: 'oops'");
        let source = runs_the_source(cli);
        let mut expected = vec![(1, "port".into(), "train.py".into(), 0.into(), Value::Null)];
        if source {
            expected.push((1, "source".into(), "train.py".into(), 1.into(), torch));
        }
        expected.push((2, "port".into(), "train.py".into(), 1.into(), seed));
        assert_eq!(ran, expected, "{all}");
        // Its port imported JAX (the crashing one too, before it read the seed); the
        // source's import of torch failed, so it imported none.
        let mut imported = vec![serde_json::json!(["jax"])];
        if source {
            imported.push(serde_json::json!([]));
        }
        imported.push(serde_json::json!(["jax"]));
        assert_eq!(frameworks, imported);
        let first = checked(0);
        assert_eq!(
            (first["port_runs"].clone(), first["source_runs"].clone()),
            (1.into(), usize::from(source).into())
        );
        assert_eq!(first["compared"], source);
        // The port's own run printed phase 1's value, outside the criterion.
        let metric = &first["last_port_metrics"][0];
        assert_eq!(
            (metric["metric"].clone(), metric["within"].clone()),
            ("eval_mse".into(), false.into())
        );
        assert_eq!(checked(1)["last_port_exit"], 1);
        if matches!(cli.preset, "claude" | "codex") {
            // Their CLIs report the failed command (the source's, then the crashing port's)
            // as a failed tool call, with its last line.
            for (phase, error) in [(0, "No module named 'torch'"), (1, "'oops'")] {
                let agent = &r["phases"][phase]["agent"];
                assert_eq!(agent["tool_failures"], 1, "{agent}");
                let first = agent["first_tool_error"].as_str().unwrap_or_default();
                assert!(first.contains(error), "{agent}");
            }
        }
    } else {
        assert!(ran.is_empty(), "{ran:?}");
        for phase in [0, 1] {
            assert_eq!(checked(phase)["port_runs"], 0, "{}", checked(phase));
        }
    }

    // Nothing was written outside the run folder but the CLI's own state under $HOME.
    assert_eq!(
        tree_hash(launch),
        launch_before,
        "the launch folder was written"
    );
    assert_eq!(tree_hash(task), task_before, "the task folder was written");
    assert_eq!(
        root_listing(),
        root_before,
        "written at the root of the enclosing Git repository"
    );
    let stray: Vec<String> = files_under(home)
        .into_iter()
        .filter(|f| {
            !HARNESS_FILES.contains(&f.as_str())
                && !cli
                    .state
                    .iter()
                    .any(|s| f == s || f.starts_with(&format!("{s}/")))
        })
        .collect();
    assert!(stray.is_empty(), "written under $HOME: {stray:?}");
}

#[test]
fn claude_code_ports_and_resumes_its_session() {
    headless_two_phases(&CLAUDE);
}

#[test]
fn codex_ports_and_resumes_its_thread() {
    headless_two_phases(&CODEX);
}

#[test]
fn gemini_cli_ports_and_resumes_its_session() {
    headless_two_phases(&Cli {
        preset: "gemini",
        program: "gemini",
        edit_in_text: false,
        structured: true,
        cost: false,
        state: &[".gemini"],
    });
}

#[test]
fn opencode_ports_and_continues_its_session() {
    headless_two_phases(&Cli {
        preset: "opencode",
        program: "opencode",
        edit_in_text: false,
        structured: false,
        cost: false,
        state: &[
            ".config/opencode",
            ".local/share/opencode",
            ".local/state/opencode",
            ".cache/opencode",
        ],
    });
}

#[test]
fn aider_ports_and_restores_its_chat_history() {
    headless_two_phases(&Cli {
        preset: "aider",
        program: "aider",
        edit_in_text: true,
        structured: false,
        cost: false,
        state: &[".aider"],
    });
}

/// `xstack run` in the TUI under tmux (160×45), from the launch folder, with `cli`'s preset
/// interactive. The scripted model writes no .xstack/done: each phase ends when the agent
/// has been idle 8 s.
/// xstack's TUI in tmux running `cli` interactively on the test task, in `mode` (`--auto` or
/// `--step`).
fn start_in_the_tui(p: &Prepared, cli: &Cli, mode: &str) -> common::tmux::Tmux {
    std::fs::write(
        p.work.path().join("config.toml"),
        format!(
            "[agents.{}]\nmode = \"interactive\"\nidle_s = 8\n",
            cli.preset
        ),
    )
    .unwrap();
    start_the_tui(p, cli, mode)
}

/// xstack's TUI in tmux running `cli` on the test task in `mode`, with the config file as
/// the test wrote it.
fn start_the_tui(p: &Prepared, cli: &Cli, mode: &str) -> common::tmux::Tmux {
    let env: Vec<String> = p
        .env()
        .into_iter()
        .map(|(k, v)| format!("{k}={}", shell_words::quote(&v)))
        .collect();
    let unset: Vec<String> = UNSET.iter().map(|v| format!("-u {v}")).collect();
    let command = format!(
        "cd {} && env {} {} {} run {} --agent {} {mode} --runs-dir {}; echo EXIT=$?; sleep 600",
        p.launch.display(),
        unset.join(" "),
        env.join(" "),
        env!("CARGO_BIN_EXE_xstack"),
        p.task.display(),
        cli.preset,
        p.runs.display(),
    );
    common::tmux::Tmux::start(&command, 160, 45)
}

/// Presses `key` until the screen shows `done`, as a person would: they look before each
/// key and press it again only when the agent did not take it (Claude Code can drop a key
/// that comes as it draws). The look lasts up to 15 s, so that on a loaded machine a key
/// the agent is still drawing is not pressed twice (a second Down in a two-choice list
/// goes back to the first choice).
fn press_until(tmux: &common::tmux::Tmux, key: &str, what: &str, done: &dyn Fn(&str) -> bool) {
    use std::time::Duration;
    let mut presses = 0;
    while !done(&tmux.capture()) {
        assert!(
            presses < 5,
            "{what}: {presses} presses of {key}:\n{}",
            tmux.capture()
        );
        tmux.keys(&[key]);
        presses += 1;
        let _ = tmux.screen_within(Duration::from_secs(15), done);
    }
}

/// Answers Claude Code's folder-trust dialog with "Yes", as a person who watches it would.
/// The dialog holds its keys for its first moment (about 150 ms here): a Down in that moment
/// shows "Yes" chosen, an Enter is dropped, and when the moment ends the dialog is drawn
/// again with the choice back on "No, exit". So the person presses Down only while "No" is
/// chosen and Enter only while "Yes" is, never the same key twice without the screen
/// changing; and after the first Down they watch for that redraw (up to 3 s) before pressing
/// Enter, so that Enter is not taken by the redrawn "No".
fn trust_the_folder_in_claude_codes_dialog(tmux: &common::tmux::Tmux) {
    use std::time::Duration;
    const NO: &str = "❯ No, exit";
    const YES: &str = "❯ Yes, I trust this folder";
    let open = |s: &str| s.contains("Yes, I trust this folder");
    let refused = |s: &str| {
        assert!(
            !s.contains("folder isn't trusted"),
            "the dialog took No although the screen showed Yes chosen:\n{s}"
        );
    };
    tmux.wait_for("Enter to confirm", Duration::from_secs(10));
    let mut presses = 0;
    loop {
        let screen = tmux.capture();
        refused(&screen);
        if !open(&screen) {
            return;
        }
        assert!(
            presses < 8,
            "{presses} keys and the dialog is still open:\n{screen}"
        );
        presses += 1;
        if screen.contains(NO) {
            // A Down in the dialog's first moments is dropped, or shown and then undone by
            // its redraw back to No: pressed again only once the screen says No again.
            tmux.keys(&["Down"]);
            if tmux
                .screen_within(Duration::from_secs(5), |s| s.contains(YES) || !open(s))
                .is_some()
            {
                let _ = tmux.screen_within(Duration::from_secs(3), |s| s.contains(NO));
            }
        } else {
            tmux.keys(&["Enter"]);
            let _ = tmux.screen_within(Duration::from_secs(15), |s| !open(s) || s.contains(NO));
        }
    }
}

/// The end of an interactive run that passed in phase 2: `q` quits with exit 0; phase 1
/// failed; both prompts reached the model, the second in phase 1's conversation, typed into
/// the one agent process xstack started; and nothing of the agent's is left running.
fn quit_and_check_the_interactive_run(tmux: &common::tmux::Tmux, p: &Prepared) {
    use std::time::Duration;
    let agents_home = format!("{}/", p.home.display());
    let running = agent_processes(&agents_home);
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(30));
    let dir = only_run_dir(&p.runs);
    let r = result(&dir);
    assert_eq!(r["phases"][0]["verdict"], "fail", "{r}");
    let sent = requests(&p.log);
    assert!(sent.iter().any(|q| q["phase"] == 1), "{sent:?}");
    let prompt1 = std::fs::read_to_string(dir.join("prompts/phase-1.txt")).unwrap();
    let first_line = prompt1.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        sent.iter()
            .filter(|q| q["phase"] == 2)
            .any(|q| conversation_has(q, first_line)),
        "phase 2's prompt was not typed into phase 1's conversation: {sent:?}"
    );
    let journal = journal_text(&dir);
    assert_eq!(journal.matches("\"type\":\"agent_started\"").count(), 1);
    let left = agent_processes(&agents_home);
    assert!(
        left.is_empty(),
        "still running after xstack exited: {left:?} (before it quit: {running:?})"
    );
}

/// The command lines of the processes that mention `needle` (a path under the agent's
/// `$HOME`: the tmux window's own command line names `$HOME` without a slash after it).
fn agent_processes(needle: &str) -> Vec<String> {
    processes_mentioning(needle)
        .into_iter()
        .map(|(_, cmdline)| cmdline)
        .collect()
}

/// Step mode, a human at the keyboard: Claude Code's question whether to trust the folder is
/// the human's (xstack reports it and answers nothing), as is each permission prompt; the
/// human also advances every step with `n`.
#[test]
fn interactive_claude_code_in_step_mode_asks_the_human_about_the_folder_then_takes_its_prompts() {
    use std::time::Duration;
    let Some(p) = Prepared::new(&CLAUDE) else {
        return;
    };
    // A $HOME where Claude Code has been used before: onboarding done, the API key in its
    // environment approved. The workspace is one it has never seen.
    std::fs::write(
        p.home.join(".claude.json"),
        r#"{"hasCompletedOnboarding": true, "theme": "dark",
            "customApiKeyResponses": {"approved": ["sk-ant-scripted"], "rejected": []}}"#,
    )
    .unwrap();
    let tmux = start_in_the_tui(&p, &CLAUDE, "--step");
    let (mut trusted, mut answered, mut steps) = (false, 0, 0);
    let mut last_screen = String::new();
    // The human's side of the session, one look at the screen a poll: answer what asks.
    let passed =
        xstack::poll::wait_until(Duration::from_secs(360), Duration::from_millis(200), || {
            let screen = tmux.capture();
            if screen.contains("PASSED in phase 2") {
                return true;
            }
            if screen.contains("the agent asks whether to trust this folder") {
                // The human answers it in the agent's terminal: the choice starts on "No".
                assert!(!trusted, "asked twice:\n{screen}");
                tmux.keys(&["a"]);
                tmux.wait_for("attached: Ctrl-] detaches", Duration::from_secs(10));
                trust_the_folder_in_claude_codes_dialog(&tmux);
                tmux.bytes_hex(&["1d"]);
                trusted = true;
                tmux.wait_until(
                    "the question gone from the status",
                    Duration::from_secs(30),
                    |s| !s.contains("the agent asks whether to trust this folder"),
                );
            } else if screen.contains("the agent asks for permission to run a command") {
                // Claude Code asks before it runs the scripted shell command: the human attaches
                // and says yes (its first choice).
                tmux.keys(&["a"]);
                tmux.wait_for("attached: Ctrl-] detaches", Duration::from_secs(10));
                press_until(&tmux, "Enter", "the permission prompt answered", &|s| {
                    !s.contains("Do you want to proceed?")
                });
                tmux.bytes_hex(&["1d"]);
                answered += 1;
            } else if screen.contains("waiting: n to")
                || screen.contains("n to send them as written")
            {
                // Every wait of step mode, the phase-two details sent as the task writes them: the
                // step is taken once the status line waits for something else, or for nothing.
                let waiting = |s: &str| {
                    s.lines()
                        .find(|l| l.contains("waiting: "))
                        .map(|l| l.split("waiting: ").nth(1).unwrap_or_default().to_string())
                };
                let before = waiting(&screen);
                tmux.keys(&["n"]);
                tmux.wait_until("the step taken", Duration::from_secs(10), |s| {
                    waiting(s) != before
                });
                steps += 1;
            }
            last_screen = screen;
            false
        });
    assert!(
        passed,
        "no PASSED in phase 2 after {steps} steps, {answered} permission prompts (trusted: {trusted}):\n{last_screen}"
    );
    assert!(trusted, "the folder-trust question never reached the human");
    assert!(
        !journal_text(&only_run_dir(&p.runs)).contains("answered yes"),
        "xstack answered for the human in step mode"
    );
    quit_and_check_the_interactive_run(&tmux, &p);
}

/// Auto mode, nobody at the keyboard: Claude Code asks whether to trust the workspace it has
/// never seen, xstack answers yes (the folder is its own copy of the source, made for this
/// run) and says so in the journal, and the run reaches its verdict with no key pressed (the
/// model edits files only, which `acceptEdits` allows without asking).
#[test]
fn interactive_claude_code_in_auto_mode_trusts_its_workspace_with_no_key_pressed() {
    use std::time::Duration;
    let Some(p) = Prepared::serving(&CLAUDE, true, false) else {
        return;
    };
    std::fs::write(
        p.home.join(".claude.json"),
        r#"{"hasCompletedOnboarding": true, "theme": "dark",
            "customApiKeyResponses": {"approved": ["sk-ant-scripted"], "rejected": []}}"#,
    )
    .unwrap();
    let tmux = start_in_the_tui(&p, &CLAUDE, "--auto");
    let screen = tmux.wait_until("PASSED in phase 2", Duration::from_secs(300), |s| {
        s.contains("PASSED in phase 2") || s.contains("waiting: the agent asks")
    });
    assert!(screen.contains("PASSED in phase 2"), "{screen}");
    let dir = only_run_dir(&p.runs);
    let journal = journal_text(&dir);
    let workspace = dir.join("workspace");
    let answered = format!(
        "auto mode: the agent asked whether to trust {}, this run's own copy of the source: answered yes",
        workspace.display()
    );
    assert_eq!(journal.matches(&answered).count(), 1, "{journal}");
    assert!(
        !journal.contains("the agent asks whether to trust"),
        "the question reached the status line: {journal}"
    );
    quit_and_check_the_interactive_run(&tmux, &p);
}

#[test]
fn interactive_codex_in_the_tui_takes_its_prompts_in_a_folder_it_has_never_seen() {
    use std::time::Duration;
    // The agent also runs what it wrote (phase 1's source run and phase 2's port fail), so
    // that its session files have failed commands to report.
    let Some(p) = Prepared::serving(&CODEX, false, true) else {
        return;
    };
    // A $HOME where Codex has been used before: one earlier session, in another folder.
    let earlier = p.work.path().join("earlier");
    std::fs::create_dir(&earlier).unwrap();
    let out = std::process::Command::new(p.bin.join("codex"))
        .args(["exec", "--skip-git-repo-check", "Say hello."])
        .current_dir(&earlier)
        .envs(p.env())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        p.home.join(".codex/sessions").is_dir(),
        "{:?}",
        files_under(&p.home)
    );
    let tmux = start_in_the_tui(&p, &CODEX, "--auto");
    // The workspace lies inside the Git repository `work_folder` makes, so Codex's trust
    // screen names the workspace and then the repository's root, to which the trust would
    // apply: auto mode leaves that to the human.
    // The human attaches and takes its first choice.
    tmux.wait_for(
        "the agent asks whether to trust this folder",
        Duration::from_secs(90),
    );
    tmux.keys(&["a"]);
    tmux.wait_for("attached: Ctrl-] detaches", Duration::from_secs(10));
    assert!(tmux.capture().contains("› 1. Trust and continue"));
    press_until(&tmux, "Enter", "the dialog answered", &|s| {
        !s.contains("Trust this folder?")
    });
    tmux.bytes_hex(&["1d"]);
    tmux.wait_until(
        "the question gone from the status",
        Duration::from_secs(30),
        |s| !s.contains("the agent asks whether to trust this folder"),
    );
    // Then Codex asks nothing more (its permissions are on the command line): each prompt
    // is pasted, shown and submitted, and the run reaches its verdict with no other key.
    let screen = tmux.wait_until("PASSED in phase 2", Duration::from_secs(300), |s| {
        s.contains("PASSED in phase 2") || s.contains("waiting: the agent asks")
    });
    assert!(screen.contains("PASSED in phase 2"), "{screen}");
    let journal = journal_text(&only_run_dir(&p.runs));
    assert!(
        !journal.contains("auto mode: the agent asked whether to trust"),
        "auto mode trusted the repository around the workspace: {journal}"
    );
    // Codex runs an app-server daemon of its own, which leaves the agent's process group;
    // xstack must end it too when it exits.
    let daemon = agent_processes(&format!("{}/.codex/", p.home.display()));
    assert!(
        daemon.iter().any(|c| c.contains(" app-server ")),
        "{daemon:?}"
    );
    quit_and_check_the_interactive_run(&tmux, &p);
    // Its session files, read at the end of each turn, gave each phase's commands (the port
    // written, then run) and the one that failed, with its error.
    let r = result(&only_run_dir(&p.runs));
    for (phase, error) in [(0, "No module named 'torch'"), (1, "'oops'")] {
        let agent = &r["phases"][phase]["agent"];
        eprintln!("phase {}: {agent}", phase + 1);
        assert_eq!(
            (agent["tool_calls"].clone(), agent["tool_failures"].clone()),
            (2.into(), 1.into()),
            "{agent}"
        );
        let first = agent["first_tool_error"].as_str().unwrap_or_default();
        assert!(first.contains(error), "{agent}");
    }
}

/// Codex in `exec --json` whose sandbox cannot start: with a `TMPDIR` that does not exist
/// (set for the agent in the config file), Codex 0.171.0's Linux sandbox panics before
/// every command (exit 101, "failed to resolve synthetic mount registry temp directory"),
/// its `--json` output has no item for any of them, and the model, told so, still says it
/// ported the file. Its session file records each call and the panic that answered it:
/// the phase is an agent failure quoting the error, not a port to grade (train.py still
/// imports torch, which would grade as a bypass), and `result.json` counts the calls and
/// their failures.
#[test]
fn codex_whose_sandbox_cannot_start_is_an_agent_failure_quoting_its_error() {
    let Some(p) = Prepared::serving(&CODEX, false, true) else {
        return;
    };
    give_codex_a_missing_tmpdir(&p, "");
    let mut cmd = xstack();
    cmd.current_dir(&p.launch)
        .arg("run")
        .arg(&p.task)
        .args(["--agent", "codex", "--headless"])
        .arg("--runs-dir")
        .arg(&p.runs)
        .envs(p.env());
    for var in UNSET {
        cmd.env_remove(var);
    }
    let out = cmd.output().expect("xstack runs");
    let all = text(&out);
    let error = "failed to resolve synthetic mount registry temp directory";
    // The model was answered with the panic, twice, and said it was done all the same.
    let sent = requests(&p.log);
    assert!(
        sent.iter().any(|q| q["conversation"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item[0] == "tool_result" && item[1].as_str().unwrap().contains(error))
            .count()
            == 2),
        "the sandbox did not fail as expected: {sent:?}\n{all}"
    );
    // The headless run says what failed and ends as an agent failure (exit 3), with no
    // phase graded.
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert!(
        all.contains("agent tool shell failed: exit 101: failed to resolve synthetic mount"),
        "{all}"
    );
    let r = result(&only_run_dir(&p.runs));
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "{r}");
    let phase = &phases[0];
    assert_eq!(phase["outcome"], "agent_failure", "{r}");
    assert!(phase["verdict"].is_null(), "{r}");
    let detail = phase["outcome_detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("every one of its 2 tool calls failed, the first: shell: exit 101: ")
            && detail.contains(error),
        "{detail}"
    );
    let agent = &phase["agent"];
    assert_eq!(
        (agent["tool_calls"].clone(), agent["tool_failures"].clone()),
        (2.into(), 2.into()),
        "{agent}"
    );
    assert!(
        agent["first_tool_error"]
            .as_str()
            .unwrap_or_default()
            .contains(error),
        "{agent}"
    );
    assert_eq!(agent["claim"], PHASE1_FINAL, "{agent}");
}

/// A config file that gives Codex a `TMPDIR` that does not exist (its sandbox cannot
/// start), with the `extra` settings of `[agents.codex]`.
fn give_codex_a_missing_tmpdir(p: &Prepared, extra: &str) {
    let missing = p.work.path().join("no-such-tmp");
    std::fs::write(
        p.work.path().join("config.toml"),
        format!(
            "[agents.codex]\n{extra}env = {{ TMPDIR = \"{}\" }}\n",
            missing.display()
        ),
    )
    .unwrap();
}

/// The same Codex, one-shot (`exec --json`) in the TUI: the Verdict pane says the phase was
/// not graded, quoting the panic, the status line which calls failed, and xstack exits 3.
#[test]
fn codex_whose_sandbox_cannot_start_is_an_agent_failure_in_the_tui() {
    use std::time::Duration;
    let Some(p) = Prepared::serving(&CODEX, false, true) else {
        return;
    };
    give_codex_a_missing_tmpdir(&p, "mode = \"oneshot\"\n");
    let tmux = start_the_tui(&p, &CODEX, "--auto");
    let screen = tmux.wait_for("NOT GRADED agent_failure", Duration::from_secs(120));
    // The status line says what ended the session; the Verdict pane quotes the panic.
    assert!(
        screen.contains(
            "ended: the agent failed before doing any work: every one of its 2 tool calls \
             failed, the first: shell: exit 101"
        ),
        "{screen}"
    );
    assert!(screen.contains("failed to resolve synthetic"), "{screen}");
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=3", Duration::from_secs(30));
}

/// The same Codex in a bench: the trial is an agent failure, not a failed migration, and
/// the report says what failed: `report.json`'s phase counts the calls and failures with
/// the line, `report.md` quotes it under the trials.
#[test]
fn codex_whose_sandbox_cannot_start_is_an_agent_failure_in_the_bench_report() {
    let Some(p) = Prepared::serving(&CODEX, false, true) else {
        return;
    };
    give_codex_a_missing_tmpdir(&p, "");
    let out_dir = p.work.path().join("bench");
    let mut cmd = xstack();
    cmd.current_dir(&p.launch)
        .arg("bench")
        .arg("--task")
        .arg(&p.task)
        .args(["--agent", "codex", "--out"])
        .arg(&out_dir)
        .envs(p.env())
        .stdin(std::process::Stdio::null());
    for var in UNSET {
        cmd.env_remove(var);
    }
    let out = cmd.output().expect("xstack runs");
    let all = text(&out);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap_or_else(|e| panic!("{e}\n{all}"));
    let trial = &report["trials"][0];
    assert_eq!(trial["failure"], "agent_failure", "{trial}\n{all}");
    let phase = &trial["agent_outcome"][0];
    assert_eq!(
        (
            phase["outcome"].clone(),
            phase["tool_calls"].clone(),
            phase["tool_failures"].clone()
        ),
        ("agent_failure".into(), 2.into(), 2.into()),
        "{phase}"
    );
    let line = "agent_failure: every one of its 2 tool calls failed, the first: shell: exit 101: \
                failed to resolve synthetic mount registry temp directory";
    let detail = phase["outcome_detail"].as_str().unwrap_or_default();
    assert!(
        format!("agent_failure: {detail}").starts_with(line),
        "{phase}"
    );
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        md.contains("Why these trials have no verdict:")
            && md.contains(&format!("phase 1: agent_failure: {detail}\n")),
        "{md}"
    );
    assert_eq!(report["summary"][0]["graded"], 0, "{}", report["summary"]);
}

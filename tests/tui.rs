//! The TUI driven through tmux: the real binary, a real terminal, real keys.

mod common;

use std::time::Duration;

use common::tmux::Tmux;
use common::*;

const LONG: Duration = Duration::from_secs(240);

fn bin() -> String {
    env!("CARGO_BIN_EXE_xstack").to_string()
}

#[test]
fn demo_reaches_pass_with_all_five_panes_and_quit_restores_the_terminal() {
    let runs = tempfile::tempdir().unwrap();
    let command = format!(
        "cd /tmp && XSTACK_RUNS_DIR={} {} demo; echo EXIT=$?; stty -a; echo STTY-END; sleep 600",
        runs.path().display(),
        bin()
    );
    let tmux = Tmux::start(&command, 160, 45);
    // Captures can land in the middle of a frame: wait for everything to be on one.
    tmux.wait_until(
        "PASSED in phase 2 with all five panes, both verdicts and AUTO",
        LONG,
        |screen| {
            ["1 Agent", "2 Diff", "3 Run log", "4 Metrics", "5 Verdict"]
                .iter()
                .chain(&[
                    "PASSED in phase 2",
                    "grade 1: FAIL fidelity_gap",
                    "grade 2: PASS",
                    "AUTO",
                ])
                .all(|text| screen.contains(text))
        },
    );
    // Resized after the end, to a compact screen and back: the summary lines show, and the
    // run is still a finished run.
    tmux.resize("80", "24");
    tmux.wait_until("the compact screen", LONG, |screen| {
        screen.contains(" 4 Metrics  test_acc p2") && screen.contains(" 5 Verdict  PASSED")
    });
    tmux.resize("160", "45");
    tmux.wait_until("five panes again", LONG, |screen| {
        screen.contains("4 Metrics ─") && screen.contains("5 Verdict PyTorch → JAX")
    });
    tmux.keys(&["q"]);
    let after = tmux.wait_for("STTY-END", Duration::from_secs(30));
    assert!(after.contains("EXIT=0"), "{after}");
    // The terminal is back in its normal mode: canonical input and echo.
    assert!(
        after.contains(" icanon") && after.contains(" echo "),
        "{after}"
    );
    assert!(!after.contains("-icanon"), "{after}");
    let listed = text(&run(&["runs", runs.path().to_str().unwrap()]));
    assert!(listed.contains("FAIL fidelity_gap → PASS"), "{listed}");
    assert!(!listed.contains("(interrupted"), "{listed}");
    assert!(listed.contains("script:trajectory.jsonl"), "{listed}");
}

/// A step-mode session of the test task in tmux at `width`×`height`, its agent failing phase 1
/// with a gap and passing phase 2; the folder its run goes to.
// A test helper panics on what the test cannot go on without, as the tests themselves do.
#[allow(clippy::unwrap_used)]
fn step_session(width: u16, height: u16) -> (Tmux, tempfile::TempDir) {
    let runs = tempfile::tempdir().unwrap();
    let task = root().join("tests/tasks/jsonl-protected");
    let command = format!(
        "{} run {} --step --agent script:{}/agents/gap_then_pass.jsonl --runs-dir {}; echo EXIT=$?; sleep 600",
        bin(),
        task.display(),
        task.display(),
        runs.path().display()
    );
    (Tmux::start(&command, width, height), runs)
}

#[test]
fn step_mode_waits_and_the_edited_details_reach_phase_two() {
    let (tmux, runs) = step_session(140, 40);
    tmux.wait_until("STEP waiting for n to start phase 1", LONG, |screen| {
        screen.contains("waiting: n to start phase 1") && screen.contains("STEP")
    });
    tmux.keys(&["n"]);
    tmux.wait_for("waiting: n to verify phase 1", LONG);
    tmux.keys(&["n"]);
    tmux.wait_until(
        "the phase 1 gap and the question about details",
        LONG,
        |screen| {
            screen.contains("i to edit the details, n to send them as written")
                && screen.contains("FAIL fidelity_gap")
        },
    );
    tmux.keys(&["i"]);
    // A capture can land in the middle of a frame: wait for the whole popup, title and text.
    tmux.wait_until(
        "the editor holding the task's details",
        Duration::from_secs(10),
        |screen| screen.contains("Phase-two details") && screen.contains("learning rate 0.05"),
    );
    tmux.keys(&["End", " (edited by the supervisor)", "C-s"]);
    tmux.wait_for("waiting: n to start phase 2", LONG);
    tmux.keys(&["n"]);
    tmux.wait_for("waiting: n to verify phase 2", LONG);
    tmux.keys(&["n"]);
    tmux.wait_until("PASSED in phase 2 and its verdict", LONG, |screen| {
        screen.contains("PASSED in phase 2") && screen.contains("grade 2: PASS")
    });
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(30));
    let dir = only_run_dir(runs.path());
    let prompt = std::fs::read_to_string(dir.join("prompts/phase-2.txt")).unwrap();
    assert!(prompt.contains("(edited by the supervisor)"), "{prompt}");
}

#[test]
fn ctrl_bracket_detaches_from_the_agent_and_its_lines_survive_a_resize() {
    let runs = tempfile::tempdir().unwrap();
    let task = root().join("tests/tasks/jsonl-protected");
    let command = format!(
        "{} run {} --agent shell --runs-dir {}; echo EXIT=$?; sleep 600",
        bin(),
        task.display(),
        runs.path().display()
    );
    let tmux = Tmux::start(&command, 160, 45);
    tmux.wait_for("phase 1 migrate", LONG);
    // `a` attaches once the shell runs; the title says so.
    let mut presses = 0;
    let attached = loop {
        presses += 1;
        tmux.keys(&["a"]);
        let attached = tmux.screen_within(Duration::from_secs(5), |screen| {
            screen.contains("attached: Ctrl-] detaches")
        });
        if let Some(screen) = attached {
            break screen;
        }
        assert!(presses < 20, "`a` never attached:\n{}", tmux.capture());
    };
    assert!(attached.contains("keys go to the agent"), "{attached}");
    // Keys reach the shell while attached.
    tmux.keys(&["echo ATTACHED-$((6*7))", "Enter"]);
    tmux.wait_for("ATTACHED-42", Duration::from_secs(30));
    // The byte a terminal sends for Ctrl-] (crossterm reads it as Ctrl-5) detaches.
    tmux.bytes_hex(&["1d"]);
    let detached = tmux.wait_until("the TUI's own keys back", Duration::from_secs(10), |s| {
        !s.contains("attached: Ctrl-] detaches") && s.contains("x abort")
    });
    assert!(!detached.contains("keys go to the agent"), "{detached}");
    // The agent's lines survive a resize to 60×20 and back, as in tmux: a line longer than
    // the small pane comes back whole (it was cut before).
    let line = format!("REFLOW-{}-END", "x".repeat(60));
    tmux.keys(&["a"]);
    tmux.wait_for("attached: Ctrl-] detaches", Duration::from_secs(10));
    tmux.keys(&[
        "printf 'REFLOW-%s-END\\n' $(printf 'x%.0s' $(seq 60))",
        "Enter",
    ]);
    tmux.wait_for(&line, Duration::from_secs(30));
    tmux.bytes_hex(&["1d"]);
    tmux.wait_until("detached", Duration::from_secs(10), |s| {
        s.contains("x abort")
    });
    tmux.resize("60", "20");
    let small = tmux.wait_until("the compact layout", Duration::from_secs(10), |s| {
        s.contains("2 Diff") && !s.contains("┌ 2 Diff")
    });
    assert!(!small.contains(&line), "{small}");
    tmux.resize("160", "45");
    tmux.wait_until("the line whole again", Duration::from_secs(10), |s| {
        s.contains("┌ 2 Diff") && s.contains(&line)
    });
    // Keys are the TUI's again: `x` asks to abort.
    tmux.keys(&["x"]);
    tmux.wait_for("Abort the run?", Duration::from_secs(10));
    tmux.keys(&["y"]);
    tmux.wait_for("ended: aborted by the user", LONG);
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=", Duration::from_secs(30));
    // The runs list says what ended it.
    let listed = text(&run(&["runs", runs.path().to_str().unwrap()]));
    assert!(listed.contains("(aborted by the user)"), "{listed}");
}

/// The pid of the xstack process whose command line mentions `needle`.
fn xstack_pid(needle: &str) -> Option<i32> {
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(Result::ok)
        .find_map(|e| {
            let cmdline = String::from_utf8_lossy(&std::fs::read(e.path().join("cmdline")).ok()?)
                .into_owned();
            let first = cmdline.split('\0').next()?.to_string();
            (first.ends_with("/xstack") && cmdline.contains(needle))
                .then(|| e.file_name().to_str()?.parse().ok())?
        })
}

#[test]
fn the_terminal_is_restored_after_each_signal_and_a_panic() {
    let task = root().join("tests/tasks/jsonl-protected");
    for how in ["TERM", "HUP", "INT", "panic"] {
        let runs = tempfile::tempdir().unwrap();
        let marker = runs.path().display().to_string();
        let panic_env = if how == "panic" {
            "XSTACK_TEST_PANIC=1 "
        } else {
            ""
        };
        let command = format!(
            "{panic_env}RUST_BACKTRACE=0 {} run {} --agent 'cmd:sleep 120' --runs-dir {marker} 2>/dev/null; echo EXIT=$?; stty -a; echo STTY-END; sleep 600",
            bin(),
            task.display(),
        );
        let tmux = Tmux::start(&command, 120, 36);
        if how != "panic" {
            tmux.wait_for("1 Agent", LONG);
            let pid = xstack_pid(&marker).expect("xstack runs");
            let signal = match how {
                "TERM" => libc::SIGTERM,
                "HUP" => libc::SIGHUP,
                _ => libc::SIGINT,
            };
            unsafe {
                libc::kill(pid, signal);
            }
        }
        let after = tmux.wait_for("STTY-END", Duration::from_secs(60));
        assert!(
            after.contains(" icanon") && after.contains(" echo "),
            "{how}: {after}"
        );
        assert!(!after.contains("-icanon"), "{how}: {after}");
        let expected = if how == "panic" { "EXIT=101" } else { "EXIT=3" };
        assert!(after.contains(expected), "{how}: {after}");
        if how != "panic" {
            // Each interruption is recorded as what it was, not as the user's abort.
            let recorded = result(&only_run_dir(runs.path()));
            let kind = match how {
                "TERM" => "terminated",
                "HUP" => "hangup",
                _ => "user_abort",
            };
            assert_eq!(recorded["interrupted"], kind, "{how}: {recorded:#}");
            assert_eq!(
                recorded["phases"][0]["outcome"], "interrupted",
                "{recorded:#}"
            );
            assert_eq!(recorded["phases"][0]["verdict"], serde_json::Value::Null);
        }
    }
}

/// Closing the terminal around a TUI run (killing its tmux session) is a hangup, and the
/// run stays resumable.
#[test]
fn a_killed_tmux_session_is_a_hangup_and_the_run_resumes() {
    let task = root().join("tests/tasks/jsonl-protected");
    let runs = tempfile::tempdir().unwrap();
    let marker = runs.path().display().to_string();
    let command = format!(
        "{} run {} --agent 'cmd:sleep 120' --runs-dir {marker} 2>/dev/null",
        bin(),
        task.display(),
    );
    let tmux = Tmux::start(&command, 120, 36);
    tmux.wait_for("1 Agent", LONG);
    let pid = xstack_pid(&marker).expect("xstack runs");
    drop(tmux);
    assert!(
        wait_until(Duration::from_secs(60), || {
            !std::path::Path::new(&format!("/proc/{pid}")).exists()
        }),
        "xstack outlived its terminal"
    );
    let dir = only_run_dir(runs.path());
    let recorded = result(&dir);
    assert_eq!(recorded["interrupted"], "hangup", "{recorded:#}");
    assert_eq!(
        recorded["error"],
        "interrupted: the terminal hung up (SIGHUP)"
    );
    let listed = run(&["runs", runs.path().to_str().unwrap()]);
    assert!(
        text(&listed).contains("(interrupted: hung up)"),
        "{}",
        text(&listed)
    );
    // `--resume` accepts it: the phase continues (and is terminated here once it has).
    let mut resumed = xstack()
        .args(["run", "--resume", dir.to_str().unwrap(), "--headless"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let agent_starts = || {
        journal_events(&dir)
            .iter()
            .filter(|e| e["type"] == "agent_started")
            .count()
    };
    assert!(
        wait_until(Duration::from_secs(60), || agent_starts() >= 2),
        "the resumed run did not start its agent: {}",
        journal_text(&dir)
    );
    unsafe {
        libc::kill(resumed.id() as i32, libc::SIGTERM);
    }
    assert_eq!(resumed.wait().unwrap().code(), Some(3));
    assert!(journal_text(&dir).contains("resumed from the journal"));
    assert_eq!(result(&dir)["interrupted"], "terminated");
}

/// Peak resident memory (KiB) of a process.
fn peak_kib(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn keys_are_answered_and_memory_bounded_during_a_flood_and_a_resize_storm() {
    let runs = tempfile::tempdir().unwrap();
    let marker = runs.path().display().to_string();
    let task = root().join("tests/tasks/jsonl-protected");
    // 1 GB as fast as the agent can write it.
    let agent = "cmd:bash -c 'yes \"a burst of agent output, line after line\" | head -c 1000000000; sleep 120'";
    let command = format!(
        "{} run {} --agent '{}' --runs-dir {marker}; echo EXIT=$?; sleep 600",
        bin(),
        task.display(),
        agent.replace('\'', "'\\''"),
    );
    let tmux = Tmux::start(&command, 120, 36);
    tmux.wait_for("a burst of agent output", LONG);
    let pid = xstack_pid(&marker).expect("xstack runs");
    // A storm of resizes while the output pours in.
    for i in 0..400 {
        let (w, h) = if i % 2 == 0 {
            ("100", "30")
        } else {
            ("140", "40")
        };
        tmux.resize(w, h);
    }
    tmux.resize("120", "36");
    // Keys are still answered: the help overlay opens and closes.
    tmux.keys(&["?"]);
    tmux.wait_for("Keys (any key closes)", Duration::from_secs(30));
    tmux.keys(&["Space"]);
    tmux.wait_until("the help to close", Duration::from_secs(30), |s| {
        !s.contains("Keys (any key closes)")
    });
    tmux.keys(&["z"]);
    tmux.wait_until("the Agent pane zoomed", Duration::from_secs(30), |s| {
        s.contains("1 Agent") && !s.contains("2 Diff")
    });
    let peak = peak_kib(pid);
    assert!(
        peak > 0 && peak < 150 * 1024,
        "peak resident memory {peak} KiB"
    );
    tmux.keys(&["x"]);
    tmux.wait_for("Abort the run?", Duration::from_secs(30));
    tmux.keys(&["y"]);
    tmux.wait_for("aborted", Duration::from_secs(60));
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=3", Duration::from_secs(30));
}

/// The session keys and the words the key hint gives them.
const SESSION_KEYS: [(&str, &str); 8] = [
    ("n", "next"),
    ("s", "step/auto"),
    ("p", "pause"),
    ("i", "inject"),
    ("m", "message"),
    ("r", "re-verify"),
    ("o", "shell"),
    ("x", "abort"),
];

/// The key hint: the screen's last line that offers `q quit`.
fn hint_line(screen: &str) -> String {
    screen
        .lines()
        .rev()
        .find(|line| line.contains("q quit"))
        .unwrap_or_default()
        .to_string()
}

/// At a wait of the walk: the hint offers exactly `offered` of the session keys, and each of
/// the others, pressed, is declined with `reasons`' reason for it (true at that point of the
/// walk). Returns how many keys were checked.
fn keys_at(tmux: &Tmux, wait: &str, offered: &[&str], reasons: &[(&str, &str)]) -> usize {
    let screen = tmux.wait_until(&format!("the wait `{wait}` and its hint"), LONG, |screen| {
        screen.contains(wait) && screen.contains("q quit")
    });
    let hint = hint_line(&screen);
    let mut checked = 0;
    for (key, word) in SESSION_KEYS {
        let shown = hint.contains(&format!("{key} {word}"));
        if offered.contains(&key) {
            assert!(shown, "at `{wait}` the hint should offer {key}: {hint}");
        } else if let Some((_, reason)) = reasons.iter().find(|(k, _)| *k == key) {
            assert!(!shown, "at `{wait}` the hint should hide {key}: {hint}");
            tmux.keys(&[key]);
            tmux.wait_for(
                &format!("{key}: not now: {reason}"),
                Duration::from_secs(30),
            );
        } else {
            assert!(
                !shown,
                "at `{wait}` {key} is neither offered nor explained: {hint}"
            );
            continue;
        }
        checked += 1;
    }
    checked
}

/// A step-mode session walked through both phases, a re-verify at the review of the details,
/// the edited details, a switch to auto and a re-verify and a shell after the end: at every
/// wait the key hint offers exactly what the policy accepts, each offered key does what the
/// hint says, and each hidden one is declined with a reason that is true there.
#[test]
fn a_step_mode_walk_offers_what_the_policy_accepts_and_says_why_not_for_the_rest() {
    let (tmux, runs) = step_session(200, 50);
    let no_agent = ("p", "no agent is running to pause");
    let no_shell = ("o", "the debug shell opens once the session has ended");
    let mut checked = 0;

    // Before phase 1: a message is queued for the prompt, the details editor opens and is
    // cancelled, an abort is asked about and declined.
    let wait = "waiting: n to start phase 1: the agent migrates";
    let not_started = ("r", "phase 1 has not started yet: n starts it");
    checked += keys_at(
        &tmux,
        wait,
        &["n", "s", "i", "m", "x"],
        &[no_agent, not_started, no_shell],
    );
    tmux.keys(&["m"]);
    tmux.wait_for("Message to the agent", Duration::from_secs(30));
    tmux.keys(&["check the loss in float32", "C-s"]);
    tmux.wait_for(
        "m: message queued: it goes with the agent's next prompt",
        Duration::from_secs(30),
    );
    tmux.keys(&["i"]);
    tmux.wait_for("Phase-two details", Duration::from_secs(30));
    tmux.keys(&["Escape"]);
    tmux.wait_until("the editor closed", Duration::from_secs(30), |s| {
        !s.contains("Phase-two details") && s.contains(wait)
    });
    tmux.keys(&["x"]);
    tmux.wait_for("Abort the run?", Duration::from_secs(30));
    tmux.keys(&["n"]);
    tmux.wait_until("the abort declined", Duration::from_secs(30), |s| {
        !s.contains("Abort the run?") && s.contains(wait)
    });
    tmux.keys(&["n"]);

    let wait = "waiting: n to verify phase 1";
    let not_verified = ("r", "phase 1 has not been verified yet: n verifies it");
    checked += keys_at(
        &tmux,
        wait,
        &["n", "s", "i", "m", "x"],
        &[no_agent, not_verified, no_shell],
    );
    tmux.keys(&["n"]);

    // The review of the details: re-verify, back to the review, then edited details.
    let wait = "waiting: i to edit the details, n to send them as written";
    checked += keys_at(
        &tmux,
        wait,
        &["n", "s", "i", "m", "r", "x"],
        &[no_agent, no_shell],
    );
    tmux.keys(&["r"]);
    tmux.wait_until("the re-verify under way", LONG, |s| !s.contains(wait));
    checked += keys_at(
        &tmux,
        wait,
        &["n", "s", "i", "m", "r", "x"],
        &[no_agent, no_shell],
    );
    tmux.keys(&["i"]);
    tmux.wait_until("the details in the editor", Duration::from_secs(30), |s| {
        s.contains("Phase-two details") && s.contains("learning rate 0.05")
    });
    tmux.keys(&["End", " (edited in the walk)", "C-s"]);

    let wait = "waiting: n to start phase 2: the agent migrates";
    let sent = (
        "i",
        "the phase-two details were sent: n starts phase two with them",
    );
    let not_started = ("r", "phase 2 has not started yet: n starts it");
    checked += keys_at(
        &tmux,
        wait,
        &["n", "s", "m", "x"],
        &[no_agent, not_started, no_shell, sent],
    );
    tmux.keys(&["n"]);

    let wait = "waiting: n to verify phase 2";
    let reasons = [
        no_agent,
        no_shell,
        ("r", "phase 2 has not been verified yet: n verifies it"),
        (
            "i",
            "phase two has started: its details went with its prompt",
        ),
        (
            "m",
            "the agent is not running and phase 2's prompt was its last",
        ),
    ];
    checked += keys_at(&tmux, wait, &["n", "s", "x"], &reasons);
    // Auto mode ends the wait: phase 2 is verified without an `n`.
    tmux.keys(&["s"]);
    let ended = "PASSED in phase 2";
    tmux.wait_until("the end, in auto mode", LONG, |s| {
        s.contains(ended) && s.contains("AUTO") && s.contains("│ done │")
    });

    let reasons = [
        no_agent,
        ("n", "the session has ended"),
        (
            "s",
            "the session has ended: no stage is left to step through",
        ),
        (
            "i",
            "the session has ended: there is no phase two to send details to",
        ),
        ("m", "the session has ended: no agent will read it"),
    ];
    checked += keys_at(&tmux, "│ done │", &["r", "o"], &reasons);
    tmux.keys(&["r"]);
    tmux.wait_until("the re-verify after the end", LONG, |s| {
        !s.contains("│ done │")
    });
    tmux.wait_until("the end again", LONG, |s| {
        s.contains("│ done │") && s.contains(ended) && s.contains("o shell")
    });
    // The shell runs in the Agent pane: now something can be paused, and no second shell.
    tmux.keys(&["o"]);
    tmux.wait_until("the shell, which can be paused", LONG, |s| {
        let hint = hint_line(s);
        hint.contains("p pause") && !hint.contains("o shell")
    });
    tmux.keys(&["o"]);
    tmux.wait_for(
        "o: not now: a process already runs in the Agent pane",
        Duration::from_secs(30),
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=0", Duration::from_secs(60));
    assert_eq!(
        checked,
        8 + 8 + 8 + 8 + 8 + 8 + 7,
        "keys checked at the waits"
    );

    let dir = only_run_dir(runs.path());
    let phase1 = std::fs::read_to_string(dir.join("prompts/phase-1.txt")).unwrap();
    assert!(phase1.contains("check the loss in float32"), "{phase1}");
    let phase2 = std::fs::read_to_string(dir.join("prompts/phase-2.txt")).unwrap();
    assert!(phase2.contains("(edited in the walk)"), "{phase2}");
    let journal = journal_text(&dir);
    for again in [
        r#""stage":"verify","again":"details""#,
        r#""stage":"verify","again":"ended""#,
        r#""stage":"inject","waiting":true"#,
    ] {
        assert!(journal.contains(again), "the journal lacks {again}");
    }
}

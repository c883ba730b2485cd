use super::*;
use crate::poll;
use std::process::{Command, Stdio};

const TASK_TOML: &str = r#"id = "quick"
title = "Prints a score"

[source]
path = "repo"

[published]
citation = "none"

[env]
packages = []

[run]
command = "python3 train.py"
timeout_s = 60

[parity]
command = "python3 probe.py"

[[metric]]
name = "acc"
regex = 'acc=(?P<value>[0-9.]+)'

[[criterion]]
metric = "acc"
reduce = "last"
published = 1.0
tolerance = 0.1
direction = "higher"

[phase2]
details = "Print acc=1.0."
"#;

/// A task (its source in `repo/`) and a workspace beside it.
fn setting() -> (tempfile::TempDir, Task, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let task_dir = root.path().join("quick");
    std::fs::create_dir_all(task_dir.join("repo")).unwrap();
    std::fs::write(task_dir.join("repo/train.py"), "print('acc=0.5')\n").unwrap();
    std::fs::write(task_dir.join("task.toml"), TASK_TOML).unwrap();
    let workspace = root.path().join("workspace");
    std::fs::create_dir_all(workspace.join("pkg")).unwrap();
    for file in ["train.py", "probe.py", "pkg/__main__.py"] {
        std::fs::write(workspace.join(file), "").unwrap();
    }
    let task = Task::load(&task_dir).unwrap();
    (root, task, workspace)
}

fn context(task: &Task, workspace: &Path) -> Context {
    Context::new(task, workspace, &task.dir.join("repo"))
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn each_command_line_is_the_port_the_source_the_probe_or_something_else() {
    let (_root, task, workspace) = setting();
    let ctx = context(&task, &workspace);
    let source = task.dir.join("repo");
    let jax = vec!["jax".to_string()];
    let torch = vec!["torch".to_string()];
    type Case<'a> = (Vec<String>, &'a Path, &'a Vec<String>, RunTarget, &'a str);
    let cases: Vec<Case> = vec![
        (
            argv(&["python", "train.py"]),
            &workspace,
            &jax,
            RunTarget::Port,
            "train.py",
        ),
        (
            argv(&["python", "-u", "./train.py", "--x"]),
            &workspace,
            &jax,
            RunTarget::Port,
            "train.py",
        ),
        (
            argv(&["python", "../../workspace/train.py"]),
            &source,
            &jax,
            RunTarget::Port,
            "train.py",
        ),
        // The workspace's code before it was ported: PyTorch alone.
        (
            argv(&["python", "train.py"]),
            &workspace,
            &torch,
            RunTarget::Source,
            "train.py",
        ),
        (
            argv(&["python", "train.py"]),
            &source,
            &torch,
            RunTarget::Source,
            "train.py",
        ),
        (
            argv(&["python", "probe.py"]),
            &workspace,
            &jax,
            RunTarget::Probe,
            "probe.py",
        ),
        (
            argv(&["python", "-m", "pkg"]),
            &workspace,
            &jax,
            RunTarget::Port,
            "-m pkg",
        ),
        (
            argv(&["python", "-m", "pytest"]),
            &workspace,
            &jax,
            RunTarget::Other,
            "-m pytest",
        ),
        (
            argv(&["python", "-c", "import jax"]),
            &workspace,
            &jax,
            RunTarget::Other,
            "-c",
        ),
        (
            argv(&["python"]),
            &workspace,
            &jax,
            RunTarget::Other,
            "python",
        ),
        (
            argv(&["python", "/usr/lib/x.py"]),
            &workspace,
            &jax,
            RunTarget::Other,
            "/usr/lib/x.py",
        ),
    ];
    let checked = cases.len();
    for (line, cwd, frameworks, target, program) in cases {
        assert_eq!(
            ctx.classify(&line, cwd, frameworks),
            (target, program.to_string()),
            "{line:?} in {}",
            cwd.display()
        );
    }
    assert_eq!(checked, 11);
}

#[test]
fn in_a_port_to_pytorch_a_workspace_script_that_ran_jax_alone_is_the_source() {
    let (_root, mut task, workspace) = setting();
    task.migration = Migration {
        from: Framework::Jax,
        to: Framework::Torch,
    };
    let ctx = context(&task, &workspace);
    let line = argv(&["python", "train.py"]);
    let ran = |frameworks: &[&str]| {
        let frameworks: Vec<String> = frameworks.iter().map(|f| f.to_string()).collect();
        ctx.classify(&line, &workspace, &frameworks).0
    };
    assert_eq!(ran(&["jax"]), RunTarget::Source);
    assert_eq!(ran(&["torch"]), RunTarget::Port);
    assert_eq!(ran(&["jax", "torch"]), RunTarget::Port);
    assert_eq!(ran(&[]), RunTarget::Port);
}

fn run(target: RunTarget, exit: Option<i32>, acc: Option<f64>) -> AgentRun {
    AgentRun {
        phase: 1,
        target,
        program: "train.py".into(),
        argv: argv(&["python", "train.py"]),
        cwd: "/w".into(),
        duration_s: 1.0,
        exit_code: exit,
        exception: None,
        frameworks: vec!["jax".into()],
        metrics: acc
            .map(|value| CheckedMetric {
                metric: "acc".into(),
                reduce: Reduce::Last,
                value,
                within: value >= 0.9,
            })
            .into_iter()
            .collect(),
        reported_after_s: 0.0,
        ended_by_xstack: false,
    }
}

#[test]
fn a_turn_is_summed_up_by_what_ran_and_how_it_ended() {
    let runs = vec![
        (10.0, run(RunTarget::Source, Some(0), Some(0.95))),
        (20.0, run(RunTarget::Port, Some(1), None)),
        (30.0, run(RunTarget::Port, Some(0), Some(0.93))),
        (35.0, run(RunTarget::Other, Some(0), None)),
    ];
    let checked = Checked::of(&runs, Some(95.0));
    assert_eq!(
        checked,
        Checked {
            port_runs: 2,
            last_port_exit: Some(0),
            last_port_metrics: runs[2].1.metrics.clone(),
            source_runs: 1,
            probe_runs: 0,
            other_runs: 1,
            unknown_runs: 0,
            compared: true,
            since_last_run_s: Some(60.0),
        }
    );
    assert_eq!(
        Checked::line(&runs, 40.0),
        "ran train.py 2× · last acc 0.93 ✓ · source 1×"
    );
    assert_eq!(
        Checked::line(&runs, 35.0 + 20.0 * 60.0),
        "ran train.py 2× · last acc 0.93 ✓ · source 1× · last run 20 min ago"
    );
    // Nothing run: no time since, nothing compared.
    let none = Checked::of(&[], Some(95.0));
    assert_eq!(
        (none.port_runs, none.compared, none.since_last_run_s),
        (0, false, None)
    );
    assert_eq!(Checked::line(&[], 10.0), "has not run its port");
    // A crash without metrics.
    let crashed = vec![(5.0, run(RunTarget::Port, Some(1), None))];
    assert_eq!(
        Checked::line(&crashed, 6.0),
        "ran train.py 1× · last exited 1"
    );
}

fn python(collector: &Collector, cwd: &Path, args: &[&str]) -> std::process::Child {
    Command::new("python3")
        .args(args)
        .current_dir(cwd)
        .envs(collector.vars(None))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn real_processes_are_recorded_and_one_left_running_is_ended_at_the_end_of_the_turn() {
    let (root, task, workspace) = setting();
    std::fs::write(
        workspace.join("train.py"),
        "import sys\nprint('acc=%s' % sys.argv[1])\nif sys.argv[2:]: raise ValueError('no')\n",
    )
    .unwrap();
    std::fs::write(
        workspace.join("sleeper.py"),
        "import time\nprint('acc=0.95', flush=True)\ntime.sleep(300)\n",
    )
    .unwrap();
    let mut collector =
        Collector::create(&root.path().join("agent-runs"), context(&task, &workspace)).unwrap();
    for args in [&["train.py", "0.5"][..], &["train.py", "0.97", "crash"]] {
        assert!(python(&collector, &workspace, args).wait().is_ok());
    }
    let mut sleeper = python(&collector, &workspace, &["sleeper.py"]);
    // Wait for the sleeper's start record and its line (a condition, with a deadline).
    let started = || {
        std::fs::read_dir(collector.records_dir())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "out"))
            .any(|e| std::fs::read_to_string(e.path()).unwrap() == "acc=0.95\n")
    };
    assert!(
        poll::wait_until(Duration::from_secs(30), Duration::from_millis(20), started),
        "the sleeper never started"
    );
    let ended = collector.collect(1, false);
    let seen: Vec<(Option<i32>, Option<&str>, f64)> = ended
        .iter()
        .map(|r| (r.exit_code, r.exception.as_deref(), r.metrics[0].value))
        .collect();
    assert_eq!(
        seen,
        vec![
            (Some(0), None, 0.5),
            (Some(1), Some("ValueError: no"), 0.97)
        ]
    );
    assert!(
        ended
            .iter()
            .all(|r| r.target == RunTarget::Port && r.program == "train.py")
    );
    assert!(!ended[0].metrics[0].within && ended[1].metrics[0].within);
    // Nothing twice; the sleeper only at the end of the turn, ended by xstack.
    assert!(collector.collect(1, false).is_empty());
    let left = collector.collect(1, true);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].program, "sleeper.py");
    assert!(left[0].ended_by_xstack);
    assert_eq!(left[0].exit_code, None);
    assert_eq!(left[0].metrics[0].value, 0.95);
    let status = sleeper.wait().unwrap();
    assert!(!status.success(), "the sleeper was not ended");
    assert!(collector.collect(1, true).is_empty());
}

#[test]
fn a_python_the_recorder_misses_is_reported_once_as_unknown() {
    let (root, task, workspace) = setting();
    let mut collector =
        Collector::create(&root.path().join("agent-runs"), context(&task, &workspace)).unwrap();
    // `-S` skips site, and with it the recorder.
    let mut hidden = python(
        &collector,
        &workspace,
        &["-S", "-c", "import time; time.sleep(60)"],
    );
    let mut polls = 0;
    let seen = poll::poll(Duration::from_secs(30), Duration::from_millis(100), || {
        polls += 1;
        Some(collector.collect(1, false)).filter(|s| !s.is_empty())
    })
    .expect("never reported");
    assert!(
        polls > 1,
        "reported before it had a chance to write a record"
    );
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].target, RunTarget::Unknown);
    assert_eq!(seen[0].program, "-c");
    assert_eq!(seen[0].exit_code, None);
    assert!(
        seen[0].argv.contains(&"-S".to_string()),
        "{:?}",
        seen[0].argv
    );
    assert!(collector.collect(1, false).is_empty(), "reported twice");
    let runs: Vec<(f64, AgentRun)> = seen.into_iter().map(|r| (1.0, r)).collect();
    let checked = Checked::of(&runs, Some(2.0));
    assert_eq!((checked.port_runs, checked.unknown_runs), (0, 1));
    assert_eq!(
        Checked::line(&runs, 2.0),
        "has not run its port · 1 unrecorded"
    );
    hidden.kill().unwrap();
    hidden.wait().unwrap();
}

#[test]
fn the_agent_itself_is_neither_a_run_nor_ended_and_its_records_keep_no_secret() {
    let (root, task, workspace) = setting();
    let mut collector =
        Collector::create(&root.path().join("agent-runs"), context(&task, &workspace)).unwrap();
    let (key, token) = ("sk-ant-0123456789abcdef", "tok-9876543210");
    // An agent that is a Python program, still working at the end of its turn, that prints
    // two keys of its environment, the first in two writes, and has one on its command line.
    let code = "import os, sys, time\n\
                key = os.environ['XSTACK_TEST_API_KEY']\n\
                sys.stdout.write('key ' + key[:6]); sys.stdout.flush(); time.sleep(0.1)\n\
                print(key[6:] + ' token ' + os.environ['XSTACK_TEST_TOKEN'], flush=True)\n\
                print('acc=0.9', flush=True)\n\
                time.sleep(60)\n";
    let mut agent = Command::new("python3")
        .args(["-c", code, key])
        .current_dir(&workspace)
        .envs(collector.vars(None))
        .env("XSTACK_TEST_API_KEY", key)
        .env("XSTACK_TEST_TOKEN", token)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    collector.agent_started(agent.id() as i32);
    let records = |ext: &str| -> String {
        std::fs::read_dir(collector.records_dir())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    };
    assert!(
        poll::wait_until(Duration::from_secs(30), Duration::from_millis(20), || {
            records("out").contains("acc=0.9")
        }),
        "the agent never printed"
    );
    // What the recorder kept is redacted as the journal is.
    let (out, start) = (records("out"), records("jsonl"));
    assert_eq!(out, "key [redacted] token [redacted]\nacc=0.9\n");
    assert!(
        start.contains("\"[redacted]\"") && !start.contains(key),
        "{start}"
    );
    assert!(collector.collect(1, false).is_empty());
    assert!(collector.collect(1, true).is_empty());
    assert!(
        agent.try_wait().unwrap().is_none(),
        "the agent was ended with its turn"
    );
    // Its own records are removed with the turn's, though never reported.
    assert_eq!(
        std::fs::read_dir(collector.records_dir()).unwrap().count(),
        0
    );
    agent.kill().unwrap();
    agent.wait().unwrap();
    // At the end of the session the folder goes too.
    let dir = collector.records_dir().to_path_buf();
    collector.remove();
    assert!(!dir.exists());
}

#[test]
fn the_installed_recorder_holds_the_secrets_rule() {
    let source = recorder_source();
    assert!(
        source.contains("_SECRET_SUFFIXES = (\"_KEY\", \"_TOKEN\", \"_SECRET\", \"_PASSWORD\",)\n")
    );
    assert!(source.contains(&format!("_MIN_SECRET_LEN = {MIN_SECRET_LEN}\n")));
    assert!(source.contains("_REDACTED = \"[redacted]\"\n"));
}

#[test]
fn a_server_the_agent_keeps_goes_on_past_the_end_of_its_turn() {
    let (root, task, workspace) = setting();
    let mut collector =
        Collector::create(&root.path().join("agent-runs"), context(&task, &workspace)).unwrap();
    // Not repository code: a script outside the workspace and the source.
    let tools = root.path().join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("server.py"), "import time\ntime.sleep(60)\n").unwrap();
    let mut server = python(&collector, &tools, &["server.py"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir(collector.records_dir()).unwrap().count() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(collector.collect(1, true).is_empty());
    assert!(server.try_wait().unwrap().is_none(), "the server was ended");
    // It is reported, as another process, once it ends.
    server.kill().unwrap();
    server.wait().unwrap();
    let later = collector.collect(2, true);
    assert_eq!(later.len(), 1, "{later:?}");
    assert_eq!((later[0].target, later[0].phase), (RunTarget::Other, 2));
    assert_eq!(later[0].exit_code, None);
}

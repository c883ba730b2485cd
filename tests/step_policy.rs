//! The step policy under tokio's paused clock: in step mode the session waits for the human
//! however much time passes, and `n` moves it on; auto mode never waits.

mod common;

use std::time::Duration;

use xstack::cli::{self, RunOptions};
use xstack::config::Config;
use xstack::event::{Command, Mode};
use xstack::session::driver::Driver;
use xstack::session::recorder::lock;

use common::*;

fn options(mode: Mode, runs: &std::path::Path) -> RunOptions {
    let task = root().join("tests/tasks/jsonl-protected");
    RunOptions {
        task: task.display().to_string(),
        agent: Some(format!("script:{}/agents/pass.jsonl", task.display())),
        repo: None,
        mode,
        runs_dir: Some(runs.to_path_buf()),
        runner: None,
        headless: true,
        sandbox: None,
        config: Config::default(),
    }
}

/// Polls `done` until it holds; fails naming `what` after five minutes of real time (a cold environment build included) (the paused
/// clock runs ahead while the session waits on its children, so it cannot be the deadline).
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn step_mode_waits_for_n_however_long_it_takes() {
    let runs = tempfile::tempdir().unwrap();
    let prepared = cli::prepare(&options(Mode::Step, runs.path())).unwrap();
    let state = prepared.state.clone();
    let (tx, rx) = tokio::sync::mpsc::channel::<Command>(4);
    let driver = tokio::spawn(
        Driver::new(
            prepared.config,
            prepared.recorder,
            rx,
            prepared.run_id,
            prepared.started_at,
        )
        .run(),
    );
    let waiting = |s: &xstack::session::state::SessionState| s.waiting().map(|w| w.text());
    // The environment is built or found, then the session waits before the agent starts.
    until("the wait before phase 1", || {
        waiting(&lock(&state)).is_some()
    })
    .await;
    assert_eq!(
        waiting(&lock(&state)).as_deref(),
        Some("n to start phase 1: the agent migrates")
    );
    // An hour passes on the paused clock: nothing moves without the human.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    {
        let s = lock(&state);
        assert_eq!(
            waiting(&s).as_deref(),
            Some("n to start phase 1: the agent migrates")
        );
        assert!(!s.agent_running);
        assert!(s.phases.iter().all(|p| p.prompt.is_none()));
    }
    // `s` switches to auto mode, which stops the wait.
    tx.send(Command::ToggleMode).await.unwrap();
    until("auto mode without a wait", || {
        let s = lock(&state);
        s.waiting().is_none() && s.mode == Mode::Auto
    })
    .await;
    tx.send(Command::Abort).await.unwrap();
    assert_eq!(driver.await.unwrap(), 3);
}

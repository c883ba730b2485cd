//! A session driven in-process and the same session replayed from its journal alone draw the
//! same panes and reach the same verdicts; `xstack diff` on a PyTorch/JAX pair.

mod common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use xstack::cli::{self, RunOptions};
use xstack::config::Config;
use xstack::event::{Command, Mode};
use xstack::replay::Player;
use xstack::session::driver::Driver;
use xstack::session::recorder::lock;
use xstack::session::state::SessionState;
use xstack::ui::app::{App, PaneId};
use xstack::ui::draw;
use xstack::ui::panes::diff::DiffPane;
use xstack::ui::theme::Theme;

use common::*;

fn render(state: &SessionState, focus: PaneId) -> String {
    let theme = Theme::dark();
    let mut app = App::new(true);
    app.focus = focus;
    app.zoom = focus != PaneId::Agent;
    let (mut diff, mut built) = DiffPane::new(theme.syntax_theme.clone());
    diff.update(diff.read(state, &app), &mut app);
    while let Ok(b) = built.try_recv() {
        diff.accept(b);
    }
    let mut terminal = Terminal::new(TestBackend::new(160, 45)).unwrap();
    terminal
        .draw(|f| {
            draw::draw(f, state, &app, &diff, &theme);
        })
        .unwrap();
    format!("{}", terminal.backend())
}

#[test]
fn live_and_replayed_panes_are_the_same() {
    for trajectory in ["gap_then_pass", "bypass_protected"] {
        let runs = tempfile::tempdir().unwrap();
        let task = root().join("tests/tasks/jsonl-protected");
        let opts = RunOptions {
            task: task.display().to_string(),
            agent: Some(format!(
                "script:{}/agents/{trajectory}.jsonl",
                task.display()
            )),
            repo: None,
            mode: Mode::Auto,
            runs_dir: Some(runs.path().to_path_buf()),
            runner: None,
            headless: true,
            sandbox: None,
            config: Config::default(),
        };
        let prepared = cli::prepare(&opts).unwrap();
        let state = prepared.state.clone();
        let run_dir = prepared.config.run_dir.clone();
        let runtime =
            xstack::process::runtime(xstack::process::RuntimeThreads::SessionWorkers).unwrap();
        let code = runtime.block_on(async move {
            let (_tx, rx) = tokio::sync::mpsc::channel::<Command>(4);
            Driver::new(
                prepared.config,
                prepared.recorder,
                rx,
                prepared.run_id,
                prepared.started_at,
            )
            .run()
            .await
        });
        let live = lock(&state).clone();
        // The way `xstack replay` reads it: events read back from the file by offset.
        let (_, mut player) = Player::open(&xstack::journal::path_in(&run_dir)).unwrap();
        player.seek(player.end());
        let replayed = player.state();
        assert_eq!(
            replayed.finished.as_ref().unwrap().exit_code,
            code,
            "{trajectory}"
        );
        for pane in PaneId::ALL {
            assert_eq!(
                render(&live, pane),
                render(replayed, pane),
                "{trajectory}: pane {}",
                pane.title()
            );
        }
        let verdicts = |s: &SessionState| {
            s.phases
                .iter()
                .map(|p| p.verdict.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(verdicts(&live), verdicts(replayed), "{trajectory}");
    }
}

#[test]
fn diff_command_prints_a_side_by_side_port() {
    let repo = root().join("tasks/digits-mlp/repo/train.py");
    let solution = root().join("tasks/digits-mlp/solution/train.py");
    let out = run(&[
        "diff",
        repo.to_str().unwrap(),
        solution.to_str().unwrap(),
        "--width",
        "140",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let plain = String::from_utf8(out.stdout).unwrap();
    // The sides' frameworks title it: the source imports torch, the port jax.
    assert!(
        plain.starts_with("PyTorch ↔ JAX\n\nmodified train.py"),
        "{plain}"
    );
    assert!(!plain.contains('\x1b'), "colour in a pipe");
    let torch_line = plain
        .lines()
        .find(|l| l.contains("import torch"))
        .expect("the torch import is shown");
    assert!(
        torch_line.contains('~') || torch_line.contains('-'),
        "{torch_line}"
    );
    assert!(
        plain.lines().all(|l| l.chars().count() <= 140),
        "a line is wider than 140 columns"
    );
    let out = run(&[
        "diff",
        repo.to_str().unwrap(),
        solution.to_str().unwrap(),
        "--width",
        "140",
        "--color",
        "always",
    ]);
    let coloured = String::from_utf8(out.stdout).unwrap();
    assert!(coloured.contains(";38;2;"), "no 24-bit colour");
    // A JAX source on the left: the title says so.
    let out = run(&["diff", solution.to_str().unwrap(), repo.to_str().unwrap()]);
    let plain = String::from_utf8(out.stdout).unwrap();
    assert!(plain.starts_with("JAX ↔ PyTorch\n"), "{plain}");
    let out = run(&["diff", repo.to_str().unwrap(), "/no/such/file.py"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

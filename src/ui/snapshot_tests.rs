//! Snapshots of the whole screen and of single panes, drawn from fixed event sequences on a
//! `TestBackend`; the styled Verdict and Diff panes where colour carries meaning.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

use crate::event::{At, Event, FileContent, MetricPoint, Mode, Pass, ReferenceSeries, SessionTask};
use crate::grade::{CriterionResult, FailureClass, Verdict};
use crate::metrics::Point;
use crate::session::state::SessionState;
use crate::task::{CriterionSpec, Direction, Migration, Reduce};

use super::app::{App, PaneId};
use super::draw;
use super::panes::diff::DiffPane;
use super::theme::Theme;

const TORCH: &str = "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(64, 10)\nopt = torch.optim.Adam(model.parameters(), lr=1e-3)\nfor epoch in range(3):\n    print(f\"epoch {epoch} acc={acc}\")\n";
const JAX: &str = "import jax\nimport jax.numpy as jnp\nimport optax\n\nparams = init(jax.random.PRNGKey(0))\nopt = optax.sgd(1e-3)\nfor epoch in range(3):\n    print(f\"epoch {epoch} acc={acc}\")\n";

fn verdict(failure: Option<FailureClass>, value: f64) -> Verdict {
    Verdict {
        failure,
        criteria: vec![CriterionResult {
            metric: "test_acc".into(),
            value: Some(value),
            published: 0.97,
            tolerance: 0.01,
            direction: Direction::Higher,
            passed: failure.is_none(),
        }],
        findings: if failure.is_some() {
            vec![format!(
                "test_acc (last) = {value} is outside the criterion at least 0.97 - 0.01"
            )]
        } else {
            vec![]
        },
        finding_records: vec![],
        verify_confined: Some(true),
        unconfined: None,
    }
}

fn points(values: &[f64]) -> Vec<Point> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| Point {
            step: Some(i as f64 + 1.0),
            value: *v,
        })
        .collect()
}

/// A finished two-phase session: phase 1 fidelity_gap, phase 2 pass.
fn session() -> SessionState {
    applied(&session_events())
}

/// The state after `events`, half a second apart.
fn applied(events: &[Event]) -> SessionState {
    let mut state = SessionState::new();
    for (i, e) in events.iter().enumerate() {
        state.apply(i as f64 * 0.5, e);
    }
    state
}

/// The events of [`session`].
fn session_events() -> Vec<Event> {
    let mut events = vec![
        Event::Task(Box::new(SessionTask {
            id: "digits-mlp".into(),
            dir: String::new(),
            title: "MLP on digits".into(),
            migration: Migration::default(),
            agent: "script:trajectory.jsonl".into(),
            command: "python train.py".into(),
            criteria: vec![CriterionSpec {
                metric: "test_acc".into(),
                reduce: Reduce::Last,
                published: 0.97,
                tolerance: 0.01,
                direction: Direction::Higher,
                claim: Some(crate::task::ClaimSpec {
                    text: Some("| MLP     | 97.0 %   |".into()),
                    location: Some("README.md:12".into()),
                    value: Some(97.0),
                    unit: "%".into(),
                    status: crate::task::ClaimStatus::Reproduced,
                    measured: Some(crate::task::ClaimMeasurement {
                        runs: 5,
                        mean: 0.9712,
                        std: 0.0021,
                        date: "2026-12-04".into(),
                        versions: "torch 2.15.0".into(),
                        machine: None,
                    }),
                }),
            }],
            metrics: vec!["test_acc".into()],
            phase2_details: "Adam, learning rate 1e-3".into(),
            reference: vec![ReferenceSeries { metric: "test_acc".into(), points: points(&[0.90, 0.95, 0.97]) }],
            upstream: None,
        })),
        Event::Mode { mode: Mode::Auto },
        Event::Stage(At::Setup),
        Event::Baseline { files: vec![FileContent { path: "train.py".into(), text: Some(TORCH.into()), size: 1 }] },
        Event::Stage(At::Migrate(1)),
        Event::AgentStarted { phase: 1, command: "agent".into(), cols: 60, rows: 10 },
        Event::AgentOutput { text: "[xstack scripted agent] replaying\r\nPorting train.py to JAX.\r\nwrote train.py\r\n".into() },
        Event::FileChanged { file: FileContent { path: "train.py".into(), text: Some(JAX.into()), size: 1 }, deleted: false },
        Event::AgentExited { code: Some(0) },
        Event::Stage(At::Verify(1, Pass::First)),
        Event::RunStarted { phase: 1, command: "python train.py".into(), cols: 60, rows: 10, seed_check: false },
        Event::RunOutput { text: "epoch 1 acc=0.50\r\nepoch 2 acc=0.61\r\nepoch 3 acc=0.70\r\n".into() },
    ];
    events.push(Event::Metrics {
        phase: 1,
        points: [0.5, 0.61, 0.7]
            .iter()
            .enumerate()
            .map(|(i, v)| MetricPoint(0, Some(i as f64 + 1.0), *v))
            .collect(),
    });
    events.extend([
        Event::RunExited {
            code: Some(0),
            timed_out: false,
            duration_s: 3.0,
        },
        Event::Graded {
            phase: 1,
            verdict: verdict(Some(FailureClass::FidelityGap), 0.7),
            exit_code: Some(0),
            duration_s: 3.0,
        },
        Event::Stage(At::Migrate(2)),
        Event::Stage(At::Verify(2, Pass::First)),
        Event::RunStarted {
            phase: 2,
            command: "python train.py".into(),
            cols: 60,
            rows: 10,
            seed_check: false,
        },
        Event::RunOutput {
            text: "epoch 1 acc=0.91\r\nepoch 2 acc=0.95\r\nepoch 3 acc=0.972\r\n".into(),
        },
    ]);
    events.push(Event::Metrics {
        phase: 2,
        points: [0.91, 0.95, 0.972]
            .iter()
            .enumerate()
            .map(|(i, v)| MetricPoint(0, Some(i as f64 + 1.0), *v))
            .collect(),
    });
    events.extend([
        Event::RunExited {
            code: Some(0),
            timed_out: false,
            duration_s: 2.5,
        },
        Event::Graded {
            phase: 2,
            verdict: verdict(None, 0.972),
            exit_code: Some(0),
            duration_s: 2.5,
        },
        Event::Stage(At::Ended(2)),
        Event::Finished {
            passed: true,
            passed_in_phase: Some(2),
            exit_code: 0,
            error: None,
            interrupted: None,
        },
        // What the policy answers at the end, as a live session publishes it.
        Event::Answers {
            answers: crate::session::policy::Policy::resumed(
                Mode::Auto,
                Some(crate::agent::AgentMode::Interactive),
                [Some(false), Some(true)],
                None,
            )
            .answers(false),
        },
    ]);
    events
}

/// The text of a drawn screen, a line per row.
fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

#[test]
fn verify_not_confined_is_said_once_with_what_would_confine_it() {
    let mut events = session_events();
    for event in &mut events {
        if let Event::Graded { verdict, .. } = event {
            verdict.verify_confined = Some(false);
            verdict.unconfined = Some(crate::runner::confine::NOT_ON_PATH.to_string());
        }
    }
    let state = applied(&events);
    for (width, height) in [(200, 50), (80, 24)] {
        let text = screen_text(&render_state(&state, width, height, PaneId::Verdict, true));
        assert_eq!(text.matches("not confined").count(), 1, "{text}");
        assert!(
            text.contains("verify was not confined in phases 1 and 2"),
            "{text}"
        );
        assert!(text.contains("install it (`apt-get install"), "{text}");
        // Under the newest verdict: phase 2's, listed first.
        let said = text.find("not confined").unwrap();
        assert!(text.find("Phase 2").unwrap() < said, "{text}");
        assert!(said < text.find("Phase 1").unwrap(), "{text}");
    }
}

#[test]
fn the_run_log_says_which_run_it_shows() {
    let title = |state: &SessionState| -> String {
        let terminal = render_state(state, 200, 50, PaneId::RunLog, true);
        screen_text(&terminal).lines().next().unwrap().to_string()
    };
    let mut events = session_events();
    let graded = events
        .iter()
        .position(|e| matches!(e, Event::Graded { phase: 1, .. }))
        .unwrap();
    events.truncate(graded + 1);
    assert!(
        title(&applied(&events)).starts_with("┌ 3 Run log · phase 1 · verify run "),
        "{}",
        title(&applied(&events))
    );
    // Each side of the parity probe after the verdict: the title names it, and a line between
    // its output and the run's before it says whose the output below is.
    events.extend([
        Event::ProbeStarted {
            phase: 1,
            side: crate::parity::ParitySide::Source,
        },
        Event::RunOutput {
            text: "Test Accuracy: 0.1130\r\n".into(),
        },
    ]);
    let state = applied(&events);
    assert!(
        title(&state).starts_with("┌ 3 Run log · phase 1 · parity probe (source) "),
        "{}",
        title(&state)
    );
    let text = screen_text(&render_state(&state, 200, 50, PaneId::RunLog, true));
    let run = text.find("epoch 3 acc=0.70").unwrap();
    let line = text.find("── phase 1 · parity probe (source) ──").unwrap();
    let probe = text.find("Test Accuracy: 0.1130").unwrap();
    assert!(run < line && line < probe, "{text}");
    // On a compact screen the Run log's line says whose its latest row is.
    let compact = screen_text(&render_state(&state, 80, 24, PaneId::Agent, false));
    assert!(
        compact.contains(" 3 Run log  parity probe (source): Test Accuracy: 0.1130"),
        "{compact}"
    );
    events.push(Event::ProbeStarted {
        phase: 1,
        side: crate::parity::ParitySide::Port,
    });
    let state = applied(&events);
    assert!(
        title(&state).starts_with("┌ 3 Run log · phase 1 · parity probe (port) "),
        "{}",
        title(&state)
    );
    // The seed check is a run of its own.
    events.push(Event::RunStarted {
        phase: 1,
        command: "python train.py".into(),
        cols: 60,
        rows: 10,
        seed_check: true,
    });
    assert!(
        title(&applied(&events)).starts_with("┌ 3 Run log · phase 1 · seed check "),
        "{}",
        title(&applied(&events))
    );
}

fn render(width: u16, height: u16, focus: PaneId, zoom: bool) -> Terminal<TestBackend> {
    render_state(&session(), width, height, focus, zoom)
}

fn render_state(
    state: &SessionState,
    width: u16,
    height: u16,
    focus: PaneId,
    zoom: bool,
) -> Terminal<TestBackend> {
    let theme = Theme::dark();
    let mut app = App::new(true);
    app.focus = focus;
    app.zoom = zoom;
    let (mut diff, mut results) = DiffPane::new(theme.syntax_theme.clone());
    diff.update(diff.read(state, &app), &mut app);
    while let Ok(built) = results.try_recv() {
        diff.accept(built);
    }
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            draw::draw(f, state, &app, &diff, &theme);
        })
        .unwrap();
    terminal
}

/// The buffer's text with a marker wherever the foreground or background colour changes.
fn styled(buffer: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buffer.area.height {
        let mut current: Option<(Color, Color)> = None;
        for x in 0..buffer.area.width {
            let cell = &buffer[(x, y)];
            let style = (cell.fg, cell.bg);
            if current != Some(style) {
                out.push_str(&format!("[{:?}/{:?}]", style.0, style.1));
                current = Some(style);
            }
            out.push_str(cell.symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn whole_screen_80x24() {
    let terminal = render(80, 24, PaneId::Agent, false);
    // The key hint drops entries from its end to fit, but never help and quit.
    let buffer = terminal.backend().buffer();
    let hint: String = (0..80)
        .map(|x| buffer[(x, 23)].symbol().to_string())
        .collect();
    assert!(hint.trim_end().ends_with("? help · q quit"), "{hint}");
    // Compact: the focused pane whole, a line for each of the others.
    let row = |y: u16| -> String { (0..80).map(|x| buffer[(x, y)].symbol()).collect() };
    let summaries: Vec<String> = (17..21).map(|y| row(y).trim_end().to_string()).collect();
    assert_eq!(
        summaries,
        [
            " 2 Diff     PyTorch ↔ JAX · train.py (1/1) vs source",
            " 3 Run log  epoch 3 acc=0.972",
            " 4 Metrics  test_acc p2 0.972 ✓ (≥ 0.96)",
            " 5 Verdict  PASSED in phase 2",
        ]
    );
    insta::assert_snapshot!(terminal.backend());
    // Focus moves the big pane; the Agent becomes a line.
    let focused = render(80, 24, PaneId::RunLog, false);
    let buffer = focused.backend().buffer();
    let top: String = (0..80).map(|x| buffer[(x, 0)].symbol()).collect();
    assert!(top.starts_with("┌ 3 Run log"), "{top}");
    let first: String = (0..80).map(|x| buffer[(x, 17)].symbol()).collect();
    assert!(first.starts_with(" 1 Agent    wrote train.py"), "{first}");
}

#[test]
fn whole_screen_200x50() {
    insta::assert_snapshot!(render(200, 50, PaneId::Agent, false).backend());
}

#[test]
fn zoomed_panes() {
    for pane in PaneId::ALL {
        let terminal = render(100, 30, pane, true);
        insta::assert_snapshot!(
            format!("zoomed_{}", pane.title().replace(' ', "_").to_lowercase()),
            terminal.backend()
        );
    }
}

/// A JAX source ported to PyTorch: the Diff pane's title names the sides the other way
/// round, the JAX source on the left.
#[test]
fn diff_of_a_jax_source_ported_to_pytorch() {
    let events: Vec<Event> = session_events()
        .into_iter()
        .map(|event| match event {
            Event::Task(mut task) => {
                task.migration = Migration {
                    from: crate::task::Framework::Jax,
                    to: crate::task::Framework::Torch,
                };
                Event::Task(task)
            }
            Event::Baseline { .. } => Event::Baseline {
                files: vec![FileContent {
                    path: "train.py".into(),
                    text: Some(JAX.into()),
                    size: 1,
                }],
            },
            Event::FileChanged { file, deleted } => Event::FileChanged {
                file: FileContent {
                    text: Some(TORCH.into()),
                    ..file
                },
                deleted,
            },
            other => other,
        })
        .collect();
    let terminal = render_state(&applied(&events), 100, 30, PaneId::Diff, true);
    let buffer = terminal.backend().buffer();
    let top: String = (0..100).map(|x| buffer[(x, 0)].symbol()).collect();
    assert!(
        top.starts_with("┌ 2 Diff JAX ↔ PyTorch · train.py (1/1) vs source"),
        "{top}"
    );
    insta::assert_snapshot!(terminal.backend());
}

/// Paths too long for the Diff pane's file list keep their end, where the file name is,
/// after a leading `…`.
#[test]
fn the_diff_file_list_keeps_the_end_of_a_long_path() {
    const NOTEBOOK: &str = "docs/examples/train_rnn.py";
    const CORPUS: &str = "downstream/TextSGC/build_corpus.py";
    let file = |path: &str| FileContent {
        path: path.into(),
        text: Some(TORCH.into()),
        size: 1,
    };
    let mut events: Vec<Event> = Vec::new();
    for event in session_events() {
        match event {
            Event::Baseline { .. } => events.push(Event::Baseline {
                files: vec![file(NOTEBOOK), file(CORPUS)],
            }),
            Event::FileChanged { deleted, .. } => {
                for path in [NOTEBOOK, CORPUS] {
                    events.push(Event::FileChanged {
                        file: FileContent {
                            text: Some(JAX.into()),
                            ..file(path)
                        },
                        deleted,
                    });
                }
            }
            other => events.push(other),
        }
    }
    let terminal = render_state(&applied(&events), 100, 30, PaneId::Diff, true);
    let screen = screen_text(&terminal);
    let rows: Vec<&str> = screen.lines().collect();
    // The list is 19 columns wide at 100: the mark, a space, 16 of the path and a gap.
    let listed = |name: &str| rows.iter().any(|r| r.contains(&format!("│M {name} ")));
    assert!(
        listed("…es/train_rnn.py") && listed("…build_corpus.py"),
        "{screen}"
    );
    assert!(!screen.contains("docs/examples/tra "), "{screen}");
    // The selected file's header has the room for its whole path.
    assert!(
        screen.contains("modified docs/examples/train_rnn.py  +5 −4"),
        "{screen}"
    );
    assert!(!screen.contains("downstream/TextSG "), "{screen}");
}

#[test]
fn a_long_path_keeps_its_file_name() {
    use super::text::keep_end;
    assert_eq!(keep_end("train.py", 12), "train.py");
    assert_eq!(
        keep_end("docs/examples/train_rnn.ipynb", 21),
        "…ples/train_rnn.ipynb"
    );
    assert_eq!(keep_end("docs/examples/train_rnn.ipynb", 1), "…");
    assert_eq!(keep_end("docs/examples/train_rnn.ipynb", 0), "");
    // Wide characters count for two columns.
    assert_eq!(keep_end("データ/モデル.py", 10), "…モデル.py");
    assert_eq!(keep_end("データ/モデル.py", 9), "…デル.py");
}

#[test]
fn verdict_and_diff_colours() {
    let theme = Theme::dark();
    let verdict = render(100, 30, PaneId::Verdict, true);
    let text = styled(verdict.backend().buffer());
    let pass = format!("[{:?}/Reset]PASS", theme.colors.pass);
    let fail = format!("[{:?}/Reset]FAIL fidelity_gap", theme.colors.fail);
    assert!(text.contains(&pass), "{text}");
    assert!(text.contains(&fail), "{text}");
    insta::assert_snapshot!("verdict_styled", text);
    let diff = render(120, 30, PaneId::Diff, true);
    let text = styled(diff.backend().buffer());
    assert!(
        text.contains(&format!("{:?}", theme.colors.removed_bg)),
        "no removed background:\n{text}"
    );
    assert!(
        text.contains(&format!("{:?}", theme.colors.added_bg)),
        "no added background:\n{text}"
    );
    insta::assert_snapshot!("diff_styled", text);
}

/// A session on one criterion: phase 1 failed far from the published value, phase 2 ran
/// `phase2` (graded when `graded`), with a reference run beside it.
fn criterion_session(
    criterion: CriterionSpec,
    reference: &[f64],
    phase1: &[f64],
    phase2: &[f64],
    graded: bool,
) -> SessionState {
    let metric = criterion.metric.clone();
    let reduce = |values: &[f64]| crate::metrics::reduce(&points(values), criterion.reduce);
    let result = |values: &[f64]| {
        let value = reduce(values);
        let passed = value.is_some_and(|v| criterion.judge(v).met);
        Verdict {
            failure: (!passed).then_some(FailureClass::FidelityGap),
            criteria: vec![CriterionResult {
                metric: metric.clone(),
                value,
                published: criterion.published,
                tolerance: criterion.tolerance,
                direction: criterion.direction,
                passed,
            }],
            findings: vec![],
            finding_records: vec![],
            verify_confined: Some(true),
            unconfined: None,
        }
    };
    let batch = |phase: u8, values: &[f64]| Event::Metrics {
        phase,
        points: values
            .iter()
            .enumerate()
            .map(|(i, v)| MetricPoint(0, Some(i as f64 + 1.0), *v))
            .collect(),
    };
    let run = |phase: u8| Event::RunStarted {
        phase,
        command: "python train.py".into(),
        cols: 60,
        rows: 10,
        seed_check: false,
    };
    let mut events = vec![
        Event::Task(Box::new(SessionTask {
            id: "task".into(),
            dir: String::new(),
            title: "a task".into(),
            migration: Migration::default(),
            agent: "script:trajectory.jsonl".into(),
            command: "python train.py".into(),
            criteria: vec![criterion.clone()],
            metrics: vec![metric.clone()],
            phase2_details: String::new(),
            reference: vec![ReferenceSeries {
                metric: metric.clone(),
                points: points(reference),
            }],
            upstream: None,
        })),
        Event::Stage(At::Verify(1, Pass::First)),
        run(1),
        batch(1, phase1),
        Event::Graded {
            phase: 1,
            verdict: result(phase1),
            exit_code: Some(0),
            duration_s: 3.0,
        },
        Event::Stage(At::Verify(2, Pass::First)),
        run(2),
        batch(2, phase2),
    ];
    if graded {
        events.push(Event::Graded {
            phase: 2,
            verdict: result(phase2),
            exit_code: Some(0),
            duration_s: 3.0,
        });
    }
    let mut state = SessionState::new();
    for (i, e) in events.iter().enumerate() {
        state.apply(i as f64, e);
    }
    state
}

/// A frame of `state` as `app` shows it on a `width`×`height` screen (dark theme, no diff
/// built), and where everything went.
fn draw_frame(
    state: &SessionState,
    app: &App,
    width: u16,
    height: u16,
) -> (Terminal<TestBackend>, super::layout::FrameLayout) {
    let theme = Theme::dark();
    let (diff, _results) = DiffPane::new(theme.syntax_theme.clone());
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let mut layout = None;
    terminal
        .draw(|f| layout = Some(draw::draw(f, state, app, &diff, &theme)))
        .unwrap();
    (terminal, layout.unwrap())
}

/// The text of the first row of `rect` in `buffer`.
fn row_text(buffer: &Buffer, rect: Rect) -> String {
    (rect.left()..rect.right())
        .map(|x| buffer[(x, rect.y)].symbol())
        .collect()
}

/// The Metrics pane of `state` as the whole screen of `width`×`height` draws it: its text
/// and the buffer.
fn metrics_pane(state: &SessionState, width: u16, height: u16) -> (String, Buffer) {
    let mut app = App::new(true);
    // On a compact screen only the focused pane is drawn whole.
    app.focus = PaneId::Metrics;
    let (terminal, layout) = draw_frame(state, &app, width, height);
    let rect = layout.panes[PaneId::Metrics];
    let buffer = terminal.backend().buffer();
    let mut text = String::new();
    let mut pane = Buffer::empty(rect);
    for y in rect.top()..rect.bottom() {
        for x in rect.left()..rect.right() {
            text.push_str(buffer[(x, y)].symbol());
            pane[(x, y)] = buffer[(x, y)].clone();
        }
        text.push('\n');
    }
    (text, pane)
}

/// Whether the row's cells inside the pane's border have the accepted region's background.
fn shaded_rows(pane: &Buffer) -> Vec<bool> {
    let area = pane.area;
    let bg = Theme::dark().colors.added_bg;
    (area.top() + 1..area.bottom() - 1)
        .map(|y| (area.left() + 8..area.right() - 1).all(|x| pane[(x, y)].bg == bg))
        .collect()
}

fn curve(from: f64, to: f64, steps: usize) -> Vec<f64> {
    (0..steps)
        .map(|i| to + (from - to) * (-(i as f64) / 4.0).exp())
        .collect()
}

#[test]
fn the_metrics_pane_leads_with_the_verdict_for_each_kind_of_criterion() {
    let cases = [
        (
            "higher_last",
            CriterionSpec {
                metric: "test_acc".into(),
                reduce: Reduce::Last,
                published: 0.978,
                tolerance: 0.01,
                direction: Direction::Higher,
                claim: None,
            },
            curve(0.1, 0.98, 30),
            curve(0.1, 0.40, 30),
            curve(0.1, 0.975, 30),
            true,
        ),
        (
            "lower_mean",
            CriterionSpec {
                metric: "val_loss".into(),
                reduce: Reduce::Mean,
                published: 1.88,
                tolerance: 0.05,
                direction: Direction::Lower,
                claim: None,
            },
            curve(1.95, 1.87, 20),
            curve(4.0, 3.2, 20),
            curve(1.99, 1.84, 20),
            false,
        ),
        (
            "within_last",
            CriterionSpec {
                metric: "ece".into(),
                reduce: Reduce::Last,
                published: 0.5,
                tolerance: 0.02,
                direction: Direction::Within,
                claim: None,
            },
            curve(0.9, 0.5, 25),
            curve(0.9, 0.8, 25),
            curve(0.9, 0.45, 25),
            true,
        ),
    ];
    let mut checked = 0;
    for (name, criterion, reference, phase1, phase2, graded) in cases {
        let state = criterion_session(criterion.clone(), &reference, &phase1, &phase2, graded);
        let value = crate::metrics::reduce(&points(&phase2), criterion.reduce).unwrap();
        for (width, height) in [(200, 50), (80, 24)] {
            let (text, pane) = metrics_pane(&state, width, height);
            // The headline gives the criterion's reduced value (a mean is not the last point).
            let headline = text.lines().nth(1).unwrap();
            let shown = crate::ui::panes::fmt_num(value);
            assert!(
                headline.contains(&format!("phase 2: {shown}"))
                    || headline.contains(&format!("p2 {shown}")),
                "{name}:\n{text}"
            );
            // The gauge marks this phase; phase 1 is far outside and clipped at the edge.
            let gauge = text.lines().nth(2).unwrap();
            assert!(gauge.contains('●'), "{name}:\n{text}");
            assert!(
                gauge.contains('◂') || gauge.contains('▸'),
                "{name}:\n{text}"
            );
            if height == 50 {
                let shaded = shaded_rows(&pane);
                let chart = &shaded[3..shaded.len() - 1];
                assert!(chart.iter().any(|s| *s), "{name}: no shaded row:\n{text}");
                match criterion.direction {
                    // One-sided: the accepted side runs to the chart's edge.
                    Direction::Higher => assert!(chart[0], "{name}: {shaded:?}"),
                    Direction::Lower => assert!(chart[chart.len() - 1], "{name}: {shaded:?}"),
                    Direction::Within => {
                        assert!(!chart[0] && !chart[chart.len() - 1], "{name}: {shaded:?}")
                    }
                }
            }
            insta::assert_snapshot!(format!("metrics_{name}_{width}x{height}"), text);
            checked += 1;
        }
    }
    assert_eq!(checked, 6);
}

#[test]
fn help_is_sized_to_its_rows_and_the_screen() {
    let rows: Vec<(&str, &str)> = super::keymap::help_rows()
        .map(|(keys, text, _)| (keys, text))
        .collect();
    let mut checked = 0;
    for (width, height) in [(200, 50), (120, 35), (80, 24)] {
        let mut app = App::new(true);
        app.popup = Some(super::app::Popup::Help(0));
        let (terminal, _) = draw_frame(&session(), &app, width, height);
        let (rect, columns) = draw::help_rect(Rect::new(0, 0, width, height), &rows);
        assert!(rect.right() <= width && rect.bottom() <= height);
        let buffer = terminal.backend().buffer();
        let text: String = (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        if width >= 120 {
            // Every row is there, whole.
            for (_, what) in &rows {
                assert!(text.contains(what), "{width}x{height}: {what}\n{text}");
                checked += 1;
            }
        } else {
            // Too narrow for two columns and too short for one: it scrolls, and says so.
            assert_eq!(columns, 1, "{text}");
            assert!(text.contains("j/k scroll"), "{text}");
        }
    }
    assert_eq!(checked, 2 * rows.len());
}

/// The help, like the key hint, is the key table and the policy's answers: a session key the
/// policy declines now is dimmed, with the policy's reason; the others are as ever.
#[test]
fn help_dims_the_session_keys_the_policy_declines_with_its_reason() {
    // The finished session, with the policy's answers at the end.
    let state = session();
    let reason = "the session has ended: there is no phase two to send details to";
    let mut app = App::new(true);
    app.popup = Some(super::app::Popup::Help(0));
    let (terminal, _) = draw_frame(&state, &app, 200, 50);
    let buffer = terminal.backend().buffer();
    let dim = Theme::dark().colors.dim;
    let row_of = |needle: &str| {
        (0..buffer.area.height)
            .find(|&y| {
                let text: String = (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect();
                text.contains(needle)
            })
            .unwrap_or_else(|| panic!("no row with {needle}"))
    };
    let colours = |y: u16, needle: &str| -> Vec<Color> {
        let text: Vec<&str> = (0..buffer.area.width)
            .map(|x| buffer[(x, y)].symbol())
            .collect();
        let at = text.concat().find(needle).unwrap();
        let column = text.concat()[..at].chars().count() as u16;
        (column..column + needle.chars().count() as u16)
            .map(|x| buffer[(x, y)].fg)
            .collect()
    };
    let inject = row_of(&format!("(not now: {reason})"));
    assert!(
        colours(inject, "inject the phase-two")
            .iter()
            .all(|c| *c == dim)
    );
    let rerun = row_of("re-run verify and grade");
    assert!(!row_text(buffer, Rect::new(0, rerun, 200, 1)).contains("not now"));
    assert!(
        colours(rerun, "re-run verify and grade")
            .iter()
            .all(|c| *c != dim)
    );
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn a_pass_in_phase_one_ends_the_phase_trail_there() {
    let mut state = SessionState::new();
    state.apply(0.0, &Event::Stage(At::Verify(1, Pass::First)));
    let graded = Event::Graded {
        phase: 1,
        verdict: verdict(None, 0.972),
        exit_code: Some(0),
        duration_s: 1.0,
    };
    state.apply(1.0, &graded);
    state.apply(2.0, &Event::Stage(At::Ended(1)));
    let (terminal, layout) = draw_frame(&state, &App::new(true), 120, 30);
    let text = row_text(terminal.backend().buffer(), layout.phase_bar);
    assert_eq!(
        text.trim_end(),
        "setup ▸ migrate 1 ▸ verify 1 ▸ grade 1: PASS ▸ done"
    );
}

/// The session, with phase 1's parity probe: six tensors match, then `h2` diverges.
fn session_with_parity() -> SessionState {
    use crate::parity::{Location, Tensor, Values, compare};
    let tensor = |name: &str, value: f64| Tensor {
        name: name.to_string(),
        shape: vec![2],
        dtype: "float32".to_string(),
        values: Values::Float(vec![value, value]),
        location: Some(Location {
            file: "probe.py".to_string(),
            line: 7,
        }),
    };
    let names = ["t0", "t1", "t2", "t3", "t4", "t5", "h2", "logits"];
    let source: Vec<Tensor> = names.iter().map(|n| tensor(n, 1.0)).collect();
    let port: Vec<Tensor> = names
        .iter()
        .map(|n| {
            tensor(
                n,
                if *n == "h2" || *n == "logits" {
                    1.5
                } else {
                    1.0
                },
            )
        })
        .collect();
    let mut state = session();
    state.apply(
        1.6,
        &Event::Parity {
            phase: 1,
            report: compare(&source, &port, 1e-4, 1e-5),
        },
    );
    state
}

#[test]
fn verdict_lists_the_parity_tensors_with_the_first_divergent_highlighted() {
    let state = session_with_parity();
    let mut checked = 0;
    for (width, height) in [(80, 24), (200, 50)] {
        let terminal = render_state(&state, width, height, PaneId::Verdict, true);
        let buffer = terminal.backend().buffer();
        let rows: Vec<String> = (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect()
            })
            .collect();
        let text = rows.join("\n");
        assert!(
            text.contains("parity: diverges first at h2 (6 of 8 tensors match)"),
            "{text}"
        );
        assert!(text.contains("✓ 4 tensors match: t0 … t3"), "{text}");
        assert!(text.contains("✓ t4"), "{text}");
        assert!(text.contains("✗ logits"), "{text}");
        let (y, row) = rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.contains("▶ ✗ h2"))
            .unwrap_or_else(|| panic!("no highlighted h2:\n{text}"));
        assert!(row.contains("max abs 0.5"), "{row}");
        let x = row.chars().position(|c| c == 'h').unwrap() as u16;
        let cell = &buffer[(x, y as u16)];
        assert!(
            cell.modifier.contains(ratatui::style::Modifier::REVERSED),
            "{:?}",
            cell.modifier
        );
        checked += 1;
    }
    assert_eq!(checked, 2);
}

/// The policy of a step-mode session with an agent, walked to `phase`'s migrate stage (phase
/// 1 failing on the way to phase 2).
fn policy_migrating(phase: u8) -> crate::session::policy::Policy {
    use crate::session::policy::Policy;
    let mut policy = Policy::new(
        crate::event::Mode::Step,
        Some(crate::agent::AgentMode::Interactive),
    );
    policy.done(At::Setup, None);
    policy.on_command(crate::event::Command::Next, false);
    if phase == 2 {
        policy.done(At::Migrate(1), None);
        policy.on_command(crate::event::Command::Next, false);
        policy.done(At::Verify(1, Pass::First), None);
        policy.done(At::Grade(1, Pass::First), Some(false));
        policy.on_command(crate::event::Command::Next, false);
        policy.done(At::Inject, None);
        policy.on_command(crate::event::Command::Next, false);
    }
    assert_eq!(policy.at(), At::Migrate(phase));
    policy
}

#[test]
fn inject_is_offered_only_while_the_details_can_be_edited() {
    let hint_of = |state: &SessionState| {
        let (terminal, layout) = draw_frame(state, &App::new(true), 200, 50);
        row_text(terminal.backend().buffer(), layout.hint)
    };
    let mut phase_one = SessionState::new();
    phase_one.apply(0.0, &Event::Stage(At::Migrate(1)));
    phase_one.apply(
        0.0,
        &Event::Answers {
            answers: policy_migrating(1).answers(false),
        },
    );
    assert!(hint_of(&phase_one).contains("i inject"));
    let criterion = CriterionSpec {
        metric: "test_acc".into(),
        reduce: Reduce::Last,
        published: 0.97,
        tolerance: 0.01,
        direction: Direction::Higher,
        claim: None,
    };
    let mut phase_two = criterion_session(criterion, &[0.9], &[0.5], &[0.96], false);
    let now = phase_two.now;
    phase_two.apply(
        now,
        &Event::Answers {
            answers: policy_migrating(2).answers(true),
        },
    );
    let hint = hint_of(&phase_two);
    assert!(!hint.contains("i inject"), "{hint}");
    assert!(hint.contains("m message"), "{hint}");
}

#[test]
fn an_agent_that_exited_non_zero_is_named_beside_its_graded_work() {
    let mut state = session();
    let now = state.now;
    state.apply(
        now,
        &Event::AgentOutput {
            text: "Error: the model's rate limit was reached\r\n".into(),
        },
    );
    state.apply(now, &Event::AgentExited { code: Some(2) });
    let terminal = render_state(&state, 200, 50, PaneId::Verdict, true);
    let buffer = terminal.backend().buffer();
    let text: String = (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect();
    assert!(
        text.contains("agent exited 2: Error: the model's rate limit was reached"),
        "{text}"
    );
    // An agent that exited 0 gets no such line.
    let terminal = render_state(&session(), 200, 50, PaneId::Verdict, true);
    let buffer = terminal.backend().buffer();
    let clean: String = (0..buffer.area.height)
        .flat_map(|y| (0..buffer.area.width).map(move |x| (x, y)))
        .map(|(x, y)| buffer[(x, y)].symbol().to_string())
        .collect();
    assert!(!clean.contains("agent exited"), "{clean}");
}

/// A session whose migrated `train.py` has 60 lines, one changed at line 3, and whose phase-1
/// parity probe names line 45 of it (folded away in the ordinary diff) as where the port
/// computes its first divergent tensor.
fn session_with_parity_at_a_line() -> SessionState {
    use crate::parity::{Location, Tensor, Values, compare};
    let lines = |changed: &str| -> String {
        (1..=60)
            .map(|i| match i {
                3 => format!("{changed}\n"),
                45 => "def get_batch(split):\n".to_string(),
                _ => format!("line_{i} = {i}\n"),
            })
            .collect()
    };
    let file = |text: String| FileContent {
        path: "train.py".into(),
        size: text.len() as u64,
        text: Some(text),
    };
    let tensor = |value: i128, file: &str, line: u32| Tensor {
        name: "batch.train.distinct_windows".into(),
        shape: vec![],
        dtype: "int64".into(),
        values: Values::Int(vec![value]),
        location: Some(Location {
            file: file.into(),
            line,
        }),
    };
    let mut state = SessionState::new();
    state.apply(
        0.0,
        &Event::Baseline {
            files: vec![file(lines("import torch"))],
        },
    );
    state.apply(
        1.0,
        &Event::FileChanged {
            file: file(lines("import jax")),
            deleted: false,
        },
    );
    state.apply(
        2.0,
        &Event::Parity {
            phase: 1,
            report: compare(
                &[tensor(32, "train.py", 69)],
                &[tensor(4, "train.py", 45)],
                1e-4,
                1e-5,
            ),
        },
    );
    state
}

#[test]
fn enter_in_verdict_opens_the_diff_at_the_line_that_computes_the_first_divergent_tensor() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let state = session_with_parity_at_a_line();
    let theme = Theme::dark();
    let mut checked = 0;
    for (width, height) in [(80u16, 24u16), (200, 50)] {
        let mut app = App::new(true);
        let (mut diff, mut results) = DiffPane::new(theme.syntax_theme.clone());
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        // One turn of the UI loop: the pane takes finished builds, catches up, draws, and the
        // app takes in where the frame put the panes; the screen it drew.
        let mut frame = |app: &mut App, diff: &mut DiffPane| -> Buffer {
            while let Ok(built) = results.try_recv() {
                diff.accept(built);
            }
            diff.update(diff.read(&state, app), app);
            while let Ok(built) = results.try_recv() {
                diff.accept(built);
            }
            diff.update(diff.read(&state, app), app);
            let mut layout = None;
            terminal
                .draw(|f| layout = Some(draw::draw(f, &state, app, diff, &theme)))
                .unwrap();
            app.settle(layout.unwrap().targets(), (0, 0));
            terminal.backend().buffer().clone()
        };
        let text_of = |buffer: &Buffer| -> Vec<String> {
            (0..height)
                .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect())
                .collect()
        };
        // Unmarked, the diff folds the unchanged lines after the change: line 45 is hidden.
        app.focus = PaneId::Diff;
        frame(&mut app, &mut diff);
        let screen = text_of(&frame(&mut app, &mut diff)).join("\n");
        assert!(!screen.contains("def get_batch"), "{screen}");
        assert!(screen.contains("unchanged lines"), "{screen}");

        // Enter in the Verdict pane, as drawn (on a compact screen the Diff pane is then a
        // summary line): the first frame after it already shows the line, and the next
        // keeps it there.
        app.focus = PaneId::Verdict;
        frame(&mut app, &mut diff);
        app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE), &state);
        assert_eq!(app.focus, PaneId::Diff);
        let first = text_of(&frame(&mut app, &mut diff));
        let buffer = frame(&mut app, &mut diff);
        let mark = app.diff_mark.clone().unwrap();
        assert_eq!(
            (mark.path.as_str(), mark.line, mark.scrolled),
            ("train.py", 45, true)
        );
        let rows = text_of(&buffer);
        // (The title says `scrolled` once the scroll is the pane's own.)
        assert_eq!(
            first[1..],
            rows[1..],
            "the line moved between the first two frames"
        );
        let text = rows.join("\n");
        assert!(text.contains("▶ line 45"), "{text}");
        let (y, row) = rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.contains("45▶def get_batch(split):"))
            .unwrap_or_else(|| panic!("line 45 is not in view, marked:\n{text}"));
        // The whole file: nothing folded; the mark a third of the way down, not at the top.
        assert!(!text.contains("unchanged lines"), "{text}");
        assert!(y > 3 && y < usize::from(height) - 2, "row {y}:\n{text}");
        let x = row.chars().position(|c| c == '▶').unwrap() as u16;
        assert!(
            buffer[(x - 1, y as u16)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED),
            "{row}"
        );
        if width == 80 {
            insta::assert_snapshot!("diff_at_the_parity_line_80x24", text);
        }
        // The pane then scrolls freely, and the next file clears the mark.
        let top = app.scroll[PaneId::Diff];
        app.on_key(
            KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE),
            &state,
        );
        frame(&mut app, &mut diff);
        assert_ne!(app.scroll[PaneId::Diff], top);
        app.on_key(
            KeyEvent::new(KeyCode::Char(']'), KeyModifiers::NONE),
            &state,
        );
        assert_eq!(app.diff_mark, None);
        checked += 1;
    }
    assert_eq!(checked, 2);
}

/// A notebook (markdown, then code with its outputs) as JSON, with `import` as its first line.
fn notebook_json(import: &str, outputs: &str) -> String {
    format!(
        r###"{{"cells": [
  {{"cell_type": "markdown", "metadata": {{}}, "source": ["## makemore: part 5\n", "a *WaveNet*"]}},
  {{"cell_type": "code", "execution_count": 1, "metadata": {{}},
   "source": ["{import}\n", "x = 1\n", "print(x)"], "outputs": [{outputs}]}}
 ], "metadata": {{}}, "nbformat": 4, "nbformat_minor": 5}}"###
    )
}

#[test]
fn the_diff_pane_shows_a_notebook_as_its_cells() {
    let source = notebook_json(
        "import torch",
        r#"{"output_type": "stream", "name": "stdout", "text": ["1\n"]},
           {"output_type": "display_data", "metadata": {}, "data": {"image/png": "AA", "text/plain": ["<Figure>"]}}"#,
    );
    let port = notebook_json("import jax", "");
    let file = |text: &str| FileContent {
        path: "part5.ipynb".into(),
        text: Some(text.into()),
        size: text.len() as u64,
    };
    let mut state = SessionState::new();
    let events = [
        Event::Stage(At::Setup),
        Event::Baseline {
            files: vec![file(&source)],
        },
        Event::Stage(At::Migrate(1)),
        Event::Answers {
            answers: policy_migrating(1).answers(false),
        },
        Event::FileChanged {
            file: file(&port),
            deleted: false,
        },
    ];
    for (i, e) in events.iter().enumerate() {
        state.apply(i as f64, e);
    }
    let terminal = render_state(&state, 100, 16, PaneId::Diff, true);
    let buffer = terminal.backend().buffer();
    let rows: Vec<String> = (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    let screen = rows.join("\n");
    // Cells, not JSON: the cell numbers in the gutter, the outputs folded to one line.
    assert!(!screen.contains("cell_type"), "{screen}");
    assert!(screen.contains("0 ── markdown ──"), "{screen}");
    assert!(screen.contains("1 ── code ──"), "{screen}");
    assert!(screen.contains("▸ 2 outputs, 1 image"), "{screen}");
    // The code is coloured as Python; the markdown is not.
    let colour_of = |needle: &str| {
        let y = rows.iter().position(|r| r.contains(needle)).unwrap();
        let x = rows[y].find(needle).unwrap();
        let x = rows[y][..x].chars().count() as u16;
        buffer[(x, y as u16)].fg
    };
    assert_ne!(colour_of("import jax"), Color::Reset, "{screen}");
    assert_eq!(colour_of("## makemore"), Color::Reset, "{screen}");
    insta::assert_snapshot!("diff_notebook_cells", screen);
}

/// Over every stage × whether an agent runs × whether it reads input while it runs: the key
/// hint offers exactly the session keys the policy accepts there; a hidden key pressed is declined with the policy's own reason, and an
/// offered one does what its hint says (`i` and `m` open their editor, the others go to the
/// session).
#[test]
fn the_key_hint_offers_exactly_what_the_policy_accepts() {
    use super::app::Action;
    use super::keymap::{self, Situation};
    use crate::agent::AgentMode;
    use crate::session::policy::Policy;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut checked = 0;
    let policies = Policy::at_every_stage()
        .into_iter()
        .flat_map(|policy| [policy.clone(), policy.with_agent(AgentMode::OneShot)]);
    for policy in policies {
        for agent_running in [false, true] {
            let at = policy.at();
            let answers = policy.answers(agent_running);
            let mut state = SessionState::new();
            state.apply(0.0, &Event::Stage(at));
            if matches!(at, At::Ended(_)) {
                state.apply(
                    0.0,
                    &Event::Finished {
                        passed: false,
                        passed_in_phase: None,
                        exit_code: 1,
                        error: None,
                        interrupted: None,
                    },
                );
            }
            state.apply(
                0.0,
                &Event::Answers {
                    answers: answers.clone(),
                },
            );
            let situation = Situation::of(false, true, state.finished.is_some());
            let (terminal, layout) = draw_frame(&state, &App::new(true), 200, 50);
            let hint = row_text(terminal.backend().buffer(), layout.hint);
            let offered: Vec<&str> = hint
                .split(" · ")
                .filter_map(|entry| entry.split_whitespace().next())
                .collect();
            for (keys, _, action) in keymap::hints(situation) {
                let Some(command) = action.command() else {
                    continue;
                };
                let answer = answers.iter().find(|a| a.command == command).unwrap();
                assert_eq!(
                    offered.contains(&keys),
                    answer.declined.is_none(),
                    "{at:?} running={agent_running}: `{keys}` in `{hint}` against {answer:?}"
                );
                // Pressing it.
                let key = keys.chars().next().unwrap();
                let mut app = App::new(true);
                let actions = app.on_key(
                    KeyEvent::new(KeyCode::Char(key), KeyModifiers::NONE),
                    &state,
                );
                let notice = app.notice.as_ref().map(|n| n.text.clone());
                match (&answer.declined, key) {
                    (Some(reason), 'i' | 'm') => {
                        assert!(app.popup.is_none());
                        assert_eq!(notice, Some(format!("{key}: not now: {reason}")));
                    }
                    (None, 'i' | 'm') => assert!(app.popup.is_some(), "{at:?} `{key}`"),
                    // The abort asks first.
                    (_, 'x') => assert!(app.popup.is_some()),
                    // The others go to the session, whose policy declines (with the reason
                    // above) or carries them out.
                    _ => assert!(
                        matches!(actions[..], [Action::Send(ref c)] if *c == command.command()),
                        "{at:?} `{key}`: {actions:?}"
                    ),
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 13 * 2 * 2 * 5, "{checked}");
}

/// The seed check's run is recorded as its own series, and the Metrics pane's legend gives
/// its value beside the phase's (so a replay shows why a seed check failed).
#[test]
fn the_metrics_pane_gives_the_seed_checks_value() {
    let criterion = CriterionSpec {
        metric: "test_acc".into(),
        reduce: Reduce::Last,
        published: 0.97,
        tolerance: 0.01,
        direction: Direction::Higher,
        claim: None,
    };
    let mut state = criterion_session(criterion, &[0.9], &[0.5], &[0.96], false);
    let now = state.now;
    // The session's one metric is index 0.
    let index = 0;
    state.apply(
        now,
        &Event::RunStarted {
            phase: 2,
            command: "python train.py".into(),
            cols: 80,
            rows: 24,
            seed_check: true,
        },
    );
    state.apply(
        now,
        &Event::SeedCheckMetrics {
            phase: 2,
            points: vec![MetricPoint(index, Some(1.0), 0.9612)],
        },
    );
    let series = &state.phase(2).unwrap().seed_check_metrics["test_acc"];
    assert_eq!(series.reduce(Reduce::Last), Some(0.9612));
    // The phase's own series is untouched.
    assert_eq!(
        state.phase(2).unwrap().metrics["test_acc"].reduce(Reduce::Last),
        Some(0.96)
    );
    let (screen, _) = metrics_pane(&state, 200, 50);
    assert!(screen.contains("◌ seed 0.9612"), "{screen}");
}

/// A pane's key is offered only while it does something: `a` while an agent runs, Enter in
/// the Verdict pane once a finding names a file of the run.
#[test]
fn a_panes_key_is_offered_only_when_it_does_something() {
    let hint_of = |state: &SessionState| {
        let (terminal, layout) = draw_frame(state, &App::new(true), 200, 50);
        row_text(terminal.backend().buffer(), layout.hint)
    };
    let ended = |mut state: SessionState| {
        let t = state.now;
        state.apply(
            t,
            &Event::Finished {
                passed: false,
                passed_in_phase: None,
                exit_code: 1,
                error: None,
                interrupted: None,
            },
        );
        state
    };
    let mut running = SessionState::new();
    running.apply(0.0, &Event::Stage(At::Migrate(1)));
    assert!(!hint_of(&running).contains("a attach"));
    running.apply(
        1.0,
        &Event::AgentStarted {
            phase: 1,
            command: "agent".into(),
            cols: 80,
            rows: 24,
        },
    );
    assert!(
        hint_of(&running).contains("a attach"),
        "{}",
        hint_of(&running)
    );

    // The finished session's findings name no file; the parity probe's names train.py.
    let hint = hint_of(&session());
    assert!(!hint.contains("Enter finding→diff"), "{hint}");
    let hint = hint_of(&ended(session_with_parity_at_a_line()));
    assert!(hint.contains("Enter finding→diff"), "{hint}");
}

/// A criterion printed once (a final loss, no curve): the chart draws no range of steps
/// and the pane compares the final value with the reference's instead of naming a step
/// where the run leaves it.
#[test]
fn a_final_value_printed_once_has_no_step_axis() {
    let criterion = CriterionSpec {
        metric: "final_loss".into(),
        reduce: Reduce::Last,
        published: 0.5,
        tolerance: 0.02,
        direction: Direction::Lower,
        claim: None,
    };
    let state = criterion_session(criterion, &[0.501], &[0.8], &[0.56], true);
    for (width, height) in [(200, 50), (80, 24)] {
        let (text, _) = metrics_pane(&state, width, height);
        assert!(!text.contains("leaves the reference at step"), "{text}");
        assert!(
            text.contains("final value 0.56 is outside the reference's 0.501 ± 0.02"),
            "{text}"
        );
        // The row under the chart names the value, with no step numbers.
        let lines: Vec<&str> = text.lines().collect();
        let axis = lines[lines.len() - 2];
        assert!(axis.contains("final value"), "{text}");
        assert!(!axis.chars().any(|c| c.is_ascii_digit()), "{text}");
        insta::assert_snapshot!(format!("metrics_final_value_{width}x{height}"), text);
    }
}

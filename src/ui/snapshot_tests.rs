//! Snapshots of the whole screen and of single panes, drawn from fixed event sequences on a
//! `TestBackend`; the styled Verdict and Diff panes where colour carries meaning.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

use crate::event::{Event, FileContent, MetricPoint, Mode, ReferenceSeries, SessionTask, Stage};
use crate::grade::{CriterionResult, FailureClass, Verdict};
use crate::metrics::Point;
use crate::session::state::SessionState;
use crate::task::{CriterionSpec, Direction, Reduce};

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
                "test_acc (last) = {value} is outside the criterion >= 0.97 - 0.01"
            )]
        } else {
            vec![]
        },
        finding_records: vec![],
        verify_confined: Some(true),
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
    let mut events = vec![
        Event::Task(Box::new(SessionTask {
            id: "digits-mlp".into(),
            dir: String::new(),
            title: "MLP on digits".into(),
            agent: "script:trajectory.jsonl".into(),
            command: "python train.py".into(),
            criteria: vec![CriterionSpec {
                metric: "test_acc".into(),
                reduce: Reduce::Last,
                published: 0.97,
                tolerance: 0.01,
                direction: Direction::Higher,
            }],
            metrics: vec!["test_acc".into()],
            phase2_details: "Adam, learning rate 1e-3".into(),
            reference: vec![ReferenceSeries { metric: "test_acc".into(), points: points(&[0.90, 0.95, 0.97]) }],
        })),
        Event::Mode { mode: Mode::Auto },
        Event::Stage { phase: 0, stage: Stage::Setup },
        Event::Baseline { files: vec![FileContent { path: "train.py".into(), text: Some(TORCH.into()), size: 1 }] },
        Event::Stage { phase: 1, stage: Stage::Migrate },
        Event::AgentStarted { phase: 1, command: "agent".into(), cols: 60, rows: 10 },
        Event::AgentOutput { text: "[xstack scripted agent] replaying\r\nPorting train.py to JAX.\r\nwrote train.py\r\n".into() },
        Event::FileChanged { file: FileContent { path: "train.py".into(), text: Some(JAX.into()), size: 1 }, deleted: false },
        Event::AgentExited { code: Some(0) },
        Event::Stage { phase: 1, stage: Stage::Verify },
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
        Event::Stage {
            phase: 2,
            stage: Stage::Migrate,
        },
        Event::Stage {
            phase: 2,
            stage: Stage::Verify,
        },
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
        Event::Finished {
            passed: true,
            passed_in_phase: Some(2),
            exit_code: 0,
            error: None,
            interrupted: None,
        },
    ]);
    let mut state = SessionState::new();
    for (i, e) in events.iter().enumerate() {
        state.apply(i as f64 * 0.5, e);
    }
    state
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
    diff.update(state, &mut app);
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
    insta::assert_snapshot!(render(80, 24, PaneId::Agent, false).backend());
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

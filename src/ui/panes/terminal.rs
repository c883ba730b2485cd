//! The Agent and Run log panes: a terminal's rows, copied into the scene under the state's
//! lock ([`TerminalView`]), drawn; the Agent pane shows the prompts and the agent's
//! transcript instead on `t`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use tui_term::widget::{Cursor, PseudoTerminal};

use crate::event::Stage;

use super::super::app::PaneId;
use super::super::keymap::KeyAction;
use super::super::scene::{Scene, TerminalView};
use super::{Pane, PaneContext, PaneKey, Summary};

/// The Agent pane: the agent's terminal, or its prompts and transcript (`t`).
pub struct AgentPane;

/// The Run log pane: the verify run's terminal.
pub struct RunLogPane;

impl Pane for AgentPane {
    fn keys(&self, cx: &PaneContext<'_>) -> Vec<PaneKey> {
        vec![
            PaneKey {
                action: KeyAction::Attach,
                enabled: cx.scene.agent_running,
            },
            PaneKey {
                action: KeyAction::ToggleTranscript,
                enabled: true,
            },
        ]
    }

    fn title_note(&self, cx: &PaneContext<'_>) -> Option<String> {
        if cx.view.attached {
            Some("attached: Ctrl-] detaches".to_string())
        } else if cx.scene.paused {
            Some("PAUSED".to_string())
        } else if cx.view.agent_transcript {
            Some("prompts and transcript (t: terminal)".to_string())
        } else {
            agent_checked(cx.scene)
        }
    }

    fn draw(&self, frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, cx: &PaneContext<'_>) {
        if cx.view.agent_transcript {
            let scroll = cx.view.scroll[PaneId::Agent];
            super::transcript(frame, rect, block, cx.scene, scroll, cx.theme);
            return;
        }
        let placeholder = (placeholder(PaneId::Agent, cx.scene), cx.theme.colors.dim);
        terminal(
            frame,
            rect,
            block,
            &cx.scene.agent,
            !cx.view.attached,
            placeholder,
        );
    }

    fn summary<'a>(&'a self, cx: &PaneContext<'a>) -> Summary<'a> {
        terminal_summary(PaneId::Agent, &cx.scene.agent, cx)
    }
}

impl Pane for RunLogPane {
    /// Which run is on screen: `· phase 1 · parity probe (source)`.
    fn title_note(&self, cx: &PaneContext<'_>) -> Option<String> {
        cx.scene.run_shown.map(|shown| format!("· {shown}"))
    }

    fn draw(&self, frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, cx: &PaneContext<'_>) {
        let placeholder = (placeholder(PaneId::RunLog, cx.scene), cx.theme.colors.dim);
        terminal(frame, rect, block, &cx.scene.run, true, placeholder);
    }

    /// The latest row, after the run it belongs to when that is not the graded verify run
    /// (`parity probe (source): Test Accuracy: 0.1130`).
    fn summary<'a>(&'a self, cx: &PaneContext<'a>) -> Summary<'a> {
        match terminal_summary(PaneId::RunLog, &cx.scene.run, cx) {
            Summary::Terminal(rows) => match cx.scene.run_shown.filter(|s| !s.is_verify()) {
                Some(shown) => Summary::After(format!("{}: ", shown.what()), rows),
                None => Summary::Terminal(rows),
            },
            line => line,
        }
    }
}

/// A terminal pane's summary: its latest row that holds text, or while it is blank its
/// placeholder.
fn terminal_summary<'a>(pane: PaneId, rows: &'a TerminalView, cx: &PaneContext<'a>) -> Summary<'a> {
    if !rows.is_blank() {
        return Summary::Terminal(rows);
    }
    Summary::Line(Line::from(Span::styled(
        placeholder(pane, cx.scene).unwrap_or_default(),
        Style::default().fg(cx.theme.colors.dim),
    )))
}

/// What a blank terminal pane says instead: while the session works on what the pane will
/// show, what it is doing and for how long; otherwise when the pane will fill.
fn placeholder(pane: PaneId, scene: &Scene) -> Option<String> {
    let busy = match pane {
        PaneId::Agent => matches!(scene.at.step().1, Stage::Setup | Stage::Migrate),
        _ => scene.at.step().1 == Stage::Setup || scene.run_running || scene.queued.is_some(),
    };
    if scene.finished.is_none() && busy {
        return scene.activity_line();
    }
    match pane {
        PaneId::RunLog if scene.phases.iter().all(|p| p.verdict.is_none()) => {
            Some("no run yet: the experiment runs here when a phase is verified".to_string())
        }
        PaneId::Agent if !scene.agent_running && scene.finished.is_none() => {
            Some("the agent's terminal shows here while it works".to_string())
        }
        _ => None,
    }
}

/// What the agent has run in the current phase's turn (docs/CHECKS.md), once it has had a
/// turn: `ran train.py 3× · last val_loss 1.91 ✓ · source 1×`, and how many of its tool
/// calls failed, with the first error, when some did.
fn agent_checked(state: &Scene) -> Option<String> {
    let record = state
        .phases
        .get(usize::from(state.at.step().0.checked_sub(1)?))?;
    record.prompt.as_ref()?;
    let mut line = crate::checks::Checked::line(&record.agent_runs, state.now);
    if let Some(failed) = record.tools().line() {
        line.push_str(" · ");
        line.push_str(&failed);
    }
    Some(line)
}

/// A terminal pane: the copied rows, with the cursor unless `hide_cursor` (or the copy says
/// the terminal hides it or is scrolled back); while the terminal is blank, `placeholder`
/// (what the session is doing) in `dim` instead, so an empty pane never looks hung.
pub fn terminal(
    frame: &mut Frame<'_>,
    rect: Rect,
    block: Block<'_>,
    view: &TerminalView,
    hide_cursor: bool,
    (placeholder, dim): (Option<String>, Color),
) {
    if view.is_blank()
        && let Some(line) = placeholder
    {
        let paragraph = Paragraph::new(line)
            .style(Style::default().fg(dim))
            .wrap(Wrap { trim: false })
            .block(block);
        frame.render_widget(paragraph, rect);
        return;
    }
    let mut cursor = Cursor::default();
    if hide_cursor || tui_term::widget::Screen::hide_cursor(view) {
        cursor.hide();
    }
    let widget = PseudoTerminal::new(view).block(block).cursor(cursor);
    frame.render_widget(widget, rect);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pty::screen::Screen;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::widgets::Borders;

    #[test]
    fn a_terminal_taller_than_its_pane_shows_its_latest_rows() {
        let mut screen = Screen::new(40, 36);
        let text: String = (0..30).map(|i| format!("line {i}\r\n")).collect();
        screen.process(&text);
        let mut terminal = Terminal::new(TestBackend::new(40, 12)).unwrap();
        terminal.draw(|f| terminal_pane(f, &screen)).unwrap();
        let shown = format!("{}", terminal.backend());
        assert!(shown.contains("line 29"), "{shown}");
        assert!(!shown.contains("line 0 "), "{shown}");
        // A pane tall enough shows the screen from its top.
        let mut terminal = Terminal::new(TestBackend::new(40, 40)).unwrap();
        terminal.draw(|f| terminal_pane(f, &screen)).unwrap();
        let shown = format!("{}", terminal.backend());
        assert!(shown.contains("line 0 "), "{shown}");
    }

    fn terminal_pane(f: &mut Frame<'_>, screen: &Screen) {
        let area = f.area();
        let block = Block::default().borders(Borders::ALL);
        let inner = block.inner(area);
        let view = TerminalView::capture(screen, 0, inner.width, inner.height);
        terminal(f, area, block, &view, true, (None, Color::Reset));
    }
}

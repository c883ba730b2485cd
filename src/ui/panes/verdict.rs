//! The Verdict pane: the outcome, then each graded phase, newest first.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use crate::agent::transcript::first_line;
use crate::grade::{CriterionResult, Verdict};
use crate::parity::ParityReport;
use crate::session::state::PhaseRecord;

use super::super::app::PaneId;
use super::super::keymap::KeyAction;
use super::super::scene::Scene;
use super::super::theme::Theme;
use super::{Pane, PaneContext, PaneKey, Summary, fmt_num};

/// The Verdict pane's lines: the outcome first, then each graded phase, newest first.
pub fn verdict_lines<'a>(state: &Scene, theme: &Theme) -> Vec<Line<'a>> {
    let mut lines = outcome_lines(state, theme);
    // Where each published number comes from is said once, under the newest graded phase;
    // that verify was not confined, once, under the newest phase it was not in.
    let newest = state.phases.iter().rposition(|p| p.verdict.is_some());
    let unconfined: Vec<usize> = state
        .phases
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.verdict
                .as_ref()
                .is_some_and(|v| v.verify_confined == Some(false))
        })
        .map(|(i, _)| i)
        .collect();
    for (i, record) in state.phases.iter().enumerate().rev() {
        let Some(verdict) = &record.verdict else {
            not_graded_lines(i, record, theme, &mut lines);
            continue;
        };
        phase_heading(i, record, verdict, theme, &mut lines);
        for cr in &verdict.criteria {
            criterion_lines(state, cr, newest == Some(i), theme, &mut lines);
        }
        for f in &verdict.findings {
            lines.push(Line::from(Span::styled(
                format!("  • {f}"),
                Style::default().fg(theme.colors.text),
            )));
        }
        if unconfined.last() == Some(&i) {
            unconfined_lines(
                &unconfined,
                verdict.unconfined.as_deref(),
                theme,
                &mut lines,
            );
        }
        if let Some(report) = &record.parity {
            parity_lines(report, theme, &mut lines);
        }
        agent_lines(record, theme, &mut lines);
    }
    lines
}

/// The outcome of a finished session, and that no phase was graded yet where none was.
fn outcome_lines<'a>(state: &Scene, theme: &Theme) -> Vec<Line<'a>> {
    let c = &theme.colors;
    let mut lines = Vec::new();
    if let Some(f) = &state.finished {
        let (text, color) = match (&f.error, f.passed_in_phase) {
            (Some(e), _) => (format!("ended: {e}"), c.fail),
            (None, Some(p)) => (format!("PASSED in phase {p}"), c.pass),
            _ => ("FAILED".to_string(), c.fail),
        };
        lines.push(Line::from(Span::styled(
            text,
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        )));
    }
    if state
        .phases
        .iter()
        .all(|p| p.verdict.is_none() && p.outcome.is_none())
    {
        lines.push(Line::from(Span::styled(
            "no phase graded yet",
            Style::default().fg(c.dim),
        )));
    }
    lines
}

/// A phase (index `i`) with no verdict on the port but an outcome: whose failure it was,
/// and its detail.
fn not_graded_lines<'a>(i: usize, record: &PhaseRecord, theme: &Theme, lines: &mut Vec<Line<'a>>) {
    let c = &theme.colors;
    let Some((outcome, detail)) = &record.outcome else {
        return;
    };
    // Not a verdict on the port: say whose failure it was instead.
    lines.push(Line::from(vec![
        Span::styled(
            format!("Phase {}  ", i + 1),
            Style::default().fg(c.title).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!("NOT GRADED {}", outcome.as_str()),
            Style::default().fg(c.fail).add_modifier(Modifier::BOLD),
        ),
    ]));
    if let Some(detail) = detail {
        lines.push(Line::from(Span::styled(
            format!("  • {detail}"),
            Style::default().fg(c.text),
        )));
    }
}

/// The heading of a graded phase (index `i`): its verdict, how long its run took, how it
/// exited.
fn phase_heading<'a>(
    i: usize,
    record: &PhaseRecord,
    verdict: &Verdict,
    theme: &Theme,
    lines: &mut Vec<Line<'a>>,
) {
    let c = &theme.colors;
    let color = if verdict.passed() { c.pass } else { c.fail };
    let exit = record
        .exit_code
        .map_or_else(|| "killed".to_string(), |e| format!("exit {e}"));
    lines.push(Line::from(vec![
        Span::styled(
            format!("Phase {}  ", i + 1),
            Style::default().fg(c.title).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            verdict.label(),
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!("   run {:.1} s, {exit}", record.duration_s),
            Style::default().fg(c.dim),
        ),
    ]));
}

/// One graded criterion: its value against the published one, and (with `with_claim`)
/// where the published number comes from.
fn criterion_lines<'a>(
    state: &Scene,
    cr: &CriterionResult,
    with_claim: bool,
    theme: &Theme,
    lines: &mut Vec<Line<'a>>,
) {
    let c = &theme.colors;
    let value = cr.value.map_or_else(|| "missing".to_string(), fmt_num);
    let margin = cr.margin().map_or_else(String::new, |m| {
        format!("  margin {}{}", if m >= 0.0 { "+" } else { "" }, fmt_num(m))
    });
    lines.push(Line::from(vec![
        Span::styled(
            if cr.passed { "  ✓ " } else { "  ✗ " },
            Style::default().fg(if cr.passed { c.pass } else { c.fail }),
        ),
        Span::styled(
            format!("{} = {value}", cr.metric),
            Style::default().fg(c.text),
        ),
        Span::styled(
            format!(
                "  {}{margin}",
                cr.direction
                    .published_words(cr.published, cr.tolerance, fmt_num)
            ),
            Style::default().fg(c.dim),
        ),
    ]));
    // Where the published number comes from, and whether it was reproduced here.
    let claim = state
        .task
        .criteria
        .iter()
        .find(|spec| spec.metric == cr.metric)
        .and_then(|spec| spec.claim.as_ref())
        .filter(|_| with_claim);
    if let Some(claim) = claim {
        lines.push(Line::from(Span::styled(
            format!("    published: {}", claim.describe()),
            Style::default().fg(c.dim),
        )));
    }
}

/// What the agent of a graded phase said of itself: its failed exit, its failed tools, its
/// claim or reported error.
fn agent_lines<'a>(record: &PhaseRecord, theme: &Theme, lines: &mut Vec<Line<'a>>) {
    let c = &theme.colors;
    if let (Some(code), Some(error)) = (record.agent_exit_code, &record.agent_error) {
        // Its work was graded, but the agent itself failed: say so beside the verdict.
        lines.push(Line::from(Span::styled(
            format!("  agent exited {code}: {}", first_line(error)),
            Style::default().fg(c.fail),
        )));
    }
    if let Some(failed) = record.tools().line() {
        // The agent's own tools failing says why its port may be what it is.
        lines.push(Line::from(Span::styled(
            format!("  agent's tools: {failed}"),
            Style::default().fg(c.fail),
        )));
    }
    if let Some((text, success)) = record.claim() {
        lines.push(Line::from(vec![
            Span::styled(
                if success {
                    "  agent's claim: "
                } else {
                    "  agent reported an error: "
                },
                Style::default().fg(c.dim),
            ),
            Span::styled(
                format!("\"{}\"", first_line(text)),
                Style::default().fg(c.text),
            ),
        ]));
    }
}

/// That verify was not confined in the phases `unconfined` (indices), said once: why, and
/// what would confine it (`reason`, the runner's; absent from older journals).
fn unconfined_lines<'a>(
    unconfined: &[usize],
    reason: Option<&str>,
    theme: &Theme,
    lines: &mut Vec<Line<'a>>,
) {
    let c = &theme.colors;
    let numbers: Vec<String> = unconfined.iter().map(|i| (i + 1).to_string()).collect();
    let phases = match numbers.as_slice() {
        [one] => format!("phase {one}"),
        [rest @ .., last] => format!("phases {} and {last}", rest.join(", ")),
        [] => return,
    };
    lines.push(Line::from(Span::styled(
        format!("  ! verify was not confined in {phases}: the run could see this machine"),
        Style::default().fg(c.fail),
    )));
    lines.push(Line::from(Span::styled(
        format!("    {}", reason.unwrap_or("why: see the Run log")),
        Style::default().fg(c.text),
    )));
}

/// How many matching tensors the Verdict pane lists one by one before the first divergent.
const KEPT_BEFORE_FIRST: usize = 2;

/// The parity probe's lines of a phase: what it found, then every tensor in the source's
/// order (✓ or ✗, shape, dtype, errors), the first divergent one marked and highlighted;
/// the matching ones well before it folded into one line.
fn parity_lines<'a>(report: &ParityReport, theme: &Theme, lines: &mut Vec<Line<'a>>) {
    let c = &theme.colors;
    let color = if report.error.is_some() || report.first_divergent.is_some() {
        c.fail
    } else {
        c.pass
    };
    lines.push(Line::from(vec![
        Span::styled("  parity: ", Style::default().fg(c.title)),
        Span::styled(report.headline(), Style::default().fg(color)),
    ]));
    let rows = report.rows();
    let width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    // The tensors that match before the first divergent one, but the two nearest it, are
    // one line: the first divergent one stays near the top of a small pane.
    let leading = rows.iter().position(|r| r.first).unwrap_or(0);
    let folded = leading.saturating_sub(KEPT_BEFORE_FIRST);
    if folded > 1 {
        lines.push(Line::from(vec![
            Span::styled("    ✓ ", Style::default().fg(c.pass)),
            Span::styled(
                format!(
                    "{folded} tensors match: {} … {}",
                    rows[0].name,
                    rows[folded - 1].name
                ),
                Style::default().fg(c.dim),
            ),
        ]));
    }
    let shown = if folded > 1 { folded } else { 0 };
    for row in &rows[shown..] {
        let (mark, mark_color) = if row.passed {
            ("✓", c.pass)
        } else {
            ("✗", c.fail)
        };
        let mut name_style = Style::default().fg(if row.first { c.fail } else { c.text });
        if row.first {
            name_style = name_style.add_modifier(Modifier::BOLD | Modifier::REVERSED);
        }
        let errors = row
            .errors
            .as_ref()
            .map_or_else(String::new, |e| format!("  {e}"));
        let mut spans = vec![
            Span::styled(
                if row.first { "  ▶ " } else { "    " },
                Style::default().fg(c.fail),
            ),
            Span::styled(format!("{mark} "), Style::default().fg(mark_color)),
            Span::styled(format!("{:width$}", row.name), name_style),
            Span::styled(
                format!("  {}{errors}", row.shape),
                Style::default().fg(c.dim),
            ),
        ];
        if let Some(problem) = row.problem {
            spans.push(Span::styled(
                format!("  {problem}"),
                Style::default().fg(c.text),
            ));
        }
        if let Some(at) = &row.port_at {
            spans.push(Span::styled(
                format!("  ({at})"),
                Style::default().fg(c.dim),
            ));
        }
        lines.push(Line::from(spans));
    }
    if let Some(extra) = report.also_recorded() {
        lines.push(Line::from(Span::styled(
            format!("    {extra}"),
            Style::default().fg(c.dim),
        )));
    }
}

/// The Verdict pane: its lines wrapped, scrolled down as the view says.
pub struct VerdictPane;

impl Pane for VerdictPane {
    /// The direction graded: the findings name its frameworks.
    fn title_note(&self, cx: &PaneContext<'_>) -> Option<String> {
        Some(format!("{} ", cx.scene.task.migration.label()))
    }

    fn keys(&self, cx: &PaneContext<'_>) -> Vec<PaneKey> {
        vec![PaneKey {
            action: KeyAction::OpenFinding,
            enabled: cx.scene.finding_files > 0,
        }]
    }

    fn draw(&self, frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, cx: &PaneContext<'_>) {
        let width = block.inner(rect).width;
        let lines = super::wrap_hanging(verdict_lines(cx.scene, cx.theme), width);
        let scroll = cx.view.scroll[PaneId::Verdict];
        let top = scroll.min(lines.len().saturating_sub(1));
        frame.render_widget(
            Paragraph::new(lines).block(block).scroll((top as u16, 0)),
            rect,
        );
    }

    /// The outcome, or the newest phase's first line.
    fn summary<'a>(&'a self, cx: &PaneContext<'a>) -> Summary<'a> {
        Summary::Line(
            verdict_lines(cx.scene, cx.theme)
                .into_iter()
                .next()
                .unwrap_or_default(),
        )
    }
}

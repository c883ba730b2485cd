//! The Metrics pane, which leads with the verdict: per criterion a headline (the criterion's
//! rule and this phase's reduced value, ✓ or ✗), a one-line gauge of the accepted region with
//! the published value, this phase's, the reference's and the previous phase's reduced values,
//! a legend line, and where the rows allow a chart whose y-range shows the accepted region and
//! the current phase (outliers clipped to the edge and counted), the accepted region shaded
//! (one-sided for `higher`/`lower`), the reduced value drawn as what it is, and ticks that
//! scale with the height. Where the run leaves the reference is said in words. A metric
//! printed once (a final value, no curve) has no step axis: its chart is a column of values
//! and its words compare the final value with the reference's.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Context, Line as Segment};
use ratatui::widgets::{Block, Paragraph};

use crate::metrics::{self, Point};
use crate::task::{CriterionSpec, Reduce};

use super::super::scene::Scene;
use super::super::theme::Theme;
use super::{Pane, PaneContext, Summary, fmt_num};

/// Rows a chart needs to be worth drawing (plot and its x labels).
const CHART_MIN_ROWS: u16 = 4;

/// One criterion as the pane shows it: the values that decide it and the curves behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionView {
    /// The criterion.
    pub criterion: CriterionSpec,
    /// The phase whose run is shown (the latest with points of this metric).
    pub phase: Option<u8>,
    /// This phase's points (step, value).
    pub current: Vec<(f64, f64)>,
    /// The phase before it, when there is one.
    pub previous: Vec<(f64, f64)>,
    /// The reference run's points.
    pub reference: Vec<(f64, f64)>,
    /// This phase's value as the criterion reduces it: the grader's once graded.
    pub value: Option<f64>,
    /// The previous phase's reduced value.
    pub previous_value: Option<f64>,
    /// The reference's reduced value.
    pub reference_value: Option<f64>,
    /// The grader's word on this criterion in this phase, once graded.
    pub passed: Option<bool>,
    /// Where this phase's run left the reference band for good (step, value), unless the
    /// phase passed.
    pub diverged: Option<(f64, f64)>,
    /// The value the agent's own latest run of its port printed (docs/CHECKS.md).
    pub agent_value: Option<f64>,
    /// The value of the phase's seed check run (`[integrity] seed_check`), when it had one.
    pub seed_check_value: Option<f64>,
}

impl CriterionView {
    /// The view of `criterion` in `scene`.
    pub fn of(criterion: &CriterionSpec, scene: &Scene) -> CriterionView {
        let metric = criterion.metric.as_str();
        let phase = (1..=scene.phases.len() as u8).rev().find(|p| {
            scene
                .phase(*p)
                .is_some_and(|r| r.metrics.get(metric).is_some_and(|s| !s.is_empty()))
        });
        let record = phase.and_then(|p| scene.phase(p));
        let series = record.and_then(|r| r.metrics.get(metric));
        let graded = record
            .and_then(|r| r.verdict.as_ref())
            .and_then(|v| v.criteria.iter().find(|c| c.metric == metric));
        let previous_record = phase.filter(|p| *p > 1).and_then(|p| scene.phase(p - 1));
        let previous_series = previous_record.and_then(|r| r.metrics.get(metric));
        let previous_graded = previous_record
            .and_then(|r| r.verdict.as_ref())
            .and_then(|v| v.criteria.iter().find(|c| c.metric == metric));
        let reference_points: &[Point] = scene
            .task
            .reference
            .iter()
            .find(|r| r.metric == metric)
            .map_or(&[], |r| r.points.as_slice());
        let passed = graded.map(|c| c.passed);
        CriterionView {
            criterion: criterion.clone(),
            phase,
            current: series.map(|s| to_xy(s.points())).unwrap_or_default(),
            previous: previous_series
                .map(|s| to_xy(s.points()))
                .unwrap_or_default(),
            reference: to_xy(reference_points.iter()),
            value: graded
                .and_then(|c| c.value)
                .or_else(|| series.and_then(|s| s.reduce(criterion.reduce))),
            previous_value: previous_graded
                .and_then(|c| c.value)
                .or_else(|| previous_series.and_then(|s| s.reduce(criterion.reduce))),
            reference_value: metrics::reduce(reference_points, criterion.reduce),
            passed,
            diverged: record
                .filter(|_| passed != Some(true))
                .and_then(|r| r.divergence.get(metric))
                .and_then(|d| d.left_at),
            agent_value: agent_value(scene, metric),
            seed_check_value: record
                .and_then(|r| r.seed_check_metrics.get(metric))
                .and_then(|s| s.reduce(criterion.reduce)),
        }
    }

    /// The accepted region `[low, high]` (infinite on the open side of `higher`/`lower`).
    pub fn accepted(&self) -> (f64, f64) {
        self.criterion.edges()
    }

    /// Whether `value` meets the criterion ([`CriterionSpec::judge`]).
    pub fn accepts(&self, value: f64) -> bool {
        self.criterion.judge(value).met
    }

    /// The value range the gauge and the chart show: the tolerance band around the published
    /// value with as much room again, widened to this phase's reduced value, the reference's
    /// and the later half of this phase's curve. The previous phase and the early part of
    /// the curve are clipped to the edge rather than squeezing the band to a row.
    pub fn range(&self) -> (f64, f64) {
        let (p, t) = (self.criterion.published, self.criterion.tolerance);
        let room = (2.0 * t).max(p.abs() * 0.01).max(1e-6);
        let (mut low, mut high) = (p - t - room / 2.0, p + t + room / 2.0);
        let tail = &self.current[self.current.len() / 2..];
        let shown = tail
            .iter()
            .map(|(_, y)| *y)
            .chain(self.value)
            .chain(self.reference_value)
            .filter(|v| v.is_finite());
        let (mut data_low, mut data_high) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in shown {
            data_low = data_low.min(v);
            data_high = data_high.max(v);
        }
        if data_low.is_finite() {
            let pad = (data_high.max(high) - data_low.min(low)) * 0.05;
            // Padding never carries the axis across 0 or 1 when the data and band do not.
            let bound_low = if data_low >= 0.0 && low >= 0.0 {
                0.0
            } else {
                f64::NEG_INFINITY
            };
            let bound_high = if data_high <= 1.0 && high <= 1.0 {
                1.0
            } else {
                f64::INFINITY
            };
            low = low.min(data_low - pad).max(bound_low.min(data_low));
            high = high.max(data_high + pad).min(bound_high.max(data_high));
        }
        (low, high)
    }

    /// How many points of the chart's series fall outside `range`, below and above.
    pub fn clipped(&self, (low, high): (f64, f64)) -> (usize, usize) {
        let all = self
            .current
            .iter()
            .chain(&self.previous)
            .chain(&self.reference);
        all.fold((0, 0), |(below, above), (_, y)| {
            (
                below + usize::from(*y < low),
                above + usize::from(*y > high),
            )
        })
    }

    /// Whether every series has at most one point: a final value printed once, with no
    /// curve to draw along steps.
    pub fn is_final_value(&self) -> bool {
        let series = [&self.current, &self.previous, &self.reference];
        series.iter().all(|points| points.len() <= 1) && series.iter().any(|p| p.len() == 1)
    }

    /// The words on where this phase's run leaves the reference, when it does: the step it
    /// leaves at for a curve, the final value against the reference's for a single value.
    pub fn divergence_words(&self) -> Option<String> {
        let (step, value) = self.diverged?;
        Some(match (self.is_final_value(), self.reference_value) {
            (true, Some(reference)) => format!(
                "final value {} is outside the reference's {} ± {}",
                fmt_num(value),
                fmt_num(reference),
                fmt_num(self.criterion.tolerance)
            ),
            _ => format!(
                "leaves the reference at step {} ({}) and stays out",
                fmt_num(step),
                fmt_num(value)
            ),
        })
    }

    /// The criterion's rule in a few characters ([`rule_of`]).
    pub fn rule(&self) -> String {
        rule_of(&self.criterion)
    }
}

/// A criterion's rule in a few characters: `≥ 0.968`, `≤ 1.93`, `1.88 ± 0.05`.
pub fn rule_of(criterion: &CriterionSpec) -> String {
    criterion
        .direction
        .rule_bound(criterion.published, criterion.tolerance, fmt_num)
}

fn to_xy<'a>(points: impl Iterator<Item = &'a Point>) -> Vec<(f64, f64)> {
    points
        .enumerate()
        .map(|(i, p)| (p.step.unwrap_or(i as f64 + 1.0), p.value))
        .collect()
}

/// The Metrics pane: the criteria's metrics (each once), one block each.
pub struct MetricsPane;

impl Pane for MetricsPane {
    fn scrolls(&self) -> bool {
        false
    }

    fn draw(&self, frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, cx: &PaneContext<'_>) {
        metrics(frame, rect, block, cx.scene, cx.theme);
    }

    fn summary<'a>(&'a self, cx: &PaneContext<'a>) -> Summary<'a> {
        Summary::Line(summary(cx.scene, cx.theme))
    }
}

/// Draws the criteria's metrics (each once), one block each.
fn metrics(frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, scene: &Scene, theme: &Theme) {
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let mut criteria: Vec<&CriterionSpec> = Vec::new();
    for c in &scene.task.criteria {
        if !criteria.iter().any(|k| k.metric == c.metric) {
            criteria.push(c);
        }
    }
    if criteria.is_empty() || inner.height == 0 {
        return;
    }
    let count = criteria.len() as u16;
    let each = (inner.height / count).max(1);
    for (i, criterion) in criteria.iter().enumerate() {
        let top = inner.y + each * i as u16;
        if top >= inner.bottom() {
            break;
        }
        let height = if i as u16 == count - 1 {
            inner.bottom() - top
        } else {
            each.min(inner.bottom() - top)
        };
        let area = Rect::new(inner.x, top, inner.width, height);
        draw_criterion(frame, area, &CriterionView::of(criterion, scene), theme);
    }
}

/// The pane in one line, for a compact screen: each criterion's metric, this phase's reduced
/// value and its mark (`test_acc p2 0.9744 ✓ · val_loss p2 1.87 in`).
pub fn summary<'a>(scene: &Scene, theme: &Theme) -> Line<'a> {
    let c = &theme.colors;
    let mut spans = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for criterion in &scene.task.criteria {
        if seen.contains(&criterion.metric.as_str()) {
            continue;
        }
        seen.push(&criterion.metric);
        let view = CriterionView::of(criterion, scene);
        if !spans.is_empty() {
            spans.push(Span::styled(" · ", Style::default().fg(c.dim)));
        }
        let (text, color) = match (view.phase, view.value) {
            (Some(p), Some(v)) => {
                let (mark, color) = match view.passed {
                    Some(true) => ("✓", c.pass),
                    Some(false) => ("✗", c.fail),
                    None if view.accepts(v) => ("in", c.pass),
                    None => ("out", c.fail),
                };
                (
                    format!(
                        "{} p{p} {} {mark} ({})",
                        criterion.metric,
                        fmt_num(v),
                        view.rule()
                    ),
                    color,
                )
            }
            _ => (format!("{} {}", criterion.metric, view.rule()), c.dim),
        };
        spans.push(Span::styled(text, Style::default().fg(color)));
    }
    Line::from(spans)
}

/// One criterion's block: headline, gauge, legend, divergence, chart, as the rows allow.
fn draw_criterion(frame: &mut Frame<'_>, area: Rect, view: &CriterionView, theme: &Theme) {
    let range = view.range();
    let mut rows = area.rows();
    let mut next = || rows.next();
    if let Some(row) = next() {
        frame.render_widget(Paragraph::new(headline(view, row.width, theme)), row);
    }
    if let Some(row) = next() {
        gauge(frame, row, view, range, theme);
    }
    if let Some(row) = next() {
        frame.render_widget(Paragraph::new(legend(view, range, row.width, theme)), row);
    }
    let mut used = 3;
    if let Some(claim) = &view.criterion.claim
        && area.height >= 5
        && let Some(row) = next()
    {
        let c = &theme.colors;
        let words = claim
            .summaries()
            .into_iter()
            .map(|s| format!("┃ {s}"))
            .find(|s| s.chars().count() <= usize::from(row.width))
            .unwrap_or_default();
        let color = if claim.status == crate::task::ClaimStatus::NotReproduced {
            c.fail
        } else {
            c.dim
        };
        frame.render_widget(
            Paragraph::new(Span::styled(words, Style::default().fg(color))),
            row,
        );
        used += 1;
    }
    if let Some(words) = view.divergence_words()
        && area.height >= 5
        && let Some(row) = next()
    {
        let c = &theme.colors;
        frame.render_widget(
            Paragraph::new(Span::styled(words, Style::default().fg(c.fail))),
            row,
        );
        used += 1;
    }
    let left = area.height.saturating_sub(used);
    if left >= CHART_MIN_ROWS {
        let chart_area = Rect::new(area.x, area.bottom() - left, area.width, left);
        chart(frame, chart_area, view, range, theme);
    }
}

/// `test_acc · mean · higher ≥ 0.968      phase 2: 0.9839 ✓`.
fn headline<'a>(view: &CriterionView, width: u16, theme: &Theme) -> Line<'a> {
    let c = &theme.colors;
    let left = format!(
        "{} · {} · {} {}",
        view.criterion.metric,
        view.criterion.reduce.as_str(),
        view.criterion.direction.as_str(),
        view.rule()
    );
    let (rights, color) = match (view.phase, view.value) {
        (Some(p), Some(v)) => {
            let inside = view.accepts(v);
            let (mark, short, color) = match view.passed {
                Some(true) => ("✓", "✓", c.pass),
                Some(false) => ("✗", "✗", c.fail),
                None if inside => ("inside", "in", c.pass),
                None => ("outside", "out", c.fail),
            };
            let v = fmt_num(v);
            (
                vec![
                    format!("phase {p}: {v} {mark}"),
                    format!("p{p} {v} {short}"),
                ],
                color,
            )
        }
        _ => (vec!["no points yet".to_string()], c.dim),
    };
    let lefts = [
        left,
        format!("{} {}", view.criterion.metric, view.rule()),
        view.criterion.metric.clone(),
    ];
    let fits = |l: &String, r: &String| l.chars().count() + r.chars().count() < usize::from(width);
    let (left, right) = rights
        .iter()
        .flat_map(|r| lefts.iter().map(move |l| (l, r)))
        .find(|(l, r)| fits(l, r))
        .map_or_else(
            || (String::new(), rights[rights.len() - 1].clone()),
            |(l, r)| (l.clone(), r.clone()),
        );
    let gap = usize::from(width).saturating_sub(left.chars().count() + right.chars().count());
    Line::from(vec![
        Span::styled(
            left,
            Style::default().fg(c.title).add_modifier(Modifier::BOLD),
        ),
        Span::raw(" ".repeat(gap.max(1))),
        Span::styled(
            right,
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        ),
    ])
}

/// The column of `value` in a row of `width` cells showing `range` (clamped to the row).
fn column(value: f64, (low, high): (f64, f64), width: u16) -> (u16, bool) {
    let span = (high - low).max(f64::MIN_POSITIVE);
    let at = ((value - low) / span * f64::from(width.saturating_sub(1))).round();
    let clipped = value < low || value > high;
    (
        at.clamp(0.0, f64::from(width.saturating_sub(1))) as u16,
        clipped,
    )
}

/// The value of `metric` the agent's latest run of its port printed, in the latest phase
/// that has one.
fn agent_value(scene: &Scene, metric: &str) -> Option<f64> {
    scene.phases.iter().rev().find_map(|record| {
        record
            .agent_runs
            .iter()
            .rev()
            .filter(|(_, run)| run.target == crate::checks::RunTarget::Port)
            .find_map(|(_, run)| run.metrics.iter().find(|m| m.metric == metric))
            .map(|m| m.value)
    })
}

/// The gauge: the accepted region shaded, the published value `┃`, the reference `◆`, the
/// agent's own run `◇`, the seed check's run `◌`, the previous phase `○` and this phase `●` (a value beyond the range
/// shows as `◂`/`▸` at its edge).
fn gauge(frame: &mut Frame<'_>, row: Rect, view: &CriterionView, range: (f64, f64), theme: &Theme) {
    let c = &theme.colors;
    let width = row.width;
    if width == 0 {
        return;
    }
    let (accepted_low, accepted_high) = view.accepted();
    let mut cells: Vec<(char, Style)> = (0..width)
        .map(|i| {
            let value = range.0 + (range.1 - range.0) * f64::from(i) / f64::from(width.max(2) - 1);
            if value >= accepted_low && value <= accepted_high {
                ('━', Style::default().fg(c.pass).bg(c.added_bg))
            } else {
                ('─', Style::default().fg(c.dim))
            }
        })
        .collect();
    let mut mark = |value: Option<f64>, symbol: char, color: Color| {
        let Some(value) = value.filter(|v| v.is_finite()) else {
            return;
        };
        let (at, clipped) = column(value, range, width);
        let symbol = match (clipped, value < range.0) {
            (true, true) => '◂',
            (true, false) => '▸',
            _ => symbol,
        };
        let cell = &mut cells[usize::from(at)];
        *cell = (symbol, cell.1.fg(color).add_modifier(Modifier::BOLD));
    };
    mark(Some(view.criterion.published), '┃', c.published);
    mark(view.previous_value, '○', c.series_previous);
    mark(view.reference_value, '◆', c.series_reference);
    mark(view.agent_value, '◇', c.waiting);
    mark(view.seed_check_value, '◌', c.series_current);
    mark(view.value, '●', c.series_current);
    let spans: Vec<Span> = cells
        .into_iter()
        .map(|(ch, style)| Span::styled(ch.to_string(), style))
        .collect();
    frame.render_widget(Paragraph::new(Line::from(spans)), row);
}

/// The legend line, which also gives the values: `● 0.9839 phase 2 ○ 0.8956 phase 1 …`.
fn legend<'a>(view: &CriterionView, range: (f64, f64), width: u16, theme: &Theme) -> Line<'a> {
    for words in [Words::Long, Words::Short] {
        let line = legend_items(view, range, words, theme);
        if line.width() <= usize::from(width) {
            return line;
        }
    }
    legend_items(view, range, Words::None, theme)
}

/// How many words the legend spends on each value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Words {
    /// `phase 2 0.9839`.
    Long,
    /// `p2 0.9839`.
    Short,
    /// `0.9839`.
    None,
}

/// The legend's items, with as many words as `words` says.
fn legend_items<'a>(
    view: &CriterionView,
    range: (f64, f64),
    words: Words,
    theme: &Theme,
) -> Line<'a> {
    let c = &theme.colors;
    let mut spans = Vec::new();
    let gap = if words == Words::Long { "  " } else { " " };
    let mut item = |symbol: &str, color: Color, text: String| {
        // An item is words and a value: fewer words keep the value (the text's last word).
        let value = text.rsplit(' ').next().unwrap_or_default();
        let text = match words {
            Words::Long => text.clone(),
            Words::Short => {
                let short = match text.split(' ').next() {
                    Some("phase") => text.split(' ').nth(1).map(|p| format!("p{p}")),
                    Some("reference") => Some("ref".to_string()),
                    Some("published") => Some("pub".to_string()),
                    Some("agent's") => Some("agent".to_string()),
                    Some("seed") => Some("seed".to_string()),
                    _ => None,
                };
                short.map_or_else(|| value.to_string(), |w| format!("{w} {value}"))
            }
            Words::None => value.to_string(),
        };
        if !spans.is_empty() {
            spans.push(Span::raw(gap));
        }
        spans.push(Span::styled(
            symbol.to_string(),
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::styled(format!(" {text}"), Style::default().fg(c.dim)));
    };
    if let (Some(p), Some(v)) = (view.phase, view.value) {
        item("●", c.series_current, format!("phase {p} {}", fmt_num(v)));
    }
    if let (Some(p), Some(v)) = (view.phase, view.previous_value) {
        item(
            "○",
            c.series_previous,
            format!("phase {} {}", p.saturating_sub(1), fmt_num(v)),
        );
    }
    if let Some(v) = view.reference_value {
        item("◆", c.series_reference, format!("reference {}", fmt_num(v)));
    }
    if let Some(v) = view.agent_value {
        item("◇", c.waiting, format!("agent's run {}", fmt_num(v)));
    }
    if let Some(v) = view.seed_check_value {
        item("◌", c.series_current, format!("seed check {}", fmt_num(v)));
    }
    item(
        "┃",
        c.published,
        format!("published {}", fmt_num(view.criterion.published)),
    );
    let (below, above) = view.clipped(range);
    if below + above > 0 {
        let mut text = Vec::new();
        if below > 0 {
            text.push(format!("{below}↓"));
        }
        if above > 0 {
            text.push(format!("{above}↑"));
        }
        item("⇕", c.dim, format!("outside the chart: {}", text.join("")));
    }
    Line::from(spans)
}

/// Steps of 1, 2 or 5 times a power of ten that put at most `most` ticks across `span`.
fn nice_step(span: f64, most: usize) -> f64 {
    let raw = span / most.max(1) as f64;
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// The round values in `[low, high]` a step of [`nice_step`] (at least `least`) apart.
pub fn nice_ticks(low: f64, high: f64, most: usize, least: f64) -> (Vec<f64>, f64) {
    let step = nice_step(high - low, most).max(least);
    let mut ticks = Vec::new();
    let mut i = (low / step).ceil();
    while i * step <= high + step * 1e-9 && ticks.len() <= most + 1 {
        ticks.push(i * step);
        i += 1.0;
    }
    (ticks, step)
}

/// A tick label with the decimals its step needs (all labels of an axis alike).
fn tick_label(value: f64, step: f64) -> String {
    if value.abs() >= 1e5 || (step < 1e-4 && value != 0.0) {
        return fmt_num(value);
    }
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let text = format!("{value:.decimals$}");
    // "-0.00" reads as a value below zero.
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches('-').to_string()
    } else {
        text
    }
}

/// The chart: y labels on the left, x labels below, the accepted region shaded, the
/// published value, the reference, the previous phase and this phase (clipped to the range),
/// and the reduced value drawn as what it is.
fn chart(
    frame: &mut Frame<'_>,
    area: Rect,
    view: &CriterionView,
    range: (f64, f64),
    theme: &Theme,
) {
    let c = &theme.colors;
    let y_axis = YAxis::new(range, area.height - 1);
    if area.width <= y_axis.width + 4 {
        return;
    }
    let plot = Rect::new(
        area.x + y_axis.width,
        area.y,
        area.width - y_axis.width,
        area.height - 1,
    );
    let series = ChartSeries::new(view, range, plot.width);
    frame.render_widget(series.canvas(view.criterion.published, range, theme), plot);
    shade_accepted(frame, plot, view.accepted(), range, c.added_bg);
    let buf = frame.buffer_mut();
    series.draw_marks(buf, plot, range, theme);
    let label_style = Style::default().fg(c.dim);
    y_axis.draw_labels(buf, area, range, label_style);
    if series.final_value {
        let label = "final value";
        let len = label.chars().count() as u16;
        if len <= plot.width {
            let start = plot.x + (plot.width - len) / 2;
            buf.set_string(start, area.bottom() - 1, label, label_style);
        }
        return;
    }
    x_labels(buf, area, plot, view, series.x_range, label_style);
}

/// The row of a plot `plot_rows` high, spanning `low..=high`, that `y` falls in.
fn row_of(y: f64, (low, high): (f64, f64), plot_rows: u16) -> u16 {
    let row = ((high - y) / (high - low) * f64::from(plot_rows - 1)).round();
    (row.max(0.0) as u16).min(plot_rows - 1)
}

/// The y axis of a chart: its ticks, their labels and the width of the labels' column.
struct YAxis {
    /// The values ticked.
    ticks: Vec<f64>,
    /// Each tick's label.
    labels: Vec<String>,
    /// The widest label and a space.
    width: u16,
    /// The rows of the plot beside it.
    plot_rows: u16,
}

impl YAxis {
    /// The axis of `range` beside a plot `plot_rows` high: a tick every other row at most.
    fn new((low, high): (f64, f64), plot_rows: u16) -> YAxis {
        let (ticks, step) = nice_ticks(low, high, usize::from(plot_rows / 2).max(2), 0.0);
        let labels: Vec<String> = ticks.iter().map(|v| tick_label(*v, step)).collect();
        let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1) as u16 + 1;
        YAxis {
            ticks,
            labels,
            width,
            plot_rows,
        }
    }

    /// Writes the labels right-aligned at the left of `area`, each on its tick's row.
    fn draw_labels(&self, buf: &mut Buffer, area: Rect, range: (f64, f64), style: Style) {
        for (tick, label) in self.ticks.iter().zip(&self.labels) {
            let text = format!("{label:>width$}", width = usize::from(self.width - 1));
            buf.set_string(
                area.x,
                area.y + row_of(*tick, range, self.plot_rows),
                text,
                style,
            );
        }
    }
}

/// The series a chart draws, clipped to its range and thinned to its columns of dots.
struct ChartSeries {
    /// The steps the chart spans.
    x_range: (f64, f64),
    /// Whether the criterion is a final value (one point per series, drawn in the middle).
    final_value: bool,
    /// The reference run's points.
    reference: Vec<(f64, f64)>,
    /// The previous phase's points.
    previous: Vec<(f64, f64)>,
    /// This phase's points.
    current: Vec<(f64, f64)>,
    /// Where this phase's reduced value is drawn.
    reduced: Reduced,
}

impl ChartSeries {
    /// The series of `view` clipped to `(low, high)`, for a plot `width` columns wide.
    fn new(view: &CriterionView, (low, high): (f64, f64), width: u16) -> ChartSeries {
        let xs = view
            .current
            .iter()
            .chain(&view.previous)
            .chain(&view.reference)
            .map(|(x, _)| *x);
        let (mut x_min, mut x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        if !x_min.is_finite() {
            (x_min, x_max) = (0.0, 1.0);
        }
        // A final value has no range of steps: each series' one point is drawn in the middle.
        let final_value = view.is_final_value();
        if final_value {
            (x_min, x_max) = (-1.0, 1.0);
        } else if x_max <= x_min {
            x_max = x_min + 1.0;
        }
        let clamp = |points: &[(f64, f64)]| -> Vec<(f64, f64)> {
            points
                .iter()
                .map(|(x, y)| (if final_value { 0.0 } else { *x }, y.clamp(low, high)))
                .collect()
        };
        let dots = width.saturating_mul(2);
        let reference = in_dot_columns(&clamp(&view.reference), (x_min, x_max), dots);
        let previous = in_dot_columns(&clamp(&view.previous), (x_min, x_max), dots);
        let current = clamp(&view.current);
        let reduced = reduced_marks(view, &current);
        let current = in_dot_columns(&current, (x_min, x_max), dots);
        ChartSeries {
            x_range: (x_min, x_max),
            final_value,
            reference,
            previous,
            current,
            reduced,
        }
    }

    /// The braille canvas over `range`: the `published` value, the three series as lines
    /// and a mean's level.
    fn canvas<'a>(
        &'a self,
        published: f64,
        (low, high): (f64, f64),
        theme: &'a Theme,
    ) -> Canvas<'a, impl Fn(&mut Context<'_>) + 'a> {
        let c = &theme.colors;
        let (x_min, x_max) = self.x_range;
        Canvas::default()
            .marker(Marker::Braille)
            .x_bounds([x_min, x_max])
            .y_bounds([low, high])
            .paint(move |ctx| {
                if published >= low && published <= high {
                    ctx.draw(&Segment::new(
                        x_min,
                        published,
                        x_max,
                        published,
                        c.published,
                    ));
                }
                for (points, color) in [
                    (&self.reference, c.series_reference),
                    (&self.previous, c.series_previous),
                    (&self.current, c.series_current),
                ] {
                    for pair in points.windows(2) {
                        let ((x1, y1), (x2, y2)) = (pair[0], pair[1]);
                        ctx.draw(&Segment::new(x1, y1, x2, y2, color));
                    }
                    // A final value's points are marked with symbols below instead.
                    if let [(x, y)] = points[..]
                        && !self.final_value
                    {
                        ctx.draw(&Segment::new(x, y, x, y, color));
                    }
                }
                ctx.layer();
                if let Reduced::Level { from, to, value } = &self.reduced {
                    ctx.draw(&Segment::new(*from, *value, *to, *value, c.emphasis));
                }
            })
    }

    /// Symbols over `plot`: a final value's points as the gauge marks them, and the reduced
    /// value's point, this phase's last.
    fn draw_marks(&self, buf: &mut Buffer, plot: Rect, range: (f64, f64), theme: &Theme) {
        let c = &theme.colors;
        let (x_min, x_max) = self.x_range;
        let mut marks: Vec<(f64, f64, &str, Color)> = Vec::new();
        if self.final_value {
            for (points, symbol, color) in [
                (&self.previous, "○", c.series_previous),
                (&self.reference, "◆", c.series_reference),
            ] {
                if let [(x, y)] = points[..] {
                    marks.push((x, y, symbol, color));
                }
            }
        }
        if let Reduced::Point { x, value } = self.reduced {
            marks.push((x, value, "●", c.emphasis));
        }
        for (x, y, symbol, color) in marks {
            // The column the canvas puts `x` in; the row the y labels give `y`.
            let col = ((x - x_min) / (x_max - x_min) * f64::from(plot.width - 1)).max(0.0) as u16;
            buf.set_string(
                plot.x + col.min(plot.width - 1),
                plot.y + row_of(y, range, plot.height),
                symbol,
                Style::default().fg(color).add_modifier(Modifier::BOLD),
            );
        }
    }
}

/// The step labels under `plot` on the last row of `area`, spanning `x_range`, none over
/// another; whole numbers when the log counts steps so.
fn x_labels(
    buf: &mut Buffer,
    area: Rect,
    plot: Rect,
    view: &CriterionView,
    (x_min, x_max): (f64, f64),
    style: Style,
) {
    // Steps are counted in whole numbers when the log gives them so.
    let whole = view
        .current
        .iter()
        .chain(&view.reference)
        .all(|(x, _)| x.fract() == 0.0);
    let least = if whole { 1.0 } else { 0.0 };
    let (x_ticks, x_step) = nice_ticks(x_min, x_max, usize::from(plot.width / 10).max(2), least);
    let mut free_from = 0u16;
    for tick in x_ticks {
        let label = tick_label(tick, x_step);
        let (col, _) = column(tick, (x_min, x_max), plot.width);
        let len = label.chars().count() as u16;
        let start = col
            .saturating_sub(len / 2)
            .min(plot.width.saturating_sub(len));
        if start < free_from {
            continue;
        }
        buf.set_string(plot.x + start, area.bottom() - 1, &label, style);
        free_from = start + len + 1;
    }
}

/// The points of a series that a braille chart `dots` dots wide, spanning `x_min..=x_max`,
/// can tell apart: of each run of consecutive points that fall in one column of dots, the
/// first, the lowest, the highest and the last, in their order. Lines between them paint
/// exactly the dots that lines between all the points paint: within a column every line
/// is upright, so a run covers the dots from its lowest to its highest point either way,
/// and the lines between columns join the same ends. A series of 8,192 points in a chart
/// 200 dots wide is drawn with at most 800 lines instead of 8,191.
fn in_dot_columns(points: &[(f64, f64)], (x_min, x_max): (f64, f64), dots: u16) -> Vec<(f64, f64)> {
    let dots = usize::from(dots);
    if points.len() <= 4 * dots || x_max <= x_min {
        return points.to_vec();
    }
    // The column ratatui's canvas puts a point in.
    let scale = (dots as f64 - 1.0) / (x_max - x_min);
    let column = |x: f64| ((x - x_min) * scale).round();
    let mut kept = Vec::with_capacity(4 * dots);
    let mut run_start = 0;
    while run_start < points.len() {
        let col = column(points[run_start].0);
        let run_end = points[run_start..]
            .iter()
            .position(|p| column(p.0) != col)
            .map_or(points.len(), |n| run_start + n);
        let run = &points[run_start..run_end];
        let lowest = (0..run.len()).fold(0, |m, i| if run[i].1 < run[m].1 { i } else { m });
        let highest = (0..run.len()).fold(0, |m, i| if run[i].1 > run[m].1 { i } else { m });
        let mut picks = [0, lowest, highest, run.len() - 1];
        picks.sort_unstable();
        let mut last_pick = None;
        for pick in picks {
            if last_pick != Some(pick) {
                kept.push(run[pick]);
                last_pick = Some(pick);
            }
        }
        run_start = run_end;
    }
    kept
}

/// How the chart draws the reduced value.
enum Reduced {
    /// A mean: a level over the steps it averages.
    Level { from: f64, to: f64, value: f64 },
    /// The last, the largest or the smallest point: that point.
    Point { x: f64, value: f64 },
    /// No points.
    None,
}

/// Where the reduced value of this phase's (clamped) points is drawn.
fn reduced_marks(view: &CriterionView, current: &[(f64, f64)]) -> Reduced {
    let (Some(first), Some(last)) = (current.first(), current.last()) else {
        return Reduced::None;
    };
    let pick = |better: fn(f64, f64) -> bool| {
        current
            .iter()
            .copied()
            .reduce(|a, b| if better(b.1, a.1) { b } else { a })
            .unwrap_or(*last)
    };
    let (x, value) = match view.criterion.reduce {
        Reduce::Mean => {
            let value = view.value.unwrap_or(last.1);
            return Reduced::Level {
                from: first.0,
                to: last.0,
                value,
            };
        }
        Reduce::Last => *last,
        Reduce::Max => pick(|b, a| b > a),
        Reduce::Min => pick(|b, a| b < a),
    };
    Reduced::Point { x, value }
}

/// Gives the plot rows that overlap the accepted region the background `color`.
fn shade_accepted(
    frame: &mut Frame<'_>,
    plot: Rect,
    (accepted_low, accepted_high): (f64, f64),
    (low, high): (f64, f64),
    color: Color,
) {
    let rows = f64::from(plot.height);
    let buf = frame.buffer_mut();
    for r in 0..plot.height {
        let top = high - (high - low) * f64::from(r) / rows;
        let bottom = high - (high - low) * f64::from(r + 1) / rows;
        if bottom <= accepted_high && top >= accepted_low {
            buf.set_style(
                Rect::new(plot.x, plot.y + r, plot.width, 1),
                Style::default().bg(color),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_scale_with_the_room() {
        let (ticks, step) = nice_ticks(0.955, 0.995, 4, 0.0);
        assert_eq!(step, 0.01);
        assert_eq!(ticks.len(), 4);
        let labels: Vec<String> = ticks.iter().map(|t| tick_label(*t, step)).collect();
        assert_eq!(labels, ["0.96", "0.97", "0.98", "0.99"]);
        let (few, _) = nice_ticks(0.955, 0.995, 2, 0.0);
        assert_eq!(few.len(), 2);
        assert_eq!(tick_label(-0.0001, 0.01), "0.00");
        let (steps, step) = nice_ticks(1.0, 30.0, 5, 1.0);
        assert_eq!(step, 10.0);
        assert_eq!(steps, [10.0, 20.0, 30.0]);
        // Three steps across a wide chart: whole steps, not 1, 1.5, 2 shown as 1 2 2.
        let (steps, step) = nice_ticks(1.0, 3.0, 9, 1.0);
        assert_eq!(step, 1.0);
        assert_eq!(steps, [1.0, 2.0, 3.0]);
    }

    /// The braille dots a polyline through `points` paints on a `width`×`height` canvas.
    fn painted(
        points: &[(f64, f64)],
        x: (f64, f64),
        y: (f64, f64),
        width: u16,
        height: u16,
    ) -> ratatui::buffer::Buffer {
        let area = Rect::new(0, 0, width, height);
        let mut buffer = ratatui::buffer::Buffer::empty(area);
        let canvas = Canvas::default()
            .marker(Marker::Braille)
            .x_bounds([x.0, x.1])
            .y_bounds([y.0, y.1])
            .paint(|ctx| {
                for pair in points.windows(2) {
                    let ((x1, y1), (x2, y2)) = (pair[0], pair[1]);
                    ctx.draw(&Segment::new(x1, y1, x2, y2, Color::Red));
                }
            });
        ratatui::widgets::Widget::render(canvas, area, &mut buffer);
        buffer
    }

    #[test]
    fn a_series_of_rising_steps_keeps_at_most_four_points_a_column_of_dots() {
        let points: Vec<(f64, f64)> = (0..8_192)
            .map(|i| (f64::from(i), f64::from(i % 7)))
            .collect();
        let thinned = in_dot_columns(&points, (0.0, 8_191.0), 100);
        assert!(thinned.len() <= 400, "{} points kept", thinned.len());
        assert_eq!(thinned.first(), points.first());
        assert_eq!(thinned.last(), points.last());
        // A series the chart can already show point by point is kept whole.
        assert_eq!(
            in_dot_columns(&points[..300], (0.0, 299.0), 100),
            points[..300]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        #[test]
        fn a_long_series_thinned_to_the_chart_columns_paints_the_same_dots(
            values in proptest::collection::vec(-1.0f64..1.0, 2..6_000),
            steps in proptest::collection::vec(0.0f64..3.0, 6_000),
            width in 3u16..120,
            height in 2u16..20,
        ) {
            // Steps that mostly rise, and sometimes stay or go back, as logs' steps do.
            let mut step = 0.0;
            let points: Vec<(f64, f64)> = values
                .iter()
                .zip(&steps)
                .map(|(&value, &by)| {
                    step += by - 0.2;
                    (step, value)
                })
                .collect();
            let (x_min, x_max) = points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
            proptest::prop_assume!(x_max > x_min);
            let thinned = in_dot_columns(&points, (x_min, x_max), width * 2);
            proptest::prop_assert!(thinned.len() <= points.len());
            proptest::prop_assert_eq!(
                painted(&thinned, (x_min, x_max), (-1.0, 1.0), width, height),
                painted(&points, (x_min, x_max), (-1.0, 1.0), width, height)
            );
        }
    }
}

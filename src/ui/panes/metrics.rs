//! The Metrics pane: one chart per criterion metric, with the published value, its band,
//! the reference series, the previous phase and where the run leaves the reference.

use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType, LegendPosition};

use crate::metrics::Point;
use crate::task::CriterionSpec;

use super::super::scene::Scene;
use super::super::theme::Theme;
use super::fmt_num;

fn x_of(p: &Point, i: usize) -> f64 {
    p.step.unwrap_or(i as f64 + 1.0)
}

fn to_xy(points: &[Point]) -> Vec<(f64, f64)> {
    points
        .iter()
        .enumerate()
        .map(|(i, p)| (x_of(p, i), p.value))
        .collect()
}

/// A braille line series of the chart (unnamed when `name` is empty: left out of the legend).
fn line_dataset<'a>(name: String, style: Style, data: &'a [(f64, f64)]) -> Dataset<'a> {
    let dataset = Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(style)
        .data(data);
    if name.is_empty() {
        dataset
    } else {
        dataset.name(name)
    }
}

/// The Metrics pane: one chart per criterion metric.
pub fn metrics(frame: &mut Frame<'_>, rect: Rect, block: Block<'_>, state: &Scene, theme: &Theme) {
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let mut criteria: Vec<&CriterionSpec> = Vec::new();
    for c in &state.task.criteria {
        if !criteria.iter().any(|k| k.metric == c.metric) {
            criteria.push(c);
        }
    }
    if criteria.is_empty() || inner.height < 3 {
        return;
    }
    let chunks = Layout::default()
        .direction(Direction::Vertical)
        .constraints(vec![
            Constraint::Ratio(1, criteria.len() as u32);
            criteria.len()
        ])
        .split(inner);
    for (criterion, area) in criteria.iter().zip(chunks.iter()) {
        chart(frame, *area, criterion, state, theme);
    }
}

fn chart(
    frame: &mut Frame<'_>,
    area: Rect,
    criterion: &CriterionSpec,
    state: &Scene,
    theme: &Theme,
) {
    let c = &theme.colors;
    let metric = &criterion.metric;
    let latest_phase = (1..=state.phases.len() as u8).rev().find(|p| {
        state
            .phase(*p)
            .is_some_and(|r| r.metrics.contains_key(metric))
    });
    let current: Vec<(f64, f64)> = latest_phase
        .and_then(|p| state.phase(p))
        .and_then(|r| r.metrics.get(metric))
        .map(|s| to_xy(s.points()))
        .unwrap_or_default();
    let previous: Vec<(f64, f64)> = match latest_phase {
        Some(p) if p > 1 => state
            .phase(p - 1)
            .and_then(|r| r.metrics.get(metric))
            .map(|s| to_xy(s.points()))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let reference_points: &[Point] = state
        .task
        .reference
        .iter()
        .find(|r| &r.metric == metric)
        .map_or(&[], |r| r.points.as_slice());
    let reference = to_xy(reference_points);
    let all_x = current
        .iter()
        .chain(&previous)
        .chain(&reference)
        .map(|(x, _)| *x);
    let (mut x_min, mut x_max) = all_x.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !x_min.is_finite() {
        x_min = 0.0;
        x_max = 1.0;
    }
    if x_max <= x_min {
        x_max = x_min + 1.0;
    }
    let published = criterion.published;
    let tol = criterion.tolerance;
    let band_lo = [(x_min, published - tol), (x_max, published - tol)];
    let band_hi = [(x_min, published + tol), (x_max, published + tol)];
    let published_line = [(x_min, published), (x_max, published)];
    let all_y = current
        .iter()
        .chain(&previous)
        .chain(&reference)
        .map(|(_, y)| *y)
        .chain([published - tol, published + tol]);
    let (y_lo, y_hi) = all_y.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    let pad = ((y_hi - y_lo) * 0.05).max(1e-9);
    let (y_lo, y_hi) = (y_lo - pad, y_hi + pad);
    let diverged = latest_phase
        .and_then(|p| state.phase(p))
        .and_then(|r| r.divergence.get(metric.as_str()))
        .and_then(|d| d.left_at);
    let diverged_point = diverged.map(|p| [p]);

    let bold = |color| Style::default().fg(color).add_modifier(Modifier::BOLD);
    let mut datasets = vec![
        line_dataset(
            format!("±{} band", fmt_num(tol)),
            Style::default().fg(c.band),
            &band_lo,
        ),
        line_dataset(String::new(), Style::default().fg(c.band), &band_hi),
        line_dataset(
            format!("published {}", fmt_num(published)),
            Style::default().fg(c.published),
            &published_line,
        ),
    ];
    let series = [
        (
            "reference".to_string(),
            Style::default().fg(c.series_reference),
            &reference,
        ),
        (
            "phase 1".to_string(),
            Style::default().fg(c.series_previous),
            &previous,
        ),
        (
            format!("phase {}", latest_phase.unwrap_or(1)),
            bold(c.series_current),
            &current,
        ),
    ];
    for (name, style, data) in series {
        if !data.is_empty() {
            datasets.push(line_dataset(name, style, data));
        }
    }
    if let Some(point) = &diverged_point {
        datasets.push(
            Dataset::default()
                .name(format!("leaves reference @ {}", fmt_num(point[0].0)))
                .marker(Marker::Dot)
                .graph_type(GraphType::Scatter)
                .style(bold(c.fail))
                .data(point),
        );
    }
    let last = current
        .last()
        .map(|(_, y)| format!(" = {}", fmt_num(*y)))
        .unwrap_or_default();
    let title = Line::from(vec![
        Span::styled(
            format!("{metric}{last}"),
            Style::default().fg(c.title).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(
                " ({}, {})",
                criterion.reduce.as_str(),
                criterion.direction.as_str()
            ),
            Style::default().fg(c.dim),
        ),
    ]);
    let chart = Chart::new(datasets)
        .block(Block::default().title(title))
        .legend_position(Some(LegendPosition::BottomRight))
        .hidden_legend_constraints((Constraint::Percentage(60), Constraint::Percentage(60)))
        .x_axis(
            Axis::default()
                .title(Span::styled("step", Style::default().fg(c.dim)))
                .style(Style::default().fg(c.dim))
                .bounds([x_min, x_max])
                .labels([
                    fmt_num(x_min),
                    fmt_num((x_min + x_max) / 2.0),
                    fmt_num(x_max),
                ]),
        )
        .y_axis(
            Axis::default()
                .style(Style::default().fg(c.dim))
                .bounds([y_lo, y_hi])
                .labels([fmt_num(y_lo), fmt_num((y_lo + y_hi) / 2.0), fmt_num(y_hi)]),
        );
    frame.render_widget(chart, area);
}

//! A metric's curves as an inline SVG chart: each verify run's series against the task's
//! reference run, with the published value, the band its tolerance accepts and the
//! authors' claim as horizontal lines. Plain SVG, so the page needs no chart library.

use std::fmt::Write as _;

use super::html::{escape, measure};

/// One curve: its legend, its CSS class (`phase1`, `phase2`, `reference`, …) and its points
/// (step or index, value).
pub struct Curve {
    /// The legend's text.
    pub label: String,
    /// The CSS class that colours it.
    pub class: &'static str,
    /// The points, in order.
    pub points: Vec<(f64, f64)>,
}

/// A horizontal line: its legend, class and value.
pub struct Level {
    /// The legend's text.
    pub label: String,
    /// The CSS class that colours it.
    pub class: &'static str,
    /// The value.
    pub value: f64,
}

/// What a chart shows.
pub struct Chart {
    /// The metric's name (the chart's title).
    pub metric: String,
    /// The curves.
    pub curves: Vec<Curve>,
    /// Horizontal lines (published value, claim).
    pub levels: Vec<Level>,
    /// The accepted band (low, high), shaded.
    pub band: Option<(f64, f64)>,
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 56.0;

/// A coordinate with two decimals (the same bytes every time).
fn at(v: f64) -> String {
    format!("{v:.2}")
}

impl Chart {
    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.curves.iter().all(|c| c.points.is_empty())
    }

    /// The chart as an `<svg>` element.
    pub fn svg(&self) -> String {
        let scale = self.scale();
        let mut svg = String::new();
        let _ = write!(
            svg,
            "<svg class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
             aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">",
            escape(&self.metric)
        );
        let _ = write!(
            svg,
            "<text class=\"title\" x=\"{LEFT}\" y=\"18\">{}</text>",
            escape(&self.metric)
        );
        self.frame(&mut svg, &scale);
        self.lines(&mut svg, &scale);
        self.legend(&mut svg);
        svg.push_str("</svg>");
        svg
    }

    /// Where the values go: the ranges of the steps and of every value drawn.
    fn scale(&self) -> Scale {
        let xs = self
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.0));
        let ys = self
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.1))
            .chain(self.levels.iter().map(|l| l.value))
            .chain(self.band.iter().flat_map(|(a, b)| [*a, *b]))
            .filter(|v| v.is_finite());
        Scale {
            x: bounds(xs.filter(|v| v.is_finite())),
            y: bounds(ys),
        }
    }

    /// The accepted band, the plot's frame and the ticks at both ends of each axis.
    fn frame(&self, svg: &mut String, scale: &Scale) {
        let ((x0, x1), (y0, y1)) = (scale.x, scale.y);
        if let Some((low, high)) = self.band {
            let (top, bottom) = (scale.sy(high), scale.sy(low));
            let _ = write!(
                svg,
                "<rect class=\"band\" x=\"{LEFT}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                at(top),
                at(PLOT_W),
                at((bottom - top).max(0.5))
            );
        }
        let _ = write!(
            svg,
            "<rect class=\"frame\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\"/>",
            at(PLOT_W),
            at(PLOT_H)
        );
        for (value, y) in [(y1, TOP), (y0, TOP + PLOT_H)] {
            let _ = write!(
                svg,
                "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                at(LEFT - 6.0),
                at(y + 4.0),
                measure(value)
            );
        }
        for (value, anchor, x) in [(x0, "start", LEFT), (x1, "end", LEFT + PLOT_W)] {
            let _ = write!(
                svg,
                "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
                at(x),
                at(TOP + PLOT_H + 16.0),
                measure(value)
            );
        }
    }

    /// The levels across the plot, then each curve (a single point also as a dot).
    fn lines(&self, svg: &mut String, scale: &Scale) {
        for level in &self.levels {
            let y = at(scale.sy(level.value));
            let _ = write!(
                svg,
                "<line class=\"level {}\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\"/>",
                level.class,
                at(LEFT + PLOT_W)
            );
        }
        for curve in self.curves.iter().filter(|c| !c.points.is_empty()) {
            let points: Vec<String> = curve
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| format!("{},{}", at(scale.sx(x)), at(scale.sy(y))))
                .collect();
            let _ = write!(
                svg,
                "<polyline class=\"curve {}\" points=\"{}\"/>",
                curve.class,
                points.join(" ")
            );
            if let [only] = points.as_slice() {
                let (x, y) = only.split_once(',').unwrap_or(("0", "0"));
                let _ = write!(
                    svg,
                    "<circle class=\"curve {}\" cx=\"{x}\" cy=\"{y}\" r=\"3\"/>",
                    curve.class
                );
            }
        }
    }

    /// The legend, along the bottom: each curve drawn, then each level.
    fn legend(&self, svg: &mut String) {
        let mut x = LEFT;
        let y = HEIGHT - 12.0;
        let entries = self
            .curves
            .iter()
            .filter(|c| !c.points.is_empty())
            .map(|c| (c.label.as_str(), c.class, "curve"))
            .chain(
                self.levels
                    .iter()
                    .map(|l| (l.label.as_str(), l.class, "level")),
            );
        for (label, class, kind) in entries {
            let _ = write!(
                svg,
                "<line class=\"{kind} {class}\" x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>\
                 <text class=\"legend\" x=\"{}\" y=\"{}\">{}</text>",
                at(x),
                at(x + 16.0),
                at(y - 4.0),
                at(y - 4.0),
                at(x + 20.0),
                at(y),
                escape(label)
            );
            x += 28.0 + 6.5 * label.chars().count() as f64;
        }
    }
}

/// The plot's width inside its margins.
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
/// The plot's height inside its margins.
const PLOT_H: f64 = HEIGHT - TOP - BOTTOM;

/// The ranges a chart maps onto its plot: steps across, values up.
struct Scale {
    /// The steps' range.
    x: (f64, f64),
    /// The values' range.
    y: (f64, f64),
}

impl Scale {
    /// A step's place across the plot.
    fn sx(&self, x: f64) -> f64 {
        let (x0, x1) = self.x;
        LEFT + (x - x0) / (x1 - x0) * PLOT_W
    }

    /// A value's place down the plot, held inside the range.
    fn sy(&self, y: f64) -> f64 {
        let (y0, y1) = self.y;
        TOP + (1.0 - (y.clamp(y0, y1) - y0) / (y1 - y0)) * PLOT_H
    }
}

/// The range of `values`, widened a little, and never empty. Widening never carries the
/// range below 0 when no value is below 0 (an MSE, a loss, a step), so the axis of a value
/// that cannot be negative starts at 0 rather than at `-0.009`.
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    if !low.is_finite() || !high.is_finite() {
        return (0.0, 1.0);
    }
    let pad = if high - low >= 1e-12 {
        (high - low) * 0.05
    } else if low == 0.0 {
        1.0
    } else {
        low.abs() * 0.1
    };
    let floor = if low >= 0.0 { 0.0 } else { f64::NEG_INFINITY };
    ((low - pad).max(floor), high + pad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> Chart {
        Chart {
            metric: "eval_mse".into(),
            curves: vec![
                Curve {
                    label: "phase 1".into(),
                    class: "phase1",
                    points: vec![(0.0, 1.0), (1.0, 0.5), (2.0, 0.25)],
                },
                Curve {
                    label: "reference".into(),
                    class: "reference",
                    points: Vec::new(),
                },
            ],
            levels: vec![Level {
                label: "published 0.3".into(),
                class: "published",
                value: 0.3,
            }],
            band: Some((0.0, 0.35)),
        }
    }

    #[test]
    fn a_chart_draws_its_curves_levels_and_band_and_leaves_out_empty_curves() {
        let svg = chart().svg();
        assert!(svg.starts_with("<svg class=\"chart\""), "{svg}");
        assert_eq!(svg.matches("<polyline").count(), 1, "{svg}");
        assert!(svg.contains("class=\"band\""));
        assert!(svg.contains("class=\"level published\""));
        assert!(svg.contains(">published 0.3</text>"));
        assert!(!svg.contains(">reference</text>"));
        assert_eq!(svg, chart().svg());
    }

    /// The `y` of each tick label on the value axis (the two at the left edge), top first.
    fn value_ticks(svg: &str) -> Vec<String> {
        svg.split("<text class=\"tick\" x=\"58.00\"")
            .skip(1)
            .filter_map(|t| t.split_once('>')?.1.split_once('<'))
            .map(|(label, _)| label.to_string())
            .collect()
    }

    #[test]
    fn the_axis_of_values_that_cannot_be_negative_stops_at_zero() {
        // An MSE falling to 0.002 against a published 0.003 ≤ 0.03 (the band is open below).
        let mut mse = chart();
        mse.curves[0].points = vec![(0.0, 0.18), (1.0, 0.05), (2.0, 0.002)];
        mse.levels[0].value = 0.003;
        mse.band = Some((f64::NEG_INFINITY, 0.03));
        let svg = mse.svg();
        let ticks = value_ticks(&svg);
        assert_eq!(ticks.len(), 2, "{svg}");
        assert_eq!(ticks[1], "0", "{svg}");
        assert!(!svg.contains(">-0"), "{svg}");
        // A value that is 0 at every point draws from 0 up.
        assert_eq!(bounds([0.0, 0.0].into_iter()), (0.0, 1.0));
        // Values below 0 keep the margin below them.
        let (low, high) = bounds([-1.0, 1.0].into_iter());
        assert!(low < -1.0 && high > 1.0, "{low} {high}");
        // The step axis of a run from step 0 starts at 0 too.
        assert_eq!(bounds([0.0, 2000.0].into_iter()).0, 0.0);
    }

    #[test]
    fn one_point_or_none_still_draws() {
        let mut one = chart();
        one.curves[0].points = vec![(3.0, 0.2)];
        assert!(one.svg().contains("<circle"));
        one.curves[0].points.clear();
        assert!(one.is_empty());
        assert_eq!(bounds(std::iter::empty()), (0.0, 1.0));
    }
}

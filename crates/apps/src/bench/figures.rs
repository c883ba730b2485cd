//! The bench report's figures, written under `figures/` beside `report.md` as SVG with a PNG
//! of each: the pass rate per agent split by phase with its 95% interval, the failure classes
//! per agent, (when runs record it) the pass rate of trials whose agent ran its port against
//! those whose agent did not, the outcome of every trial on a task × agent grid, and (when
//! agents report it) their claimed success against the verdict.
//!
//! Each figure is laid out once as a list of shapes in pixels, then painted with plotters on
//! its SVG and its bitmap backend. Text is measured and drawn with DejaVu Sans, embedded in
//! the binary, so no system font is needed and the same report always gives the same bytes.
//! Colours are Okabe and Ito's palette (told apart with every common colour-vision
//! deficiency), and every mark carries its own label or letter, so no figure needs a legend.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::backend::{BitMapBackend, DrawingBackend, SVGBackend};
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, IntoDrawingArea, PathElement, Rectangle, Text};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{
    Color, FontDesc, FontFamily, FontStyle, RGBColor, TextStyle, WHITE, register_font,
};
use strum::VariantArray;

use crate::grade::FailureClass;

use super::model::{
    ALL_AGENTS, IntervalMethod, NoVerdict, RanPortLine, Report, Share, TrialFailure, TrialRow,
    has_claims, has_ran_port,
};

/// The figures' folder, relative to the report.
pub const DIR: &str = "figures";

/// Okabe–Ito: blue, sky blue, vermillion, reddish purple, orange, yellow, and two greys.
const BLUE: RGBColor = RGBColor(0x00, 0x72, 0xb2);
const SKY: RGBColor = RGBColor(0x56, 0xb4, 0xe9);
const VERMILLION: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
const PURPLE: RGBColor = RGBColor(0xcc, 0x79, 0xa7);
const ORANGE: RGBColor = RGBColor(0xe6, 0x9f, 0x00);
const YELLOW: RGBColor = RGBColor(0xf0, 0xe4, 0x42);
const GREY: RGBColor = RGBColor(0x99, 0x99, 0x99);
const PALE: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
const FAINT: RGBColor = RGBColor(0x66, 0x66, 0x66);

/// Text sizes in pixels.
const TITLE: f64 = 18.0;
const BODY: f64 = 15.0;
const SMALL: f64 = 14.0;
/// The outer margin.
const MARGIN: i32 = 16;
/// Agent and task labels longer than this are cut.
const LABEL_CHARS: usize = 34;

/// Why a figure could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    /// The embedded font could not be loaded.
    #[error("cannot load the figures' font")]
    Font,
    /// A backend could not draw.
    #[error("cannot draw {figure}: {message}")]
    Draw {
        /// The figure's file name.
        figure: String,
        /// The backend's error.
        message: String,
    },
    /// A file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// One of the report's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The pass rate per agent, split into phase 1 and phase 2, with its 95% interval.
    PassRate,
    /// Failed trials per agent by class.
    Failures,
    /// Per agent, the pass rate of trials whose agent ran its port against those whose agent
    /// did not, each with its 95% interval.
    RanPort,
    /// The outcome of every trial: tasks × agents, one square per repeat.
    Grid,
    /// Graded phases where the agent said whether it succeeded, against the verdict.
    Claims,
}

impl Kind {
    /// Every figure, in the order report.md shows them.
    pub const ALL: [Kind; 5] = [
        Kind::PassRate,
        Kind::Failures,
        Kind::RanPort,
        Kind::Grid,
        Kind::Claims,
    ];

    /// The file name without its extension.
    pub fn stem(self) -> &'static str {
        match self {
            Kind::PassRate => "pass_rate",
            Kind::Failures => "failures",
            Kind::RanPort => "ran_port",
            Kind::Grid => "grid",
            Kind::Claims => "claims",
        }
    }

    /// The figure's title (also its alternative text in report.md).
    pub fn title(self) -> &'static str {
        match self {
            Kind::PassRate => "Pass rate per agent",
            Kind::Failures => "Failure classes per agent",
            Kind::RanPort => "Pass rate by whether the agent ran its port",
            Kind::Grid => "Outcome of every trial",
            Kind::Claims => "Claimed success against the verdict",
        }
    }
}

/// A figure laid out in pixels, ready to paint on any backend.
pub struct Sheet {
    width: u32,
    height: u32,
    shapes: Vec<Shape>,
}

enum Shape {
    /// A filled rectangle.
    Rect {
        from: (i32, i32),
        to: (i32, i32),
        fill: RGBColor,
    },
    /// A rectangle's outline.
    Frame {
        from: (i32, i32),
        to: (i32, i32),
        color: RGBColor,
    },
    /// A polyline.
    Line {
        points: Vec<(i32, i32)>,
        color: RGBColor,
        width: u32,
    },
    /// Text anchored at `at`.
    Text {
        text: String,
        at: (i32, i32),
        size: f64,
        anchor: (HPos, VPos),
        color: RGBColor,
        bold: bool,
    },
}

/// Registers DejaVu Sans as plotters' `sans-serif`, once.
fn fonts() -> Result<(), FigureError> {
    static LOADED: OnceLock<bool> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if *loaded {
        Ok(())
    } else {
        Err(FigureError::Font)
    }
}

fn font(size: f64, bold: bool) -> FontDesc<'static> {
    let style = if bold {
        FontStyle::Bold
    } else {
        FontStyle::Normal
    };
    FontDesc::new(FontFamily::SansSerif, size, style)
}

/// The width of `text` in pixels (0 when it cannot be measured).
fn width_of(text: &str, size: f64, bold: bool) -> i32 {
    font(size, bold)
        .box_size(text)
        .map_or(0, |(w, _)| i32::try_from(w).unwrap_or(i32::MAX))
}

/// `text`, cut to `LABEL_CHARS` characters.
fn short(text: &str) -> String {
    if text.chars().count() <= LABEL_CHARS {
        text.to_string()
    } else {
        let cut: String = text.chars().take(LABEL_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// Black or white, whichever reads better on `fill`.
fn ink_on(fill: RGBColor) -> RGBColor {
    let RGBColor(r, g, b) = fill;
    let luma = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
    if luma < 140.0 { WHITE } else { INK }
}

impl Sheet {
    fn new() -> Sheet {
        Sheet {
            width: 0,
            height: 0,
            shapes: Vec::new(),
        }
    }

    fn rect(&mut self, from: (i32, i32), to: (i32, i32), fill: RGBColor) {
        self.shapes.push(Shape::Rect { from, to, fill });
    }

    fn frame(&mut self, from: (i32, i32), to: (i32, i32), color: RGBColor) {
        self.shapes.push(Shape::Frame { from, to, color });
    }

    fn line(&mut self, points: Vec<(i32, i32)>, color: RGBColor, width: u32) {
        self.shapes.push(Shape::Line {
            points,
            color,
            width,
        });
    }

    fn text(&mut self, text: impl Into<String>, at: (i32, i32), size: f64, anchor: (HPos, VPos)) {
        self.styled(text, at, size, anchor, INK, false);
    }

    fn styled(
        &mut self,
        text: impl Into<String>,
        at: (i32, i32),
        size: f64,
        anchor: (HPos, VPos),
        color: RGBColor,
        bold: bool,
    ) {
        self.shapes.push(Shape::Text {
            text: text.into(),
            at,
            size,
            anchor,
            color,
            bold,
        });
    }

    /// The title and the lines under it; returns where the figure's body starts.
    fn heading(&mut self, title: &str, lines: &[String]) -> i32 {
        self.styled(
            title,
            (MARGIN, MARGIN),
            TITLE,
            (HPos::Left, VPos::Top),
            INK,
            true,
        );
        let mut y = MARGIN + 28;
        for line in lines {
            self.styled(
                line.as_str(),
                (MARGIN, y),
                SMALL,
                (HPos::Left, VPos::Top),
                FAINT,
                false,
            );
            y += 20;
        }
        self.width = self
            .width
            .max(to_u32(MARGIN * 2 + width_of(title, TITLE, true)));
        for line in lines {
            self.width = self
                .width
                .max(to_u32(MARGIN * 2 + width_of(line, SMALL, false)));
        }
        y + 10
    }

    /// A bar segment from `x0` to `x1`, labelled inside with the first of `labels` that fits.
    fn segment(&mut self, x0: i32, x1: i32, y: i32, h: i32, fill: RGBColor, labels: &[String]) {
        if x1 <= x0 {
            return;
        }
        self.rect((x0, y), (x1, y + h), fill);
        if let Some(label) = labels
            .iter()
            .find(|l| width_of(l, SMALL, false) + 8 <= x1 - x0)
        {
            self.styled(
                label.as_str(),
                ((x0 + x1) / 2, y + h / 2),
                SMALL,
                (HPos::Center, VPos::Center),
                ink_on(fill),
                false,
            );
        }
    }

    /// A row's label at the left margin, centred on `mid`.
    fn row_label(&mut self, name: &str, mid: i32) {
        self.text(name, (MARGIN, mid), BODY, (HPos::Left, VPos::Center));
    }

    /// The gridlines of a 0–100% axis from `top` to `bottom`, each labelled under it; `at`
    /// places a rate.
    fn percent_ticks(&mut self, at: impl Fn(f64) -> i32, top: i32, bottom: i32) {
        for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let x = at(tick);
            self.line(vec![(x, top - 4), (x, bottom)], PALE, 1);
            self.styled(
                percent(tick),
                (x, bottom + 6),
                SMALL,
                (HPos::Center, VPos::Top),
                FAINT,
                false,
            );
        }
    }

    /// An interval's whisker from `lx` to `hx` at height `y`, with its end caps.
    fn whisker(&mut self, lx: i32, hx: i32, y: i32) {
        self.line(vec![(lx, y), (hx, y)], INK, 2);
        self.line(vec![(lx, y - 4), (lx, y + 4)], INK, 2);
        self.line(vec![(hx, y - 4), (hx, y + 4)], INK, 2);
    }

    /// The text at the end of a row, left at `x`, centred on `mid`; returns its width.
    fn row_end(&mut self, text: String, x: i32, mid: i32) -> i32 {
        let width = width_of(&text, SMALL, false);
        self.styled(
            text,
            (x, mid),
            SMALL,
            (HPos::Left, VPos::Center),
            INK,
            false,
        );
        width
    }

    /// The rate axis at `x0` from `top` to `bottom`, and the sheet sized to hold the plot
    /// ending at `x1` with texts `right` wide after it.
    fn close_rate_plot(&mut self, x0: i32, x1: i32, top: i32, bottom: i32, right: i32) {
        self.line(vec![(x0, top - 4), (x0, bottom)], INK, 1);
        self.width = self.width.max(to_u32(x1 + 12 + right + MARGIN));
        self.height = to_u32(bottom + 30 + MARGIN / 2);
    }

    fn paint<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        area.fill(&WHITE).map_err(err)?;
        for shape in &self.shapes {
            match shape {
                Shape::Rect { from, to, fill } => {
                    area.draw(&Rectangle::new([*from, *to], fill.filled()))
                }
                Shape::Frame { from, to, color } => {
                    area.draw(&Rectangle::new([*from, *to], color.stroke_width(1)))
                }
                Shape::Line {
                    points,
                    color,
                    width,
                } => area.draw(&PathElement::new(
                    points.clone(),
                    color.stroke_width(*width),
                )),
                Shape::Text {
                    text,
                    at,
                    size,
                    anchor,
                    color,
                    bold,
                } => {
                    let style = TextStyle::from(font(*size, *bold))
                        .color(color)
                        .pos(Pos::new(anchor.0, anchor.1));
                    area.draw(&Text::new(text.as_str(), *at, style))
                }
            }
            .map_err(err)?;
        }
        area.present().map_err(err)
    }

    /// The figure as SVG text.
    pub fn svg(&self) -> Result<String, String> {
        let mut text = String::new();
        {
            let area =
                SVGBackend::with_string(&mut text, (self.width, self.height)).into_drawing_area();
            self.paint(&area)?;
        }
        Ok(text)
    }

    /// Writes the figure as a PNG file.
    fn png(&self, path: &Path) -> Result<(), String> {
        let area = BitMapBackend::new(path, (self.width, self.height)).into_drawing_area();
        self.paint(&area)
    }
}

fn to_u32(v: i32) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(0)
}

/// The figures report.md links: all but the claims figure, which needs a claim, and the
/// ran-port figure, which needs a graded trial that records whether its agent ran its port.
pub fn drawn(report: &Report) -> Vec<Kind> {
    Kind::ALL
        .into_iter()
        .filter(|k| match k {
            Kind::Claims => has_claims(report),
            Kind::RanPort => has_ran_port(report),
            _ => true,
        })
        .collect()
}

/// Lays out one figure of `report`; `tasks` gives the grid's rows in order.
pub fn sheet(kind: Kind, report: &Report, tasks: &[String]) -> Result<Sheet, FigureError> {
    fonts()?;
    Ok(match kind {
        Kind::PassRate => pass_rate(report),
        Kind::Failures => failures(report),
        Kind::RanPort => ran_port(report),
        Kind::Grid => grid(report, tasks),
        Kind::Claims => claims(report),
    })
}

/// Writes every figure of `report` under `out/figures/` (SVG and PNG), and removes a claims
/// or ran-port figure that an earlier report drew and this one does not.
pub fn write(out: &Path, report: &Report, tasks: &[String]) -> Result<(), FigureError> {
    let dir = out.join(DIR);
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |source| FigureError::Write { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(fail(&dir))?;
    let drawn = drawn(report);
    for kind in Kind::ALL {
        let svg_path = dir.join(format!("{}.svg", kind.stem()));
        let png_path = dir.join(format!("{}.png", kind.stem()));
        if !drawn.contains(&kind) {
            for path in [&svg_path, &png_path] {
                if path.exists() {
                    std::fs::remove_file(path).map_err(fail(path))?;
                }
            }
            continue;
        }
        let sheet = sheet(kind, report, tasks)?;
        let draw_error = |message| FigureError::Draw {
            figure: kind.stem().to_string(),
            message,
        };
        let svg = sheet.svg().map_err(draw_error)?;
        let tmp = dir.join(format!(".{}.tmp.svg", kind.stem()));
        std::fs::write(&tmp, svg).map_err(fail(&tmp))?;
        std::fs::rename(&tmp, &svg_path).map_err(fail(&svg_path))?;
        let tmp = dir.join(format!(".{}.tmp.png", kind.stem()));
        sheet.png(&tmp).map_err(draw_error)?;
        std::fs::rename(&tmp, &png_path).map_err(fail(&png_path))?;
    }
    Ok(())
}

/// The width of the widest label, and the labels themselves, cut.
fn labels(items: impl Iterator<Item = String>) -> (Vec<String>, i32) {
    let labels: Vec<String> = items.map(|l| short(&l)).collect();
    let widest = labels
        .iter()
        .map(|l| width_of(l, BODY, false))
        .max()
        .unwrap_or(0);
    (labels, widest)
}

fn method_words(method: IntervalMethod) -> &'static str {
    match method {
        IntervalMethod::Wilson => "Wilson",
        IntervalMethod::Bootstrap => "bootstrap over tasks",
    }
}

fn percent(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

/// A rate with its counts and its 95% interval: `75% (3/4), 95%: 30–95%`.
fn rate_text(rate: f64, passed: usize, graded: usize, low: f64, high: f64) -> String {
    format!(
        "{} ({passed}/{graded}), 95%: {}–{}",
        percent(rate),
        percent(low),
        percent(high)
    )
}

/// The agents' labels, cut, in the summary's order, and the width of the widest.
fn agent_labels(report: &Report) -> (Vec<String>, i32) {
    labels(report.summary.iter().map(|a| crate::agent::label(&a.agent)))
}

/// Pass rate per agent: a bar split into phase 1 (blue) and phase 2 (sky blue), the 95%
/// interval as a whisker under it, and the rate and counts at the end of the row.
fn pass_rate(report: &Report) -> Sheet {
    const PLOT: i32 = 420;
    const ROW: i32 = 42;
    const BAR: i32 = 20;
    let mut s = Sheet::new();
    let top = s.heading(
        Kind::PassRate.title(),
        &[format!(
            "Passed / graded trials, split by the phase that passed; whisker: 95% interval ({}).",
            method_words(report.interval_method)
        )],
    );
    let (names, widest) = agent_labels(report);
    let x0 = MARGIN + widest + 12;
    let x1 = x0 + PLOT;
    let at = |v: f64| x0 + (v.clamp(0.0, 1.0) * f64::from(PLOT)).round() as i32;
    let bottom = top + ROW * report.summary.len() as i32;
    s.percent_ticks(at, top, bottom);
    let mut right = 0;
    for (i, (a, name)) in report.summary.iter().zip(&names).enumerate() {
        let y = top + ROW * i as i32 + 4;
        let mid = y + BAR / 2;
        let whisker = y + BAR + 8;
        s.row_label(name, mid);
        let end_text = if a.graded == 0 {
            "no graded trial".to_string()
        } else {
            let graded = a.graded as f64;
            let p1 = a.passed_phase1 as f64 / graded;
            let p2 = a.passed_phase2 as f64 / graded;
            s.segment(
                at(0.0),
                at(p1),
                y,
                BAR,
                BLUE,
                &[format!("phase 1: {}", percent(p1)), percent(p1)],
            );
            s.segment(
                at(p1),
                at(p1 + p2),
                y,
                BAR,
                SKY,
                &[format!("phase 2: {}", percent(p2)), percent(p2)],
            );
            let [low, high] = a.pass_rate_ci95;
            s.whisker(at(low), at(high), whisker);
            rate_text(a.pass_rate, a.passed, a.graded, low, high)
        };
        right = right.max(s.row_end(end_text, x1 + 12, mid));
    }
    s.close_rate_plot(x0, x1, top, bottom, right);
    s
}

/// Per agent (and all agents together, when there are several), two bars: the pass rate of
/// the graded trials whose agent ran its port (blue) and of those whose agent did not
/// (orange), each with its 95% Wilson interval as a whisker under it; the rates and counts,
/// and the difference with its interval, at the end of the rows.
fn ran_port(report: &Report) -> Sheet {
    const PLOT: i32 = 420;
    const ROW: i32 = 40;
    const BAR: i32 = 18;
    const NOTE: i32 = 22;
    const GAP: i32 = 12;
    const GROUP: i32 = 2 * ROW + NOTE + GAP;
    let mut s = Sheet::new();
    let top = s.heading(
        Kind::RanPort.title(),
        &[
            "Graded trials whose agent ran its port in some phase, and those whose agent did \
             not; whisker: 95% interval (Wilson)."
                .to_string(),
            "Trials that do not record it are left out.".to_string(),
        ],
    );
    // The line of all agents together only when it adds to the agents' own.
    let last = report.ran_port.len().saturating_sub(1);
    let shown: Vec<(String, &RanPortLine)> = report
        .ran_port
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let overall = i == last && l.agent == ALL_AGENTS;
            if overall && report.summary.len() < 2 {
                None
            } else if overall {
                Some(("all agents".to_string(), l))
            } else {
                Some((crate::agent::label(&l.agent), l))
            }
        })
        .collect();
    let (names, widest) = labels(shown.iter().map(|(name, _)| name.clone()));
    let groups = ["ran its port", "did not run it"];
    let group_width = groups
        .iter()
        .map(|g| width_of(g, SMALL, false))
        .max()
        .unwrap_or(0);
    let x0 = MARGIN + widest + 12 + group_width + 12;
    let x1 = x0 + PLOT;
    let at = |v: f64| x0 + (v.clamp(0.0, 1.0) * f64::from(PLOT)).round() as i32;
    let bottom = top + GROUP * shown.len() as i32 - GAP;
    s.percent_ticks(at, top, bottom);
    let mut right = 0;
    for (i, ((_, line), name)) in shown.iter().zip(&names).enumerate() {
        let y0 = top + GROUP * i as i32;
        s.row_label(name, y0 + ROW);
        let bars: [(&Share, RGBColor, &str); 2] = [
            (&line.ran, BLUE, groups[0]),
            (&line.did_not, ORANGE, groups[1]),
        ];
        for (j, (share, fill, words)) in bars.into_iter().enumerate() {
            let y = y0 + ROW * j as i32 + 4;
            let mid = y + BAR / 2;
            let whisker = y + BAR + 8;
            s.styled(
                words,
                (MARGIN + widest + 12, mid),
                SMALL,
                (HPos::Left, VPos::Center),
                FAINT,
                false,
            );
            let end_text = match share.rate {
                None => "no graded trial".to_string(),
                Some(rate) => {
                    if at(rate) > at(0.0) {
                        s.rect((at(0.0), y), (at(rate), y + BAR), fill);
                    }
                    s.whisker(at(share.low), at(share.high), whisker);
                    rate_text(rate, share.passed, share.graded, share.low, share.high)
                }
            };
            right = right.max(s.row_end(end_text, x1 + 12, mid));
        }
        let note = match line.difference {
            Some(d) => format!(
                "difference: {:+.0} points, 95%: {:+.0} to {:+.0}",
                d.points, d.low, d.high
            ),
            None => "difference: needs graded trials of both".to_string(),
        };
        right = right.max(width_of(&note, SMALL, false));
        s.styled(
            note,
            (x1 + 12, y0 + 2 * ROW + NOTE / 2 - 4),
            SMALL,
            (HPos::Left, VPos::Center),
            FAINT,
            false,
        );
    }
    s.close_rate_plot(x0, x1, top, bottom, right);
    s
}

/// The colour of a grader's failure class.
fn class_colour(class: FailureClass) -> RGBColor {
    match class {
        FailureClass::Bypass => VERMILLION,
        FailureClass::Crash => PURPLE,
        FailureClass::MissedEval => ORANGE,
        FailureClass::FidelityGap => YELLOW,
    }
}

/// How a failed trial is drawn in the grid: its letter, its colour, and what the key says of
/// it.
fn mark(failure: TrialFailure) -> (&'static str, RGBColor, &'static str) {
    match failure {
        TrialFailure::Graded(class) => {
            let letter = match class {
                FailureClass::Bypass => "B",
                FailureClass::Crash => "C",
                FailureClass::MissedEval => "M",
                FailureClass::FidelityGap => "F",
            };
            (letter, class_colour(class), class.as_str())
        }
        TrialFailure::NoVerdict(NoVerdict::Timeout) => ("T", GREY, "timeout"),
        TrialFailure::NoVerdict(NoVerdict::Infra) => ("I", PALE, "infrastructure failure"),
        TrialFailure::NoVerdict(NoVerdict::AgentFailure) => ("A", PALE, "agent failure"),
        TrialFailure::NoVerdict(NoVerdict::Interrupted) => ("X", PALE, "interrupted"),
    }
}

/// Failed trials per agent by class: one panel per class (its name on top), one bar per
/// agent, the count at the bar's end; every panel on the same scale.
fn failures(report: &Report) -> Sheet {
    const PANEL: i32 = 150;
    const GAP: i32 = 18;
    const ROW: i32 = 30;
    const BAR: i32 = 18;
    let mut s = Sheet::new();
    let top = s.heading(
        Kind::Failures.title(),
        &["Graded trials that failed, by class, of the agent's graded trials.".to_string()],
    );
    let (names, widest) = agent_labels(report);
    let x0 = MARGIN + widest + 12;
    let most = report
        .summary
        .iter()
        .flat_map(|a| {
            FailureClass::VARIANTS
                .iter()
                .map(|c| a.failures.get(&TrialFailure::Graded(*c)).copied())
        })
        .map(Option::unwrap_or_default)
        .max()
        .unwrap_or(0)
        .max(1);
    let rows_top = top + 26;
    let bottom = rows_top + ROW * report.summary.len() as i32;
    for (i, name) in names.iter().enumerate() {
        let mid = rows_top + ROW * i as i32 + ROW / 2;
        s.row_label(name, mid);
    }
    for (k, class) in FailureClass::VARIANTS.iter().enumerate() {
        let px = x0 + (PANEL + GAP) * k as i32;
        s.styled(
            class.as_str(),
            (px, top),
            BODY,
            (HPos::Left, VPos::Top),
            INK,
            true,
        );
        s.line(vec![(px, rows_top), (px, bottom)], INK, 1);
        for (i, a) in report.summary.iter().enumerate() {
            let count = a
                .failures
                .get(&TrialFailure::Graded(*class))
                .copied()
                .unwrap_or(0);
            let y = rows_top + ROW * i as i32 + (ROW - BAR) / 2;
            let length = (count as f64 / most as f64 * f64::from(PANEL - 50)).round() as i32;
            if count > 0 {
                s.rect((px, y), (px + length, y + BAR), class_colour(*class));
            }
            let label = if a.graded > 0 && count > 0 {
                format!("{count} ({})", percent(count as f64 / a.graded as f64))
            } else {
                count.to_string()
            };
            s.styled(
                label,
                (px + length + 4, y + BAR / 2),
                SMALL,
                (HPos::Left, VPos::Center),
                if count > 0 { INK } else { FAINT },
                false,
            );
        }
    }
    let panels = x0 + (PANEL + GAP) * FailureClass::VARIANTS.len() as i32 - GAP;
    s.width = s.width.max(to_u32(panels + MARGIN));
    s.height = to_u32(bottom + MARGIN);
    s
}

/// A trial's outcome as a letter and a colour.
fn outcome(t: &TrialRow) -> (&'static str, RGBColor) {
    match (t.failure, t.passed_in_phase) {
        (None, Some(2)) => ("2", SKY),
        (None, _) => ("1", BLUE),
        (Some(failure), _) => {
            let (letter, colour, _) = mark(failure);
            (letter, colour)
        }
    }
}

/// What each letter of the grid means: the two passes, then every failure.
fn key() -> Vec<(&'static str, &'static str)> {
    let passes = [("1", "passed in phase 1"), ("2", "passed in phase 2")];
    let failures = TrialFailure::all().map(|f| {
        let (letter, _, meaning) = mark(f);
        (letter, meaning)
    });
    passes.into_iter().chain(failures).collect()
}

/// Tasks × agents, one lettered square per repeat, coloured by the trial's outcome.
fn grid(report: &Report, tasks: &[String]) -> Sheet {
    const SQUARE: i32 = 20;
    const STEP: i32 = 24;
    const ROW: i32 = 30;
    let mut s = Sheet::new();
    let letters: Vec<&str> = report.trials.iter().map(|t| outcome(t).0).collect();
    let key: Vec<String> = key()
        .iter()
        .filter(|(letter, _)| letters.contains(letter))
        .map(|(letter, words)| format!("{letter} {words}"))
        .collect::<Vec<_>>()
        .chunks(5)
        .map(|c| c.join(" · "))
        .collect();
    let mut lines = vec!["One square per repeat, lettered by outcome:".to_string()];
    lines.extend(key);
    let top = s.heading(Kind::Grid.title(), &lines);
    let (task_names, widest) = labels(tasks.iter().cloned());
    let (agent_names, _) = agent_labels(report);
    let repeats = report
        .trials
        .iter()
        .map(|t| t.repeat)
        .max()
        .unwrap_or(1)
        .max(1) as i32;
    let widths: Vec<i32> = agent_names
        .iter()
        .map(|n| (width_of(n, SMALL, true) + 16).max(repeats * STEP + 12))
        .collect();
    let x0 = MARGIN + widest + 12;
    let rows_top = top + 26;
    let mut x = x0;
    for (a, (summary, name)) in report.summary.iter().zip(&agent_names).enumerate() {
        let w = widths[a];
        s.styled(
            name.as_str(),
            (x + w / 2, top),
            SMALL,
            (HPos::Center, VPos::Top),
            INK,
            true,
        );
        for (r, task) in tasks.iter().enumerate() {
            let y = rows_top + ROW * r as i32 + (ROW - SQUARE) / 2;
            let left = x + (w - repeats * STEP + (STEP - SQUARE)) / 2;
            for repeat in 1..=repeats {
                let sx = left + STEP * (repeat - 1);
                let trial = report.trials.iter().find(|t| {
                    &t.task == task && t.agent == summary.agent && t.repeat as i32 == repeat
                });
                match trial {
                    Some(t) => {
                        let (letter, fill) = outcome(t);
                        s.rect((sx, y), (sx + SQUARE, y + SQUARE), fill);
                        s.styled(
                            letter,
                            (sx + SQUARE / 2, y + SQUARE / 2),
                            SMALL,
                            (HPos::Center, VPos::Center),
                            ink_on(fill),
                            true,
                        );
                    }
                    None => s.frame((sx, y), (sx + SQUARE, y + SQUARE), PALE),
                }
            }
        }
        x += w;
    }
    for (r, name) in task_names.iter().enumerate() {
        let mid = rows_top + ROW * r as i32 + ROW / 2;
        s.row_label(name, mid);
    }
    s.width = s.width.max(to_u32(x + MARGIN));
    s.height = to_u32(rows_top + ROW * tasks.len() as i32 + MARGIN);
    s
}

/// Per agent, its graded phases with a claim, split four ways: claimed success and passed
/// (blue), claimed success and failed, the overclaims (vermillion), did not claim success and
/// failed (grey), did not claim and passed (sky blue).
fn claims(report: &Report) -> Sheet {
    const PLOT: i32 = 420;
    const ROW: i32 = 36;
    const BAR: i32 = 20;
    let mut s = Sheet::new();
    let top = s.heading(
        Kind::Claims.title(),
        &[
            "Graded phases in which the agent said whether it succeeded.".to_string(),
            "Blue: claimed success, passed · vermillion: claimed success, failed (overclaim) · \
             grey: no claim of success, failed · sky blue: no claim of success, passed."
                .to_string(),
        ],
    );
    let (names, widest) = agent_labels(report);
    let x0 = MARGIN + widest + 12;
    let x1 = x0 + PLOT;
    let mut right = 0;
    for (i, (a, name)) in report.summary.iter().zip(&names).enumerate() {
        let y = top + ROW * i as i32 + (ROW - BAR) / 2;
        let mid = y + BAR / 2;
        s.row_label(name, mid);
        let phases: Vec<(bool, bool)> = report
            .trials
            .iter()
            .filter(|t| t.agent == a.agent)
            .flat_map(|t| &t.agent_outcome)
            .filter_map(|p| Some((p.claimed_success()?, p.passed()?)))
            .collect();
        let count =
            |claim: bool, pass: bool| phases.iter().filter(|p| **p == (claim, pass)).count();
        let parts = [
            (count(true, true), BLUE, "claimed, passed"),
            (count(true, false), VERMILLION, "overclaim"),
            (count(false, false), GREY, "no claim, failed"),
            (count(false, true), SKY, "no claim, passed"),
        ];
        let total = phases.len();
        let mut x = x0;
        for (n, fill, words) in parts {
            if total == 0 || n == 0 {
                continue;
            }
            let w = (n as f64 / total as f64 * f64::from(PLOT)).round() as i32;
            s.segment(
                x,
                x + w,
                y,
                BAR,
                fill,
                &[format!("{words}: {n}"), n.to_string()],
            );
            x += w;
        }
        let end_text = match a.overclaim_rate {
            Some(rate) => format!(
                "overclaims {}/{} ({})",
                a.overclaims,
                a.claims,
                percent(rate)
            ),
            None if total == 0 => "no claim recorded".to_string(),
            None => "never claimed success".to_string(),
        };
        right = right.max(s.row_end(end_text, x1 + 12, mid));
    }
    s.width = s.width.max(to_u32(x1 + 12 + right + MARGIN));
    s.height = to_u32(top + ROW * report.summary.len() as i32 + MARGIN);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::{PhaseAgent, build};
    use crate::task::Migration;
    use serde_json::{Map, json};

    fn trial(task: &str, agent: &str, repeat: u32, outcome: &str, claim: Option<bool>) -> TrialRow {
        let (passed_in_phase, failure) = match outcome {
            "1" => (Some(1), None),
            "2" => (Some(2), None),
            other => (
                None,
                Some(TrialFailure::parse(other).expect("a failure's name")),
            ),
        };
        let verdicts: &[&str] = match outcome {
            "1" => &["pass"],
            "2" => &["fail", "pass"],
            "infra" | "agent_failure" | "interrupted" => &[],
            _ => &["fail", "fail"],
        };
        let agent_outcome = verdicts
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut fields = Map::new();
                if let Some(claim) = claim {
                    fields.insert("claimed_success".into(), json!(claim));
                }
                PhaseAgent {
                    phase: (i + 1) as u8,
                    outcome: crate::event::PhaseOutcome::Graded,
                    verdict: serde_json::from_value(json!(v)).unwrap(),
                    ran_port: None,
                    outcome_detail: None,
                    agent: fields,
                }
            })
            .collect();
        TrialRow {
            task: task.into(),
            migration: Migration::default(),
            upstream: None,
            agent: agent.into(),
            repeat,
            passed: failure.is_none(),
            passed_in_phase,
            failure,
            duration_s: 1.0,
            run_dir: "x".into(),
            runner: None,
            job_id: None,
            queue_s: None,
            ran_port: None,
            agent_outcome,
            timing: None,
        }
    }

    /// Two tasks × three agents × two repeats, every outcome, claims from one agent; with
    /// `recorded`, claims and whether each agent ran its port, else neither.
    fn fixed(recorded: bool) -> (Report, Vec<String>) {
        let cells = [
            ("digits-mlp", "claude", ["1", "2"]),
            (
                "digits-mlp",
                "script:agents/a-rather-long-trajectory-name.jsonl",
                ["bypass", "fidelity_gap"],
            ),
            ("digits-mlp", "cmd:my-agent --fast", ["crash", "infra"]),
            ("char-transformer", "claude", ["fidelity_gap", "1"]),
            (
                "char-transformer",
                "script:agents/a-rather-long-trajectory-name.jsonl",
                ["missed_eval", "timeout"],
            ),
            (
                "char-transformer",
                "cmd:my-agent --fast",
                ["2", "agent_failure"],
            ),
        ];
        let rows = cells
            .iter()
            .flat_map(|(task, agent, outcomes)| {
                outcomes.iter().enumerate().map(move |(i, o)| {
                    let claim = (recorded && *agent == "claude").then_some(i == 0);
                    let mut row = trial(task, agent, (i + 1) as u32, o, claim);
                    // Claude ran its port in its first repeats, the script never, the
                    // command always.
                    let ran = recorded.then_some(match *agent {
                        "claude" => i == 0,
                        "cmd:my-agent --fast" => true,
                        _ => false,
                    });
                    for phase in &mut row.agent_outcome {
                        phase.ran_port = ran;
                    }
                    row.ran_port = ran;
                    row
                })
            })
            .collect();
        let agents = [
            "claude",
            "script:agents/a-rather-long-trajectory-name.jsonl",
            "cmd:my-agent --fast",
        ]
        .map(String::from)
        .to_vec();
        let tasks = ["digits-mlp", "char-transformer"]
            .map(String::from)
            .to_vec();
        (build(rows, &agents), tasks)
    }

    #[test]
    fn every_failure_has_a_letter_a_colour_a_key_row_and_a_panel() {
        let key = key();
        let mut letters = vec!["1", "2"];
        for failure in TrialFailure::all() {
            let (letter, _, meaning) = mark(failure);
            assert!(!letters.contains(&letter), "{failure:?}: {letter} is taken");
            letters.push(letter);
            assert!(
                key.contains(&(letter, meaning)),
                "{failure:?} has no key row"
            );
        }
        assert_eq!(key.len(), letters.len());
        // Each grader's class has a colour of its own, not the grey of a trial without a
        // verdict, and a panel in the failures figure.
        let colours: Vec<RGBColor> = FailureClass::VARIANTS
            .iter()
            .map(|c| class_colour(*c))
            .collect();
        for (i, colour) in colours.iter().enumerate() {
            let class = FailureClass::VARIANTS[i];
            assert!(![GREY, PALE].contains(colour), "{class:?} is grey");
            assert!(!colours[..i].contains(colour), "{class:?} shares a colour");
            assert_eq!(mark(TrialFailure::Graded(class)).1, *colour);
        }
        let (report, tasks) = fixed(true);
        let svg = sheet(Kind::Failures, &report, &tasks)
            .unwrap()
            .svg()
            .unwrap();
        for class in FailureClass::VARIANTS {
            assert!(
                svg.contains(&format!("\n{}\n", class.as_str())),
                "{class:?}"
            );
        }
    }

    #[test]
    fn every_figure_is_drawn_from_the_report() {
        let (report, tasks) = fixed(true);
        assert_eq!(drawn(&report), Kind::ALL.to_vec());
        for kind in Kind::ALL {
            let svg = sheet(kind, &report, &tasks).unwrap().svg().unwrap();
            insta::assert_snapshot!(kind.stem(), svg);
        }
    }

    #[test]
    fn the_same_report_gives_the_same_files_and_no_claims_no_claims_figure() {
        let (report, tasks) = fixed(true);
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(one.path(), &report, &tasks).unwrap();
        write(two.path(), &report, &tasks).unwrap();
        let files = |dir: &Path| -> Vec<(String, Vec<u8>)> {
            let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(DIR))
                .unwrap()
                .map(|e| e.unwrap().path())
                .map(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    (name, std::fs::read(&p).unwrap())
                })
                .collect();
            files.sort();
            files
        };
        let first = files(one.path());
        assert_eq!(first, files(two.path()));
        let names: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "claims.png",
                "claims.svg",
                "failures.png",
                "failures.svg",
                "grid.png",
                "grid.svg",
                "pass_rate.png",
                "pass_rate.svg",
                "ran_port.png",
                "ran_port.svg"
            ]
        );
        for (name, bytes) in &first {
            if name.ends_with(".png") {
                assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}");
            }
        }

        // Without a claim the claims figure is not drawn, nor without a record of the port's
        // runs the ran-port figure, and earlier ones are removed.
        let (without, tasks) = fixed(false);
        assert_eq!(
            drawn(&without),
            [Kind::PassRate, Kind::Failures, Kind::Grid]
        );
        write(one.path(), &without, &tasks).unwrap();
        for name in ["claims.svg", "claims.png", "ran_port.svg", "ran_port.png"] {
            assert!(!one.path().join(DIR).join(name).exists(), "{name}");
        }
    }
}

//! Where each part of a frame goes: the five panes (or, zoomed, one; or, on a compact
//! screen, the focused one and a summary line for each other), the phase bar, replay's
//! timeline, the status line and the key hint. A function of the screen's area and the view
//! state alone, shared by drawing, the scene's copy and the terminals' sizes.

use ratatui::layout::{Constraint, Direction, Layout, Rect};

use super::app::{App, PaneId, PaneMap};

/// Where each part of a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLayout {
    /// The five panes (only the focused one when zoomed or compact; the others are empty).
    pub panes: PaneMap<Rect>,
    /// On a compact screen, a one-line summary for each pane but the focused one (empty
    /// otherwise).
    pub summaries: PaneMap<Rect>,
    /// The phase bar.
    pub phase_bar: Rect,
    /// Replay's timeline bar (empty in a live session).
    pub timeline: Rect,
    /// The status line.
    pub status: Rect,
    /// The key hint.
    pub hint: Rect,
}

impl FrameLayout {
    /// The layout of a frame of `area` as `view` shows it (zoom, replay's timeline).
    pub fn of(area: Rect, view: &App) -> FrameLayout {
        let chunks = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Min(4),
                Constraint::Length(1),
                Constraint::Length(u16::from(!view.live)),
                Constraint::Length(1),
                Constraint::Length(1),
            ])
            .split(area);
        let main = chunks[0];
        let mut summaries = PaneMap::default();
        let panes = if view.zoom {
            let mut r = PaneMap::default();
            r[view.focus] = main;
            r
        } else if is_compact(area) {
            let (big, lines) = compact_layout(main);
            let mut r = PaneMap::default();
            r[view.focus] = big;
            let others = PaneId::ALL.into_iter().filter(|p| *p != view.focus);
            for (pane, line) in others.zip(lines) {
                summaries[pane] = line;
            }
            r
        } else {
            pane_layout(main)
        };
        FrameLayout {
            panes,
            summaries,
            phase_bar: chunks[1],
            timeline: chunks[2],
            status: chunks[3],
            hint: chunks[4],
        }
    }

    /// Where each pane can be clicked: its rectangle, or on a compact screen its summary line.
    pub fn targets(&self) -> PaneMap<Rect> {
        PaneMap::from_fn(|pane| {
            if self.panes[pane].area() > 0 {
                self.panes[pane]
            } else {
                self.summaries[pane]
            }
        })
    }
}

/// Below this many columns, or this many rows, the screen is compact: the focused pane, and a
/// line for each of the others, rather than five panes squeezed.
pub const COMPACT_BELOW: (u16, u16) = (100, 30);

/// Whether a screen of `area` is compact.
pub fn is_compact(area: Rect) -> bool {
    area.width < COMPACT_BELOW.0 || area.height < COMPACT_BELOW.1
}

/// The focused pane's rectangle and the four summary lines below it, for the panes' area
/// of a compact screen (no summaries where the area is too short to spare them).
fn compact_layout(main: Rect) -> (Rect, Vec<Rect>) {
    let lines = if main.height >= 10 { 4 } else { 0 };
    let big = Rect::new(main.x, main.y, main.width, main.height - lines);
    let rows = (0..lines)
        .map(|i| Rect::new(main.x, big.bottom() + i, main.width, 1))
        .collect();
    (big, rows)
}

/// The rectangles of the five panes for a terminal area (unzoomed).
pub fn pane_layout(area: Rect) -> PaneMap<Rect> {
    let rows = Layout::default()
        .direction(Direction::Vertical)
        .constraints([Constraint::Percentage(55), Constraint::Percentage(45)])
        .split(area);
    let top = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(50), Constraint::Percentage(50)])
        .split(rows[0]);
    let bottom = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([
            Constraint::Percentage(40),
            Constraint::Percentage(35),
            Constraint::Percentage(25),
        ])
        .split(rows[1]);
    PaneMap::from_fn(|pane| match pane {
        PaneId::Agent => top[0],
        PaneId::Diff => top[1],
        PaneId::RunLog => bottom[0],
        PaneId::Metrics => bottom[1],
        PaneId::Verdict => bottom[2],
    })
}

/// The inner size (columns, rows) of the Agent and Run log panes for a terminal size; the
/// UI resizes the PTYs to these.
pub fn terminal_sizes(width: u16, height: u16, app: &App) -> ((u16, u16), (u16, u16)) {
    let main = Rect::new(0, 0, width, height.saturating_sub(3 + u16::from(!app.live)));
    // On a compact screen either terminal, when focused, fills the big pane: both are sized
    // to it, so moving the focus resizes nothing.
    let rects = if is_compact(Rect::new(0, 0, width, height)) {
        let (big, _) = compact_layout(main);
        PaneMap::from_fn(|_| big)
    } else {
        pane_layout(main)
    };
    let inner = |r: Rect, zoomed: bool| {
        let r = if zoomed { main } else { r };
        (
            r.width.saturating_sub(2).max(10),
            r.height.saturating_sub(2).max(2),
        )
    };
    (
        inner(rects[PaneId::Agent], app.zoom && app.focus == PaneId::Agent),
        inner(
            rects[PaneId::RunLog],
            app.zoom && app.focus == PaneId::RunLog,
        ),
    )
}

/// The width of a summary line's label (` 3 Run log `).
pub const SUMMARY_LABEL: u16 = 12;

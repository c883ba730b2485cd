//! What one frame draws, copied out of the session state while its lock is held: the small
//! parts of the state as they are, and of each terminal only the rows its pane shows. The
//! frame is then drawn from this copy alone, holding no lock and changing nothing.

use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders};

use crate::event::{Mode, SessionTask, Stage};
use crate::replay::Player;
use crate::session::state::{FinishInfo, PhaseRecord, SessionState};

use super::app::{App, PaneId};
use super::panes::TerminalView;

/// Where a replay stands, for the timeline bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Playback {
    /// Whether playback advances with the clock.
    pub playing: bool,
    /// The position in seconds.
    pub position: f64,
    /// The time of the last event.
    pub end: f64,
    /// The playback speed.
    pub speed: f64,
    /// Times and labels of stage changes, verdicts and the end.
    pub markers: Vec<(f64, String)>,
}

impl Playback {
    /// Where `player` stands.
    pub fn of(player: &Player) -> Playback {
        Playback {
            playing: player.playing,
            position: player.position(),
            end: player.end(),
            speed: player.speed,
            markers: player.markers().to_vec(),
        }
    }
}

/// The copy of the session state one frame draws.
#[derive(Debug, Clone)]
pub struct Scene {
    /// The task.
    pub task: SessionTask,
    /// Current phase (0 = setup).
    pub phase: u8,
    /// Current stage.
    pub stage: Stage,
    /// Step or auto.
    pub mode: Mode,
    /// What the session waits for, if anything.
    pub waiting: Option<String>,
    /// The verify run's job while it waits in a runner's queue.
    pub queued: Option<String>,
    /// Whether the agent is paused.
    pub paused: bool,
    /// Session time of the latest event.
    pub now: f64,
    /// Set once the session ended.
    pub finished: Option<FinishInfo>,
    /// Per-phase records, index 0 = phase 1.
    pub phases: Vec<PhaseRecord>,
    /// The rows the Agent pane shows of the agent's terminal.
    pub agent: TerminalView,
    /// The rows the Run log pane shows of the verify run's terminal.
    pub run: TerminalView,
    /// Where a replay stands (None in a live session).
    pub playback: Option<Playback>,
}

impl Scene {
    /// Copies what a frame with the panes at `panes` needs from `state`, as `view` shows it.
    pub fn capture(state: &SessionState, view: &App, panes: &[Rect; 5]) -> Scene {
        let terminal = |pane: PaneId, screen| {
            let inner = Block::default()
                .borders(Borders::ALL)
                .inner(panes[pane.index()]);
            TerminalView::capture(screen, view.scroll[pane.index()], inner.width, inner.height)
        };
        Scene {
            task: state.task.clone(),
            phase: state.phase,
            stage: state.stage,
            mode: state.mode,
            waiting: state.waiting.clone(),
            queued: state.queued.clone(),
            paused: state.paused,
            now: state.now,
            finished: state.finished.clone(),
            phases: state.phases.clone(),
            agent: if view.agent_transcript {
                TerminalView::default()
            } else {
                terminal(PaneId::Agent, &state.agent_screen)
            },
            run: terminal(PaneId::RunLog, &state.run_screen),
            playback: None,
        }
    }

    /// The record of `phase` (1-based), if it exists.
    pub fn phase(&self, phase: u8) -> Option<&PhaseRecord> {
        self.phases.get(usize::from(phase.max(1)) - 1)
    }
}

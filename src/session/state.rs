//! The session state and its pure reducer: `apply(t, &event)` is the only way state
//! changes, so the live TUI, headless runs, replay and tests all see the same thing.

use std::collections::BTreeMap;

use crate::agent::transcript::TranscriptItem;
use crate::grade::Verdict;
use crate::metrics::{Point, Series};
use crate::pty::screen::Screen;

use super::event::{
    Event, FileContent, Interruption, MetricPoint, Mode, PhaseOutcome, SessionTask, Stage,
    TerminalPane,
};

/// Default size of a terminal pane before the UI says otherwise.
pub const DEFAULT_COLS: u16 = 120;
/// Default height of a terminal pane.
pub const DEFAULT_ROWS: u16 = 36;

/// What happened in one phase.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseRecord {
    /// The prompt sent at the start of the phase.
    pub prompt: Option<String>,
    /// Metric series of the latest verify run, by metric name.
    pub metrics: BTreeMap<String, Series>,
    /// The verdict, once graded.
    pub verdict: Option<Verdict>,
    /// Exit code of the verify run.
    pub exit_code: Option<i32>,
    /// Seconds the verify run took.
    pub duration_s: f64,
    /// Session time when the phase's migrate stage started.
    pub started_at: Option<f64>,
    /// What the agent reported in its structured output during the phase.
    pub transcript: Vec<TranscriptItem>,
    /// How the phase ended when it was not graded, with the agent's or runner's message.
    pub outcome: Option<(PhaseOutcome, Option<String>)>,
    /// The verify run's job on a runner with a queue (Slurm), when it had one.
    pub job: Option<RunnerJob>,
}

/// A phase's verify job on a runner with a queue.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunnerJob {
    /// The runner's spec.
    pub runner: String,
    /// The scheduler's job id (of the phase's latest verify run).
    pub job_id: String,
    /// Seconds the phase's verify runs waited in the queue before they started.
    pub queue_s: f64,
}

impl PhaseRecord {
    /// The agent's own last word on the phase (its final message and whether it reported
    /// success), when its output is structured.
    pub fn claim(&self) -> Option<(&str, bool)> {
        self.transcript.iter().rev().find_map(|item| match item {
            TranscriptItem::Final { text, success } => Some((text.as_str(), *success)),
            _ => None,
        })
    }

    /// Tokens in, tokens out and cost (when reported) of the phase's agent invocations.
    pub fn usage(&self) -> Option<(u64, u64, Option<f64>)> {
        let mut total: Option<(u64, u64, Option<f64>)> = None;
        for item in &self.transcript {
            if let TranscriptItem::Usage {
                input_tokens,
                output_tokens,
                cost_usd,
            } = item
            {
                let (i, o, c) = total.unwrap_or((0, 0, None));
                let cost = match (c, cost_usd) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
                };
                total = Some((i + input_tokens, o + output_tokens, cost));
            }
        }
        total
    }
}

/// A line of the timeline: session time and text.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEntry {
    /// Seconds since the session started.
    pub t: f64,
    /// Description.
    pub text: String,
}

/// How the session ended.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishInfo {
    /// Whether it passed.
    pub passed: bool,
    /// The phase that passed.
    pub passed_in_phase: Option<u8>,
    /// The exit status.
    pub exit_code: i32,
    /// Why it ended early.
    pub error: Option<String>,
    /// What interrupted it.
    pub interrupted: Option<Interruption>,
}

/// Everything the panes draw from.
#[derive(Debug, Clone)]
pub struct SessionState {
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
    /// Whether the agent is paused.
    pub paused: bool,
    /// Whether an agent process is running.
    pub agent_running: bool,
    /// Whether a verify run is running.
    pub run_running: bool,
    /// While the verify run's job waits in a runner's queue: its state
    /// (`queued on slurm: job 12, PENDING (Resources)`).
    pub queued: Option<String>,
    /// The agent's terminal.
    pub agent_screen: Screen,
    /// The verify run's terminal.
    pub run_screen: Screen,
    /// Per-phase records, index 0 = phase 1.
    pub phases: Vec<PhaseRecord>,
    /// The source repository's files.
    pub baseline: BTreeMap<String, FileContent>,
    /// The workspace's files as last seen.
    pub files: BTreeMap<String, FileContent>,
    /// The previous version of each changed file (for "against the agent's previous change").
    pub previous: BTreeMap<String, Option<FileContent>>,
    /// Files in the order they last changed (most recent last).
    pub change_order: Vec<String>,
    /// Bumped whenever the baseline or a workspace file changes.
    pub files_version: u64,
    /// Notable events.
    pub timeline: Vec<TimelineEntry>,
    /// Session time of the latest event.
    pub now: f64,
    /// Set once the session ended.
    pub finished: Option<FinishInfo>,
    /// Bumped on every applied event.
    pub version: u64,
}

impl Default for SessionState {
    fn default() -> Self {
        Self::new()
    }
}

impl SessionState {
    /// The state before any event.
    pub fn new() -> Self {
        SessionState {
            task: SessionTask::default(),
            phase: 0,
            stage: Stage::Setup,
            mode: Mode::Auto,
            waiting: None,
            paused: false,
            agent_running: false,
            run_running: false,
            queued: None,
            agent_screen: Screen::new(DEFAULT_COLS, DEFAULT_ROWS),
            run_screen: Screen::new(DEFAULT_COLS, DEFAULT_ROWS),
            phases: Vec::new(),
            baseline: BTreeMap::new(),
            files: BTreeMap::new(),
            previous: BTreeMap::new(),
            change_order: Vec::new(),
            files_version: 0,
            timeline: Vec::new(),
            now: 0.0,
            finished: None,
            version: 0,
        }
    }

    /// The record of `phase` (1-based), created on first use.
    pub fn phase_mut(&mut self, phase: u8) -> &mut PhaseRecord {
        let index = usize::from(phase.max(1)) - 1;
        if self.phases.len() <= index {
            self.phases.resize_with(index + 1, PhaseRecord::default);
        }
        &mut self.phases[index]
    }

    /// About how many bytes the state holds: both screens with their scrollback and the
    /// text of the recorded files (what a replay snapshot costs).
    pub fn held_bytes(&mut self) -> usize {
        let files: usize = self
            .baseline
            .values()
            .chain(self.files.values())
            .map(|f| f.path.len() + f.text.as_ref().map_or(0, String::len))
            .sum();
        self.agent_screen.held_bytes() + self.run_screen.held_bytes() + files
    }

    /// The record of `phase` (1-based), if it exists.
    pub fn phase(&self, phase: u8) -> Option<&PhaseRecord> {
        self.phases.get(usize::from(phase.max(1)) - 1)
    }

    /// Applies one event at session time `t` (seconds).
    pub fn apply(&mut self, t: f64, event: &Event) {
        self.now = self.now.max(t);
        self.version += 1;
        if !matches!(event, Event::Metric { .. } | Event::Metrics { .. })
            && let Some(text) = event.describe()
        {
            self.timeline.push(TimelineEntry { t, text });
        }
        match event {
            Event::Task(task) => {
                self.task = (**task).clone();
            }
            Event::Stage { phase, stage } => {
                self.phase = *phase;
                self.stage = *stage;
                self.waiting = None;
                if *stage == Stage::Migrate {
                    self.phase_mut(*phase).started_at = Some(t);
                }
            }
            Event::Mode { mode } => self.mode = *mode,
            Event::Waiting { what } => self.waiting = what.clone(),
            Event::Note { .. } | Event::Message { .. } => {}
            Event::Baseline { files } => {
                self.baseline = files.iter().map(|f| (f.path.clone(), f.clone())).collect();
                self.files = self.baseline.clone();
                self.files_version += 1;
            }
            Event::FileChanged { file, deleted } => {
                let before = self.files.get(&file.path).cloned();
                self.previous.insert(file.path.clone(), before);
                if *deleted {
                    self.files.remove(&file.path);
                } else {
                    self.files.insert(file.path.clone(), file.clone());
                }
                self.change_order.retain(|p| p != &file.path);
                self.change_order.push(file.path.clone());
                self.files_version += 1;
            }
            Event::Prompt { phase, text } => {
                self.phase_mut(*phase).prompt = Some(text.clone());
            }
            Event::AgentStarted { cols, rows, .. } => {
                self.agent_running = true;
                self.paused = false;
                self.agent_screen = Screen::new(*cols, *rows);
            }
            Event::AgentOutput { text } => self.agent_screen.process(text),
            Event::Transcript { phase, item } => {
                self.phase_mut(*phase).transcript.push(item.clone());
            }
            Event::Resized { pane, cols, rows } => match pane {
                TerminalPane::Agent => self.agent_screen.resize(*cols, *rows),
                TerminalPane::Run => self.run_screen.resize(*cols, *rows),
            },
            Event::AgentExited { .. } => {
                self.agent_running = false;
                self.paused = false;
            }
            Event::Paused { paused } => self.paused = *paused,
            Event::RunStarted {
                phase,
                cols,
                rows,
                seed_check,
                ..
            } => {
                self.run_running = true;
                self.queued = None;
                self.run_screen = Screen::new(*cols, *rows);
                if !seed_check {
                    self.phase_mut(*phase).metrics.clear();
                }
            }
            Event::RunnerJob {
                phase,
                runner,
                job_id,
                state,
                waited_s,
                ..
            } => {
                let record = self.phase_mut(*phase);
                let job = record.job.get_or_insert_with(RunnerJob::default);
                job.runner = runner.clone();
                job.job_id = job_id.clone();
                if state == "RUNNING" {
                    job.queue_s += waited_s;
                    self.queued = None;
                } else {
                    // The Run log shows the wait until the run's terminal replaces it.
                    let text = event.describe().unwrap_or_default();
                    let (rows, cols) = self.run_screen.screen().size();
                    self.run_screen = Screen::new(cols, rows);
                    self.run_screen.process(&format!("{text}\r\n"));
                    self.queued = Some(text);
                }
            }
            Event::RunOutput { text } => self.run_screen.process(text),
            Event::RunExited { .. } => self.run_running = false,
            Event::Metric {
                phase,
                metric,
                point,
            } => {
                self.phase_mut(*phase)
                    .metrics
                    .entry(metric.clone())
                    .or_default()
                    .push(*point);
            }
            Event::Metrics { phase, points } => {
                let index = usize::from((*phase).max(1)) - 1;
                if self.phases.len() <= index {
                    self.phases.resize_with(index + 1, PhaseRecord::default);
                }
                let series = &mut self.phases[index].metrics;
                for &MetricPoint(metric, step, value) in points {
                    let Some(name) = self.task.metrics.get(usize::from(metric)) else {
                        continue;
                    };
                    let point = Point { step, value };
                    match series.get_mut(name) {
                        Some(s) => s.push(point),
                        None => {
                            series.insert(name.clone(), std::iter::once(point).collect());
                        }
                    }
                }
            }
            Event::Graded {
                phase,
                verdict,
                exit_code,
                duration_s,
            } => {
                let record = self.phase_mut(*phase);
                record.verdict = Some(verdict.clone());
                record.exit_code = *exit_code;
                record.duration_s = *duration_s;
            }
            Event::PhaseEnded {
                phase,
                outcome,
                detail,
            } => {
                self.phase_mut(*phase).outcome = Some((*outcome, detail.clone()));
            }
            Event::Finished {
                passed,
                passed_in_phase,
                exit_code,
                error,
                interrupted,
            } => {
                self.stage = Stage::Done;
                self.waiting = None;
                self.queued = None;
                self.agent_running = false;
                self.run_running = false;
                self.finished = Some(FinishInfo {
                    passed: *passed,
                    passed_in_phase: *passed_in_phase,
                    exit_code: *exit_code,
                    error: error.clone(),
                    interrupted: *interrupted,
                });
            }
        }
    }
}

#[cfg(test)]
#[path = "state/tests.rs"]
mod tests;

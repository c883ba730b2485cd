//! The session state and its pure reducer: `apply(t, &event)` is the only way state
//! changes, so the live TUI, headless runs, replay and tests all see the same thing.

use crate::parity::{ParityReport, ParitySide};
use std::collections::BTreeMap;

use crate::agent::transcript::{ToolTally, TranscriptItem};
use crate::grade::Verdict;
use crate::metrics::{Point, Series};
use crate::pty::screen::{Screen, StoredScreen};
use crate::task::Direction;

use crate::event::{
    At, Event, FileContent, Interruption, MetricPoint, Mode, PhaseOutcome, SessionTask,
    TerminalPane, Waiting,
};
use crate::runner::JobState;

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
    /// Per metric, where the latest verify run left the reference band, kept up to date as
    /// points arrive.
    pub divergence: BTreeMap<String, Divergence>,
    /// The verify run's job on a runner with a queue (Slurm), when it had one.
    pub job: Option<RunnerJob>,
    /// What the parity probe found after the latest grade, when it ran.
    pub parity: Option<ParityReport>,
    /// The exit status of the agent process that ended in this phase (None while it runs,
    /// when a signal ended it, or when it goes on into the next phase).
    pub agent_exit_code: Option<i32>,
    /// The last line the agent printed, when it exited non-zero.
    pub agent_error: Option<String>,
    /// The Python processes the agent started in its turn, each with the session time it
    /// ended at (or the end of the turn, for one xstack ended).
    pub agent_runs: Vec<(f64, crate::checks::AgentRun)>,
    /// Session time when the phase's migrate stage ended.
    pub turn_ended_at: Option<f64>,
    /// Metric series of the latest seed check's run, by metric name.
    pub seed_check_metrics: BTreeMap<String, Series>,
}

/// Where a run leaves the reference band (the reference value at the same step ± the
/// criterion's tolerance) for good: the first compared step from which every later
/// compared step is outside the band. Followed point by point, over every point (not only
/// the chart's sample).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Divergence {
    /// The first point outside the band after the last one inside (step, value); None while
    /// the run's latest compared point is inside, or nothing could be compared.
    pub left_at: Option<(f64, f64)>,
}

impl Divergence {
    /// Takes in the run's point at `step` against the reference's value there (None: the
    /// reference has no such step, so nothing is compared).
    fn push(&mut self, step: f64, value: f64, reference: Option<f64>, tolerance: f64) {
        let Some(reference) = reference else { return };
        if !Direction::Within.judge(value, reference, tolerance).met {
            self.left_at.get_or_insert((step, value));
        } else {
            self.left_at = None;
        }
    }
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

    /// The conversation id the agent reported in the phase, if it did.
    pub fn agent_session(&self) -> Option<&str> {
        self.transcript.iter().rev().find_map(|item| match item {
            TranscriptItem::Session { id } => Some(id.as_str()),
            _ => None,
        })
    }

    /// The tool calls the agent's CLI reported in the phase, and the ones that failed.
    pub fn tools(&self) -> ToolTally {
        ToolTally::of(&self.transcript)
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

/// Which of a phase's runs a Run log shows: verify, the seed check, or a side of the parity
/// probe; each is a run of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShownRun {
    /// The verify run, whose output is graded.
    Verify(u8),
    /// The seed check's second run, with another seed.
    SeedCheck(u8),
    /// A side of the parity probe, after a failed grade.
    Probe(u8, ParitySide),
}

impl ShownRun {
    /// Whether it is the graded verify run.
    pub fn is_verify(self) -> bool {
        matches!(self, ShownRun::Verify(_))
    }

    /// The run without its phase: `verify run`, `seed check`, `parity probe (source)`.
    pub fn what(self) -> String {
        match self {
            ShownRun::Verify(_) => "verify run".to_string(),
            ShownRun::SeedCheck(_) => "seed check".to_string(),
            ShownRun::Probe(_, side) => format!("parity probe ({})", side.as_str()),
        }
    }
}

impl std::fmt::Display for ShownRun {
    /// `phase 1 · parity probe (source)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (ShownRun::Verify(phase) | ShownRun::SeedCheck(phase) | ShownRun::Probe(phase, _)) =
            *self;
        write!(f, "phase {phase} · {}", self.what())
    }
}

/// A line the session said at a moment of its clock: an answer to a command, or what it is
/// doing.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    /// Session time it was said at.
    pub at: f64,
    /// The line.
    pub text: String,
}

/// Everything the panes draw from.
#[derive(Debug, Clone)]
pub struct SessionState {
    /// The task.
    pub task: SessionTask,
    /// Where the session is.
    pub at: At,
    /// Step or auto.
    pub mode: Mode,
    /// What the agent asks the human on its screen, while it asks.
    pub agent_asks: Option<String>,
    /// What a journal of an earlier version said the session waits for.
    earlier_waiting: Option<String>,
    /// What each keyed command would do now, as the policy last published it (empty until
    /// it has, and in journals of earlier versions).
    pub answers: Vec<crate::event::Answer>,
    /// Whether the agent is paused.
    pub paused: bool,
    /// Whether an agent process is running.
    pub agent_running: bool,
    /// Whether a verify run is running.
    pub run_running: bool,
    /// Which run the Run log shows: `phase 1 · verify run`, `phase 1 · seed check` (the
    /// second run with another seed, whose points are not the ones Metrics and Verdict
    /// grade), or `phase 1 · parity probe (source)` (or `(port)`), a side of the probe that
    /// explains a failed grade.
    pub run_shown: Option<ShownRun>,
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
    /// Bumped whenever the baseline or a workspace file changes.
    pub files_version: u64,
    /// Session time of the latest event.
    pub now: f64,
    /// The latest answer to a command: why it does not apply now, or where a message went.
    pub notice: Option<Said>,
    /// What the session last said it was doing (a note, the start of a stage or a run): what
    /// a pane shows while it has nothing else.
    pub activity: Option<Said>,
    /// Set once the session ended.
    pub finished: Option<FinishInfo>,
    /// Bumped on every applied event.
    pub version: u64,
    /// Per metric with a reference series and a criterion: the reference's points sorted by
    /// step, and the criterion's tolerance (for following divergence as points arrive).
    reference: BTreeMap<String, (Vec<(f64, f64)>, f64)>,
}

/// A state stored for a replay snapshot ([`SessionState::store`]).
#[derive(Debug, Clone)]
pub struct StoredState {
    /// The state, its two screens left empty.
    rest: SessionState,
    agent_screen: StoredScreen,
    run_screen: StoredScreen,
}

impl StoredState {
    /// The state as it was stored; `None` when a stored screen does not decode.
    pub fn restore(&self) -> Option<SessionState> {
        let mut state = self.rest.clone();
        state.agent_screen = self.agent_screen.restore()?;
        state.run_screen = self.run_screen.restore()?;
        state.agent_screen.hold_back_scrolled_out_lines();
        state.run_screen.hold_back_scrolled_out_lines();
        Some(state)
    }

    /// About how many bytes the stored state holds beyond what it shares with `earlier`
    /// (the snapshot stored before it, if any): its stored screens (less an emulator's
    /// encoding the earlier one shares), the text of the recorded files, each phase's
    /// transcript, and the metric samples that the earlier state's series do not share (a
    /// series' sealed chunks are shared by its clones).
    pub fn held_bytes_beyond(&self, earlier: Option<&StoredState>) -> usize {
        let files: usize = [&self.rest.baseline, &self.rest.files]
            .into_iter()
            .flat_map(BTreeMap::values)
            .chain(self.rest.previous.values().flatten())
            .map(|f| f.path.len() + f.text.as_ref().map_or(0, String::len))
            .sum();
        let phases: usize = self
            .rest
            .phases
            .iter()
            .enumerate()
            .map(|(number, phase)| {
                let earlier_phase = earlier.and_then(|e| e.rest.phases.get(number));
                let samples: usize = phase
                    .metrics
                    .iter()
                    .map(|(name, series)| {
                        series.bytes_beyond(earlier_phase.and_then(|p| p.metrics.get(name)))
                    })
                    .sum();
                let transcript: usize = phase
                    .transcript
                    .iter()
                    .map(|item| std::mem::size_of_val(item) + item.text_len())
                    .sum();
                samples + transcript
            })
            .sum();
        let agent_screen = self
            .agent_screen
            .held_bytes_beyond(earlier.map(|e| &e.agent_screen));
        let run_screen = self
            .run_screen
            .held_bytes_beyond(earlier.map(|e| &e.run_screen));
        agent_screen + run_screen + files + phases
    }
}

impl Default for SessionState {
    fn default() -> Self {
        Self::new()
    }
}

/// A session's terminal of the given size. Every session's terminals (live, headless or
/// in the TUI, and replayed) hold back plain log text until they are read and skip the
/// lines it would scroll out of the scrollback again
/// ([`Screen::hold_back_scrolled_out_lines`]): what they show when read is the same, a
/// frame's read of the live end leaves the text held, and a replay's seek or index pass
/// applies a flood without feeding every line to the emulator.
fn terminal(cols: u16, rows: u16) -> Screen {
    let mut screen = Screen::new(cols, rows);
    screen.hold_back_scrolled_out_lines();
    screen
}

impl SessionState {
    /// The state before any event.
    pub fn new() -> Self {
        SessionState {
            task: SessionTask::default(),
            at: At::Setup,
            mode: Mode::Auto,
            agent_asks: None,
            earlier_waiting: None,
            answers: Vec::new(),
            paused: false,
            agent_running: false,
            run_running: false,
            run_shown: None,
            queued: None,
            agent_screen: terminal(DEFAULT_COLS, DEFAULT_ROWS),
            run_screen: terminal(DEFAULT_COLS, DEFAULT_ROWS),
            phases: Vec::new(),
            baseline: BTreeMap::new(),
            files: BTreeMap::new(),
            previous: BTreeMap::new(),
            files_version: 0,
            now: 0.0,
            notice: None,
            activity: None,
            finished: None,
            version: 0,
            reference: BTreeMap::new(),
        }
    }

    /// The last line the agent's terminal shows (its error, when it failed), or
    /// Why `command` is declined now, as the policy published it; None when it is
    /// accepted or nothing was published.
    pub fn declined(&self, command: crate::event::KeyedCommand) -> Option<&str> {
        self.answers
            .iter()
            .find(|a| a.command == command)
            .and_then(|a| a.declined.as_deref())
    }

    /// `(no output)`.
    pub fn agent_last_line(&self) -> String {
        self.agent_screen
            .contents()
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("(no output)")
            .to_string()
    }

    /// The record of `phase` (1-based), created on first use.
    pub fn phase_mut(&mut self, phase: u8) -> &mut PhaseRecord {
        let index = usize::from(phase.max(1)) - 1;
        if self.phases.len() <= index {
            self.phases.resize_with(index + 1, PhaseRecord::default);
        }
        &mut self.phases[index]
    }

    /// The state kept for a replay snapshot: everything as it is but the two terminals,
    /// which are stored compactly ([`Screen::store`]); exact when both terminals are at rest.
    pub fn store(&self) -> StoredState {
        StoredState {
            rest: SessionState {
                task: self.task.clone(),
                at: self.at,
                mode: self.mode,
                agent_asks: self.agent_asks.clone(),
                earlier_waiting: self.earlier_waiting.clone(),
                answers: self.answers.clone(),
                paused: self.paused,
                agent_running: self.agent_running,
                run_running: self.run_running,
                run_shown: self.run_shown,
                queued: self.queued.clone(),
                agent_screen: Screen::new(0, 0),
                run_screen: Screen::new(0, 0),
                phases: self.phases.clone(),
                baseline: self.baseline.clone(),
                files: self.files.clone(),
                previous: self.previous.clone(),
                files_version: self.files_version,
                now: self.now,
                notice: self.notice.clone(),
                activity: self.activity.clone(),
                finished: self.finished.clone(),
                version: self.version,
                reference: self.reference.clone(),
            },
            agent_screen: self.agent_screen.store(),
            run_screen: self.run_screen.store(),
        }
    }

    /// The record of `phase` (1-based), if it exists.
    pub fn phase(&self, phase: u8) -> Option<&PhaseRecord> {
        self.phases.get(usize::from(phase.max(1)) - 1)
    }

    /// What the session waits on now, if anything: the human at a wait of step mode, the
    /// agent's question, or a wait as an earlier journal said it.
    pub fn waiting(&self) -> Option<Waiting> {
        if self.at.waiting_for().is_some() {
            return Some(Waiting::Human(self.at));
        }
        self.agent_asks
            .clone()
            .map(Waiting::AgentAsks)
            .or_else(|| self.earlier_waiting.clone().map(Waiting::Said))
    }

    /// The first phase whose verdict passed: the one rule for "passed in phase N", used by
    /// the driver's `Finished` event and by `result.json`.
    pub fn passed_in_phase(&self) -> Option<u8> {
        self.phases
            .iter()
            .position(|p| p.verdict.as_ref().is_some_and(Verdict::passed))
            .and_then(|i| u8::try_from(i + 1).ok())
    }

    /// Adds a point to `phase`'s series of `metric` and follows where it leaves the
    /// reference band.
    fn push_point(&mut self, phase: u8, metric: &str, point: Point) {
        let step = point.step.unwrap_or_else(|| {
            let count = self
                .phase(phase)
                .and_then(|r| r.metrics.get(metric))
                .map_or(0, Series::len);
            count as f64 + 1.0
        });
        let reference = self.reference.get(metric).and_then(|(points, tolerance)| {
            let i = points.partition_point(|(x, _)| *x < step - 1e-9);
            let (x, y) = points.get(i)?;
            ((x - step).abs() < 1e-9).then_some((*y, *tolerance))
        });
        let record = self.phase_mut(phase);
        match record.metrics.get_mut(metric) {
            Some(s) => s.push(point),
            None => {
                record
                    .metrics
                    .insert(metric.to_string(), std::iter::once(point).collect());
            }
        }
        if let Some((reference, tolerance)) = reference {
            record
                .divergence
                .entry(metric.to_string())
                .or_default()
                .push(step, point.value, Some(reference), tolerance);
        }
    }

    /// Applies one event at session time `t` (seconds).
    pub fn apply(&mut self, t: f64, event: &Event) {
        self.now = self.now.max(t);
        self.version += 1;
        match event {
            Event::Task(task) => {
                self.task = (**task).clone();
                self.reference = reference_bands(&self.task);
            }
            Event::Stage(at) => {
                if let (At::Migrate(ended), false) = (self.at, matches!(at, At::Migrate(_))) {
                    self.phase_mut(ended).turn_ended_at = Some(t);
                }
                self.at = *at;
                self.agent_asks = None;
                self.earlier_waiting = None;
                if at.waiting_for().is_none() && !matches!(at, At::Ended(_)) {
                    self.activity =
                        super::progress::describe(event).map(|text| Said { at: t, text });
                }
                if let At::Migrate(phase) = at {
                    self.phase_mut(*phase).started_at = Some(t);
                }
            }
            Event::Mode { mode } => self.mode = *mode,
            Event::Answers { answers } => self.answers = answers.clone(),
            Event::AgentAsks { question } => self.agent_asks = question.clone(),
            Event::Waiting { what } => {
                // One wait at a time, as the earlier journal said it.
                self.agent_asks = None;
                self.earlier_waiting = None;
                match what.as_deref().map(Waiting::of_earlier_journal) {
                    Some(Waiting::AgentAsks(question)) => self.agent_asks = Some(question),
                    Some(_) => self.earlier_waiting = what.clone(),
                    None => {}
                }
            }
            Event::Note { text } => {
                self.activity = Some(Said {
                    at: t,
                    text: text.clone(),
                });
            }
            Event::Message { queued, .. } => {
                let text = if *queued {
                    "m: message queued: it goes with the agent's next prompt"
                } else {
                    "m: message typed into the agent's terminal"
                };
                self.notice = Some(Said {
                    at: t,
                    text: text.to_string(),
                });
            }
            Event::Declined { command, reason } => {
                self.notice = Some(Said {
                    at: t,
                    text: format!("{command}: not now: {reason}"),
                });
            }
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
                self.files_version += 1;
            }
            Event::Prompt { phase, text } => {
                self.phase_mut(*phase).prompt = Some(text.clone());
            }
            Event::AgentStarted { cols, rows, .. } => {
                self.agent_running = true;
                self.paused = false;
                self.agent_screen = terminal(*cols, *rows);
            }
            Event::AgentOutput { text } => self.agent_screen.process(text),
            Event::Transcript { phase, item } => {
                self.phase_mut(*phase).transcript.push(item.clone());
            }
            Event::Resized { pane, cols, rows } => match pane {
                TerminalPane::Agent => self.agent_screen.resize(*cols, *rows),
                TerminalPane::Run => self.run_screen.resize(*cols, *rows),
            },
            Event::AgentRun(run) => {
                let run = (**run).clone();
                let ended = (t - run.reported_after_s).max(0.0);
                self.phase_mut(run.phase).agent_runs.push((ended, run));
            }
            Event::AgentExited { code } => {
                self.agent_running = false;
                self.paused = false;
                let error = code.filter(|c| *c != 0).map(|_| self.agent_last_line());
                let record = self.phase_mut(self.at.step().0);
                record.agent_exit_code = *code;
                record.agent_error = error;
            }
            Event::Paused { paused } => self.paused = *paused,
            Event::RunStarted {
                phase,
                command,
                cols,
                rows,
                seed_check,
                ..
            } => {
                self.run_running = true;
                self.queued = None;
                self.activity = Some(Said {
                    at: t,
                    text: format!("starting `{command}`"),
                });
                self.run_screen = terminal(*cols, *rows);
                self.run_shown = Some(if *seed_check {
                    ShownRun::SeedCheck(*phase)
                } else {
                    ShownRun::Verify(*phase)
                });
                let record = self.phase_mut(*phase);
                if *seed_check {
                    record.seed_check_metrics.clear();
                } else {
                    record.metrics.clear();
                    record.divergence.clear();
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
                if *state == JobState::Running {
                    job.queue_s += waited_s;
                    self.queued = None;
                } else {
                    // The Run log shows the wait until the run's terminal replaces it.
                    let text = super::progress::describe(event).unwrap_or_default();
                    let (rows, cols) = self.run_screen.screen().size();
                    self.run_screen = terminal(cols, rows);
                    self.run_screen.process(&format!("{text}\r\n"));
                    self.queued = Some(text);
                }
            }
            Event::ProbeStarted { phase, side } => {
                // Its output follows the verify run's on the same screen: a line between them
                // says whose it is.
                let shown = ShownRun::Probe(*phase, *side);
                self.activity = Some(Said {
                    at: t,
                    text: format!("running the {shown}"),
                });
                self.run_screen.process(&format!("\r\n── {shown} ──\r\n"));
                self.run_shown = Some(shown);
            }
            Event::RunOutput { text } => self.run_screen.process(text),
            Event::RunExited { .. } => self.run_running = false,
            Event::Metric {
                phase,
                metric,
                point,
            } => self.push_point(*phase, metric, *point),
            Event::Metrics { phase, points } => {
                for &MetricPoint(metric, step, value) in points {
                    let Some(name) = self.task.metrics.get(usize::from(metric)).cloned() else {
                        continue;
                    };
                    self.push_point(*phase, &name, Point { step, value });
                }
            }
            Event::SeedCheckMetrics { phase, points } => {
                for &MetricPoint(metric, step, value) in points {
                    let Some(name) = self.task.metrics.get(usize::from(metric)).cloned() else {
                        continue;
                    };
                    self.phase_mut(*phase)
                        .seed_check_metrics
                        .entry(name)
                        .or_default()
                        .push(Point { step, value });
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
                // A new grade: the probe of an earlier one explains it no longer.
                record.parity = None;
                record.exit_code = *exit_code;
                record.duration_s = *duration_s;
            }
            Event::Parity { phase, report } => {
                self.phase_mut(*phase).parity = Some(report.clone());
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
                if !matches!(self.at, At::Ended(_)) {
                    self.at = At::Ended(self.at.phase().max(1));
                }
                self.agent_asks = None;
                self.earlier_waiting = None;
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

/// Per metric that has a reference series and a criterion: the reference's points (step,
/// value) sorted by step, and the first such criterion's tolerance.
fn reference_bands(task: &SessionTask) -> BTreeMap<String, (Vec<(f64, f64)>, f64)> {
    task.reference
        .iter()
        .filter_map(|r| {
            let criterion = task.criteria.iter().find(|c| c.metric == r.metric)?;
            let mut points: Vec<(f64, f64)> = r
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (p.step.unwrap_or(i as f64 + 1.0), p.value))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Some((r.metric.clone(), (points, criterion.tolerance)))
        })
        .collect()
}

#[cfg(test)]
#[path = "state/tests.rs"]
mod tests;

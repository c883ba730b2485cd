//! The progress lines `--headless` prints (and `replay --headless` prints again from the
//! journal): one line per event worth reading, with metric points thinned so a run that logs
//! a metric on every one of a million lines prints a readable trickle, not a million lines.
//! Every line carries the session time it is printed at, so the times never go back.

use std::collections::BTreeMap;

use crate::metrics::Point;

use crate::event::{At, Event, MetricPoint, Stage, Waiting};
use crate::runner::queue_text;

/// Session seconds between two printed points of the same metric.
const METRIC_INTERVAL_S: f64 = 1.0;

/// Turns events into progress lines.
#[derive(Debug, Default)]
pub struct ProgressLines {
    /// The session's metric names (from its task event), for batches that give indexes.
    names: Vec<String>,
    /// Per metric: when its last point was printed, and the latest point not printed since.
    metrics: BTreeMap<String, MetricThrottle>,
}

#[derive(Debug)]
struct MetricThrottle {
    printed_at: f64,
    held: Option<Point>,
}

impl ProgressLines {
    /// A printer that has printed nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The lines to print for `event` at session time `t`, oldest first. A metric point is
    /// printed when its metric printed nothing in the last second; otherwise it is held back
    /// and printed (if still the latest) when the run exits, at the time of the exit (its
    /// step, when the log gave one, says where in the run it was).
    pub fn lines(&mut self, t: f64, event: &Event) -> Vec<String> {
        let mut out = Vec::new();
        match event {
            Event::Task(task) => {
                self.names = task.metrics.clone();
                out.extend(progress_line(t, event));
            }
            Event::Metric { metric, point, .. } => self.point(t, metric, *point, &mut out),
            Event::Metrics { points, .. } => {
                for &MetricPoint(index, step, value) in points {
                    if let Some(name) = self.names.get(usize::from(index)).cloned() {
                        self.point(t, &name, Point { step, value }, &mut out);
                    }
                }
            }
            Event::RunStarted { .. } | Event::RunExited { .. } => {
                for (name, throttle) in &mut self.metrics {
                    if let Some(point) = throttle.held.take() {
                        out.push(text_line(t, &describe_point(name, &point)));
                    }
                }
                self.metrics.clear();
                out.extend(progress_line(t, event));
            }
            _ => out.extend(progress_line(t, event)),
        }
        out
    }

    fn point(&mut self, t: f64, metric: &str, point: Point, out: &mut Vec<String>) {
        match self.metrics.get_mut(metric) {
            Some(throttle) if t - throttle.printed_at < METRIC_INTERVAL_S => {
                throttle.held = Some(point);
            }
            _ => {
                out.push(text_line(t, &describe_point(metric, &point)));
                self.metrics.insert(
                    metric.to_string(),
                    MetricThrottle {
                        printed_at: t,
                        held: None,
                    },
                );
            }
        }
    }
}

/// One event as a progress line (`[    12.3s] text`, continuation lines indented), or None
/// for events that print nothing (terminal output, file changes).
fn progress_line(t: f64, event: &Event) -> Option<String> {
    Some(text_line(t, &describe(event)?))
}

fn text_line(t: f64, text: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            out.push_str(&format!("[{t:8.1}s] {line}"));
        } else {
            out.push_str(&format!("\n{:12}{line}", ""));
        }
    }
    out
}

/// A one-line description for progress output and headless replay; None for events
/// too frequent or too raw to print (terminal output, metric batches: their points need
/// the session's metric names, which [`ProgressLines`] keeps).
pub fn describe(event: &Event) -> Option<String> {
    match event {
        Event::Task(task) => Some(format!(
            "task {} ({}) with agent {}",
            task.id,
            task.migration.label(),
            task.agent
        )),
        Event::Stage(at) => describe_at(*at),
        Event::Mode { mode } => Some(format!("mode {}", mode.label())),
        Event::Waiting { what: Some(what) } => Some(format!("waiting: {what}")),
        Event::AgentAsks {
            question: Some(question),
        } => Some(format!(
            "waiting: {}",
            Waiting::AgentAsks(question.clone()).text()
        )),
        Event::Note { text } => Some(text.clone()),
        Event::Declined { command, reason } => Some(format!("{command}: not now: {reason}")),
        Event::Prompt { phase, text } => Some(format!(
            "phase {phase}: prompt sent ({} characters)",
            text.chars().count()
        )),
        Event::AgentStarted { command, .. } => Some(format!("agent started: {command}")),
        Event::Transcript { item, .. } => Some(item.describe()),
        Event::AgentRun(run) => Some(crate::checks::describe(run)),
        Event::AgentExited { code } => Some(match code {
            Some(c) => format!("agent exited with status {c}"),
            None => "agent ended by a signal".to_string(),
        }),
        Event::Paused { paused } => Some(
            if *paused {
                "agent paused"
            } else {
                "agent resumed"
            }
            .to_string(),
        ),
        Event::Message {
            text,
            queued: false,
        } => Some(format!("message typed into the agent's terminal: {text}")),
        Event::Message { text, queued: true } => Some(format!(
            "message queued for the agent's next prompt: {text}"
        )),
        Event::RunStarted {
            command,
            seed_check: true,
            ..
        } => Some(format!("seed check run: {command}")),
        Event::RunStarted { command, .. } => Some(format!("run: {command}")),
        Event::ProbeStarted { side, .. } => {
            Some(format!("parity probe: the {}'s side", side.as_str()))
        }
        Event::RunnerJob {
            runner,
            job_id,
            state,
            reason,
            waited_s,
            ..
        } => {
            let scheduler = runner.split("://").next().unwrap_or(runner);
            Some(queue_text(
                scheduler,
                job_id,
                state,
                reason.as_deref(),
                *waited_s,
            ))
        }
        Event::RunExited {
            code,
            timed_out,
            duration_s,
        } => Some(describe_run_exit(*code, *timed_out, *duration_s)),
        Event::Metric { metric, point, .. } => Some(describe_point(metric, point)),
        Event::Graded { phase, verdict, .. } => Some(describe_verdict(*phase, verdict)),
        Event::Parity { phase, report } => Some(format!("phase {phase} {}", report.summary())),
        Event::PhaseEnded {
            phase,
            outcome,
            detail,
        } => Some(format!(
            "phase {phase}: not graded ({}){}",
            outcome.as_str(),
            detail
                .as_ref()
                .map_or_else(String::new, |d| format!(": {d}"))
        )),
        Event::Finished {
            passed,
            passed_in_phase,
            error,
            ..
        } => Some(match (error, passed, passed_in_phase) {
            (Some(e), _, _) => format!("ended: {e}"),
            (None, true, Some(p)) => format!("PASSED in phase {p}"),
            _ => "FAILED".to_string(),
        }),
        Event::Waiting { what: None }
        | Event::AgentAsks { question: None }
        | Event::Baseline { .. }
        | Event::FileChanged { .. }
        | Event::Answers { .. }
        | Event::AgentOutput { .. }
        | Event::Resized { .. }
        | Event::RunOutput { .. }
        | Event::Metrics { .. }
        | Event::SeedCheckMetrics { .. } => None,
    }
}

/// How a run ended: timed out, exited with a status, or killed, after how long.
fn describe_run_exit(code: Option<i32>, timed_out: bool, duration_s: f64) -> String {
    if timed_out {
        format!("run timed out after {duration_s:.1} s")
    } else {
        match code {
            Some(c) => format!("run exited with status {c} after {duration_s:.1} s"),
            None => format!("run killed after {duration_s:.1} s"),
        }
    }
}

/// A phase's verdict, then a line per criterion (its value against the published one) and
/// per finding.
fn describe_verdict(phase: u8, verdict: &crate::grade::Verdict) -> String {
    let mut text = format!("phase {phase} verdict: {}", verdict.label());
    for c in &verdict.criteria {
        let value = c
            .value
            .map_or_else(|| "missing".to_string(), |v| v.to_string());
        text.push_str(&format!(
            "\n  {} = {value}, {}: {}",
            c.metric,
            c.direction
                .published_words(c.published, c.tolerance, |v| v.to_string()),
            if c.passed { "ok" } else { "FAIL" }
        ));
    }
    for f in &verdict.findings {
        text.push_str(&format!("\n  finding: {f}"));
    }
    text
}

/// The progress line of a move to `at`: the step (`phase 1: verify`), or what a wait asks
/// (`waiting: n to verify phase 1`); None for the end (the `Finished` event says it).
pub fn describe_at(at: At) -> Option<String> {
    match (at, at.waiting_for()) {
        (_, Some(what)) => Some(format!("waiting: {what}")),
        (At::Ended(_), None) => None,
        (At::Setup, None) => Some(Stage::Setup.as_str().to_string()),
        (at, None) => {
            let (phase, stage) = at.step();
            Some(format!("phase {phase}: {}", stage.as_str()))
        }
    }
}

/// One metric point as progress text: `metric acc=0.97 (step 3)`.
pub fn describe_point(metric: &str, point: &Point) -> String {
    match point.step {
        Some(step) => format!("metric {metric}={} (step {step})", point.value),
        None => format!("metric {metric}={}", point.value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::SessionTask;

    fn task(metrics: &[&str]) -> Event {
        Event::Task(Box::new(SessionTask {
            metrics: metrics.iter().map(|m| m.to_string()).collect(),
            ..SessionTask::default()
        }))
    }

    fn batch(points: &[(u16, f64)]) -> Event {
        Event::Metrics {
            phase: 1,
            points: points
                .iter()
                .map(|&(i, v)| MetricPoint(i, None, v))
                .collect(),
        }
    }

    #[test]
    fn a_flood_of_points_prints_the_first_each_second_and_the_last_at_exit() {
        let mut p = ProgressLines::new();
        let mut printed = p.lines(0.0, &task(&["acc"]));
        for i in 0..100_000 {
            let t = 10.0 + f64::from(i) * 0.00003; // three seconds of points
            printed.extend(p.lines(t, &batch(&[(0, f64::from(i))])));
        }
        let exit = Event::RunExited {
            code: Some(0),
            timed_out: false,
            duration_s: 3.0,
        };
        printed.extend(p.lines(13.5, &exit));
        let metric_lines: Vec<&String> = printed.iter().filter(|l| l.contains("acc=")).collect();
        assert!((3..=5).contains(&metric_lines.len()), "{printed:?}");
        assert!(metric_lines[0].ends_with("metric acc=0"), "{printed:?}");
        assert!(
            metric_lines
                .last()
                .is_some_and(|l| l.ends_with("acc=99999"))
        );
        assert!(
            printed
                .last()
                .is_some_and(|l| l.contains("run exited with status 0"))
        );
    }

    #[test]
    fn sparse_points_of_several_metrics_are_all_printed_by_name() {
        let mut p = ProgressLines::new();
        let mut printed = Vec::new();
        p.lines(0.0, &task(&["loss", "acc"]));
        for epoch in 0..5 {
            let t = f64::from(epoch) * 2.0;
            printed.extend(p.lines(t, &batch(&[(0, 1.0 / f64::from(epoch + 1))])));
            printed.extend(p.lines(t, &batch(&[(1, f64::from(epoch) / 10.0)])));
        }
        assert_eq!(printed.len(), 10, "{printed:?}");
        assert!(printed[1].ends_with("metric acc=0"), "{printed:?}");
        assert!(printed[8].ends_with("metric loss=0.2"), "{printed:?}");
    }

    /// The session time a progress line starts with.
    fn time_of(line: &str) -> f64 {
        line.trim_start_matches('[')
            .split_once("s]")
            .and_then(|(t, _)| t.trim().parse().ok())
            .unwrap_or_else(|| panic!("no time in {line:?}"))
    }

    fn stepped(index: u16, step: f64, value: f64) -> Event {
        Event::Metrics {
            phase: 1,
            points: vec![MetricPoint(index, Some(step), value)],
        }
    }

    #[test]
    fn a_held_back_point_is_printed_at_the_exit_not_before_later_lines() {
        let mut p = ProgressLines::new();
        let mut printed = p.lines(0.0, &task(&["train_mse", "val_mse"]));
        // train_mse every 0.1 s from 20.0 s: 20.0 is printed, 20.1 … 20.9 are held back.
        for i in 0..10 {
            let t = 20.0 + f64::from(i) * 0.1;
            printed.extend(p.lines(t, &stepped(0, f64::from(310 + i * 10), 0.5)));
        }
        printed.extend(p.lines(21.1, &stepped(1, 400.0, 0.7)));
        let exit = Event::RunExited {
            code: Some(0),
            timed_out: false,
            duration_s: 21.5,
        };
        printed.extend(p.lines(21.5, &exit));
        let times: Vec<f64> = printed.iter().map(|l| time_of(l)).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{printed:#?}");
        assert_eq!(
            printed[printed.len() - 2],
            "[    21.5s] metric train_mse=0.5 (step 400)"
        );
        assert!(
            printed[printed.len() - 3].contains("val_mse=0.7"),
            "{printed:#?}"
        );
    }

    proptest::proptest! {
        #[test]
        fn printed_times_never_go_back(
            steps in proptest::collection::vec((0.0f64..0.7, 0u8..4), 1..120)
        ) {
            let mut p = ProgressLines::new();
            let mut printed = p.lines(0.0, &task(&["a", "b", "c"]));
            let mut t = 0.0;
            for (i, (dt, kind)) in steps.iter().enumerate() {
                t += dt;
                let event = match kind {
                    0..=2 => stepped(u16::from(*kind), i as f64, 1.0),
                    _ if i % 2 == 0 => Event::RunExited {
                        code: Some(0),
                        timed_out: false,
                        duration_s: t,
                    },
                    _ => Event::Note { text: "note".to_string() },
                };
                printed.extend(p.lines(t, &event));
            }
            let times: Vec<f64> = printed.iter().map(|l| time_of(l)).collect();
            proptest::prop_assert!(times.windows(2).all(|w| w[0] <= w[1]), "{:#?}", printed);
        }
    }

    #[test]
    fn single_point_events_of_older_journals_print_too() {
        let mut p = ProgressLines::new();
        let old = Event::Metric {
            phase: 1,
            metric: "acc".into(),
            point: Point {
                step: Some(3.0),
                value: 0.5,
            },
        };
        assert_eq!(
            p.lines(1.0, &old),
            vec!["[     1.0s] metric acc=0.5 (step 3)"]
        );
    }

    #[test]
    fn lines_carry_the_session_time_and_indent_continuations() {
        let line = progress_line(
            3.31,
            &Event::Note {
                text: "one\ntwo".to_string(),
            },
        );
        assert_eq!(line.as_deref(), Some("[     3.3s] one\n            two"));
    }
}

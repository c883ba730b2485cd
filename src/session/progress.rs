//! The progress lines `--headless` prints (and `replay --headless` prints again from the
//! journal): one line per event worth reading, with metric points thinned so a run that logs
//! a metric on every one of a million lines prints a readable trickle, not a million lines.

use std::collections::BTreeMap;

use super::event::Event;

/// Session seconds between two printed points of the same metric.
const METRIC_INTERVAL_S: f64 = 1.0;

/// Turns events into progress lines.
#[derive(Debug, Default)]
pub struct ProgressLines {
    /// Per metric: when its last point was printed, and the latest point not printed since.
    metrics: BTreeMap<String, MetricThrottle>,
}

#[derive(Debug)]
struct MetricThrottle {
    printed_at: f64,
    held: Option<(f64, Event)>,
}

impl ProgressLines {
    /// A printer that has printed nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The lines to print for `event` at session time `t`, oldest first. A metric point is
    /// printed when its metric printed nothing in the last second; otherwise it is held back
    /// and printed (if still the latest) when the run exits.
    pub fn lines(&mut self, t: f64, event: &Event) -> Vec<String> {
        let mut out = Vec::new();
        match event {
            Event::Metric { metric, .. } => {
                let throttle = self.metrics.get_mut(metric);
                match throttle {
                    Some(th) if t - th.printed_at < METRIC_INTERVAL_S => {
                        th.held = Some((t, event.clone()));
                    }
                    _ => {
                        out.extend(progress_line(t, event));
                        self.metrics.insert(
                            metric.clone(),
                            MetricThrottle {
                                printed_at: t,
                                held: None,
                            },
                        );
                    }
                }
            }
            Event::RunStarted { .. } | Event::RunExited { .. } => {
                for throttle in self.metrics.values_mut() {
                    if let Some((held_t, held)) = throttle.held.take() {
                        out.extend(progress_line(held_t, &held));
                    }
                }
                self.metrics.clear();
                out.extend(progress_line(t, event));
            }
            _ => out.extend(progress_line(t, event)),
        }
        out
    }
}

/// One event as a progress line (`[    12.3s] text`, continuation lines indented), or None
/// for events that print nothing (terminal output, file changes).
pub fn progress_line(t: f64, event: &Event) -> Option<String> {
    let text = event.describe()?;
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            out.push_str(&format!("[{t:8.1}s] {line}"));
        } else {
            out.push_str(&format!("\n{:12}{line}", ""));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Point;

    fn metric(name: &str, value: f64) -> Event {
        Event::Metric {
            phase: 1,
            metric: name.to_string(),
            point: Point { step: None, value },
        }
    }

    #[test]
    fn a_flood_of_points_prints_the_first_each_second_and_the_last_at_exit() {
        let mut p = ProgressLines::new();
        let mut printed = Vec::new();
        for i in 0..100_000 {
            let t = 10.0 + f64::from(i) * 0.00003; // three seconds of points
            printed.extend(p.lines(t, &metric("acc", f64::from(i))));
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
    fn sparse_points_of_several_metrics_are_all_printed() {
        let mut p = ProgressLines::new();
        let mut printed = Vec::new();
        for epoch in 0..5 {
            let t = f64::from(epoch) * 2.0;
            printed.extend(p.lines(t, &metric("loss", 1.0 / f64::from(epoch + 1))));
            printed.extend(p.lines(t, &metric("acc", f64::from(epoch) / 10.0)));
        }
        assert_eq!(printed.len(), 10, "{printed:?}");
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

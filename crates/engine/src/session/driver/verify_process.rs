//! The verify run while it runs: its process on a PTY and the reading of its output into
//! events (the output itself, then the metric points of the lines it completed, kept apart
//! as the seed check's series during that run). It records nothing itself: the driver
//! emits what it returns.

use std::time::Duration;

use crate::event::{Event, MetricPoint};
use crate::metrics::{Extractor, MetricStream, Point};
use crate::pty::supervise::Supervised;
use crate::pty::{ExitInfo, PtyError, PtySpec};

/// The verify run going on in one phase.
pub(super) struct VerifyProcess {
    child: Supervised,
    metrics: MetricStream,
    phase: u8,
    seed_check: bool,
}

impl VerifyProcess {
    /// Starts `pty` with `timeout` as `phase`'s verify run of `command` (the seed check's
    /// second run with `seed_check`), its output read with `extractor`; returns the process
    /// and the event that records its start.
    pub(super) fn start(
        pty: &PtySpec,
        timeout: Duration,
        extractor: Extractor,
        phase: u8,
        command: String,
        seed_check: bool,
    ) -> Result<(VerifyProcess, Event), PtyError> {
        let child = Supervised::spawn(pty, Some(timeout))?;
        let started = Event::RunStarted {
            phase,
            command,
            cols: pty.cols,
            rows: pty.rows,
            seed_check,
        };
        let process = VerifyProcess {
            child,
            metrics: MetricStream::new(extractor),
            phase,
            seed_check,
        };
        Ok((process, started))
    }

    /// The process, for waiting on it, resizing, typing or ending it.
    pub(super) fn child(&mut self) -> &mut Supervised {
        &mut self.child
    }

    /// How it exited (no code when it has not, or was ended by a signal).
    pub(super) fn exit_info(&self) -> ExitInfo {
        self.child.exit_info().unwrap_or(ExitInfo { code: None })
    }

    /// A piece of its output: the output's event, then the metric points of the lines it
    /// completed.
    pub(super) fn output(&mut self, text: String) -> Vec<Event> {
        let points = self.metrics.feed(&text);
        let mut events = vec![Event::RunOutput { text }];
        events.extend(self.points_event(points));
        events
    }

    /// Its output ended: the points of the last, unfinished line.
    pub(super) fn output_closed(&mut self) -> Option<Event> {
        let points = self.metrics.finish();
        self.points_event(points)
    }

    /// The points read from one piece of output as one `Metrics` event (during the seed
    /// check's run, one `SeedCheckMetrics` event: that run's series); none without points.
    fn points_event(&self, points: Vec<(usize, Point)>) -> Option<Event> {
        let points: Vec<MetricPoint> = points
            .into_iter()
            .filter_map(|(i, p)| Some(MetricPoint(u16::try_from(i).ok()?, p.step, p.value)))
            .collect();
        if points.is_empty() {
            return None;
        }
        let phase = self.phase;
        Some(if self.seed_check {
            Event::SeedCheckMetrics { phase, points }
        } else {
            Event::Metrics { phase, points }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pty::supervise::ChildEvent;
    use crate::task::MetricSpec;

    fn loss_extractor() -> Extractor {
        Extractor::from_specs(&[MetricSpec {
            name: "loss".into(),
            regex: Some(r"step (?P<step>\d+) loss (?P<value>[0-9.]+)".into()),
            json_key: None,
            step_key: None,
        }])
        .unwrap()
    }

    /// Runs a real process printing two loss lines (the last without its newline) as a
    /// verify run (`seed_check` or not) and returns every event its output made.
    async fn events_of_a_run(seed_check: bool) -> Vec<Event> {
        let pty = PtySpec {
            argv: vec![
                "sh".into(),
                "-c".into(),
                r"printf 'step 1 loss 0.5\nstep 2 loss 0.25'".into(),
            ],
            cwd: std::env::temp_dir(),
            env: Vec::new(),
            env_remove: Vec::new(),
            cols: 80,
            rows: 24,
        };
        let (mut run, started) = VerifyProcess::start(
            &pty,
            Duration::from_secs(60),
            loss_extractor(),
            2,
            "python train.py".into(),
            seed_check,
        )
        .unwrap();
        let mut events = vec![started];
        loop {
            match run.child().next().await {
                ChildEvent::Output { text, closed } => {
                    if !text.is_empty() {
                        events.extend(run.output(text));
                    }
                    if closed {
                        events.extend(run.output_closed());
                    }
                }
                ChildEvent::TimedOut => panic!("a two-line printf timed out"),
                ChildEvent::Finished(_) => break,
            }
        }
        assert_eq!(run.exit_info().code, Some(0));
        events
    }

    fn points(events: &[Event], seed_check: bool) -> Vec<MetricPoint> {
        events
            .iter()
            .flat_map(|event| match (event, seed_check) {
                (Event::Metrics { phase: 2, points }, false)
                | (Event::SeedCheckMetrics { phase: 2, points }, true) => points.clone(),
                _ => Vec::new(),
            })
            .collect()
    }

    #[tokio::test]
    async fn a_runs_output_becomes_its_events_and_the_last_unfinished_line_counts() {
        let events = events_of_a_run(false).await;
        assert!(matches!(
            &events[0],
            Event::RunStarted { phase: 2, seed_check: false, command, .. } if command == "python train.py"
        ));
        let output: String = events
            .iter()
            .filter_map(|e| match e {
                Event::RunOutput { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert!(output.contains("step 2 loss 0.25"), "{output:?}");
        assert_eq!(
            points(&events, false),
            vec![
                MetricPoint(0, Some(1.0), 0.5),
                MetricPoint(0, Some(2.0), 0.25)
            ]
        );
        assert!(points(&events, true).is_empty());
    }

    #[tokio::test]
    async fn the_seed_checks_run_keeps_its_points_apart() {
        let events = events_of_a_run(true).await;
        assert_eq!(
            points(&events, true),
            vec![
                MetricPoint(0, Some(1.0), 0.5),
                MetricPoint(0, Some(2.0), 0.25)
            ]
        );
        assert!(points(&events, false).is_empty());
    }
}

use super::*;
use crate::event::Gated;
use crate::grade::{CriterionResult, FailureClass};
use crate::metrics::Point;
use crate::runner::JobState;
use crate::task::Direction;

fn verdict(failure: Option<FailureClass>, value: f64) -> Verdict {
    Verdict {
        failure,
        criteria: vec![CriterionResult {
            metric: "acc".into(),
            value: Some(value),
            published: 0.9,
            tolerance: 0.01,
            direction: Direction::Higher,
            passed: failure.is_none(),
        }],
        findings: vec![],
        finding_records: vec![],
        verify_confined: Some(true),
        unconfined: None,
    }
}

#[test]
fn reducer_builds_phases_metrics_and_verdicts() {
    let mut s = SessionState::new();
    let events = vec![
        Event::Mode { mode: Mode::Step },
        Event::Stage(At::Migrate(1)),
        Event::Stage(At::Gate(Gated::Verify(1))),
        Event::RunStarted {
            phase: 1,
            command: "python t.py".into(),
            cols: 80,
            rows: 24,
            seed_check: false,
        },
        Event::RunOutput {
            text: "epoch 1 acc=0.5\r\n".into(),
        },
        Event::Metric {
            phase: 1,
            metric: "acc".into(),
            point: Point {
                step: Some(1.0),
                value: 0.5,
            },
        },
        Event::RunExited {
            code: Some(0),
            timed_out: false,
            duration_s: 2.0,
        },
        Event::Graded {
            phase: 1,
            verdict: verdict(Some(FailureClass::FidelityGap), 0.5),
            exit_code: Some(0),
            duration_s: 2.0,
        },
        Event::Stage(At::Migrate(2)),
        Event::RunStarted {
            phase: 2,
            command: "python t.py".into(),
            cols: 80,
            rows: 24,
            seed_check: false,
        },
        Event::Metric {
            phase: 2,
            metric: "acc".into(),
            point: Point {
                step: Some(1.0),
                value: 0.95,
            },
        },
        Event::Graded {
            phase: 2,
            verdict: verdict(None, 0.95),
            exit_code: Some(0),
            duration_s: 1.0,
        },
        Event::Finished {
            passed: true,
            passed_in_phase: Some(2),
            exit_code: 0,
            error: None,
            interrupted: None,
        },
    ];
    for (i, e) in events.iter().enumerate() {
        s.apply(i as f64, e);
        if i == 2 {
            assert_eq!(
                s.waiting(),
                Some(Waiting::Human(At::Gate(Gated::Verify(1))))
            );
            assert_eq!(
                s.waiting().map(|w| w.text()).as_deref(),
                Some("n to verify phase 1")
            );
            assert_eq!(s.mode, Mode::Step);
        }
        if i == 4 {
            assert!(s.run_running);
            assert!(s.run_screen.contents().contains("epoch 1 acc=0.5"));
        }
    }
    assert_eq!(s.phases.len(), 2);
    assert_eq!(
        s.phases[0].metrics["acc"].points().next().map(|p| p.value),
        Some(0.5)
    );
    assert_eq!(
        s.phases[1].metrics["acc"].points().next().map(|p| p.value),
        Some(0.95)
    );
    assert_eq!(
        s.phases[0].verdict.as_ref().unwrap().label(),
        "FAIL fidelity_gap"
    );
    assert!(s.phases[1].verdict.as_ref().unwrap().passed());
    assert_eq!(s.at, At::Ended(2));
    assert!(!s.run_running);
    assert_eq!(s.finished.as_ref().unwrap().passed_in_phase, Some(2));
    assert_eq!(s.now, 12.0);
    assert_eq!(s.passed_in_phase(), Some(2));
}

#[test]
fn files_track_baseline_changes_and_previous_versions() {
    let mut s = SessionState::new();
    let f = |path: &str, text: Option<&str>| FileContent {
        path: path.into(),
        text: text.map(String::from),
        size: 1,
    };
    s.apply(
        0.0,
        &Event::Baseline {
            files: vec![f("model.py", Some("torch")), f("train.py", Some("t"))],
        },
    );
    s.apply(
        1.0,
        &Event::FileChanged {
            file: f("model.py", Some("jax v1")),
            deleted: false,
        },
    );
    s.apply(
        2.0,
        &Event::FileChanged {
            file: f("model.py", Some("jax v2")),
            deleted: false,
        },
    );
    s.apply(
        3.0,
        &Event::FileChanged {
            file: f("train.py", None),
            deleted: true,
        },
    );
    assert_eq!(s.baseline["model.py"].text.as_deref(), Some("torch"));
    assert_eq!(s.files["model.py"].text.as_deref(), Some("jax v2"));
    assert_eq!(
        s.previous["model.py"].as_ref().unwrap().text.as_deref(),
        Some("jax v1")
    );
    assert!(!s.files.contains_key("train.py"));
}

#[test]
fn agent_terminal_follows_start_output_and_pause() {
    let mut s = SessionState::new();
    s.apply(
        0.0,
        &Event::AgentStarted {
            phase: 1,
            command: "a".into(),
            cols: 40,
            rows: 10,
        },
    );
    s.apply(
        0.1,
        &Event::AgentOutput {
            text: "hello \x1b[31mred\x1b[0m".into(),
        },
    );
    s.apply(0.2, &Event::Paused { paused: true });
    assert!(s.agent_running);
    assert!(s.paused);
    assert_eq!(s.agent_screen.contents(), "hello red");
    assert_eq!(s.agent_screen.screen().size(), (10, 40));
    s.apply(0.3, &Event::AgentExited { code: Some(0) });
    assert!(!s.agent_running && !s.paused);
}

#[test]
fn metric_batches_fill_the_series_named_by_the_task() {
    let mut s = SessionState::new();
    s.apply(
        0.0,
        &Event::Task(Box::new(SessionTask {
            metrics: vec!["loss".into(), "acc".into()],
            ..SessionTask::default()
        })),
    );
    s.apply(
        1.0,
        &Event::Metrics {
            phase: 2,
            points: vec![
                MetricPoint(0, Some(1.0), 0.9),
                MetricPoint(1, Some(1.0), 0.5),
                MetricPoint(0, Some(2.0), 0.4),
                // An index past the task's metrics (a damaged journal) is skipped.
                MetricPoint(7, None, 1.0),
            ],
        },
    );
    let phase = s.phase(2).unwrap();
    let values = |m: &str| -> Vec<f64> { phase.metrics[m].points().map(|p| p.value).collect() };
    assert_eq!(values("loss"), vec![0.9, 0.4]);
    assert_eq!(values("acc"), vec![0.5]);
    assert_eq!(phase.metrics.len(), 2);
}

#[test]
fn divergence_from_the_reference_is_followed_as_points_arrive() {
    use crate::event::{ReferenceSeries, SessionTask};
    use crate::task::{CriterionSpec, Reduce};
    let mut s = SessionState::new();
    let reference: Vec<Point> = [0.5, 0.6, 0.7, 0.8]
        .iter()
        .enumerate()
        .map(|(i, v)| Point {
            step: Some(i as f64 + 1.0),
            value: *v,
        })
        .collect();
    s.apply(
        0.0,
        &Event::Task(Box::new(SessionTask {
            criteria: vec![CriterionSpec {
                metric: "acc".into(),
                reduce: Reduce::Last,
                published: 0.8,
                tolerance: 0.01,
                direction: Direction::Higher,
                claim: None,
            }],
            metrics: vec!["acc".into()],
            reference: vec![ReferenceSeries {
                metric: "acc".into(),
                points: reference,
            }],
            ..SessionTask::default()
        })),
    );
    let left = |s: &SessionState| s.phase(1).and_then(|p| p.divergence.get("acc")?.left_at);
    let push = |s: &mut SessionState, step: f64, value: f64| {
        s.apply(
            step,
            &Event::Metrics {
                phase: 1,
                points: vec![MetricPoint(0, Some(step), value)],
            },
        );
    };
    push(&mut s, 1.0, 0.5);
    assert_eq!(left(&s), None, "inside the band");
    push(&mut s, 2.0, 0.3);
    assert_eq!(left(&s), Some((2.0, 0.3)));
    push(&mut s, 3.0, 0.2);
    assert_eq!(left(&s), Some((2.0, 0.3)), "still outside: left at step 2");
    // A step the reference does not have is not compared.
    push(&mut s, 3.5, 0.7);
    assert_eq!(left(&s), Some((2.0, 0.3)));
    push(&mut s, 4.0, 0.8);
    assert_eq!(left(&s), None, "back inside at the end");
    // A new verify run starts afresh.
    s.apply(
        5.0,
        &Event::RunStarted {
            phase: 1,
            command: "python train.py".into(),
            cols: 80,
            rows: 24,
            seed_check: false,
        },
    );
    assert_eq!(left(&s), None);
    push(&mut s, 1.0, 0.9);
    assert_eq!(left(&s), Some((1.0, 0.9)));
}

#[test]
fn a_queued_job_shows_in_the_run_log_and_status_until_it_starts() {
    let mut s = SessionState::new();
    let job = |state: &str, reason: Option<&str>, waited_s: f64| Event::RunnerJob {
        phase: 1,
        runner: "slurm://gpu/scratch".into(),
        job_id: "1234".into(),
        state: JobState::from(state.to_string()),
        reason: reason.map(str::to_string),
        waited_s,
    };
    s.apply(1.0, &job("PENDING", Some("Priority"), 0.5));
    s.apply(2.0, &job("PENDING", Some("Resources"), 1.5));
    let text = "queued on slurm: job 1234, PENDING (Resources)";
    assert_eq!(s.queued.as_deref(), Some(text));
    assert!(s.run_screen.contents().contains(text));
    assert!(
        !s.run_screen.contents().contains("Priority"),
        "the latest state only"
    );
    s.apply(3.0, &job("RUNNING", None, 2.5));
    assert_eq!(s.queued, None);
    s.apply(
        3.1,
        &Event::RunStarted {
            phase: 1,
            command: "python t.py".into(),
            cols: 80,
            rows: 24,
            seed_check: false,
        },
    );
    assert!(!s.run_screen.contents().contains("queued"));
    assert_eq!(
        crate::session::progress::describe(&job("RUNNING", None, 2.5)).as_deref(),
        Some("slurm job 1234 started after 2.5 s in the queue")
    );
    let job = s.phase(1).unwrap().job.clone().unwrap();
    assert_eq!((job.job_id.as_str(), job.queue_s), ("1234", 2.5));
}

#[test]
fn a_parity_report_stays_with_its_grade_and_reaches_the_result() {
    let report = crate::parity::ParityReport::failed("the source's probe wrote no file".into());
    let graded = Event::Graded {
        phase: 1,
        verdict: verdict(Some(FailureClass::FidelityGap), 0.5),
        exit_code: Some(0),
        duration_s: 2.0,
    };
    let mut s = SessionState::new();
    s.apply(0.0, &graded);
    s.apply(
        1.0,
        &Event::Parity {
            phase: 1,
            report: report.clone(),
        },
    );
    assert_eq!(s.phase(1).unwrap().parity.as_ref(), Some(&report));
    let result = crate::session::result::RunResult::from_state(&s, "r", "t");
    assert_eq!(result.phases[0].parity.as_ref(), Some(&report));
    assert_eq!(result.phases[0].failure, Some(FailureClass::FidelityGap));
    // A re-run's grade: the earlier probe explains it no longer.
    s.apply(2.0, &graded);
    assert_eq!(s.phase(1).unwrap().parity, None);
}

#[test]
fn a_stored_state_counts_what_it_holds_and_restores_it() {
    let mut s = SessionState::new();
    s.run_screen = Screen::new(120, 40);
    for i in 0..12_000 {
        s.run_screen.process(&format!(
            "\x1b[32mstep {i}\x1b[0m loss={}\r\n",
            1.0 / f64::from(i + 1)
        ));
    }
    let series: Series = (0..1_000)
        .map(|i| Point {
            step: Some(f64::from(i)),
            value: f64::from(i) / 1_000.0,
        })
        .collect();
    s.phase_mut(1).metrics.insert("acc".into(), series.clone());
    s.phase_mut(1).transcript.push(TranscriptItem::Message {
        text: "x".repeat(5_000),
    });
    let stored = s.store();
    let held = stored.held_bytes_beyond(None);
    let samples = 1_000 * std::mem::size_of::<Point>();
    // The samples and the transcript's text are counted; the screens (a full scrollback,
    // 10,040 × 120 cells of 32 bytes as vt100 holds them) take little.
    assert!(held > samples + 5_000, "{held} bytes");
    assert!(held < samples + 5_000 + 200_000, "{held} bytes");
    let restored = stored.restore().unwrap();
    assert!(*restored.run_screen.screen() == *s.run_screen.screen());
    assert_eq!(restored.phase(1).unwrap().metrics["acc"], series);
    assert_eq!(
        restored.phase(1).unwrap().transcript,
        s.phase(1).unwrap().transcript
    );
}

#[test]
fn a_later_stored_state_counts_only_the_metric_samples_it_does_not_share() {
    let mut s = SessionState::new();
    let point = |i: u32| Point {
        step: Some(f64::from(i)),
        value: f64::from(i),
    };
    let series: Series = (0..5_000).map(point).collect();
    s.phase_mut(1).metrics.insert("acc".into(), series);
    let first = s.store();
    let whole = 5_000 * std::mem::size_of::<Point>();
    assert!(first.held_bytes_beyond(None) >= whole);
    let series = s.phase_mut(1).metrics.get_mut("acc").unwrap();
    for i in 5_000..5_100 {
        series.push(point(i));
    }
    let second = s.store();
    // 100 new points seal at most one new chunk beside the open tail: far below the whole.
    let beyond = second.held_bytes_beyond(Some(&first));
    assert!(beyond < whole / 5, "{beyond} of {whole} bytes");
    assert!(second.held_bytes_beyond(None) > whole);
    assert_eq!(
        second.restore().unwrap().phase(1).unwrap().metrics["acc"].len(),
        5_100
    );
}

use super::*;
use crate::metrics::Point;
use crate::task::Reduce;

fn criterion(direction: Direction) -> CriterionSpec {
    CriterionSpec {
        metric: "acc".into(),
        reduce: Reduce::Last,
        published: 0.9,
        tolerance: 0.02,
        direction,
        claim: None,
    }
}

fn series(values: &[f64]) -> BTreeMap<String, Series> {
    let mut map = BTreeMap::new();
    if !values.is_empty() {
        map.insert(
            "acc".to_string(),
            values
                .iter()
                .map(|&v| Point {
                    step: None,
                    value: v,
                })
                .collect(),
        );
    }
    map
}

fn verdict(
    findings: &[&str],
    code: Option<i32>,
    timed_out: bool,
    values: &[f64],
    direction: Direction,
) -> Verdict {
    let criteria = [criterion(direction)];
    let series = series(values);
    grade(&GradeInput {
        integrity_findings: findings
            .iter()
            .map(|s| Finding::other(FindingKind::ForbiddenImport, s.to_string()))
            .collect(),
        exit: RunExit { code, timed_out },
        criteria: &criteria,
        series: &series,
        timeout_s: 60,
        unconfined: None,
        crash_line: None,
    })
}

#[test]
fn classes_follow_spec_order() {
    let bypass = verdict(
        &["train.py:1: imports forbidden module `torch`"],
        Some(1),
        false,
        &[],
        Direction::Higher,
    );
    assert_eq!(bypass.failure, Some(FailureClass::Bypass));
    let crash = verdict(&[], Some(1), false, &[0.95], Direction::Higher);
    assert_eq!(crash.failure, Some(FailureClass::Crash));
    assert!(
        crash
            .findings
            .contains(&"the run exited with status 1".to_string())
    );
    let timeout = verdict(&[], None, true, &[0.95], Direction::Higher);
    assert_eq!(timeout.failure, Some(FailureClass::Crash));
    assert!(timeout.findings[0].contains("timeout_s = 60"));
    let missed = verdict(&[], Some(0), false, &[], Direction::Higher);
    assert_eq!(missed.failure, Some(FailureClass::MissedEval));
    assert_eq!(missed.criteria[0].value, None);
    let gap = verdict(&[], Some(0), false, &[0.95, 0.85], Direction::Higher);
    assert_eq!(gap.failure, Some(FailureClass::FidelityGap));
    assert_eq!(gap.label(), "FAIL fidelity_gap");
    let pass = verdict(&[], Some(0), false, &[0.5, 0.885], Direction::Higher);
    assert!(pass.passed());
    assert_eq!(pass.label(), "PASS");
    assert!(pass.findings.is_empty());
}

#[test]
fn directions_and_margins() {
    assert!(verdict(&[], Some(0), false, &[0.95], Direction::Higher).passed());
    assert!(!verdict(&[], Some(0), false, &[0.95], Direction::Lower).passed());
    assert!(!verdict(&[], Some(0), false, &[0.95], Direction::Within).passed());
    assert!(verdict(&[], Some(0), false, &[0.91], Direction::Within).passed());
    let v = verdict(&[], Some(0), false, &[0.87], Direction::Higher);
    assert!((v.criteria[0].margin().unwrap() - -0.01).abs() < 1e-9);
}

fn check_run(values: &[f64], code: Option<i32>) -> VerifyRun {
    VerifyRun {
        exit: RunExit {
            code,
            timed_out: false,
        },
        duration_s: 1.0,
        unconfined: None,
        audit: vec![],
        series: series(values),
    }
}

#[test]
fn the_seed_check_catches_a_constant_result_and_passes_a_seeded_one() {
    let criteria = [criterion(Direction::Higher)];
    let first = verdict(&[], Some(0), false, &[0.9103], Direction::Higher);
    assert!(first.passed());
    let constant = seed_check(&first, &check_run(&[0.9103], Some(0)), (0, 1), &criteria);
    assert_eq!(constant.len(), 1);
    assert_eq!(constant[0].kind, FindingKind::SeedCheck);
    assert_eq!(
        constant[0].text,
        "`acc` is 0.9103 under seeds 0 and 1: the result does not come from the seeded run"
    );
    assert!(seed_check(&first, &check_run(&[0.9101], Some(0)), (0, 1), &criteria).is_empty());
    let missing = seed_check(&first, &check_run(&[], Some(0)), (0, 1), &criteria);
    assert_eq!(missing[0].kind, FindingKind::SeedCheck);
    // A second run that failed is graded as the crash it is, not here.
    assert!(seed_check(&first, &check_run(&[0.9103], Some(1)), (0, 1), &criteria).is_empty());
    // The finding makes the phase a bypass.
    let graded = grade(&GradeInput {
        integrity_findings: constant,
        exit: RunExit {
            code: Some(0),
            timed_out: false,
        },
        criteria: &criteria,
        series: &series(&[0.9103]),
        timeout_s: 60,
        unconfined: None,
        crash_line: None,
    });
    assert_eq!(graded.failure, Some(FailureClass::Bypass));
    assert_eq!(graded.finding_records[0].kind, FindingKind::SeedCheck);
}

#[test]
fn only_all_identical_criteria_fail_the_seed_check() {
    let mut two = vec![criterion(Direction::Higher)];
    two.push(CriterionSpec {
        metric: "loss".into(),
        ..criterion(Direction::Lower)
    });
    let mut first_series = series(&[0.95]);
    first_series.insert(
        "loss".into(),
        std::iter::once(Point {
            step: None,
            value: 0.5,
        })
        .collect(),
    );
    let first = grade(&GradeInput {
        integrity_findings: vec![],
        exit: RunExit {
            code: Some(0),
            timed_out: false,
        },
        criteria: &two,
        series: &first_series,
        timeout_s: 60,
        unconfined: None,
        crash_line: None,
    });
    let mut moved = check_run(&[0.95], Some(0));
    moved.series.insert(
        "loss".into(),
        std::iter::once(Point {
            step: None,
            value: 0.51,
        })
        .collect(),
    );
    assert!(seed_check(&first, &moved, (0, 1), &two).is_empty());
    let mut same = check_run(&[0.95], Some(0));
    same.series = first_series.clone();
    assert_eq!(seed_check(&first, &same, (0, 1), &two).len(), 2);
}

#[test]
fn a_gap_is_told_with_the_decimals_that_set_it_apart_from_the_edge() {
    assert_eq!(shown_against(0.8955625, 0.968), "0.8956");
    assert_eq!(shown_against(0.96799991, 0.968), "0.9679999");
    assert_eq!(shown_against(2.0, 1.93), "2");
    let spec = CriterionSpec {
        metric: "test_acc".into(),
        reduce: Reduce::Last,
        published: 0.978,
        tolerance: 0.01,
        direction: Direction::Higher,
        claim: None,
    };
    assert_eq!(
        describe_gap(&spec, 0.8955625),
        "test_acc (last) = 0.8956 is outside the criterion at least 0.978 - 0.01"
    );
}

#[test]
fn a_value_printed_on_the_edge_passes_with_margin_zero() {
    // `score=0.751` against `within 0.764 ± 0.013`: graded FAIL with margin -1.21e-17 when
    // the edge was decided by the doubles' rounding.
    let spec = CriterionSpec {
        metric: "score".into(),
        reduce: Reduce::Last,
        published: 0.764,
        tolerance: 0.013,
        direction: Direction::Within,
        claim: None,
    };
    let grade_at = |value: f64| {
        let series = BTreeMap::from([(
            "score".to_string(),
            [Point { step: None, value }].into_iter().collect(),
        )]);
        grade(&GradeInput {
            integrity_findings: Vec::new(),
            exit: RunExit {
                code: Some(0),
                timed_out: false,
            },
            criteria: std::slice::from_ref(&spec),
            series: &series,
            timeout_s: 60,
            unconfined: None,
            crash_line: None,
        })
    };
    let on_edge = grade_at(0.751);
    assert!(on_edge.passed(), "{on_edge:?}");
    assert_eq!(on_edge.criteria[0].margin(), Some(0.0));
    let beyond = grade_at(0.7509);
    assert_eq!(beyond.failure, Some(FailureClass::FidelityGap));
    assert_eq!(beyond.criteria[0].margin(), Some(-0.0001));
    assert_eq!(
        beyond.findings,
        ["score (last) = 0.7509 is outside the criterion within 0.764 ± 0.013"]
    );
}

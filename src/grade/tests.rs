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
        integrity_findings: findings.iter().map(|s| s.to_string()).collect(),
        exit: RunExit { code, timed_out },
        criteria: &criteria,
        series: &series,
        timeout_s: 60,
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

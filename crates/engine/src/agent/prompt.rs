//! The prompts: the default migration prompt rendered from the task, and the phase-two
//! prompt that says what failed and carries the experiment details.

use crate::parity::ParityReport;
use std::fmt::Write;

use crate::grade::Verdict;
use crate::task::Task;

/// The phase-one migration prompt.
pub fn migration_prompt(task: &Task, interactive: bool) -> String {
    let spec = &task.spec;
    let (from, to) = (task.migration.from, task.migration.to);
    let mut p = String::new();
    let _ = writeln!(
        p,
        "You are porting the {} repository in the current folder to {}.\n\nTask: {} ({})",
        from.name(),
        to.name(),
        spec.title,
        spec.id
    );
    if let Some(summary) = &spec.summary {
        let _ = writeln!(p, "{}", summary.trim());
    }
    let _ = writeln!(
        p,
        "\nThe experiment is run with `{}` from the repository root, the same entry point before and after the migration. It must finish within {} s.",
        spec.run.command, spec.run.timeout_s
    );
    let _ = writeln!(
        p,
        "\nThe migration passes only if the {} run reproduces the published result ({}):",
        to.name(),
        spec.published.citation
    );
    for c in &spec.criteria {
        let rule = c
            .direction
            .rule_words(c.published, c.tolerance, |v| v.to_string());
        let _ = writeln!(
            p,
            "- {} (its {} value over the run) must be {rule}; the output must keep printing it in the same format.",
            c.metric,
            c.reduce.as_str()
        );
    }
    let _ = writeln!(
        p,
        "\nTarget: {}. Packages available: {}.",
        to.target_note(),
        if spec.env.packages.is_empty() {
            "none beyond the system's".to_string()
        } else {
            spec.env.packages.join(", ")
        }
    );
    let _ = writeln!(p, "\nRules:");
    let _ = writeln!(
        p,
        "- No migrated .py file may import {}; at least one must import {}.",
        spec.integrity.forbid_imports.join(", "),
        spec.integrity.require_imports.join(" or ")
    );
    if !spec.integrity.protected.is_empty() {
        let _ = writeln!(
            p,
            "- These files are protected and restored before grading; do not change them: {}.",
            spec.integrity.protected.join(", ")
        );
    }
    let _ = writeln!(
        p,
        "- Do not fake or hard-code results; the grader runs the experiment itself."
    );
    if interactive {
        let _ = writeln!(
            p,
            "\nWhen the migration is complete, create the file .xstack/done in the repository root."
        );
    }
    if let Some(extra) = &spec.prompt {
        let _ = writeln!(p, "\n{}", extra.extra.trim());
    }
    p
}

/// The phase-two prompt: what failed, with numbers, and the experiment details; an
/// interactive agent is reminded of the done signal.
///
/// With `parity` (the task says `[parity] tell_agent = true` and the probe ran after phase
/// 1), the probe's findings follow the grade: where the port diverges first and by how much.
pub fn phase2_prompt(
    verdict: &Verdict,
    parity: Option<&ParityReport>,
    details: &str,
    interactive: bool,
) -> String {
    let mut p = String::new();
    let class = verdict.failure.map_or("none", |f| f.as_str());
    let _ = writeln!(p, "Phase 1 of the migration failed grading: {class}.");
    for c in &verdict.criteria {
        let value = c
            .value
            .map_or_else(|| "never printed".to_string(), |v| v.to_string());
        let _ = writeln!(
            p,
            "- {}: {value}, {}{}",
            c.metric,
            c.direction
                .published_words(c.published, c.tolerance, |v| v.to_string()),
            if c.passed { "" } else { " - not met" }
        );
    }
    for f in &verdict.findings {
        let _ = writeln!(p, "- {f}");
    }
    if let Some(report) = parity {
        let _ = writeln!(
            p,
            "\nThe numeric parity probe (probe.py, run on the same weights and batch in the original and in your port) found:\n- {}",
            report.summary()
        );
        if let Some(at) = report
            .first_divergent
            .as_ref()
            .and_then(|d| report.tensors.iter().find(|t| t.name == d.name))
            .and_then(|t| t.port_location.as_ref())
        {
            let _ = writeln!(
                p,
                "- your port records that tensor at {}:{}",
                at.file, at.line
            );
        }
    }
    let _ = writeln!(
        p,
        "\nHere are the exact experiment details of the original run. Adjust the migration to match them:\n\n{}",
        details.trim()
    );
    if interactive {
        let _ = writeln!(
            p,
            "\nWhen the migration is complete again, create the file .xstack/done in the repository root."
        );
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::FailureClass;
    use crate::parity::{Location, Tensor, Values, compare};

    fn gap() -> Verdict {
        Verdict {
            failure: Some(FailureClass::FidelityGap),
            criteria: Vec::new(),
            findings: vec!["test_acc (mean) = 0.89 is outside the criterion".to_string()],
            finding_records: Vec::new(),
            verify_confined: Some(true),
            unconfined: None,
        }
    }

    #[test]
    fn the_phase_two_prompt_carries_the_parity_summary_only_when_given() {
        let tensor = |value: f64| Tensor {
            name: "bn1.running_mean".to_string(),
            shape: vec![1],
            dtype: "float32".to_string(),
            values: Values::Float(vec![value]),
            location: Some(Location {
                file: "probe.py".to_string(),
                line: 63,
            }),
        };
        let report = compare(&[tensor(0.1)], &[tensor(0.9)], 1e-4, 1e-5);
        let told = phase2_prompt(&gap(), Some(&report), "lr 0.01", false);
        assert!(
            told.contains("parity: the port diverges first at `bn1.running_mean`"),
            "{told}"
        );
        assert!(
            told.contains("your port records that tensor at probe.py:63"),
            "{told}"
        );
        let told_at = told.find("parity probe").unwrap();
        assert!(told_at < told.find("lr 0.01").unwrap(), "{told}");
        let untold = phase2_prompt(&gap(), None, "lr 0.01", false);
        assert!(!untold.contains("parity"), "{untold}");
    }
}

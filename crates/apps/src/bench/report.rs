//! The bench's reports on disk: `report.json` (SPEC §1) and `report.md` (the same as tables,
//! a task × agent matrix, where the time went, and the figures of [`super::figures`]), both
//! from the model of [`super::model`]; report.md paints the tables of [`super::tables`].
//! Everything is derived from the run folders alone, so a report rebuilt from the same
//! folders is byte for byte the same.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::figures;
pub use super::model::{
    ALL_AGENTS, AgentSummary, Difference, DirectionLine, IntervalMethod, NoVerdict, Pair,
    PhaseAgent, RanPortLine, Report, Share, Timing, TrialFailure, TrialRow, build, distinct,
    has_claims, has_ran_port, percent_interval, ran_port_of, row,
};
use super::tables::{self, Cell, Emphasis, Table};

/// Everything report.md says besides the report itself.
pub struct MarkdownContext<'a> {
    /// Tasks in `--task` order.
    pub tasks: &'a [String],
    /// Trials planned (tasks × agents × repeats).
    pub planned: usize,
    /// The runners, as a line.
    pub runners: &'a str,
}

/// `report.md`.
pub fn markdown(report: &Report, ctx: &MarkdownContext<'_>) -> String {
    let mut md = String::from("# xstack bench report\n\n");
    intro(&mut md, report, ctx);
    per_agent_section(&mut md, report);
    pairs_section(&mut md, report);
    direction_section(&mut md, report);
    ran_port_section(&mut md, report);
    task_grid_section(&mut md, report, ctx);
    claims_section(&mut md, report);
    time_section(&mut md, report);
    trials_section(&mut md, report);
    md
}

/// How many trials have a run folder, of how many planned, on which runners.
fn intro(md: &mut String, report: &Report, ctx: &MarkdownContext<'_>) {
    let _ = writeln!(
        md,
        "{} of {} trials have a run folder; runners: {}.",
        report.trials.len(),
        ctx.planned,
        ctx.runners
    );
    if report.trials.len() < ctx.planned {
        md.push_str("Run the same command again to run the rest.\n");
    }
}

/// "Per agent": pass rates with their intervals, phases, failure classes, durations, cost.
fn per_agent_section(md: &mut String, report: &Report) {
    let _ = writeln!(
        md,
        "\n## Per agent\n\nThe pass rate is passed / graded: trials that never happened (an \
         infrastructure failure, an agent that failed before doing any work, an interruption) \
         are not failed migrations. 95% intervals: {}.\n",
        report.interval_method.describe()
    );
    paint(md, &tables::per_agent(report));
    md.push('\n');
    link(md, figures::Kind::PassRate);
    md.push('\n');
    link(md, figures::Kind::Failures);
}

/// "Agents compared": each pair's difference of pass rates (or why there is none).
fn pairs_section(md: &mut String, report: &Report) {
    let Some(table) = tables::pairs(report) else {
        md.push_str("\nOne agent: there is no pair to compare.\n");
        return;
    };
    let _ = writeln!(
        md,
        "\n## Agents compared\n\nThe difference of two pass rates, in percentage points, \
         with its 95% interval ({}). Distinguishable: the interval excludes 0, so these \
         trials tell the two agents apart.\n",
        tables::pairs_method(report.interval_method)
    );
    paint(md, &table);
}

/// "Task × agent": passed / graded per task and agent, with the median duration.
fn task_grid_section(md: &mut String, report: &Report, ctx: &MarkdownContext<'_>) {
    md.push_str(
        "\n## Task × agent\n\nPassed / graded trials with the 95% Wilson interval, and the \
         median duration in seconds.\n\n",
    );
    if tables::has_upstream(report, ctx.tasks) {
        md.push_str(
            "upstream: the public repository and commit the task was made from (its \
             `[upstream]`), linked to the commit's tree.\n\n",
        );
    }
    paint(md, &tables::task_grid(report, ctx.tasks));
    md.push('\n');
    link(md, figures::Kind::Grid);
}

/// "Claimed success against the verdict": claims, overclaims, success claimed unrun.
fn claims_section(md: &mut String, report: &Report) {
    md.push_str("\n## Claimed success against the verdict\n\n");
    let Some(table) = tables::claims(report) else {
        md.push_str(
            "No graded phase records the agent's own claim of success (`claimed_success` of \
             the phase's `agent` in `result.json`), so there is no figure of claims against \
             verdicts.\n",
        );
        return;
    };
    md.push_str(
        "Graded phases in which the agent said whether it succeeded. An overclaim: the \
         agent claimed success and the grader failed the phase.\n\n",
    );
    md.push_str(
        "Claimed success without running the port: graded phases in which the agent \
         claimed success and had not run its port in that phase (– when no graded phase \
         of the agent records whether it ran its port).\n\n",
    );
    paint(md, &table);
    md.push('\n');
    link(md, figures::Kind::Claims);
}

/// "Where the time went": median seconds per trial, split into agent, verify and the rest.
fn time_section(md: &mut String, report: &Report) {
    md.push_str(
        "\n## Where the time went\n\nMedian seconds per trial: wall-clock time, the agent, the \
         verify runs, and the rest (set-up, copies, environment checks, grading).\n\n",
    );
    paint(md, &tables::time(report));
}

/// "Trials": one row per trial folder.
fn trials_section(md: &mut String, report: &Report) {
    md.push_str("\n## Trials\n\n");
    paint(md, &tables::trials(report));
    let why: Vec<String> = report
        .trials
        .iter()
        .flat_map(|t| {
            t.agent_outcome.iter().filter_map(move |phase| {
                phase.outcome_detail.as_ref().map(|detail| {
                    format!(
                        "- {} `{}` repeat {}, phase {}: {}: {detail}\n",
                        t.task,
                        crate::agent::label(&t.agent),
                        t.repeat,
                        phase.phase,
                        phase.outcome.as_str()
                    )
                })
            })
        })
        .collect();
    if !why.is_empty() {
        md.push_str("\nWhy these trials have no verdict:\n\n");
        md.extend(why);
    }
}

/// "By direction": when the trials go both ways, each agent's pass rate per direction with
/// its 95% Wilson interval.
fn direction_section(md: &mut String, report: &Report) {
    let Some(table) = tables::by_direction(report) else {
        return;
    };
    md.push_str(
        "\n## By direction\n\nPassed / graded trials of each direction (the source's framework \
         → the port's) with the 95% Wilson interval.\n\n",
    );
    paint(md, &table);
}

/// The section "Did the agent run its port?": per agent and for all agents, the pass rate of
/// the graded trials whose agent ran its port against those whose agent did not.
fn ran_port_section(md: &mut String, report: &Report) {
    md.push_str("\n## Did the agent run its port?\n\n");
    let Some(table) = tables::ran_port(report) else {
        md.push_str(
            "No graded trial records whether its agent ran its port (`agent_checked` of the \
             phases in `result.json`, absent from runs of an older xstack), so the pass rate \
             is not split by it.\n",
        );
        return;
    };
    md.push_str(
        "XStack's central finding is that agents that ran their port against the experiment \
         during their turn passed far more often than agents that did not; this table checks \
         it on these trials. Ran its port: in some phase the agent started its port (the \
         workspace's code) itself (`agent_checked.port_runs` of the phase in `result.json`); \
         did not: no phase did; unknown: graded trials that do not record it. Passed / graded \
         trials with the 95% Wilson interval, and the difference of the two pass rates in \
         percentage points with its 95% interval (Newcombe's score interval with continuity \
         correction), taking the trials as independent. A difference says the two go \
         together, not that running the port made the trials pass.\n\n",
    );
    paint(md, &table);
    md.push('\n');
    link(md, figures::Kind::RanPort);
}

/// The figure as an image, and a link to its PNG.
fn link(md: &mut String, kind: figures::Kind) {
    let _ = writeln!(
        md,
        "![{title}]({dir}/{stem}.svg)\n\n[{title} (PNG)]({dir}/{stem}.png)",
        title = kind.title(),
        dir = figures::DIR,
        stem = kind.stem()
    );
}

/// A cell's text as Markdown: code in backticks, a link as `[text](target)`.
fn markdown_text(text: &str, emphasis: Option<Emphasis>, link: Option<&str>) -> String {
    let text = match emphasis {
        Some(Emphasis::Code) => format!("`{text}`"),
        None => text.to_string(),
    };
    match link {
        Some(target) => format!("[{text}]({target})"),
        None => text,
    }
}

/// A table as a Markdown table: its header, then a line per row (a `|` in a cell escaped).
fn paint(md: &mut String, table: &Table) {
    let header: Vec<String> = table
        .columns
        .iter()
        .map(|c| markdown_text(&c.header, c.emphasis, None))
        .collect();
    let _ = writeln!(md, "| {} |", header.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(header.len()));
    for row in &table.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c: &Cell| {
                markdown_text(&c.text, c.emphasis, c.link.as_deref()).replace('|', "\\|")
            })
            .collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A figure could not be drawn.
    #[error(transparent)]
    Figure(#[from] figures::FigureError),
}

/// Writes `report.json`, `report.md` and the figures (under `figures/`) into `out`; returns
/// the paths of the first two.
pub fn write(
    out: &Path,
    report: &Report,
    ctx: &MarkdownContext<'_>,
) -> Result<(PathBuf, PathBuf), ReportError> {
    figures::write(out, report, ctx.tasks)?;
    let json = out.join("report.json");
    let md = out.join("report.md");
    let text = serde_json::to_string_pretty(report).map_err(|e| ReportError::Write {
        path: json.clone(),
        source: std::io::Error::other(e),
    })?;
    write_atomic(&json, format!("{text}\n").as_bytes())?;
    write_atomic(&md, markdown(report, ctx).as_bytes())?;
    Ok((json, md))
}

/// Writes `path` whole or not at all (a temporary file beside it, then a rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let fail = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::median;
    use crate::bench::record::TrialKey;
    use crate::bench::stats::{self, Interval, round4};
    use crate::session::result::RESULT_FILE;
    use crate::task::Migration;
    use serde_json::{Map, Value, json};

    /// The failure named `name`.
    fn failed(name: &str) -> TrialFailure {
        TrialFailure::parse(name).expect("a failure's name")
    }

    fn trial(agent: &str, passed_in_phase: Option<u8>, failure: Option<&str>) -> TrialRow {
        TrialRow {
            task: "t".into(),
            migration: Migration::default(),
            upstream: None,
            agent: agent.into(),
            repeat: 1,
            passed: failure.is_none(),
            passed_in_phase,
            failure: failure.map(failed),
            duration_s: 10.0,
            run_dir: "out/x".into(),
            runner: None,
            job_id: None,
            queue_s: None,
            ran_port: None,
            agent_outcome: Vec::new(),
            timing: Some(Timing {
                wall_s: 10.0,
                agent_s: 3.0,
                verify_s: 5.0,
                cost_usd: agent.starts_with("claude").then_some(0.25),
            }),
        }
    }

    #[test]
    fn trials_that_never_happened_are_not_failed_migrations() {
        let mut agent_failed = trial("cmd:x", None, Some("agent_failure"));
        let detail = "every one of its 2 tool calls failed, the first: shell: exit 101: \
                      failed to resolve synthetic mount registry temp directory; the agent \
                      changed no file";
        agent_failed.agent_outcome.push(PhaseAgent {
            phase: 1,
            outcome: crate::event::PhaseOutcome::AgentFailure,
            verdict: None,
            ran_port: None,
            outcome_detail: Some(detail.into()),
            agent: Map::new(),
        });
        let rows = vec![
            trial("cmd:x", Some(1), None),
            trial("cmd:x", None, Some("bypass")),
            trial("cmd:x", None, Some("infra")),
            agent_failed,
        ];
        let report = build(rows, &["cmd:x".to_string()]);
        let a = &report.summary[0];
        assert_eq!((a.trials, a.graded, a.passed), (4, 2, 1));
        assert_eq!(a.pass_rate, 0.5);
        assert_eq!(a.failures[&failed("agent_failure")], 1);
        assert_eq!(a.failures[&failed("infra")], 1);
        let md = markdown_of(&report, "t", 4);
        assert!(md.contains("| agent_failure |"), "{md}");
        // What failed, under the trials.
        assert!(
            md.contains(&format!(
                "\nWhy these trials have no verdict:\n\n- t `cmd:x` repeat 1, phase 1: agent_failure: {detail}\n"
            )),
            "{md}"
        );
        let json = serde_json::to_string(&report).unwrap();
        assert!(
            json.contains(r#""outcome_detail":"every one of its 2 tool calls"#),
            "{json}"
        );
    }

    #[test]
    fn failures_are_written_by_name_and_read_back_as_before() {
        let rows: Vec<TrialRow> = TrialFailure::all()
            .map(|f| trial("cmd:x", None, Some(f.as_str())))
            .collect();
        let report = build(rows, &["cmd:x".to_string()]);
        let text = serde_json::to_string(&report.summary[0].failures).unwrap();
        assert_eq!(
            text,
            r#"{"agent_failure":1,"bypass":1,"crash":1,"fidelity_gap":1,"infra":1,"interrupted":1,"missed_eval":1,"timeout":1}"#
        );
        let json = serde_json::to_string(&report).unwrap();
        assert!(json.contains(r#""failure":"missed_eval""#), "{json}");
        let again: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&again).unwrap(), json);
        assert!(serde_json::from_str::<TrialFailure>(r#""gremlins""#).is_err());
        // report.md: a column per grader's class, in the grader's order, then the others by
        // name.
        let md = markdown_of(&report, "t", 8);
        assert!(
            md.contains(
                "| bypass | crash | missed_eval | fidelity_gap | agent_failure | infra | \
                 interrupted | timeout |"
            ),
            "{md}"
        );
    }

    #[test]
    fn summary_counts_phases_and_failure_classes_per_agent() {
        let rows = vec![
            trial("script:a/pass.jsonl", Some(1), None),
            trial("script:a/pass.jsonl", Some(2), None),
            trial("script:a/pass.jsonl", None, Some("fidelity_gap")),
            trial("cmd:x", None, Some("infra")),
        ];
        let agents = vec!["script:a/pass.jsonl".to_string(), "cmd:x".to_string()];
        let report = build(rows, &agents);
        let a = &report.summary[0];
        assert_eq!(
            (a.trials, a.passed, a.passed_phase1, a.passed_phase2),
            (3, 2, 1, 1)
        );
        assert_eq!(a.pass_rate, 0.6667);
        assert_eq!(a.failures[&failed("fidelity_gap")], 1);
        assert_eq!(a.failures[&failed("bypass")], 0);
        assert!(!a.failures.contains_key(&failed("infra")));
        let b = &report.summary[1];
        assert_eq!((b.trials, b.passed, b.pass_rate), (1, 0, 0.0));
        assert_eq!(b.failures[&failed("infra")], 1);

        let json = serde_json::to_value(&report).unwrap();
        // Exactly the fields SPEC §1 names (serde_json sorts them).
        let keys: Vec<&str> = json["trials"][0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "agent",
                "agent_outcome",
                "duration_s",
                "failure",
                "job_id",
                "migration",
                "passed",
                "passed_in_phase",
                "queue_s",
                "ran_port",
                "repeat",
                "run_dir",
                "runner",
                "task"
            ]
        );

        let md = markdown_of(&report, "t", 4);
        assert!(
            md.contains(
                "| `script:pass.jsonl` | 3 | 3 | 2 | 67% | 21–94% | 1 | 1 | 0 | 0 | 0 | 1 | 0 | 10.0 | – |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| t | PyTorch → JAX | 2/3 (21–94%) · 10.0 | 0/0 (0–100%) · 10.0 |"),
            "{md}"
        );
        assert!(
            md.contains("| `script:pass.jsonl` | 10.00 | 3.00 | 5.00 | 2.00 |"),
            "{md}"
        );
    }

    #[test]
    fn a_bench_that_goes_both_ways_splits_its_pass_rates_by_direction() {
        let back = Migration {
            from: crate::task::Framework::Jax,
            to: crate::task::Framework::Torch,
        };
        let jax_source = |passed: bool| TrialRow {
            task: "neural-cde".into(),
            migration: back,
            ..trial(
                "cmd:a",
                passed.then_some(1),
                (!passed).then_some("fidelity_gap"),
            )
        };
        let rows = vec![
            trial("cmd:a", Some(1), None),
            trial("cmd:a", None, Some("crash")),
            jax_source(true),
            jax_source(true),
            jax_source(false),
        ];
        let report = build(rows, &["cmd:a".to_string()]);
        let split: Vec<(String, String, usize, usize)> = report
            .by_direction
            .iter()
            .map(|l| {
                (
                    l.agent.clone(),
                    l.migration.short(),
                    l.share.passed,
                    l.share.graded,
                )
            })
            .collect();
        assert_eq!(
            split,
            [
                ("cmd:a".into(), "torch→jax".into(), 1, 2),
                ("cmd:a".into(), "jax→torch".into(), 2, 3),
                (ALL_AGENTS.into(), "torch→jax".into(), 1, 2),
                (ALL_AGENTS.into(), "jax→torch".into(), 2, 3),
            ]
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json["trials"][2]["migration"],
            json!({"from": "jax", "to": "torch"})
        );
        let ctx = MarkdownContext {
            tasks: &["t".to_string(), "neural-cde".to_string()],
            planned: 5,
            runners: "local",
        };
        let md = markdown(&report, &ctx);
        assert!(
            md.contains("| agent | PyTorch → JAX | 95% interval | JAX → PyTorch | 95% interval |"),
            "{md}"
        );
        assert!(
            md.contains("| `cmd:a` | 1/2 (50%) | 9–91% | 2/3 (67%) | 21–94% |"),
            "{md}"
        );
        assert!(md.contains("| neural-cde | JAX → PyTorch | 2/3 "), "{md}");
        assert!(md.contains("| t | PyTorch → JAX | 1/2 "), "{md}");

        let one_way = build(vec![trial("cmd:a", Some(1), None)], &["cmd:a".to_string()]);
        assert!(one_way.by_direction.is_empty());
        let json = serde_json::to_value(&one_way).unwrap();
        assert!(json.get("by_direction").is_none());
        assert!(!markdown(&one_way, &ctx).contains("## By direction"));
    }

    #[test]
    fn each_task_made_from_a_public_repository_shows_it_and_its_commit() {
        let upstream = json!({
            "repository": "Tiiiger/SGC",
            "commit": "2c7a2727e82e462d8ef9d6e57f0b08888e16488f",
            "licence": "MIT",
            "experiment": "citation.py",
            "changed": ["data/ind.pubmed.allx: left out (over 4 MB)"]
        });
        let from_sgc = row_of(&json!({
            "task": "t", "agent": "claude", "run_id": "r", "started_at": "2025-01-01T00:00:00Z",
            "duration_s": 5.0, "passed": true, "passed_in_phase": 1, "phases": [],
            "upstream": upstream,
        }));
        assert_eq!(
            from_sgc
                .upstream
                .as_ref()
                .map(crate::task::UpstreamSpec::label),
            Some("Tiiiger/SGC@2c7a272".to_string())
        );
        let own = TrialRow {
            task: "own".into(),
            ..trial("claude", Some(1), None)
        };
        let report = build(vec![from_sgc, own], &["claude".to_string()]);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["trials"][0]["upstream"], upstream);
        assert!(json["trials"][1].get("upstream").is_none());
        let ctx = MarkdownContext {
            tasks: &["t".to_string(), "own".to_string()],
            planned: 2,
            runners: "local",
        };
        let md = markdown(&report, &ctx);
        assert!(
            md.contains("| task | direction | upstream | `claude` |"),
            "{md}"
        );
        assert!(
            md.contains(
                "| t | PyTorch → JAX | [Tiiiger/SGC@2c7a272](https://github.com/Tiiiger/SGC/tree/2c7a2727e82e462d8ef9d6e57f0b08888e16488f) | "
            ),
            "{md}"
        );
        assert!(md.contains("| own | PyTorch → JAX | – | "), "{md}");
        let without = build(
            vec![trial("claude", Some(1), None)],
            &["claude".to_string()],
        );
        assert!(!markdown_of(&without, "t", 1).contains("upstream"));
    }

    #[test]
    fn reported_costs_are_summed_per_agent() {
        let rows = vec![
            trial("claude", Some(1), None),
            trial("claude", None, Some("crash")),
        ];
        let report = build(rows, &["claude".to_string()]);
        let md = markdown_of(&report, "t", 2);
        assert!(md.contains("| 10.0 | 0.5000 |"), "{md}");
        assert!(md.contains("cost (USD)"), "{md}");
    }

    fn claimed(phase: u8, verdict: &str, claim: Option<bool>) -> PhaseAgent {
        let mut agent = Map::new();
        agent.insert("exit_code".into(), json!(0));
        agent.insert("claimed_success".into(), json!(claim));
        PhaseAgent {
            phase,
            outcome: crate::event::PhaseOutcome::Graded,
            verdict: serde_json::from_value(json!(verdict)).unwrap(),
            ran_port: None,
            outcome_detail: None,
            agent,
        }
    }

    /// report.md of `report` over the one task `task`, of `planned` trials, run locally.
    fn markdown_of(report: &Report, task: &str, planned: usize) -> String {
        markdown(
            report,
            &MarkdownContext {
                tasks: &[task.to_string()],
                planned,
                runners: "local",
            },
        )
    }

    /// The trial row read from a run folder whose `result.json` is `result`.
    fn row_of(result: &Value) -> TrialRow {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(RESULT_FILE), result.to_string()).unwrap();
        let key = TrialKey {
            task: "t".into(),
            agent: "claude".into(),
            repeat: 1,
        };
        row(&key, dir.path(), Path::new("runs/x"))
    }

    #[test]
    fn each_pass_rate_has_its_interval_and_each_pair_a_verdict() {
        let mut rows = Vec::new();
        for i in 0..20 {
            rows.push(trial("cmd:strong", Some(1), None));
            rows.push(if i < 15 {
                trial("cmd:weak", Some(2), None)
            } else {
                trial("cmd:weak", None, Some("fidelity_gap"))
            });
            rows.push(trial("cmd:none", None, Some("crash")));
        }
        for (i, r) in rows.iter_mut().enumerate() {
            r.repeat = (i / 3 + 1) as u32;
        }
        let agents: Vec<String> = ["cmd:strong", "cmd:weak", "cmd:none"]
            .map(String::from)
            .to_vec();
        let report = build(rows, &agents);
        // One task: Wilson's interval, whatever the repeats.
        assert_eq!(report.interval_method, IntervalMethod::Wilson);
        let ci: Vec<Interval> = report.summary.iter().map(|s| s.pass_rate_ci95).collect();
        assert_eq!(ci, vec![[0.8389, 1.0], [0.5313, 0.8881], [0.0, 0.1611]]);
        let pairs: Vec<(&str, &str, Option<f64>, bool)> = report
            .pairs
            .iter()
            .map(|p| (p.a.as_str(), p.b.as_str(), p.difference, p.distinguishable))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("cmd:strong", "cmd:weak", Some(0.25), false),
                ("cmd:strong", "cmd:none", Some(1.0), true),
                ("cmd:weak", "cmd:none", Some(0.75), true),
            ]
        );
        assert_eq!(report.pairs[0].difference_ci95, Some([-0.0028, 0.4941]));
        assert_eq!(report.pairs[2].difference_ci95, Some([0.4341, 0.9041]));
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["interval_method"], "wilson");
        assert_eq!(
            json["summary"][1]["pass_rate_ci95"],
            json!([0.5313, 0.8881])
        );

        let md = markdown_of(&report, "t", 0);
        assert!(md.contains("95% intervals: Wilson score interval."), "{md}");
        assert!(
            md.contains("| `cmd:weak` | 20 | 20 | 15 | 75% | 53–89% |"),
            "{md}"
        );
        assert!(
            md.contains("| `cmd:strong` | `cmd:weak` | +25.0 | -0.3 to +49.4 | no |"),
            "{md}"
        );
        assert!(
            md.contains("| `cmd:weak` | `cmd:none` | +75.0 | +43.4 to +90.4 | yes |"),
            "{md}"
        );
        assert!(
            md.contains("![Pass rate per agent](figures/pass_rate.svg)"),
            "{md}"
        );
        assert!(
            md.contains("![Outcome of every trial](figures/grid.svg)"),
            "{md}"
        );
        assert!(md.contains("there is no figure of claims"), "{md}");
    }

    #[test]
    fn a_few_trials_tell_nobody_apart() {
        let rows = vec![
            trial("cmd:a", Some(1), None),
            trial("cmd:a", Some(1), None),
            trial("cmd:b", None, Some("crash")),
            trial("cmd:b", None, Some("infra")),
        ];
        let report = build(rows, &["cmd:a".to_string(), "cmd:b".to_string()]);
        assert_eq!(report.summary[1].pass_rate_ci95, [0.0, 0.7935]);
        assert!(!report.pairs[0].distinguishable, "{:?}", report.pairs);
    }

    #[test]
    fn repeats_over_several_tasks_are_bootstrapped_reproducibly() {
        let mut rows = Vec::new();
        for task in ["t1", "t2", "t3"] {
            for repeat in 1..=3 {
                let mut a = trial("cmd:a", Some(1), None);
                let mut b = if task == "t3" {
                    trial("cmd:b", Some(1), None)
                } else {
                    trial("cmd:b", None, Some("crash"))
                };
                for r in [&mut a, &mut b] {
                    r.task = task.into();
                    r.repeat = repeat;
                }
                rows.extend([a, b]);
            }
        }
        let agents = ["cmd:a".to_string(), "cmd:b".to_string()];
        let report = build(rows.clone(), &agents);
        assert_eq!(report.interval_method, IntervalMethod::Bootstrap);
        assert_eq!(report, build(rows, &agents));
        // Never narrower than Wilson's interval on the pooled trials.
        let [low, high] = report.summary[1].pass_rate_ci95;
        let wilson = stats::wilson(3, 9);
        assert!(
            low <= round4(wilson[0]) && high >= round4(wilson[1]),
            "{low} {high}"
        );
        assert!(report.pairs[0].difference_ci95.is_some());
        let md = markdown_of(&report, "t1", 0);
        assert!(md.contains("95% intervals: bootstrap over tasks"), "{md}");
    }

    #[test]
    fn claims_of_success_are_set_against_the_verdicts() {
        let mut a = trial("cmd:x", Some(2), None);
        a.agent_outcome = vec![
            claimed(1, "fail", Some(true)),
            claimed(2, "pass", Some(true)),
        ];
        let mut b = trial("cmd:x", None, Some("crash"));
        b.agent_outcome = vec![claimed(1, "fail", Some(false)), claimed(2, "fail", None)];
        let report = build(vec![a, b], &["cmd:x".to_string()]);
        assert!(has_claims(&report));
        let s = &report.summary[0];
        assert_eq!(
            (s.claims, s.overclaims, s.overclaim_rate),
            (2, 1, Some(0.5))
        );
        let md = markdown_of(&report, "t", 0);
        assert!(md.contains("| `cmd:x` | 2 | 1 | 50% |"), "{md}");
        assert!(md.contains("(figures/claims.svg)"), "{md}");

        let without = build(vec![trial("cmd:x", Some(1), None)], &["cmd:x".to_string()]);
        assert!(!has_claims(&without));
        assert_eq!(without.summary[0].overclaim_rate, None);
    }

    /// A graded phase of a trial: its verdict, the agent's claim, whether it ran its port.
    fn checked(phase: u8, verdict: &str, claim: bool, ran_port: Option<bool>) -> PhaseAgent {
        PhaseAgent {
            ran_port,
            outcome_detail: None,
            ..claimed(phase, verdict, Some(claim))
        }
    }

    /// A trial of `agent` that passed in phase 1 or failed with `failure`, whose agent ran its
    /// port (or not, or unknown).
    fn ran(agent: &str, failure: Option<&str>, ran_port: Option<bool>) -> TrialRow {
        TrialRow {
            ran_port,
            ..trial(agent, failure.is_none().then_some(1), failure)
        }
    }

    #[test]
    fn running_the_port_splits_the_pass_rate() {
        let mut rows = vec![
            // cmd:a ran its port in 4 graded trials and passed 3; did not in 3 and passed 0.
            ran("cmd:a", None, Some(true)),
            ran("cmd:a", None, Some(true)),
            ran("cmd:a", None, Some(true)),
            ran("cmd:a", Some("fidelity_gap"), Some(true)),
            ran("cmd:a", Some("crash"), Some(false)),
            ran("cmd:a", Some("crash"), Some(false)),
            ran("cmd:a", Some("timeout"), Some(false)),
            // Unknown: one graded trial; an infrastructure failure is not graded at all.
            ran("cmd:a", None, None),
            ran("cmd:a", Some("infra"), Some(true)),
            // cmd:b: ran 2, passed 2; did not 2, passed 1.
            ran("cmd:b", None, Some(true)),
            ran("cmd:b", None, Some(true)),
            ran("cmd:b", None, Some(false)),
            ran("cmd:b", Some("crash"), Some(false)),
            // Not graded, not recorded: not unknown either.
            ran("cmd:b", Some("interrupted"), None),
        ];
        // Claims of cmd:a: 4 claimed successes, all failed; 3 of them in a phase in which it
        // had not run its port (the fidelity gap's phase 1, although it ran it in phase 2).
        rows[3].agent_outcome = vec![
            checked(1, "fail", true, Some(false)),
            checked(2, "fail", true, Some(true)),
        ];
        rows[4].agent_outcome = vec![
            checked(1, "fail", true, Some(false)),
            checked(2, "fail", true, Some(false)),
        ];
        rows[5].agent_outcome = vec![checked(1, "fail", false, Some(false))];
        let agents = ["cmd:a".to_string(), "cmd:b".to_string()];
        let report = build(rows, &agents);
        assert!(has_ran_port(&report));
        let lines: Vec<&str> = report.ran_port.iter().map(|l| l.agent.as_str()).collect();
        assert_eq!(lines, ["cmd:a", "cmd:b", ALL_AGENTS]);

        // By hand: Wilson 95% (z = 1.96): 3/4 is 0.3006–0.9544, 0/3 is 0–0.5615, 2/2 is
        // 0.3424–1, 1/2 is 0.0945–0.9055, 5/6 is 0.4365–0.9699, 1/5 is 0.0362–0.6245.
        // Newcombe's method 11 (continuity-corrected Wilson limits, combined as
        // d - sqrt((p1-l1)² + (u2-p2)²) and d + sqrt((u1-p1)² + (p2-l2)²)):
        // 3/4 - 0/3 = +75 points, -12.04 to +98.68; 2/2 - 1/2 = +50, -43.14 to +97.33;
        // 5/6 - 1/5 = +63.33, -5.28 to +88.00.
        let share = |passed, graded, rate, low, high| Share {
            passed,
            graded,
            rate,
            low,
            high,
        };
        let a = &report.ran_port[0];
        assert_eq!(a.ran, share(3, 4, Some(0.75), 0.3006, 0.9544));
        assert_eq!(a.did_not, share(0, 3, Some(0.0), 0.0, 0.5615));
        assert_eq!(a.unknown, 1);
        assert_eq!(
            a.difference,
            Some(Difference {
                points: 75.0,
                low: -12.04,
                high: 98.68
            })
        );
        assert_eq!(a.claimed_without_running, Some(3));
        let b = &report.ran_port[1];
        assert_eq!(b.ran, share(2, 2, Some(1.0), 0.3424, 1.0));
        assert_eq!(b.did_not, share(1, 2, Some(0.5), 0.0945, 0.9055));
        assert_eq!(b.unknown, 0);
        assert_eq!(
            b.difference,
            Some(Difference {
                points: 50.0,
                low: -43.14,
                high: 97.33
            })
        );
        // No phase of cmd:b records whether it ran its port.
        assert_eq!(b.claimed_without_running, None);
        let all = &report.ran_port[2];
        assert_eq!(all.ran, share(5, 6, Some(0.8333), 0.4365, 0.9699));
        assert_eq!(all.did_not, share(1, 5, Some(0.2), 0.0362, 0.6245));
        assert_eq!(all.unknown, 1);
        assert_eq!(
            all.difference,
            Some(Difference {
                points: 63.33,
                low: -5.28,
                high: 88.0
            })
        );
        assert_eq!(all.claimed_without_running, Some(3));

        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["trials"][0]["ran_port"], json!(true));
        assert_eq!(json["trials"][7]["ran_port"], Value::Null);
        assert_eq!(
            json["ran_port"][0],
            json!({"agent": "cmd:a",
                   "ran": {"passed": 3, "graded": 4, "rate": 0.75, "low": 0.3006, "high": 0.9544},
                   "did_not": {"passed": 0, "graded": 3, "rate": 0.0, "low": 0.0, "high": 0.5615},
                   "unknown": 1,
                   "difference": {"points": 75.0, "low": -12.04, "high": 98.68},
                   "claimed_without_running": 3})
        );
        assert_eq!(json["ran_port"][2]["agent"], "all");
        assert_eq!(
            json["trials"][4]["agent_outcome"][0]["ran_port"],
            json!(false)
        );

        let md = markdown_of(&report, "t", 0);
        assert!(md.contains("\n## Did the agent run its port?\n"), "{md}");
        assert!(md.contains("XStack's central finding"), "{md}");
        assert!(
            md.contains(
                "| `cmd:a` | 3/4 (75%) | 30–95% | 0/3 (0%) | 0–56% | 1 | +75.0 | -12.0 to +98.7 |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| `cmd:b` | 2/2 (100%) | 34–100% | 1/2 (50%) | 9–91% | 0 | +50.0 | -43.1 to +97.3 |"
            ),
            "{md}"
        );
        assert!(
            md.contains(
                "| all agents | 5/6 (83%) | 44–97% | 1/5 (20%) | 4–62% | 1 | +63.3 | -5.3 to +88.0 |"
            ),
            "{md}"
        );
        assert!(
            md.contains("![Pass rate by whether the agent ran its port](figures/ran_port.svg)"),
            "{md}"
        );
        // The section sits between the agents compared and the task × agent table.
        let at = |heading: &str| md.find(heading).unwrap();
        assert!(at("## Agents compared") < at("## Did the agent run its port?"));
        assert!(at("## Did the agent run its port?") < at("## Task × agent"));
        // The claims table's new column.
        assert!(
            md.contains(
                "| agent | claims | overclaims | overclaim rate | claimed success without running the port |"
            ),
            "{md}"
        );
        assert!(md.contains("| `cmd:a` | 4 | 4 | 100% | 3 |"), "{md}");
        assert!(md.contains("| `cmd:b` | 0 | 0 | – | – |"), "{md}");
    }

    #[test]
    fn a_side_without_graded_trials_has_no_difference() {
        let rows = vec![
            ran("cmd:x", None, Some(true)),
            ran("cmd:x", Some("infra"), Some(false)),
        ];
        let report = build(rows, &["cmd:x".to_string()]);
        let line = &report.ran_port[0];
        assert_eq!((line.ran.passed, line.ran.graded), (1, 1));
        assert_eq!(line.did_not.graded, 0);
        assert_eq!(line.did_not.rate, None);
        assert_eq!(line.difference, None);
        let md = markdown_of(&report, "t", 0);
        assert!(
            md.contains("| `cmd:x` | 1/1 (100%) | 21–100% | 0/0 | – | 0 | – | – |"),
            "{md}"
        );
    }

    #[test]
    fn without_a_record_of_port_runs_the_report_says_so() {
        let mut a = trial("cmd:x", Some(1), None);
        a.agent_outcome = vec![claimed(1, "pass", Some(true))];
        // An ungraded trial that records it does not make a split of the graded ones.
        let b = ran("cmd:x", Some("agent_failure"), Some(false));
        let report = build(vec![a, b], &["cmd:x".to_string()]);
        assert!(!has_ran_port(&report));
        let line = &report.ran_port[0];
        assert_eq!(
            (line.ran.graded, line.did_not.graded, line.unknown),
            (0, 0, 1)
        );
        assert_eq!(line.difference, None);
        assert_eq!(line.claimed_without_running, None);
        let md = markdown_of(&report, "t", 0);
        assert!(
            md.contains(
                "\n## Did the agent run its port?\n\nNo graded trial records whether its agent \
                 ran its port (`agent_checked` of the phases in `result.json`, absent from runs \
                 of an older xstack), so the pass rate is not split by it.\n"
            ),
            "{md}"
        );
        assert!(!md.contains("| ran its port |"), "{md}");
        assert!(!md.contains("ran_port.svg"), "{md}");
        assert!(md.contains("| `cmd:x` | 1 | 0 | 0% | – |"), "{md}");
        assert!(!figures::drawn(&report).contains(&figures::Kind::RanPort));
    }

    #[test]
    fn whether_the_port_ran_is_read_from_each_phase() {
        let phase = |ran_port| PhaseAgent {
            ran_port,
            outcome_detail: None,
            ..claimed(1, "fail", None)
        };
        assert_eq!(ran_port_of(&[]), None);
        assert_eq!(ran_port_of(&[phase(None), phase(None)]), None);
        // A phase that does not say leaves the trial unknown, unless another ran the port.
        assert_eq!(ran_port_of(&[phase(Some(false)), phase(None)]), None);
        assert_eq!(
            ran_port_of(&[phase(Some(false)), phase(Some(false))]),
            Some(false)
        );
        assert_eq!(
            ran_port_of(&[phase(Some(false)), phase(Some(true))]),
            Some(true)
        );

        let checked = |port_runs: u32| {
            json!({"port_runs": port_runs, "last_port_exit": null, "last_port_metrics": [],
                   "source_runs": 1, "probe_runs": 0, "other_runs": 2, "compared": false,
                   "since_last_run_s": 12.5})
        };
        let result = json!({
            "task": "t", "agent": "claude", "run_id": "r", "started_at": "2025-01-01T00:00:00Z",
            "duration_s": 12.5, "passed": false, "passed_in_phase": null,
            "phases": [
                {"phase": 1, "verdict": "fail", "failure": "crash", "criteria": [],
                 "findings": [], "exit_code": 1, "duration_s": 3.0,
                 "agent": {"exit_code": 0, "claimed_success": true},
                 "agent_checked": checked(0)},
                {"phase": 2, "verdict": "fail", "failure": "crash", "criteria": [],
                 "findings": [], "exit_code": 1, "duration_s": 3.0,
                 "agent": {"exit_code": 0, "claimed_success": true},
                 "agent_checked": checked(3)}
            ]
        });
        let row = row_of(&result);
        let phases: Vec<Option<bool>> = row.agent_outcome.iter().map(|p| p.ran_port).collect();
        assert_eq!(phases, [Some(false), Some(true)]);
        assert_eq!(row.ran_port, Some(true));
        // agent_checked is not part of the phase's agent object.
        assert!(!row.agent_outcome[0].agent.contains_key("agent_checked"));
        let report = build(vec![row], &["claude".to_string()]);
        assert_eq!(report.ran_port[0].claimed_without_running, Some(1));

        // No run of the port recorded, but a Python process the recorder missed: unknown.
        let ran_port_in = |checked: &Value| {
            crate::bench::model::ran_port_in(&serde_json::from_value(checked.clone()).unwrap())
        };
        let mut missed = checked(0);
        missed["unknown_runs"] = json!(1);
        assert_eq!(ran_port_in(&missed), None);
        missed["port_runs"] = json!(2);
        assert_eq!(ran_port_in(&missed), Some(true));
        assert_eq!(ran_port_in(&checked(0)), Some(false));
    }

    #[test]
    fn a_run_outside_a_bench_is_judged_by_its_result() {
        let result = json!({
            "task": "t", "agent": "claude", "run_id": "r", "started_at": "2025-01-01T00:00:00Z",
            "duration_s": 12.5, "passed": true, "passed_in_phase": 2,
            "phases": [
                {"phase": 1, "verdict": "fail", "failure": "fidelity_gap", "criteria": [],
                 "findings": [], "exit_code": 0, "duration_s": 3.0,
                 "runner": {"spec": "slurm://gpu/scratch", "job_id": 41, "queue_s": 2.5},
                 "agent": {"exit_code": 0, "claimed_success": true, "cost_usd": 0.5}},
                {"phase": 2, "outcome": "graded", "verdict": "pass", "failure": null,
                 "criteria": [], "findings": [], "exit_code": 0, "duration_s": 3.0,
                 "runner": {"spec": "slurm://gpu/scratch", "job_id": 42, "queue_s": 1.0},
                 "agent": {"exit_code": 0, "claimed_success": true, "cost_usd": 0.25}}
            ]
        });
        let row = row_of(&result);
        assert!(row.passed && row.failure.is_none(), "{row:?}");
        assert_eq!(row.passed_in_phase, Some(2));
        assert_eq!(row.runner.as_deref(), Some("slurm://gpu/scratch"));
        assert_eq!(row.job_id.as_deref(), Some("42"));
        assert_eq!(row.queue_s, Some(3.5));
        assert_eq!(row.cost_usd(), Some(0.75));
        assert_eq!(row.agent_outcome[0].claimed_success(), Some(true));
        assert_eq!(row.agent_outcome[0].passed(), Some(false));
        let report = build(vec![row], &["claude".to_string()]);
        assert_eq!(report.summary[0].overclaims, 1);
        assert_eq!(report.summary[0].cost_usd, Some(0.75));
        // A result without agent_checked: unknown, and report.json's phases say nothing of it;
        // each phase's agent fields are the typed record's, a field the run left out null.
        assert_eq!(report.trials[0].ran_port, None);
        let json = serde_json::to_value(&report.trials[0]).unwrap();
        assert_eq!(
            json["agent_outcome"][1],
            json!({"phase": 2, "outcome": "graded", "verdict": "pass", "exit_code": 0,
                   "claimed_success": true, "claim": null, "tokens_in": null,
                   "tokens_out": null, "cost_usd": 0.25, "session": null, "tool_calls": null,
                   "tool_failures": null, "first_tool_error": null})
        );
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}

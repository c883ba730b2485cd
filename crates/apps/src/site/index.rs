//! The site's index (the report's tables and figures, and a table of every trial that
//! filters, sorts, searches and pages in the browser, its view kept in the URL) and the
//! writing of each trial's folder.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::bench::figures;
use crate::bench::model::{Report, TrialFailure, distinct};
use crate::bench::rebuild::BenchFile;
use crate::bench::tables::{self, Align, Emphasis, Table, key};
use crate::session::result::RunResult;

use super::html::{Frame, escape, page, script_json};
use super::trial::{self, Links, TrialData};
use super::{SiteError, SiteTrial, Writer, verdict_text};

/// The file in a trial's folder that holds the text the index searches.
const SEARCH_FILE: &str = "search.txt";

/// Writes a trial's folder: `index.html`, and with a journal `agent.cast` and `cast.js`.
pub fn write_trial(
    dir: &Path,
    trial: &SiteTrial<'_>,
    compare: &[(String, String)],
    writer: &Writer,
) -> Result<(), SiteError> {
    let data = TrialData::read(&trial.run_dir);
    let cast = data.cast();
    let links = Links {
        root: "../../",
        compare,
    };
    let body = trial::body(trial.row, &data, &links, cast.is_some());
    let title = format!(
        "{} · {} · {} — xstack",
        trial.row.task,
        crate::agent::label(&trial.row.agent),
        trial.row.repeat
    );
    let scripts: &[&str] = if cast.is_some() {
        &[
            "../../assets/asciinema-player.min.js",
            "cast.js",
            "../../assets/trial.js",
        ]
    } else {
        &["../../assets/trial.js"]
    };
    let html = page(
        &Frame {
            title: &title,
            root: "../../",
            styles: &["asciinema-player.css"],
            scripts,
        },
        &body,
    );
    writer.text(&dir.join("index.html"), &html)?;
    writer.text(&dir.join(SEARCH_FILE), &data.search_text())?;
    if let Some(cast) = cast {
        let markers: Vec<Value> = trial::cast_markers(&cast)
            .into_iter()
            .map(|(t, label)| json!([t, label]))
            .collect();
        writer.text(&dir.join("agent.cast"), &cast)?;
        writer.text(
            &dir.join("cast.js"),
            &format!(
                "window.XSTACK_CAST = {};\nwindow.XSTACK_MARKERS = {};\n",
                script_json(&Value::String(cast)),
                script_json(&Value::Array(markers))
            ),
        )?;
    } else {
        for name in ["agent.cast", "cast.js"] {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    Ok(())
}

/// One phase's verdict as the trial table shows it: `pass`, `fail bypass`, `agent_failure`.
fn phase_cell(result: Option<&RunResult>, phase: u8) -> String {
    let Some(p) = result.and_then(|r| r.phases.iter().find(|p| p.phase == phase)) else {
        return String::new();
    };
    match (p.verdict, p.failure) {
        (Some(v), Some(f)) => format!("{} {}", v.as_str(), f.as_str()),
        (Some(v), None) => v.as_str().to_string(),
        (None, _) => p.outcome.as_str().to_string(),
    }
}

/// The tokens the agent reported over the phases (sent and received), when some phase
/// reported any.
fn agent_tokens(result: Option<&RunResult>) -> Option<u64> {
    let counts: Vec<u64> = result?
        .phases
        .iter()
        .filter_map(|p| p.agent.as_ref())
        .flat_map(|a| [a.tokens_in, a.tokens_out])
        .flatten()
        .collect();
    (!counts.is_empty()).then(|| counts.iter().sum())
}

/// The trial table's data: one object per trial.
fn trial_data(site: &Path, trials: &[SiteTrial<'_>]) -> Value {
    let rows: Vec<Value> = trials
        .iter()
        .map(|t| {
            let row = t.row;
            let result = t.result.as_ref();
            let claimed: Vec<bool> = row
                .agent_outcome
                .iter()
                .filter_map(|p| p.claimed_success())
                .collect();
            let tokens = agent_tokens(result);
            let search = std::fs::read_to_string(site.join("trials").join(&t.slug).join(SEARCH_FILE))
                .unwrap_or_default();
            json!({
                "id": t.slug,
                "href": format!("trials/{}/index.html", t.slug),
                "task": row.task,
                "agent": crate::agent::label(&row.agent),
                "repeat": row.repeat,
                "verdict": if row.passed { "pass" } else if row.graded() { "fail" } else { "no verdict" },
                "text": verdict_text(row),
                "class": row.failure.map(TrialFailure::as_str).unwrap_or(""),
                "p1": phase_cell(result, 1),
                "p2": phase_cell(result, 2),
                "ran_port": row.ran_port,
                "claimed": if claimed.is_empty() { Value::Null } else { json!(claimed.iter().any(|c| *c)) },
                "duration": (row.duration_s * 10.0).round() / 10.0,
                "tokens": tokens,
                "cost": row.cost_usd(),
                "direction": t.direction(),
                "search": search,
            })
        })
        .collect();
    Value::Array(rows)
}

/// A model table's cell (or header) as HTML: escaped, code as `<code>`, a link as `<a>`.
fn cell_html(text: &str, emphasis: Option<Emphasis>, link: Option<&str>) -> String {
    let text = escape(text);
    let text = match emphasis {
        Some(Emphasis::Code) => format!("<code>{text}</code>"),
        None => text,
    };
    match link {
        Some(target) => format!("<a href=\"{}\">{text}</a>", escape(target)),
        None => text,
    }
}

/// A table of the report as HTML, `id` `KEY-table`; a column of local paths is left out.
fn paint(html: &mut String, table: &Table) {
    let shown: Vec<usize> = (0..table.columns.len())
        .filter(|&i| !table.columns[i].local_path)
        .collect();
    let class = |i: usize| match table.columns[i].align {
        Align::Left => "",
        Align::Right => " class=\"num\"",
    };
    let _ = write!(
        html,
        "<div class=\"scroll\"><table id=\"{}-table\"><thead><tr>",
        table.key
    );
    for &i in &shown {
        let column = &table.columns[i];
        let _ = write!(
            html,
            "<th{}>{}</th>",
            class(i),
            cell_html(&column.header, column.emphasis, None)
        );
    }
    html.push_str("</tr></thead><tbody>");
    for row in &table.rows {
        html.push_str("<tr>");
        for &i in &shown {
            if let Some(cell) = row.get(i) {
                let _ = write!(
                    html,
                    "<td{}>{}</td>",
                    class(i),
                    cell_html(&cell.text, cell.emphasis, cell.link.as_deref())
                );
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div>");
}

/// What the site says above a table of the report.
fn note(table: &Table, report: &Report) -> String {
    match table.key {
        key::PER_AGENT => format!(
            "Pass rate: passed / graded; 95% intervals: {}.",
            report.interval_method.describe()
        ),
        key::PAIRS => format!(
            "The difference of two pass rates, in percentage points, with its 95% interval \
             ({}). Distinguishable: the interval excludes 0.",
            tables::pairs_method(report.interval_method)
        ),
        key::BY_DIRECTION => "Passed / graded trials of each direction (the source's framework \
             → the port's) with the 95% Wilson interval."
            .to_string(),
        key::RAN_PORT => "Passed / graded trials whose agent ran its port (in some phase it \
             started the workspace's code itself) and whose agent did not, with the 95% Wilson \
             interval, and the difference of the two pass rates in percentage points with its \
             95% interval. A difference says the two go together, not that running the port \
             made the trials pass."
            .to_string(),
        key::TASK_GRID => "Passed / graded trials with the 95% Wilson interval, and the median \
             duration in seconds."
            .to_string(),
        key::CLAIMS => "Graded phases in which the agent said whether it succeeded. An \
             overclaim: the agent claimed success and the grader failed the phase."
            .to_string(),
        key::TIME => "Median seconds per trial: wall-clock time, the agent, the verify runs, \
             and the rest (set-up, copies, environment checks, grading)."
            .to_string(),
        _ => "Every trial, as report.md lists it; a verdict links to the trial's page.".to_string(),
    }
}

/// The report's tables, from the same model as report.md's and in its order, each in a
/// section of its own; a trial's verdict links to its page.
fn report_tables(html: &mut String, report: &Report, tasks: &[String], trials: &[SiteTrial<'_>]) {
    let mut all = tables::all(report, tasks);
    for table in all.iter_mut().filter(|t| t.key == key::TRIALS) {
        for (row, trial) in table.rows.iter_mut().zip(trials) {
            if let Some(cell) = row.get_mut(tables::TRIAL_VERDICT_COLUMN) {
                cell.link = Some(format!("trials/{}/index.html", trial.slug));
            }
        }
    }
    for table in &all {
        if table.key == key::TASK_GRID && !all.iter().any(|t| t.key == key::RAN_PORT) {
            html.push_str(
                "<section id=\"ran-port\"><h2>Did the agent run its port?</h2><p class=\"note\">\
                 No graded trial records whether its agent ran its port.</p></section>\n",
            );
        }
        let _ = write!(
            html,
            "<section id=\"{}\"><h2>{}</h2><p class=\"note\">{}</p>",
            table.key,
            escape(table.title),
            escape(&note(table, report))
        );
        paint(html, table);
        html.push_str("</section>\n");
    }
}

/// The index's table of contents: the trial table, each report table, the sources, the
/// figures.
fn contents(report: &Report, tasks: &[String]) -> String {
    let mut nav = String::from("<nav class=\"toc\"><a href=\"#trials-section\">Find a trial</a>");
    for table in tables::all(report, tasks) {
        let _ = write!(
            nav,
            "<a href=\"#{}\">{}</a>",
            table.key,
            escape(table.title)
        );
    }
    if report.trials.iter().any(|t| t.upstream.is_some()) {
        nav.push_str("<a href=\"#upstream\">Sources</a>");
    }
    nav.push_str("<a href=\"#figures\">Figures</a></nav>");
    nav
}

/// "Where the tasks come from": per task made from a public repository, the repository and
/// commit (linked to its tree), the licence, the experiment and the copy's differences from
/// the commit; nothing when every task is the team's own.
fn upstream_table(html: &mut String, report: &Report) {
    let mut seen: Vec<&str> = Vec::new();
    let mut rows = String::new();
    for trial in &report.trials {
        let Some(upstream) = trial.upstream.as_ref() else {
            continue;
        };
        if seen.contains(&trial.task.as_str()) {
            continue;
        }
        seen.push(&trial.task);
        let changed = if upstream.changed.is_empty() {
            "none".to_string()
        } else {
            let items: String = upstream
                .changed
                .iter()
                .map(|c| format!("<li>{}</li>", escape(c)))
                .collect();
            format!(
                "<details><summary>{}</summary><ul>{items}</ul></details>",
                upstream.changed.len()
            )
        };
        let _ = write!(
            rows,
            "<tr><td>{}</td><td><a class=\"upstream\" href=\"{}\">{}</a></td><td>{}</td>\
             <td><code>{}</code></td><td>{changed}</td></tr>",
            escape(&trial.task),
            escape(&upstream.url()),
            escape(&upstream.label()),
            escape(&upstream.licence),
            escape(&upstream.experiment),
        );
    }
    if seen.is_empty() {
        return;
    }
    let _ = writeln!(
        html,
        "<section id=\"upstream\"><h2>Where the tasks come from</h2><p class=\"note\">Each task \
         made from a public repository, at the commit its source was copied from, and every \
         difference of the copy from that commit.</p><div class=\"scroll\"><table id=\"upstream-table\">\
         <thead><tr><th>task</th><th>repository</th><th>licence</th><th>experiment</th>\
         <th>changes from the commit</th></tr></thead><tbody>{rows}</tbody></table></div></section>"
    );
}

/// "The tasks": a link to each task's page (`tasks/ID/`, the catalog's page of it) with its
/// title; nothing when no task's folder could be read.
fn task_pages_list(html: &mut String, task_pages: &[(String, String)]) {
    if task_pages.is_empty() {
        return;
    }
    html.push_str(
        "<section id=\"task-pages\"><h2>The tasks</h2><p class=\"note\">Each task this bench \
         ran, as the catalog shows it: where it comes from, the claim, the criteria and why each \
         tolerance, the reference curve, the demo.</p><ul>",
    );
    for (id, title) in task_pages {
        let _ = write!(
            html,
            "<li><a class=\"task-page\" href=\"{}/{id}/index.html\">{id}</a>: {}</li>",
            super::catalog::TASKS_DIR,
            escape(title),
            id = escape(id)
        );
    }
    html.push_str("</ul></section>\n");
}

/// Copies the report's SVG figures into `site/figures/`; returns their names.
fn copy_figures(site: &Path, out: &Path, writer: &Writer) -> Result<Vec<String>, SiteError> {
    let mut names = Vec::new();
    let Ok(entries) = std::fs::read_dir(out.join(figures::DIR)) else {
        return Ok(names);
    };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    files.sort();
    for file in files {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        writer.bytes(&site.join(figures::DIR).join(&name), &bytes)?;
        names.push(name);
    }
    Ok(names)
}

/// Writes `site/index.html` and `site/data.js`.
pub fn write_index(
    site: &Path,
    out: &Path,
    report: &Report,
    trials: &[SiteTrial<'_>],
    task_pages: &[(String, String)],
    writer: &Writer,
) -> Result<(), SiteError> {
    let mut body = String::new();
    let graded = report.trials.iter().filter(|t| t.graded()).count();
    let passed = report.trials.iter().filter(|t| t.passed).count();
    let tasks = BenchFile::read(out).map_or_else(
        || distinct(report.trials.iter().map(|t| t.task.clone())),
        |plan| plan.tasks,
    );
    let _ = write!(
        body,
        "<header><h1>xstack bench</h1><p class=\"verdict-line\">{} trials, {graded} graded, \
         {passed} passed.</p>{}</header>\n<main>\n",
        report.trials.len(),
        contents(report, &tasks)
    );
    let has_direction = trials
        .iter()
        .any(|t| t.row.migration != crate::task::Migration::default());
    body.push_str(
        "<section id=\"trials-section\"><h2>Find a trial</h2>\
         <form class=\"filters\" id=\"filters\" onsubmit=\"return false\">\
         <input type=\"search\" id=\"q\" placeholder=\"Search findings and transcripts\" aria-label=\"search\">\
         <select id=\"task\" aria-label=\"task\"><option value=\"\">every task</option></select>\
         <select id=\"agent\" aria-label=\"agent\"><option value=\"\">every agent</option></select>\
         <select id=\"verdict\" aria-label=\"verdict\"><option value=\"\">every verdict</option>\
         <option value=\"pass\">pass</option><option value=\"fail\">fail</option>\
         <option value=\"no verdict\">no verdict</option></select>\
         <select id=\"class\" aria-label=\"failure class\"><option value=\"\">every class</option></select>",
    );
    if has_direction {
        body.push_str(
            "<select id=\"direction\" aria-label=\"direction\"><option value=\"\">every direction</option></select>",
        );
    }
    body.push_str(
        "</form><p class=\"note\" id=\"count\"></p>\
         <div class=\"scroll\"><table id=\"trials\"><thead><tr>\
         <th data-key=\"task\">task</th><th data-key=\"agent\">agent</th><th data-key=\"repeat\">repeat</th>\
         <th data-key=\"text\">verdict</th><th data-key=\"p1\">phase 1</th><th data-key=\"p2\">phase 2</th>\
         <th data-key=\"ran_port\">ran its port</th><th data-key=\"claimed\">claimed success</th>\
         <th data-key=\"duration\">duration (s)</th><th data-key=\"tokens\">tokens</th><th data-key=\"cost\">cost (USD)</th>",
    );
    if has_direction {
        body.push_str("<th data-key=\"direction\">direction</th>");
    }
    body.push_str(
        "</tr></thead><tbody></tbody></table></div><nav class=\"pager\" id=\"pager\"></nav>\
         <noscript><p>The trial table needs JavaScript; each trial's page is under trials/.</p></noscript></section>\n",
    );
    // report.json leaves out where the time went: it is read again from the run folders.
    let mut timed = report.clone();
    for (row, trial) in timed.trials.iter_mut().zip(trials) {
        row.timing = crate::bench::model::timing_in(&trial.run_dir, row.duration_s);
    }
    report_tables(&mut body, &timed, &tasks, trials);
    task_pages_list(&mut body, task_pages);
    upstream_table(&mut body, report);
    let figures = copy_figures(site, out, writer)?;
    body.push_str("<section id=\"figures\"><h2>Figures</h2>");
    if figures.is_empty() {
        body.push_str("<p class=\"empty\">No figure.</p>");
    }
    for name in figures {
        let _ = write!(
            body,
            "<figure><img src=\"{dir}/{name}\" alt=\"{name}\"></figure>",
            dir = figures::DIR,
            name = escape(&name)
        );
    }
    body.push_str("</section>\n</main>\n");
    let html = page(
        &Frame {
            title: "xstack bench",
            root: "",
            styles: &[],
            scripts: &["data.js", "assets/index.js"],
        },
        &body,
    );
    writer.text(
        &site.join("data.js"),
        &format!(
            "window.XSTACK_TRIALS = {};\n",
            script_json(&trial_data(site, trials))
        ),
    )?;
    writer.text(&site.join("index.html"), &html)
}

#[cfg(test)]
#[path = "../../../../tests/site/tables.rs"]
mod parsed_tables;

#[cfg(test)]
mod tests {
    use super::parsed_tables::{
        markdown_tables, report_tables as shown_tables, without_run_folder,
    };
    use super::*;

    #[test]
    fn each_phase_reads_as_its_verdict_and_class_or_why_it_was_not_graded() {
        let agent = |tokens_in: u64, tokens_out: Option<u64>| {
            json!({"exit_code": 0, "claimed_success": null, "claim": null, "tokens_in": tokens_in,
                   "tokens_out": tokens_out, "cost_usd": null, "session": null})
        };
        let result: RunResult = serde_json::from_value(json!({
            "task": "t", "agent": "a", "run_id": "r", "started_at": "2026-12-07T00:00:00Z",
            "duration_s": 1.0, "passed": false, "passed_in_phase": null,
            "phases": [
                {"phase": 1, "verdict": "fail", "failure": "fidelity_gap", "criteria": [],
                 "findings": [], "exit_code": 0, "duration_s": 1.0, "agent": agent(10, Some(5))},
                {"phase": 2, "verdict": null, "failure": null, "outcome": "agent_failure",
                 "criteria": [], "findings": [], "exit_code": null, "duration_s": 0.0,
                 "agent": agent(1, None)}
            ]
        }))
        .unwrap();
        assert_eq!(phase_cell(Some(&result), 1), "fail fidelity_gap");
        assert_eq!(phase_cell(Some(&result), 2), "agent_failure");
        assert_eq!(phase_cell(Some(&result), 3), "");
        assert_eq!(phase_cell(None, 1), "");
        assert_eq!(agent_tokens(Some(&result)), Some(16));
        let silent = RunResult {
            phases: Vec::new(),
            ..result
        };
        assert_eq!(agent_tokens(Some(&silent)), None);
    }

    #[test]
    fn each_task_from_a_public_repository_is_linked_to_its_commit() {
        let sgc = crate::task::UpstreamSpec {
            repository: "Tiiiger/SGC".into(),
            commit: "2c7a2727e82e462d8ef9d6e57f0b08888e16488f".into(),
            licence: "MIT".into(),
            experiment: "citation.py".into(),
            changed: vec!["data/ind.pubmed.allx: left out (over 4 MB)".into()],
        };
        let row = |task: &str, upstream: Option<&crate::task::UpstreamSpec>| {
            crate::bench::model::TrialRow {
                task: task.into(),
                upstream: upstream.cloned(),
                ..crate::site::tests::row(None, Some(1))
            }
        };
        let trials = vec![
            row("sgc-cora", Some(&sgc)),
            row("sgc-cora", Some(&sgc)),
            row("digits-mlp", None),
        ];
        let report = crate::bench::model::build(trials, &["cmd:a".to_string()]);
        let mut html = String::new();
        upstream_table(&mut html, &report);
        assert_eq!(html.matches("<tr><td>").count(), 1, "{html}");
        assert!(
            html.contains(
                "<td>sgc-cora</td><td><a class=\"upstream\" href=\"https://github.com/Tiiiger/SGC/tree/2c7a2727e82e462d8ef9d6e57f0b08888e16488f\">Tiiiger/SGC@2c7a272</a></td><td>MIT</td><td><code>citation.py</code></td>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<li>data/ind.pubmed.allx: left out (over 4 MB)</li>"),
            "{html}"
        );
        let own = crate::bench::model::build(vec![row("digits-mlp", None)], &["cmd:a".to_string()]);
        let mut html = String::new();
        upstream_table(&mut html, &own);
        assert!(html.is_empty(), "{html}");
    }

    #[test]
    fn a_bench_that_goes_both_ways_has_its_pass_rates_by_direction() {
        use crate::bench::model::{DirectionLine, IntervalMethod, Share};
        use crate::task::{Framework, Migration};
        let share = |passed, graded| Share {
            passed,
            graded,
            rate: Some(passed as f64 / graded as f64),
            low: 0.1,
            high: 0.9,
        };
        let mut report = Report {
            interval_method: IntervalMethod::Wilson,
            trials: Vec::new(),
            summary: Vec::new(),
            pairs: Vec::new(),
            ran_port: Vec::new(),
            by_direction: Vec::new(),
        };
        assert_eq!(
            tables::by_direction(&report),
            None,
            "one direction: no table"
        );
        report.by_direction = vec![
            DirectionLine {
                agent: "demo".into(),
                migration: Migration::default(),
                share: share(1, 2),
            },
            DirectionLine {
                agent: "demo".into(),
                migration: Migration {
                    from: Framework::Jax,
                    to: Framework::Torch,
                },
                share: share(1, 1),
            },
        ];
        let mut html = String::new();
        paint(&mut html, &tables::by_direction(&report).unwrap());
        assert!(
            html.contains("<th class=\"num\">PyTorch → JAX</th>"),
            "{html}"
        );
        assert!(
            html.contains("<th class=\"num\">JAX → PyTorch</th>"),
            "{html}"
        );
        assert!(html.contains("<td class=\"num\">1/2 (50%)</td>"), "{html}");
        assert!(html.contains("<td class=\"num\">1/1 (100%)</td>"), "{html}");
    }

    /// A bench with every table report.md can have: two agents, both directions, a task
    /// from a public repository, a task with no trial yet, claims, Slurm jobs.
    #[test]
    fn the_index_paints_every_table_of_report_md_alike() {
        use crate::bench::model::{PhaseAgent, TrialRow, build};
        use crate::bench::report::{MarkdownContext, markdown};
        use crate::task::{Framework, Migration};
        let claimed = |verdict: &str| PhaseAgent {
            phase: 1,
            outcome: crate::event::PhaseOutcome::Graded,
            outcome_detail: None,
            verdict: serde_json::from_value(json!(verdict)).unwrap(),
            ran_port: Some(verdict == "pass"),
            agent: serde_json::from_value(json!({"exit_code": 0, "claimed_success": true}))
                .unwrap(),
        };
        let upstream = crate::task::UpstreamSpec {
            repository: "Tiiiger/SGC".into(),
            commit: "2c7a2727e82e462d8ef9d6e57f0b08888e16488f".into(),
            licence: "MIT".into(),
            experiment: "citation.py".into(),
            changed: Vec::new(),
        };
        let mut rows = Vec::new();
        for (i, agent) in ["cmd:a", "claude"].into_iter().enumerate() {
            for (task, to_torch) in [("sgc-cora", false), ("digits-jax", true)] {
                let passed = i == 0 || to_torch;
                let failure = (!passed).then_some(TrialFailure::Graded(
                    crate::grade::FailureClass::FidelityGap,
                ));
                rows.push(TrialRow {
                    task: task.into(),
                    agent: agent.into(),
                    migration: if to_torch {
                        Migration {
                            from: Framework::Jax,
                            to: Framework::Torch,
                        }
                    } else {
                        Migration::default()
                    },
                    upstream: (!to_torch).then(|| upstream.clone()),
                    job_id: to_torch.then(|| "41".to_string()),
                    queue_s: to_torch.then_some(2.5),
                    ran_port: Some(passed),
                    agent_outcome: vec![claimed(if passed { "pass" } else { "fail" })],
                    run_dir: format!("/nowhere/{task}-{agent}"),
                    ..crate::site::tests::row(failure, passed.then_some(1))
                });
            }
        }
        let agents = ["cmd:a".to_string(), "claude".to_string()];
        let report = build(rows, &agents);
        let tasks = [
            "sgc-cora".to_string(),
            "digits-jax".to_string(),
            "not-run-yet".to_string(),
        ];
        let md = markdown(
            &report,
            &MarkdownContext {
                tasks: &tasks,
                planned: 6,
                runners: "local",
            },
        );
        let trials = crate::site::trials(Path::new("/nowhere"), &report);
        let mut html = String::new();
        report_tables(&mut html, &report, &tasks, &trials);
        let expected = without_run_folder(markdown_tables(&md), "/nowhere/");
        let titles: Vec<&str> = expected.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(
            titles,
            [
                "Per agent",
                "Agents compared",
                "By direction",
                "Did the agent run its port?",
                "Task × agent",
                "Claimed success against the verdict",
                "Where the time went",
                "Trials"
            ],
            "{md}"
        );
        assert_eq!(shown_tables(&html), expected, "{html}");
        // The site's own: the upstream's link, a verdict's link to the trial's page.
        assert!(
            html.contains("<a href=\"https://github.com/Tiiiger/SGC/tree/2c7a2727e82e462d8ef9d6e57f0b08888e16488f\">Tiiiger/SGC@2c7a272</a>"),
            "{html}"
        );
        assert!(
            html.contains("<a href=\"trials/sgc-cora--cmd_a--1/index.html\">PASS (phase 1)</a>"),
            "{html}"
        );
        assert!(!html.contains("/nowhere"), "{html}");
    }
}

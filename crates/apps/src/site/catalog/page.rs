//! The catalog's pages: the index of every task and a task's page, rendered from what
//! [`super::CatalogTask`] read of its folder and the runs recorded of it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::notes::{self, Demo};
use super::{CatalogTask, Home, TaskRun};
use crate::site::chart::{Chart, Curve, Level};
use crate::site::html::{Frame, escape, measure, page};
use crate::task::{ClaimSpec, ClaimStatus, CriterionSpec, Direction};

/// The band a criterion accepts, in words: `>= 350.0`, `<= 1.52`, `122.3 ± 8`.
pub fn accepted(spec: &CriterionSpec) -> String {
    let (low, high) = spec.edges();
    match spec.direction {
        Direction::Higher => format!("≥ {}", measure(low)),
        Direction::Lower => format!("≤ {}", measure(high)),
        Direction::Within => format!(
            "{} ± {} ({} to {})",
            measure(spec.published),
            measure(spec.tolerance),
            measure(low),
            measure(high)
        ),
    }
}

/// A paragraph of text, or nothing when it is empty.
fn paragraph(html: &mut String, class: &str, text: &str) {
    if !text.trim().is_empty() {
        let _ = write!(html, "<p class=\"{class}\">{}</p>", escape(text));
    }
}

/// The page's header: the task's title, its id and direction, the way home.
fn header(html: &mut String, t: &CatalogTask, home: &Home) {
    let (href, name) = match home {
        Home::Catalog => ("../../index.html", "catalog"),
        Home::Bench => ("../../index.html", "bench"),
    };
    let spec = &t.task.spec;
    let _ = write!(
        html,
        "<header><a class=\"home\" href=\"{href}\">← {name}</a><h1>{}</h1>\
         <p class=\"facts\"><code id=\"task-id\">{}</code> <span class=\"sep\">·</span> \
         <span id=\"direction\">{}</span></p></header><main>",
        escape(&spec.title),
        escape(&spec.id),
        escape(&t.task.migration.label())
    );
    if let Some(summary) = &spec.summary {
        paragraph(html, "summary", summary);
    }
    html.push_str(
        "<nav class=\"toc\"><a href=\"#upstream\">Where it comes from</a>\
         <a href=\"#experiment\">The experiment</a><a href=\"#claims\">The claim</a>\
         <a href=\"#criteria\">Criteria</a><a href=\"#phase2\">Phase-two details</a>\
         <a href=\"#reference\">Reference curve</a><a href=\"#demo\">The demo</a></nav>",
    );
}

/// Where the task comes from: the repository and commit, licence, experiment, every change.
fn upstream_section(html: &mut String, t: &CatalogTask) {
    html.push_str("<section id=\"upstream\"><h2>Where it comes from</h2>");
    let spec = &t.task.spec;
    match &spec.upstream {
        Some(up) => {
            let _ = write!(
                html,
                "<table class=\"facts-table\"><tr><th>repository</th><td><a class=\"upstream\" \
                 href=\"{}\">{}</a></td></tr><tr><th>commit</th><td><code>{}</code></td></tr>\
                 <tr><th>licence</th><td>{}</td></tr><tr><th>experiment</th><td><code>{}</code>\
                 </td></tr></table>",
                escape(&up.url()),
                escape(&up.repository),
                escape(&up.commit),
                escape(&up.licence),
                escape(&up.experiment)
            );
            html.push_str("<h3>The copy against the commit</h3><ul class=\"changed\">");
            for line in &up.changed {
                let _ = write!(html, "<li>{}</li>", escape(line));
            }
            html.push_str("</ul>");
        }
        None => html.push_str("<p class=\"empty\">Written for xstack: no public repository.</p>"),
    }
    if !spec.source.exclude.is_empty() {
        let _ = write!(
            html,
            "<p>Left out of the agent's workspace: {}.</p>",
            list_code(&spec.source.exclude)
        );
    }
    let _ = write!(
        html,
        "<p class=\"note\">Published: {}</p>",
        escape(&spec.published.citation)
    );
    for note in notes::comments_above(&t.text, "[source]") {
        paragraph(html, "why", &note);
    }
    html.push_str("</section>");
}

/// Items as `<code>` joined by commas.
fn list_code(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("<code>{}</code>", escape(i)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The experiment: the command (or notebook), the environments, the time it may take.
fn experiment_section(html: &mut String, t: &CatalogTask) {
    let spec = &t.task.spec;
    html.push_str(
        "<section id=\"experiment\"><h2>The experiment</h2><table class=\"facts-table\">",
    );
    let run = match (&spec.run.notebook, &spec.run.cells) {
        (Some(notebook), Some(cells)) => format!(
            "the notebook <code>{}</code>, its code cells {}",
            escape(notebook),
            escape(cells)
        ),
        (Some(notebook), None) => format!("the notebook <code>{}</code>", escape(notebook)),
        (None, _) => format!("<code id=\"command\">{}</code>", escape(&spec.run.command)),
    };
    let _ = write!(html, "<tr><th>runs</th><td>{run}</td></tr>");
    if let Some(setup) = &spec.env.setup {
        let _ = write!(
            html,
            "<tr><th>before it</th><td><code>{}</code></td></tr>",
            escape(setup)
        );
    }
    let _ = write!(
        html,
        "<tr><th>the source's environment ({})</th><td>{}</td></tr>\
         <tr><th>the port's environment ({})</th><td>{}</td></tr>\
         <tr><th>time limit</th><td>{} s</td></tr></table>",
        t.task.migration.from.name(),
        list_code(&spec.env.reference_packages),
        t.task.migration.to.name(),
        list_code(&spec.env.packages),
        spec.run.timeout_s
    );
    for header in ["[env]", "[run]"] {
        for note in notes::comments_above(&t.text, header) {
            paragraph(html, "why", &note);
        }
    }
    html.push_str("</section>");
}

/// One claim: the authors' words and where, and what the runs here measured.
fn claim_item(html: &mut String, spec: &CriterionSpec, claim: &ClaimSpec) {
    let _ = write!(
        html,
        "<div class=\"claim\" data-metric=\"{}\"><h3><code>{}</code> <span class=\"status {}\">{}</span></h3>",
        escape(&spec.metric),
        escape(&spec.metric),
        claim.status.as_str(),
        match claim.status {
            ClaimStatus::Reproduced => "reproduced here",
            ClaimStatus::NotReproduced => "not reproduced here",
            ClaimStatus::NoClaim => "no published claim",
        }
    );
    if let Some(text) = claim.one_line_text() {
        let _ = write!(
            html,
            "<blockquote class=\"quote\">{}</blockquote>",
            escape(&text)
        );
    }
    if let Some(at) = &claim.location {
        let value = claim.value_text().unwrap_or_default();
        let _ = write!(
            html,
            "<p>The authors' number <b>{}</b>, at <code class=\"where\">{}</code>.</p>",
            escape(&value),
            escape(at)
        );
    }
    if let Some(m) = &claim.measured {
        let _ = write!(
            html,
            "<table class=\"measured\"><tr><th>runs here</th><th>mean</th><th>spread (std)</th>\
             <th>date</th><th>versions</th><th>machine and seeds</th></tr><tr><td class=\"num runs\">{}</td>\
             <td class=\"num mean\">{}</td><td class=\"num std\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr></table>",
            m.runs,
            measure(m.mean),
            measure(m.std),
            escape(&m.date),
            escape(&m.versions),
            escape(m.machine.as_deref().unwrap_or("–"))
        );
    }
    html.push_str("</div>");
}

/// Every criterion's claim.
fn claims_section(html: &mut String, t: &CatalogTask) {
    html.push_str("<section id=\"claims\"><h2>The claim</h2>");
    let mut any = false;
    for spec in &t.task.spec.criteria {
        if let Some(claim) = &spec.claim {
            claim_item(html, spec, claim);
            any = true;
        }
    }
    if !any {
        html.push_str(
            "<p class=\"empty\">The task records no claim (only the citation above).</p>",
        );
    }
    html.push_str("</section>");
}

/// The criteria: what passes, and the reasoning written beside each.
fn criteria_section(html: &mut String, t: &CatalogTask) {
    let why = notes::comments_above(&t.text, "[[criterion]]");
    html.push_str(
        "<section id=\"criteria\"><h2>Criteria</h2><p class=\"note\">All must hold for a pass.</p>\
         <div class=\"scroll\"><table class=\"criteria\"><tr><th>metric</th><th>reduce</th>\
         <th class=\"num\">published</th><th class=\"num\">tolerance</th><th>direction</th>\
         <th>passes when</th></tr>",
    );
    for spec in &t.task.spec.criteria {
        let _ = write!(
            html,
            "<tr data-metric=\"{}\"><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"direction\">{}</td><td class=\"band\">{}</td></tr>",
            escape(&spec.metric),
            escape(&spec.metric),
            spec.reduce.as_str(),
            measure(spec.published),
            measure(spec.tolerance),
            spec.direction.as_str(),
            escape(&accepted(spec))
        );
    }
    html.push_str("</table></div>");
    for (spec, note) in t.task.spec.criteria.iter().zip(&why) {
        if !note.is_empty() {
            let _ = write!(
                html,
                "<div class=\"why-criterion\" data-metric=\"{}\"><h4>Why: {}</h4><p class=\"why\">{}</p></div>",
                escape(&spec.metric),
                escape(&spec.metric),
                escape(note)
            );
        }
    }
    html.push_str("</section>");
}

/// The phase-two details, as the agent gets them after a failed phase 1.
fn phase2_section(html: &mut String, t: &CatalogTask) {
    let _ = write!(
        html,
        "<section id=\"phase2\"><h2>Phase-two details</h2><p class=\"note\">What the agent is told \
         after a failed phase 1: the experiment's exact details.</p><pre class=\"details\">{}</pre></section>",
        escape(&t.task.spec.phase2.details)
    );
}

/// The source's reference run, one chart per metric, with the published value, the claim
/// and the accepted band.
fn reference_section(html: &mut String, t: &CatalogTask) {
    html.push_str("<section id=\"reference\"><h2>Reference curve</h2>");
    if t.reference.is_empty() {
        html.push_str("<p class=\"empty\">The task has no reference log.</p>");
    } else if let Some(log) = &t.task.spec.reference {
        let _ = write!(
            html,
            "<p class=\"note\">The source's run (<code>{}</code>) read through the task's metric patterns.</p>",
            escape(&log.log)
        );
    }
    for (metric, points) in &t.reference {
        let spec = t.task.spec.criteria.iter().find(|c| &c.metric == metric);
        let mut levels = Vec::new();
        if let Some(spec) = spec {
            levels.push(Level {
                label: format!("published {}", measure(spec.published)),
                class: "published",
                value: spec.published,
            });
            if let Some(claim) = spec
                .claim
                .as_ref()
                .and_then(ClaimSpec::value_in_metric_units)
            {
                levels.push(Level {
                    label: format!("claim {}", measure(claim)),
                    class: "claim",
                    value: claim,
                });
            }
        }
        let chart = Chart {
            metric: metric.clone(),
            curves: vec![Curve {
                label: "reference".to_string(),
                class: "reference",
                points: points
                    .iter()
                    .enumerate()
                    .map(|(k, p)| (p.step.unwrap_or(k as f64), p.value))
                    .collect(),
            }],
            levels,
            band: spec.map(CriterionSpec::edges),
        };
        let _ = write!(
            html,
            "<p class=\"points\" data-metric=\"{}\">{}: {} points</p>",
            escape(metric),
            escape(metric),
            points.len()
        );
        html.push_str(&chart.svg());
    }
    html.push_str("</section>");
}

/// One phase of the demo: what it says and writes, and what phase 2 waits for.
fn demo_phase(html: &mut String, phase: &notes::DemoPhase) {
    let _ = write!(
        html,
        "<div class=\"demo-phase\"><h3>Phase {}</h3>",
        phase.number
    );
    if let Some(expect) = &phase.expect {
        let _ = write!(
            html,
            "<p class=\"note\">Goes on when the phase-two prompt says <code>{}</code>.</p>",
            escape(expect)
        );
    }
    html.push_str("<ul>");
    for said in &phase.said {
        let _ = write!(html, "<li class=\"said\">{}</li>", escape(said));
    }
    for command in &phase.runs {
        let _ = write!(html, "<li>runs <code>{}</code></li>", escape(command));
    }
    for path in &phase.writes {
        let _ = write!(html, "<li>writes <code>{}</code></li>", escape(path));
    }
    html.push_str("</ul></div>");
}

/// The recorded runs' verdicts, phase by phase.
fn runs_table(html: &mut String, runs: &[TaskRun]) {
    html.push_str(
        "<div class=\"scroll\"><table id=\"verdicts\"><tr><th>recorded in</th><th>agent</th>\
         <th>phase 1</th><th>phase 2</th></tr>",
    );
    for run in runs {
        let mut cells = String::new();
        for number in [1, 2] {
            let cell = match run.phases.iter().find(|p| p.phase == number) {
                Some(p) => {
                    let values: Vec<String> = p
                        .values
                        .iter()
                        .map(|(m, v)| format!("{m} {}", v.map_or("–".to_string(), measure)))
                        .collect();
                    format!(
                        "<td class=\"{}\">{}<br><span class=\"note\">{}</span></td>",
                        if p.passed { "pass" } else { "fail" },
                        escape(&p.verdict),
                        escape(&values.join(", "))
                    )
                }
                None => "<td>–</td>".to_string(),
            };
            cells.push_str(&cell);
        }
        let agent = match &run.link {
            Some(link) => format!("<a href=\"{}\">{}</a>", escape(link), escape(&run.agent)),
            None => escape(&run.agent),
        };
        let _ = write!(
            html,
            "<tr class=\"{}\"><td>{}</td><td>{agent}</td>{cells}</tr>",
            if run.demo { "demo" } else { "other" },
            escape(&run.bench)
        );
    }
    html.push_str("</table></div>");
}

/// The demo: its mistake, its phases, and the verdicts its runs got.
fn demo_section(html: &mut String, demo: Option<&Demo>, runs: &[TaskRun]) {
    html.push_str("<section id=\"demo\"><h2>The demo</h2>");
    match demo {
        Some(demo) => {
            html.push_str("<h3>The mistake</h3>");
            paragraph(html, "mistake", &demo.mistake);
            for phase in &demo.phases {
                demo_phase(html, phase);
            }
        }
        None => html.push_str("<p class=\"empty\">The task ships no demo trajectory.</p>"),
    }
    html.push_str("<h3>Verdicts</h3>");
    if runs.is_empty() {
        html.push_str(
            "<p class=\"empty\" id=\"no-verdicts\">No recorded run of this task was given \
             (<code>xstack catalog --bench DIR</code> reads a bench's; the demo's measured \
             values are in the criteria's reasoning above).</p>",
        );
    } else {
        runs_table(html, runs);
    }
    html.push_str("</section>");
}

/// A task's whole page.
pub fn task_page(t: &CatalogTask, runs: &[TaskRun], home: &Home) -> String {
    let mut body = String::new();
    header(&mut body, t, home);
    upstream_section(&mut body, t);
    experiment_section(&mut body, t);
    claims_section(&mut body, t);
    criteria_section(&mut body, t);
    phase2_section(&mut body, t);
    reference_section(&mut body, t);
    demo_section(&mut body, t.demo.as_ref(), runs);
    if let Some(parity) = &t.task.spec.parity {
        let _ = write!(
            body,
            "<section id=\"parity\"><h2>Parity probe</h2><p><code>{}</code>, rtol {}, atol {}</p>",
            escape(&parity.command),
            parity.rtol,
            parity.atol
        );
        for note in notes::comments_above(&t.text, "[parity]") {
            paragraph(&mut body, "why", &note);
        }
        body.push_str("</section>");
    }
    body.push_str("</main>");
    let title = format!("{} · xstack task", t.task.spec.id);
    page(
        &Frame {
            title: &title,
            root: "../../",
            styles: &[],
            scripts: &[],
        },
        &body,
    )
}

/// The first claim of a task in one line, for the index.
fn claim_line(t: &CatalogTask) -> String {
    t.task
        .spec
        .criteria
        .iter()
        .filter_map(|c| c.claim.as_ref())
        .find(|c| c.status != ClaimStatus::NoClaim)
        .and_then(|c| {
            Some(format!(
                "{} ({}, {})",
                c.value_text()?,
                c.location.clone().unwrap_or_default(),
                c.status.as_str()
            ))
        })
        .unwrap_or_else(|| "–".to_string())
}

/// The demo's verdicts of a task's recorded runs in one cell.
fn verdicts_line(runs: Option<&Vec<TaskRun>>) -> String {
    let Some(run) = runs.and_then(|r| r.iter().find(|r| r.demo)) else {
        return "–".to_string();
    };
    run.phases
        .iter()
        .map(|p| format!("phase {}: {}", p.phase, p.verdict))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The index: every task folder in a row (an invalid one with its error).
pub fn index(
    listed: &[(String, Result<CatalogTask, String>)],
    tasks_dir: &Path,
    runs: &BTreeMap<String, Vec<TaskRun>>,
) -> String {
    let valid = listed.iter().filter(|(_, t)| t.is_ok()).count();
    let mut body = format!(
        "<header><h1>Task catalog</h1><p class=\"facts\">{valid} tasks in <code>{}</code></p></header><main>\
         <section id=\"catalog\"><div class=\"scroll\"><table id=\"tasks\"><tr><th>task</th><th>title</th>\
         <th>direction</th><th>repository</th><th>claim</th><th>criteria</th><th>demo</th>\
         <th>demo's verdicts</th></tr>",
        escape(&tasks_dir.file_name().map_or_else(
            || tasks_dir.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        ))
    );
    for (name, loaded) in listed {
        match loaded {
            Ok(t) => {
                let spec = &t.task.spec;
                let repository = spec.upstream.as_ref().map_or_else(
                    || "xstack's own".to_string(),
                    |u| {
                        format!(
                            "<a class=\"upstream\" href=\"{}\">{}</a>",
                            escape(&u.url()),
                            escape(&u.label())
                        )
                    },
                );
                let _ = write!(
                    body,
                    "<tr data-task=\"{id}\"><td><a href=\"tasks/{page}/index.html\">{id}</a></td><td>{}</td>\
                     <td>{}</td><td>{repository}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&spec.title),
                    escape(&t.task.migration.label()),
                    escape(&claim_line(t)),
                    spec.criteria.len(),
                    if t.demo.is_some() { "yes" } else { "–" },
                    escape(&verdicts_line(runs.get(&spec.id))),
                    id = escape(&spec.id),
                    page = escape(&t.page),
                );
            }
            Err(error) => {
                let _ = write!(
                    body,
                    "<tr class=\"invalid\" data-task=\"{}\"><td>{}</td><td colspan=\"7\" class=\"fail\">not a valid task: {}</td></tr>",
                    escape(name),
                    escape(name),
                    escape(error)
                );
            }
        }
    }
    body.push_str("</table></div></section></main>");
    page(
        &Frame {
            title: "xstack task catalog",
            root: "",
            styles: &[],
            scripts: &[],
        },
        &body,
    )
}

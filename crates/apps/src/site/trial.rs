//! A trial's page, from its run folder alone: each phase's verdict with its criteria and
//! findings (a finding's `file:line` links into the diff), the metric curves against the
//! reference and the claim, the port against the source, each verify's log in colour, the
//! agent's terminal (asciinema-player on the exported cast, with the phase changes and
//! verdicts as markers), the transcript, the agent's own runs and the prompts.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use crate::agent::transcript::TranscriptItem;
use crate::bench::model::TrialRow;
use crate::diff::Snapshot;
use crate::event::{Event, FileContent};
use crate::journal::{self, Journal};
use crate::parity::ParityReport;
use crate::replay::cast::{self, CastPane};
use crate::session::result::{PhaseResult, PhaseVerdict, RunResult};
use crate::session::state::SessionState;
use crate::task::{CriterionSpec, UpstreamSpec};

use super::chart::{Chart, Curve, Level};
use super::diff::{self, DiffHtml};
use super::html::{escape, measure};
use super::{ansi, verdict_text};

/// Lines of a verify log kept on the page (the last ones).
const LOG_LINES: usize = 5000;
/// Characters of a trial's text kept for the index's search.
const SEARCH_CHARS: usize = 20_000;

/// What a trial's page is made from: its folder, read once.
pub struct TrialData {
    /// `result.json`, when the run wrote one.
    pub result: Option<RunResult>,
    /// The journal, when it could be read.
    pub journal: Option<Journal>,
    /// The state the journal replays to.
    pub state: SessionState,
}

impl TrialData {
    /// Reads the run folder `dir`.
    pub fn read(dir: &Path) -> TrialData {
        let result = RunResult::read(dir).ok();
        let journal = journal::read(&journal::path_in(dir)).ok();
        let mut state = SessionState::new();
        for entry in journal.iter().flat_map(|j| &j.entries) {
            state.apply(entry.t, &entry.event);
        }
        TrialData {
            result,
            journal,
            state,
        }
    }

    /// The source (the diff's old side) and the workspace at the end (its new side).
    pub fn snapshots(&self) -> (Snapshot, Snapshot) {
        let snapshot = |files: &std::collections::BTreeMap<String, FileContent>| -> Snapshot {
            files
                .values()
                .map(|f| {
                    let bytes = f
                        .text
                        .as_ref()
                        .map_or_else(|| b"\0binary".to_vec(), |t| t.as_bytes().to_vec());
                    (f.path.clone(), bytes)
                })
                .collect()
        };
        (snapshot(&self.state.baseline), snapshot(&self.state.files))
    }

    /// The asciicast of the agent's terminal, when there is a journal.
    pub fn cast(&self) -> Option<String> {
        let journal = self.journal.as_ref()?;
        let mut out = Vec::new();
        cast::export(journal, CastPane::Agent, &mut out).ok()?;
        String::from_utf8(out).ok()
    }

    /// The public repository the trial's task was made from: `result.json`'s `upstream`, else
    /// the journal's.
    pub fn upstream(&self) -> Option<&UpstreamSpec> {
        self.result
            .as_ref()
            .and_then(|r| r.upstream.as_ref())
            .or(self.state.task.upstream.as_ref())
    }

    /// The graded phases of `result.json`.
    pub fn phases(&self) -> &[PhaseResult] {
        self.result.as_ref().map_or(&[], |r| r.phases.as_slice())
    }

    /// What the index searches: findings, claims, the transcript, prompts and verdicts, in
    /// lower case, at most [`SEARCH_CHARS`] characters.
    pub fn search_text(&self) -> String {
        let mut text = String::new();
        for phase in self.phases() {
            for finding in &phase.findings {
                text.push_str(finding);
                text.push('\n');
            }
            if let Some(claim) = phase.agent.as_ref().and_then(|a| a.claim.as_ref()) {
                text.push_str(claim);
                text.push('\n');
            }
            if let Some(detail) = &phase.outcome_detail {
                text.push_str(detail);
                text.push('\n');
            }
        }
        for record in &self.state.phases {
            for item in &record.transcript {
                text.push_str(&item.describe());
                text.push('\n');
            }
        }
        text.to_lowercase().chars().take(SEARCH_CHARS).collect()
    }
}

/// A verify run's or a probe's log.
struct RunLog {
    phase: u8,
    /// What ran: `verify`, `verify (seed check)` or `parity probe (SIDE)`.
    what: String,
    title: String,
    command: String,
    text: String,
    ended: Option<String>,
}

/// Every verify run and probe of the journal, in order.
fn run_logs(journal: &Journal) -> Vec<RunLog> {
    let mut logs: Vec<RunLog> = Vec::new();
    for entry in &journal.entries {
        match &entry.event {
            Event::RunStarted {
                phase,
                command,
                seed_check,
                ..
            } => {
                let what = format!("verify{}", if *seed_check { " (seed check)" } else { "" });
                logs.push(RunLog {
                    phase: *phase,
                    title: format!("Phase {phase}: {what}"),
                    what,
                    command: command.clone(),
                    text: String::new(),
                    ended: None,
                })
            }
            Event::ProbeStarted { phase, side } => logs.push(RunLog {
                phase: *phase,
                what: format!("parity probe ({})", side.as_str()),
                title: format!("Phase {phase}: parity probe ({})", side.as_str()),
                command: String::new(),
                text: String::new(),
                ended: None,
            }),
            Event::RunOutput { text } => {
                if let Some(log) = logs.last_mut() {
                    log.text.push_str(text);
                }
            }
            Event::RunExited {
                code,
                timed_out,
                duration_s,
            } => {
                if let Some(log) = logs.last_mut() {
                    let how = match (code, timed_out) {
                        (_, true) => "timed out".to_string(),
                        (Some(c), false) => format!("exit {c}"),
                        (None, false) => "killed".to_string(),
                    };
                    log.ended = Some(format!("{how} after {duration_s:.1} s"));
                }
            }
            _ => {}
        }
    }
    logs
}

/// The markers of an asciicast (`m` events): time and label.
pub fn cast_markers(cast: &str) -> Vec<(f64, String)> {
    cast.lines()
        .skip(1)
        .filter_map(|line| serde_json::from_str::<(f64, String, String)>(line).ok())
        .filter(|(_, kind, _)| kind == "m")
        .map(|(t, _, label)| (t, label))
        .collect()
}

/// How a trial's page links to the rest of the site.
pub struct Links<'a> {
    /// The path from the page to the site's root.
    pub root: &'a str,
    /// Compare pages with another trial of the same task: (label, href from the page).
    pub compare: &'a [(String, String)],
}

/// The body of a trial's page.
pub fn body(row: &TrialRow, data: &TrialData, links: &Links<'_>, has_cast: bool) -> String {
    let mut html = String::new();
    let agent = crate::agent::label(&row.agent);
    let _ = write!(
        html,
        "<header><a class=\"home\" href=\"{root}index.html\">← all trials</a>\
         <h1>{task} <span class=\"sep\">·</span> {agent} <span class=\"sep\">·</span> repeat {repeat}</h1>\
         <p class=\"verdict-line\"><span class=\"verdict {cls}\" id=\"verdict\">{verdict}</span>",
        root = links.root,
        task = escape(&row.task),
        agent = escape(&agent),
        repeat = row.repeat,
        cls = if row.passed { "pass" } else { "fail" },
        verdict = escape(&verdict_text(row)),
    );
    let _ = write!(html, " <span>{:.1} s</span>", row.duration_s);
    let _ = write!(html, " <span>{}</span>", escape(&row.migration.label()));
    if let Some(task) = Some(&data.state.task.title).filter(|t| !t.is_empty()) {
        let _ = write!(html, " <span class=\"title\">{}</span>", escape(task));
    }
    if let Some(upstream) = data.upstream() {
        let _ = write!(
            html,
            " <span class=\"upstream\">from {} ({})</span>",
            upstream_link(upstream),
            escape(&upstream.licence)
        );
    }
    html.push_str("</p>");
    if !links.compare.is_empty() {
        html.push_str("<p class=\"compare\">Compare with: ");
        let items: Vec<String> = links
            .compare
            .iter()
            .map(|(label, href)| format!("<a href=\"{href}\">{}</a>", escape(label)))
            .collect();
        html.push_str(&items.join(" · "));
        html.push_str("</p>");
    }
    html.push_str(
        "<nav class=\"toc\"><a href=\"#phases\">Verdicts</a><a href=\"#curves\">Curves</a>\
         <a href=\"#diff\">Diff</a><a href=\"#logs\">Run logs</a><a href=\"#terminal\">Terminal</a>\
         <a href=\"#transcript\">Transcript</a><a href=\"#runs\">Agent's runs</a>\
         <a href=\"#prompts\">Prompts</a></nav></header>\n<main>\n",
    );
    let (old, new) = data.snapshots();
    let whole: BTreeSet<String> = data
        .phases()
        .iter()
        .flat_map(|p| p.finding_records.iter().filter_map(|f| f.file.clone()))
        .collect();
    let diff = diff::render(&old, &new, &whole, "#diff", "");
    let logs = data.journal.as_ref().map(run_logs).unwrap_or_default();
    phases_section(&mut html, data, &diff, &logs);
    curves_section(&mut html, data);
    let _ = writeln!(
        html,
        "<section id=\"diff\"><h2>The port against the source</h2>\
         <p class=\"note\">{} changed files; the source on the left, the workspace at the end of the \
         run on the right.</p>{}</section>",
        diff.changed, diff.html
    );
    logs_section(&mut html, &logs);
    html.push_str("<section id=\"terminal\"><h2>The agent's terminal</h2>");
    if has_cast {
        html.push_str(
            "<div id=\"markers\" class=\"markers\"></div><div id=\"player\"></div>\
             <p class=\"note\"><a href=\"agent.cast\">agent.cast</a> (asciicast v2)</p>",
        );
    } else {
        html.push_str("<p class=\"empty\">No journal: nothing to play.</p>");
    }
    html.push_str("</section>\n");
    transcript_section(&mut html, data);
    agent_runs_section(&mut html, data);
    prompts_section(&mut html, data);
    html.push_str("</main>\n");
    let _ = writeln!(html, "<style>{}</style>", diff.css);
    html
}

/// A margin with its sign: `+0.05`, `-0.4`.
fn signed(value: f64) -> String {
    let text = measure(value);
    if text.starts_with('-') || text == "0" {
        text
    } else {
        format!("+{text}")
    }
}

/// `OWNER/NAME@SHORT`, linked to the repository's tree at the commit.
fn upstream_link(upstream: &UpstreamSpec) -> String {
    format!(
        "<a class=\"upstream\" href=\"{}\">{}</a>",
        escape(&upstream.url()),
        escape(&upstream.label())
    )
}

/// Where the claim a criterion is graded against comes from, and in which repository and
/// commit when the task was made from a public one.
fn claim_source(spec: Option<&CriterionSpec>, upstream: Option<&UpstreamSpec>) -> String {
    let Some(claim) = spec.and_then(|s| s.claim.as_ref()) else {
        return "task.toml".to_string();
    };
    let mut parts = Vec::new();
    if let Some(location) = &claim.location {
        parts.push(format!("<code>{}</code>", escape(location)));
    }
    if let Some(upstream) = upstream {
        parts.push(format!("in {}", upstream_link(upstream)));
    }
    if let Some(text) = claim.one_line_text() {
        parts.push(format!("“{}”", escape(&text)));
    }
    parts.push(format!("({})", claim.status.as_str().replace('_', " ")));
    parts.join(" ")
}

/// The Verdicts section: per graded phase its verdict, facts, criteria table, findings,
/// parity probe and logs.
fn phases_section(html: &mut String, data: &TrialData, diff: &DiffHtml, logs: &[RunLog]) {
    html.push_str("<section id=\"phases\"><h2>Verdicts</h2>");
    if data.phases().is_empty() {
        html.push_str("<p class=\"empty\">No phase was graded (no result.json, or the run ended before a grade).</p>");
    }
    for phase in data.phases() {
        phase_heading(html, phase);
        phase_facts(html, phase);
        criteria_table(html, data, phase);
        phase_findings(html, phase, diff);
        if let Some(parity) = &phase.parity {
            let _ = write!(
                html,
                "<p class=\"facts\">Parity probe: {}</p>",
                escape(&parity_facts(parity))
            );
        }
        let own: Vec<String> = logs
            .iter()
            .enumerate()
            .filter(|(_, log)| log.phase == phase.phase)
            .map(|(i, log)| format!("<a href=\"#log-{i}\">{}</a>", escape(&log.what)))
            .collect();
        if !own.is_empty() {
            let _ = write!(html, "<p class=\"facts\">Logs: {}</p>", own.join(" · "));
        }
        html.push_str("</article>");
    }
    html.push_str("</section>\n");
}

/// The parity probe's line of a phase: its headline, with the first divergent tensor's
/// errors.
fn parity_facts(report: &ParityReport) -> String {
    let errors = report
        .rows()
        .into_iter()
        .find(|r| r.first)
        .and_then(|r| r.errors);
    match errors {
        Some(errors) => format!("{}; {errors}", report.headline()),
        None => report.headline(),
    }
}

/// Opens a phase's article: its heading with the verdict (or why it was not graded), and
/// the outcome's detail.
fn phase_heading(html: &mut String, phase: &PhaseResult) {
    let label = match (phase.verdict, phase.failure) {
        (Some(v), Some(f)) => format!("{} {}", v.as_str().to_uppercase(), f.as_str()),
        (Some(v), None) => v.as_str().to_uppercase(),
        (None, _) => format!("not graded: {}", phase.outcome.as_str()),
    };
    let cls = if phase.verdict.is_some_and(PhaseVerdict::passed) {
        "pass"
    } else {
        "fail"
    };
    let _ = write!(
        html,
        "<article class=\"phase\" id=\"phase-{n}\"><h3>Phase {n} <span class=\"verdict {cls}\">{}</span></h3>",
        escape(&label),
        n = phase.phase
    );
    if let Some(detail) = &phase.outcome_detail {
        let _ = write!(html, "<p class=\"detail\">{}</p>", escape(detail));
    }
}

/// A phase's facts on one line: the verify run's exit, time and confinement, what the
/// agent claimed and spent, how often it ran the port and the source.
fn phase_facts(html: &mut String, phase: &PhaseResult) {
    let mut facts = Vec::new();
    if let Some(code) = phase.exit_code {
        facts.push(format!("verify exit {code}"));
    }
    facts.push(format!("verify {:.1} s", phase.duration_s));
    if let Some(confined) = phase.verify_confined {
        facts.push(if confined { "confined" } else { "not confined" }.to_string());
    }
    if let Some(agent) = &phase.agent {
        if let Some(claimed) = agent.claimed_success {
            facts.push(format!(
                "agent claimed {}",
                if claimed { "success" } else { "no success" }
            ));
        }
        if let (Some(i), Some(o)) = (agent.tokens_in, agent.tokens_out) {
            facts.push(format!("{i} tokens in, {o} out"));
        }
        if let Some(cost) = agent.cost_usd {
            facts.push(format!("${cost:.4}"));
        }
    }
    if let Some(checked) = &phase.agent_checked {
        facts.push(format!(
            "agent ran its port {} times, the source {} times",
            checked.port_runs, checked.source_runs
        ));
    }
    let _ = write!(
        html,
        "<p class=\"facts\">{}</p>",
        escape(&facts.join(" · "))
    );
}

/// A phase's criteria table: each criterion's value against the published one and where
/// the claim comes from.
fn criteria_table(html: &mut String, data: &TrialData, phase: &PhaseResult) {
    if phase.criteria.is_empty() {
        return;
    }
    html.push_str(
        "<div class=\"scroll\"><table class=\"criteria\"><thead><tr><th>criterion</th><th>value</th>\
         <th>rule</th><th>margin</th><th>holds</th><th>claim from</th></tr></thead><tbody>",
    );
    for c in &phase.criteria {
        let spec = data
            .state
            .task
            .criteria
            .iter()
            .find(|s| s.metric == c.metric);
        let _ = write!(
            html,
            "<tr class=\"{}\" data-metric=\"{}\"><td>{}</td><td class=\"value\">{}</td>\
             <td class=\"rule\">{}</td><td class=\"margin\">{}</td><td>{}</td><td>{}</td></tr>",
            if c.passed { "pass" } else { "fail" },
            escape(&c.metric),
            escape(&c.metric),
            c.value.map_or_else(|| "never printed".to_string(), measure),
            escape(&c.direction.rule_words(c.published, c.tolerance, measure)),
            c.margin().map_or_else(|| "–".to_string(), signed),
            if c.passed { "yes" } else { "no" },
            claim_source(spec, data.upstream())
        );
    }
    html.push_str("</tbody></table></div>");
}

/// A phase's findings as a list, each linked to its place in the diff where it has one.
fn phase_findings(html: &mut String, phase: &PhaseResult, diff: &DiffHtml) {
    let findings: Vec<String> = if phase.finding_records.is_empty() {
        phase.findings.iter().map(|f| escape(f)).collect()
    } else {
        phase
            .finding_records
            .iter()
            .map(|f| {
                let place = match (&f.file, f.line) {
                    (Some(file), Some(line)) => Some((
                        format!("{file}:{line}"),
                        diff.anchors.get(file).map(|p| diff::line_anchor(p, line)),
                    )),
                    (Some(file), None) => Some((file.clone(), diff.anchors.get(file).cloned())),
                    _ => None,
                };
                let place = match place {
                    Some((text, Some(anchor))) => format!(
                        "<a class=\"finding-link\" href=\"#{anchor}\">{}</a> ",
                        escape(&text)
                    ),
                    Some((text, None)) => format!("<code>{}</code> ", escape(&text)),
                    None => String::new(),
                };
                format!("{place}{}", escape(&f.text))
            })
            .collect()
    };
    if !findings.is_empty() {
        html.push_str("<ul class=\"findings\">");
        for f in findings {
            let _ = write!(html, "<li>{f}</li>");
        }
        html.push_str("</ul>");
    }
}

/// Each metric's chart: every phase's verify run, the reference, the published value and
/// its band, the claim.
pub fn charts(data: &TrialData) -> Vec<Chart> {
    let task = &data.state.task;
    task.metrics
        .iter()
        .map(|metric| {
            let mut curves: Vec<Curve> = data
                .state
                .phases
                .iter()
                .enumerate()
                .map(|(i, record)| Curve {
                    label: format!("phase {}", i + 1),
                    class: if i == 0 { "phase1" } else { "phase2" },
                    points: record
                        .metrics
                        .get(metric)
                        .map(|s| {
                            s.points()
                                .enumerate()
                                .map(|(k, p)| (p.step.unwrap_or(k as f64), p.value))
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect();
            if let Some(reference) = task.reference.iter().find(|r| &r.metric == metric) {
                curves.push(Curve {
                    label: "reference".to_string(),
                    class: "reference",
                    points: reference
                        .points
                        .iter()
                        .enumerate()
                        .map(|(k, p)| (p.step.unwrap_or(k as f64), p.value))
                        .collect(),
                });
            }
            let spec = task.criteria.iter().find(|c| &c.metric == metric);
            let mut levels = Vec::new();
            if let Some(spec) = spec {
                levels.push(Level {
                    label: format!("published {}", measure(spec.published)),
                    class: "published",
                    value: spec.published,
                });
                if let Some(claim) = spec.claim.as_ref().and_then(|c| c.value_in_metric_units()) {
                    levels.push(Level {
                        label: format!("claim {}", measure(claim)),
                        class: "claim",
                        value: claim,
                    });
                }
            }
            Chart {
                metric: metric.clone(),
                curves,
                levels,
                band: spec.map(CriterionSpec::edges),
            }
        })
        .filter(|c| !c.is_empty())
        .collect()
}

fn curves_section(html: &mut String, data: &TrialData) {
    html.push_str("<section id=\"curves\"><h2>Metric curves</h2>");
    let charts = charts(data);
    if charts.is_empty() {
        html.push_str("<p class=\"empty\">No metric was printed.</p>");
    }
    for chart in charts {
        html.push_str(&chart.svg());
    }
    html.push_str("</section>\n");
}

fn logs_section(html: &mut String, logs: &[RunLog]) {
    html.push_str("<section id=\"logs\"><h2>Run logs</h2>");
    if logs.is_empty() {
        html.push_str("<p class=\"empty\">No verify run.</p>");
    }
    for (i, log) in logs.iter().enumerate() {
        let _ = write!(
            html,
            "<details class=\"log\" id=\"log-{i}\"{}><summary>{} <code>{}</code> <span class=\"note\">{}</span></summary>\
             <pre class=\"term\">{}</pre></details>",
            if i + 1 == logs.len() { " open" } else { "" },
            escape(&log.title),
            escape(&log.command),
            escape(log.ended.as_deref().unwrap_or("did not end")),
            ansi::to_html(&log.text, LOG_LINES)
        );
    }
    html.push_str("</section>\n");
}

fn transcript_section(html: &mut String, data: &TrialData) {
    html.push_str("<section id=\"transcript\"><h2>Transcript</h2>");
    let mut any = false;
    for (i, record) in data.state.phases.iter().enumerate() {
        if record.transcript.is_empty() {
            continue;
        }
        any = true;
        let _ = write!(html, "<h3>Phase {}</h3><ol class=\"transcript\">", i + 1);
        for item in &record.transcript {
            let (cls, text) = match item {
                TranscriptItem::Message { text } => ("message", escape(text)),
                TranscriptItem::ToolCall { tool, input } => (
                    "tool",
                    format!("<b>{}</b> <code>{}</code>", escape(tool), escape(input)),
                ),
                TranscriptItem::ToolFailed { tool, error } => (
                    "tool-failed",
                    format!("<b>{} failed</b> {}", escape(tool), escape(error)),
                ),
                TranscriptItem::Final { text, success } => {
                    (if *success { "final" } else { "final-error" }, escape(text))
                }
                other => ("meta", escape(&other.describe())),
            };
            let _ = write!(html, "<li class=\"{cls}\">{text}</li>");
        }
        html.push_str("</ol>");
    }
    if !any {
        html.push_str(
            "<p class=\"empty\">The agent reported no structured transcript; its terminal above \
             is the whole record.</p>",
        );
    }
    html.push_str("</section>\n");
}

fn agent_runs_section(html: &mut String, data: &TrialData) {
    html.push_str("<section id=\"runs\"><h2>What the agent ran</h2>");
    let runs: Vec<_> = data
        .state
        .phases
        .iter()
        .flat_map(|p| p.agent_runs.iter())
        .collect();
    if runs.is_empty() {
        html.push_str("<p class=\"empty\">The agent ran no Python of the repository.</p>");
    } else {
        html.push_str(
            "<div class=\"scroll\"><table><thead><tr><th>phase</th><th>ran</th><th>target</th>\
             <th>exit</th><th>seconds</th><th>frameworks</th><th>metrics</th></tr></thead><tbody>",
        );
        for (_, run) in runs {
            let metrics: Vec<String> = run
                .metrics
                .iter()
                .map(|m| format!("{}={}", m.metric, measure(m.value)))
                .collect();
            let _ = write!(
                html,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td></tr>",
                run.phase,
                escape(&run.argv.join(" ")),
                run.target.as_str(),
                run.exit_code
                    .map_or_else(|| "–".to_string(), |c| c.to_string()),
                run.duration_s,
                escape(&run.frameworks.join(", ")),
                escape(&metrics.join(", "))
            );
        }
        html.push_str("</tbody></table></div>");
    }
    html.push_str("</section>\n");
}

fn prompts_section(html: &mut String, data: &TrialData) {
    html.push_str("<section id=\"prompts\"><h2>Prompts</h2>");
    let mut any = false;
    for (i, record) in data.state.phases.iter().enumerate() {
        if let Some(prompt) = &record.prompt {
            any = true;
            let _ = write!(
                html,
                "<details class=\"prompt\"><summary>Phase {}</summary><pre>{}</pre></details>",
                i + 1,
                escape(prompt)
            );
        }
    }
    if !any {
        html.push_str("<p class=\"empty\">No prompt was recorded.</p>");
    }
    html.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::SessionTask;

    #[test]
    fn the_page_links_the_claim_to_the_repository_and_commit_it_was_read_in() {
        let upstream = UpstreamSpec {
            repository: "Tiiiger/SGC".into(),
            commit: "2c7a2727e82e462d8ef9d6e57f0b08888e16488f".into(),
            licence: "MIT".into(),
            experiment: "citation.py".into(),
            changed: Vec::new(),
        };
        let criterion: CriterionSpec = toml::from_str(
            "metric = \"test_acc\"\npublished = 0.81\ntolerance = 0.005\ndirection = \"within\"\n\
             [claim]\ntext = \"Cora | Acc: 81.0 %\"\nwhere = \"README.md:31\"\nvalue = 81.0\n\
             unit = \"%\"\nstatus = \"reproduced\"\n",
        )
        .unwrap();
        let mut state = SessionState::new();
        state.apply(
            0.0,
            &Event::Task(Box::new(SessionTask {
                id: "sgc-cora".into(),
                criteria: vec![criterion],
                upstream: Some(upstream.clone()),
                ..SessionTask::default()
            })),
        );
        let result: RunResult = serde_json::from_value(serde_json::json!({
            "task": "sgc-cora", "agent": "a", "run_id": "r", "started_at": "2026-12-07T00:00:00Z",
            "duration_s": 1.0, "passed": true, "passed_in_phase": 1,
            "upstream": upstream,
            "phases": [{"phase": 1, "verdict": "pass", "failure": null, "findings": [],
                        "exit_code": 0, "duration_s": 1.0,
                        "criteria": [{"metric": "test_acc", "value": 0.81, "published": 0.81,
                                      "tolerance": 0.005, "direction": "within", "passed": true}]}]
        }))
        .unwrap();
        let data = TrialData {
            result: Some(result),
            journal: None,
            state,
        };
        let row = crate::bench::model::TrialRow {
            task: "sgc-cora".into(),
            upstream: Some(upstream),
            ..crate::site::tests::row(None, Some(1))
        };
        let links = Links {
            root: "../../",
            compare: &[],
        };
        let html = body(&row, &data, &links, false);
        let link = "<a class=\"upstream\" href=\"https://github.com/Tiiiger/SGC/tree/2c7a2727e82e462d8ef9d6e57f0b08888e16488f\">Tiiiger/SGC@2c7a272</a>";
        assert!(
            html.contains(&format!(
                "<span class=\"upstream\">from {link} (MIT)</span>"
            )),
            "{html}"
        );
        assert!(
            html.contains(&format!(
                "<code>README.md:31</code> in {link} “Cora | Acc: 81.0 %” (reproduced)"
            )),
            "{html}"
        );
        // The criterion's rule in the words every painter uses.
        assert!(
            html.contains("<td class=\"rule\">within 0.81 ± 0.005</td>"),
            "{html}"
        );
    }
}

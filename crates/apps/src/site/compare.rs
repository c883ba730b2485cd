//! Compare pages: two trials of the same task side by side (two agents, or two repeats):
//! their verdicts and criteria, their metric curves on one chart, and the diff between the
//! two ports. Each trial is paired with the next trial of its task, so every trial links to
//! at most two compare pages and a bench of n trials has fewer than n of them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::session::result::PhaseVerdict;

use super::chart::{Chart, Curve};
use super::html::{Frame, escape, measure, page};
use super::trial::{TrialData, charts};
use super::{SiteError, SiteTrial, Writer, diff, verdict_text};

/// The folder of compare pages under `site/`.
pub const DIR: &str = "compare";

/// Pairs of trials (indices) to compare: each trial with the next one of the same task.
pub fn pairs(trials: &[SiteTrial<'_>]) -> Vec<(usize, usize)> {
    let mut last: BTreeMap<&str, usize> = BTreeMap::new();
    let mut pairs = Vec::new();
    for (i, trial) in trials.iter().enumerate() {
        if let Some(previous) = last.insert(trial.row.task.as_str(), i) {
            pairs.push((previous, i));
        }
    }
    pairs
}

/// The compare page's file name.
fn file_name(a: &SiteTrial<'_>, b: &SiteTrial<'_>) -> String {
    format!("{}--vs--{}.html", a.slug, b.slug)
}

/// How a trial is named on a page: `script:pass.jsonl, repeat 2`.
fn name(trial: &SiteTrial<'_>) -> String {
    format!(
        "{}, repeat {}",
        crate::agent::label(&trial.row.agent),
        trial.row.repeat
    )
}

/// The compare links of trial `i`: (the other trial's name, href from a page `root` below
/// the site's root).
pub fn links_of(
    i: usize,
    trials: &[SiteTrial<'_>],
    pairs: &[(usize, usize)],
    root: &str,
) -> Vec<(String, String)> {
    pairs
        .iter()
        .filter(|(a, b)| *a == i || *b == i)
        .map(|&(a, b)| {
            let other = if a == i { b } else { a };
            (
                name(&trials[other]),
                format!("{root}{DIR}/{}", file_name(&trials[a], &trials[b])),
            )
        })
        .collect()
}

/// Writes every compare page whose trials changed, and removes those of pairs that are gone.
pub fn write_all(
    site: &Path,
    trials: &[SiteTrial<'_>],
    pairs: &[(usize, usize)],
    writer: &Writer,
) -> Result<(), SiteError> {
    let dir = site.join(DIR);
    let mut keep = BTreeSet::new();
    for &(a, b) in pairs {
        let (a, b) = (&trials[a], &trials[b]);
        let file = dir.join(file_name(a, b));
        keep.insert(file_name(a, b));
        // Built from the two trials' pages' sources: unchanged when both are.
        let mut hash = Sha256::new();
        for t in [a, b] {
            let source = std::fs::read(site.join("trials").join(&t.slug).join(".source"))
                .unwrap_or_default();
            hash.update(&source);
            hash.update([0]);
        }
        let hash: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let stamp = format!("<!-- {hash} -->\n");
        if std::fs::read_to_string(&file).is_ok_and(|t| t.starts_with(&stamp)) {
            continue;
        }
        let html = format!("{stamp}{}", render(a, b));
        writer.text(&file, &html)?;
    }
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".html") && !keep.contains(&name) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    Ok(())
}

/// The compare page of `a` and `b`.
fn render(a: &SiteTrial<'_>, b: &SiteTrial<'_>) -> String {
    let data = [TrialData::read(&a.run_dir), TrialData::read(&b.run_dir)];
    let trials = [a, b];
    let mut body = String::new();
    let _ = write!(
        body,
        "<header><a class=\"home\" href=\"../index.html\">← all trials</a><h1>{} <span class=\"sep\">·</span> compare</h1>\
         <p class=\"verdict-line\">Left: <a href=\"../trials/{}/index.html\">{}</a> · right: <a href=\"../trials/{}/index.html\">{}</a></p></header>\n<main>\n",
        escape(&a.row.task),
        a.slug,
        escape(&name(a)),
        b.slug,
        escape(&name(b)),
    );
    body.push_str("<section id=\"verdicts\"><h2>Verdicts</h2><div class=\"pair\">");
    for (trial, data) in trials.iter().zip(&data) {
        let _ = write!(
            body,
            "<div><h3>{} <span class=\"verdict {}\">{}</span></h3><ul>",
            escape(&name(trial)),
            if trial.row.passed { "pass" } else { "fail" },
            escape(&verdict_text(trial.row))
        );
        for phase in data.phases() {
            let criteria: Vec<String> = phase
                .criteria
                .iter()
                .map(|c| {
                    format!(
                        "{} = {}",
                        c.metric,
                        c.value.map_or_else(|| "never printed".into(), measure)
                    )
                })
                .collect();
            let _ = write!(
                body,
                "<li>phase {}: {} {}</li>",
                phase.phase,
                escape(
                    phase
                        .verdict
                        .map_or(phase.outcome.as_str(), PhaseVerdict::as_str)
                ),
                escape(&format!(
                    "{} {}",
                    phase.failure.map(|f| f.as_str()).unwrap_or(""),
                    criteria.join(", ")
                ))
            );
        }
        body.push_str("</ul></div>");
    }
    body.push_str("</div></section>\n<section id=\"curves\"><h2>Metric curves</h2>");
    let [left, right] = [charts(&data[0]), charts(&data[1])];
    for chart in &left {
        let other = right.iter().find(|c| c.metric == chart.metric);
        let mut curves: Vec<Curve> = Vec::new();
        for (side, chart) in [("left", Some(chart)), ("right", other)] {
            for curve in chart.into_iter().flat_map(|c| &c.curves) {
                if curve.class == "reference" && side == "right" {
                    continue;
                }
                curves.push(Curve {
                    label: if curve.class == "reference" {
                        curve.label.clone()
                    } else {
                        format!("{side} {}", curve.label)
                    },
                    class: match (side, curve.class) {
                        (_, "reference") => "reference",
                        ("left", _) => "left",
                        _ => "right",
                    },
                    points: curve.points.clone(),
                });
            }
        }
        let merged = Chart {
            metric: chart.metric.clone(),
            curves,
            levels: chart
                .levels
                .iter()
                .map(|l| super::chart::Level {
                    label: l.label.clone(),
                    class: l.class,
                    value: l.value,
                })
                .collect(),
            band: chart.band,
        };
        body.push_str(&merged.svg());
    }
    body.push_str("</section>\n");
    let (_, left_port) = data[0].snapshots();
    let (_, right_port) = data[1].snapshots();
    let ports = diff::render(&left_port, &right_port, &BTreeSet::new(), "#diff", "");
    let _ = write!(
        body,
        "<section id=\"diff\"><h2>The two ports</h2><p class=\"note\">{} files differ; left: {}, right: {}.</p>{}</section>\n</main>\n<style>{}</style>\n",
        ports.changed,
        escape(&name(a)),
        escape(&name(b)),
        ports.html,
        ports.css
    );
    page(
        &Frame {
            title: &format!("{} · compare — xstack", a.row.task),
            root: "../",
            styles: &[],
            scripts: &[],
        },
        &body,
    )
}

//! The bench's static site (`DIR/site/`): an index of the report's tables and every trial,
//! a page per trial and compare pages, all rendered from the run folders (the journal,
//! `result.json`) through the same diff engine, cast export and verdict text as the panes.
//! It opens from `file://` with no server and no network: every script and style sheet is
//! in `site/assets/` (asciinema-player vendored from npm, see vendor/README.md). The same
//! folders give the same bytes; a trial whose inputs did not change is not rendered again.
//! `xstack view` serves the folder ([`serve`]).

pub mod ansi;
pub mod assets;
pub mod catalog;
pub mod chart;
pub mod command;
pub mod compare;
pub mod diff;
pub mod html;
pub mod index;
pub mod serve;
pub mod trial;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::bench::model::{Report, TrialRow};
use crate::secrets::Secrets;

/// The site's folder inside a bench or report folder.
pub const SITE_DIR: &str = "site";
/// The file in a trial's folder of the site that holds the hash of what it was built from.
const SOURCE_FILE: &str = ".source";
/// Changes whenever a page's layout changes, so older pages are rebuilt.
const FORMAT: &str = "xstack-site-3";

/// Why the site could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// A file or folder could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// What a build did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Built {
    /// Trial pages written.
    pub rendered: usize,
    /// Trial pages kept from an earlier build (their inputs had not changed).
    pub kept: usize,
}

/// `PASS (phase 2)`, `FAIL fidelity_gap`, `no verdict: timeout`, as report.md writes it.
pub fn verdict_text(row: &TrialRow) -> String {
    match (&row.failure, row.passed_in_phase) {
        (None, Some(p)) => format!("PASS (phase {p})"),
        (None, None) => "PASS".to_string(),
        (Some(f), _) if f.graded() => format!("FAIL {}", f.as_str()),
        (Some(f), _) => format!("no verdict: {}", f.as_str()),
    }
}

/// A trial of the site: its row, its folder and its page's folder name.
pub struct SiteTrial<'a> {
    /// The report's row.
    pub row: &'a TrialRow,
    /// Its run folder.
    pub run_dir: PathBuf,
    /// Its folder under `site/trials/`.
    pub slug: String,
    /// Its `result.json`, for what the report's row does not carry (each phase's failure
    /// class, the agent's tokens).
    pub result: Option<crate::session::result::RunResult>,
}

impl SiteTrial<'_> {
    /// The migration's direction, `PyTorch → JAX`, as the report's row has it.
    pub fn direction(&self) -> String {
        self.row.migration.label()
    }
}

/// The trials of `report` (a report of the folder `out`), each with a unique folder name. A
/// run folder is looked for in `out` first (a bench folder moved elsewhere still builds),
/// then where the report names it.
pub fn trials<'a>(out: &Path, report: &'a Report) -> Vec<SiteTrial<'a>> {
    let mut taken = BTreeSet::new();
    report
        .trials
        .iter()
        .map(|row| {
            let base = html::slug(&[
                &row.task,
                &crate::agent::label(&row.agent),
                &row.repeat.to_string(),
            ]);
            let mut slug = base.clone();
            let mut n = 2;
            while !taken.insert(slug.clone()) {
                slug = format!("{base}-{n}");
                n += 1;
            }
            let named = PathBuf::from(&row.run_dir);
            let inside = named.file_name().map(|n| out.join(n));
            let run_dir = match inside {
                Some(dir) if dir.join(crate::session::result::RESULT_FILE).is_file() => dir,
                _ => named,
            };
            let result = crate::session::result::RunResult::read(&run_dir).ok();
            SiteTrial {
                row,
                run_dir,
                slug,
                result,
            }
        })
        .collect()
}

/// Writes files of the site, each whole or not at all, with every secret of the
/// environment redacted from text.
pub struct Writer {
    secrets: Secrets,
}

impl Writer {
    /// A writer that redacts this process's secrets.
    pub fn new() -> Writer {
        Writer {
            secrets: Secrets::from_env(),
        }
    }

    /// Writes `text` to `path` (redacted), making its folder.
    pub fn text(&self, path: &Path, text: &str) -> Result<(), SiteError> {
        self.bytes(path, self.secrets.redact(text).as_bytes())
    }

    /// Writes `bytes` to `path` as they are, making its folder.
    pub fn bytes(&self, path: &Path, bytes: &[u8]) -> Result<(), SiteError> {
        let fail = |source| SiteError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        // Unchanged files are left alone (and their times with them).
        if std::fs::read(path).is_ok_and(|old| old == bytes) {
            return Ok(());
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = path.with_file_name(format!(".{name}.tmp"));
        std::fs::write(&tmp, bytes).map_err(fail)?;
        std::fs::rename(&tmp, path).map_err(fail)
    }
}

impl Default for Writer {
    fn default() -> Self {
        Writer::new()
    }
}

/// The hash of everything a trial's page is made from: the site's format, xstack's version,
/// the report's row, its links, and the bytes of its `result.json` and journal.
fn source_hash(trial: &SiteTrial<'_>, links: &str) -> String {
    let mut hash = Sha256::new();
    for part in [FORMAT, env!("CARGO_PKG_VERSION"), links] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hash.update(serde_json::to_vec(trial.row).unwrap_or_default());
    for file in [
        trial.run_dir.join(crate::session::result::RESULT_FILE),
        crate::journal::path_in(&trial.run_dir),
    ] {
        hash.update([0]);
        hash.update(std::fs::read(file).unwrap_or_default());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `out/site/` for `report`: the assets, a page per trial (those whose inputs
/// changed), the compare pages, and the index.
pub fn build(out: &Path, report: &Report) -> Result<Built, SiteError> {
    let site = out.join(SITE_DIR);
    let writer = Writer::new();
    assets::write(&site, &writer)?;
    let trials = trials(out, report);
    let pairs = compare::pairs(&trials);
    let mut built = Built::default();
    for (i, trial) in trials.iter().enumerate() {
        let dir = site.join("trials").join(&trial.slug);
        let links = compare::links_of(i, &trials, &pairs, "../../");
        let link_text: String = links.iter().map(|(l, h)| format!("{l}\t{h}\n")).collect();
        let hash = source_hash(trial, &link_text);
        let source = dir.join(SOURCE_FILE);
        if std::fs::read_to_string(&source).is_ok_and(|h| h == hash)
            && dir.join("index.html").is_file()
        {
            built.kept += 1;
            continue;
        }
        index::write_trial(&dir, trial, &links, &writer)?;
        writer.text(&source, &hash)?;
        built.rendered += 1;
    }
    remove_stale(&site.join("trials"), &trials)?;
    compare::write_all(&site, &trials, &pairs, &writer)?;
    let task_pages = catalog::write_for_bench(&site, &trials, &writer)?;
    index::write_index(&site, out, report, &trials, &task_pages, &writer)?;
    Ok(built)
}

/// Removes the folders under `site/trials/` of trials that are no longer in the report.
fn remove_stale(dir: &Path, trials: &[SiteTrial<'_>]) -> Result<(), SiteError> {
    let keep: BTreeSet<&str> = trials.iter().map(|t| t.slug.as_str()).collect();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !keep.contains(name.as_str()) && entry.path().is_dir() {
            std::fs::remove_dir_all(entry.path()).map_err(|source| SiteError::Write {
                path: entry.path(),
                source,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::model::{NoVerdict, TrialFailure};
    use crate::grade::FailureClass;

    pub(super) fn row(failure: Option<TrialFailure>, passed_in_phase: Option<u8>) -> TrialRow {
        TrialRow {
            task: "t".into(),
            agent: "script:a/pass.jsonl".into(),
            repeat: 1,
            passed: failure.is_none(),
            passed_in_phase,
            failure,
            duration_s: 1.0,
            run_dir: "/nowhere/t-1".into(),
            runner: None,
            job_id: None,
            queue_s: None,
            ran_port: None,
            agent_outcome: Vec::new(),
            timing: None,
            migration: crate::task::Migration::default(),
            upstream: None,
        }
    }

    #[test]
    fn verdicts_read_as_the_report_writes_them() {
        assert_eq!(verdict_text(&row(None, Some(2))), "PASS (phase 2)");
        assert_eq!(
            verdict_text(&row(Some(TrialFailure::Graded(FailureClass::Bypass)), None)),
            "FAIL bypass"
        );
        assert_eq!(
            verdict_text(&row(
                Some(TrialFailure::NoVerdict(NoVerdict::Timeout)),
                None
            )),
            "FAIL timeout"
        );
        assert_eq!(
            verdict_text(&row(Some(TrialFailure::NoVerdict(NoVerdict::Infra)), None)),
            "no verdict: infra"
        );
    }

    #[test]
    fn a_direction_is_the_rows() {
        let mut row = row(None, Some(1));
        row.migration = crate::task::Migration {
            from: crate::task::Framework::Jax,
            to: crate::task::Framework::Torch,
        };
        let trial = SiteTrial {
            row: &row,
            run_dir: PathBuf::from("/nowhere"),
            slug: "t".into(),
            result: None,
        };
        assert_eq!(trial.direction(), "JAX → PyTorch");
    }

    #[test]
    fn trials_get_unique_folder_names() {
        let report = Report {
            interval_method: crate::bench::model::IntervalMethod::Wilson,
            trials: vec![row(None, Some(1)), row(None, Some(1))],
            summary: Vec::new(),
            pairs: Vec::new(),
            ran_port: Vec::new(),
            by_direction: Vec::new(),
        };
        let slugs: Vec<String> = trials(Path::new("/nowhere"), &report)
            .into_iter()
            .map(|t| t.slug)
            .collect();
        assert_eq!(
            slugs,
            ["t--script_pass.jsonl--1", "t--script_pass.jsonl--1-2"]
        );
    }
}

//! The catalog's site: a static site of a tasks folder, an index of every task and a page per
//! task (where it comes from, the experiment, the authors' claim and how it was
//! authenticated here, the criteria and the reasoning beside each tolerance, the phase-two
//! details, the source's reference curve, the demo's mistake and the verdicts its runs got).
//! `xstack catalog TASKS_DIR --out DIR` writes it into `DIR/site/`; a bench's site holds the
//! pages of the tasks it ran ([`write_for_bench`]). Everything is read from the task folders
//! (and, for verdicts, the benches' run folders); the same folders give the same bytes.

pub mod notes;
pub mod page;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{SITE_DIR, SiteError, SiteTrial, Writer};
use crate::bench::model::Report;
use crate::metrics::Point;
use crate::task::Task;

/// The file that marks a site folder as a catalog's: a folder without it is not written over.
const MARKER: &str = ".xstack-catalog";
/// The folder of the task pages inside a site.
pub const TASKS_DIR: &str = "tasks";

/// Why the catalog could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The tasks folder is not a folder.
    #[error("{0}: not a folder of tasks")]
    NoTasksFolder(PathBuf),
    /// The tasks folder holds no task.
    #[error("{0}: no task folder (a folder holding task.toml) in it")]
    NoTasks(PathBuf),
    /// The output's site folder exists and is not a catalog's.
    #[error(
        "{0}: exists and is not a catalog's site (no {MARKER}); nothing was written: choose another --out"
    )]
    NotACatalog(PathBuf),
    /// A bench folder given with `--bench` has no readable report.
    #[error("{path}: {message}")]
    Bench {
        /// The bench's report.json.
        path: PathBuf,
        /// Why it cannot be read.
        message: String,
    },
    /// A file could not be written.
    #[error(transparent)]
    Write(#[from] SiteError),
}

/// A task of the catalog, read from its folder.
pub struct CatalogTask {
    /// Its page's folder under `site/tasks/`: the task's folder relative to the tasks folder,
    /// `catalog--ID` for `catalog/ID` (two folders may hold tasks of one id).
    pub page: String,
    /// The loaded task.
    pub task: Task,
    /// Its `task.toml` as written (the comments carry the reasoning).
    pub text: String,
    /// Its demo trajectory, when it ships one.
    pub demo: Option<notes::Demo>,
    /// The reference log read through the task's metric patterns: each metric's series.
    pub reference: Vec<(String, Vec<Point>)>,
}

impl CatalogTask {
    /// Reads the task in `dir`, its page under `site/tasks/page/`; the error is `xstack
    /// check`'s.
    pub fn read(dir: &Path, page: String) -> Result<CatalogTask, String> {
        let task = Task::load(dir).map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(&task.file).unwrap_or_default();
        let demo = task.demo_trajectory().and_then(|f| notes::read_demo(&f));
        let reference = task
            .reference_log()
            .and_then(|log| std::fs::read_to_string(log).ok())
            .map(|log| crate::metrics::parse_log(&task, &log))
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, points)| !points.is_empty())
            .collect();
        Ok(CatalogTask {
            page,
            task,
            text,
            demo,
            reference,
        })
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.task.spec.id
    }
}

/// One phase of a recorded run of a task, as its `result.json` says.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseVerdict {
    /// The phase's number.
    pub phase: u64,
    /// `PASS`, `FAIL fidelity_gap`, or why it was not graded.
    pub verdict: String,
    /// Whether it passed.
    pub passed: bool,
    /// Each criterion's metric and reduced value (None: never printed).
    pub values: Vec<(String, Option<f64>)>,
}

/// A recorded run of a task (a bench's trial): who ran it and each phase's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRun {
    /// Where it was recorded: the bench folder's name.
    pub bench: String,
    /// The agent, as the report labels it.
    pub agent: String,
    /// Whether the agent is the task's own demo.
    pub demo: bool,
    /// The trial's page, relative to the task's page, inside the same site.
    pub link: Option<String>,
    /// Its phases.
    pub phases: Vec<PhaseVerdict>,
}

/// Whether `agent` (a report's spec) is a task's own demo trajectory.
fn is_demo(agent: &str) -> bool {
    agent == crate::cli::DEMO_AGENT
        || (agent.starts_with("script:") && agent.ends_with("/demo/trajectory.jsonl"))
}

/// Each phase of a `result.json`.
fn phase_verdicts(result: &crate::session::result::RunResult) -> Vec<PhaseVerdict> {
    result
        .phases
        .iter()
        .map(|phase| {
            let passed = phase.verdict.is_some_and(|v| v.passed());
            let verdict = match (phase.verdict, phase.failure) {
                (Some(_), _) if passed => "PASS".to_string(),
                (Some(_), Some(failure)) => format!("FAIL {}", failure.as_str()),
                (Some(v), None) => v.as_str().to_uppercase(),
                (None, _) => format!("no verdict: {}", phase.outcome.as_str()),
            };
            PhaseVerdict {
                phase: u64::from(phase.phase),
                verdict,
                passed,
                values: phase
                    .criteria
                    .iter()
                    .map(|c| (c.metric.clone(), c.value))
                    .collect(),
            }
        })
        .collect()
}

/// Each trial's run, by task id, in the report's order; `link` gives a trial's page (from a
/// task page) when the site holds it.
fn runs_of(
    bench: &str,
    trials: &[SiteTrial<'_>],
    link: impl Fn(&SiteTrial<'_>) -> Option<String>,
) -> BTreeMap<String, Vec<TaskRun>> {
    let mut runs: BTreeMap<String, Vec<TaskRun>> = BTreeMap::new();
    for trial in trials {
        let Some(result) = &trial.result else {
            continue;
        };
        runs.entry(trial.row.task.clone())
            .or_default()
            .push(TaskRun {
                bench: bench.to_string(),
                agent: crate::agent::label(&trial.row.agent),
                demo: is_demo(&trial.row.agent),
                link: link(trial),
                phases: phase_verdicts(result),
            });
    }
    runs
}

/// The runs of each task in the benches `dirs` (their `report.json` and run folders).
fn bench_runs(dirs: &[PathBuf]) -> Result<BTreeMap<String, Vec<TaskRun>>, CatalogError> {
    let mut all: BTreeMap<String, Vec<TaskRun>> = BTreeMap::new();
    for dir in dirs {
        let path = dir.join("report.json");
        let report: Report = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
            .map_err(|message| CatalogError::Bench {
                path: path.clone(),
                message,
            })?;
        let name = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        for (task, runs) in runs_of(&name, &super::trials(dir, &report), |_| None) {
            all.entry(task).or_default().extend(runs);
        }
    }
    Ok(all)
}

/// What a catalog build wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Built {
    /// The site's index page.
    pub index: PathBuf,
    /// Task pages written.
    pub tasks: usize,
    /// Task folders that are not valid tasks (listed on the index with `xstack check`'s error).
    pub invalid: usize,
}

/// `xstack catalog TASKS_DIR --out DIR [--bench BENCH]...`: writes `DIR/site/`, the index and
/// a page per task of `tasks_dir`, with the verdicts of the benches' runs of each task.
/// Nothing outside `DIR/site/` is written, and a `DIR/site/` that is not a catalog's is
/// refused.
pub fn build(tasks_dir: &Path, out: &Path, benches: &[PathBuf]) -> Result<Built, CatalogError> {
    if !tasks_dir.is_dir() {
        return Err(CatalogError::NoTasksFolder(tasks_dir.to_path_buf()));
    }
    let site = out.join(SITE_DIR);
    let ours = site.join(MARKER).is_file();
    let empty = std::fs::read_dir(&site).map_or(true, |mut d| d.next().is_none());
    if !ours && !empty {
        return Err(CatalogError::NotACatalog(site));
    }
    let folders = crate::task::discover(tasks_dir);
    if folders.is_empty() {
        return Err(CatalogError::NoTasks(tasks_dir.to_path_buf()));
    }
    let runs = bench_runs(benches)?;
    let listed: Vec<(String, Result<CatalogTask, String>)> = folders
        .iter()
        .map(|dir| {
            let name = dir.strip_prefix(tasks_dir).unwrap_or(dir);
            let parts: Vec<String> = name
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let page = super::html::slug(&parts.iter().map(String::as_str).collect::<Vec<_>>());
            (name.display().to_string(), CatalogTask::read(dir, page))
        })
        .collect();
    let writer = Writer::new();
    super::assets::write(&site, &writer)?;
    writer.text(
        &site.join(MARKER),
        "A catalog of tasks written by `xstack catalog`.\n",
    )?;
    let tasks: Vec<&CatalogTask> = listed.iter().filter_map(|(_, t)| t.as_ref().ok()).collect();
    for task in &tasks {
        let task_runs = runs.get(task.id()).map(Vec::as_slice).unwrap_or_default();
        write_page(&site, task, task_runs, &Home::Catalog, &writer)?;
    }
    let pages: Vec<&str> = tasks.iter().map(|t| t.page.as_str()).collect();
    remove_stale(&site.join(TASKS_DIR), &pages)?;
    let index = site.join("index.html");
    writer.text(&index, &page::index(&listed, tasks_dir, &runs))?;
    Ok(Built {
        index,
        tasks: tasks.len(),
        invalid: listed.len() - tasks.len(),
    })
}

/// Where a task page's way home goes.
pub enum Home {
    /// The catalog's index.
    Catalog,
    /// A bench's index.
    Bench,
}

/// Writes `site/tasks/ID/index.html`.
fn write_page(
    site: &Path,
    task: &CatalogTask,
    runs: &[TaskRun],
    home: &Home,
    writer: &Writer,
) -> Result<(), SiteError> {
    let file = site.join(TASKS_DIR).join(&task.page).join("index.html");
    writer.text(&file, &page::task_page(task, runs, home))
}

/// Removes the folders under `site/tasks/` other than `pages`.
fn remove_stale(dir: &Path, pages: &[&str]) -> Result<(), SiteError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !pages.contains(&name.as_str()) && entry.path().is_dir() {
            std::fs::remove_dir_all(entry.path()).map_err(|source| SiteError::Write {
                path: entry.path(),
                source,
            })?;
        }
    }
    Ok(())
}

/// A bench's site: the page of each task its trials ran whose folder (as the trial's journal
/// names it) still loads, under `site/tasks/ID/`, with this bench's trials of it linked.
/// Returns the ids and titles of the tasks that got a page, for the index to link.
pub fn write_for_bench(
    site: &Path,
    trials: &[SiteTrial<'_>],
    writer: &Writer,
) -> Result<Vec<(String, String)>, SiteError> {
    let mut dirs: BTreeMap<String, PathBuf> = BTreeMap::new();
    for trial in trials {
        if dirs.contains_key(&trial.row.task) {
            continue;
        }
        let data = super::trial::TrialData::read(&trial.run_dir);
        let dir = PathBuf::from(&data.state.task.dir);
        if !data.state.task.dir.is_empty() && dir.join(crate::task::TASK_FILE).is_file() {
            dirs.insert(trial.row.task.clone(), dir);
        }
    }
    let runs = runs_of("this bench", trials, |t| {
        Some(format!("../../trials/{}/index.html", t.slug))
    });
    let mut written = Vec::new();
    for (id, dir) in &dirs {
        let Ok(task) = CatalogTask::read(dir, id.clone()) else {
            continue;
        };
        if task.id() != id {
            continue;
        }
        let task_runs = runs.get(id).map(Vec::as_slice).unwrap_or_default();
        write_page(site, &task, task_runs, &Home::Bench, writer)?;
        written.push((id.clone(), task.task.spec.title.clone()));
    }
    let ids: Vec<&str> = written.iter().map(|(id, _)| id.as_str()).collect();
    remove_stale(&site.join(TASKS_DIR), &ids)?;
    Ok(written)
}

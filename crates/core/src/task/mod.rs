//! Task folders (SPEC §2): the `task.toml` types, their validation with errors that name the
//! file, the key path and the TOML line, and discovery of tasks under the tasks folder.

mod judge;
pub mod located;
mod migration;
mod validate;

use std::path::{Path, PathBuf};

use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize};

pub use judge::Judgement;
pub use migration::{Framework, Migration, MigrationSpec};
pub use validate::{TaskError, licence_files};

/// The name of the task description file inside a task folder.
pub const TASK_FILE: &str = "task.toml";

/// The raw `task.toml` document, exactly as SPEC §2 writes it; unknown keys are rejected.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    /// Task id, equal to the folder name.
    pub id: String,
    /// One-line title for the picker.
    pub title: String,
    /// Optional paragraph for the picker.
    pub summary: Option<String>,
    /// Where the source repository comes from.
    pub source: SourceSpec,
    /// The public repository the task was made from (SPEC §2d); none for the team's own code.
    pub upstream: Option<UpstreamSpec>,
    /// The direction: the source's framework and the port's (SPEC §2c).
    #[serde(default)]
    pub migration: MigrationSpec,
    /// Where the published numbers come from.
    pub published: PublishedSpec,
    /// The Python environments of the target and reference sides.
    #[serde(default)]
    pub env: EnvSpec,
    /// The experiment command.
    pub run: RunSpec,
    /// Metrics extracted from the run's output.
    #[serde(rename = "metric", default)]
    pub metrics: Vec<MetricSpec>,
    /// Criteria that must all hold for a pass.
    #[serde(rename = "criterion", default)]
    pub criteria: Vec<CriterionSpec>,
    /// Integrity rules of the migrated repository.
    #[serde(default)]
    pub integrity: IntegritySpec,
    /// The phase-two experiment details.
    pub phase2: Phase2Spec,
    /// The recorded reference run.
    pub reference: Option<ReferenceSpec>,
    /// Prompt additions.
    pub prompt: Option<PromptSpec>,
    /// The numeric parity probe (SPEC §3a).
    pub parity: Option<ParitySpec>,
    /// How the oracle in `solution/` is laid over the source.
    pub solution: Option<SolutionSpec>,
}

/// `[source]`: exactly one of a path relative to the task folder or a git repository.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Folder relative to the task folder.
    pub path: Option<String>,
    /// Git repository URL.
    pub git: Option<String>,
    /// Commit of the git repository.
    pub rev: Option<String>,
    /// Files or folders of the source (relative to it) left out of the agent's workspace: a
    /// twin of the experiment in the port's framework, kept in a snapshot other tasks share.
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// `[upstream]`: the public repository a task was made from (SPEC §2d): its forge's
/// `owner/name`, the full commit the source copy was taken at, its licence and the file the
/// experiment runs, with every difference of the copy from that commit.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UpstreamSpec {
    /// `OWNER/NAME` on GitHub.
    pub repository: String,
    /// The commit the source copy was taken at, 40 hexadecimal digits.
    pub commit: String,
    /// The licence's SPDX id (or expression); the source folder holds its licence file.
    pub licence: String,
    /// The file the task runs, relative to the repository.
    pub experiment: String,
    /// Every difference of the source copy from the commit, one line each (`PATH: what`).
    #[serde(default)]
    pub changed: Vec<String>,
}

impl UpstreamSpec {
    /// The commit's first seven digits, as GitHub abbreviates it.
    pub fn short_commit(&self) -> &str {
        self.commit.get(..7).unwrap_or(&self.commit)
    }

    /// `OWNER/NAME@SHORT`: the repository and the commit in one word.
    pub fn label(&self) -> String {
        format!("{}@{}", self.repository, self.short_commit())
    }

    /// The repository's tree at the commit on GitHub.
    pub fn url(&self) -> String {
        format!(
            "https://github.com/{}/tree/{}",
            self.repository, self.commit
        )
    }

    /// One line for a reader: `from Tiiiger/SGC@2c7a272 (MIT), citation.py`, with how many
    /// differences from the commit the copy has.
    pub fn describe(&self) -> String {
        let changed = match self.changed.len() {
            0 => "unchanged".to_string(),
            1 => "1 change".to_string(),
            n => format!("{n} changes"),
        };
        format!(
            "from {} ({}), {}, {changed}",
            self.label(),
            self.licence,
            self.experiment
        )
    }
}

/// `[published]`: the citation of the published result.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedSpec {
    /// Where in the repository or paper the number is printed.
    pub citation: String,
    /// Optional link to it.
    pub url: Option<String>,
}

/// `[env]`: package lists of the target (the port's) and reference (the source's) environments.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvSpec {
    /// Target-side packages; empty means no environment of its own.
    #[serde(default)]
    pub packages: Vec<String>,
    /// Source-side packages.
    #[serde(default)]
    pub reference_packages: Vec<String>,
    /// Shell command run in the repository before every verify run.
    pub setup: Option<String>,
}

/// `[run]`: the experiment's entry point.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Shell command of the experiment. For a notebook task ([`RunSpec::notebook`]) the
    /// loaded task holds the command that runs the notebook ([`crate::notebook::command`]).
    #[serde(default)]
    pub command: String,
    /// A Jupyter notebook (relative to the repository) run top to bottom instead of a
    /// command (docs/TASKS.md, "Notebook tasks").
    pub notebook: Option<String>,
    /// The notebook's code cells that form the experiment (`"0-6, 21-34"`, indices as
    /// nbformat numbers cells), run in order in one kernel; the others are left out. Only
    /// with [`RunSpec::notebook`]; every code cell when absent.
    pub cells: Option<String>,
    /// A verify run past this many seconds is killed and graded a crash.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
    /// Whether the verify run may use the network (it is cut off otherwise).
    #[serde(default)]
    pub network: bool,
}

fn default_timeout_s() -> u64 {
    600
}

/// `[[metric]]`: how one metric is read from the run's output.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// Metric name, referenced by criteria.
    pub name: String,
    /// Regex with a named group `value` (and optionally `step`).
    pub regex: Option<String>,
    /// Key of a JSON-lines object holding the value.
    pub json_key: Option<String>,
    /// Key of a JSON-lines object holding the step.
    pub step_key: Option<String>,
}

/// How a metric's series is reduced to the one value a criterion checks.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    /// The last value.
    Last,
    /// The largest value.
    Max,
    /// The smallest value.
    Min,
    /// The arithmetic mean.
    Mean,
}

impl<'de> Deserialize<'de> for Reduce {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        located::one_of(
            d,
            &[
                ("last", Reduce::Last),
                ("max", Reduce::Max),
                ("min", Reduce::Min),
                ("mean", Reduce::Mean),
            ],
        )
    }
}

impl Reduce {
    /// The lowercase name used in task files.
    pub fn as_str(self) -> &'static str {
        match self {
            Reduce::Last => "last",
            Reduce::Max => "max",
            Reduce::Min => "min",
            Reduce::Mean => "mean",
        }
    }
}

/// Which side of the published value a criterion accepts; [`Direction::judge`] decides
/// whether a value meets it.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, strum::VariantArray)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// value >= published - tolerance
    Higher,
    /// value <= published + tolerance
    Lower,
    /// |value - published| <= tolerance
    Within,
}

impl<'de> Deserialize<'de> for Direction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        located::one_of(
            d,
            &[
                ("higher", Direction::Higher),
                ("lower", Direction::Lower),
                ("within", Direction::Within),
            ],
        )
    }
}

impl Direction {
    /// The lowercase name used in task files and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Higher => "higher",
            Direction::Lower => "lower",
            Direction::Within => "within",
        }
    }
}

/// `[[criterion]]`: one condition of a pass.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CriterionSpec {
    /// Name of a `[[metric]]`.
    pub metric: String,
    /// How the series is reduced.
    #[serde(default = "default_reduce")]
    pub reduce: Reduce,
    /// The published value.
    pub published: f64,
    /// Absolute tolerance, >= 0.
    pub tolerance: f64,
    /// Which side of the published value passes.
    pub direction: Direction,
    /// What the authors published, and whether it was reproduced here (SPEC §2b).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<ClaimSpec>,
}

impl CriterionSpec {
    /// Whether `value` meets this criterion, and by how much ([`Direction::judge`]).
    pub fn judge(&self, value: f64) -> Judgement {
        self.direction.judge(value, self.published, self.tolerance)
    }

    /// Where the accepted region ends ([`Direction::edges`]).
    pub fn edges(&self) -> (f64, f64) {
        self.direction.edges(self.published, self.tolerance)
    }
}

/// Whether a published claim was reproduced by the measured runs (SPEC §2b).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    /// The claim lies within the calibrated tolerance of the measured mean.
    Reproduced,
    /// The measured runs land farther from the claim than the tolerance.
    NotReproduced,
    /// The repository states no result for this metric.
    NoClaim,
}

impl ClaimStatus {
    /// The name written in `task.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Reproduced => "reproduced",
            ClaimStatus::NotReproduced => "not_reproduced",
            ClaimStatus::NoClaim => "no_claim",
        }
    }
}

/// `[criterion.claim]`: the published claim a criterion is graded against, quoted as
/// written, with the measurement that authenticated it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// The claim quoted as written (a sentence, a table row, an output line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Where it is: `FILE:LINE`, or `NOTEBOOK.ipynb#cell=N`.
    #[serde(rename = "where", default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// The number as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// `"%"`: a percentage of the printed fraction; `""`: the printed metric's own units.
    #[serde(default)]
    pub unit: String,
    /// Whether the measured runs reproduced it.
    pub status: ClaimStatus,
    /// The runs that authenticated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<ClaimMeasurement>,
}

impl ClaimSpec {
    /// The claim in the printed metric's units (81.0 % is 0.810).
    pub fn value_in_metric_units(&self) -> Option<f64> {
        self.value
            .map(|v| if self.unit == "%" { v / 100.0 } else { v })
    }

    /// The quoted text on one line, its runs of white space (a table row's padding) made one
    /// space.
    pub fn one_line_text(&self) -> Option<String> {
        self.text
            .as_ref()
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    /// The claim as written, `81.0 %` or `1.88` (a whole number keeps its `.0`, as TOML
    /// writes it).
    pub fn value_text(&self) -> Option<String> {
        self.value.map(|v| {
            if self.unit == "%" {
                format!("{v:?} %")
            } else {
                format!("{v:?}")
            }
        })
    }

    /// [`ClaimSpec::describe`] and shorter forms of it, longest first, for a row that may be
    /// narrow: `published 81 % (README.md:29), reproduced here (0.8103 ± 0.0005, 5 runs)`,
    /// then without the runs, then `README.md:29 reproduced`.
    pub fn summaries(&self) -> Vec<String> {
        let status = match self.status {
            ClaimStatus::Reproduced => "reproduced here",
            ClaimStatus::NotReproduced => "NOT reproduced here",
            ClaimStatus::NoClaim => return vec![self.describe(), "no published claim".to_string()],
        };
        let (Some(value), Some(at)) = (self.value_text(), self.location.as_ref()) else {
            return vec![self.describe()];
        };
        let mut all = vec![self.describe()];
        if let Some(m) = &self.measured {
            all.push(format!(
                "published {value} ({at}), {status} ({} ± {}, {} runs)",
                m.mean, m.std, m.runs
            ));
        }
        all.push(format!("published {value} ({at}), {status}"));
        all.push(format!("{at} {status}"));
        all
    }

    /// Where the published number comes from and whether it was reproduced here, in one
    /// line: `README.md:29 "Cora | Acc: 81.0 %": reproduced here (0.8103 ± 0.0005, 5 runs)`.
    pub fn describe(&self) -> String {
        let measured = self.measured.as_ref().map(|m| {
            format!(
                "{} ± {}, {} run{}",
                m.mean,
                m.std,
                m.runs,
                if m.runs == 1 { "" } else { "s" }
            )
        });
        let quoted = match (&self.location, self.one_line_text()) {
            (Some(at), Some(text)) => format!("{at} \"{text}\""),
            (Some(at), None) => at.clone(),
            _ => String::new(),
        };
        match (self.status, measured) {
            (ClaimStatus::NoClaim, Some(m)) => {
                format!("no published claim: graded against this machine's runs ({m})")
            }
            (ClaimStatus::NoClaim, None) => "no published claim".to_string(),
            (status, Some(m)) => format!(
                "{quoted}: {} here ({m})",
                if status == ClaimStatus::Reproduced {
                    "reproduced"
                } else {
                    "NOT reproduced"
                }
            ),
            (status, None) => format!("{quoted}: {}", status.as_str()),
        }
    }
}

/// `[criterion.claim] measured`: the runs a claim was authenticated with.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClaimMeasurement {
    /// How many runs.
    pub runs: u32,
    /// Their mean, in the printed metric's units.
    pub mean: f64,
    /// Their standard deviation.
    pub std: f64,
    /// The day they ran (`YYYY-MM-DD`).
    pub date: String,
    /// The packages they ran with (`torch 2.15.0, numpy 2.4.6`).
    #[serde(default)]
    pub versions: String,
    /// The machine (`2 cores, CPU`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

fn default_reduce() -> Reduce {
    Reduce::Last
}

/// `[integrity]`: rules the migrated repository must keep. The loaded task holds the
/// direction's defaults ([`Migration::default_forbid_imports`]) for a list it leaves out;
/// [`IntegritySpec::default`] is PyTorch to JAX's.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IntegritySpec {
    /// Top-level modules the migrated `.py` files must not import.
    #[serde(default = "default_forbid")]
    pub forbid_imports: Vec<String>,
    /// The migrated `.py` files must import at least one of these.
    #[serde(default = "default_require")]
    pub require_imports: Vec<String>,
    /// Globs of files restored from the source before grading.
    #[serde(default)]
    pub protected: Vec<String>,
    /// Re-run a passing verify under a second seed; bit-identical criterion values under
    /// both are a bypass.
    #[serde(default)]
    pub seed_check: bool,
}

fn default_forbid() -> Vec<String> {
    Migration::default().default_forbid_imports()
}

fn default_require() -> Vec<String> {
    Migration::default().default_require_imports()
}

impl Default for IntegritySpec {
    fn default() -> Self {
        IntegritySpec {
            forbid_imports: default_forbid(),
            require_imports: default_require(),
            protected: Vec::new(),
            seed_check: false,
        }
    }
}

/// `[phase2]`: the experiment details handed over after a failed phase 1.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase2Spec {
    /// The details text.
    pub details: String,
}

/// `[reference]`: the recorded run of the source.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSpec {
    /// Log file relative to the task folder.
    pub log: String,
}

/// `[prompt]`: text appended to the default prompt.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptSpec {
    /// Appended text.
    pub extra: String,
}

/// `[parity]`: the numeric parity probe (SPEC §3a), run in the source and in the port.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ParitySpec {
    /// Shell command of the probe, the same on both sides.
    pub command: String,
    /// Relative tolerance: a value passes when `|port - source| <= atol + rtol * |source|`.
    #[serde(default = "default_rtol")]
    pub rtol: f64,
    /// Absolute tolerance.
    #[serde(default = "default_atol")]
    pub atol: f64,
    /// Each side's probe past this many seconds is killed.
    #[serde(default = "default_parity_timeout_s")]
    pub timeout_s: u64,
    /// Whether the phase-two prompt carries the probe's summary.
    #[serde(default)]
    pub tell_agent: bool,
    /// A folder (relative to the task folder) whose files are laid over the source's copy
    /// before the probe's source side runs: the source's own probe, kept out of the
    /// untouched snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_files: Option<String>,
}

fn default_rtol() -> f64 {
    1e-4
}

fn default_atol() -> f64 {
    1e-5
}

fn default_parity_timeout_s() -> u64 {
    300
}

/// `[solution]`: how the oracle is made from the source: `base` (a folder several tasks
/// share) and then `solution/` laid over it, then the paths of `remove` deleted (files of the
/// source the port has no use for, such as scripts the graded command never runs).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SolutionSpec {
    /// A folder relative to the task folder (`../sources/NAME`) holding the oracle's files
    /// that tasks of one source share, laid over the source before `solution/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Files or folders of the source, relative to it, that the oracle deletes.
    #[serde(default)]
    pub remove: Vec<String>,
}

/// Where a validated task's source repository lives.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A folder on disk.
    Path(PathBuf),
    /// A git repository pinned to a commit.
    Git {
        /// The repository URL.
        url: String,
        /// The pinned commit.
        rev: String,
    },
}

/// A loaded and validated task.
#[derive(Debug, Clone)]
pub struct Task {
    /// The task folder.
    pub dir: PathBuf,
    /// The `task.toml` path.
    pub file: PathBuf,
    /// The parsed document.
    pub spec: TaskFile,
    /// The resolved source.
    pub source: Source,
    /// The direction of the migration.
    pub migration: Migration,
    /// Compiled metric regexes, index-aligned with `spec.metrics` (None for JSON metrics).
    pub metric_regexes: Vec<Option<Regex>>,
}

impl Task {
    /// Loads and validates `DIR/task.toml`.
    pub fn load(dir: &Path) -> Result<Task, TaskError> {
        validate::load(dir)
    }

    /// The task id.
    pub fn id(&self) -> &str {
        &self.spec.id
    }

    /// The source folder when the source is a local path.
    pub fn source_path(&self) -> Option<&Path> {
        match &self.source {
            Source::Path(p) => Some(p),
            Source::Git { .. } => None,
        }
    }

    /// The `solution/` folder, when the task ships one.
    pub fn solution_dir(&self) -> Option<PathBuf> {
        let dir = self.dir.join("solution");
        dir.is_dir().then_some(dir)
    }

    /// The folders laid over the source, in order, to make the oracle: `[solution] base`,
    /// then `solution/` (each when there is one).
    pub fn solution_layers(&self) -> Vec<PathBuf> {
        let base = self
            .spec
            .solution
            .as_ref()
            .and_then(|s| s.base.as_ref())
            .map(|base| self.dir.join(base));
        base.into_iter().chain(self.solution_dir()).collect()
    }

    /// The folders the probe's source side is made of, in order: `source`, then the folder
    /// of `[parity] source_files` when the task names one (the source's own probe, which the
    /// untouched snapshot does not hold).
    pub fn parity_source_layers(&self, source: &Path) -> Vec<PathBuf> {
        let files = self
            .spec
            .parity
            .as_ref()
            .and_then(|p| p.source_files.as_ref())
            .map(|files| self.dir.join(files));
        std::iter::once(source.to_path_buf()).chain(files).collect()
    }

    /// The paths (relative to the source) that the oracle deletes from the source.
    pub fn solution_removes(&self) -> &[String] {
        self.spec
            .solution
            .as_ref()
            .map(|s| s.remove.as_slice())
            .unwrap_or_default()
    }

    /// The demo trajectory, when the task ships one.
    pub fn demo_trajectory(&self) -> Option<PathBuf> {
        let file = self.dir.join("demo").join("trajectory.jsonl");
        file.is_file().then_some(file)
    }

    /// The reference log, when the task names one.
    pub fn reference_log(&self) -> Option<PathBuf> {
        self.spec.reference.as_ref().map(|r| self.dir.join(&r.log))
    }
}

/// The tasks folder: `$XSTACK_TASKS_DIR`, else `./tasks`.
pub fn tasks_dir() -> PathBuf {
    std::env::var_os("XSTACK_TASKS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("tasks"))
}

/// Resolves a TASK argument: a task folder path, or a task id under the tasks folder.
pub fn resolve(arg: &str) -> Result<PathBuf, TaskError> {
    let as_path = PathBuf::from(arg);
    if as_path.join(TASK_FILE).is_file() {
        return Ok(as_path);
    }
    let under = tasks_dir().join(arg);
    if under.join(TASK_FILE).is_file() {
        return Ok(under);
    }
    Err(TaskError::NotFound {
        arg: arg.to_string(),
        tasks_dir: tasks_dir(),
    })
}

/// Every task folder under `root` (folders holding a `task.toml`, searched two levels deep
/// so that grouped folders such as `tasks/catalog/<id>` are found), sorted by path.
pub fn discover(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .min_depth(1)
        .max_depth(2)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
    {
        if entry.file_type().is_dir() && entry.path().join(TASK_FILE).is_file() {
            found.push(entry.path().to_path_buf());
        }
    }
    found
}

#[cfg(test)]
mod tests;

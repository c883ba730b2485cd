//! What the agent checked (docs/CHECKS.md): every Python process the agent starts during
//! its turn, recorded by `recorder.py` (installed into xstack's environments and put on the
//! agent's PYTHONPATH) and read back here as [`AgentRun`]s: what ran (the port, the source,
//! the parity probe, or something else), how it ended, which framework it imported, and the
//! values of the task's graded metrics it printed, read with the task's own extractors.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::metrics::Extractor;
use crate::secrets::{MIN_SECRET_LEN, REDACTED, SECRET_SUFFIXES};
use crate::task::{CriterionSpec, Framework, Migration, Reduce, Task};

/// The recorder's source, before [`recorder_source`] writes the secrets' rule into it.
const RECORDER_PY: &str = include_str!("recorder.py");
/// The recorder's module name in site-packages and in the hook folder.
const MODULE_FILE: &str = "_xstack_checks.py";
/// The `.pth` file that imports it at start-up.
const PTH_FILE: &str = "_xstack_checks.pth";
/// Where the records go, relative to the workspace: xstack's own folder there, which every
/// agent's sandbox lets it write, and which the verify copy, the diff and the watcher leave
/// out.
pub const FOLDER: &str = ".xstack/agent-runs";
/// The variable naming the folder the recorder writes into; unset, it does nothing.
pub const DIR_VAR: &str = "XSTACK_CHECKS_DIR";
/// How long a run left going at the end of the agent's turn gets to end after SIGTERM.
const END_GRACE: Duration = Duration::from_secs(2);
/// How long a Python process among the agent's goes without a start record before it
/// counts as one the recorder missed (its record is written a few milliseconds in).
const UNRECORDED_AFTER: Duration = Duration::from_secs(1);

/// The records could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("agent run records: {}: {source}", path.display())]
pub struct ChecksError {
    /// The file or folder.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

fn write(path: &Path, text: &str) -> Result<(), ChecksError> {
    let err = |source| ChecksError {
        path: path.to_path_buf(),
        source,
    };
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(err)
}

/// The recorder as it is installed: with the rule of [`crate::secrets`] (the name suffixes
/// of secret variables, the shortest value that counts, what a value is replaced with), so
/// that what it keeps is redacted as the journal is.
fn recorder_source() -> String {
    // Rust's quoting of these ASCII words is Python's too.
    let suffixes: Vec<String> = SECRET_SUFFIXES.iter().map(|s| format!("{s:?}")).collect();
    RECORDER_PY
        .replace(
            "_SECRET_SUFFIXES = ()\n",
            &format!("_SECRET_SUFFIXES = ({},)\n", suffixes.join(", ")),
        )
        .replace(
            "_MIN_SECRET_LEN = 0\n",
            &format!("_MIN_SECRET_LEN = {MIN_SECRET_LEN}\n"),
        )
        .replace("_REDACTED = \"\"\n", &format!("_REDACTED = {REDACTED:?}\n"))
}

/// Installs (or refreshes) the recorder in the virtualenv at `env_dir`: the module and its
/// `.pth` file in every `lib/python*/site-packages` of it.
pub fn install(env_dir: &Path) -> Result<(), ChecksError> {
    let sites = crate::env::site_packages(env_dir).map_err(|source| ChecksError {
        path: env_dir.join("lib"),
        source,
    })?;
    for site in sites {
        write(&site.join(MODULE_FILE), &recorder_source())?;
        write(&site.join(PTH_FILE), "import _xstack_checks\n")?;
    }
    Ok(())
}

/// What a run of the agent's ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunTarget {
    /// Its port: a script or module of the workspace (that did not run the source's
    /// framework alone).
    Port,
    /// The source: a script under the task's source, or a workspace script that imported
    /// the source's framework and not the port's (the source before it was ported).
    Source,
    /// The task's parity probe.
    Probe,
    /// Any other Python process (`python -c`, pip, a test runner, a script elsewhere).
    Other,
    /// A Python process seen among the agent's that the recorder did not record (started
    /// without it): what it ran and how it ended are unknown.
    Unknown,
}

impl RunTarget {
    /// The word the screen and the docs use.
    pub fn as_str(self) -> &'static str {
        match self {
            RunTarget::Port => "port",
            RunTarget::Source => "source",
            RunTarget::Probe => "probe",
            RunTarget::Other => "other",
            RunTarget::Unknown => "unknown",
        }
    }
}

/// One graded metric's value as a run of the agent's printed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckedMetric {
    /// Metric name.
    pub metric: String,
    /// How the criterion reduces its series.
    pub reduce: Reduce,
    /// The reduced value.
    pub value: f64,
    /// Whether it is inside the task's criterion.
    pub within: bool,
}

/// One Python process the agent started during its turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRun {
    /// The phase whose turn it ran in.
    pub phase: u8,
    /// What it ran.
    pub target: RunTarget,
    /// What it ran, shortly: `train.py` (relative to the workspace), `-m pkg`, `-c`.
    pub program: String,
    /// Its whole command line, the interpreter first.
    pub argv: Vec<String>,
    /// Its working folder.
    pub cwd: String,
    /// Seconds it ran (until the end of the turn, for one xstack ended).
    pub duration_s: f64,
    /// Its exit status; None when unknown (a signal, `os._exit`, ended by xstack).
    pub exit_code: Option<i32>,
    /// The exception that ended it, `Name: message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    /// The frameworks it had imported when it ended (`jax`, `torch`, `tensorflow`); empty
    /// when unknown.
    pub frameworks: Vec<String>,
    /// The task's graded metrics it printed, reduced as each criterion reduces them.
    pub metrics: Vec<CheckedMetric>,
    /// Seconds from its end to when xstack read its record (the event's time less this is
    /// when it ended).
    #[serde(default)]
    pub reported_after_s: f64,
    /// Whether it was still running at the end of the agent's turn, so xstack ended it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended_by_xstack: bool,
}

/// The recorder's `start` line.
#[derive(Debug, Deserialize)]
struct StartLine {
    pid: i32,
    argv: Vec<String>,
    cwd: String,
    t: f64,
}

/// The recorder's `end` line.
#[derive(Debug, Deserialize)]
struct EndLine {
    t: f64,
    exit: i32,
    exception: Option<String>,
    frameworks: Vec<String>,
}

/// What one process recorded.
#[derive(Debug)]
struct Recorded {
    start: StartLine,
    end: Option<EndLine>,
}

fn read_records(path: &Path) -> Option<Recorded> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut start = None;
    let mut end = None;
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        match value.get("kind").and_then(|k| k.as_str()) {
            Some("start") => start = serde_json::from_value(value).ok(),
            Some("end") => end = serde_json::from_value(value).ok(),
            _ => {}
        }
    }
    Some(Recorded { start: start?, end })
}

/// `path` with `.` and `..` taken out, without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| lexical(path))
}

/// What a command line runs: the script (resolved against `cwd`), a module, or neither.
enum Runs {
    Script(PathBuf),
    Module(String),
    Command,
    Interpreter,
}

fn what_runs(argv: &[String], cwd: &Path) -> Runs {
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-m" => {
                return args
                    .next()
                    .map_or(Runs::Interpreter, |m| Runs::Module(m.clone()));
            }
            "-c" => return Runs::Command,
            "-W" | "-X" | "--check-hash-based-pycs" => {
                args.next();
            }
            a if a.starts_with("-m") && a.len() > 2 => return Runs::Module(a[2..].to_string()),
            a if a.starts_with("-c") && a.len() > 2 => return Runs::Command,
            a if a.starts_with('-') && a.len() > 1 => {}
            script => return Runs::Script(canonical(&cwd.join(script))),
        }
    }
    Runs::Interpreter
}

/// What the records of one session are read against: where the port and the source are,
/// the probe's script, the direction, and the task's metrics and criteria.
#[derive(Debug, Clone)]
pub struct Context {
    migration: Migration,
    workspace: PathBuf,
    source: PathBuf,
    probe: Option<PathBuf>,
    extractor: Extractor,
    criteria: Vec<CriterionSpec>,
}

impl Context {
    /// The context of a session of `task` whose agent works in `workspace`, ported from
    /// `source`.
    pub fn new(task: &Task, workspace: &Path, source: &Path) -> Context {
        let probe = task.spec.parity.as_ref().and_then(|p| {
            shell_words::split(&p.command)
                .ok()?
                .into_iter()
                .find(|w| w.ends_with(".py"))
                .map(PathBuf::from)
        });
        Context {
            migration: task.migration,
            workspace: canonical(workspace),
            source: canonical(source),
            probe,
            extractor: Extractor::for_task(task),
            criteria: task.spec.criteria.clone(),
        }
    }

    fn classify(&self, argv: &[String], cwd: &Path, frameworks: &[String]) -> (RunTarget, String) {
        let cwd = canonical(cwd);
        let (path, program) = match what_runs(argv, &cwd) {
            Runs::Script(path) => {
                let shown = path
                    .strip_prefix(&self.workspace)
                    .or_else(|_| path.strip_prefix(&self.source))
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|_| path.clone());
                let program = shown.display().to_string();
                (Some(path), program)
            }
            Runs::Module(module) => {
                let file = cwd.join(module.replace('.', "/"));
                let found = [file.with_extension("py"), file.join("__main__.py")]
                    .into_iter()
                    .find(|f| f.is_file());
                let program = format!("-m {module}");
                match argv.iter().position(|a| a == "_xstack_notebook") {
                    // The notebook runner: what it runs is the notebook.
                    Some(at) => (argv.get(at + 1).map(|nb| canonical(&cwd.join(nb))), program),
                    None => (found, program),
                }
            }
            Runs::Command => (None, "-c".to_string()),
            Runs::Interpreter => (None, "python".to_string()),
        };
        let Some(path) = path else {
            return (RunTarget::Other, program);
        };
        let imported = |framework: Framework| frameworks.iter().any(|f| f == framework.module());
        let source_alone = imported(self.migration.from) && !imported(self.migration.to);
        let target = if let Ok(inside) = path.strip_prefix(&self.workspace) {
            if self.probe.as_deref() == Some(inside) {
                RunTarget::Probe
            } else if source_alone {
                RunTarget::Source
            } else {
                RunTarget::Port
            }
        } else if path.starts_with(&self.source) {
            if self
                .probe
                .as_deref()
                .is_some_and(|p| path.strip_prefix(&self.source).is_ok_and(|i| i == p))
            {
                RunTarget::Probe
            } else {
                RunTarget::Source
            }
        } else {
            RunTarget::Other
        };
        (target, program)
    }

    /// The graded metrics in `output`, reduced as the criteria reduce them.
    fn metrics(&self, output: &str) -> Vec<CheckedMetric> {
        let series = crate::metrics::parse_text(self.extractor.clone(), output);
        self.criteria
            .iter()
            .filter_map(|c| {
                let points = &series.iter().find(|(name, _)| *name == c.metric)?.1;
                let value = crate::metrics::reduce(points, c.reduce)?;
                Some(CheckedMetric {
                    metric: c.metric.clone(),
                    reduce: c.reduce,
                    value,
                    within: c.judge(value).met,
                })
            })
            .collect()
    }
}

/// The records of one session's agent turns: the folder the recorder writes into, a
/// `sitecustomize` for the agent's PYTHONPATH, and which processes were reported already.
#[derive(Debug)]
pub struct Collector {
    dir: PathBuf,
    hook: PathBuf,
    context: Context,
    reported: HashSet<PathBuf>,
    /// Processes that wrote a start record, by the number they have in their own PID
    /// namespace.
    recorded_pids: HashSet<i32>,
    /// The agent's Python processes without a start record, since when.
    suspects: HashMap<i32, Instant>,
    /// Those reported as runs the recorder missed.
    unrecorded: HashSet<i32>,
    /// The agent's own process (its terminal's child), when one runs.
    agent: Option<i32>,
    /// Records of the agent's own process (an agent that is a Python program): never
    /// reported as its runs, never ended.
    own: HashSet<PathBuf>,
}

impl Collector {
    /// Sets up `folder` ([`FOLDER`] in the workspace) for a session in `context`, with what
    /// an earlier, interrupted session left there removed.
    pub fn create(folder: &Path, context: Context) -> Result<Collector, ChecksError> {
        let dir = folder.join("records");
        let hook = folder.join("hook");
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|source| ChecksError {
                path: dir.clone(),
                source,
            })?;
        }
        std::fs::create_dir_all(&dir).map_err(|source| ChecksError {
            path: dir.clone(),
            source,
        })?;
        write(&hook.join(MODULE_FILE), &recorder_source())?;
        write(&hook.join("sitecustomize.py"), "import _xstack_checks\n")?;
        Ok(Collector {
            dir,
            hook,
            context,
            reported: HashSet::new(),
            recorded_pids: HashSet::new(),
            suspects: HashMap::new(),
            unrecorded: HashSet::new(),
            agent: None,
            own: HashSet::new(),
        })
    }

    /// The folder the agent's processes write into.
    pub fn records_dir(&self) -> &Path {
        &self.dir
    }

    /// The agent started as process `pid` (its terminal's child): that process, or the one
    /// bubblewrap starts for it, is the agent itself, not one of its runs.
    pub fn agent_started(&mut self, pid: i32) {
        self.agent = Some(pid);
    }

    /// Whether `host` (a pid as xstack sees it) is the agent's own process.
    fn is_agent(&self, host: i32) -> bool {
        let Some(agent) = self.agent else {
            return false;
        };
        host == agent
            || (parent_of(host) == Some(agent)
                && std::fs::read_to_string(format!("/proc/{agent}/comm"))
                    .is_ok_and(|comm| comm.trim() == "bwrap"))
    }

    /// The variables that turn the recorder on in the agent's processes: the records
    /// folder, and the hook first on PYTHONPATH (before `pythonpath`, the one it had).
    pub fn vars(&self, pythonpath: Option<&str>) -> Vec<(String, String)> {
        let hook = self.hook.display().to_string();
        let path = match pythonpath.filter(|p| !p.is_empty()) {
            Some(rest) => format!("{hook}:{rest}"),
            None => hook,
        };
        vec![
            (DIR_VAR.to_string(), self.dir.display().to_string()),
            ("PYTHONPATH".to_string(), path),
        ]
    }

    /// The runs of `phase` that ended since the last call. At the end of the agent's turn
    /// (`end_of_turn`), also the runs of repository code (port, source, probe) still going:
    /// each is ended (SIGTERM, then SIGKILL) and reported as ended by xstack (other Python
    /// processes, such as a server the agent keeps, go on and are reported when they end);
    /// one whose process is gone without an end record is reported with an unknown exit
    /// status; and the records read are removed.
    pub fn collect(&mut self, phase: u8, end_of_turn: bool) -> Vec<AgentRun> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|f| f.extension().is_some_and(|e| e == "jsonl"));
        let mut found: Vec<(f64, AgentRun)> = Vec::new();
        for file in files {
            if self.reported.contains(&file) || self.own.contains(&file) {
                continue;
            }
            let Some(recorded) = read_records(&file) else {
                continue;
            };
            self.recorded_pids.insert(recorded.start.pid);
            if recorded.end.is_none()
                && self
                    .host_pid(recorded.start.pid)
                    .is_some_and(|host| self.is_agent(host))
            {
                self.own.insert(file);
                continue;
            }
            let now = unix_now();
            let mut ended_by_xstack = false;
            let end = match recorded.end {
                Some(end) => Some(end),
                None if !end_of_turn => continue,
                None => {
                    let host = self
                        .host_pid(recorded.start.pid)
                        .filter(|pid| crate::reaper::alive(*pid));
                    let (target, _) = self.context.classify(
                        &recorded.start.argv,
                        Path::new(&recorded.start.cwd),
                        &[],
                    );
                    if host.is_some() && target == RunTarget::Other {
                        // Not a run of repository code (a model or tool server the agent
                        // keeps, an install): left to go on, reported when it ends.
                        continue;
                    }
                    if let Some(pid) = host {
                        crate::reaper::end_process(pid, END_GRACE);
                        ended_by_xstack = true;
                    }
                    // Its `end` line, when it wrote one as it went.
                    read_records(&file).and_then(|r| r.end)
                }
            };
            self.reported.insert(file.clone());
            let output = std::fs::read(file.with_extension("out"))
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let frameworks = end
                .as_ref()
                .map(|e| e.frameworks.clone())
                .unwrap_or_default();
            let (target, program) = self.context.classify(
                &recorded.start.argv,
                Path::new(&recorded.start.cwd),
                &frameworks,
            );
            let ended = end.as_ref().map_or(now, |e| e.t);
            found.push((
                recorded.start.t,
                AgentRun {
                    phase,
                    target,
                    program,
                    argv: recorded.start.argv,
                    cwd: recorded.start.cwd,
                    duration_s: ((ended - recorded.start.t).max(0.0) * 1000.0).round() / 1000.0,
                    exit_code: end.as_ref().filter(|_| !ended_by_xstack).map(|e| e.exit),
                    exception: end.as_ref().and_then(|e| e.exception.clone()),
                    frameworks,
                    metrics: self.context.metrics(&output),
                    reported_after_s: ((now - ended).max(0.0) * 1000.0).round() / 1000.0,
                    ended_by_xstack,
                },
            ));
        }
        found.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut runs: Vec<AgentRun> = found.into_iter().map(|(_, run)| run).collect();
        runs.extend(self.unrecorded_runs(phase));
        if end_of_turn {
            // Everything in them is reported (redacted, in the journal): the raw records,
            // which hold the processes' whole output, go; so do the agent's own, which are
            // never reported (a running agent writes on into its removed files).
            for file in self.reported.drain().chain(self.own.drain()) {
                remove_record(&file);
            }
        }
        runs
    }

    /// Removes the records folder and whatever is still in it (the records of a process the
    /// agent left going): the session is over, and nothing of the records stays in the run
    /// folder.
    pub fn remove(self) {
        if let Err(e) = std::fs::remove_dir_all(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove {}: {e}", self.dir.display());
        }
    }

    /// The agent's process that recorded itself as `pid`: one of xstack's descendants whose
    /// environment names this records folder and which is `pid` in its own PID namespace
    /// (an agent's sandbox may give it one: Codex's does). None when it is gone.
    fn host_pid(&self, pid: i32) -> Option<i32> {
        crate::reaper::descendants().into_iter().find(|host| {
            namespace_pids(*host).last() == Some(&pid) && has_variable(*host, DIR_VAR, &self.dir)
        })
    }

    /// Python processes among xstack's descendants whose environment names this records
    /// folder (the agent's, and only theirs) that have gone [`UNRECORDED_AFTER`] without a
    /// start record (started with `-S` or `-I`): each is reported once, as a run of unknown
    /// target and outcome.
    fn unrecorded_runs(&mut self, phase: u8) -> Vec<AgentRun> {
        let now = Instant::now();
        let mut runs = Vec::new();
        let living = crate::reaper::descendants();
        self.suspects.retain(|pid, _| living.contains(pid));
        for pid in living {
            if self.unrecorded.contains(&pid)
                || self.is_agent(pid)
                || namespace_pids(pid)
                    .iter()
                    .any(|p| self.recorded_pids.contains(p))
            {
                continue;
            }
            let Some(argv) = python_command_line(pid) else {
                continue;
            };
            if !has_variable(pid, DIR_VAR, &self.dir) {
                continue;
            }
            let since = *self.suspects.entry(pid).or_insert(now);
            if now.duration_since(since) < UNRECORDED_AFTER {
                continue;
            }
            self.suspects.remove(&pid);
            self.unrecorded.insert(pid);
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd"))
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let program = match what_runs(&argv, Path::new(&cwd)) {
                Runs::Script(path) => path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                Runs::Module(module) => format!("-m {module}"),
                Runs::Command => "-c".to_string(),
                Runs::Interpreter => "python".to_string(),
            };
            runs.push(AgentRun {
                phase,
                target: RunTarget::Unknown,
                program,
                argv,
                cwd,
                duration_s: 0.0,
                exit_code: None,
                exception: None,
                frameworks: Vec::new(),
                metrics: Vec::new(),
                reported_after_s: 0.0,
                ended_by_xstack: false,
            });
        }
        runs
    }
}

/// Removes a process's records: its `.jsonl` file and its `.out` file.
fn remove_record(file: &Path) {
    let _ = std::fs::remove_file(file.with_extension("out"));
    let _ = std::fs::remove_file(file);
}

/// The command line of process `pid` when it is a Python interpreter.
fn python_command_line(pid: i32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let argv: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let program = Path::new(argv.first()?)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    program.starts_with("python").then_some(argv)
}

/// The parent of process `pid`.
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: the command may hold spaces and parentheses.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Process `pid`'s numbers in each PID namespace it is in, outermost first (`NSpid` of
/// its status); `[pid]` where the kernel does not say.
fn namespace_pids(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("NSpid:"))?;
            let pids: Vec<i32> = line["NSpid:".len()..]
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect();
            (!pids.is_empty()).then_some(pids)
        })
        .unwrap_or_else(|| vec![pid])
}

/// Whether process `pid`'s environment sets `name` to `value` (a process of the agent's
/// has the records folder in it, whatever else it changed).
fn has_variable(pid: i32, name: &str, value: &Path) -> bool {
    let wanted = format!("{name}={}", value.display());
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|raw| raw.split(|b| *b == 0).any(|v| v == wanted.as_bytes()))
}

/// Seconds since the Unix epoch (the recorder's clock).
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A metric value in four significant decimals, trailing zeros cut.
fn shown(value: f64) -> String {
    let text = if value.abs() >= 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.4}")
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// One line for a run: `agent ran train.py (port, jax): exit 0 in 4.2 s; val_loss 1.91 ✓`.
pub fn describe(run: &AgentRun) -> String {
    let frameworks = if run.frameworks.is_empty() {
        String::new()
    } else {
        format!(", {}", run.frameworks.join("+"))
    };
    let ended = match (run.ended_by_xstack, run.exit_code) {
        (true, _) => "still running at the end of the turn: ended by xstack".to_string(),
        (false, Some(code)) => format!("exit {code}"),
        (false, None) => {
            "no exit status (a signal or the agent's process group ended it)".to_string()
        }
    };
    let mut line = format!(
        "agent ran {} ({}{frameworks}): {ended} after {:.1} s",
        run.program,
        run.target.as_str(),
        run.duration_s
    );
    if let Some(exception) = &run.exception {
        line.push_str(&format!(" ({exception})"));
    }
    for m in &run.metrics {
        line.push_str(&format!(
            "; {} {} {}",
            m.metric,
            shown(m.value),
            if m.within { "✓" } else { "✗" }
        ));
    }
    line
}

/// What the agent checked in one phase (`agent_checked` of the phase in `result.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// Runs of its port.
    pub port_runs: u32,
    /// The exit status of the last run of its port; None when unknown or none ran.
    pub last_port_exit: Option<i32>,
    /// The graded metrics the last run of its port printed.
    pub last_port_metrics: Vec<CheckedMetric>,
    /// Runs of the source.
    pub source_runs: u32,
    /// Runs of the parity probe.
    pub probe_runs: u32,
    /// Other Python processes.
    pub other_runs: u32,
    /// Python processes the recorder missed: what they ran is unknown, so with no run of
    /// the port recorded, whether the agent ran it is unknown too.
    #[serde(default)]
    pub unknown_runs: u32,
    /// Whether it ran both its port and the source, or the probe, in the phase.
    pub compared: bool,
    /// Seconds from the end of its last run to the end of its turn; None when it ran
    /// nothing (or the turn has not ended).
    pub since_last_run_s: Option<f64>,
}

impl Checked {
    /// The summary of `runs` (each with the session time it ended at) of a turn that ended
    /// at `turn_ended_at`, if it has.
    pub fn of(runs: &[(f64, AgentRun)], turn_ended_at: Option<f64>) -> Checked {
        let count = |target| runs.iter().filter(|(_, r)| r.target == target).count() as u32;
        let last_port = runs.iter().rev().find(|(_, r)| r.target == RunTarget::Port);
        let (port_runs, source_runs, probe_runs) = (
            count(RunTarget::Port),
            count(RunTarget::Source),
            count(RunTarget::Probe),
        );
        let since_last_run_s = match (turn_ended_at, runs.iter().map(|(t, _)| *t).reduce(f64::max))
        {
            (Some(end), Some(last)) => Some(((end - last).max(0.0) * 10.0).round() / 10.0),
            _ => None,
        };
        Checked {
            port_runs,
            last_port_exit: last_port.and_then(|(_, r)| r.exit_code),
            last_port_metrics: last_port
                .map(|(_, r)| r.metrics.clone())
                .unwrap_or_default(),
            source_runs,
            probe_runs,
            other_runs: count(RunTarget::Other),
            unknown_runs: count(RunTarget::Unknown),
            compared: probe_runs > 0 || (port_runs > 0 && source_runs > 0),
            since_last_run_s,
        }
    }

    /// One line for the Agent pane's title: `ran train.py 3× · last val_loss 1.91 ✓ ·
    /// source 1×`, `has run nothing`; with how long ago the last run ended (`now`, session
    /// time) once that is a minute or more.
    pub fn line(runs: &[(f64, AgentRun)], now: f64) -> String {
        let mut parts = Vec::new();
        let port: Vec<&AgentRun> = runs
            .iter()
            .map(|(_, r)| r)
            .filter(|r| r.target == RunTarget::Port)
            .collect();
        if let Some(last) = port.last() {
            let mut programs: Vec<&str> = port.iter().map(|r| r.program.as_str()).collect();
            programs.dedup();
            let name = if programs.len() == 1 {
                last.program.clone()
            } else {
                "its port".to_string()
            };
            parts.push(format!("ran {name} {}×", port.len()));
            match (last.metrics.first(), last.exit_code) {
                (Some(m), _) => parts.push(format!(
                    "last {} {} {}",
                    m.metric,
                    shown(m.value),
                    if m.within { "✓" } else { "✗" }
                )),
                (None, Some(0)) => parts.push("last printed no graded metric".to_string()),
                (None, Some(code)) => parts.push(format!("last exited {code}")),
                (None, None) => parts.push("last ended unknown".to_string()),
            }
        } else {
            parts.push("has not run its port".to_string());
        }
        let source = runs
            .iter()
            .filter(|(_, r)| r.target == RunTarget::Source)
            .count();
        if source > 0 {
            parts.push(format!("source {source}×"));
        }
        let probe = runs
            .iter()
            .filter(|(_, r)| r.target == RunTarget::Probe)
            .count();
        if probe > 0 {
            parts.push(format!("probe {probe}×"));
        }
        let unknown = runs
            .iter()
            .filter(|(_, r)| r.target == RunTarget::Unknown)
            .count();
        if unknown > 0 {
            parts.push(format!("{unknown} unrecorded"));
        }
        if let Some(last) = runs.iter().map(|(t, _)| *t).reduce(f64::max) {
            let ago = now - last;
            if ago >= 60.0 {
                parts.push(format!("last run {} min ago", (ago / 60.0).floor() as u64));
            }
        }
        parts.join(" · ")
    }
}

#[cfg(test)]
mod tests;

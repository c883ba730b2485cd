//! Running the probe: `[env].setup` then `[parity] command` in the source's clean copy (the
//! reference environment) and then in the port's verify copy (the target environment), each
//! confined as a local verify run is (`runner::confine` through the local runner: only the
//! copy writable, no network unless the task allows it, the runtime import audit installed)
//! and bounded by `[parity] timeout_s`. The source's archive is copied into the port's copy
//! as its `XSTACK_PARITY_IN`; both archives are kept in the plan's `out_dir`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::env::PythonEnv;
use crate::pty::PtySpec;
use crate::pty::supervise::{ChildEvent, Supervised};
use crate::run_script::RunScript;
use crate::runner::{Job, JobIntegrity, LocalRunner, Runner};
use crate::task::Task;

use super::{HELPER, HELPER_FILE, ParityReport, ParitySide, Tensor, compare, read_npz};

/// The folder, inside each side's copy, that holds the helper and the side's archives.
pub const PROBE_DIR: &str = ".xstack-parity";

/// How often a running side looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// One side of the probe.
#[derive(Debug, Clone)]
pub struct ProbeSide {
    /// The copy the probe runs in (made by the caller; the probe writes only there).
    pub dir: PathBuf,
    /// The side's environment (reference for the source, target for the port).
    pub env: Option<PythonEnv>,
    /// Top-level modules the runtime audit reports on this side (nothing on the source's).
    pub forbid: Vec<String>,
}

/// What to run on both sides.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    /// `[env].setup`, run before the command in the same shell.
    pub setup: Option<String>,
    /// `[parity] command`.
    pub command: String,
    /// `[parity] timeout_s`, for each side.
    pub timeout: Duration,
    /// `[parity] rtol`.
    pub rtol: f64,
    /// `[parity] atol`.
    pub atol: f64,
    /// `[run] network`.
    pub network: bool,
    /// `XSTACK_TASK` of both sides.
    pub task_id: String,
    /// `XSTACK_SEED` of both sides.
    pub seed: u64,
    /// `XSTACK_PHASE` of both sides: the session's phase, None outside a session.
    pub phase: Option<u8>,
    /// The source's side.
    pub source: ProbeSide,
    /// The port's side.
    pub port: ProbeSide,
    /// Where both archives and the audit's files are kept (outside both copies).
    pub out_dir: PathBuf,
    /// The probe's terminal size.
    pub size: (u16, u16),
}

impl ProbePlan {
    /// The plan of `task`'s `[parity]` section (None without one): `[env].setup`, the command,
    /// its tolerances and timeout, and `[run] network`; both sides run with `seed` (and, in a
    /// session, `phase`).
    pub fn for_task(
        task: &Task,
        source: ProbeSide,
        port: ProbeSide,
        seed: u64,
        phase: Option<u8>,
        out_dir: PathBuf,
        size: (u16, u16),
    ) -> Option<ProbePlan> {
        let parity = task.spec.parity.as_ref()?;
        Some(ProbePlan {
            setup: task.spec.env.setup.clone(),
            command: parity.command.clone(),
            timeout: Duration::from_secs(parity.timeout_s),
            rtol: parity.rtol,
            atol: parity.atol,
            network: task.spec.run.network,
            task_id: task.spec.id.clone(),
            seed,
            phase,
            source,
            port,
            out_dir,
            size,
        })
    }
}

/// How one side's run ended.
struct SideEnd {
    /// Its ending in words when it failed (`exit 1: ModuleNotFoundError: …`), else None.
    failure: Option<String>,
    /// Its archive, when it wrote one.
    archive: Option<PathBuf>,
}

/// What the probe tells as it runs: a side starts, or the running side wrote output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeProgress<'a> {
    /// A side starts; its output follows.
    Started(ParitySide),
    /// Output of the side that runs.
    Output(&'a str),
}

/// Runs the source's side, then the port's, and compares what they recorded; `on_progress`
/// hears each side start and receives its output as it arrives; when `cancel` is set the
/// running side is ended. Whatever happens is in the report: a side that could not start,
/// crashed, timed out, was cancelled or wrote no archive is its `error`.
pub async fn run_probe(
    plan: &ProbePlan,
    cancel: &AtomicBool,
    on_progress: &mut dyn FnMut(ProbeProgress<'_>),
) -> ParityReport {
    // A port without the script the command runs would fail only after the source's side,
    // which can take minutes: it is said before anything runs.
    if let Some(missing) = missing_port_script(plan) {
        return ParityReport::failed(missing);
    }
    on_progress(ProbeProgress::Started(ParitySide::Source));
    let source = run_source(plan, cancel, &mut |text| {
        on_progress(ProbeProgress::Output(text));
    })
    .await;
    match source {
        Ok(source) => {
            on_progress(ProbeProgress::Started(ParitySide::Port));
            run_port(plan, &source, cancel, &mut |text| {
                on_progress(ProbeProgress::Output(text));
            })
            .await
        }
        Err(report) => report,
    }
}

/// Why the port's side cannot run, when a word of `[parity] command` names a Python script or
/// notebook by a relative path (`python probe.py`) that the port's copy does not hold: the
/// port's probe is the port's own file.
fn missing_port_script(plan: &ProbePlan) -> Option<String> {
    let words = shell_words::split(&plan.command).ok()?;
    words
        .iter()
        .filter(|w| w.ends_with(".py") || w.ends_with(".ipynb"))
        .filter(|w| !Path::new(w.as_str()).is_absolute())
        .find(|w| !plan.port.dir.join(w.as_str()).is_file())
        .map(|w| {
            format!(
                "the port has no {w}, which `[parity] command` (`{}`) runs on its side",
                plan.command
            )
        })
}

/// What the source's side recorded: its archive (kept in the plan's `out_dir`) and tensors.
#[derive(Debug, Clone)]
pub struct SourceRecord {
    /// The archive.
    pub archive: PathBuf,
    /// Its tensors, in order.
    pub tensors: Vec<Tensor>,
}

/// The source's side alone; Err is the report of a source that could not run, failed or
/// wrote no archive. One source record serves any number of ports ([`run_port`]).
pub async fn run_source(
    plan: &ProbePlan,
    cancel: &AtomicBool,
    on_output: &mut dyn FnMut(&str),
) -> Result<SourceRecord, ParityReport> {
    std::fs::create_dir_all(&plan.out_dir).map_err(|e| {
        ParityReport::failed(format!("cannot create {}: {e}", plan.out_dir.display()))
    })?;
    let source = run_side(plan, &plan.source, "source", None, cancel, on_output)
        .await
        .map_err(ParityReport::failed)?;
    if let Some(failure) = source.failure {
        return Err(ParityReport::failed(format!(
            "the source's probe {failure}"
        )));
    }
    let Some(archive) = source.archive else {
        return Err(ParityReport::failed(
            "the source's probe wrote no file (XSTACK_PARITY_OUT)".to_string(),
        ));
    };
    let tensors = read_npz(&archive)
        .map_err(|e| ParityReport::failed(format!("the source's archive: {e}")))?;
    Ok(SourceRecord { archive, tensors })
}

/// The port's side (in `plan.port`), given the source's record, and the comparison.
pub async fn run_port(
    plan: &ProbePlan,
    source: &SourceRecord,
    cancel: &AtomicBool,
    on_output: &mut dyn FnMut(&str),
) -> ParityReport {
    if let Some(missing) = missing_port_script(plan) {
        return ParityReport::failed(missing);
    }
    let port = match run_side(
        plan,
        &plan.port,
        "port",
        Some(&source.archive),
        cancel,
        on_output,
    )
    .await
    {
        Ok(end) => end,
        Err(e) => return ParityReport::failed(e),
    };
    let Some(port_npz) = port.archive else {
        let why = port.failure.unwrap_or_else(|| "ran".to_string());
        return ParityReport::failed(format!(
            "the port's probe {why} and wrote no file (XSTACK_PARITY_OUT)"
        ));
    };
    let port_tensors = match read_npz(&port_npz) {
        Ok(t) => t,
        Err(e) => return ParityReport::failed(format!("the port's archive: {e}")),
    };
    let mut report = compare(&source.tensors, &port_tensors, plan.rtol, plan.atol);
    if let Some(failure) = port.failure {
        // What it wrote before it failed is still compared: it shows how far it got.
        report.error = Some(format!("the port's probe {failure}"));
        report.passed = false;
    }
    report
}

/// Runs one side in its copy; Err when it could not be started at all.
async fn run_side(
    plan: &ProbePlan,
    side: &ProbeSide,
    label: &str,
    input: Option<&Path>,
    cancel: &AtomicBool,
    on_output: &mut dyn FnMut(&str),
) -> Result<SideEnd, String> {
    let probe_dir = side.dir.join(PROBE_DIR);
    let lib = probe_dir.join("lib");
    std::fs::create_dir_all(&lib)
        .and_then(|()| std::fs::write(lib.join(HELPER_FILE), HELPER))
        .map_err(|e| format!("cannot write the parity helper into {}: {e}", lib.display()))?;
    let out = probe_dir.join(format!("{label}.npz"));
    let _ = std::fs::remove_file(&out);
    let run = RunScript {
        setup: plan.setup.as_deref(),
        command: &plan.command,
        task_id: &plan.task_id,
        seed: plan.seed,
        phase: plan.phase,
    };
    let mut vars = run.vars();
    vars.push(("XSTACK_PARITY_OUT".to_string(), out.display().to_string()));
    vars.push(("PYTHONPATH".to_string(), lib.display().to_string()));
    if let Some(input) = input {
        let copied = probe_dir.join("source.npz");
        std::fs::copy(input, &copied)
            .map_err(|e| format!("cannot copy the source's archive into the port's copy: {e}"))?;
        vars.push(("XSTACK_PARITY_IN".to_string(), copied.display().to_string()));
    }
    let job = Job {
        run_id: format!("parity-{label}"),
        packages: Vec::new(),
        script: run.script(),
        vars,
        local_env: side.env.clone(),
        integrity: JobIntegrity {
            network: plan.network,
            audit_dir: Some(plan.out_dir.join(format!("audit-{label}"))),
            forbid: side.forbid.clone(),
            protected: Vec::new(),
        },
    };
    let launch = LocalRunner
        .stage(&job, &side.dir)
        .map_err(|e| format!("cannot set up the {label}'s probe: {e}"))?;
    let pty = PtySpec {
        argv: launch.argv,
        cwd: launch.cwd,
        env: launch.env,
        env_remove: Vec::new(),
        cols: plan.size.0,
        rows: plan.size.1,
    };
    let mut child = Supervised::spawn(&pty, Some(plan.timeout))
        .map_err(|e| format!("cannot start the {label}'s probe: {e}"))?;
    let mut output = String::new();
    let mut cancelled = false;
    let exit = loop {
        tokio::select! {
            event = child.next() => match event {
                ChildEvent::Output { text, .. } => {
                    output.push_str(&text);
                    on_output(&text);
                }
                ChildEvent::TimedOut => child.terminate().await,
                ChildEvent::Finished(exit) => break exit,
            },
            () = tokio::time::sleep(CANCEL_POLL), if !cancelled => {
                if cancel.load(Ordering::Relaxed) {
                    cancelled = true;
                    child.terminate().await;
                }
            }
        }
    };
    let timed_out = child.timed_out();
    let last = crate::metrics::plain_lines(&output)
        .into_iter()
        .rev()
        .map(|l| l.trim().to_string())
        .find(|l| !l.is_empty())
        .unwrap_or_else(|| "no output".to_string());
    let failure = match (timed_out, exit.code) {
        _ if cancelled => Some("was ended: the session was aborted".to_string()),
        (true, _) => Some(format!("timed out after {} s", plan.timeout.as_secs())),
        (false, Some(0)) => None,
        (false, Some(code)) => Some(format!("failed (exit {code}): {last}")),
        (false, None) => Some(format!("was killed by a signal: {last}")),
    };
    let archive = if out.is_file() {
        let kept = plan.out_dir.join(format!("{label}.npz"));
        std::fs::copy(&out, &kept).map_err(|e| format!("cannot keep {}: {e}", out.display()))?;
        Some(kept)
    } else {
        None
    };
    Ok(SideEnd { failure, archive })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(command: &str, source: &Path, port: &Path) -> ProbePlan {
        let side = |dir: &Path| ProbeSide {
            dir: dir.to_path_buf(),
            env: None,
            forbid: Vec::new(),
        };
        ProbePlan {
            setup: None,
            command: command.to_string(),
            timeout: Duration::from_secs(60),
            rtol: 0.0,
            atol: 0.0,
            network: false,
            task_id: "t".to_string(),
            seed: 0,
            phase: None,
            source: side(source),
            port: side(port),
            out_dir: source.join("out"),
            size: (80, 24),
        }
    }

    #[test]
    fn a_port_without_the_probe_script_is_reported_before_the_source_runs() {
        let source = tempfile::tempdir().unwrap();
        let port = tempfile::tempdir().unwrap();
        std::fs::write(source.path().join("probe.py"), "raise SystemExit(1)\n").unwrap();
        let plan = plan("python probe.py --steps 2", source.path(), port.path());
        let mut started = Vec::new();
        let report = crate::process::runtime(crate::process::RuntimeThreads::CallingThread)
            .unwrap()
            .block_on(run_probe(&plan, &AtomicBool::new(false), &mut |p| {
                if let ProbeProgress::Started(side) = p {
                    started.push(side);
                }
            }));
        assert_eq!(
            report.error.as_deref(),
            Some(
                "the port has no probe.py, which `[parity] command` (`python probe.py --steps 2`) runs on its side"
            )
        );
        assert!(started.is_empty(), "{started:?}");
        assert!(!source.path().join(PROBE_DIR).exists(), "the source ran");
    }

    #[test]
    fn only_relative_scripts_the_port_lacks_count() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tools")).unwrap();
        std::fs::write(dir.path().join("tools/probe.py"), "").unwrap();
        for (command, missing) in [
            ("python tools/probe.py", false),
            ("python -c 'import probe'", false),
            ("python /opt/probe.py", false),
            ("python 'tools/other probe.py'", true),
            ("jupyter nbconvert --execute probe.ipynb", true),
            ("python probe.py", true),
        ] {
            let found = missing_port_script(&plan(command, dir.path(), dir.path()));
            assert_eq!(found.is_some(), missing, "{command}: {found:?}");
        }
    }
}

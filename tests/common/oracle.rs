//! The checks of a bundled task's oracle, demo and source, shared by `tests/oracles.rs` (the
//! suite: every task, each at the depth `docs/TESTING.md` gives it) and
//! `tests/catalog.rs` (the catalog's full runs, `scripts/catalog`).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use xstack::metrics::{Extractor, MetricStream, Point, parse_log, reduce};
use xstack::seeds::{RunPlan, run_seed};
use xstack::task::Task;

use super::{only_run_dir, oracle_into, result, root, run, text, tree_hash};

/// How [`check_task_with`] shows that the oracle passes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum OracleRun {
    /// `xstack grade` of the oracle.
    Graded,
    /// The scripted demo, headless: phase 1 fails as a `fidelity_gap` with its criterion
    /// outside the tolerance, and phase 2 passes on a workspace that is the oracle file for
    /// file (so one run shows both, where a run takes minutes).
    ByDemo,
}

/// Whether [`check_task_with`] runs the PyTorch source itself.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SourceRun {
    /// Here.
    Here,
    /// Not here: another test's run of it is checked (`tests/claims.rs` for SGC, whose
    /// `init` runs it anyway; `tests/catalog.rs` for the sources that run for minutes).
    Elsewhere,
}

/// The task `id` under `tasks/`.
pub fn bundled(id: &str) -> Task {
    Task::load(&root().join("tasks").join(id)).unwrap()
}

/// The oracle passes (graded, or through the demo), the untouched source is a `bypass`, and
/// (with [`SourceRun::Here`]) the source in its reference environment lands inside the
/// task's tolerance; the task folder is not written.
pub fn check_task_with(id: &str, source_run: SourceRun, oracle_run: OracleRun) {
    let task = bundled(id);
    let before = tree_hash(&task.dir);
    let oracle = tempfile::tempdir().unwrap();
    oracle_into(&task.dir, oracle.path());
    if oracle_run == OracleRun::ByDemo {
        check_demo(id, &task, oracle.path());
    } else {
        grade_oracle(id, &task.dir, oracle.path());
    }
    check_source_is_a_bypass(id, &task);
    if source_run == SourceRun::Here {
        check_source_within_tolerance(id, &task);
    }
    assert_eq!(
        tree_hash(&task.dir),
        before,
        "{id}: the task folder was written"
    );
}

/// `xstack grade` of the task's untouched source, as the agent's workspace starts (less what
/// `[source] exclude` leaves out), is a `bypass` (it is still in the source's framework).
pub fn check_source_is_a_bypass(id: &str, task: &Task) {
    let runs = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let source = task.source_path().unwrap();
    let repo = if task.spec.source.exclude.is_empty() {
        source.to_path_buf()
    } else {
        let copy = workspace.path().join("repo");
        xstack::workspace::copy_source(source, &copy, &task.spec.source.exclude).unwrap();
        copy
    };
    let out = run(&[
        "grade",
        task.dir.to_str().unwrap(),
        "--repo",
        repo.to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{id}: {}", text(&out));
    assert_eq!(
        result(&only_run_dir(runs.path()))["phases"][0]["failure"],
        "bypass",
        "{id}"
    );
}

/// The source, run once (`XSTACK_SEED=0`) in its reference environment, lands
/// inside every criterion's tolerance.
pub fn check_source_within_tolerance(id: &str, task: &Task) {
    let cache = xstack::env::cache_dir();
    let usage = xstack::env::store::Usage::of(&task.spec.id, xstack::env::Side::Reference);
    let env = xstack::env::ensure(
        &cache,
        &task.spec.env.reference_packages,
        &usage,
        &mut |_| {},
    )
    .unwrap();
    let plan = RunPlan {
        source: task.source_path().unwrap().to_path_buf(),
        setup: task.spec.env.setup.clone(),
        command: task.spec.run.command.clone(),
        timeout: Some(Duration::from_secs(task.spec.run.timeout_s)),
        env,
        task_id: id.to_string(),
        size: (120, 40),
    };
    let scratch = tempfile::tempdir().unwrap();
    let seed_run = run_seed(&plan, 0, scratch.path(), &mut |_| {}).unwrap();
    assert!(
        seed_run.succeeded(),
        "{id}: the source run failed:\n{}",
        seed_run.tail(20)
    );
    assert_within_tolerance(id, task, &seed_run.output);
}

/// `xstack grade` of the oracle in `oracle` passes.
pub fn grade_oracle(id: &str, dir: &Path, oracle: &Path) {
    let runs = tempfile::tempdir().unwrap();
    let out = run(&[
        "grade",
        dir.to_str().unwrap(),
        "--repo",
        oracle.to_str().unwrap(),
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{id}: the oracle fails:\n{}",
        text(&out)
    );
}

/// The files under `root`, xstack's own `.xstack/` and Python's caches aside, with their
/// bytes, sorted by path.
pub fn files_of(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".xstack" && e.file_name() != "__pycache__")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap().display().to_string();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// The task's scripted demo, headless: phase 1 is a `fidelity_gap` whose graded value lies
/// outside the tolerance, phase 2 passes, and the workspace phase 2 passed on is `oracle`
/// file for file (xstack's own `.xstack/` folder aside).
pub fn check_demo(id: &str, task: &Task, oracle: &Path) {
    let runs = tempfile::tempdir().unwrap();
    let trajectory = task.demo_trajectory().unwrap();
    let out = run(&[
        "run",
        task.dir.to_str().unwrap(),
        "--headless",
        "--agent",
        &format!("script:{}", trajectory.display()),
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{id}: the demo:\n{printed}");
    let dir = only_run_dir(runs.path());
    let r = result(&dir);
    let first = &r["phases"][0];
    assert_eq!(first["verdict"], "fail", "{id}: {r:#}");
    assert_eq!(first["failure"], "fidelity_gap", "{id}: {r:#}");
    let outside = first["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .count();
    assert!(outside >= 1, "{id}: phase 1 failed no criterion: {r:#}");
    assert_eq!(r["phases"][1]["verdict"], "pass", "{id}: {r:#}");
    let workspace = files_of(&dir.join("workspace"));
    let expected = files_of(oracle);
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&workspace),
        names(&expected),
        "{id}: the demo's files"
    );
    for ((name, got), (_, want)) in workspace.iter().zip(&expected) {
        assert!(got == want, "{id}: the demo's {name} is not the oracle's");
    }
}

/// Every criterion of `task`, read from a run's `output`, is inside its tolerance.
pub fn assert_within_tolerance(id: &str, task: &Task, output: &str) {
    let series = parse_log(task, output);
    for c in &task.spec.criteria {
        let points = &series.iter().find(|(m, _)| m == &c.metric).unwrap().1;
        let value =
            reduce(points, c.reduce).unwrap_or_else(|| panic!("{id}: {} never printed", c.metric));
        assert!(
            c.judge(value).met,
            "{id}: the source's {} = {value} is outside {} ± {} ({})",
            c.metric,
            c.published,
            c.tolerance,
            c.direction.as_str()
        );
    }
}

/// The first `count` points of `metric` in the task's `reference.log`.
pub fn reference_points(task: &Task, metric: &str, count: usize) -> Vec<Point> {
    let log = std::fs::read_to_string(task.dir.join("reference.log")).unwrap();
    let series = parse_log(task, &log);
    let points = &series.iter().find(|(m, _)| m == metric).unwrap().1;
    assert!(
        points.len() >= count,
        "{}: reference.log has {} points of {metric}, fewer than {count}",
        task.spec.id,
        points.len()
    );
    points[..count].to_vec()
}

/// The port in `port` run as verify runs it (`[env] setup`, then the command, in the task's
/// target environment, `XSTACK_SEED=0`) until it has printed `count` points of `metric`, then
/// stopped: those points, and what it printed. A run that ends first, or that passes the
/// task's timeout, fails the test with its output.
pub fn first_points(task: &Task, port: &Path, metric: &str, count: usize) -> (Vec<Point>, String) {
    let id = &task.spec.id;
    let cache = xstack::env::cache_dir();
    let usage = xstack::env::store::Usage::of(id, xstack::env::Side::Target);
    let env = xstack::env::ensure(&cache, &task.spec.env.packages, &usage, &mut |_| {})
        .unwrap()
        .unwrap_or_else(|| panic!("{id}: the task has no target environment"));
    let script = format!(
        "set -e\nexec 2>&1\n{}\n{}\n",
        task.spec.env.setup.as_deref().unwrap_or(""),
        task.spec.run.command
    );
    let mut child = {
        use std::os::unix::process::CommandExt;
        Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(port)
            .envs(env.vars())
            .env("XSTACK_SEED", "0")
            .env("XSTACK_TASK", id)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap()
    };
    let group = i32::try_from(child.id()).unwrap();
    // Past the task's timeout the run is ended, and the test fails below with its output.
    let finished = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let finished = Arc::clone(&finished);
        let deadline = Instant::now() + Duration::from_secs(task.spec.run.timeout_s);
        std::thread::spawn(move || {
            while !finished.load(Ordering::Relaxed) {
                if Instant::now() >= deadline {
                    // SAFETY: signals the run's own process group, made above.
                    unsafe { libc::kill(-group, libc::SIGKILL) };
                    return;
                }
                std::thread::park_timeout(Duration::from_millis(200));
            }
        })
    };
    let mut stream = MetricStream::new(Extractor::for_task(task));
    let index = stream.names().iter().position(|n| n == metric).unwrap();
    let mut points = Vec::new();
    let mut printed = String::new();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while points.len() < count {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        printed.push_str(&line);
        points.extend(
            stream
                .feed(&line)
                .into_iter()
                .filter(|(i, _)| *i == index)
                .map(|(_, p)| p),
        );
    }
    // SAFETY: signals the run's own process group, made above.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.wait();
    finished.store(true, Ordering::Relaxed);
    watchdog.thread().unpark();
    watchdog.join().unwrap();
    assert!(
        points.len() >= count,
        "{id}: the oracle printed {} points of {metric} before it ended, not {count}:\n{printed}",
        points.len()
    );
    points.truncate(count);
    (points, printed)
}

/// The oracle's first `count` points of `metric` are at the reference log's steps, each
/// within `band` of the source's value there: the port runs in its environment, prints
/// what the task reads, and learns as the source does from the start.
pub fn check_oracle_first_steps(id: &str, metric: &str, count: usize, band: f64) {
    let task = bundled(id);
    let before = tree_hash(&task.dir);
    let reference = reference_points(&task, metric, count);
    let oracle = tempfile::tempdir().unwrap();
    oracle_into(&task.dir, oracle.path());
    let (points, printed) = first_points(&task, oracle.path(), metric, count);
    let distances = distances(id, "oracle", metric, &points, &reference, &printed);
    assert!(
        distances.iter().all(|d| *d <= band),
        "{id}: the oracle's {metric} is not within {band} of the source's at every step"
    );
    assert_eq!(
        tree_hash(&task.dir),
        before,
        "{id}: the task folder was written"
    );
}

/// The demo's phase-1 port (the oracle with `demo/phase1/` laid over it) strays more than
/// `band` from the source's `metric` within its first `count` points: its mistake shows from
/// the start, as a user watching the Metrics pane sees it.
pub fn check_demo_phase1_strays_within_first_steps(
    id: &str,
    metric: &str,
    count: usize,
    band: f64,
) {
    let task = bundled(id);
    let reference = reference_points(&task, metric, count);
    let port = tempfile::tempdir().unwrap();
    oracle_into(&task.dir, port.path());
    super::overlay(&task.dir.join("demo/phase1"), port.path());
    let (points, printed) = first_points(&task, port.path(), metric, count);
    let distances = distances(id, "demo's phase 1", metric, &points, &reference, &printed);
    assert!(
        distances.iter().any(|d| *d > band),
        "{id}: the demo's phase-1 {metric} stays within {band} of the source's for {count} points"
    );
}

/// The distance of each of `points` from the reference's at the same step (the steps must
/// be the same), each printed as the test's own record of what it measured.
fn distances(
    id: &str,
    who: &str,
    metric: &str,
    points: &[Point],
    reference: &[Point],
    printed: &str,
) -> Vec<f64> {
    let steps = |p: &[Point]| p.iter().map(|p| p.step).collect::<Vec<_>>();
    assert_eq!(steps(points), steps(reference), "{id}: {printed}");
    points
        .iter()
        .zip(reference)
        .map(|(got, want)| {
            let distance = (got.value - want.value).abs();
            eprintln!(
                "{id}: {who}'s {metric} at step {:?}: {} (source {}, distance {distance:.4})",
                got.step, got.value, want.value
            );
            distance
        })
        .collect()
}

//! The numeric parity probe of a bundled task (SPEC §3a), shared by `tests/parity.rs` (the
//! suite) and `tests/catalog.rs` (the probes that take minutes): the demo's phase 1 diverges
//! first where its pitfall shows, and the oracle matches every tensor.

use std::path::Path;

use super::{overlay, root, tree_hash};

/// The port made of the task's source with `layers` (folders of the task; `solution`: the
/// oracle's folders, `[solution] base` first) laid over it.
pub fn port_of(task: &Path, layers: &[&str]) -> tempfile::TempDir {
    let loaded = xstack::task::Task::load(task).unwrap();
    let port = tempfile::tempdir().unwrap();
    overlay(loaded.source_path().unwrap(), port.path());
    for layer in layers {
        if *layer == "solution" {
            for folder in loaded.solution_layers() {
                overlay(&folder, port.path());
            }
        } else {
            overlay(&task.join(layer), port.path());
        }
    }
    port
}

/// What the demo's phase-1 port is and where its probe diverges first.
pub struct Phase1 {
    /// The task's folders laid over `repo/`, in order, to make the port.
    pub layers: &'static [&'static str],
    /// The first divergent tensor.
    pub first: &'static str,
    /// Where the port records it (file, line); None: anywhere in `probe.py`.
    pub at: Option<(&'static str, u32)>,
    /// Its largest absolute error, when the test pins it (an integer tensor's is exact).
    pub max_abs: Option<f64>,
}

/// A demo whose phase 1 writes `demo/phase1/` and diverges first at `first`, which its
/// `probe.py` records.
pub fn phase1(first: &'static str) -> Phase1 {
    Phase1 {
        layers: &["demo/phase1"],
        first,
        at: None,
        max_abs: None,
    }
}

/// Runs the task's probe in its source once, then in the demo's phase-1 port and in the
/// oracle (the library's `run_source` and `run_port`, as `xstack parity` runs them, sharing
/// one source run): the demo diverges first at `expected`, every tensor before it matching,
/// the oracle matches every tensor, and the task folder is not written.
pub fn check_bundled(id: &str, demo: Phase1) {
    let expected = demo.first;
    use std::sync::atomic::AtomicBool;
    use xstack::parity::{ProbePlan, ProbeSide, run_port, run_source};

    let dir = root().join("tasks").join(id);
    let before = tree_hash(&dir);
    let task = xstack::task::Task::load(&dir).unwrap();
    let cache = xstack::env::cache_dir();
    let usage = |side| xstack::env::store::Usage::of(&task.spec.id, side);
    let reference = xstack::env::ensure(
        &cache,
        &task.spec.env.reference_packages,
        &usage(xstack::env::Side::Reference),
        &mut |_| {},
    )
    .unwrap();
    let target = xstack::env::ensure(
        &cache,
        &task.spec.env.packages,
        &usage(xstack::env::Side::Target),
        &mut |_| {},
    )
    .unwrap();
    xstack::grade::audit::install(&target.as_ref().unwrap().dir).unwrap();
    let source_dir = task.source_path().unwrap().to_path_buf();
    let source_before = tree_hash(&source_dir);
    let scratch = tempfile::tempdir().unwrap();
    let source_copy = scratch.path().join("source");
    let layers = task.parity_source_layers(&source_dir);
    xstack::workspace::copy_layers(&layers, &source_copy).unwrap();
    let phase1 = port_of(&dir, demo.layers);
    let oracle = port_of(&dir, &["solution"]);
    let mut plan = ProbePlan::for_task(
        &task,
        ProbeSide {
            dir: source_copy,
            env: reference,
            forbid: Vec::new(),
        },
        ProbeSide {
            dir: phase1.path().to_path_buf(),
            env: target,
            forbid: task.spec.integrity.forbid_imports.clone(),
        },
        0,
        None,
        scratch.path().join("out"),
        (120, 36),
    )
    .unwrap();
    let runtime = xstack::process::runtime(xstack::process::RuntimeThreads::CallingThread).unwrap();
    let cancel = AtomicBool::new(false);
    let mut output = String::new();
    let source = runtime
        .block_on(run_source(&plan, &cancel, &mut |t| output.push_str(t)))
        .unwrap_or_else(|report| panic!("{id}: {report:?}\n{output}"));

    let report = runtime.block_on(run_port(&plan, &source, &cancel, &mut |t| {
        output.push_str(t)
    }));
    let text = xstack::parity::render_text(&report);
    assert_eq!(
        report.error, None,
        "{id}: the demo's phase 1:\n{text}\n{output}"
    );
    let first = report.first_divergent.as_ref().unwrap();
    assert_eq!(first.name, expected, "{id}:\n{text}");
    let at = report
        .tensors
        .iter()
        .position(|t| t.name == expected)
        .unwrap();
    assert!(
        report.tensors[..at].iter().all(|t| t.passed),
        "{id}: a tensor before {expected} fails:\n{text}"
    );
    if let Some(max_abs) = demo.max_abs {
        assert_eq!(first.max_abs, Some(max_abs), "{id}:\n{text}");
    }
    let location = report.tensors[at].port_location.as_ref().unwrap();
    match demo.at {
        None => assert_eq!(location.file, "probe.py", "{id}: where:\n{text}"),
        Some((file, line)) => assert_eq!(
            (location.file.as_str(), location.line),
            (file, line),
            "{id}: where the port computes it:\n{text}"
        ),
    }

    plan.port.dir = oracle.path().to_path_buf();
    let report = runtime.block_on(run_port(&plan, &source, &cancel, &mut |t| {
        output.push_str(t)
    }));
    let text = xstack::parity::render_text(&report);
    assert!(report.passed, "{id}: the oracle:\n{text}\n{output}");
    assert_eq!(report.compared, source.tensors.len(), "{id}:\n{text}");
    assert_eq!(tree_hash(&dir), before, "{id}: the task folder was written");
    assert_eq!(
        tree_hash(&source_dir),
        source_before,
        "{id}: the source was written"
    );
}

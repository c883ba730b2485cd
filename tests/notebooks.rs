//! Notebook tasks end to end (docs/TASKS.md, "Notebook tasks"): the test task
//! `tests/tasks/notebook-steps` runs its notebook in a real kernel, in a real PTY, in the
//! environment xstack builds with the notebook runner added.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::Value;

const TASK: &str = "tests/tasks/notebook-steps";

/// The time (seconds into the session) of the first event of `kind` whose text holds
/// `needle`.
fn first_time(events: &[Value], kind: &str, needle: &str) -> f64 {
    events
        .iter()
        .find(|e| e["type"] == kind && e["text"].as_str().is_some_and(|t| t.contains(needle)))
        .and_then(|e| e["t"].as_f64())
        .unwrap_or_else(|| panic!("no {kind} event holds `{needle}`"))
}

#[test]
fn a_notebook_reaches_the_run_log_cell_by_cell_and_its_port_passes() {
    let task_dir = root().join(TASK);
    let before = tree_hash(&task_dir);
    let (code, dir, out, _runs) = run_scripted(TASK, "pass");
    assert_eq!(code, 0, "{out}");
    let r = result(&dir);
    assert_eq!(r["passed_in_phase"], 1, "{r}");
    assert_eq!(r["phases"][0]["criteria"][0]["value"], 0.015625);
    assert!(
        out.contains("run: python -m _xstack_notebook train.ipynb"),
        "{out}"
    );
    // The first cells' output was recorded while the notebook still ran: two seconds (the
    // pause in cell 3) before the last cell's, and before the run ended.
    let events = journal_events(&dir);
    let first_steps = first_time(&events, "run_output", "step 3 loss 0.125000");
    let last_cell = first_time(&events, "run_output", "final loss 0.015625");
    let ended = events
        .iter()
        .find(|e| e["type"] == "run_exited")
        .and_then(|e| e["t"].as_f64())
        .unwrap();
    assert!(
        last_cell - first_steps >= 1.5 && ended - first_steps >= 1.5,
        "cell 3's output at {first_steps} s, cell 5's at {last_cell} s, the end at {ended} s"
    );
    let headers: Vec<f64> = (1..=4)
        .map(|n| {
            first_time(
                &events,
                "run_output",
                &format!("── train.ipynb#cell={n} ──"),
            )
        })
        .collect();
    assert!(headers.is_sorted(), "{headers:?}");
    assert_eq!(tree_hash(&task_dir), before, "the task folder was written");
}

#[test]
fn a_cell_that_raises_is_a_crash_that_names_the_cell() {
    let (code, dir, out, _runs) = run_scripted(TASK, "crash");
    assert_eq!(code, 1, "{out}");
    let r = result(&dir);
    let phase = &r["phases"][0];
    assert_eq!(phase["failure"], "crash", "{phase}");
    assert!(
        phase["findings"].as_array().unwrap().iter().any(|f| f
            == "the run exited with status 1: train.ipynb#cell=2 raised ZeroDivisionError: division by zero"),
        "{phase}"
    );
    // What the cell printed before it raised is in the run log; what came after it is not.
    let journal = journal_text(&dir);
    assert!(journal.contains("step 3 loss 0.125000"), "{journal}");
    assert!(!journal.contains("step 4 loss"), "{journal}");
}

#[test]
fn a_cell_committed_with_the_error_it_raises_is_run_past() {
    let (code, dir, out, _runs) = run_scripted(TASK, "shown_error");
    assert_eq!(code, 0, "{out}");
    let r = result(&dir);
    assert_eq!(r["passed_in_phase"], 1, "{r}");
    assert_eq!(r["phases"][0]["criteria"][0]["value"], 0.015625);
    let journal = journal_text(&dir);
    assert!(
        journal.contains(
            "train.ipynb#cell=2: ZeroDivisionError, as in its committed output; going on"
        ),
        "{journal}"
    );
    assert!(journal.contains("final loss 0.015625"), "{journal}");
}

/// `notebook` with its cell 3 (the pause) replaced by a cell that raises, as the lecture
/// sketch a notebook keeps beside its experiment does.
fn with_a_raising_cell_3(notebook: &std::path::Path) {
    let mut nb: Value = serde_json::from_str(&std::fs::read_to_string(notebook).unwrap()).unwrap();
    nb["cells"][3]["source"] = Value::from("raise IndexError('a sketch for 32 examples')");
    std::fs::write(notebook, serde_json::to_string(&nb).unwrap()).unwrap();
}

/// `[run] cells` leaves out a cell that raises: the run log says so in the cell's place, the
/// cells after it run in the same kernel (the loss carries over), and the port passes.
#[test]
fn run_cells_leave_out_a_raising_cell_and_the_later_cells_run() {
    let copy = tempfile::tempdir().unwrap();
    let task = copy.path().join("notebook-steps");
    overlay(&root().join(TASK), &task);
    let toml = std::fs::read_to_string(task.join("task.toml")).unwrap();
    let toml = toml.replace(
        "notebook = \"train.ipynb\"",
        "notebook = \"train.ipynb\"\ncells = \"1-2, 4\"",
    );
    std::fs::write(task.join("task.toml"), toml).unwrap();
    with_a_raising_cell_3(&task.join("repo/train.ipynb"));
    with_a_raising_cell_3(&task.join("agents/files/pass/train.ipynb"));
    let runs = tempfile::tempdir().unwrap();
    let agent = format!("script:{}", task.join("agents/pass.jsonl").display());
    let out = run(&[
        "run",
        task.to_str().unwrap(),
        "--agent",
        &agent,
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    let dir = only_run_dir(runs.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(result(&dir)["passed_in_phase"], 1);
    let log: String = journal_events(&dir)
        .iter()
        .filter(|e| e["type"] == "run_output")
        .filter_map(|e| e["text"].as_str())
        .collect();
    let log = log.replace("\r\n", "\n");
    assert!(
        log.contains(
            "── train.ipynb#cell=2 ──\nstep 1 loss 0.500000\nstep 2 loss 0.250000\nstep 3 loss 0.125000\n── train.ipynb#cell=3 left out ([run] cells) ──\n── train.ipynb#cell=4 ──\nstep 4 loss 0.062500\n"
        ),
        "{log}"
    );
    assert!(log.contains("final loss 0.015625"), "{log}");
    assert!(!log.contains("IndexError"), "{log}");
}

/// A notebook's package-installing lines (`!pip install numpy`, a `%pip install` continued
/// over two lines) are not run: each prints that it was skipped, and the run passes in the
/// task's environment.
#[test]
fn a_notebooks_pip_lines_are_skipped_and_said() {
    let (code, dir, out, _runs) = run_scripted(TASK, "installs");
    assert_eq!(code, 0, "{out}");
    assert_eq!(result(&dir)["passed_in_phase"], 1);
    let journal = journal_text(&dir);
    for line in ["!pip install numpy", "%pip install -q numpy"] {
        assert!(
            journal.contains(&format!(
                "xstack: skipped `{line}`: the task's environment provides its packages"
            )),
            "{line}: {journal}"
        );
    }
    assert!(journal.contains("final loss 0.015625"), "{journal}");
}

#[test]
fn a_cell_raising_another_error_than_its_committed_one_is_a_crash() {
    let (code, dir, out, _runs) = run_scripted(TASK, "other_error");
    assert_eq!(code, 1, "{out}");
    let r = result(&dir);
    let phase = &r["phases"][0];
    assert_eq!(phase["failure"], "crash", "{phase}");
    assert!(
        phase["findings"].as_array().unwrap().iter().any(|f| f
            == "the run exited with status 1: train.ipynb#cell=2 raised ZeroDivisionError: division by zero"),
        "{phase}"
    );
    assert!(!journal_text(&dir).contains("step 4 loss"));
}

#[test]
fn torch_in_a_cell_or_installed_by_a_magic_is_a_bypass_naming_the_cell() {
    for (agent, finding) in [
        (
            "bypass_torch",
            "train.ipynb#cell=2:1: imports forbidden module `torch`",
        ),
        (
            "bypass_pip",
            "train.ipynb#cell=3:1: installs forbidden module `torch` (`!pip install torch`)",
        ),
    ] {
        let (code, dir, out, _runs) = run_scripted(TASK, agent);
        assert_eq!(code, 1, "{agent}: {out}");
        let phase = &result(&dir)["phases"][0];
        assert_eq!(phase["failure"], "bypass", "{agent}: {phase}");
        let records = phase["finding_records"].as_array().unwrap();
        let record = records
            .iter()
            .find(|f| f["text"] == finding)
            .unwrap_or_else(|| panic!("{agent}: no finding `{finding}` in {phase}"));
        assert_eq!(record["kind"], "forbidden_import");
        assert_eq!(record["file"], "train.ipynb");
        assert!(out.contains(finding), "{agent}: {out}");
    }
}

//! `xstack init` end to end with the real binary: on copies of framework-free stand-ins for
//! the hand-written tasks' repositories (tests/fixtures/init), the proposed task extracts the
//! same values as the hand-written one from the same output, and `check` accepts it; a
//! failing command and bad input write nothing; the repository is never written.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use xstack::metrics::{Point, parse_log, reduce};
use xstack::task::{Direction, Task};

/// A copy of a fixture repository under a temp folder, in a folder named `name`; and the
/// tasks folder beside it.
struct Setup {
    tmp: tempfile::TempDir,
    repo: PathBuf,
}

impl Setup {
    fn new(fixture: &str, name: &str) -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repos").join(name);
        let src = root().join("tests/fixtures/init").join(fixture);
        for entry in walkdir::WalkDir::new(&src).min_depth(1) {
            let entry = entry.unwrap();
            let target = repo.join(entry.path().strip_prefix(&src).unwrap());
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&target).unwrap();
            } else {
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
        Setup { tmp, repo }
    }

    fn tasks(&self) -> PathBuf {
        self.tmp.path().join("tasks")
    }

    /// Runs `xstack init REPO ARGS...` with stdin not a terminal.
    fn init(&self, args: &[&str]) -> Output {
        xstack()
            .env("XSTACK_TASKS_DIR", self.tasks())
            .env("XSTACK_CACHE_DIR", self.tmp.path().join("cache"))
            .arg("init")
            .arg(&self.repo)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `xstack check TASK` with the same tasks folder.
    fn check(&self, id: &str) -> Output {
        xstack()
            .env("XSTACK_TASKS_DIR", self.tasks())
            .env("XSTACK_CACHE_DIR", self.tmp.path().join("cache"))
            .args(["check", id])
            .output()
            .unwrap()
    }

    fn nothing_written(&self) -> bool {
        !self.tasks().exists() || std::fs::read_dir(self.tasks()).unwrap().next().is_none()
    }
}

/// One series per metric, as `parse_log` gives them.
type Series = Vec<(String, Vec<Point>)>;

/// Loads the task init wrote and the hand-written one, and parses init's reference.log with
/// both.
fn compare(setup: &Setup, id: &str, hand: &str) -> (Task, Series, Task, Series) {
    let made = Task::load(&setup.tasks().join(id)).unwrap();
    let log = std::fs::read_to_string(made.dir.join("reference.log")).unwrap();
    let hand = Task::load(&root().join(hand)).unwrap();
    let made_series = parse_log(&made, &log);
    let hand_series = parse_log(&hand, &log);
    (made, made_series, hand, hand_series)
}

fn series<'a>(all: &'a [(String, Vec<Point>)], name: &str) -> &'a [Point] {
    &all.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
        .1
}

#[test]
fn json_lines_repository_becomes_a_task_equal_to_the_hand_written_one() {
    let setup = Setup::new("jsonl-repo", "Linear_Regression");
    let before = tree_hash(&setup.repo);
    let out = setup.init(&[
        "--yes",
        "--command",
        "python3 train.py",
        "--reference-packages",
        "none",
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    // The live output, the candidates and the choice are shown.
    assert!(all.contains(r#"{"eval_mse": "#), "{all}");
    assert!(
        all.contains("criteria: eval_mse (the metrics that look like evaluation results"),
        "{all}"
    );
    assert_eq!(tree_hash(&setup.repo), before, "the repository was written");

    let id = "linear-regression";
    let check = setup.check(id);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));
    assert!(
        text(&check).contains(&format!("ok    {id}")),
        "{}",
        text(&check)
    );

    let (made, made_series, hand, hand_series) = compare(&setup, id, "tests/tasks/jsonl-protected");
    // Same criteria metric and direction; the same value extracted.
    assert_eq!(made.spec.criteria.len(), 1);
    let c = &made.spec.criteria[0];
    assert_eq!(
        (c.metric.as_str(), c.direction),
        ("eval_mse", Direction::Lower)
    );
    let h = &hand.spec.criteria[0];
    assert_eq!(
        reduce(series(&made_series, "eval_mse"), c.reduce),
        reduce(series(&hand_series, "eval_mse"), h.reduce)
    );
    // Every metric of the hand-written task has the same series (values and steps).
    assert_eq!(made.spec.metrics[0].json_key.as_deref(), Some("loss"));
    assert_eq!(made.spec.metrics[0].step_key.as_deref(), Some("step"));
    assert_eq!(series(&made_series, "loss"), series(&hand_series, "loss"));
    assert_eq!(series(&made_series, "loss").len(), 50);
    let values = |s: &[Point]| s.iter().map(|p| p.value).collect::<Vec<_>>();
    assert_eq!(
        values(series(&made_series, "eval_mse")),
        values(series(&hand_series, "eval_mse"))
    );
    // One run: published is that run's value, the tolerance the documented default.
    let value = reduce(series(&made_series, "eval_mse"), c.reduce).unwrap();
    assert!(
        (c.published - value).abs() < 1e-4,
        "{} vs {value}",
        c.published
    );
    assert_eq!(c.tolerance, 0.001);
    // The source is the repository, relative to the task folder.
    assert_eq!(
        made.spec.source.path.as_deref(),
        Some("../../repos/Linear_Regression")
    );
    assert_eq!(made.spec.env.reference_packages, Vec::<String>::new());
    assert_eq!(made.spec.env.packages, ["jax", "flax", "optax"]);
    assert!(
        made.spec.phase2.details.contains("STEPS = 50"),
        "{}",
        made.spec.phase2.details
    );
    assert!(
        made.spec.phase2.details.contains("LR = 0.05"),
        "{}",
        made.spec.phase2.details
    );
}

/// The last `test_acc` of the digits fixture at a seed, computed by running it directly.
fn digits_acc(repo: &Path, seed: u64) -> f64 {
    let out = std::process::Command::new("python3")
        .arg("train.py")
        .env("XSTACK_SEED", seed.to_string())
        .current_dir(repo)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().unwrap();
    last.trim_start_matches("final test_acc=").parse().unwrap()
}

#[test]
fn regex_repository_with_seeds_becomes_a_task_equal_to_the_hand_written_one() {
    let setup = Setup::new("digits-repo", "digits");
    let before = tree_hash(&setup.repo);
    let out = setup.init(&[
        "--yes",
        "--command",
        "python3 train.py",
        "--reference-packages",
        "none",
        "--seeds",
        "3",
        "--id",
        "digits-init",
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("epoch 30/30 train_loss="), "{all}");
    assert_eq!(tree_hash(&setup.repo), before, "the repository was written");
    assert_eq!(setup.check("digits-init").status.code(), Some(0));

    let (made, made_series, hand, hand_series) = compare(&setup, "digits-init", "tasks/digits-mlp");
    let c = &made.spec.criteria[0];
    assert_eq!(made.spec.criteria.len(), 1);
    assert_eq!(
        (c.metric.as_str(), c.direction),
        ("test_acc", Direction::Higher)
    );
    let h = &hand.spec.criteria[0];
    assert_eq!(
        reduce(series(&made_series, "test_acc"), c.reduce),
        reduce(series(&hand_series, "test_acc"), h.reduce)
    );
    // The per-epoch points are the hand-written task's, steps included; init's definition
    // also reads the closing `final test_acc=` line, which has no step.
    let stepped: Vec<Point> = series(&made_series, "test_acc")
        .iter()
        .filter(|p| p.step.is_some())
        .copied()
        .collect();
    assert_eq!(stepped, series(&hand_series, "test_acc"));
    assert_eq!(series(&made_series, "test_acc").len(), 31);
    assert_eq!(
        series(&made_series, "train_loss"),
        series(&hand_series, "train_loss")
    );

    // Published and tolerance from the three seeds: the mean, and max(3 std, 1% of it).
    let accs: Vec<f64> = (0..3).map(|s| digits_acc(&setup.repo, s)).collect();
    let mean = accs.iter().sum::<f64>() / 3.0;
    let std = (accs.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    let raw = (3.0 * std).max(0.01 * mean);
    assert!(
        c.tolerance >= raw && c.tolerance < raw * 1.1 + 1e-4,
        "{} vs {raw}",
        c.tolerance
    );
    assert!(
        (c.published - mean).abs() <= 0.0005,
        "{} vs {mean}",
        c.published
    );
    let toml = std::fs::read_to_string(made.file).unwrap();
    assert!(
        toml.contains("# test_acc (reduce last), seeds 0-2: "),
        "{toml}"
    );
    assert!(
        made.spec.phase2.details.contains("EPOCHS = 30"),
        "{}",
        made.spec.phase2.details
    );
}

#[test]
fn chosen_metric_and_direction_flags_are_used() {
    let setup = Setup::new("digits-repo", "digits");
    let out = setup.init(&[
        "--yes",
        "--command",
        "python3 train.py",
        "--reference-packages",
        "none",
        "--metric",
        "train_loss",
        "--metric",
        "test_acc",
        "--direction",
        "within",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let made = Task::load(&setup.tasks().join("digits")).unwrap();
    let got: Vec<(&str, Direction)> = made
        .spec
        .criteria
        .iter()
        .map(|c| (c.metric.as_str(), c.direction))
        .collect();
    assert_eq!(
        got,
        [
            ("train_loss", Direction::Within),
            ("test_acc", Direction::Within)
        ]
    );

    let setup = Setup::new("digits-repo", "digits");
    let out = setup.init(&[
        "--yes",
        "--command",
        "python3 train.py",
        "--reference-packages",
        "none",
        "--metric",
        "bleu",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--metric bleu: not among the metrics found (train_loss, test_acc)"),
        "{}",
        text(&out)
    );
    assert!(setup.nothing_written());
}

/// A training script that draws a `\r` progress bar, 15 epochs of 25 updates, its loss in
/// the bar's postfix and the epoch padded to two places (`epoch  3`, then `epoch 12`).
const PROGRESS_BAR_TRAIN: &str = r##"import sys
for epoch in range(1, 16):
    for i in range(1, 26):
        bar = "#" * (i * 8 // 25)
        loss = 1.0 / (epoch * 25 + i)
        sys.stdout.write(f"\repoch {epoch:2d} |{bar:.<8}| {i:2d}/25 loss={loss:.4f}")
        sys.stdout.flush()
    sys.stdout.write("\n")
"##;

#[test]
fn a_metric_printed_inside_a_carriage_return_progress_bar_is_read_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repos").join("bar");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("train.py"), PROGRESS_BAR_TRAIN).unwrap();
    let setup = Setup { tmp, repo };
    let out = setup.init(&[
        "--yes",
        "--command",
        "python3 train.py",
        "--reference-packages",
        "none",
        "--metric",
        "loss",
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(!all.contains("left out `loss`"), "{all}");
    assert!(all.contains("375 value(s)"), "{all}");
    let check = setup.check("bar");
    assert_eq!(check.status.code(), Some(0), "{}", text(&check));

    // The task reads every update, with its epoch, from the reference log it wrote, as the
    // grader reads a run's output.
    let made = Task::load(&setup.tasks().join("bar")).unwrap();
    let log = std::fs::read_to_string(made.dir.join("reference.log")).unwrap();
    let loss = parse_log(&made, &log);
    let points = series(&loss, "loss");
    assert_eq!(points.len(), 375);
    assert_eq!(points[0].step, Some(1.0));
    assert_eq!(points[374].step, Some(15.0));
    assert_eq!(points[374].value, 0.0025);
}

#[test]
fn a_failing_command_is_shown_and_writes_nothing() {
    let setup = Setup::new("digits-repo", "digits");
    let before = tree_hash(&setup.repo);
    let out = setup.init(&[
        "--yes",
        "--command",
        "python3 -c 'print(\"loading data\"); raise SystemExit(\"CUDA not available\")'",
        "--reference-packages",
        "none",
    ]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(3), "{all}");
    assert!(all.contains("the command failed (exit 1)"), "{all}");
    assert!(all.contains("CUDA not available"), "{all}");
    assert!(all.contains("loading data"), "{all}");
    assert!(setup.nothing_written(), "{all}");
    assert_eq!(tree_hash(&setup.repo), before);
}

#[test]
fn without_a_terminal_the_command_and_the_review_must_come_from_flags() {
    let setup = Setup::new("digits-repo", "digits");
    // With or without --yes, a missing command is named first.
    for args in [
        &["--yes", "--reference-packages", "none"][..],
        &["--reference-packages", "none"],
    ] {
        let out = setup.init(args);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{all}");
        assert!(
            all.contains("pass --command CMD (candidates: python train.py)"),
            "{all}"
        );
    }
    let out = setup.init(&[
        "--command",
        "python3 train.py",
        "--reference-packages",
        "none",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("pass --yes"), "{}", text(&out));
    assert!(setup.nothing_written());
}

#[test]
fn an_existing_task_and_a_bad_id_are_refused() {
    let setup = Setup::new("digits-repo", "digits");
    let args = [
        "--yes",
        "--command",
        "python3 train.py",
        "--reference-packages",
        "none",
    ];
    assert_eq!(setup.init(&args).status.code(), Some(0));
    let task = setup.tasks().join("digits").join("task.toml");
    let first = std::fs::read_to_string(&task).unwrap();
    let out = setup.init(&args);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("exists already"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&task).unwrap(), first);
    let mut bad = args.to_vec();
    bad.extend(["--id", "Bad_Id"]);
    let out = setup.init(&bad);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("task id `Bad_Id`"), "{}", text(&out));
}

#[test]
fn output_without_metrics_writes_nothing() {
    let setup = Setup::new("digits-repo", "digits");
    let out = setup.init(&[
        "--yes",
        "--command",
        "echo hello world",
        "--reference-packages",
        "none",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no metric found"), "{}", text(&out));
    assert!(setup.nothing_written());
}

#[test]
fn on_a_terminal_it_asks_for_the_command_the_tolerance_and_the_go_ahead() {
    use common::tmux::Tmux;
    use std::time::Duration;
    let setup = Setup::new("digits-repo", "digits");
    let command = format!(
        "cd {} && XSTACK_TASKS_DIR={} XSTACK_CACHE_DIR={} {} init digits --reference-packages none; echo EXIT=$?; sleep 600",
        setup.repo.parent().unwrap().display(),
        setup.tasks().display(),
        setup.tmp.path().join("cache").display(),
        env!("CARGO_BIN_EXE_xstack")
    );
    let tmux = Tmux::start(&command, 160, 60);
    let wait = Duration::from_secs(60);
    let screen = tmux.wait_for("A number, or a command [1]:", wait);
    assert!(screen.contains("1) python train.py"), "{screen}");
    tmux.keys(&["python3 train.py", "Enter"]);
    tmux.wait_for("from one run; tolerance [", wait);
    tmux.keys(&["0.015", "Enter"]);
    let screen = tmux.wait_for("[y/N]", wait);
    assert!(screen.contains("tolerance = 0.015"), "{screen}");
    tmux.keys(&["y", "Enter"]);
    let screen = tmux.wait_for("EXIT=", wait);
    assert!(screen.contains("EXIT=0"), "{screen}");
    let made = Task::load(&setup.tasks().join("digits")).unwrap();
    assert_eq!(made.spec.run.command, "python3 train.py");
    assert_eq!(made.spec.criteria[0].tolerance, 0.015);
}

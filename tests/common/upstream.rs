//! The unmodified snapshots of `../shared/upstream/`, copied for `xstack init` to run on:
//! shared by `tests/claims.rs` (the suite) and `tests/catalog.rs` (the runs that take
//! minutes).

use std::path::PathBuf;
use std::process::{Output, Stdio};

use xstack::task::Task;

use super::oracle::{assert_within_tolerance, bundled};
use super::{overlay, require_tool, root, text, tree_hash, xstack};

/// The snapshot `name` of `../shared/upstream/`, copied (writable) into a temp folder beside
/// an empty tasks folder; None (a failure under `CI=true`) where shared/ is not there.
pub struct Upstream {
    tmp: tempfile::TempDir,
    /// The writable copy of the snapshot.
    pub repo: PathBuf,
}

impl Upstream {
    /// The copy of the snapshot `name`.
    pub fn copy(name: &str) -> Option<Upstream> {
        let src = root().join("../shared/upstream").join(name);
        if !require_tool(&format!("the upstream snapshot {}", src.display()), || {
            src.is_dir()
        }) {
            return None;
        }
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repos").join(name);
        overlay(&src, &repo);
        for entry in walkdir::WalkDir::new(&repo) {
            let entry = entry.unwrap();
            let mut permissions = entry.metadata().unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            permissions.set_readonly(false);
            std::fs::set_permissions(entry.path(), permissions).unwrap();
        }
        Some(Upstream { tmp, repo })
    }

    /// The tasks folder init writes into.
    pub fn tasks(&self) -> PathBuf {
        self.tmp.path().join("tasks")
    }

    /// `xstack init REPO ARGS...`, no terminal, the machine's environment cache.
    pub fn init(&self, args: &[&str]) -> Output {
        xstack()
            .env("XSTACK_TASKS_DIR", self.tasks())
            .env("OMP_NUM_THREADS", "1")
            .arg("init")
            .arg(&self.repo)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// `xstack init REPO ARGS...` exits 0 and leaves the repository as it was; what it
    /// printed.
    pub fn init_ok(&self, args: &[&str]) -> String {
        let before = tree_hash(&self.repo);
        let out = self.init(args);
        let printed = text(&out);
        assert_eq!(out.status.code(), Some(0), "{printed}");
        assert_eq!(
            tree_hash(&self.repo),
            before,
            "init wrote into the repository"
        );
        printed
    }

    /// The task `id` init wrote.
    pub fn written(&self, id: &str) -> Task {
        Task::load(&self.tasks().join(id)).unwrap()
    }

    /// Whether init wrote no task.
    pub fn nothing_written(&self) -> bool {
        !self.tasks().exists() || std::fs::read_dir(self.tasks()).unwrap().next().is_none()
    }
}

/// `xstack init --yes --notebook NOTEBOOK --metric METRIC` on a copy of the snapshot
/// `snapshot`, with the bundled task `bundled_id`'s two package lists and `extra` flags, as the
/// task `id`: init exits 0, leaves the repository as it was, writes `from = "jax"` (it read
/// the notebook's imports: no `--from`) and grades `metric` alone; its run of the untouched
/// source lands inside the bundled task's tolerance. The task written and what init printed;
/// None where the snapshot is not there.
pub fn init_jax_notebook(
    snapshot: &str,
    id: &str,
    notebook: &str,
    metric: &str,
    bundled_id: &str,
    extra: &[&str],
) -> Option<(Task, String)> {
    let up = Upstream::copy(snapshot)?;
    let task = bundled(bundled_id);
    let mut args = vec![
        "--yes",
        "--id",
        id,
        "--notebook",
        notebook,
        "--metric",
        metric,
    ];
    args.extend(extra);
    args.push("--reference-packages");
    args.extend(task.spec.env.reference_packages.iter().map(String::as_str));
    args.push("--packages");
    args.extend(task.spec.env.packages.iter().map(String::as_str));
    let printed = up.init_ok(&args);
    let written = std::fs::read_to_string(up.tasks().join(id).join("task.toml")).unwrap();
    assert!(written.contains("from = \"jax\""), "{written}");
    let made = up.written(id);
    let graded: Vec<&str> = made
        .spec
        .criteria
        .iter()
        .map(|c| c.metric.as_str())
        .collect();
    assert_eq!(graded, [metric], "{printed}");
    let log = std::fs::read_to_string(up.tasks().join(id).join("reference.log")).unwrap();
    assert_within_tolerance(bundled_id, &task, &log);
    Some((made, printed))
}

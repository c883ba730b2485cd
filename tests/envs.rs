//! `xstack env build|list|prune` with real uv and real installs from PyPI (small pure-Python
//! packages), each in a cache folder of its own: uv brought from PyPI when it is not on PATH,
//! package files shared between environments, and pruning that spares what a running session
//! holds.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use common::{journal_events, text, wait_until, xstack};

/// A task `id` whose target environment holds `target` and reference one `reference`.
fn task(root: &Path, id: &str, target: &[&str], reference: &[&str]) -> PathBuf {
    let dir = root.join(id);
    std::fs::create_dir_all(dir.join("repo")).unwrap();
    std::fs::write(dir.join("repo/run.py"), "print('acc=1.0')\n").unwrap();
    let list = |p: &[&str]| {
        p.iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    std::fs::write(
        dir.join("task.toml"),
        format!(
            r#"id = "{id}"
title = "Prints a score"

[source]
path = "repo"

[published]
citation = "none"

[env]
packages = [{}]
reference_packages = [{}]

[run]
command = "python run.py"
timeout_s = 60

[[metric]]
name = "acc"
regex = 'acc=(?P<value>[0-9.]+)'

[[criterion]]
metric = "acc"
reduce = "last"
published = 1.0
tolerance = 0.1
direction = "higher"

[phase2]
details = "Print acc=1.0."
"#,
            list(target),
            list(reference)
        ),
    )
    .unwrap();
    dir
}

/// `xstack ARGS` with the cache folder `cache` (and PATH `path` when given).
fn env_cmd(cache: &Path, path: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = xstack();
    cmd.env("XSTACK_CACHE_DIR", cache).args(args);
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    cmd.output().unwrap()
}

/// This PATH less every folder that holds a `uv`.
fn path_without_uv() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .filter(|d| !d.is_empty() && !Path::new(d).join("uv").exists())
        .collect::<Vec<_>>()
        .join(":")
}

/// The environment folder a line of `env build` names.
fn env_of(stdout: &str, side: &str, id: &str) -> PathBuf {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{side:<9}  {id}  ")))
        .unwrap_or_else(|| panic!("no {side} line for {id}:\n{stdout}"));
    let path = line
        .split("  ")
        .find(|w| w.starts_with('/'))
        .unwrap_or_else(|| panic!("no path in {line}"));
    PathBuf::from(path)
}

/// The file `name` of package folder `package` in the environment `env`.
fn package_file(env: &Path, package: &str, name: &str) -> PathBuf {
    let lib = std::fs::read_dir(env.join("lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let file = lib.path().join("site-packages").join(package).join(name);
    assert!(file.is_file(), "{} is missing", file.display());
    file
}

/// With no uv on PATH, `env build` brings uv from PyPI into the cache once (one line says
/// so), builds both environments of each task with it, and two reference environments that
/// differ in one package hold the same files of the packages they share (hardlinks into the
/// package store); a second build reuses everything.
#[test]
fn env_build_without_uv_on_path_brings_uv_once_and_environments_share_package_files() {
    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    let a = task(root.path(), "env-a", &["six"], &["six", "idna"]);
    let b = task(
        root.path(),
        "env-b",
        &["six"],
        &["six", "idna", "packaging"],
    );
    let path = path_without_uv();
    assert!(
        !path.split(':').any(|d| Path::new(d).join("uv").exists()),
        "{path}"
    );
    let (a_s, b_s) = (a.display().to_string(), b.display().to_string());
    let out = env_cmd(&cache, Some(&path), &["env", "build", &a_s, &b_s]);
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let bootstrap = format!(
        "uv is not on PATH: installing uv {} from PyPI into {} (once)",
        xstack::env::uv::UV_VERSION,
        cache.join("uv").display()
    );
    assert_eq!(all.matches(&bootstrap).count(), 1, "{all}");
    assert!(!all.contains("-m pip install"), "pip was used:\n{all}");
    assert!(
        all.contains(&format!(
            "{} pip install --cache-dir {} --link-mode hardlink",
            cache.join("uv/bin/uv").display(),
            cache.join("uv-cache").display()
        )),
        "{all}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(stdout.lines().count(), 4, "{stdout}");
    assert!(
        stdout
            .lines()
            .next()
            .unwrap()
            .starts_with("target     env-a  [six]  "),
        "{stdout}"
    );
    assert!(stdout.lines().all(|l| l.ends_with(" s")), "{stdout}");
    let a_target = env_of(&stdout, "target", "env-a");
    assert_eq!(a_target, env_of(&stdout, "target", "env-b"));
    let a_ref = env_of(&stdout, "reference", "env-a");
    let b_ref = env_of(&stdout, "reference", "env-b");
    assert_ne!(a_ref, b_ref);
    for (package, file) in [("idna", "core.py"), ("idna", "idnadata.py")] {
        let one = package_file(&a_ref, package, file).metadata().unwrap();
        let two = package_file(&b_ref, package, file).metadata().unwrap();
        assert_eq!((one.dev(), one.ino()), (two.dev(), two.ino()), "{file}");
        assert!(one.nlink() >= 3, "{file}: {} links", one.nlink());
    }

    let again = env_cmd(&cache, Some(&path), &["env", "build", &a_s, &b_s]);
    let again_all = text(&again);
    assert!(again.status.success(), "{again_all}");
    assert!(!again_all.contains("installing uv"), "{again_all}");
    assert_eq!(
        again_all.matches("using cached environment").count(),
        4,
        "{again_all}"
    );
}

/// `env list` names each environment's side, task and packages; `env prune` removes the
/// unused but keeps the environment a running session holds, and `--all` then removes
/// everything with the package store, saying what it freed.
#[test]
fn env_list_and_prune_spare_the_environment_a_running_session_holds() {
    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    let a = task(root.path(), "env-held", &["six"], &["six", "idna"]);
    let a_s = a.display().to_string();
    let built = env_cmd(&cache, None, &["env", "build", &a_s]);
    assert!(built.status.success(), "{}", text(&built));
    let stdout = String::from_utf8_lossy(&built.stdout).into_owned();
    let target = env_of(&stdout, "target", "env-held");
    let reference = env_of(&stdout, "reference", "env-held");

    let listed = env_cmd(&cache, None, &["env", "list"]);
    let list = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(listed.status.success(), "{}", text(&listed));
    let line = |dir: &Path| {
        let key = dir.file_name().unwrap().to_string_lossy().into_owned();
        list.lines()
            .find(|l| l.starts_with(&key))
            .unwrap_or_else(|| panic!("{key} is not listed:\n{list}"))
            .to_string()
    };
    let t = line(&target);
    assert!(
        t.contains(" target ") && t.contains("tasks: env-held") && t.ends_with("[six]"),
        "{t}"
    );
    assert!(t.contains(" alone of ") && t.contains("last used 2"), "{t}");
    let r = line(&reference);
    assert!(
        r.contains(" reference ") && r.ends_with("[six idna]"),
        "{r}"
    );
    assert!(list.contains("package store "), "{list}");

    // A session on the task holds its target environment while its agent works.
    let runs = root.path().join("runs");
    let mut session = xstack()
        .env("XSTACK_CACHE_DIR", &cache)
        .args([
            "run",
            &a_s,
            "--agent",
            "cmd:sleep 120",
            "--headless",
            "--runs-dir",
        ])
        .arg(&runs)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = || {
        std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(Result::ok)
            .is_some_and(|e| {
                journal_events(&e.path())
                    .iter()
                    .any(|ev| ev["type"] == "agent_started")
            })
    };
    assert!(
        wait_until(Duration::from_secs(120), started),
        "the agent never started"
    );
    let pruned = env_cmd(&cache, None, &["env", "prune", "--unused-days", "0"]);
    let said = String::from_utf8_lossy(&pruned.stdout).into_owned();
    unsafe {
        libc::kill(session.id() as i32, libc::SIGTERM);
    }
    let _ = session.wait();
    assert!(pruned.status.success(), "{}", text(&pruned));
    let target_key = target.file_name().unwrap().to_string_lossy().into_owned();
    let reference_key = reference
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        said.contains(&format!("kept    {target_key} [six]"))
            && said.contains("a running xstack holds it"),
        "{said}"
    );
    assert!(
        said.contains(&format!("removed {reference_key} [six idna]")),
        "{said}"
    );
    assert!(said.lines().last().unwrap().starts_with("freed "), "{said}");
    assert!(target.join("bin/python").exists());
    assert!(!reference.exists());

    let all = env_cmd(&cache, None, &["env", "prune", "--all"]);
    let said = String::from_utf8_lossy(&all.stdout).into_owned();
    assert!(all.status.success(), "{}", text(&all));
    assert!(
        said.contains(&format!("removed {target_key} [six]")),
        "{said}"
    );
    assert!(said.contains("removed the package store"), "{said}");
    let freed = said.lines().last().unwrap();
    assert!(
        freed.starts_with("freed ") && freed != "freed 0.0 kB",
        "{said}"
    );
    assert!(!target.exists() && !cache.join("uv-cache").exists());
    let empty = env_cmd(&cache, None, &["env", "list"]);
    assert!(
        String::from_utf8_lossy(&empty.stdout).starts_with("no environments in "),
        "{}",
        text(&empty)
    );
}

/// A task that is not there is a usage error naming it, and builds nothing.
#[test]
fn env_build_of_a_missing_task_is_a_usage_error_and_builds_nothing() {
    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    let missing = root.path().join("no-such-task").display().to_string();
    let out = env_cmd(&cache, None, &["env", "build", &missing]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no-such-task"), "{}", text(&out));
    assert!(!cache.join("envs").exists());
}

/// A bench says, before its trials, which environment it will build first and about how big
/// it will be; once built, a bench says nothing of it.
#[test]
fn a_bench_says_which_environment_it_builds_first() {
    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    let a = task(root.path(), "env-bench", &["six"], &["six", "idna"]);
    let a_s = a.display().to_string();
    let bench = |out: &str| {
        let out_dir = root.path().join(out).display().to_string();
        env_cmd(
            &cache,
            None,
            &[
                "bench",
                "--task",
                &a_s,
                "--agent",
                "cmd:true",
                "--allow-unconfined",
                "--out",
                &out_dir,
            ],
        )
    };
    let first = bench("first");
    let said = text(&first);
    assert_eq!(first.status.code(), Some(0), "{said}");
    assert!(
        said.contains(
            "bench: the target environment of env-bench [six] will be built first: about 90 MB (a rough figure; less what the package store already holds)"
        ),
        "{said}"
    );
    assert!(!said.contains("reference environment"), "{said}");
    let second = bench("second");
    let said = text(&second);
    assert_eq!(second.status.code(), Some(0), "{said}");
    assert!(!said.contains("will be built first"), "{said}");
}

/// When uv can be neither found nor installed (here pip is told that no uv release may be
/// installed), the environments are built with `python3 -m venv` and pip, and one line says
/// so with the reason, however many environments follow.
#[test]
fn when_uv_cannot_be_installed_pip_builds_and_one_line_says_why() {
    let root = tempfile::tempdir().unwrap();
    let cache = root.path().join("cache");
    let a = task(root.path(), "env-pip", &["six"], &["six", "idna"]);
    let constraints = root.path().join("no-uv.txt");
    std::fs::write(&constraints, "uv==0.0.0\n").unwrap();
    let out = xstack()
        .env("XSTACK_CACHE_DIR", &cache)
        .env("PATH", path_without_uv())
        .env("PIP_CONSTRAINT", &constraints)
        .args(["env", "build", &a.display().to_string()])
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    let fallback: Vec<&str> = all
        .lines()
        .filter(|l| l.starts_with("uv is not on PATH and cannot be installed ("))
        .collect();
    assert_eq!(fallback.len(), 1, "{all}");
    assert!(
        fallback[0].contains("uv==")
            && fallback[0].ends_with("): building environments with python3 -m venv and pip"),
        "{}",
        fallback[0]
    );
    assert_eq!(all.matches("-m pip install six").count(), 2, "{all}");
    assert!(
        !cache.join("uv").exists(),
        "a failed bootstrap is left behind"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(package_file(&env_of(&stdout, "reference", "env-pip"), "idna", "core.py").is_file());
}

//! Helpers shared by the integration tests: run the real binary, read run folders.
#![allow(dead_code)]
// Test helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// The repository root (tests run with it as the working folder).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A command for the built `xstack` binary, run from the repository root.
pub fn xstack() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xstack"));
    cmd.current_dir(root());
    cmd.env_remove("XSTACK_RUNS_DIR");
    cmd.env_remove("XSTACK_SEED");
    // The user's own config file must not change what the tests see.
    cmd.env("XSTACK_CONFIG", "/dev/null");
    cmd
}

/// Runs xstack with `args` and returns its output.
pub fn run(args: &[&str]) -> Output {
    xstack().args(args).output().expect("xstack runs")
}

/// The single run folder inside `runs`.
pub fn only_run_dir(runs: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(runs)
        .expect("runs folder exists")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "expected one run folder, got {dirs:?}");
    dirs[0].clone()
}

/// `result.json` of a run folder as JSON.
pub fn result(run_dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(run_dir.join("result.json")).expect("result.json");
    serde_json::from_str(&text).expect("result.json parses")
}

/// The JSON lines of a run folder's journal (`journal.jsonl.zst`), header first, as
/// `zstdcat` prints them: every whole frame decompressed in order (a torn last frame, of a
/// run still writing or killed, ends the text at the last whole line before it). Empty when
/// there is no journal.
pub fn journal_text(run_dir: &Path) -> String {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(run_dir.join("journal.jsonl.zst")) else {
        return String::new();
    };
    let mut bytes = Vec::new();
    // A read error is the torn last frame: what came before it stays in `bytes`.
    let _ = zstd::stream::read::Decoder::new(file)
        .expect("a zstd decoder")
        .read_to_end(&mut bytes);
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(whole);
    String::from_utf8(bytes).expect("the journal is UTF-8")
}

/// The events of a run folder's journal (every line after the header) as JSON.
pub fn journal_events(run_dir: &Path) -> Vec<serde_json::Value> {
    journal_text(run_dir)
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).expect("a journal line parses"))
        .collect()
}

/// Fails if a file under `dir` (a run or bench folder) holds `secret`, each read as written
/// and, when it is zstd-compressed (the journal), decompressed; the agent's own files aside
/// (`workspace/`, and `verify/`, the clean copy the verify run used). Returns how many files
/// were read.
pub fn assert_no_recorded_file_holds(dir: &Path, secret: &str) -> usize {
    let mut read = 0;
    for entry in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != "workspace" && e.file_name() != "verify")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let bytes = std::fs::read(entry.path()).unwrap();
        let bytes = zstd::stream::decode_all(&bytes[..]).unwrap_or(bytes);
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the secret",
            entry.path().display()
        );
        read += 1;
    }
    read
}

/// Polls `found` every 50 ms until it gives a value or `limit` passes (then None). What a
/// test waits on outside xstack (a file, a process, a journal line, a terminal's screen) is
/// waited on through this, with a deadline, never with a fixed sleep.
pub fn poll<T>(limit: Duration, found: impl FnMut() -> Option<T>) -> Option<T> {
    xstack::poll::poll(limit, Duration::from_millis(50), found)
}

/// Polls `cond` every 50 ms until it holds or `limit` passes; returns whether it held.
pub fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    poll(limit, || cond().then_some(())).is_some()
}

/// Whether the tool a test needs is here (`works` checks it can do the test's job). When it
/// is not: under CI (`CI=true`) the test fails, naming what to install; elsewhere it says so
/// loudly on stderr and the caller skips the test.
pub fn require_tool(tool: &str, works: impl FnOnce() -> bool) -> bool {
    if works() {
        return true;
    }
    let message = format!("{tool} is missing or does not work here: run scripts/setup");
    let under_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(!under_ci, "{message} (a test cannot skip under CI)");
    eprintln!("\n*** SKIPPED: {message} ***\n");
    false
}

/// Whether `program` runs with `args` and exits 0.
pub fn runs_ok(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The output as text (stdout then stderr).
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A content hash of every file under `dir` (path and bytes), to prove nothing was written.
pub fn tree_hash(dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().to_path_buf())
        .collect();
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.strip_prefix(dir).unwrap().to_string_lossy().as_bytes());
        h.update(std::fs::read(&f).unwrap());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Copies the tree at `from` into `to` (created), laying its files over what is there.
pub fn overlay(from: &Path, to: &Path) {
    overlay_files(from, to);
}

/// The oracle of the task in `task_dir` made in `into`: its source, `[solution] base` and
/// `solution/` laid over it, then the paths its `[solution] remove` lists deleted.
pub fn oracle_into(task_dir: &Path, into: &Path) {
    let task = xstack::task::Task::load(task_dir).unwrap();
    overlay_files(task.source_path().unwrap(), into);
    for layer in task.solution_layers() {
        overlay_files(&layer, into);
    }
    for path in task.solution_removes() {
        let target = into.join(path);
        if target.is_dir() {
            std::fs::remove_dir_all(&target).unwrap();
        } else {
            std::fs::remove_file(&target).unwrap();
        }
    }
}

fn overlay_files(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from)
        .into_iter()
        .filter_map(Result::ok)
    {
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub mod oracle;
pub mod parity;
pub mod tmux;
pub mod upstream;

/// The other processes of this machine whose command line or working folder mentions
/// `needle`, as (pid, command line with its arguments joined by spaces).
pub fn processes_mentioning(needle: &str) -> Vec<(String, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id().to_string();
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.chars().all(|c| c.is_ascii_digit()) || name == me {
                return None;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
            (cmdline.contains(needle) || cwd.to_string_lossy().contains(needle))
                .then_some((name, cmdline))
        })
        .collect()
}

/// Kills every process whose command line or working folder mentions `needle` (what a
/// machine restart would do to a run's children after xstack itself was killed).
pub fn kill_processes_mentioning(needle: &str) {
    for (pid, _) in processes_mentioning(needle) {
        let _ = Command::new("kill").args(["-9", &pid]).status();
    }
}

/// Writes the task `quick` under `root` and returns its folder: its source (`repo/`) holds
/// `files` (path, text), its run is `command`, which prints `acc=…`; it passes at 1.0 ± 0.1,
/// and its phase-two details say "Print acc=1.0.". `extra` is TOML appended to its
/// `task.toml` (an `[integrity]` table).
pub fn quick_task(root: &Path, command: &str, files: &[(&str, &str)], extra: &str) -> PathBuf {
    let task = root.join("quick");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    for (path, text) in files {
        std::fs::write(task.join("repo").join(path), text).unwrap();
    }
    std::fs::write(
        task.join("task.toml"),
        format!(
            r#"id = "quick"
title = "Prints a score"

[source]
path = "repo"

[published]
citation = "none"

[env]
packages = []

[run]
command = "{command}"
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
{extra}"#
        ),
    )
    .unwrap();
    task
}

/// What a headless run of `task` with the scripted agent `agents/NAME.jsonl` of that task
/// gave: its exit status, its run folder, its output, and the folder of runs (kept alive).
pub fn run_scripted(task: &str, name: &str) -> (i32, PathBuf, String, tempfile::TempDir) {
    let runs = tempfile::tempdir().unwrap();
    let agent = format!("script:{task}/agents/{name}.jsonl");
    let out = run(&[
        "run",
        task,
        "--agent",
        &agent,
        "--headless",
        "--runs-dir",
        runs.path().to_str().unwrap(),
    ]);
    let dir = only_run_dir(runs.path());
    (out.status.code().unwrap(), dir, text(&out), runs)
}

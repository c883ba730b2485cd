//! Remote runners end to end: the ssh runner against a real `sshd` started on 127.0.0.1 with
//! keys made for the test, and the TPU and Kubernetes runners through fake `gcloud` and
//! `kubectl` programs that check the exact arguments they get and then do the work on this
//! machine. The remote folder is fixed (under the target folder) so the task's environment
//! is built there once and reused by later runs.
// Helpers panic on what a test cannot go on without, as the tests themselves do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;

const TASK: &str = "tests/tasks/jsonl-protected";

/// The runners' folder on the "remote" machine (this one), kept between test runs.
fn remote_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("remote-runner");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A private sshd on 127.0.0.1, killed when dropped.
struct Sshd {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl Sshd {
    fn start() -> Sshd {
        let sshd = Path::new("/usr/sbin/sshd");
        assert!(
            sshd.exists(),
            "the ssh runner tests need openssh-server: run scripts/setup"
        );
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for key in ["host_key", "client_key"] {
            let ok = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(d.join(key))
                .status()
                .unwrap()
                .success();
            assert!(ok, "ssh-keygen failed");
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        // sshd wants its privilege separation folder.
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // Sessions get this machine's environment (PATH with uv, certificates, proxies), as
        // a configured remote machine would have its own.
        let skip = [
            "HOME", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "SHLVL", "_", "TERM", "MAIL",
        ];
        let vars: Vec<String> = std::env::vars()
            .filter(|(k, v)| {
                !skip.contains(&k.as_str())
                    && !k.starts_with("SSH_")
                    && !k.starts_with("XSTACK_")
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !v.contains(['"', '\n', '\\'])
            })
            .map(|(k, v)| format!("{k}=\"{v}\""))
            .collect();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nPidFile {pid}\n\
             AuthorizedKeysFile {ak}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nSetEnv {vars}\n",
            hk = d.join("host_key").display(),
            pid = d.join("sshd.pid").display(),
            ak = d.join("authorized_keys").display(),
            vars = vars.join(" "),
        );
        std::fs::write(d.join("sshd_config"), config).unwrap();
        let child = Command::new(sshd)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("sshd.log")).unwrap())
            .spawn()
            .unwrap();
        let up = wait_until(Duration::from_secs(10), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(up, "sshd did not start");
        Sshd { child, dir, port }
    }

    /// `$XSTACK_SSH` for this server.
    fn ssh_command(&self) -> String {
        format!(
            "ssh -i {} -p {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
            self.dir.path().join("client_key").display(),
            self.port
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ssh_runner() -> String {
    format!("ssh://127.0.0.1{}", remote_dir().display())
}

/// `xstack run` of the test task with a trajectory; returns (exit code, run folder, output).
fn run_task(
    agent: &str,
    runner: Option<&str>,
    env: &[(&str, String)],
) -> (i32, PathBuf, String, tempfile::TempDir) {
    let runs = tempfile::tempdir().unwrap();
    let agent = format!("script:{TASK}/agents/{agent}.jsonl");
    let mut cmd = xstack();
    cmd.args(["run", TASK, "--agent", &agent, "--headless", "--runs-dir"])
        .arg(runs.path());
    if let Some(runner) = runner {
        cmd.args(["--runner", runner]);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let dir = only_run_dir(runs.path());
    (out.status.code().unwrap(), dir, text(&out), runs)
}

/// (failure class, eval_mse) of each graded phase.
fn verdicts(run_dir: &Path) -> Vec<(serde_json::Value, serde_json::Value)> {
    result(run_dir)["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["failure"].clone(), p["criteria"][0]["value"].clone()))
        .collect()
}

#[test]
fn ssh_runner_gives_the_same_verdicts_as_a_local_run() {
    let sshd = Sshd::start();
    let env = [("XSTACK_SSH", sshd.ssh_command())];
    let local = std::thread::spawn(|| run_task("gap_then_pass", None, &[]));
    let runner = ssh_runner();
    let (code, dir, out, _runs) = run_task("gap_then_pass", Some(&runner), &env);
    let (local_code, local_dir, local_out, _local_runs) = local.join().unwrap();
    assert_eq!(local_code, 0, "{local_out}");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("phase 1: verify runs on {runner}")),
        "{out}"
    );
    let remote = verdicts(&dir);
    assert_eq!(remote[0].0, "fidelity_gap");
    assert_eq!(remote[1].0, serde_json::Value::Null);
    assert_eq!(
        remote,
        verdicts(&local_dir),
        "same classes and metric values"
    );
    // Confined on the machine as locally (bubblewrap is there).
    let confined: Vec<_> = result(&dir)["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["verify_confined"].clone())
        .collect();
    assert_eq!(confined, [true, true], "{out}");
    // The run's output came back through the terminal; nothing else was copied back and the
    // remote run folder is gone.
    assert_no_remote_folder_of(&dir);
    assert!(journal_text(&dir).contains("eval_mse"));
    assert_replay_passes(&dir);
}

/// No folder of the run `dir` is left on the runner (its remote folders are named after the
/// run folder).
fn assert_no_remote_folder_of(dir: &Path) {
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    let left: Vec<String> = std::fs::read_dir(remote_dir())
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with(&name))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "left on the runner: {left:?}");
}

fn assert_replay_passes(dir: &Path) {
    let out = run(&["replay", dir.to_str().unwrap(), "--headless"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// The pids of processes whose argv[0] is `name`.
fn processes_named(name: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| c.split(|b| *b == 0).next() == Some(name.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

/// A task without a Python environment whose run reports whether it has a terminal, then
/// sleeps under a unique name, ignoring hangups.
fn sleeper_task(marker: &str) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let task = root.path().join("sleeper");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(task.join("repo/train.py"), "import jax\n").unwrap();
    let toml = format!(
        r#"id = "sleeper"
title = "Sleeps"

[source]
path = "repo"

[published]
citation = "none"

[env]
packages = []

[run]
command = "if [ -t 1 ]; then echo remote-has-a-terminal; fi; trap '' HUP; exec -a {marker} sleep 300"
timeout_s = 600

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
details = "none"
"#
    );
    std::fs::write(task.join("task.toml"), toml).unwrap();
    let repo = task.join("repo");
    (root, repo)
}

#[test]
fn a_cancelled_remote_run_leaves_no_remote_process() {
    let sshd = Sshd::start();
    let marker = format!("xstack-test-sleeper-{}", std::process::id());
    let (root, repo) = sleeper_task(&marker);
    let runs = tempfile::tempdir().unwrap();
    let mut child = xstack()
        .args(["grade"])
        .arg(root.path().join("sleeper"))
        .arg("--repo")
        .arg(&repo)
        .args(["--runner", &ssh_runner(), "--headless", "--runs-dir"])
        .arg(runs.path())
        .env("XSTACK_SSH", sshd.ssh_command())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = wait_until(Duration::from_secs(60), || {
        !processes_named(&marker).is_empty()
    });
    assert!(started, "the remote run never started");
    let dir = only_run_dir(runs.path());
    assert!(
        wait_until(Duration::from_secs(10), || journal_text(&dir)
            .contains("remote-has-a-terminal")),
        "the remote run has no terminal"
    );

    // Ctrl-C (SIGINT) to xstack: the run is cancelled.
    // SAFETY: kill with a pid this test spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let mut status = None;
    assert!(wait_until(Duration::from_secs(30), || {
        status = child.try_wait().unwrap();
        status.is_some()
    }));
    assert_eq!(status.unwrap().code(), Some(3));
    // The sleeper ignored the hangup; it was ended by its process group all the same.
    assert!(
        wait_until(Duration::from_secs(10), || processes_named(&marker)
            .is_empty()),
        "a remote process survived: {:?}",
        processes_named(&marker)
    );
    assert_no_remote_folder_of(&dir);
}

#[test]
fn an_unreachable_ssh_runner_is_an_infrastructure_failure_with_the_cause() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let runner = format!("ssh://127.0.0.1:{port}/tmp/x");
    let (code, dir, out, _runs) = run_task("pass", Some(&runner), &[]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("Connection refused"), "{out}");
    assert!(out.contains(&runner), "{out}");
    // Nothing was graded: the phase that could not happen says whose failure it was.
    let phases = result(&dir)["phases"].as_array().unwrap().clone();
    assert_eq!(phases.len(), 1);
    assert_eq!(phases[0]["outcome"], "infrastructure_failure");
    assert_eq!(phases[0]["verdict"], serde_json::Value::Null);
}

#[test]
fn a_runner_spec_that_does_not_parse_is_a_usage_error_naming_it() {
    for spec in ["ssh://host-without-folder", "tpu://t?zone=z&colour=red"] {
        let runs = tempfile::tempdir().unwrap();
        let out = run(&[
            "run",
            TASK,
            "--headless",
            "--runner",
            spec,
            "--runs-dir",
            runs.path().to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            text(&out).contains(&format!("runner `{spec}`")),
            "{}",
            text(&out)
        );
        assert_eq!(std::fs::read_dir(runs.path()).unwrap().count(), 0);
    }
}

/// A folder holding a fake program `name` (a bash script) first on PATH.
fn fake_program(name: &str, script: &str) -> (tempfile::TempDir, String) {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    let path = bin.path().join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let search = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (bin, search)
}

/// The oracle: the task's repo with its solution laid over it.
fn oracle_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for part in ["repo", "solution"] {
        let ok = Command::new("cp")
            .arg("-R")
            .arg(format!("{TASK}/{part}/."))
            .arg(dir.path())
            .current_dir(root())
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    dir
}

/// `xstack grade` of the oracle through `runner` with `PATH` = `search`.
fn grade_oracle(
    runner: &str,
    search: &str,
    log: &Path,
) -> (i32, PathBuf, String, tempfile::TempDir) {
    let repo = oracle_repo();
    let runs = tempfile::tempdir().unwrap();
    let out = xstack()
        .args(["grade", TASK, "--repo"])
        .arg(repo.path())
        .args(["--runner", runner, "--headless", "--runs-dir"])
        .arg(runs.path())
        .env("PATH", search)
        .env("FAKE_LOG", log)
        .output()
        .unwrap();
    let dir = only_run_dir(runs.path());
    (out.status.code().unwrap(), dir, text(&out), runs)
}

const FAKE_GCLOUD: &str = r#"#!/usr/bin/env bash
# Fake gcloud: checks the arguments xstack sends for TPU VM `my-tpu`, then does the work here.
fail() { echo "fake gcloud: unexpected arguments: $*" >&2; exit 64; }
[ "$1 $2 $3" = "compute tpus tpu-vm" ] || fail "$@"
verb=$4; shift 4
flags="--zone us-central2-b --project my-project --worker=all"
case $verb in
  ssh)
    [ "$1" = my-tpu ] && [ "$2 $3 $4 $5 $6" = "$flags" ] && [ "$7" = --command ] || fail "$@"
    case "$#:${9-}" in 8:|9:--ssh-flag=-tt) ;; *) fail "$@";; esac
    echo "ssh${9:+ $9}" >> "$FAKE_LOG"
    exec bash -c "$8";;
  scp)
    recurse=; if [ "$1" = --recurse ]; then recurse=-R; shift; fi
    [ $# = 7 ] && [ "$3 $4 $5 $6 $7" = "$flags" ] || fail "$@"
    case "$1:$2" in
      my-tpu:*) echo "scp from" >> "$FAKE_LOG"; cp $recurse ${1#my-tpu:} "$2";;
      *:my-tpu:*) [ -n "$recurse" ] || fail "$@"; echo "scp --recurse to" >> "$FAKE_LOG"; cp -R "$1" "${2#my-tpu:}";;
      *) fail "$@";;
    esac;;
  *) fail "$verb" "$@";;
esac
"#;

#[test]
fn tpu_runner_drives_gcloud_and_keeps_every_workers_log() {
    let (_bin, search) = fake_program("gcloud", FAKE_GCLOUD);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("gcloud.log");
    let runner = format!(
        "tpu://my-tpu?zone=us-central2-b&project=my-project&worker=all&dir={}",
        remote_dir().display()
    );
    let (code, dir, out, _runs) = grade_oracle(&runner, &search, &log);
    assert_eq!(code, 0, "{out}");
    assert_eq!(result(&dir)["phases"][0]["verdict"], "pass");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        // prepare, stage, copy, run, fetch and remove the workers' logs, read what the run
        // recorded; then the seed check's run the same way.
        [
            "ssh",
            "ssh",
            "scp --recurse to",
            "ssh --ssh-flag=-tt",
            "scp from",
            "ssh",
            "ssh",
            "ssh",
            "scp --recurse to",
            "ssh --ssh-flag=-tt",
            "scp from",
            "ssh",
            "ssh"
        ],
        "{calls}"
    );
    let worker0 = std::fs::read_to_string(dir.join("workers/worker-0.log")).unwrap();
    assert!(worker0.contains("eval_mse"), "{worker0}");
    let run_id = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!remote_dir().join(&run_id).exists());
    assert!(!remote_dir().join(format!("{run_id}.logs")).exists());
}

const FAKE_KUBECTL: &str = r#"#!/usr/bin/env bash
# Fake kubectl: checks the arguments xstack sends for pod trainer-0, then does the work here.
fail() { echo "fake kubectl: unexpected arguments: $*" >&2; exit 64; }
target="-n ml -c jax"
case $1 in
  exec)
    shift; tty=
    if [ "$1" = -it ]; then tty=" -it"; shift; fi
    [ $# = 9 ] && [ "$1 $2 $3 $4 $5 $6 $7 $8" = "trainer-0 $target -- bash -c" ] || fail "$@"
    echo "exec$tty" >> "$FAKE_LOG"
    exec bash -c "$9";;
  cp)
    [ $# = 7 ] && [ "$4 $5 $6 $7" = "$target" ] || fail "$@"
    case "$3" in trainer-0:/*) ;; *) fail "$@";; esac
    echo "cp" >> "$FAKE_LOG"
    cp -R "$2" "${3#trainer-0:}";;
  *) fail "$@";;
esac
"#;

#[test]
fn k8s_runner_drives_kubectl() {
    let (_bin, search) = fake_program("kubectl", FAKE_KUBECTL);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("kubectl.log");
    let runner = format!(
        "k8s://trainer-0?namespace=ml&container=jax&dir={}",
        remote_dir().display()
    );
    let (code, dir, out, _runs) = grade_oracle(&runner, &search, &log);
    assert_eq!(code, 0, "{out}");
    assert_eq!(result(&dir)["phases"][0]["verdict"], "pass");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        // prepare, stage, copy, run, read what the run recorded; then the seed check's run:
        // stage, copy, run, read.
        [
            "exec", "exec", "cp", "exec -it", "exec", "exec", "cp", "exec -it", "exec"
        ],
        "{calls}"
    );
}

/// `$XSTACK_SSH` that drops the interactive call (the verify run's `ssh -tt`) the way a lost
/// connection does, and passes every other call to the real ssh.
const DROPPING_SSH: &str = r#"#!/bin/sh
for a in "$@"; do
  if [ "$a" = "-tt" ]; then
    echo "Connection to 127.0.0.1 closed by remote host." >&2
    exit 255
  fi
done
exec "$@"
"#;

#[test]
fn a_lost_ssh_connection_is_an_infrastructure_failure_and_a_remote_255_is_a_crash() {
    let sshd = Sshd::start();
    let (bin, _) = fake_program("dropping-ssh", DROPPING_SSH);
    let dropping = format!(
        "{} {}",
        bin.path().join("dropping-ssh").display(),
        sshd.ssh_command()
    );
    let repo = oracle_repo();
    let grade = |ssh: &str, repo: &Path| {
        let runs = tempfile::tempdir().unwrap();
        let out = xstack()
            .args(["grade", TASK, "--repo"])
            .arg(repo)
            .args(["--runner", &ssh_runner(), "--headless", "--runs-dir"])
            .arg(runs.path())
            .env("XSTACK_SSH", ssh)
            .output()
            .unwrap();
        let dir = only_run_dir(runs.path());
        (out.status.code().unwrap(), result(&dir), text(&out))
    };
    let (code, r, out) = grade(&dropping, repo.path());
    assert_eq!(code, 3, "{out}");
    let phase = &r["phases"][0];
    assert_eq!(phase["outcome"], "infrastructure_failure", "{r:#}");
    assert_eq!(phase["failure"], serde_json::Value::Null);
    let detail = phase["outcome_detail"].as_str().unwrap();
    assert!(
        detail.contains("the connection to ssh://127.0.0.1")
            && detail.contains("Connection to 127.0.0.1 closed by remote host."),
        "{detail}"
    );

    // The same status from the remote command itself is the port's crash.
    std::fs::write(
        repo.path().join("train.py"),
        "import jax\nimport sys\nsys.exit(255)\n",
    )
    .unwrap();
    let (code, r, out) = grade(&sshd.ssh_command(), repo.path());
    assert_eq!(code, 1, "{out}");
    assert_eq!(r["phases"][0]["outcome"], "graded");
    assert_eq!(r["phases"][0]["failure"], "crash");
    assert!(
        r["phases"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "the run exited with status 255"),
        "{r:#}"
    );
}

/// A bench over a pool whose first runner drops its verify connection: the trial's
/// infrastructure failure is retried once, on the other runner, and passes; the dropping
/// runner is left out of the pool.
#[test]
fn a_bench_retries_a_lost_runner_once_on_another_one() {
    let sshd = Sshd::start();
    let (bin, _) = fake_program("dropping-ssh", DROPPING_SSH);
    let dropping = format!(
        "{} {}",
        bin.path().join("dropping-ssh").display(),
        sshd.ssh_command()
    );
    let out_dir = tempfile::tempdir().unwrap();
    let agent = format!("script:{TASK}/agents/pass.jsonl");
    let runner = ssh_runner();
    let out = xstack()
        .args(["bench", "--task", TASK, "--agent", &agent, "--jobs", "1"])
        .args(["--runner", &runner, "--runner", "local", "--out"])
        .arg(out_dir.path())
        .env("XSTACK_SSH", &dropping)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(
        printed.contains("infrastructure failure, retrying once")
            && printed.contains("closed by remote host"),
        "{printed}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["trials"].as_array().unwrap().len(), 1, "{report:#}");
    assert_eq!(report["trials"][0]["passed"], true, "{report:#}");
    assert_eq!(report["summary"][0]["graded"], 1);
}

/// The remote verify run is confined and audited like a local one: a dynamic import of torch
/// is caught on the machine and reported with its file.
#[test]
fn a_remote_verify_is_confined_and_audited() {
    let sshd = Sshd::start();
    let repo = oracle_repo();
    let case = root().join(TASK).join("adversarial/dynamic_join");
    overlay(&case, repo.path());
    let runs = tempfile::tempdir().unwrap();
    let out = xstack()
        .args(["grade", TASK, "--repo"])
        .arg(repo.path())
        .args(["--runner", &ssh_runner(), "--headless", "--runs-dir"])
        .arg(runs.path())
        .env("XSTACK_SSH", sshd.ssh_command())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let phase = result(&only_run_dir(runs.path()))["phases"][0].clone();
    assert_eq!(phase["failure"], "bypass", "{phase:#}");
    assert_eq!(phase["verify_confined"], true, "{phase:#}");
    let records = phase["finding_records"].as_array().unwrap();
    assert!(
        records
            .iter()
            .any(|r| r["kind"] == "runtime_import" && r["file"] == "train.py"),
        "{records:#?}"
    );
}

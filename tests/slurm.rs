//! The Slurm runner end to end, against a real one-node Slurm cluster: `munged`,
//! `slurmctld` and `slurmd` started by each test in a scratch folder, with a key, ports and
//! state of their own, and stopped by pid when the test ends. The runner's shared folder is
//! fixed (under the target folder) so the task's environment is built there once and reused.
// The cluster's helpers panic on what a test cannot go on without, as the tests do.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;

const TASK: &str = "tests/tasks/jsonl-protected";
/// CPUs the test cluster's node offers (more than this machine has: jobs share them).
const NODE_CPUS: u32 = 8;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A one-node Slurm cluster of this machine; its daemons are stopped when dropped.
struct Slurm {
    dir: tempfile::TempDir,
    /// munged, slurmctld, slurmd, in the order they started.
    daemons: Vec<Child>,
}

impl Slurm {
    /// Starts the cluster; None (the test skips) when Slurm is not installed, except under
    /// CI, where that fails the test.
    fn start() -> Option<Slurm> {
        let installed = require_tool("slurm (slurm-wlm and munge)", || {
            [
                "/usr/sbin/munged",
                "/usr/sbin/slurmctld",
                "/usr/sbin/slurmd",
            ]
            .iter()
            .all(|p| Path::new(p).exists())
                && ["srun", "salloc", "squeue", "scancel", "sinfo"]
                    .iter()
                    .all(|tool| which(tool).is_ok())
        });
        if !installed {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        // munged wants a key only its user can read.
        let key: Vec<u8> = (0..1024).map(|i| (i * 7 + 13) as u8).collect();
        std::fs::write(d.join("munge.key"), key).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join("munge.key"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        let log = |name: &str| std::fs::File::create(d.join(name)).unwrap();
        let munged = Command::new("/usr/sbin/munged")
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--socket={}", d.join("munge.sock").display()))
            .arg(format!("--key-file={}", d.join("munge.key").display()))
            .arg(format!("--pid-file={}", d.join("munged.pid").display()))
            .arg(format!("--log-file={}", d.join("munged.log").display()))
            .arg(format!("--seed-file={}", d.join("munge.seed").display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log("munged.err"))
            .spawn()
            .unwrap();
        let mut slurm = Slurm {
            dir,
            daemons: vec![munged],
        };
        assert!(
            wait_until(Duration::from_secs(10), || d.join("munge.sock").exists()),
            "munged did not start: {}",
            std::fs::read_to_string(d.join("munged.err")).unwrap_or_default()
        );
        let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let mem_mb = std::fs::read_to_string("/proc/meminfo")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap()
            / 1024
            / 2;
        let p = |name: &str| d.join(name).display().to_string();
        let conf = format!(
            "ClusterName=xstack{pid}\nSlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={ctld}\nSlurmdPort={slurmd}\n\
             AuthType=auth/munge\nAuthInfo=socket={sock}\nCredType=cred/munge\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSlurmUser=root\nSlurmdUser=root\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nSlurmdParameters=config_overrides\n\
             StateSaveLocation={state}\nSlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={ctld_pid}\nSlurmdPidFile={slurmd_pid}\n\
             SlurmctldLogFile={ctld_log}\nSlurmdLogFile={slurmd_log}\n\
             ReturnToService=2\nMpiDefault=none\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nSchedulerParameters=sched_interval=1\n\
             MinJobAge=2\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={NODE_CPUS} RealMemory={mem_mb} State=UNKNOWN\n\
             PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n",
            pid = std::process::id(),
            ctld = free_port(),
            slurmd = free_port(),
            sock = p("munge.sock"),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            slurmd_pid = p("slurmd.pid"),
            ctld_log = p("slurmctld.log"),
            slurmd_log = p("slurmd.log"),
        );
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        for daemon in ["/usr/sbin/slurmctld", "/usr/sbin/slurmd"] {
            let child = Command::new(daemon)
                .args(["-D", "-f"])
                .arg(d.join("slurm.conf"))
                .env("SLURM_CONF", d.join("slurm.conf"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log(&format!(
                    "{}.err",
                    Path::new(daemon).file_name().unwrap().to_string_lossy()
                )))
                .spawn()
                .unwrap();
            slurm.daemons.push(child);
        }
        let idle = wait_until(Duration::from_secs(60), || {
            slurm
                .command("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        assert!(
            idle,
            "the Slurm node did not become idle: {}",
            std::fs::read_to_string(d.join("slurmctld.log")).unwrap_or_default()
        );
        Some(slurm)
    }

    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    /// A Slurm client command for this cluster.
    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", self.conf());
        cmd
    }

    /// How long job `job_id` has waited in the queue, as Slurm counts it (seconds from its
    /// submission to its start, or to now while it waits); None once Slurm no longer lists it.
    fn pending_s(&self, job_id: &str) -> Option<u64> {
        let out = self
            .command("squeue")
            .args(["-h", "-j", job_id, "-O", "PendingTime"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    /// The jobs in the queue (`squeue`), one `ID STATE NAME` line each.
    fn queue(&self) -> Vec<String> {
        let out = self
            .command("squeue")
            .args(["-h", "-o", "%i %T %j"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for child in self.daemons.iter_mut().rev() {
            // SAFETY: kill with a pid this test spawned.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGTERM);
            }
            wait_until(Duration::from_secs(10), || {
                child.try_wait().ok().flatten().is_some()
            });
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The runner's folder on the cluster's shared file system (this machine's), kept between
/// test runs.
fn shared_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("slurm-runner");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn slurm_runner() -> String {
    format!("slurm://debug{}", shared_dir().display())
}

/// No file of the verify job `name` (the run folder's name, then the xstack process's id)
/// is left in the shared folder.
fn assert_nothing_left_of(name: &str) {
    let left: Vec<String> = std::fs::read_dir(shared_dir())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(name))
        .collect();
    assert!(left.is_empty(), "left in the shared folder: {left:?}");
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
fn slurm_runner_gives_the_same_verdicts_as_a_local_run() {
    let Some(slurm) = Slurm::start() else {
        return;
    };
    let env = [("SLURM_CONF", slurm.conf().display().to_string())];
    let local = std::thread::spawn(|| run_task("gap_then_pass", None, &[]));
    let runner = slurm_runner();
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
    // Each phase names its job; the journal records when each job started.
    let phases = result(&dir)["phases"].as_array().unwrap().clone();
    let mut job_ids = Vec::new();
    for phase in &phases {
        assert_eq!(phase["verify_confined"], true, "{phase:#}");
        assert_eq!(phase["runner"]["spec"], runner.as_str(), "{phase:#}");
        let id = phase["runner"]["job_id"].as_str().unwrap().to_string();
        assert!(id.parse::<u64>().is_ok(), "{phase:#}");
        assert!(phase["runner"]["queue_s"].as_f64().unwrap() >= 0.0);
        job_ids.push(id);
    }
    assert_ne!(job_ids[0], job_ids[1], "each phase is a job of its own");
    let started: Vec<String> = journal_events(&dir)
        .iter()
        .filter(|e| e["type"] == "runner_job" && e["state"] == "RUNNING")
        .map(|e| e["job_id"].as_str().unwrap().to_string())
        .collect();
    for id in &job_ids {
        assert!(
            started.contains(id),
            "job {id} not in the journal: {started:?}"
        );
    }
    assert!(journal_text(&dir).contains("eval_mse"));
    // Nothing is left: no job in the queue, no file in the shared folder.
    assert!(
        wait_until(Duration::from_secs(10), || slurm.queue().is_empty()),
        "{:?}",
        slurm.queue()
    );
    assert_nothing_left_of(&run_name(&dir));
    let replay = run(&["replay", dir.to_str().unwrap(), "--headless"]);
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay));
}

/// Kills the xstack process `pid` when dropped, so a failed test leaves no run waiting on a
/// cluster that is gone.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.0)).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("xstack") {
            // SAFETY: kill with a pid this test spawned, still an xstack process.
            unsafe {
                libc::kill(self.0 as i32, libc::SIGKILL);
            }
        }
    }
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

/// A task `id` without a Python environment whose run `command` runs within `timeout_s`.
fn shell_task(id: &str, command: &str, timeout_s: u32) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let task = root.path().join(id);
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(task.join("repo/train.py"), "import jax\n").unwrap();
    let toml = format!(
        r#"id = "{id}"
title = "A shell command"

[source]
path = "repo"

[published]
citation = "none"

[env]
packages = []

[run]
command = "{command}"
timeout_s = {timeout_s}

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
    (root, task, repo)
}

#[test]
fn a_slurm_run_aborted_mid_verify_leaves_no_job_and_no_process() {
    let Some(slurm) = Slurm::start() else {
        return;
    };
    let marker = format!("xstack-slurm-sleeper-{}", std::process::id());
    let (_root, task, repo) = shell_task(
        "sleeper",
        &format!(
            "if [ -t 1 ]; then echo slurm-run-has-a-terminal; fi; trap '' HUP; exec -a {marker} sleep 300"
        ),
        600,
    );
    let runs = tempfile::tempdir().unwrap();
    let mut child = xstack()
        .arg("grade")
        .arg(&task)
        .arg("--repo")
        .arg(&repo)
        .args(["--runner", &slurm_runner(), "--headless", "--runs-dir"])
        .arg(runs.path())
        .env("SLURM_CONF", slurm.conf())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _kill = KillOnDrop(child.id());
    assert!(
        wait_until(Duration::from_secs(60), || !processes_named(&marker)
            .is_empty()),
        "the run never started"
    );
    let dir = only_run_dir(runs.path());
    assert!(
        wait_until(Duration::from_secs(10), || journal_text(&dir)
            .contains("slurm-run-has-a-terminal")),
        "the run has no terminal"
    );
    let queued = slurm.queue();
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert!(queued[0].contains("RUNNING"), "{queued:?}");

    // Ctrl-C (SIGINT) to xstack: the job is cancelled.
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
    // Once xstack has exited, the job is gone and so is the sleeper, which ignored the
    // hangup.
    assert_eq!(slurm.queue(), Vec::<String>::new());
    assert!(
        wait_until(Duration::from_secs(10), || processes_named(&marker)
            .is_empty()),
        "a process of the job survived: {:?}",
        processes_named(&marker)
    );
    let job = format!("{}-{}", run_name(&dir), child.id());
    assert!(
        !srun_of_run_alive(&job),
        "an srun or salloc of the run survived"
    );
    assert_nothing_left_of(&job);
}

/// Whether an `srun` or `salloc` of the verify job `name` (the run folder's name and the
/// xstack process's id) is still alive.
fn srun_of_run_alive(name: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .any(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            (cmdline.starts_with("srun") || cmdline.starts_with("salloc")) && cmdline.contains(name)
        })
}

#[test]
fn a_job_held_in_the_queue_shows_as_queued_then_runs_and_its_wait_is_not_its_time() {
    let Some(slurm) = Slurm::start() else {
        return;
    };
    // A job that fills the node: xstack's waits for resources until it ends.
    let blocker_id = hold_the_node(&slurm);
    // The run takes a second of its 6 s timeout; it waits longer than that in the queue.
    let timeout_s = 6;
    let (_root, task, repo) = shell_task("held", "sleep 1; echo acc=1.0", timeout_s);
    let runs = tempfile::tempdir().unwrap();
    let child = xstack()
        .arg("grade")
        .arg(&task)
        .arg("--repo")
        .arg(&repo)
        .args([
            "--runner",
            &format!("{}?cpus=2", slurm_runner()),
            "--headless",
        ])
        .arg("--runs-dir")
        .arg(runs.path())
        .env("SLURM_CONF", slurm.conf())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _kill = KillOnDrop(child.id());
    let dir = loop_until_run_dir(runs.path());
    let queued = wait_until(Duration::from_secs(60), || {
        journal_text(&dir).contains("\"state\":\"PENDING\"")
    });
    assert!(queued, "{}", journal_text(&dir));
    let pending = journal_events(&dir)
        .into_iter()
        .find(|e| e["type"] == "runner_job" && e["state"] == "PENDING")
        .unwrap();
    let job_id = pending["job_id"].as_str().unwrap().to_string();
    assert_eq!(pending["reason"], "Resources", "{pending:#}");
    let listed = format!("{job_id} PENDING xstack-{}-{}", run_name(&dir), child.id());
    assert!(slurm.queue().contains(&listed), "{:?}", slurm.queue());
    // Held past the run's timeout (by Slurm's count of its wait), then the node is freed.
    assert!(
        wait_until(Duration::from_secs(60), || slurm
            .pending_s(&job_id)
            .is_some_and(|waited| waited > u64::from(timeout_s))),
        "job {job_id} was not held past the run's timeout: {:?}",
        slurm.queue()
    );
    assert!(!journal_text(&dir).contains("\"type\":\"run_started\""));
    let freed = slurm.command("scancel").arg(&blocker_id).status().unwrap();
    assert!(freed.success());
    let out = child.wait_with_output().unwrap();
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    assert!(
        printed.contains(&format!(
            "queued on slurm: job {job_id}, PENDING (Resources)"
        )),
        "{printed}"
    );
    assert!(
        printed.contains(&format!("slurm job {job_id} started after")),
        "{printed}"
    );
    let phase = result(&dir)["phases"][0].clone();
    assert_eq!(phase["verdict"], "pass", "{phase:#}");
    assert_eq!(phase["runner"]["job_id"], job_id.as_str(), "{phase:#}");
    let queue_s = phase["runner"]["queue_s"].as_f64().unwrap();
    assert!(queue_s > f64::from(timeout_s), "{phase:#}");
    assert!(
        phase["duration_s"].as_f64().unwrap() < f64::from(timeout_s),
        "{phase:#}"
    );
    assert!(wait_until(Duration::from_secs(10), || slurm
        .queue()
        .is_empty()));
}

/// A task with an environment: its build is a job of its own, and while the node is held
/// that job is shown as queued (its id and state in the progress lines and the journal)
/// until it runs, then the verify run's job likewise.
#[test]
fn an_environment_job_held_in_the_queue_shows_as_queued() {
    let Some(slurm) = Slurm::start() else {
        return;
    };
    let blocker_id = hold_the_node(&slurm);
    let repo = oracle_repo();
    let runs = tempfile::tempdir().unwrap();
    let child = xstack()
        .args(["grade", TASK, "--repo"])
        .arg(repo.path())
        .args(["--runner", &slurm_runner(), "--headless", "--runs-dir"])
        .arg(runs.path())
        .env("SLURM_CONF", slurm.conf())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _kill = KillOnDrop(child.id());
    let dir = loop_until_run_dir(runs.path());
    let queued = wait_until(Duration::from_secs(60), || {
        journal_text(&dir).contains("PENDING (Resources)")
    });
    assert!(queued, "{}", journal_text(&dir));
    let note = journal_events(&dir)
        .into_iter()
        .filter_map(|e| e["text"].as_str().map(str::to_string))
        .find(|t| t.contains("PENDING (Resources)"))
        .unwrap();
    let job_id = note
        .strip_prefix("queued on slurm: job ")
        .and_then(|rest| rest.split(',').next())
        .unwrap_or_else(|| panic!("{note}"))
        .to_string();
    let listed = format!(
        "{job_id} PENDING xstack-{}-{}-environment",
        run_name(&dir),
        child.id()
    );
    assert!(slurm.queue().contains(&listed), "{:?}", slurm.queue());
    let freed = slurm.command("scancel").arg(&blocker_id).status().unwrap();
    assert!(freed.success());
    let out = child.wait_with_output().unwrap();
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    for line in [
        format!("building or reusing the environment in slurm job {job_id}"),
        format!("queued on slurm: job {job_id}, PENDING (Resources)"),
        format!("slurm job {job_id} started after"),
    ] {
        assert!(printed.contains(&line), "{line:?} not in:\n{printed}");
    }
    assert!(wait_until(Duration::from_secs(10), || slurm
        .queue()
        .is_empty()));
}

/// Takes the whole node with a job named `blocker`, so that every job after it waits in the
/// queue; returns its id.
fn hold_the_node(slurm: &Slurm) -> String {
    let blocker = slurm
        .command("salloc")
        .args(["--no-shell", "--job-name=blocker", "--exclusive"])
        .args(["-c", &NODE_CPUS.to_string()])
        .output()
        .unwrap();
    assert!(blocker.status.success(), "{}", text(&blocker));
    slurm
        .queue()
        .iter()
        .find(|l| l.ends_with(" blocker"))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .unwrap()
}

/// The run folder's name.
fn run_name(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// The run folder xstack creates in `runs`, once it is there.
fn loop_until_run_dir(runs: &Path) -> PathBuf {
    assert!(
        wait_until(Duration::from_secs(30), || std::fs::read_dir(runs)
            .is_ok_and(|mut d| d.next().is_some())),
        "no run folder"
    );
    only_run_dir(runs)
}

#[test]
fn a_bench_over_slurm_runs_its_trials_as_jobs_and_a_rerun_runs_nothing() {
    let Some(slurm) = Slurm::start() else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let agent = format!("script:{TASK}/agents/pass.jsonl");
    let bench = || {
        xstack()
            .args(["bench", "--task", TASK, "--agent", &agent, "--repeats", "3"])
            .args(["--jobs", "3", "--runner", &slurm_runner(), "--out"])
            .arg(out_dir.path())
            .env("SLURM_CONF", slurm.conf())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = bench();
    let printed = text(&out);
    assert_eq!(out.status.code(), Some(0), "{printed}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.path().join("report.json")).unwrap())
            .unwrap();
    let trials = report["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 3, "{report:#}");
    let md = std::fs::read_to_string(out_dir.path().join("report.md")).unwrap();
    assert!(md.contains("| job | queue wait (s) |"), "{md}");
    let mut ids = Vec::new();
    for t in trials {
        assert_eq!(t["passed"], true, "{t:#}");
        let id = t["job_id"].as_str().unwrap().to_string();
        assert!(
            md.contains(&format!("| {id} |")),
            "job {id} not in report.md:\n{md}"
        );
        ids.push(id);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each trial is a job of its own: {ids:?}");
    assert!(wait_until(Duration::from_secs(10), || slurm
        .queue()
        .is_empty()));

    // Everything is settled: a rerun submits nothing, and the report still names the jobs
    // the trials ran as.
    let rerun = bench();
    let printed = text(&rerun);
    assert_eq!(rerun.status.code(), Some(0), "{printed}");
    assert!(
        printed.contains("3 settled in") && printed.contains(", 0 to run"),
        "{printed}"
    );
    let again = std::fs::read_to_string(out_dir.path().join("report.md")).unwrap();
    for id in &ids {
        assert!(again.contains(&format!("| {id} |")), "{again}");
    }
    assert!(slurm.queue().is_empty());
    // Slurm numbers jobs one after another: the next job gets the number after the last
    // trial's, so the rerun submitted none (not even the check that verify can be confined).
    let last: u64 = ids
        .iter()
        .map(|id| id.parse::<u64>().unwrap())
        .max()
        .unwrap();
    let marker = slurm
        .command("salloc")
        .args(["--no-shell", "--job-name=marker"])
        .output()
        .unwrap();
    let said = text(&marker);
    assert!(marker.status.success(), "{said}");
    let marker_id: u64 = said
        .split("Granted job allocation ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("no job id in {said:?}"));
    let _ = slurm.command("scancel").arg(marker_id.to_string()).status();
    assert_eq!(marker_id, last + 1, "the rerun submitted a job");
}

#[test]
fn bad_slurm_input_exits_3_before_the_agent_starts_with_slurms_message() {
    let Some(slurm) = Slurm::start() else {
        return;
    };
    let conf = slurm.conf().display().to_string();
    // An unknown partition.
    let runner = format!("slurm://nope{}", shared_dir().display());
    let (code, dir, out, _runs) = run_task("pass", Some(&runner), &[("SLURM_CONF", conf.clone())]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("invalid partition specified: nope"), "{out}");
    let phases = result(&dir)["phases"].as_array().unwrap().clone();
    assert_eq!(
        phases[0]["outcome"], "infrastructure_failure",
        "{phases:#?}"
    );
    let no_agent = |dir: &Path| {
        !journal_events(dir)
            .iter()
            .any(|e| e["type"] == "agent_started")
    };
    assert!(no_agent(&dir));

    // No srun on PATH.
    let bare = tempfile::tempdir().unwrap();
    for tool in ["bash", "python3", "uv", "bwrap", "env", "cp", "rm", "mkdir"] {
        if let Ok(path) = which(tool) {
            std::os::unix::fs::symlink(path, bare.path().join(tool)).unwrap();
        }
    }
    let (code, dir, out, _runs) = run_task(
        "pass",
        Some(&slurm_runner()),
        &[
            ("SLURM_CONF", conf),
            ("PATH", bare.path().display().to_string()),
        ],
    );
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("cannot run `srun`"), "{out}");
    assert!(no_agent(&dir));

    // A controller that does not answer.
    let silent = slurm.dir.path().join("silent.conf");
    let text_conf = std::fs::read_to_string(slurm.conf()).unwrap();
    let port_line = text_conf
        .lines()
        .find(|l| l.starts_with("SlurmctldPort="))
        .unwrap()
        .to_string();
    std::fs::write(
        &silent,
        text_conf.replace(&port_line, &format!("SlurmctldPort={}", free_port())),
    )
    .unwrap();
    let (code, dir, out, _runs) = run_task(
        "pass",
        Some(&slurm_runner()),
        &[("SLURM_CONF", silent.display().to_string())],
    );
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("Unable to contact slurm controller"), "{out}");
    assert!(no_agent(&dir));

    // In a bench, a trial whose job Slurm refuses is an infrastructure failure with Slurm's
    // message.
    let out_dir = tempfile::tempdir().unwrap();
    let agent = format!("script:{TASK}/agents/pass.jsonl");
    let bench = xstack()
        .args([
            "bench", "--task", TASK, "--agent", &agent, "--runner", &runner,
        ])
        .arg("--out")
        .arg(out_dir.path())
        .env("SLURM_CONF", slurm.conf())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let printed = text(&bench);
    assert_eq!(bench.status.code(), Some(3), "{printed}");
    assert!(
        printed.contains("invalid partition specified: nope"),
        "{printed}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["trials"][0]["failure"], "infra", "{report:#}");
    assert!(slurm.queue().is_empty());
}

/// The oracle: the task's repo with its solution laid over it.
fn oracle_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for part in ["repo", "solution"] {
        overlay(&root().join(TASK).join(part), dir.path());
    }
    dir
}

/// A verify run on Slurm is confined and audited like a local one: a dynamic import of
/// torch is caught on the compute node and reported with its file.
#[test]
fn a_slurm_verify_is_confined_and_audited() {
    let Some(slurm) = Slurm::start() else {
        return;
    };
    let repo = oracle_repo();
    overlay(
        &root().join(TASK).join("adversarial/dynamic_join"),
        repo.path(),
    );
    let runs = tempfile::tempdir().unwrap();
    let out = xstack()
        .args(["grade", TASK, "--repo"])
        .arg(repo.path())
        .args(["--runner", &slurm_runner(), "--headless", "--runs-dir"])
        .arg(runs.path())
        .env("SLURM_CONF", slurm.conf())
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
    assert!(wait_until(Duration::from_secs(10), || slurm
        .queue()
        .is_empty()));
}

/// The path of `tool` on PATH.
fn which(tool: &str) -> Result<PathBuf, ()> {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn a_run_aborted_while_its_job_is_queued_cancels_the_job() {
    let Some(slurm) = Slurm::start() else {
        return;
    };
    let blocker = slurm
        .command("salloc")
        .args(["--no-shell", "--job-name=blocker", "--exclusive"])
        .args(["-c", &NODE_CPUS.to_string()])
        .output()
        .unwrap();
    assert!(blocker.status.success(), "{}", text(&blocker));
    let (_root, task, repo) = shell_task("queued", "echo acc=1.0", 60);
    let runs = tempfile::tempdir().unwrap();
    let mut child = xstack()
        .arg("grade")
        .arg(&task)
        .arg("--repo")
        .arg(&repo)
        .args(["--runner", &slurm_runner(), "--headless", "--runs-dir"])
        .arg(runs.path())
        .env("SLURM_CONF", slurm.conf())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _kill = KillOnDrop(child.id());
    let dir = loop_until_run_dir(runs.path());
    assert!(
        wait_until(Duration::from_secs(60), || journal_text(&dir)
            .contains("\"state\":\"PENDING\"")),
        "{}",
        journal_text(&dir)
    );
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
    // Only the blocker is left in the queue; no salloc of the run survived.
    let left = slurm.queue();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].ends_with(" blocker"), "{left:?}");
    let job = format!("{}-{}", run_name(&dir), child.id());
    assert!(!srun_of_run_alive(&job), "an salloc of the run survived");
    assert_nothing_left_of(&job);
    assert!(!journal_text(&dir).contains("\"type\":\"run_started\""));
    assert_eq!(result(&dir)["interrupted"], "user_abort");
}

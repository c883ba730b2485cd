use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::remote::{cancel_script, prepare_script, run_script, stage_script};
use super::*;

fn parse_err(text: &str) -> String {
    match RunnerSpec::parse(text) {
        Err(e @ RunnerError::Parse { .. }) => e.to_string(),
        other => panic!("`{text}` should not parse, got {other:?}"),
    }
}

#[test]
fn parses_every_runner_form() {
    assert_eq!(RunnerSpec::parse("local").unwrap(), RunnerSpec::Local);
    let RunnerSpec::Ssh(t) = RunnerSpec::parse("ssh://me@tpu-host:2222/data/xstack").unwrap()
    else {
        panic!("not ssh")
    };
    assert_eq!(t.user.as_deref(), Some("me"));
    assert_eq!(t.host, "tpu-host");
    assert_eq!(t.port, Some(2222));
    assert_eq!(t.dir.as_str(), "/data/xstack");
    let RunnerSpec::Ssh(t) = RunnerSpec::parse("ssh://box/~/runs").unwrap() else {
        panic!("not ssh")
    };
    assert_eq!((t.user, t.port, t.dir.as_str()), (None, None, "runs"));
    let RunnerSpec::Ssh(t) = RunnerSpec::parse("ssh://[::1]:22/x").unwrap() else {
        panic!("not ssh")
    };
    assert_eq!((t.host.as_str(), t.port), ("::1", Some(22)));

    let RunnerSpec::Tpu(t) =
        RunnerSpec::parse("tpu://v4-32?zone=us-central2-b&project=p1&worker=all").unwrap()
    else {
        panic!("not tpu")
    };
    assert_eq!(t.name, "v4-32");
    assert_eq!(t.zone.as_deref(), Some("us-central2-b"));
    assert_eq!(t.project.as_deref(), Some("p1"));
    assert_eq!(t.worker, "all");
    assert_eq!(t.dir.as_str(), "xstack");
    let RunnerSpec::Tpu(t) = RunnerSpec::parse("tpu://one").unwrap() else {
        panic!("not tpu")
    };
    assert_eq!((t.worker.as_str(), t.zone), ("0", None));

    let RunnerSpec::K8s(t) =
        RunnerSpec::parse("k8s://trainer-0?namespace=ml&container=jax").unwrap()
    else {
        panic!("not k8s")
    };
    assert_eq!(t.pod, "trainer-0");
    assert_eq!(t.namespace.as_deref(), Some("ml"));
    assert_eq!(t.container.as_deref(), Some("jax"));
    assert_eq!(t.dir.as_str(), "/tmp/xstack");

    let RunnerSpec::Slurm(t) = RunnerSpec::parse(
        "slurm://gpu/scratch/xstack?account=ml&qos=normal&gres=gpu:1&time=2:00:00&constraint=a100&cpus=8&mem=64G",
    )
    .unwrap() else {
        panic!("not slurm")
    };
    assert_eq!(t.partition, "gpu");
    assert_eq!(t.dir.as_str(), "/scratch/xstack");
    assert_eq!(
        t.options(),
        [
            "--partition=gpu",
            "--account=ml",
            "--qos=normal",
            "--gres=gpu:1",
            "--time=2:00:00",
            "--constraint=a100",
            "--mem=64G",
            "--cpus-per-task=8"
        ]
    );
    assert!(!t.build_on_login);
    let RunnerSpec::Slurm(t) = RunnerSpec::parse("slurm://debug/~/x?build=login").unwrap() else {
        panic!("not slurm")
    };
    assert_eq!((t.dir.as_str(), t.build_on_login), ("x", true));
    assert_eq!(t.options(), ["--partition=debug"]);
}

#[test]
fn bad_specs_name_the_spec_and_the_problem() {
    for (spec, words) in [
        ("ssh://host", "no folder"),
        ("ssh://host/", "no folder"),
        ("ssh://host:99999/x", "bad port"),
        ("ssh://@host/x", "empty user"),
        ("tpu://?zone=z", "no TPU name"),
        ("tpu://t?zone=z&colour=red", "unknown parameter `colour`"),
        ("tpu://t?worker=first", "bad worker"),
        ("tpu://t?zone=a&zone=b", "given twice"),
        ("k8s://pod?namespace", "not KEY=VALUE"),
        ("slurm://gpu", "no folder"),
        ("slurm://gpu/", "no folder"),
        ("slurm:///x", "no partition name"),
        ("slurm://a,b/x", "one partition"),
        ("slurm://gpu/x?cpus=0", "bad cpus"),
        ("slurm://gpu/x?cpus=many", "bad cpus"),
        ("slurm://gpu/x?build=there", "bad build"),
        ("slurm://gpu/x?nodes=2", "unknown parameter `nodes`"),
        ("docker://x", "use local"),
        ("Local", "use local"),
    ] {
        let text = parse_err(spec);
        assert!(text.contains(&format!("`{spec}`")), "{text}");
        assert!(text.contains(words), "{spec}: {text}");
    }
}

#[test]
fn display_parses_back_to_the_same_spec() {
    for text in [
        "local",
        "ssh://me@h:2200/srv/x",
        "ssh://h/~/x",
        "ssh://[::1]/x",
        "tpu://t?zone=z&project=p&worker=all",
        "tpu://t?worker=0,1&dir=/mnt/x",
        "k8s://pod",
        "k8s://pod?namespace=n&container=c&dir=~/w",
        "slurm://debug/scratch/x",
        "slurm://gpu/~/x?account=a&gres=gpu:2&cpus=4&mem=8G&build=login",
    ] {
        let spec = RunnerSpec::parse(text).unwrap();
        assert_eq!(
            RunnerSpec::parse(&spec.to_string()).unwrap(),
            spec,
            "{text}"
        );
    }
}

/// Runs `script` with bash in `home` (a remote login starts in its home folder).
fn bash_in(home: &Path, script: &str) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(home)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn job(script: &str) -> Job {
    Job {
        run_id: "20250101T000000Z-t-script".to_string(),
        packages: Vec::new(),
        script: format!("set -e\n{script}\n"),
        vars: vec![
            ("XSTACK_SEED".to_string(), "7".to_string()),
            ("XSTACK_TASK".to_string(), "it's".to_string()),
        ],
        local_env: None,
        integrity: Default::default(),
    }
}

#[test]
fn remote_scripts_stage_run_and_clean_up_the_run_folder() {
    let home = tempfile::tempdir().unwrap();
    let dir = RemoteDir::parse("~/xs dir").unwrap();
    let job = job("echo seed=$XSTACK_SEED task=$XSTACK_TASK; pwd; test -f data.txt; exit 3");
    assert!(
        bash_in(home.path(), &prepare_script(&dir, &[]))
            .status
            .success()
    );
    assert!(
        bash_in(home.path(), &stage_script(&dir, &job.run_id))
            .status
            .success()
    );
    let run_folder = home.path().join("xs dir").join(&job.run_id);
    std::fs::create_dir_all(&run_folder).unwrap();
    std::fs::write(run_folder.join("data.txt"), "x").unwrap();

    let out = bash_in(home.path(), &run_script(&dir, &job, false));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("seed=7 task=it's"), "{text}");
    assert!(text.contains(&job.run_id), "{text}");
    assert!(
        !run_folder.exists(),
        "the run folder is removed after the run"
    );
    assert!(
        !home
            .path()
            .join("xs dir")
            .join(format!("{}.pgid", job.run_id))
            .exists()
    );

    // A run whose folder was never staged says so.
    let out = bash_in(home.path(), &run_script(&dir, &job, false));
    assert_eq!(out.status.code(), Some(97));
    assert!(String::from_utf8_lossy(&out.stdout).contains("verify folder is missing"));
}

#[test]
fn worker_logs_keep_the_output_and_worker_zero_prints_it() {
    let home = tempfile::tempdir().unwrap();
    let dir = RemoteDir::parse(&home.path().join("r").display().to_string()).unwrap();
    let job = job("echo from-the-run; exit 4");
    assert!(
        bash_in(home.path(), &stage_script(&dir, &job.run_id))
            .status
            .success()
    );
    std::fs::create_dir_all(Path::new(dir.as_str()).join(&job.run_id)).unwrap();
    let out = bash_in(home.path(), &run_script(&dir, &job, true));
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stdout).contains("from-the-run"));
    let log = Path::new(dir.as_str())
        .join(format!("{}.logs", job.run_id))
        .join("worker-0.log");
    assert!(
        std::fs::read_to_string(log)
            .unwrap()
            .contains("from-the-run")
    );
}

/// Polls `cond` until it holds or `limit` passes.
fn wait_for(limit: Duration, cond: impl FnMut() -> bool) -> bool {
    crate::poll::wait_until(limit, Duration::from_millis(20), cond)
}

#[test]
fn cancel_ends_the_whole_process_group_even_when_it_ignores_hangup() {
    let home = tempfile::tempdir().unwrap();
    let dir = RemoteDir::parse("runs").unwrap();
    let job = job("trap '' HUP TERM; sleep 300 & wait; sleep 300");
    assert!(
        bash_in(home.path(), &stage_script(&dir, &job.run_id))
            .status
            .success()
    );
    std::fs::create_dir_all(home.path().join("runs").join(&job.run_id)).unwrap();
    // A login session is its own process group, as under sshd.
    let mut child = Command::new("setsid")
        .arg("bash")
        .arg("-c")
        .arg(run_script(&dir, &job, false))
        .current_dir(home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pgid_file = home
        .path()
        .join("runs")
        .join(format!("{}.pgid", job.run_id));
    assert!(wait_for(Duration::from_secs(10), || pgid_file.exists()));
    let pgid: i32 = wait_for_content(&pgid_file).trim().parse().unwrap();
    assert!(crate::pty::group_alive(pgid));

    let out = bash_in(home.path(), &cancel_script(&dir, &job.run_id));
    assert!(out.status.success());
    assert!(wait_for(Duration::from_secs(10), || {
        child.try_wait().unwrap().is_some()
    }));
    assert!(wait_for(Duration::from_secs(10), || {
        !crate::pty::group_alive(pgid)
    }));
    assert!(!pgid_file.exists());
    assert!(!home.path().join("runs").join(&job.run_id).exists());
}

fn wait_for_content(path: &Path) -> String {
    let mut text = String::new();
    wait_for(Duration::from_secs(10), || {
        text = std::fs::read_to_string(path).unwrap_or_default();
        !text.trim().is_empty()
    });
    text
}

/// A runner that records its calls and can be made unreachable.
#[derive(Debug)]
struct FakeRunner {
    spec: RunnerSpec,
    reachable: bool,
    calls: Mutex<Vec<&'static str>>,
}

impl FakeRunner {
    fn new(name: &str, reachable: bool) -> Arc<FakeRunner> {
        Arc::new(FakeRunner {
            spec: RunnerSpec::parse(&format!("ssh://{name}/x")).unwrap(),
            reachable,
            calls: Mutex::new(Vec::new()),
        })
    }

    fn check(&self, call: &'static str) -> Result<(), RunnerError> {
        self.calls.lock().unwrap().push(call);
        if self.reachable {
            Ok(())
        } else {
            Err(RunnerError::Unreachable {
                runner: self.spec.to_string(),
                message: "Connection refused".to_string(),
            })
        }
    }

    fn calls(&self) -> Vec<&'static str> {
        self.calls.lock().unwrap().clone()
    }
}

impl Runner for FakeRunner {
    fn spec(&self) -> &RunnerSpec {
        &self.spec
    }
    fn prepare(
        &self,
        _job: &Job,
        _cancel: &AtomicBool,
        _progress: &mut dyn FnMut(String),
    ) -> Result<(), RunnerError> {
        self.check("prepare")
    }
    fn stage(&self, _job: &Job, verify_dir: &Path) -> Result<Launch, RunnerError> {
        self.check("stage")?;
        Ok(Launch {
            argv: vec![self.spec.to_string()],
            cwd: verify_dir.to_path_buf(),
            env: Vec::new(),
            confined: false,
            unconfined_reason: None,
        })
    }
    fn cancel(&self, _job: &Job) -> Result<(), RunnerError> {
        self.check("cancel")
    }
    fn confinement(&self) -> Result<(), String> {
        Ok(())
    }
    fn recorded(&self, _job: &Job) -> Result<Option<super::Recorded>, RunnerError> {
        Ok(None)
    }
    fn collect(&self, _job: &Job, _run_dir: &Path) -> Result<(), RunnerError> {
        self.check("collect")
    }
}

fn pool_of(runners: &[Arc<FakeRunner>]) -> Arc<RunnerPool> {
    Arc::new(RunnerPool::new(
        runners
            .iter()
            .map(|r| r.clone() as Arc<dyn Runner>)
            .collect(),
    ))
}

#[test]
fn an_unreachable_runner_is_left_out_and_the_run_takes_another() {
    let (down, up) = (FakeRunner::new("down", false), FakeRunner::new("up", true));
    let pool = pool_of(&[down.clone(), up.clone()]);
    let never = AtomicBool::new(false);
    let mut notes = Vec::new();
    let lease = pool
        .launch(&job("true"), Path::new("/v"), &never, &mut |l| {
            notes.push(l)
        })
        .unwrap();
    assert_eq!(lease.runner().to_string(), "ssh://up/x");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("ssh://down/x is unreachable"))
    );
    drop(lease);
    // The unreachable runner is not tried again; the prepared one is not prepared again.
    let lease = pool
        .launch(&job("true"), Path::new("/v"), &never, &mut |_| {})
        .unwrap();
    assert_eq!(lease.launch().argv, vec!["ssh://up/x".to_string()]);
    assert_eq!(down.calls(), vec!["prepare"]);
    assert_eq!(up.calls(), vec!["prepare", "stage", "stage"]);
    pool.prepare(&job("true"), &never, &mut |_| {}).unwrap();
    assert_eq!(up.calls().len(), 3);
}

#[test]
fn no_reachable_runner_is_an_error_with_the_underlying_causes() {
    let pool = pool_of(&[FakeRunner::new("a", false), FakeRunner::new("b", false)]);
    let never = AtomicBool::new(false);
    let err = pool.prepare(&job("true"), &never, &mut |_| {}).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RunnerError::NoneReachable(_)), "{text}");
    assert!(
        text.contains("ssh://a/x is unreachable: Connection refused"),
        "{text}"
    );
    assert!(text.contains("ssh://b/x"), "{text}");
    let err = pool
        .launch(&job("true"), Path::new("/v"), &never, &mut |_| {})
        .unwrap_err();
    assert!(matches!(err, RunnerError::NoneReachable(_)));
}

#[test]
fn a_run_waits_for_a_free_runner_and_can_be_cancelled_while_waiting() {
    let pool = pool_of(&[FakeRunner::new("only", true)]);
    let never = AtomicBool::new(false);
    let first = pool
        .launch(&job("true"), Path::new("/v"), &never, &mut |_| {})
        .unwrap();
    let cancel = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (pool, cancel) = (pool.clone(), cancel.clone());
        std::thread::spawn(move || {
            pool.launch(&job("true"), Path::new("/v"), &cancel, &mut |_| {})
                .map(|lease| lease.runner().to_string())
        })
    };
    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(matches!(
        waiter.join().unwrap(),
        Err(RunnerError::Cancelled)
    ));
    // Once the first run lets go of the runner, the next one gets it.
    let waiter = {
        let pool = pool.clone();
        std::thread::spawn(move || {
            let never = AtomicBool::new(false);
            pool.launch(&job("true"), Path::new("/v"), &never, &mut |_| {})
                .map(|lease| lease.runner().to_string())
        })
    };
    drop(first);
    assert_eq!(waiter.join().unwrap().unwrap(), "ssh://only/x");
}

#[test]
fn the_local_runner_runs_the_script_in_the_verify_folder() {
    let job = job("python train.py");
    let launch = LocalRunner.stage(&job, Path::new("/tmp/v")).unwrap();
    assert_eq!(launch.argv[..2], ["bash".to_string(), "-c".to_string()]);
    assert_eq!(launch.argv[2], job.script);
    assert_eq!(launch.cwd, Path::new("/tmp/v"));
    assert!(
        launch
            .env
            .contains(&("XSTACK_SEED".to_string(), "7".to_string()))
    );
}

/// The remote environment script on a machine without uv on its PATH brings uv from PyPI into
/// the runner folder once (one line says so), builds the environment with it, its package
/// files hardlinked from the runner folder's package store; the next prepare reuses both.
#[test]
fn the_remote_prepare_script_brings_uv_when_the_machine_has_none() {
    use std::os::unix::fs::MetadataExt;
    let home = tempfile::tempdir().unwrap();
    let dir = RemoteDir::parse("~/xs").unwrap();
    let packages = vec!["six".to_string()];
    let path: Vec<String> = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty() && !Path::new(d).join("uv").exists())
        .map(str::to_string)
        .collect();
    let prepare = || {
        Command::new("bash")
            .arg("-c")
            .arg(prepare_script(&dir, &packages))
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("PATH", path.join(":"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = prepare();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    let base = home.path().join("xs");
    assert!(
        text.contains(&format!(
            "uv is not on PATH on {}: installing uv {} from PyPI into {} (once)",
            String::from_utf8_lossy(&Command::new("hostname").output().unwrap().stdout).trim(),
            crate::env::uv::UV_VERSION,
            base.join("uv").display()
        )),
        "{text}"
    );
    assert!(!text.contains("cannot be installed"), "{text}");
    let env = base.join("envs").join(crate::env::env_key(&packages));
    let six = std::fs::read_dir(env.join("lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages/six.py");
    assert!(
        six.metadata().unwrap().nlink() >= 2,
        "six.py is not linked from the store"
    );
    assert!(base.join("uv-cache").is_dir());
    let again = prepare();
    let text = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(again.status.success(), "{text}");
    assert!(text.contains("using cached environment"), "{text}");
    assert!(!text.contains("installing uv"), "{text}");
}

//! Remote runners: ssh hosts, Cloud TPU VMs and Kubernetes pods, all driven through their
//! own command-line tools (`ssh`/`rsync`, `gcloud`, `kubectl`).
//!
//! On the machine, the runner's folder `DIR` holds `envs/<key>` (the task's environment, keyed
//! as [`crate::env::env_key`] keys the local cache, built with `uv` from the machine's `PATH`,
//! else with the uv bootstrapped from PyPI into `DIR/uv` once, its packages hardlinked from
//! `DIR/uv-cache`; with `python3 -m venv` and pip when the bootstrap cannot run) and, while a verify run lasts, `DIR/<run-id>` (the verify
//! folder), `DIR/<run-id>.pgid` (the run's process group, for cancelling) and, on TPU VMs,
//! `DIR/<run-id>.logs/worker-N.log`. The run happens in a remote terminal (`ssh -tt`,
//! `--ssh-flag=-tt`, `kubectl exec -it`); its folder is removed when it ends.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;

use super::spec::{K8sTarget, RemoteDir, SshTarget, TpuTarget};
use super::{Job, Launch, Recorded, Runner, RunnerError, RunnerSpec};
use crate::grade::audit;

/// Exit status of the environment script when the build itself failed (not the transport).
const ENV_BUILD_FAILED: i32 = 86;
/// Lines of a failed command's output kept in the error.
const TAIL_LINES: usize = 20;

/// The machine of a remote runner.
#[derive(Debug, Clone)]
enum Remote {
    Ssh(SshTarget),
    Tpu(TpuTarget),
    K8s(K8sTarget),
}

/// A runner on another machine.
#[derive(Debug, Clone)]
pub struct RemoteRunner {
    spec: RunnerSpec,
    remote: Remote,
}

impl RemoteRunner {
    /// A runner for a remote spec (`ssh://`, `tpu://` or `k8s://`); None for `local` and
    /// `slurm://` (see [`super::SlurmRunner`]).
    pub fn from_spec(spec: &RunnerSpec) -> Option<RemoteRunner> {
        let remote = match spec {
            RunnerSpec::Local | RunnerSpec::Slurm(_) => return None,
            RunnerSpec::Ssh(t) => Remote::Ssh(t.clone()),
            RunnerSpec::Tpu(t) => Remote::Tpu(t.clone()),
            RunnerSpec::K8s(t) => Remote::K8s(t.clone()),
        };
        Some(RemoteRunner {
            spec: spec.clone(),
            remote,
        })
    }

    fn dir(&self) -> &RemoteDir {
        match &self.remote {
            Remote::Ssh(t) => &t.dir,
            Remote::Tpu(t) => &t.dir,
            Remote::K8s(t) => &t.dir,
        }
    }

    /// A non-interactive command that runs `script` with bash on the machine.
    fn exec_argv(&self, script: &str) -> Vec<String> {
        match &self.remote {
            Remote::Ssh(t) => ssh_argv(t, false, script),
            Remote::Tpu(t) => tpu_ssh_argv(t, false, script),
            Remote::K8s(t) => kubectl_exec_argv(t, false, script),
        }
    }

    /// The command that runs `script` on the machine in a terminal.
    fn tty_argv(&self, script: &str) -> Vec<String> {
        match &self.remote {
            Remote::Ssh(t) => ssh_argv(t, true, script),
            Remote::Tpu(t) => tpu_ssh_argv(t, true, script),
            Remote::K8s(t) => kubectl_exec_argv(t, true, script),
        }
    }

    /// The command that copies the local folder `local` to the new folder `remote`.
    fn copy_argv(&self, local: &Path, remote: &str) -> Vec<String> {
        let local = local.display().to_string();
        match &self.remote {
            Remote::Ssh(t) => {
                let ssh = shell_words::join(ssh_base(t));
                // One connection: the remote side makes the runner folder, then receives.
                let rsync_path =
                    format!("mkdir -p {} && rsync", shell_words::quote(t.dir.as_str()));
                vec![
                    "rsync".into(),
                    "-a".into(),
                    "--delete".into(),
                    "-e".into(),
                    ssh,
                    format!("--rsync-path={rsync_path}"),
                    format!("{}/", local.trim_end_matches('/')),
                    format!("{}:{remote}/", ssh_destination(t)),
                ]
            }
            Remote::Tpu(t) => {
                let mut argv = gcloud_tpu(
                    "scp",
                    &["--recurse".into(), local, format!("{}:{remote}", t.name)],
                );
                argv.extend(tpu_flags(t));
                argv
            }
            Remote::K8s(t) => {
                let mut argv = vec![
                    "kubectl".into(),
                    "cp".into(),
                    local,
                    format!("{}:{remote}", t.pod),
                ];
                argv.extend(k8s_flags(t));
                argv
            }
        }
    }

    /// Runs `argv` to its end (see [`run_command`]).
    fn run(
        &self,
        argv: &[String],
        progress: &mut dyn FnMut(String),
    ) -> Result<Vec<String>, RunnerError> {
        run_command(&self.spec.to_string(), argv, &[], progress)
    }
}

impl Runner for RemoteRunner {
    fn spec(&self) -> &RunnerSpec {
        &self.spec
    }

    fn prepare(
        &self,
        job: &Job,
        _cancel: &AtomicBool,
        progress: &mut dyn FnMut(String),
    ) -> Result<(), RunnerError> {
        let script = prepare_script(self.dir(), &job.packages);
        self.run(&self.exec_argv(&script), progress).map(|_| ())
    }

    fn stage(&self, job: &Job, verify_dir: &Path) -> Result<Launch, RunnerError> {
        let dir = self.dir();
        // rsync --delete makes the folder an exact copy by itself; the other copies need an
        // empty place.
        if !matches!(self.remote, Remote::Ssh(_)) {
            self.run(
                &self.exec_argv(&stage_script(dir, &job.run_id)),
                &mut |_| {},
            )?;
        }
        self.run(
            &self.copy_argv(verify_dir, &dir.join(&job.run_id)),
            &mut |_| {},
        )?;
        let worker_logs = matches!(self.remote, Remote::Tpu(_));
        Ok(Launch {
            argv: self.tty_argv(&run_script(dir, job, worker_logs)),
            cwd: verify_dir.to_path_buf(),
            env: Vec::new(),
            // The wrapper confines the job when the machine has a working bubblewrap, and
            // records whether it did; the driver reads that back after the run.
            confined: false,
            unconfined_reason: None,
        })
    }

    fn cancel(&self, job: &Job) -> Result<(), RunnerError> {
        let script = cancel_script(self.dir(), &job.run_id);
        self.run(&self.exec_argv(&script), &mut |_| {}).map(|_| ())
    }

    fn confinement(&self) -> Result<(), String> {
        let probe = "if command -v bwrap >/dev/null 2>&1 && bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true >/dev/null 2>&1; then echo confinement yes; else echo confinement no; fi";
        match self.run(&self.exec_argv(probe), &mut |_| {}) {
            Ok(lines) if lines.iter().any(|l| l == "confinement no") => Err(format!(
                "verify on {} cannot be confined: no working bubblewrap (`bwrap`) there",
                self.spec
            )),
            _ => Ok(()),
        }
    }

    fn recorded(&self, job: &Job) -> Result<Option<Recorded>, RunnerError> {
        let lines = self.run(
            &self.exec_argv(&status_script(self.dir(), &job.run_id)),
            &mut |_| {},
        )?;
        Ok(parse_recorded(&lines))
    }

    fn collect(&self, job: &Job, run_dir: &Path) -> Result<(), RunnerError> {
        let Remote::Tpu(t) = &self.remote else {
            return Ok(());
        };
        let local = run_dir.join("workers");
        std::fs::create_dir_all(&local).map_err(|e| RunnerError::Unreachable {
            runner: self.spec.to_string(),
            message: format!("{}: {e}", local.display()),
        })?;
        let logs = self.dir().join(&format!("{}.logs", job.run_id));
        let mut argv = gcloud_tpu(
            "scp",
            &[
                format!("{}:{logs}/*", t.name),
                format!("{}/", local.display()),
            ],
        );
        argv.extend(tpu_flags(t));
        let fetched = self.run(&argv, &mut |_| {});
        let removed = self.run(
            &self.exec_argv(&format!("rm -rf {}", shell_words::quote(&logs))),
            &mut |_| {},
        );
        fetched.and(removed).map(|_| ())
    }
}

/// Runs `argv` on this machine to its end, without the variables named in `env_remove`,
/// sending each line of its output to `progress`; returns the lines. A failure is the runner being
/// unreachable (the program's own last lines say why), except the environment script's own
/// failure.
pub(crate) fn run_command(
    runner: &str,
    argv: &[String],
    env_remove: &[String],
    progress: &mut dyn FnMut(String),
) -> Result<Vec<String>, RunnerError> {
    let runner = runner.to_string();
    let unreachable = |message: String| RunnerError::Unreachable {
        runner: runner.clone(),
        message,
    };
    tracing::debug!("runner {runner}: {}", shell_words::join(argv));
    let Some((program, args)) = argv.split_first() else {
        return Err(unreachable("no command to run".to_string()));
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in env_remove {
        command.env_remove(name);
    }
    let mut child = command
        .spawn()
        .map_err(|e| unreachable(format!("cannot run `{program}`: {e}")))?;
    let stderr = child.stderr.take().map(|mut err| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            text
        })
    });
    let mut lines = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            progress(line.clone());
            lines.push(line);
        }
    }
    let status = child
        .wait()
        .map_err(|e| unreachable(format!("`{program}` failed: {e}")))?;
    let stderr = stderr
        .and_then(|h| h.join().ok())
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect::<Vec<_>>();
    if status.success() {
        return Ok(lines);
    }
    let mut all = lines;
    all.extend(stderr);
    let tail = all[all.len().saturating_sub(TAIL_LINES)..].join("\n");
    let tail = if tail.trim().is_empty() {
        format!("`{program}` exited with {status}")
    } else {
        tail
    };
    if status.code() == Some(ENV_BUILD_FAILED) {
        Err(RunnerError::Environment {
            runner,
            message: tail,
        })
    } else {
        Err(unreachable(tail))
    }
}

/// The names of this process's variables that hold secrets (API keys, tokens): left out of
/// the commands of a runner whose jobs inherit this process's environment (Slurm's), so no
/// verify run sees the agent's credentials.
pub(crate) fn secret_vars() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| {
            let upper = k.to_ascii_uppercase();
            crate::secrets::SECRET_SUFFIXES
                .iter()
                .any(|s| upper.ends_with(s))
        })
        .collect()
}

/// The ssh command: `$XSTACK_SSH` (split like a shell would) or `ssh`, then xstack's options
/// (earlier options win in ssh, so the user's own come first), then the port.
fn ssh_base(t: &SshTarget) -> Vec<String> {
    let mut argv = std::env::var("XSTACK_SSH")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .and_then(|s| shell_words::split(&s).ok())
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| vec!["ssh".to_string()]);
    for opt in ["BatchMode=yes", "ConnectTimeout=15", "LogLevel=ERROR"] {
        argv.push("-o".into());
        argv.push(opt.into());
    }
    if let Some(port) = t.port {
        argv.push("-p".into());
        argv.push(port.to_string());
    }
    argv
}

fn ssh_destination(t: &SshTarget) -> String {
    match &t.user {
        Some(user) => format!("{user}@{}", t.host),
        None => t.host.clone(),
    }
}

fn ssh_argv(t: &SshTarget, tty: bool, script: &str) -> Vec<String> {
    let mut argv = ssh_base(t);
    argv.push(if tty { "-tt" } else { "-T" }.into());
    argv.push(ssh_destination(t));
    argv.push(remote_bash(script));
    argv
}

/// The command string a login shell turns into `bash -c SCRIPT`.
fn remote_bash(script: &str) -> String {
    format!("bash -c {}", shell_words::quote(script))
}

fn gcloud_tpu(verb: &str, args: &[String]) -> Vec<String> {
    let mut argv: Vec<String> = ["gcloud", "compute", "tpus", "tpu-vm", verb]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.extend(args.iter().cloned());
    argv
}

fn tpu_flags(t: &TpuTarget) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(zone) = &t.zone {
        flags.push("--zone".into());
        flags.push(zone.clone());
    }
    if let Some(project) = &t.project {
        flags.push("--project".into());
        flags.push(project.clone());
    }
    flags.push(format!("--worker={}", t.worker));
    flags
}

fn tpu_ssh_argv(t: &TpuTarget, tty: bool, script: &str) -> Vec<String> {
    let mut argv = gcloud_tpu("ssh", std::slice::from_ref(&t.name));
    argv.extend(tpu_flags(t));
    argv.push("--command".into());
    argv.push(remote_bash(script));
    if tty {
        argv.push("--ssh-flag=-tt".into());
    }
    argv
}

fn k8s_flags(t: &K8sTarget) -> Vec<String> {
    let mut flags = Vec::new();
    if let Some(ns) = &t.namespace {
        flags.push("-n".into());
        flags.push(ns.clone());
    }
    if let Some(c) = &t.container {
        flags.push("-c".into());
        flags.push(c.clone());
    }
    flags
}

fn kubectl_exec_argv(t: &K8sTarget, tty: bool, script: &str) -> Vec<String> {
    let mut argv = vec!["kubectl".to_string(), "exec".to_string()];
    if tty {
        argv.push("-it".into());
    }
    argv.push(t.pod.clone());
    argv.extend(k8s_flags(t));
    argv.extend(["--".into(), "bash".into(), "-c".into(), script.into()]);
    argv
}

/// `B=<the runner folder, absolute>`, creating it when `create`.
fn base_line(dir: &RemoteDir, create: bool) -> String {
    let d = shell_words::quote(dir.as_str());
    if create {
        format!("B=$(mkdir -p {d} && cd {d} && pwd)")
    } else {
        format!("B=$(cd {d} 2>/dev/null && pwd)")
    }
}

/// Reaches the machine and builds the environment of `packages` under `DIR/envs/<key>` once,
/// under a lock; exits [`ENV_BUILD_FAILED`] when the build fails.
pub(crate) fn prepare_script(dir: &RemoteDir, packages: &[String]) -> String {
    let mut s = String::from("exec 2>&1\nset -e\n");
    s.push_str(&base_line(dir, true));
    s.push('\n');
    if packages.is_empty() {
        return s;
    }
    let key = crate::env::env_key(packages);
    let pkgs = shell_words::join(packages);
    let index = crate::env::index::index_args(packages);
    let index = if index.is_empty() {
        String::new()
    } else {
        format!("{} ", shell_words::join(&index))
    };
    let list = shell_words::quote(&packages.join(" ")).into_owned();
    s.push_str(&format!(
        r#"E="$B/envs/{key}"
mkdir -p "$B/envs"
exec 9>"$E.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
audit() {{
  for sp in "$E"/lib/python*/site-packages; do
    [ -d "$sp" ] || continue
    cat > "$sp/_xstack_audit.py" <<'XSTACK_AUDIT_PY'
{audit_py}XSTACK_AUDIT_PY
    echo 'import _xstack_audit' > "$sp/_xstack_audit.pth"
    cat > "$sp/_xstack_notebook.py" <<'XSTACK_NOTEBOOK_PY'
{notebook_py}XSTACK_NOTEBOOK_PY
  done
}}
if [ -f "$E/.xstack-complete" ]; then audit; echo "using cached environment $E on $(hostname)"; exit 0; fi
rm -rf "$E"
echo "building environment [$(echo {list})] in $E on $(hostname)"
{bootstrap}if [ -n "$UV" ]; then
  "$UV" venv --quiet --cache-dir "$B/{store}" "$E" || exit {ENV_BUILD_FAILED}
  "$UV" pip install --cache-dir "$B/{store}" --link-mode hardlink --python "$E/bin/python" {index}{pkgs} || exit {ENV_BUILD_FAILED}
else
  python3 -m venv "$E" || exit {ENV_BUILD_FAILED}
  "$E/bin/python" -m pip install --quiet {index}{pkgs} || exit {ENV_BUILD_FAILED}
fi
audit
echo {list} > "$E/.xstack-complete"
echo "environment ready: $E"
"#,
        audit_py = audit::module_source(),
        notebook_py = crate::notebook::runner_source(),
        bootstrap = crate::env::uv::remote_bootstrap_lines(),
        store = crate::env::uv::STORE_DIR,
    ));
    s
}

/// Makes room for the run's verify folder (before `gcloud scp` and `kubectl cp`).
pub(crate) fn stage_script(dir: &RemoteDir, run_id: &str) -> String {
    format!(
        "set -e\n{}\nrm -rf \"$B\"/{r} \"$B\"/{r}.logs \"$B\"/{r}.pgid \"$B\"/{r}.status\n",
        base_line(dir, true),
        r = shell_words::quote(run_id)
    )
}

/// Runs the job in its folder with the environment first on PATH, recording the process
/// group for [`cancel_script`]; removes the folder at the end and exits with the run's
/// status. On TPU VMs (`worker_logs`) every worker keeps its output in
/// `DIR/<run-id>.logs/worker-N.log` and worker 0 also prints it.
pub(crate) fn run_script(dir: &RemoteDir, job: &Job, worker_logs: bool) -> String {
    let r = shell_words::quote(&job.run_id).into_owned();
    let mut s = base_line(dir, false);
    s.push_str(&format!(
        " || {{ echo \"xstack: the runner folder {} is missing\"; exit 97; }}\n",
        dir.as_str()
    ));
    s.push_str(&format!(
        "cd \"$B\"/{r} || {{ echo \"xstack: the verify folder is missing\"; exit 97; }}\n"
    ));
    s.push_str(&format!(
        "{{ read -r _ _ _ _ G _ < /proc/$$/stat && echo \"$G\" > \"$B\"/{r}.pgid; }} 2>/dev/null\n"
    ));
    if !job.packages.is_empty() {
        let key = crate::env::env_key(&job.packages);
        s.push_str(&format!(
            "export VIRTUAL_ENV=\"$B/envs/{key}\" PATH=\"$B/envs/{key}/bin:$PATH\"\n"
        ));
    }
    for (name, value) in &job.vars {
        s.push_str(&format!("export {name}={}\n", shell_words::quote(value)));
    }
    s.push_str(&confine_lines(&r, job));
    let inner = format!("\"${{WRAP[@]}}\" {}", remote_bash(&job.script));
    if worker_logs {
        s.push_str(&format!(
            r#"W=$(curl -s -m 2 -H 'Metadata-Flavor: Google' http://metadata.google.internal/computeMetadata/v1/instance/attributes/agent-worker-number 2>/dev/null) || W=0
case "$W" in ''|*[!0-9]*) W=0;; esac
mkdir -p "$B"/{r}.logs
set -o pipefail
if [ "$W" = 0 ]; then {inner} 2>&1 | tee "$B"/{r}.logs/worker-$W.log; else {inner} > "$B"/{r}.logs/worker-$W.log 2>&1; fi
"#
        ));
    } else {
        s.push_str(&inner);
        s.push('\n');
    }
    s.push_str(&format!(
        "rc=$?\necho \"$rc $C\" > \"$B\"/{r}.status\ncd \"$B\" && rm -rf \"$B\"/{r} \"$B\"/{r}.pgid\nexit $rc\n"
    ));
    s
}

/// Prints `status N C` when the run's wrapper recorded its job's exit status N (C: 1 when
/// it was confined), then `audit LINE` for each line of the runtime audit's log; removes
/// both records. Prints nothing when the wrapper recorded nothing.
pub(crate) fn status_script(dir: &RemoteDir, run_id: &str) -> String {
    let r = shell_words::quote(run_id);
    format!(
        r#"{base} || exit 0
f="$B"/{r}.status
if [ -f "$f" ]; then
  echo "status $(cat "$f")"
  for l in "$B"/{r}.audit/log/*.jsonl; do [ -f "$l" ] && sed 's/^/audit /' "$l"; done
fi
rm -rf "$f" "$B"/{r}.audit
exit 0
"#,
        base = base_line(dir, false)
    )
}

/// What [`status_script`] printed, None when the wrapper recorded nothing.
pub(crate) fn parse_recorded(lines: &[String]) -> Option<Recorded> {
    let status = lines.iter().find_map(|l| l.strip_prefix("status "))?;
    let mut words = status.split_whitespace();
    let exit = words.next()?.parse().ok()?;
    Some(Recorded {
        exit,
        confined: words.next() == Some("1"),
        audit: lines
            .iter()
            .filter_map(|l| l.strip_prefix("audit "))
            .map(str::to_string)
            .collect(),
    })
}

/// The wrapper's lines that write the run's audit configuration into `$B/<run-id>.audit` and
/// set `WRAP` to bubblewrap's command line when bubblewrap works on the machine (`C=1`), binding
/// what the local runner's `confine.rs` binds; otherwise `WRAP` stays empty and the audit is
/// configured through `XSTACK_AUDIT_CONFIG`.
fn confine_lines(r: &str, job: &Job) -> String {
    let integrity = &job.integrity;
    let mut s = String::from(
        "C=0\nWRAP=()\nif command -v bwrap >/dev/null 2>&1 && bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true >/dev/null 2>&1; then C=1; fi\n",
    );
    s.push_str(&format!(
        "A=\"$B\"/{r}.audit\nrm -rf \"$A\"\nmkdir -p \"$A/log\" \"$A/hook\"\n"
    ));
    if integrity.audit_dir.is_some() {
        let config = audit::config_json("@ROOT@", "@LOG@", &integrity.forbid, &integrity.protected);
        s.push_str(&format!(
            "CFG={}\nCFG=${{CFG//@ROOT@/$B/{r}}}\nif [ \"$C\" = 1 ]; then CFG=${{CFG//@LOG@/{log}}}; else CFG=${{CFG//@LOG@/$A/log}}; export {var}=\"$A/audit.json\"; fi\nprintf '%s' \"$CFG\" > \"$A/audit.json\"\n",
            shell_words::quote(&config),
            log = audit::CONFINED_LOG,
            var = audit::CONFIG_VAR,
        ));
        if job.packages.is_empty() {
            s.push_str(&format!(
                "cat > \"$A/hook/_xstack_audit.py\" <<'XSTACK_AUDIT_PY'\n{}XSTACK_AUDIT_PY\necho 'import _xstack_audit' > \"$A/hook/sitecustomize.py\"\nif [ \"$C\" = 1 ]; then export PYTHONPATH={hook}; else export PYTHONPATH=\"$A/hook\"; fi\n",
                audit::module_source(),
                hook = audit::CONFINED_HOOK,
            ));
        }
    }
    let net = if integrity.network {
        " --share-net"
    } else {
        ""
    };
    let protected: String = integrity
        .protected
        .iter()
        .map(|p| {
            let f = shell_words::quote(&p.file);
            format!("  [ -f \"$B\"/{r}/{f} ] && WRAP+=(--ro-bind \"$B\"/{r}/{f} \"$B\"/{r}/{f})\n")
        })
        .collect();
    s.push_str(&format!(
        r#"if [ "$C" = 1 ]; then
  WRAP=(bwrap --die-with-parent --unshare-all{net})
  for d in /usr /bin /sbin /lib /lib32 /lib64 /etc /opt; do
    if [ -L "$d" ]; then WRAP+=(--symlink "$(readlink "$d")" "$d"); elif [ -d "$d" ]; then WRAP+=(--ro-bind "$d" "$d"); fi
  done
  WRAP+=(--proc /proc --dev /dev --ro-bind-try /sys /sys --tmpfs /tmp)
  for d in /dev/nvidia* /dev/accel* /dev/vfio /dev/kfd /dev/dri; do [ -e "$d" ] && WRAP+=(--dev-bind "$d" "$d"); done
  if [ -n "${{VIRTUAL_ENV:-}}" ]; then
    WRAP+=(--ro-bind "$VIRTUAL_ENV" "$VIRTUAL_ENV")
    H=$(sed -n 's/^home *= *//p' "$VIRTUAL_ENV/pyvenv.cfg" 2>/dev/null)
  else
    H=$(python3 -c 'import sys; print(sys.base_prefix + "/bin")' 2>/dev/null)
    [ -n "$H" ] && export PATH="$H:$PATH"
  fi
  if [ -n "$H" ]; then
    P=$(dirname "$(readlink -f "$H")")
    case "$P" in /usr|/usr/*|/opt|/opt/*) ;; *) WRAP+=(--ro-bind "$P" "$P");; esac
  fi
  WRAP+=(--bind "$B"/{r} "$B"/{r})
{protected}  WRAP+=(--ro-bind-try "$A/audit.json" {config} --bind "$A/log" {log} --ro-bind "$A/hook" {hook})
  WRAP+=(--setenv HOME /tmp --setenv TMPDIR /tmp --chdir "$B"/{r} --)
fi
"#,
        config = audit::CONFINED_CONFIG,
        log = audit::CONFINED_LOG,
        hook = audit::CONFINED_HOOK,
    ));
    s
}

/// Ends the run's process group on the machine (SIGTERM, up to 2 s, SIGKILL) and removes its
/// folder.
pub(crate) fn cancel_script(dir: &RemoteDir, run_id: &str) -> String {
    let r = shell_words::quote(run_id);
    format!(
        r#"{base} || exit 0
f="$B"/{r}.pgid
if [ -f "$f" ]; then
  G=$(cat "$f"); case "$G" in ''|*[!0-9]*) G=0;; esac
  if [ "$G" -gt 1 ]; then
    kill -TERM -- -"$G" 2>/dev/null
    i=0
    while [ $i -lt 20 ] && kill -0 -- -"$G" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
    kill -KILL -- -"$G" 2>/dev/null
  fi
fi
rm -rf "$B"/{r} "$f" "$B"/{r}.audit "$B"/{r}.status
exit 0
"#,
        base = base_line(dir, false)
    )
}

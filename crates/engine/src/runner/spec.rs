//! `--runner` specs: `local`, `ssh://[USER@]HOST[:PORT]/DIR`,
//! `tpu://NAME?zone=ZONE&project=PROJECT&worker=all`, `k8s://POD?namespace=NS&container=C` and
//! `slurm://PARTITION/DIR?account=A&qos=Q&gres=G&time=T&constraint=C&cpus=N&mem=M&build=login`.

use std::collections::BTreeMap;
use std::fmt;

use super::RunnerError;

/// Where verify runs happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerSpec {
    /// This machine.
    Local,
    /// A host reached with ssh; files go over rsync.
    Ssh(SshTarget),
    /// A Cloud TPU VM (one or every worker of a slice) reached with `gcloud`.
    Tpu(TpuTarget),
    /// A Kubernetes pod reached with `kubectl`.
    K8s(K8sTarget),
    /// A Slurm partition reached with `srun`; files go over the cluster's shared file system.
    Slurm(SlurmTarget),
}

/// `slurm://PARTITION/DIR?account=A&qos=Q&gres=G&time=T&constraint=C&cpus=N&mem=M&build=login`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmTarget {
    /// `--partition`.
    pub partition: String,
    /// The folder on the cluster's shared file system (seen alike from this machine and the
    /// compute nodes) that holds verify copies and environments.
    pub dir: RemoteDir,
    /// `--account`.
    pub account: Option<String>,
    /// `--qos`.
    pub qos: Option<String>,
    /// `--gres` (e.g. `gpu:1`).
    pub gres: Option<String>,
    /// `--time` (Slurm's time format, e.g. `2:00:00`).
    pub time: Option<String>,
    /// `--constraint` (node features).
    pub constraint: Option<String>,
    /// `--cpus-per-task`.
    pub cpus: Option<u32>,
    /// `--mem` (e.g. `16G`).
    pub mem: Option<String>,
    /// Build the task's environment on this machine (`build=login`) rather than in a job.
    pub build_on_login: bool,
}

impl SlurmTarget {
    /// The resource options every job and step of the runner gets, in `KEY=VALUE` order of
    /// the spec: `--partition=…`, `--account=…`, ….
    pub fn options(&self) -> Vec<String> {
        let mut opts = vec![format!("--partition={}", self.partition)];
        let pairs = [
            ("account", self.account.as_deref()),
            ("qos", self.qos.as_deref()),
            ("gres", self.gres.as_deref()),
            ("time", self.time.as_deref()),
            ("constraint", self.constraint.as_deref()),
            ("mem", self.mem.as_deref()),
        ];
        opts.extend(
            pairs
                .iter()
                .filter_map(|(k, v)| v.map(|v| format!("--{k}={v}"))),
        );
        if let Some(cpus) = self.cpus {
            opts.push(format!("--cpus-per-task={cpus}"));
        }
        opts
    }
}

/// `ssh://[USER@]HOST[:PORT]/DIR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    /// Login name; the ssh config's (or the local user's) when absent.
    pub user: Option<String>,
    /// Host name or address (a name from the ssh config works too).
    pub host: String,
    /// Port; the ssh config's (or 22) when absent.
    pub port: Option<u16>,
    /// The folder on the host that holds run folders and environments.
    pub dir: RemoteDir,
}

/// `tpu://NAME?zone=ZONE&project=PROJECT&worker=all[&dir=DIR]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TpuTarget {
    /// The TPU VM's name.
    pub name: String,
    /// `--zone`; gcloud's configured zone when absent.
    pub zone: Option<String>,
    /// `--project`; gcloud's configured project when absent.
    pub project: Option<String>,
    /// `--worker`: `all`, or worker numbers such as `0` or `0,1` (default `0`).
    pub worker: String,
    /// The folder on each worker (default `xstack` in the login folder).
    pub dir: RemoteDir,
}

/// `k8s://POD?namespace=NS&container=C[&dir=DIR]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K8sTarget {
    /// The pod's name.
    pub pod: String,
    /// `-n`; kubectl's current namespace when absent.
    pub namespace: Option<String>,
    /// `-c`; the pod's default container when absent.
    pub container: Option<String>,
    /// The folder in the container (default `/tmp/xstack`).
    pub dir: RemoteDir,
}

/// A folder on a remote machine: absolute, or relative to the folder a login starts in
/// (`~/x` is written `x`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteDir(String);

impl RemoteDir {
    /// Parses a folder: `/abs`, `rel`, `~` or `~/rel`.
    pub fn parse(text: &str) -> Result<RemoteDir, String> {
        if text.is_empty() {
            return Err("the folder is empty".to_string());
        }
        if text.chars().any(char::is_control) {
            return Err("the folder contains a control character".to_string());
        }
        let path = match text {
            "~" | "~/" => ".".to_string(),
            t if t.starts_with("~/") => t[2..].to_string(),
            t if t.starts_with('~') => {
                return Err("only the login user's home (`~/`) is supported".to_string());
            }
            t => t.to_string(),
        };
        let trimmed = path.trim_end_matches('/');
        Ok(RemoteDir(if trimmed.is_empty() {
            "/".to_string()
        } else {
            trimmed.to_string()
        }))
    }

    /// The folder as a path (relative paths are relative to the login folder).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A path inside the folder.
    pub fn join(&self, name: &str) -> String {
        match self.0.as_str() {
            "." => name.to_string(),
            "/" => format!("/{name}"),
            dir => format!("{dir}/{name}"),
        }
    }

    fn display_home(&self) -> String {
        if self.0.starts_with('/') {
            self.0.clone()
        } else if self.0 == "." {
            "~".to_string()
        } else {
            format!("~/{}", self.0)
        }
    }
}

impl RunnerSpec {
    /// Parses a `--runner` spec; the error names the spec and what is wrong.
    pub fn parse(text: &str) -> Result<RunnerSpec, RunnerError> {
        let err = |reason: String| RunnerError::Parse {
            spec: text.to_string(),
            reason,
        };
        if text == "local" {
            return Ok(RunnerSpec::Local);
        }
        if let Some(rest) = text.strip_prefix("ssh://") {
            return parse_ssh(rest).map(RunnerSpec::Ssh).map_err(err);
        }
        if let Some(rest) = text.strip_prefix("tpu://") {
            return parse_tpu(rest).map(RunnerSpec::Tpu).map_err(err);
        }
        if let Some(rest) = text.strip_prefix("k8s://") {
            return parse_k8s(rest).map(RunnerSpec::K8s).map_err(err);
        }
        if let Some(rest) = text.strip_prefix("slurm://") {
            return parse_slurm(rest).map(RunnerSpec::Slurm).map_err(err);
        }
        Err(err(
            "use local, ssh://[USER@]HOST[:PORT]/DIR, tpu://NAME?zone=ZONE&project=PROJECT&worker=all, k8s://POD?namespace=NS&container=C or slurm://PARTITION/DIR?account=A&gres=G"
                .to_string(),
        ))
    }

    /// Whether this is the local runner.
    pub fn is_local(&self) -> bool {
        matches!(self, RunnerSpec::Local)
    }
}

impl fmt::Display for RunnerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunnerSpec::Local => write!(f, "local"),
            RunnerSpec::Ssh(t) => {
                write!(f, "ssh://")?;
                if let Some(user) = &t.user {
                    write!(f, "{user}@")?;
                }
                if t.host.contains(':') {
                    write!(f, "[{}]", t.host)?;
                } else {
                    write!(f, "{}", t.host)?;
                }
                if let Some(port) = t.port {
                    write!(f, ":{port}")?;
                }
                let dir = t.dir.display_home();
                if dir.starts_with('/') {
                    write!(f, "{dir}")
                } else {
                    write!(f, "/{dir}")
                }
            }
            RunnerSpec::Tpu(t) => {
                write!(f, "tpu://{}?", t.name)?;
                let mut parts = Vec::new();
                if let Some(zone) = &t.zone {
                    parts.push(format!("zone={zone}"));
                }
                if let Some(project) = &t.project {
                    parts.push(format!("project={project}"));
                }
                parts.push(format!("worker={}", t.worker));
                if t.dir.as_str() != "xstack" {
                    parts.push(format!("dir={}", t.dir.display_home()));
                }
                write!(f, "{}", parts.join("&"))
            }
            RunnerSpec::K8s(t) => {
                write!(f, "k8s://{}", t.pod)?;
                let mut parts = Vec::new();
                if let Some(ns) = &t.namespace {
                    parts.push(format!("namespace={ns}"));
                }
                if let Some(c) = &t.container {
                    parts.push(format!("container={c}"));
                }
                if t.dir.as_str() != "/tmp/xstack" {
                    parts.push(format!("dir={}", t.dir.display_home()));
                }
                if !parts.is_empty() {
                    write!(f, "?{}", parts.join("&"))?;
                }
                Ok(())
            }
            RunnerSpec::Slurm(t) => {
                let dir = t.dir.display_home();
                let sep = if dir.starts_with('/') { "" } else { "/" };
                write!(f, "slurm://{}{sep}{dir}", t.partition)?;
                let cpus = t.cpus.map(|c| c.to_string());
                let parts: Vec<String> = [
                    ("account", t.account.as_deref()),
                    ("qos", t.qos.as_deref()),
                    ("gres", t.gres.as_deref()),
                    ("time", t.time.as_deref()),
                    ("constraint", t.constraint.as_deref()),
                    ("cpus", cpus.as_deref()),
                    ("mem", t.mem.as_deref()),
                    ("build", t.build_on_login.then_some("login")),
                ]
                .iter()
                .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
                .collect();
                if !parts.is_empty() {
                    write!(f, "?{}", parts.join("&"))?;
                }
                Ok(())
            }
        }
    }
}

fn parse_ssh(rest: &str) -> Result<SshTarget, String> {
    const FORM: &str = "expected ssh://[USER@]HOST[:PORT]/DIR";
    let Some((authority, path)) = rest.split_once('/') else {
        return Err(format!("no folder on the host: {FORM}"));
    };
    if path.is_empty() {
        return Err(format!("no folder on the host: {FORM}"));
    }
    let (user, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) if !u.is_empty() => (Some(u.to_string()), h),
        Some(_) => return Err(format!("empty user name: {FORM}")),
        None => (None, authority),
    };
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        let Some((host, after)) = inner.split_once(']') else {
            return Err(format!("unclosed `[` in the host: {FORM}"));
        };
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or(format!("bad port: {FORM}"))?),
        };
        (host.to_string(), port)
    } else {
        match hostport.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (hostport.to_string(), None),
        }
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(format!("bad host `{host}`: {FORM}"));
    }
    let port = match port {
        None => None,
        Some(p) => Some(
            p.parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or(format!("bad port `{p}`: {FORM}"))?,
        ),
    };
    // `ssh://host/abs/dir` is /abs/dir; `ssh://host/~/dir` is dir in the login folder.
    let dir = if path == "~" || path.starts_with("~/") {
        RemoteDir::parse(path)?
    } else {
        RemoteDir::parse(&format!("/{path}"))?
    };
    Ok(SshTarget {
        user,
        host,
        port,
        dir,
    })
}

/// Splits `NAME?k=v&k=v` into the name and its parameters; only `allowed` keys are accepted.
fn name_and_query<'a>(
    rest: &'a str,
    what: &str,
    allowed: &[&str],
) -> Result<(&'a str, BTreeMap<&'a str, &'a str>), String> {
    let (name, query) = rest.split_once('?').unwrap_or((rest, ""));
    if name.is_empty() {
        return Err(format!("no {what} name"));
    }
    if name
        .chars()
        .any(|c| c.is_whitespace() || c == '/' || c.is_control())
    {
        return Err(format!("bad {what} name `{name}`"));
    }
    let mut params = BTreeMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("`{pair}` is not KEY=VALUE"));
        };
        if !allowed.contains(&key) {
            return Err(format!(
                "unknown parameter `{key}` (known: {})",
                allowed.join(", ")
            ));
        }
        if value.is_empty() || value.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!("bad value for `{key}`: `{value}`"));
        }
        if params.insert(key, value).is_some() {
            return Err(format!("`{key}` is given twice"));
        }
    }
    Ok((name, params))
}

fn parse_tpu(rest: &str) -> Result<TpuTarget, String> {
    let (name, params) = name_and_query(rest, "TPU", &["zone", "project", "worker", "dir"])?;
    let worker = params.get("worker").copied().unwrap_or("0");
    let numbers = worker
        .split(',')
        .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()));
    if worker != "all" && !numbers {
        return Err(format!(
            "bad worker `{worker}`: use all, a worker number, or numbers separated by commas"
        ));
    }
    let dir = RemoteDir::parse(params.get("dir").copied().unwrap_or("xstack"))?;
    Ok(TpuTarget {
        name: name.to_string(),
        zone: params.get("zone").map(|s| s.to_string()),
        project: params.get("project").map(|s| s.to_string()),
        worker: worker.to_string(),
        dir,
    })
}

fn parse_k8s(rest: &str) -> Result<K8sTarget, String> {
    let (pod, params) = name_and_query(rest, "pod", &["namespace", "container", "dir"])?;
    let dir = RemoteDir::parse(params.get("dir").copied().unwrap_or("/tmp/xstack"))?;
    Ok(K8sTarget {
        pod: pod.to_string(),
        namespace: params.get("namespace").map(|s| s.to_string()),
        container: params.get("container").map(|s| s.to_string()),
        dir,
    })
}

fn parse_slurm(rest: &str) -> Result<SlurmTarget, String> {
    const FORM: &str = "expected slurm://PARTITION/DIR[?account=A&qos=Q&gres=G&time=T&constraint=C&cpus=N&mem=M&build=login]";
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let Some((partition, dir)) = path.split_once('/').filter(|(_, d)| !d.is_empty()) else {
        return Err(format!("no folder on the cluster: {FORM}"));
    };
    let (partition, params) = name_and_query(
        &format!("{partition}?{query}"),
        "partition",
        &[
            "account",
            "qos",
            "gres",
            "time",
            "constraint",
            "cpus",
            "mem",
            "build",
        ],
    )
    .map(|(p, params)| {
        let owned: BTreeMap<String, String> = params
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (p.to_string(), owned)
    })?;
    if partition.contains(',') {
        return Err(format!("one partition only, got `{partition}`: {FORM}"));
    }
    let dir = if dir == "~" || dir.starts_with("~/") {
        RemoteDir::parse(dir)?
    } else {
        RemoteDir::parse(&format!("/{dir}"))?
    };
    let get = |k: &str| params.get(k).cloned();
    let cpus = match get("cpus") {
        None => None,
        Some(c) => Some(c.parse::<u32>().ok().filter(|c| *c > 0).ok_or(format!(
            "bad cpus `{c}`: a whole number of CPUs, at least 1"
        ))?),
    };
    let build_on_login = match get("build").as_deref() {
        None | Some("job") => false,
        Some("login") => true,
        Some(other) => return Err(format!("bad build `{other}`: use login or job")),
    };
    Ok(SlurmTarget {
        partition,
        dir,
        account: get("account"),
        qos: get("qos"),
        gres: get("gres"),
        time: get("time"),
        constraint: get("constraint"),
        cpus,
        mem: get("mem"),
        build_on_login,
    })
}

//! `--sandbox`: the agent process confined with bubblewrap. The workspace is writable, the
//! rest of the file system read-only (the agent's own session folders under `$HOME` stay
//! writable so it can resume), `/tmp` is private, and the network is cut off unless
//! `--sandbox-net allow` shares the host's. Bubblewrap cannot let through only an agent's API
//! hosts, so an agent that declares hosts needs an explicit `--sandbox-net` choice. When
//! confinement is impossible the run refuses to start rather than run unconfined.

use std::path::{Path, PathBuf};

/// Sandbox errors.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// `bwrap` is not on PATH (infrastructure failure, exit 3).
    #[error(
        "--sandbox needs bubblewrap (`bwrap`), which is not on PATH: install it (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`) or run without --sandbox"
    )]
    Missing,
    /// `bwrap` cannot create its namespaces here (infrastructure failure, exit 3).
    #[error(
        "--sandbox: bubblewrap cannot confine processes on this machine (user namespaces unavailable?): {0}; refusing to run the agent unconfined"
    )]
    Unavailable(String),
    /// The agent needs hosts the sandbox cannot single out (usage error, exit 2).
    #[error(
        "--sandbox: agent `{agent}` talks to {hosts}, and bubblewrap cannot limit the network to those hosts only; choose --sandbox-net allow (share the host's network) or --sandbox-net none (no network: the agent cannot reach its API)"
    )]
    NetChoice {
        /// The agent.
        agent: String,
        /// Its hosts, comma-separated.
        hosts: String,
    },
}

/// The network inside the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum SandboxNet {
    /// A network namespace of its own: no connection anywhere, not even to this machine.
    None,
    /// The host's network, unrestricted.
    Allow,
}

impl SandboxNet {
    /// The name `--sandbox-net` takes: `none` or `allow`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxNet::None => "none",
            SandboxNet::Allow => "allow",
        }
    }
}

/// A checked bubblewrap set-up for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    bwrap: PathBuf,
    net: SandboxNet,
    /// Paths bound writable besides the workspace (the agent's session folders).
    writable: Vec<PathBuf>,
}

impl Sandbox {
    /// Checks that bubblewrap is on `path` and works, and settles the network: `net` as
    /// given, else none when the agent declares no hosts.
    pub fn new(
        path: &str,
        net: Option<SandboxNet>,
        agent: &str,
        hosts: &[String],
        state: &[String],
    ) -> Result<Sandbox, SandboxError> {
        let bwrap = crate::env::which_in("bwrap", path).ok_or(SandboxError::Missing)?;
        let net = match net {
            Some(net) => net,
            None if hosts.is_empty() => SandboxNet::None,
            None => {
                return Err(SandboxError::NetChoice {
                    agent: agent.to_string(),
                    hosts: hosts.join(", "),
                });
            }
        };
        let probe = std::process::Command::new(&bwrap)
            .args([
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--tmpfs",
                "/tmp",
                "--unshare-net",
                "true",
            ])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| SandboxError::Unavailable(e.to_string()))?;
        if !probe.status.success() {
            return Err(SandboxError::Unavailable(
                String::from_utf8_lossy(&probe.stderr).trim().to_string(),
            ));
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let writable = home
            .map(|h| {
                state
                    .iter()
                    .map(|s| h.join(s))
                    .filter(|p| p.exists())
                    .collect()
            })
            .unwrap_or_default();
        Ok(Sandbox {
            bwrap,
            net,
            writable,
        })
    }

    /// `argv` wrapped in bubblewrap: `workspace` writable; `hidden` (the task folder and its
    /// siblings, the runs folder with the journal and `result.json`) replaced by empty
    /// folders; `visible` (the prompt files and the folders the agent's programs live in,
    /// which may be under `/tmp` or a hidden folder) readable.
    pub fn wrap(
        &self,
        argv: &[String],
        workspace: &Path,
        visible: &[PathBuf],
        hidden: &[PathBuf],
    ) -> Vec<String> {
        let s = |p: &Path| p.display().to_string();
        let mut out = vec![
            s(&self.bwrap),
            "--die-with-parent".to_string(),
            "--ro-bind".to_string(),
            "/".to_string(),
            "/".to_string(),
            "--dev".to_string(),
            "/dev".to_string(),
            "--proc".to_string(),
            "/proc".to_string(),
            "--tmpfs".to_string(),
            "/tmp".to_string(),
        ];
        let hidden: Vec<&PathBuf> = hidden.iter().filter(|h| h.is_dir()).collect();
        for dir in &hidden {
            out.extend(["--tmpfs".to_string(), s(dir)]);
        }
        for dir in visible.iter().filter(|d| {
            d.exists() && (d.starts_with("/tmp") || hidden.iter().any(|h| d.starts_with(h)))
        }) {
            out.extend(["--ro-bind".to_string(), s(dir), s(dir)]);
        }
        for path in &self.writable {
            out.extend(["--bind".to_string(), s(path), s(path)]);
        }
        out.extend(["--bind".to_string(), s(workspace), s(workspace)]);
        if self.net == SandboxNet::None {
            out.push("--unshare-net".to_string());
        }
        out.extend(["--chdir".to_string(), s(workspace), "--".to_string()]);
        out.extend(argv.iter().cloned());
        out
    }
}

/// The folders of a PATH string, for [`Sandbox::wrap`]'s `visible`.
pub fn path_dirs(path: &str) -> Vec<PathBuf> {
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_bwrap_and_hosts_without_a_choice_are_refused() {
        assert!(matches!(
            Sandbox::new("/nonexistent", None, "shell", &[], &[]),
            Err(SandboxError::Missing)
        ));
        if let Some(dir) =
            crate::env::which("bwrap").and_then(|p| p.parent().map(Path::to_path_buf))
        {
            let err = Sandbox::new(
                &dir.display().to_string(),
                None,
                "claude",
                &["api.anthropic.com".to_string()],
                &[],
            )
            .unwrap_err();
            assert!(err.to_string().contains("--sandbox-net allow"), "{err}");
        }
    }

    #[test]
    fn wrap_binds_the_workspace_last_and_cuts_the_network() {
        let sandbox = Sandbox {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
            net: SandboxNet::None,
            writable: vec![PathBuf::from("/home/u/.claude")],
        };
        let argv = sandbox.wrap(
            &["claude".to_string(), "-p".to_string()],
            Path::new("/tmp/run/workspace"),
            &[],
            &[],
        );
        let line = argv.join(" ");
        assert!(
            line.starts_with("/usr/bin/bwrap --die-with-parent --ro-bind / / "),
            "{line}"
        );
        assert!(
            line.ends_with("--bind /home/u/.claude /home/u/.claude --bind /tmp/run/workspace /tmp/run/workspace --unshare-net --chdir /tmp/run/workspace -- claude -p"),
            "{line}"
        );
    }
}

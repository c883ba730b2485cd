//! The local runner: the verify run happens on this machine, in the verify folder, with the
//! environment the session built, confined by bubblewrap where it can be (`confine.rs`).

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::confine::{self, Sandbox};
use super::{Job, Launch, Runner, RunnerError, RunnerSpec};
use crate::grade::audit::{self, AuditRun};

/// Runs verify on this machine (`--runner local`, the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalRunner;

impl Runner for LocalRunner {
    fn spec(&self) -> &RunnerSpec {
        &RunnerSpec::Local
    }

    fn prepare(
        &self,
        _job: &Job,
        _cancel: &AtomicBool,
        _progress: &mut dyn FnMut(String),
    ) -> Result<(), RunnerError> {
        // The session's setup already built the environment here.
        Ok(())
    }

    fn stage(&self, job: &Job, verify_dir: &Path) -> Result<Launch, RunnerError> {
        let mut env = job
            .local_env
            .as_ref()
            .map(crate::env::PythonEnv::vars)
            .unwrap_or_default();
        env.extend(job.vars.iter().cloned());
        let inner = vec!["bash".to_string(), "-c".to_string(), job.script.clone()];
        let integrity = &job.integrity;
        let bwrap = confine::bwrap();
        let audit = match &integrity.audit_dir {
            Some(dir) => Some(
                AuditRun::create(
                    dir,
                    verify_dir,
                    &integrity.forbid,
                    &integrity.protected,
                    bwrap.is_ok(),
                )
                .map_err(|e| RunnerError::Stage(e.to_string()))?,
            ),
            None => None,
        };
        match (bwrap, audit) {
            (Ok(bwrap), Some(audit)) => {
                let read_only: Vec<_> = integrity
                    .protected
                    .iter()
                    .map(|p| verify_dir.join(&p.file))
                    .filter(|p| p.is_file())
                    .collect();
                let argv = confine::wrap(
                    &bwrap,
                    &inner,
                    &Sandbox {
                        verify_dir,
                        read_only: &read_only,
                        env: job.local_env.as_ref(),
                        audit: &audit,
                        network: integrity.network,
                        vars: &env,
                    },
                );
                Ok(Launch {
                    argv,
                    cwd: verify_dir.to_path_buf(),
                    env: Vec::new(),
                    confined: true,
                    unconfined_reason: None,
                })
            }
            (bwrap, audit) => {
                if let Some(audit) = audit {
                    env.push((
                        audit::CONFIG_VAR.to_string(),
                        audit.config().display().to_string(),
                    ));
                    if job.local_env.is_none() {
                        env.push((
                            "PYTHONPATH".to_string(),
                            audit.hook_dir().display().to_string(),
                        ));
                    }
                }
                Ok(Launch {
                    argv: inner,
                    cwd: verify_dir.to_path_buf(),
                    env,
                    confined: false,
                    unconfined_reason: bwrap.err(),
                })
            }
        }
    }

    fn cancel(&self, _job: &Job) -> Result<(), RunnerError> {
        // The run's process group is local: ending the PTY's group ends it.
        Ok(())
    }

    fn collect(&self, _job: &Job, _run_dir: &Path) -> Result<(), RunnerError> {
        Ok(())
    }

    fn confinement(&self) -> Result<(), String> {
        confine::bwrap().map(|_| ())
    }

    fn recorded(&self, _job: &Job) -> Result<Option<super::Recorded>, RunnerError> {
        // The run is this machine's child: its exit status is the job's own.
        Ok(None)
    }
}

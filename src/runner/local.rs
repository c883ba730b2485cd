//! The local runner: the verify run happens on this machine, in the verify folder, with the
//! environment the session built.

use std::path::Path;

use super::{Job, Launch, Runner, RunnerError, RunnerSpec};

/// Runs verify on this machine (`--runner local`, the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalRunner;

impl Runner for LocalRunner {
    fn spec(&self) -> &RunnerSpec {
        &RunnerSpec::Local
    }

    fn prepare(&self, _job: &Job, _progress: &mut dyn FnMut(String)) -> Result<(), RunnerError> {
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
        Ok(Launch {
            argv: vec!["bash".to_string(), "-c".to_string(), job.script.clone()],
            cwd: verify_dir.to_path_buf(),
            env,
        })
    }

    fn cancel(&self, _job: &Job) -> Result<(), RunnerError> {
        // The run's process group is local: ending the PTY's group ends it.
        Ok(())
    }

    fn collect(&self, _job: &Job, _run_dir: &Path) -> Result<(), RunnerError> {
        Ok(())
    }
}

//! One run of a task's experiment as its shell sees it: the script (`set -e`, `[env].setup`,
//! then the command) and the variables xstack gives it (`XSTACK_SEED`, `XSTACK_TASK`,
//! `XSTACK_PHASE` in a session, `PYTHONUNBUFFERED`). The verify run, the seed check, the seed
//! runs of `calibrate` and `init`, both sides of the parity probe and the agent's environment
//! are all built here, so they cannot drift apart.

use crate::env::PythonEnv;

/// The script and the variables of one run.
#[derive(Debug, Clone, Copy)]
pub struct RunScript<'a> {
    /// `[env].setup`, run before the command in the same shell.
    pub setup: Option<&'a str>,
    /// The command (`[run].command`, or `[parity] command` for the probe).
    pub command: &'a str,
    /// `XSTACK_TASK`.
    pub task_id: &'a str,
    /// `XSTACK_SEED`.
    pub seed: u64,
    /// `XSTACK_PHASE`: the session's phase; None outside a session (calibrate, init, `xstack
    /// parity`).
    pub phase: Option<u8>,
}

impl RunScript<'_> {
    /// The shell script: `set -e`, the setup, the command, each on its line.
    pub fn script(&self) -> String {
        let mut script = String::from("set -e\n");
        if let Some(setup) = self.setup {
            script.push_str(setup);
            script.push('\n');
        }
        script.push_str(self.command);
        script.push('\n');
        script
    }

    /// The variables the run gets from xstack: the seed, the task, the phase in a session,
    /// and unbuffered Python output (so metrics arrive as they are printed).
    pub fn vars(&self) -> Vec<(String, String)> {
        let mut vars = vec![
            ("XSTACK_SEED".to_string(), self.seed.to_string()),
            ("XSTACK_TASK".to_string(), self.task_id.to_string()),
        ];
        if let Some(phase) = self.phase {
            vars.push(("XSTACK_PHASE".to_string(), phase.to_string()));
        }
        vars.push(("PYTHONUNBUFFERED".to_string(), "1".to_string()));
        vars
    }

    /// The run's whole environment on this machine: `python`'s (its `bin` first on PATH),
    /// then [`RunScript::vars`].
    pub fn env(&self, python: Option<&PythonEnv>) -> Vec<(String, String)> {
        let mut env = python.map(PythonEnv::vars).unwrap_or_default();
        env.extend(self.vars());
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(setup: Option<&str>, phase: Option<u8>) -> RunScript<'_> {
        RunScript {
            setup,
            command: "python train.py",
            task_id: "t",
            seed: 7,
            phase,
        }
    }

    #[test]
    fn the_script_stops_at_the_first_failure_and_runs_the_setup_first() {
        assert_eq!(
            run(Some("cd src"), None).script(),
            "set -e\ncd src\npython train.py\n"
        );
        assert_eq!(run(None, None).script(), "set -e\npython train.py\n");
    }

    #[test]
    fn a_session_run_also_gets_its_phase() {
        let names = |vars: Vec<(String, String)>| -> Vec<String> {
            vars.into_iter().map(|(k, _)| k).collect()
        };
        assert_eq!(
            names(run(None, None).vars()),
            ["XSTACK_SEED", "XSTACK_TASK", "PYTHONUNBUFFERED"]
        );
        assert_eq!(
            run(None, Some(2)).vars(),
            [
                ("XSTACK_SEED".to_string(), "7".to_string()),
                ("XSTACK_TASK".to_string(), "t".to_string()),
                ("XSTACK_PHASE".to_string(), "2".to_string()),
                ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
            ]
        );
        assert_eq!(run(None, None).env(None), run(None, None).vars());
    }
}

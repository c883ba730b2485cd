//! Plain `xstack`: the picker, then the chosen run, replay or new task.

use crate::config::Config;
use crate::process::EXIT_PASS;
use crate::task::{self, Task};

use super::{AppError, RunOptions, init, prepare, replay_tui, run_tui, runs_dir};

/// Plain `xstack`: the picker, then the chosen run, replay or new task, and back to the
/// picker when it ends (its runs list read again), until the user quits the picker. The
/// exit status is that of the last run, or 0.
pub fn pick(theme: crate::ui::theme::Theme) -> Result<i32, AppError> {
    use crate::ui::picker::{Choice, Picker};
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return Err(AppError::usage(
            "the picker needs a terminal; try `xstack run TASK --headless` or `xstack demo`",
        ));
    }
    let mut status = EXIT_PASS;
    loop {
        let tasks: Vec<Task> = task::discover(&task::tasks_dir())
            .iter()
            .filter_map(|d| Task::load(d).ok())
            .filter(|t| t.source_path().is_some())
            .collect();
        let runs = crate::replay::runs::list(&runs_dir(None));
        let cache = crate::env::cache_dir();
        let to_build = tasks
            .iter()
            .map(|t| crate::env::store::to_build(&cache, t))
            .collect();
        let choice = {
            let mut guard = crate::ui::terminal::TerminalGuard::enter()
                .map_err(|e| AppError::infra(format!("cannot set up the terminal: {e}")))?;
            crate::ui::picker::run(
                &mut guard.terminal,
                Picker::new(tasks, runs).environments_to_build(to_build),
                &theme,
            )
            .map_err(|e| AppError::infra(format!("terminal error: {e}")))?
        };
        status = match choice {
            Choice::Quit => return Ok(status),
            Choice::Replay(dir) => replay_tui(&dir, 1.0, theme.clone())?,
            Choice::NewTask(repo) => init(crate::init::InitOptions::for_repo(repo))?,
            Choice::Run { task, agent, mode } => {
                let opts = RunOptions::new(task.display().to_string(), Config::load()?)
                    .agent(Some(agent))
                    .mode(mode);
                run_tui(prepare(&opts)?, theme.clone())?
            }
        };
    }
}

//! `xstack replay`: the timeline printed from the journal alone (`--headless`), or the
//! recorded session in the TUI (with a re-grade of its workspace on request).

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use crate::config::Config;
use crate::journal;
use crate::process::{EXIT_INFRA, EXIT_PASS};
use crate::session::progress::ProgressLines;
use crate::session::state::SessionState;

use super::{AppError, RunOptions, prepare, run_tui, runtime};

/// `xstack replay RUN_DIR --headless`: prints the timeline rebuilt from the journal alone and
/// returns the exit status the run had (3 when the run was interrupted).
pub fn replay_headless(run_dir: &Path, out: &mut dyn Write) -> Result<i32, AppError> {
    let path = journal::path_in(run_dir);
    let reader = journal::JournalReader::open(&path).map_err(|e| AppError::usage(e.to_string()))?;
    let header = &reader.header;
    let _ = writeln!(
        out,
        "replay of {} (task {}, agent {}, started {})",
        header.run_id, header.task, header.agent, header.started_at
    );
    let mut state = SessionState::new();
    let mut progress = ProgressLines::new();
    let visited = reader
        .visit(|entry| {
            state.apply(entry.t, &entry.event);
            for line in progress.lines(entry.t, &entry.event) {
                let _ = writeln!(out, "{line}");
            }
        })
        .map_err(|e| AppError::usage(e.to_string()))?;
    if visited.torn {
        let _ = writeln!(
            out,
            "(the journal's last line or frame was cut off and skipped)"
        );
    }
    Ok(match &state.finished {
        Some(finish) => finish.exit_code,
        None => {
            let _ = writeln!(out, "the run was interrupted before it finished");
            EXIT_INFRA
        }
    })
}

/// `xstack replay RUN_DIR [--speed X]`: the recorded session in the TUI. Returns the exit
/// status, after a re-grade of the run's workspace when the user asked for one (`r`).
pub fn replay_tui(
    run_dir: &Path,
    speed: f64,
    theme: crate::ui::theme::Theme,
) -> Result<i32, AppError> {
    use std::io::IsTerminal;
    let path = journal::path_in(run_dir);
    // The header first: a missing or foreign journal is named before anything else.
    journal::JournalReader::open(&path).map_err(|e| AppError::usage(e.to_string()))?;
    if !std::io::stdout().is_terminal() {
        return Err(AppError::usage(
            "the replay TUI needs a terminal; use --headless to print the timeline",
        ));
    }
    if speed.is_nan() || speed <= 0.0 {
        return Err(AppError::usage(format!("--speed {speed}: must be above 0")));
    }
    let (header, mut player) =
        crate::replay::Player::open(&path).map_err(|e| AppError::usage(e.to_string()))?;
    let task_id = header.task;
    player.speed = speed.clamp(crate::replay::SPEEDS[0], crate::replay::SPEEDS[8]);
    let runtime = runtime()?;
    let exit = runtime.block_on(async {
        let mut guard = crate::ui::terminal::TerminalGuard::enter()
            .map_err(|e| AppError::infra(format!("cannot set up the terminal: {e}")))?;
        let source = crate::ui::Source::Replay(Box::new(player));
        let exit = crate::ui::run(&mut guard.terminal, source, &theme).await;
        drop(guard);
        Ok::<_, AppError>(exit)
    })?;
    runtime.shutdown_timeout(Duration::from_millis(200));
    match exit {
        crate::ui::Ended::Quit | crate::ui::Ended::Session(_) => Ok(EXIT_PASS),
        crate::ui::Ended::Regrade => {
            let workspace = run_dir.join("workspace");
            if !workspace.is_dir() {
                return Err(AppError::usage(format!(
                    "{} has no workspace to grade",
                    run_dir.display()
                )));
            }
            let opts = RunOptions::new(task_id, Config::load()?)
                .repo(workspace)
                .runs_dir(run_dir.parent().map(Path::to_path_buf));
            run_tui(prepare(&opts)?, theme)
        }
    }
}

//! `xstack run` and `xstack grade`: a prepared session, headless (progress lines) or in the
//! TUI; signals become interruptions the journal records.

use std::io::Write;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::event::{Command, Interruption};
use crate::session::driver::Driver;
use crate::session::progress::ProgressLines;

use super::{AppError, Prepared, runtime};

/// Runs a prepared session without a screen, printing progress lines; returns the exit
/// status.
pub fn run_headless(prepared: Prepared, quiet: bool) -> Result<i32, AppError> {
    let runtime = runtime()?;
    let Prepared {
        config,
        mut recorder,
        run_id,
        started_at,
        ..
    } = prepared;
    let run_dir = config.run_dir.clone();
    if !quiet {
        let mut progress = ProgressLines::new();
        recorder.set_observer(Box::new(move |t, event, _state| {
            let lines = progress.lines(t, event);
            if !lines.is_empty() {
                let mut stdout = std::io::stdout().lock();
                for line in lines {
                    let _ = writeln!(stdout, "{line}");
                }
                let _ = stdout.flush();
            }
        }));
    }
    if !quiet {
        println!("run folder: {}", run_dir.display());
    }
    let code = runtime.block_on(async move {
        let (tx, rx) = mpsc::channel::<Command>(64);
        spawn_signal_forwarder(tx.clone());
        let driver = Driver::new(config, recorder, rx, run_id, started_at);
        let code = driver.run().await;
        drop(tx);
        code
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    if !quiet {
        println!(
            "result: {}",
            run_dir.join(crate::session::result::RESULT_FILE).display()
        );
    }
    Ok(code)
}

/// Runs a prepared session in the TUI; returns the exit status.
pub fn run_tui(prepared: Prepared, theme: crate::ui::theme::Theme) -> Result<i32, AppError> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        let _ = std::fs::remove_dir_all(&prepared.config.run_dir);
        return Err(AppError::usage(
            "the TUI needs a terminal; use --headless to run without one",
        ));
    }
    let runtime = runtime()?;
    let Prepared {
        mut config,
        state,
        recorder,
        changed,
        run_id,
        started_at,
    } = prepared;
    config.linger = true;
    let code = runtime.block_on(async move {
        let mut guard = crate::ui::terminal::TerminalGuard::enter()
            .map_err(|e| AppError::infra(format!("cannot set up the terminal: {e}")))?;
        let (tx, rx) = mpsc::channel::<Command>(64);
        let driver = Driver::new(config, recorder, rx, run_id, started_at);
        let handle = tokio::spawn(driver.run());
        let live = crate::ui::Live {
            state,
            changed,
            commands: tx,
            driver: handle,
            started: *crate::process::STARTED,
        };
        let ended =
            crate::ui::run(&mut guard.terminal, crate::ui::Source::Live(live), &theme).await;
        drop(guard);
        let code = match ended {
            crate::ui::Ended::Session(code) => code.unwrap_or(crate::process::EXIT_INFRA),
            crate::ui::Ended::Quit | crate::ui::Ended::Regrade => crate::process::EXIT_INFRA,
        };
        Ok::<i32, AppError>(code)
    })?;
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(code)
}

/// Turns SIGINT (the user's Ctrl-C), SIGTERM and SIGHUP into an interruption of the
/// session that records which it was.
pub fn spawn_signal_forwarder(tx: mpsc::Sender<Command>) {
    use tokio::signal::unix::{SignalKind, signal};
    for (interruption, kind) in [
        (Interruption::UserAbort, SignalKind::interrupt()),
        (Interruption::Terminated, SignalKind::terminate()),
        (Interruption::Hangup, SignalKind::hangup()),
    ] {
        let tx = tx.clone();
        if let Ok(mut stream) = signal(kind) {
            tokio::spawn(async move {
                while stream.recv().await.is_some() {
                    if tx.send(Command::Interrupt(interruption)).await.is_err() {
                        break;
                    }
                }
            });
        }
    }
}

//! The terminal the TUI owns: raw mode, alternate screen, mouse and bracketed paste, undone
//! on drop and from the panic hook, so every exit path leaves the terminal as it was.

use std::io::{Stdout, Write};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

/// The TUI's terminal.
pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal: leaves the alternate screen, shows the cursor, ends raw mode.
pub fn restore() {
    let mut out = std::io::stdout();
    let restored = execute!(
        out,
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        cursor::Show
    )
    .and_then(|()| disable_raw_mode())
    .and_then(|()| out.flush());
    // Nothing can be shown on a terminal that cannot be written to: the log says it.
    if let Err(e) = restored {
        tracing::warn!("cannot restore the terminal: {e}");
    }
}

/// Holds the terminal in TUI mode; restores it when dropped.
pub struct TerminalGuard {
    /// The ratatui terminal.
    pub terminal: Tui,
}

impl TerminalGuard {
    /// Enters TUI mode and installs a panic hook that restores the terminal first.
    pub fn enter() -> std::io::Result<TerminalGuard> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        enable_raw_mode()?;
        let mut out = std::io::stdout();
        execute!(
            out,
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste,
            cursor::Hide
        )?;
        let terminal = Terminal::new(CrosstermBackend::new(out))?;
        Ok(TerminalGuard { terminal })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

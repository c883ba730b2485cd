//! `xstack init`: a `task.toml` made from a repository, on the user's terminal.

use crate::process::{EXIT_FAIL, EXIT_PASS};
use std::io::Write;

use super::AppError;

/// `xstack init` on the user's terminal: messages and the live run on stdout, questions read
/// from stdin when it is a terminal.
struct TerminalConsole {
    interactive: bool,
}

impl crate::init::Console for TerminalConsole {
    fn say(&mut self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}");
        let _ = stdout.flush();
    }

    fn output(&mut self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }

    fn ask(&mut self, question: &str) -> Option<String> {
        if !self.interactive {
            return None;
        }
        self.output(question);
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    }

    fn interactive(&self) -> bool {
        self.interactive
    }
}

/// `xstack init REPO ...`: makes `tasks/<id>/task.toml` from a repository; returns 0 when it
/// was written, 1 when the user declined.
pub fn init(opts: crate::init::InitOptions) -> Result<i32, AppError> {
    use std::io::IsTerminal;
    let mut console = TerminalConsole {
        interactive: std::io::stdin().is_terminal(),
    };
    match crate::init::run(&opts, &mut console)? {
        crate::init::Outcome::Written(_) => Ok(EXIT_PASS),
        crate::init::Outcome::Declined => Ok(EXIT_FAIL),
    }
}

//! `xstack init`: a `task.toml` made from a repository, on the user's terminal.

use std::io::Write;
use std::path::PathBuf;

use crate::process::{EXIT_FAIL, EXIT_PASS};
use crate::task;

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

/// The options of `xstack init` as the command line gives them.
#[derive(Debug, Clone)]
pub struct InitArgs {
    /// REPO.
    pub repo: PathBuf,
    /// `--command`.
    pub command: Option<String>,
    /// `--notebook`.
    pub notebook: Option<String>,
    /// `--setup`.
    pub setup: Option<String>,
    /// `--metric`.
    pub metrics: Vec<String>,
    /// `--direction`: higher, lower or within.
    pub direction: Option<String>,
    /// `--reference-packages`.
    pub reference_packages: Option<Vec<String>>,
    /// `--packages`.
    pub packages: Option<Vec<String>>,
    /// `--seeds`.
    pub seeds: Option<u64>,
    /// `--id`.
    pub id: Option<String>,
    /// `--paper`.
    pub paper: Option<PathBuf>,
    /// `--accept-unreproduced`.
    pub accept_unreproduced: bool,
    /// `--yes`.
    pub yes: bool,
}

/// `xstack init REPO ...`: makes `tasks/<id>/task.toml` from a repository; returns 0 when it
/// was written, 1 when the user declined.
pub fn init(args: InitArgs) -> Result<i32, AppError> {
    use std::io::IsTerminal;
    let direction = match args.direction.as_deref() {
        None => None,
        Some("higher") => Some(task::Direction::Higher),
        Some("lower") => Some(task::Direction::Lower),
        Some("within") => Some(task::Direction::Within),
        Some(other) => {
            return Err(AppError::usage(format!(
                "--direction {other}: use higher, lower or within"
            )));
        }
    };
    let opts = crate::init::InitOptions {
        repo: args.repo,
        command: args.command,
        notebook: args.notebook,
        setup: args.setup,
        metrics: args.metrics,
        direction,
        reference_packages: args.reference_packages,
        packages: args.packages,
        seeds: args.seeds,
        id: args.id,
        paper: args.paper,
        accept_unreproduced: args.accept_unreproduced,
        yes: args.yes,
        tasks_dir: task::tasks_dir(),
        cache_dir: crate::env::cache_dir(),
    };
    let mut console = TerminalConsole {
        interactive: std::io::stdin().is_terminal(),
    };
    match crate::init::run(&opts, &mut console)? {
        crate::init::Outcome::Written(_) => Ok(EXIT_PASS),
        crate::init::Outcome::Declined => Ok(EXIT_FAIL),
    }
}

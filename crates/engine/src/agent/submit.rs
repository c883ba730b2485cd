//! Submitting a prompt to an interactive agent by watching its screen (docs/AGENTS.md,
//! "Typing into interactive agents"). A known first-run screen (folder trust, a custom API
//! key, a theme or login picker) is never answered by the prompt: it is reported, so the
//! human answers it in the agent's terminal; only in auto mode is the agent's question
//! whether to trust xstack's own workspace answered, by [`trust_keys`]. Once the agent is ready the text is pasted, and
//! Enter is sent only after the agent's screen has taken the paste (it changed and settled),
//! so a CLI that folds a paste into `[Pasted text #1 +17 lines]` gets its Enter after that.

use std::time::Duration;

/// The agent is ready once it printed something and then stayed quiet this long…
pub const READY_QUIET: Duration = Duration::from_secs(1);
/// …or at the latest this long after it started.
pub const READY_MAX: Duration = Duration::from_secs(20);
/// The paste is taken once the screen changed and then stayed quiet this long…
pub const PASTE_QUIET: Duration = Duration::from_millis(300);
/// …or, when the screen shows no change, this long after the paste.
pub const PASTE_MAX: Duration = Duration::from_secs(10);

/// What an asking screen asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    /// Whether to trust the folder it was started in.
    FolderTrust,
    /// Whether to use the API key it found in its environment.
    ApiKey,
    /// Which colour theme to use.
    Theme,
    /// Whether it may run a command.
    Permission,
    /// How to log in.
    Login,
}

/// A screen on which an agent asks the human something: a first-run screen shown before it
/// takes prompts, or a permission prompt while it works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AskingScreen {
    /// What it asks.
    pub question: Question,
    /// What the agent asks, for `waiting: the agent asks …`.
    pub asks: &'static str,
    /// Text of the screen (lowercase); any one identifies it.
    needles: &'static [&'static str],
}

/// The asking screens of the presets' CLIs, as the versions docs/AGENTS.md lists word them
/// (each needle short enough to stay on one row of an 80-column screen).
const ASKING_SCREENS: &[AskingScreen] = &[
    AskingScreen {
        question: Question::FolderTrust,
        asks: "whether to trust this folder",
        needles: &[
            // Claude Code.
            "is this a project you created or one you trust",
            "yes, i trust this folder",
            // Gemini CLI.
            "do you trust the files in this folder",
            // Codex.
            "trust this folder? codex",
        ],
    },
    AskingScreen {
        question: Question::ApiKey,
        asks: "whether to use the API key in its environment",
        needles: &[
            "detected a custom api key in your environment",
            "do you want to use this api key",
        ],
    },
    AskingScreen {
        question: Question::Theme,
        asks: "to choose a theme",
        needles: &["choose the text style that looks best with your terminal"],
    },
    AskingScreen {
        question: Question::Permission,
        asks: "for permission to run a command",
        needles: &[
            // Claude Code's permission prompt for a tool call it does not auto-accept.
            "do you want to proceed?",
        ],
    },
    AskingScreen {
        question: Question::Login,
        asks: "how to log in",
        needles: &[
            "select login method",
            "how would you like to authenticate for this project",
            "sign in with chatgpt",
        ],
    },
];

/// The asking screen `contents` (an agent's screen as text) shows, if any.
pub fn asking_screen(contents: &str) -> Option<&'static AskingScreen> {
    let lower = contents.to_lowercase();
    ASKING_SCREENS
        .iter()
        .find(|screen| screen.needles.iter().any(|n| lower.contains(n)))
}

/// What to do next for a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Nothing yet.
    Wait,
    /// Write these bytes to the agent's terminal.
    Write(Vec<u8>),
    /// The agent shows an asking screen: the human must answer it (or, for the workspace's
    /// trust in auto mode, [`trust_keys`]).
    Asks(&'static AskingScreen),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    /// Waiting for the agent to be ready.
    Ready,
    /// Pasted `at` (since the agent started), when the screen read `before`.
    Pasted { before: String, at: Duration },
    /// Enter was sent.
    Submitted,
}

/// One prompt on its way into an interactive agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    text: String,
    stage: Stage,
}

impl Submission {
    /// A submission of `text`.
    pub fn new(text: &str) -> Submission {
        Submission {
            text: text.to_string(),
            stage: Stage::Ready,
        }
    }

    /// Adds `more` to the text as its last paragraph while nothing has been pasted yet;
    /// false once the paste went in.
    pub fn add_before_paste(&mut self, more: &str) -> bool {
        if self.stage != Stage::Ready {
            return false;
        }
        self.text.push_str("\n\n");
        self.text.push_str(more);
        true
    }

    /// Whether Enter was sent.
    pub fn submitted(&self) -> bool {
        self.stage == Stage::Submitted
    }

    /// The next step, given the agent's screen, the time since it started and the time since
    /// it last printed something (None before it printed anything).
    pub fn poll(
        &mut self,
        screen: &vt100::Screen,
        elapsed: Duration,
        quiet: Option<Duration>,
    ) -> Step {
        let contents = screen.contents();
        if let Some(asking) = asking_screen(&contents) {
            return Step::Asks(asking);
        }
        match &self.stage {
            Stage::Ready => {
                if !(quiet.is_some_and(|q| q >= READY_QUIET) || elapsed >= READY_MAX) {
                    return Step::Wait;
                }
                let bytes = pasted_bytes(&self.text, screen.bracketed_paste());
                self.stage = Stage::Pasted {
                    before: contents,
                    at: elapsed,
                };
                Step::Write(bytes)
            }
            Stage::Pasted { before, at } => {
                let taken = contents != *before && quiet.is_some_and(|q| q >= PASTE_QUIET);
                if taken || elapsed.saturating_sub(*at) >= PASTE_MAX {
                    self.stage = Stage::Submitted;
                    Step::Write(b"\r".to_vec())
                } else {
                    Step::Wait
                }
            }
            Stage::Submitted => Step::Wait,
        }
    }
}

/// Most arrow presses spent looking for the "yes" choice of a folder-trust screen.
pub const TRUST_MOVES: u32 = 4;
/// How long the agent stays quiet before its folder-trust screen is read (a screen read
/// mid-redraw may lack the folder or the marked choice).
pub const TRUST_QUIET: Duration = Duration::from_millis(300);
/// How long a folder-trust screen answered in auto mode is given to go before it is the
/// human's again.
pub const TRUST_SETTLE: Duration = Duration::from_secs(5);

/// The keys that answer "yes" on a folder-trust screen (`contents`, the agent's screen as
/// text) about `folder`, and only about it: Enter when the selected choice (the row marked
/// `❯`, `›` or `>`) trusts the folder, Down to move towards it otherwise. None when the
/// screen does not name `folder` itself, when it also names a folder above it (Codex, in a
/// subfolder of a Git repository, names the workspace and then says its trust applies to the
/// repository's root: a parent is never trusted on the human's behalf), or when it shows no
/// selected choice.
pub fn trust_keys(contents: &str, folder: &std::path::Path) -> Option<&'static [u8]> {
    let rows: Vec<&str> = contents.lines().map(str::trim).collect();
    let wanted = folder.to_string_lossy();
    if wanted.is_empty() || !names_path(&rows, &wanted) {
        return None;
    }
    let parent_named = folder
        .ancestors()
        .skip(1)
        .filter(|above| above.parent().is_some())
        .any(|above| names_path(&rows, &above.to_string_lossy()));
    if parent_named {
        return None;
    }
    let selected = contents
        .lines()
        .map(str::trim_start)
        .find(|line| line.starts_with('❯') || line.starts_with('›') || line.starts_with("> "))?;
    let lower = selected.to_lowercase();
    if lower.contains("yes") || lower.contains("trust and continue") {
        Some(b"\r")
    } else {
        Some(b"\x1b[B")
    }
}

/// Whether the screen's `rows` (trimmed) name the folder `path` itself: the path neither
/// preceded nor followed by more of a path. A path may be wrapped over two rows, so each row is read
/// alone and joined to the next; a row that ends with `path` while the next row goes on
/// with `/` shows a folder below it, not `path`.
fn names_path(rows: &[&str], path: &str) -> bool {
    let path_char = |c: char| c == '/' || c == '.' || c == '-' || c == '_' || c.is_alphanumeric();
    // Where `text` names `path`, by the byte offset each naming starts at.
    let namings = |text: &str| -> Vec<usize> {
        text.match_indices(path)
            .filter(|(at, _)| {
                !text[..*at].ends_with(path_char) && !text[at + path.len()..].starts_with(path_char)
            })
            .map(|(at, _)| at)
            .collect()
    };
    rows.iter().enumerate().any(|(i, row)| {
        let next = rows.get(i + 1).copied().unwrap_or("");
        let wrapped_on = row.ends_with(path) && next.starts_with('/');
        let in_the_row = !namings(row).is_empty() && !wrapped_on;
        let across = namings(&format!("{row}{next}"))
            .into_iter()
            .any(|at| at < row.len() && at + path.len() > row.len());
        in_the_row || across
    })
}

/// The bytes that put `text` into an agent's input without submitting it: one bracketed
/// paste when the program turned that mode on (so a multi-line text is one message), else
/// typed, lines separated by Enter.
pub fn pasted_bytes(text: &str, bracketed_paste: bool) -> Vec<u8> {
    if bracketed_paste {
        crate::pty::bracketed_paste(text)
    } else {
        text.replace('\n', "\r").into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(text: &str, bracketed: bool) -> vt100::Parser {
        let mut parser = vt100::Parser::new(24, 80, 0);
        if bracketed {
            parser.process(b"\x1b[?2004h");
        }
        parser.process(text.replace('\n', "\r\n").as_bytes());
        parser
    }

    const S: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn enter_follows_the_paste_only_once_the_screen_took_it() {
        let mut agent = screen("╭──────╮\n│ >    │\n╰──────╯", true);
        let mut submission = Submission::new("port it\nsecond line");
        // Still printing: not ready.
        assert_eq!(
            submission.poll(agent.screen(), S(500), Some(S(100))),
            Step::Wait
        );
        // Quiet for a second: the text goes in as one paste, without Enter.
        let Step::Write(paste) = submission.poll(agent.screen(), S(1500), Some(S(1000))) else {
            panic!("no paste");
        };
        assert_eq!(paste, b"\x1b[200~port it\nsecond line\x1b[201~");
        // The screen has not changed yet: no Enter.
        assert_eq!(
            submission.poll(agent.screen(), S(1700), Some(S(1200))),
            Step::Wait
        );
        // The agent folds the paste into a placeholder, and is still drawing it.
        agent.process(b"\x1b[2;3H[Pasted text #1 +1 lines]");
        assert_eq!(
            submission.poll(agent.screen(), S(1800), Some(S(50))),
            Step::Wait
        );
        // Settled: now Enter.
        assert_eq!(
            submission.poll(agent.screen(), S(2200), Some(S(400))),
            Step::Write(b"\r".to_vec())
        );
        assert!(submission.submitted());
        assert_eq!(
            submission.poll(agent.screen(), S(9000), Some(S(9000))),
            Step::Wait
        );
    }

    #[test]
    fn a_message_before_the_paste_joins_the_prompt_and_after_it_does_not() {
        let agent = screen("> ", true);
        let mut submission = Submission::new("port it");
        assert!(submission.add_before_paste("and keep the seed"));
        assert_eq!(
            submission.poll(agent.screen(), S(1000), Some(S(1000))),
            Step::Write(b"\x1b[200~port it\n\nand keep the seed\x1b[201~".to_vec())
        );
        assert!(!submission.add_before_paste("too late"));
    }

    #[test]
    fn an_agent_that_echoes_nothing_gets_its_enter_after_a_while() {
        let agent = screen("$ ", false);
        let mut submission = Submission::new("a\nb");
        assert_eq!(
            submission.poll(agent.screen(), S(1000), Some(S(1000))),
            Step::Write(b"a\rb".to_vec())
        );
        assert_eq!(
            submission.poll(agent.screen(), S(5000), Some(S(5000))),
            Step::Wait
        );
        assert_eq!(
            submission.poll(agent.screen(), S(11_000), Some(S(11_000))),
            Step::Write(b"\r".to_vec())
        );
    }

    #[test]
    fn a_silent_agent_is_ready_after_the_longest_wait() {
        let agent = screen("", true);
        let mut submission = Submission::new("go");
        assert_eq!(submission.poll(agent.screen(), S(19_000), None), Step::Wait);
        assert!(matches!(
            submission.poll(agent.screen(), S(20_000), None),
            Step::Write(_)
        ));
    }

    #[test]
    fn trust_is_answered_only_about_the_folder_itself_and_only_with_yes() {
        let workspace = std::path::Path::new("/work/run/workspace");
        let claude = |choices: &str| {
            format!(
                " Accessing workspace:\n\n /work/run/workspace\n\n Quick safety check: Is this a project you created or one you trust?\n\n{choices}\n\n Enter to confirm · Esc to cancel"
            )
        };
        // The choice on "Yes": Enter.
        let yes = claude(" ❯ 1. Yes, I trust this folder\n   2. No, exit");
        assert_eq!(trust_keys(&yes, workspace), Some(&b"\r"[..]));
        // The choice on "No": Down, towards "Yes".
        let no = claude("   1. Yes, I trust this folder\n ❯ 2. No, exit");
        assert_eq!(trust_keys(&no, workspace), Some(&b"\x1b[B"[..]));
        // Codex's wording of yes.
        let codex = "  Folder access\n  /work/run/workspace\n  Trust this folder?\n› 1. Trust and continue\n  2. Back";
        assert_eq!(trust_keys(codex, workspace), Some(&b"\r"[..]));
        // A path wrapped over two rows is still the folder.
        let wrapped =
            " Accessing workspace:\n /work/run/work\n space\n ❯ 1. Yes, I trust this folder";
        assert_eq!(trust_keys(wrapped, workspace), Some(&b"\r"[..]));
        // Another folder: the parent repository, or a sibling whose name starts the same.
        let parent = " Accessing workspace:\n\n /work/run\n\n ❯ 1. Yes, I trust this folder";
        assert_eq!(trust_keys(parent, workspace), None);
        let sibling =
            " Accessing workspace:\n\n /work/run/workspace-old\n\n ❯ 1. Yes, I trust this folder";
        assert_eq!(trust_keys(sibling, workspace), None);
        let inside =
            " Accessing workspace:\n\n /work/run/workspace/sub\n\n ❯ 1. Yes, I trust this folder";
        assert_eq!(trust_keys(inside, workspace), None);
        // Codex in a subfolder of a Git repository: its trust applies to the repository's
        // root, which the screen names below the workspace.
        let repository = "  Folder access\n  /work/run/work\nspace\n  Note: You're in a subdirectory of a Git project. Trusting will apply to\n  the repository root:\n  /work\n  Trust this folder?\n› 1. Trust and continue\n  2. Back";
        assert_eq!(trust_keys(repository, workspace), None);
        // A wrapped path whose first row ends at a folder above is not that folder.
        let split_at_parent =
            " Accessing workspace:\n /work/run\n /workspace\n ❯ 1. Yes, I trust this folder";
        assert_eq!(trust_keys(split_at_parent, workspace), Some(&b"\r"[..]));
        // No selected choice drawn yet.
        let bare = " Accessing workspace:\n\n /work/run/workspace\n";
        assert_eq!(trust_keys(bare, workspace), None);
    }

    #[test]
    fn codex_folder_trust_is_recognised() {
        let trust = screen(
            "  Folder access\n  /w/run/workspace\n  Trust this folder? Codex can read, edit, and run files here, subject to your permission settings.\n› 1. Trust and continue\n  2. Back to Agent Command Center\n  enter continue · esc back",
            true,
        );
        assert_eq!(
            asking_screen(&trust.screen().contents()).map(|s| s.asks),
            Some("whether to trust this folder")
        );
    }

    #[test]
    fn first_run_screens_are_asked_about_never_answered() {
        let trust = screen(
            " Accessing workspace:\n\n /work/run/workspace\n\n Quick safety check: Is this a project you created or one you trust?\n\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n\n Enter to confirm · Esc to cancel",
            true,
        );
        let mut submission = Submission::new("port it");
        for elapsed in [1000, 5000, 30_000] {
            assert_eq!(
                submission.poll(trust.screen(), S(elapsed), Some(S(elapsed))),
                Step::Asks(asking_screen(&trust.screen().contents()).unwrap())
            );
            let Step::Asks(asking) = submission.poll(trust.screen(), S(elapsed), None) else {
                panic!("not asked");
            };
            assert_eq!(asking.question, Question::FolderTrust);
        }
        let key = screen(
            "Detected a custom API key in your environment\n\nANTHROPIC_API_KEY: sk-ant-...abcd\n\nDo you want to use this API key?\n\n 1. Yes\n❯ 2. No (recommended)",
            true,
        );
        let Step::Asks(asking) = Submission::new("x").poll(key.screen(), S(2000), Some(S(2000)))
        else {
            panic!("not asked");
        };
        assert_eq!(asking.question, Question::ApiKey);
        assert_eq!(asking.asks, "whether to use the API key in its environment");
        let theme = screen(
            "Let's get started.\n\nChoose the text style that looks best with your terminal\n❯ 1. Dark mode",
            true,
        );
        assert_eq!(
            asking_screen(&theme.screen().contents()).map(|s| s.asks),
            Some("to choose a theme")
        );
        let gemini = screen(
            "How would you like to authenticate for this project?\n● 1. Login with Google",
            true,
        );
        assert_eq!(
            asking_screen(&gemini.screen().contents()).map(|s| s.asks),
            Some("how to log in")
        );
        // Once the human answered, the prompt goes in.
        let ready = screen("╭────╮\n│ >  │\n╰────╯\n  ? for shortcuts", true);
        assert!(matches!(
            submission.poll(ready.screen(), S(31_000), Some(S(1000))),
            Step::Write(_)
        ));
        assert_eq!(asking_screen(&ready.screen().contents()), None);
    }
}

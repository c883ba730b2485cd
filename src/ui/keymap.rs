//! The one key table: each binding's keys, where it works, what it does, and how the key
//! hint and the help screen name it. Key handling ([`super::app::App::on_key`]), the key
//! hint and the help screen are all read from [`BINDINGS`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::event::KeyedCommand;

/// What the screen is in, as far as keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Situation {
    /// A live session that is still going.
    Running,
    /// A live session that has ended (the TUI lingers).
    Ended,
    /// A recorded session played back.
    Replay,
    /// Keys go to the agent's terminal.
    Attached,
}

impl Situation {
    /// The situation of a view: attached, live or replay, and whether the session ended.
    pub fn of(attached: bool, live: bool, finished: bool) -> Situation {
        if attached {
            Situation::Attached
        } else if !live {
            Situation::Replay
        } else if finished {
            Situation::Ended
        } else {
            Situation::Running
        }
    }
}

/// A key as a binding names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character typed without Ctrl (Shift is part of the character).
    Char(char),
    /// A character with Ctrl.
    Ctrl(char),
    /// A key without a character (Tab, arrows, Enter…), with any modifiers.
    Code(KeyCode),
}

impl Key {
    /// Whether `event` is this key.
    pub fn matches(self, event: &KeyEvent) -> bool {
        let ctrl = event.modifiers.contains(KeyModifiers::CONTROL);
        match self {
            Key::Char(c) => !ctrl && event.code == KeyCode::Char(c),
            Key::Ctrl(c) => ctrl && event.code == KeyCode::Char(c),
            Key::Code(code) => event.code == code,
        }
    }
}

/// What a binding does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyAction {
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrevious,
    /// Focus the pane of the digit pressed.
    FocusNumber,
    /// Zoom the focused pane or restore.
    Zoom,
    /// Open the help.
    Help,
    /// Quit (asks first while something runs).
    Quit,
    /// Ask to quit.
    ConfirmQuit,
    /// Scroll the focused pane back (positive) or forward, in lines.
    Scroll(isize),
    /// Scroll the focused pane to its start (`g`).
    ScrollToStart,
    /// Scroll the focused pane to its end and follow it (`G`).
    ScrollToEnd,
    /// The previous file in the Diff pane.
    PreviousFile,
    /// The next file in the Diff pane.
    NextFile,
    /// Scroll the Diff pane's code sideways (right rather than left).
    ScrollDiffSideways(bool),
    /// Diff against the source or against the agent's previous change.
    ToggleDiffBase,
    /// Show the file of the next finding in the Diff pane (Verdict pane focused).
    OpenFinding,
    /// The Agent pane's prompts and transcript, or its terminal.
    ToggleTranscript,
    /// Attach to the agent's terminal.
    Attach,
    /// Detach from it.
    Detach,
    /// A session command, which the policy answers (`i` and `m` open their editor first, `x`
    /// asks to confirm).
    Session(KeyedCommand),
    /// Replay: play or pause.
    PlayPause,
    /// Replay: seek by this many seconds.
    Seek(f64),
    /// Replay: a faster (true) or slower playback speed.
    Speed(bool),
    /// Replay: jump to the next (true) or previous marker.
    Jump(bool),
    /// Replay: leave and re-run verify and grade on the run's workspace.
    Regrade,
}

/// One line of the key table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// The keys.
    pub keys: &'static [Key],
    /// Where they work.
    pub works: &'static [Situation],
    /// What they do.
    pub action: KeyAction,
    /// In the key hint: the situations, the keys' name and what they do.
    pub hint: Option<(&'static [Situation], &'static str, &'static str)>,
    /// On the help screen: the keys' name and what they do (None: named by another row).
    pub help: Option<(&'static str, &'static str)>,
}

impl KeyAction {
    /// The session command this action gives, which the policy answers
    /// ([`crate::session::policy::Policy::answers`]); None for what the view does alone.
    pub fn command(self) -> Option<KeyedCommand> {
        match self {
            A::Session(command) => Some(command),
            _ => None,
        }
    }
}

use KeyAction as A;
use Situation::{Attached, Ended, Replay, Running};

const LIVE: &[Situation] = &[Running, Ended];
const VIEWING: &[Situation] = &[Running, Ended, Replay];

/// The keys, in the order of the key hint and the help screen.
pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[Key::Char(' ')],
        works: &[Replay],
        action: A::PlayPause,
        hint: Some((&[Replay], "Space", "play/pause")),
        help: Some((
            "replay: Space ← → < >",
            "play/pause, seek 5 s, slower/faster",
        )),
    },
    Binding {
        keys: &[Key::Code(KeyCode::Left)],
        works: &[Replay],
        action: A::Seek(-5.0),
        hint: Some((&[Replay], "←/→", "seek 5 s")),
        help: None,
    },
    Binding {
        keys: &[Key::Code(KeyCode::Right)],
        works: &[Replay],
        action: A::Seek(5.0),
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Char('<')],
        works: &[Replay],
        action: A::Speed(false),
        hint: Some((&[Replay], "</>", "speed")),
        help: None,
    },
    Binding {
        keys: &[Key::Char('>')],
        works: &[Replay],
        action: A::Speed(true),
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Char(',')],
        works: &[Replay],
        action: A::Jump(false),
        hint: Some((&[Replay], ",/.", "prev/next phase")),
        help: Some(("replay: , .", "previous / next phase change or verdict")),
    },
    Binding {
        keys: &[Key::Char('.')],
        works: &[Replay],
        action: A::Jump(true),
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Char('r')],
        works: &[Replay],
        action: A::Regrade,
        hint: None,
        help: Some((
            "replay: r",
            "leave the replay and re-run verify and grade on the run's workspace",
        )),
    },
    Binding {
        keys: &[Key::Char(KeyedCommand::Next.key())],
        works: LIVE,
        action: A::Session(KeyedCommand::Next),
        hint: Some((LIVE, "n", "next")),
        help: Some(("n", "next: advance to the next phase (step mode)")),
    },
    Binding {
        keys: &[Key::Char(KeyedCommand::ToggleMode.key())],
        works: LIVE,
        action: A::Session(KeyedCommand::ToggleMode),
        hint: Some((LIVE, "s", "step/auto")),
        help: Some(("s", "toggle step / auto mode")),
    },
    Binding {
        keys: &[Key::Char(KeyedCommand::TogglePause.key())],
        works: LIVE,
        action: A::Session(KeyedCommand::TogglePause),
        hint: Some((LIVE, "p", "pause")),
        help: Some(("p", "pause / resume the agent (the whole process group)")),
    },
    Binding {
        keys: &[Key::Char(KeyedCommand::Inject.key())],
        works: LIVE,
        action: A::Session(KeyedCommand::Inject),
        hint: Some((LIVE, "i", "inject")),
        help: Some((
            "i",
            "inject the phase-two details (Ctrl-S sends, Esc cancels)",
        )),
    },
    Binding {
        keys: &[Key::Char(KeyedCommand::Message.key())],
        works: LIVE,
        action: A::Session(KeyedCommand::Message),
        hint: Some((LIVE, "m", "message")),
        help: Some(("m", "message the agent")),
    },
    Binding {
        keys: &[Key::Char(KeyedCommand::Rerun.key())],
        works: LIVE,
        action: A::Session(KeyedCommand::Rerun),
        hint: Some((LIVE, "r", "re-verify")),
        help: Some((
            "r",
            "re-run verify and grade on the current workspace (also after the end)",
        )),
    },
    Binding {
        keys: &[Key::Char(KeyedCommand::OpenShell.key())],
        works: LIVE,
        action: A::Session(KeyedCommand::OpenShell),
        hint: Some((LIVE, "o", "shell")),
        help: Some((
            "o",
            "after the end: open a shell in the workspace in the Agent pane",
        )),
    },
    Binding {
        keys: &[Key::Char('a')],
        works: LIVE,
        action: A::Attach,
        hint: Some((LIVE, "a", "attach")),
        help: Some(("a", "attach: keys go to the agent's terminal until Ctrl-]")),
    },
    Binding {
        keys: &[Key::Char(KeyedCommand::Abort.key())],
        works: &[Running],
        action: A::Session(KeyedCommand::Abort),
        hint: Some((&[Running], "x", "abort")),
        help: Some(("x", "abort the run (asks to confirm, y)")),
    },
    Binding {
        keys: &[Key::Char('t')],
        works: VIEWING,
        action: A::ToggleTranscript,
        hint: Some((LIVE, "t", "transcript")),
        help: Some((
            "t",
            "Agent pane: the prompts and the agent's transcript / its terminal",
        )),
    },
    Binding {
        keys: &[Key::Code(KeyCode::Tab)],
        works: VIEWING,
        action: A::FocusNext,
        hint: Some((VIEWING, "Tab/1-5", "focus")),
        help: Some(("Tab / Shift-Tab", "focus the next / previous pane")),
    },
    Binding {
        keys: &[Key::Code(KeyCode::BackTab)],
        works: VIEWING,
        action: A::FocusPrevious,
        hint: None,
        help: None,
    },
    Binding {
        keys: &[
            Key::Char('1'),
            Key::Char('2'),
            Key::Char('3'),
            Key::Char('4'),
            Key::Char('5'),
        ],
        works: VIEWING,
        action: A::FocusNumber,
        hint: None,
        help: Some(("1 … 5", "focus Agent, Diff, Run log, Metrics, Verdict")),
    },
    Binding {
        keys: &[Key::Char('z')],
        works: VIEWING,
        action: A::Zoom,
        hint: Some((VIEWING, "z", "zoom")),
        help: Some(("z", "zoom the focused pane / restore")),
    },
    Binding {
        keys: &[Key::Char('[')],
        works: VIEWING,
        action: A::PreviousFile,
        hint: Some((&[Ended], "[ ]", "files")),
        help: Some(("[ ]", "previous / next file in the Diff pane")),
    },
    Binding {
        keys: &[Key::Char(']')],
        works: VIEWING,
        action: A::NextFile,
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Char('h')],
        works: VIEWING,
        action: A::ScrollDiffSideways(false),
        hint: None,
        help: Some(("h l", "scroll the Diff pane's code left / right")),
    },
    Binding {
        keys: &[Key::Char('l')],
        works: VIEWING,
        action: A::ScrollDiffSideways(true),
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Char('v')],
        works: VIEWING,
        action: A::ToggleDiffBase,
        hint: Some((&[Ended], "v", "diff base")),
        help: Some((
            "v",
            "Diff: against the original / against the agent's previous change",
        )),
    },
    Binding {
        keys: &[Key::Code(KeyCode::Enter)],
        works: VIEWING,
        action: A::OpenFinding,
        hint: Some((&[Ended], "Enter", "finding→diff")),
        help: Some((
            "Enter (Verdict)",
            "show the next finding in the Diff pane, at its line",
        )),
    },
    Binding {
        keys: &[Key::Char('j'), Key::Code(KeyCode::Down)],
        works: VIEWING,
        action: A::Scroll(-1),
        hint: None,
        help: Some((
            "j k PgUp PgDn g G",
            "scroll the focused pane; G follows the end",
        )),
    },
    Binding {
        keys: &[Key::Char('k'), Key::Code(KeyCode::Up)],
        works: VIEWING,
        action: A::Scroll(1),
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Code(KeyCode::PageDown)],
        works: VIEWING,
        action: A::Scroll(-20),
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Code(KeyCode::PageUp)],
        works: VIEWING,
        action: A::Scroll(20),
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Char('g')],
        works: VIEWING,
        action: A::ScrollToStart,
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Char('G')],
        works: VIEWING,
        action: A::ScrollToEnd,
        hint: None,
        help: None,
    },
    Binding {
        keys: &[Key::Char('?')],
        works: VIEWING,
        action: A::Help,
        hint: Some((VIEWING, "?", "help")),
        help: Some(("?", "this help")),
    },
    Binding {
        keys: &[Key::Char('q')],
        works: VIEWING,
        action: A::Quit,
        hint: Some((VIEWING, "q", "quit")),
        help: Some((
            "q / Ctrl-C",
            "quit (asks to confirm, y, while something runs)",
        )),
    },
    Binding {
        keys: &[Key::Ctrl('c')],
        works: VIEWING,
        action: A::ConfirmQuit,
        hint: None,
        help: None,
    },
    // A terminal sends 0x1d for Ctrl-], which crossterm reports as Ctrl-5.
    Binding {
        keys: &[Key::Ctrl(']'), Key::Ctrl('5')],
        works: &[Attached],
        action: A::Detach,
        hint: Some((&[Attached], "Ctrl-]", "detaches")),
        help: None,
    },
];

/// What the help screen adds that is not a key.
pub const MOUSE_HELP: (&str, &str) = (
    "mouse",
    "wheel scrolls the pane under the pointer, a click focuses it",
);

/// The binding of `key` in `situation`, if any.
pub fn lookup(key: &KeyEvent, situation: Situation) -> Option<&'static Binding> {
    BINDINGS
        .iter()
        .find(|b| b.works.contains(&situation) && b.keys.iter().any(|k| k.matches(key)))
}

/// The key hint's entries in `situation`: the keys' name and what they do.
pub fn hints(
    situation: Situation,
) -> impl Iterator<Item = (&'static str, &'static str, KeyAction)> {
    BINDINGS.iter().filter_map(move |b| {
        let (situations, keys, text) = b.hint?;
        situations
            .contains(&situation)
            .then_some((keys, text, b.action))
    })
}

/// The help screen's rows: the keys' name, what they do, and the session command they give
/// (which the policy may decline now), if any.
pub fn help_rows() -> impl Iterator<Item = (&'static str, &'static str, Option<KeyedCommand>)> {
    BINDINGS
        .iter()
        .filter_map(|b| {
            let (keys, text) = b.help?;
            Some((keys, text, b.action.command()))
        })
        .chain(std::iter::once((MOUSE_HELP.0, MOUSE_HELP.1, None)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_key_has_two_bindings_in_one_situation() {
        let mut checked = 0;
        for situation in [Running, Ended, Replay, Attached] {
            let bound: Vec<&Key> = BINDINGS
                .iter()
                .filter(|b| b.works.contains(&situation))
                .flat_map(|b| b.keys)
                .collect();
            for (i, key) in bound.iter().enumerate() {
                assert!(
                    !bound[i + 1..].contains(key),
                    "{key:?} is bound twice in {situation:?}"
                );
                checked += 1;
            }
        }
        assert!(checked > 60, "{checked}");
    }

    #[test]
    fn every_hinted_binding_works_where_it_is_hinted() {
        for b in BINDINGS {
            if let Some((situations, keys, _)) = b.hint {
                for s in situations {
                    assert!(b.works.contains(s), "{keys} is hinted in {s:?}");
                }
            }
        }
    }
}

//! A prompt or message on its way into an interactive agent: pasted once the agent is ready,
//! Enter once its screen took the paste ([`Submission`]); a first-run screen that asks the
//! human something is reported, never answered by the prompt, except that in auto mode the
//! agent's question whether to trust this run's own workspace is answered yes. It decides
//! what to type from the agent's screen and clock; the driver types it and records it.

use std::path::Path;

use tokio::time::Instant;

use crate::agent::submit::{
    Question, Step, Submission, TRUST_MOVES, TRUST_QUIET, TRUST_SETTLE, trust_keys,
};

use super::super::policy::AgentClock;

/// The agent as the delivery reads it at one moment.
pub(super) struct AgentNow<'a> {
    /// Its screen.
    pub screen: &'a vt100::Screen,
    /// When it started and last printed.
    pub clock: &'a AgentClock,
    /// Whether xstack answers the folder-trust question (auto mode: nobody else is there).
    pub answers_trust: bool,
    /// This run's workspace, the only folder xstack trusts on the human's behalf.
    pub workspace: &'a Path,
}

/// What to do for the waiting prompt now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Delivery {
    /// Nothing yet.
    Wait,
    /// Type these bytes (the paste, or the Enter that submits it); a question the agent was
    /// reported asking is gone.
    Type(Vec<u8>),
    /// The agent shows a screen that asks the human WHAT.
    Asks(&'static str),
    /// Answer the folder-trust question with these keys; `answered` when they are the Enter
    /// that answers it (once a session).
    Trust {
        /// The keys (a Down towards "yes", or Enter on it).
        keys: &'static [u8],
        /// Whether the question is answered with them.
        answered: bool,
    },
}

/// Where the auto-mode answer to the folder-trust question is.
#[derive(Debug, Default)]
struct TrustAnswer {
    /// Keys typed into the screen so far (at most [`TRUST_MOVES`] moves and one Enter).
    keys_typed: u32,
    /// When it was answered.
    answered_at: Option<Instant>,
    /// The screen when the last key went into it, and when.
    moved_from: Option<(String, Instant)>,
    /// When the screen was first seen: it is read once its drawing settled, or this long
    /// after at the latest.
    seen_at: Option<Instant>,
}

/// The prompt (or message) waiting to go into the agent, and the trust answer's progress.
#[derive(Debug, Default)]
pub(super) struct PromptDelivery {
    waiting: Option<Submission>,
    trust: TrustAnswer,
}

impl PromptDelivery {
    /// Sends `text` as the agent's next prompt, in place of any still waiting.
    pub(super) fn send(&mut self, text: &str) {
        self.waiting = Some(Submission::new(text));
    }

    /// Whether a prompt is on its way.
    pub(super) fn waiting(&self) -> bool {
        self.waiting.is_some()
    }

    /// Drops the prompt on its way (the turn ended).
    pub(super) fn clear(&mut self) {
        self.waiting = None;
    }

    /// A message for the running agent: it becomes the prompt when none waits, or the
    /// waiting prompt's last paragraph when it is not pasted yet; false when the prompt is
    /// already pasted and the message is to be typed on its own.
    pub(super) fn take_message(&mut self, text: &str) -> bool {
        match self.waiting.as_mut() {
            None => {
                self.waiting = Some(Submission::new(text));
                true
            }
            Some(waiting) => waiting.add_before_paste(text),
        }
    }

    /// The next step of the waiting prompt as the agent's screen allows.
    pub(super) fn poll(&mut self, agent: &AgentNow) -> Delivery {
        let Some(submission) = self.waiting.as_mut() else {
            return Delivery::Wait;
        };
        let now = Instant::now();
        let step = submission.poll(
            agent.screen,
            now.duration_since(agent.clock.started),
            agent.clock.output_at.map(|at| now.duration_since(at)),
        );
        if submission.submitted() {
            self.waiting = None;
        }
        match step {
            Step::Wait => Delivery::Wait,
            Step::Write(bytes) => Delivery::Type(bytes),
            Step::Asks(asking)
                if asking.question == Question::FolderTrust && agent.answers_trust =>
            {
                self.answer_trust(agent)
                    .unwrap_or(Delivery::Asks(asking.asks))
            }
            Step::Asks(asking) => Delivery::Asks(asking.asks),
        }
    }

    /// In auto mode, the keys that answer the agent's question whether to trust the
    /// workspace (xstack's own copy of the source, made for this run, and nothing else):
    /// one key a redraw, so none is lost or doubled, each read from a settled screen. None
    /// when the question is the human's: another folder, a screen that never took a key,
    /// too many keys, or asked again after it was answered.
    fn answer_trust(&mut self, agent: &AgentNow) -> Option<Delivery> {
        let trust = &mut self.trust;
        if let Some(at) = trust.answered_at {
            // Answered: the screen is given time to go, then it is the human's.
            return (at.elapsed() < TRUST_SETTLE).then_some(Delivery::Wait);
        }
        if trust.keys_typed > TRUST_MOVES {
            return None;
        }
        let seen_at = *trust.seen_at.get_or_insert_with(Instant::now);
        let drawing = agent
            .clock
            .output_at
            .is_none_or(|at| at.elapsed() < TRUST_QUIET);
        if drawing && seen_at.elapsed() < TRUST_SETTLE {
            // A screen read mid-redraw may lack the folder or the marked choice.
            return Some(Delivery::Wait);
        }
        let contents = agent.screen.contents();
        if let Some((before, at)) = &trust.moved_from
            && *before == contents
        {
            // The last key has not been drawn yet.
            return (at.elapsed() < TRUST_SETTLE).then_some(Delivery::Wait);
        }
        let keys = trust_keys(&contents, agent.workspace)?;
        trust.keys_typed += 1;
        trust.moved_from = Some((contents, Instant::now()));
        let answered = keys == b"\r";
        if answered {
            trust.answered_at = Some(Instant::now());
        }
        Some(Delivery::Trust { keys, answered })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn screen(text: &str) -> vt100::Parser {
        let mut parser = vt100::Parser::new(24, 80, 0);
        parser.process(b"\x1b[?2004h");
        parser.process(text.replace('\n', "\r\n").as_bytes());
        parser
    }

    fn claude_trust(folder: &str, choices: &str) -> vt100::Parser {
        screen(&format!(
            " Accessing workspace:\n\n {folder}\n\n Quick safety check: Is this a project you created or one you trust?\n\n{choices}\n\n Enter to confirm · Esc to cancel"
        ))
    }

    /// An agent that started `started_ago` and last printed `quiet_for` ago.
    fn clock(started_ago: Duration, quiet_for: Duration) -> AgentClock {
        let now = Instant::now();
        AgentClock {
            started: now - started_ago,
            output_at: Some(now - quiet_for),
            active_at: now - quiet_for,
        }
    }

    const S: fn(u64) -> Duration = Duration::from_secs;
    const WORKSPACE: &str = "/work/run/workspace";

    fn poll(delivery: &mut PromptDelivery, parser: &vt100::Parser, auto: bool) -> Delivery {
        delivery.poll(&AgentNow {
            screen: parser.screen(),
            clock: &clock(S(10), S(1)),
            answers_trust: auto,
            workspace: Path::new(WORKSPACE),
        })
    }

    #[tokio::test(start_paused = true)]
    async fn in_auto_mode_the_workspaces_trust_is_answered_once_a_key_a_redraw_then_it_is_the_humans()
     {
        let mut delivery = PromptDelivery::default();
        delivery.send("port it");
        let on_no = claude_trust(WORKSPACE, "   1. Yes, I trust this folder\n ❯ 2. No, exit");
        assert_eq!(
            poll(&mut delivery, &on_no, true),
            Delivery::Trust {
                keys: b"\x1b[B",
                answered: false
            }
        );
        // The Down is not drawn yet: no second key into the same screen.
        assert_eq!(poll(&mut delivery, &on_no, true), Delivery::Wait);
        let on_yes = claude_trust(WORKSPACE, " ❯ 1. Yes, I trust this folder\n   2. No, exit");
        assert_eq!(
            poll(&mut delivery, &on_yes, true),
            Delivery::Trust {
                keys: b"\r",
                answered: true
            }
        );
        // Answered: the screen is given time to go, then a screen asking again is the human's.
        assert_eq!(poll(&mut delivery, &on_yes, true), Delivery::Wait);
        tokio::time::advance(TRUST_SETTLE).await;
        assert_eq!(
            poll(&mut delivery, &on_yes, true),
            Delivery::Asks("whether to trust this folder")
        );
        assert!(delivery.waiting(), "the prompt still waits for its agent");
    }

    #[tokio::test(start_paused = true)]
    async fn another_folders_trust_or_a_human_at_the_keys_is_reported_not_answered() {
        let mut delivery = PromptDelivery::default();
        delivery.send("port it");
        let parent = claude_trust(
            "/work/run",
            " ❯ 1. Yes, I trust this folder\n   2. No, exit",
        );
        assert_eq!(
            poll(&mut delivery, &parent, true),
            Delivery::Asks("whether to trust this folder")
        );
        let mut stepping = PromptDelivery::default();
        stepping.send("port it");
        let ours = claude_trust(WORKSPACE, " ❯ 1. Yes, I trust this folder\n   2. No, exit");
        assert_eq!(
            poll(&mut stepping, &ours, false),
            Delivery::Asks("whether to trust this folder")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_prompt_is_pasted_when_the_agent_is_ready_and_a_message_joins_it_until_then() {
        let mut delivery = PromptDelivery::default();
        assert_eq!(poll(&mut delivery, &screen("> "), true), Delivery::Wait);
        delivery.send("port it");
        assert!(delivery.take_message("and keep the seed"));
        assert_eq!(
            poll(&mut delivery, &screen("> "), true),
            Delivery::Type(b"\x1b[200~port it\n\nand keep the seed\x1b[201~".to_vec())
        );
        assert!(
            !delivery.take_message("too late"),
            "a message after the paste is typed on its own"
        );
        delivery.clear();
        assert!(!delivery.waiting());
        assert!(
            delivery.take_message("next"),
            "with nothing waiting, a message is the next prompt"
        );
        assert!(delivery.waiting());
    }
}

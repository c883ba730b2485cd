//! What the agent says about its work beyond its screen: its structured output parsed into
//! transcript items, Codex's commands read from its session files, and the id of its
//! conversation (to resume it in the next phase). It keeps these across the agent's
//! restarts and returns events; the driver records them.

use crate::agent::sessions::CodexCommands;
use crate::agent::transcript::{TranscriptItem, TranscriptParser};
use crate::event::Event;

/// The agent's conversation, as read so far.
#[derive(Default)]
pub(super) struct Conversation {
    /// Parses the running agent's structured output (None: it has none).
    transcript: Option<TranscriptParser>,
    /// Codex's commands, from its session files (read while it works and at the end of
    /// each turn).
    codex: Option<CodexCommands>,
    /// The conversation id the agent reported.
    session: Option<String>,
}

impl Conversation {
    /// The conversation id the agent reported, to resume it.
    pub(super) fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// A new agent process whose output `parser` reads, continuing what the last one said.
    pub(super) fn agent_started(&mut self, parser: Option<TranscriptParser>) {
        self.transcript = parser.map(|parser| parser.continuing(self.transcript.as_ref()));
    }

    /// Whether Codex's session files are read already (kept across a restart: their offsets
    /// say what earlier turns counted).
    pub(super) fn reads_codex_sessions(&self) -> bool {
        self.codex.is_some()
    }

    /// Reads Codex's commands from `commands` from now on.
    pub(super) fn read_codex_sessions(&mut self, commands: CodexCommands) {
        self.codex = Some(commands);
    }

    /// A piece of the agent's output in `phase` (`ended`: its last): the transcript items it
    /// completed (Codex's commands as its session files have them, where they are read).
    pub(super) fn output(&mut self, text: &str, ended: bool, phase: u8) -> Vec<Event> {
        let Some(parser) = self.transcript.as_mut() else {
            return Vec::new();
        };
        let mut items = parser.feed(text);
        if ended {
            items.extend(parser.finish());
        }
        let mut events = Vec::new();
        for item in items {
            let item = match self.codex.as_mut() {
                Some(commands) => match commands.from_output(item) {
                    Some(item) => item,
                    None => continue,
                },
                None => item,
            };
            if let TranscriptItem::Session { id } = &item {
                self.session = Some(id.clone());
            }
            events.push(Event::Transcript { phase, item });
        }
        events
    }

    /// The commands Codex wrote to its session files since the last reading (at the
    /// `end_of_turn`, with the ones its `exec --json` output reported where those files gave
    /// none), as `phase`'s transcript.
    pub(super) fn codex_commands(&mut self, phase: u8, end_of_turn: bool) -> Vec<Event> {
        let Some(commands) = self.codex.as_mut() else {
            return Vec::new();
        };
        let items = if end_of_turn {
            commands.end_turn()
        } else {
            commands.poll(std::time::Instant::now())
        };
        items
            .into_iter()
            .map(|item| Event::Transcript { phase, item })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::agent::transcript::OutputFormat;

    fn claude() -> Option<TranscriptParser> {
        TranscriptParser::new(OutputFormat::ClaudeStreamJson, Path::new("/w"))
    }

    #[test]
    fn the_agents_output_becomes_transcript_events_and_its_session_is_kept_across_a_restart() {
        let mut conversation = Conversation::default();
        assert!(
            conversation.output("anything\r\n", false, 1).is_empty(),
            "before an agent with structured output starts, nothing is parsed"
        );
        conversation.agent_started(claude());
        let init = r#"{"type":"system","subtype":"init","session_id":"s-1","tools":[]}"#;
        // A line cut in two makes its event when it is whole.
        let (head, tail) = init.split_at(20);
        assert!(conversation.output(head, false, 1).is_empty());
        let events = conversation.output(&format!("{tail}\r\n"), false, 1);
        assert_eq!(
            events,
            vec![Event::Transcript {
                phase: 1,
                item: TranscriptItem::Session { id: "s-1".into() }
            }]
        );
        assert_eq!(conversation.session(), Some("s-1"));
        conversation.agent_started(claude());
        assert_eq!(
            conversation.session(),
            Some("s-1"),
            "the next phase's agent resumes the conversation"
        );
        let call = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"python train.py"}}]}}"#;
        let events = conversation.output(call, true, 2);
        assert_eq!(
            events,
            vec![Event::Transcript {
                phase: 2,
                item: TranscriptItem::ToolCall {
                    tool: "Bash".into(),
                    input: "python train.py".into()
                }
            }],
            "the last line counts when the output ends"
        );
        assert!(conversation.codex_commands(2, true).is_empty());
    }
}

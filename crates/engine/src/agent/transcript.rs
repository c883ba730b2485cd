//! Structured output of agents that stream JSON events (Claude Code's `stream-json`, Codex's
//! `exec --json`, Gemini CLI's `stream-json`), parsed line by line into transcript items: the
//! agent's messages, tool calls and the ones its CLI reported as failed, file edits, tokens
//! and cost, and its final word. The driver records the items as journal events; the Agent
//! pane and the Verdict pane show them.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::secrets::Secrets;

/// A line longer than this is not an event worth parsing; it is skipped.
const MAX_LINE: usize = 8 << 20;
/// Tool inputs are summarised to at most this many characters, after redaction (a cut made
/// first could leave the start of a secret that straddles it).
const MAX_INPUT: usize = 200;

/// What an agent prints on its terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// Plain terminal output: nothing to parse.
    Text,
    /// Claude Code's `--output-format stream-json` (with `--verbose`).
    ClaudeStreamJson,
    /// Codex's `exec --json` (JSON Lines of thread, turn and item events).
    CodexJson,
    /// Gemini CLI's `--output-format stream-json`.
    GeminiStreamJson,
    /// Not a terminal's: the lines of a Codex session file
    /// (`$CODEX_HOME/sessions/…/rollout-*.jsonl`), which an interactive Codex writes as it
    /// works ([`super::sessions::CodexSessions`] reads them).
    CodexRollout,
}

/// One thing the agent reported about its work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TranscriptItem {
    /// The agent's conversation id, used to resume the conversation in phase two.
    Session {
        /// The id.
        id: String,
    },
    /// Text from the agent.
    Message {
        /// The text.
        text: String,
    },
    /// A tool the agent called.
    ToolCall {
        /// The tool's name.
        tool: String,
        /// A one-line summary of its input (the command, the file…).
        input: String,
    },
    /// A tool call its CLI reported as failed: an error result, or a command that could not
    /// run or exited non-zero. It follows the call's [`TranscriptItem::ToolCall`].
    ToolFailed {
        /// The tool's name.
        tool: String,
        /// The error, in one line: the exit status and the output's last line that says
        /// something (a Python traceback's exception, a shell's `command not found`).
        error: String,
    },
    /// A file the agent wrote or edited (relative to the workspace when inside it).
    FileEdit {
        /// The file.
        path: String,
    },
    /// Tokens and cost of one agent invocation, as the agent reported them.
    Usage {
        /// Input tokens.
        input_tokens: u64,
        /// Output tokens.
        output_tokens: u64,
        /// Cost in US dollars, when the agent reports it.
        cost_usd: Option<f64>,
    },
    /// The agent's own last word on its turn.
    Final {
        /// Its final message.
        text: String,
        /// Whether the agent reported success (not an error).
        success: bool,
    },
}

impl TranscriptItem {
    /// The bytes of text the item holds (for what a replay snapshot costs).
    pub fn text_len(&self) -> usize {
        match self {
            TranscriptItem::Session { id: text }
            | TranscriptItem::Message { text }
            | TranscriptItem::FileEdit { path: text }
            | TranscriptItem::Final { text, .. } => text.len(),
            TranscriptItem::ToolCall { tool, input }
            | TranscriptItem::ToolFailed { tool, error: input } => tool.len() + input.len(),
            TranscriptItem::Usage { .. } => 0,
        }
    }

    /// A one-line description for progress output and the timeline.
    pub fn describe(&self) -> String {
        match self {
            TranscriptItem::Session { id } => format!("agent session {id}"),
            TranscriptItem::Message { text } => format!("agent says: {}", first_line(text)),
            TranscriptItem::ToolCall { tool, input } => format!("agent tool {tool}: {input}"),
            TranscriptItem::ToolFailed { tool, error } => {
                format!("agent tool {tool} failed: {error}")
            }
            TranscriptItem::FileEdit { path } => format!("agent edited {path}"),
            TranscriptItem::Usage {
                input_tokens,
                output_tokens,
                cost_usd,
            } => {
                let cost = cost_usd.map_or_else(String::new, |c| format!(", cost ${c:.4}"));
                format!(
                    "agent usage: {input_tokens} input tokens, {output_tokens} output tokens{cost}"
                )
            }
            TranscriptItem::Final { text, success } => format!(
                "agent's final message ({}): {}",
                if *success { "success" } else { "error" },
                first_line(text)
            ),
        }
    }
}

/// The tool calls of a phase's transcript and the ones that failed, as its CLI reported
/// them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolTally {
    /// Tool calls made.
    pub calls: usize,
    /// Tool calls reported as failed.
    pub failed: usize,
    /// The first failed call's tool and error.
    pub first_error: Option<(String, String)>,
}

impl ToolTally {
    /// Counts the calls and failures among `items`.
    pub fn of(items: &[TranscriptItem]) -> ToolTally {
        let mut tally = ToolTally::default();
        for item in items {
            match item {
                TranscriptItem::ToolCall { .. } => tally.calls += 1,
                TranscriptItem::ToolFailed { tool, error } => {
                    tally.failed += 1;
                    tally
                        .first_error
                        .get_or_insert_with(|| (tool.clone(), error.clone()));
                }
                _ => {}
            }
        }
        tally
    }

    /// Every call the agent made failed (and it made some): it could not work.
    pub fn all_failed(&self) -> bool {
        self.calls > 0 && self.failed >= self.calls
    }

    /// The first failed call as `tool: error`.
    pub fn first_error_text(&self) -> Option<String> {
        self.first_error
            .as_ref()
            .map(|(tool, error)| format!("{tool}: {error}"))
    }

    /// `2 of 5 tool calls failed, the first: shell: exit 127: python: command not found`;
    /// None when none failed.
    pub fn line(&self) -> Option<String> {
        let first = self.first_error_text()?;
        let calls = self.calls.max(self.failed);
        Some(if calls == 1 {
            format!("its one tool call failed: {first}")
        } else if self.failed >= calls {
            format!("every one of its {calls} tool calls failed, the first: {first}")
        } else {
            format!(
                "{} of {calls} tool calls failed, the first: {first}",
                self.failed
            )
        })
    }
}

/// The line of a tool's error output that says what went wrong: the last non-empty one,
/// passing over notes that follow the error (Rust's `note: run with RUST_BACKTRACE=1`) and
/// a panic's backtrace, with the exit status before it when there is one.
fn error_line(output: &str, exit_code: Option<i64>) -> String {
    // A Rust panic's backtrace follows its message.
    let output = output
        .split_once("\nstack backtrace:")
        .map_or(output, |(message, _)| message);
    let line = output
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("note:"))
        .or_else(|| output.lines().map(str::trim).rfind(|l| !l.is_empty()));
    match (exit_code, line) {
        (Some(code), Some(line)) => format!("exit {code}: {line}"),
        (Some(code), None) => format!("exit {code}"),
        (None, Some(line)) => line.to_string(),
        (None, None) => "failed".to_string(),
    }
}

/// The first non-empty line of `text`, cut to 160 characters.
pub fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    cut(line, 160)
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Turns an agent's terminal output into transcript items, one JSON line at a time.
#[derive(Debug)]
pub struct TranscriptParser {
    format: OutputFormat,
    workspace: PathBuf,
    line: String,
    /// Codex and Gemini: the latest assistant message, for the final word.
    last_message: Option<String>,
    /// Gemini: assistant text streamed in deltas, not yet emitted.
    pending_text: String,
    /// The values redacted from tool inputs before they are cut to a summary: the same
    /// environment's secrets the recorder redacts whole texts with.
    secrets: Secrets,
    /// Codex: the thread this output belongs to and the tokens (in, out) its
    /// `turn.completed` events have reported so far. They carry the thread's running total,
    /// not the turn's, so a resumed thread's usage is what was added since.
    thread: Option<String>,
    thread_usage: (u64, u64),
    /// Claude Code and Gemini: the tool of each call id, for the result that names only the id.
    tools: HashMap<String, String>,
    /// Codex's session file: the call id and command of each shell call the model made in
    /// the turn that has not been counted yet, in order.
    rollout_commands: Vec<(String, String)>,
    /// Codex's session file: the call ids of the commands counted.
    rollout_counted: HashSet<String>,
}

impl TranscriptParser {
    /// A parser for `format`; None for plain text. Paths inside `workspace` are made relative.
    pub fn new(format: OutputFormat, workspace: &Path) -> Option<TranscriptParser> {
        (format != OutputFormat::Text).then(|| TranscriptParser {
            format,
            workspace: workspace.to_path_buf(),
            line: String::new(),
            last_message: None,
            pending_text: String::new(),
            secrets: Secrets::from_env(),
            thread: None,
            thread_usage: (0, 0),
            tools: HashMap::new(),
            rollout_commands: Vec::new(),
            rollout_counted: HashSet::new(),
        })
    }

    /// The one-line summary of a tool's input: redacted, then cut to `MAX_INPUT`.
    fn summary(&self, input: &str) -> String {
        cut(&self.secrets.redact(&input.replace('\n', " ")), MAX_INPUT)
    }

    /// This parser, for an agent that may resume the conversation `previous` parsed (the
    /// earlier phase's): usage totals of the same Codex thread are counted from where
    /// `previous` left them.
    pub fn continuing(mut self, previous: Option<&TranscriptParser>) -> TranscriptParser {
        if let Some(previous) = previous {
            self.thread.clone_from(&previous.thread);
            self.thread_usage = previous.thread_usage;
        }
        self
    }

    /// Feeds terminal text; returns the items of every line it completed.
    pub fn feed(&mut self, text: &str) -> Vec<TranscriptItem> {
        let mut items = Vec::new();
        for piece in text.split_inclusive('\n') {
            if self.line.len() + piece.len() <= MAX_LINE {
                self.line.push_str(piece);
            } else {
                self.line.clear();
            }
            if piece.ends_with('\n') {
                let line = std::mem::take(&mut self.line);
                self.parse_line(&line, &mut items);
            }
        }
        items
    }

    /// The output ended: parses the last unterminated line and flushes pending text.
    pub fn finish(&mut self) -> Vec<TranscriptItem> {
        let mut items = Vec::new();
        let line = std::mem::take(&mut self.line);
        self.parse_line(&line, &mut items);
        self.flush_text(&mut items);
        items
    }

    fn parse_line(&mut self, line: &str, items: &mut Vec<TranscriptItem>) {
        // A terminal may put escape sequences before the JSON; the event starts at `{`.
        let Some(start) = line.find('{') else {
            return;
        };
        let Ok(value) = serde_json::from_str::<Value>(line[start..].trim_end()) else {
            return;
        };
        match self.format {
            OutputFormat::ClaudeStreamJson => self.claude(&value, items),
            OutputFormat::CodexJson => self.codex(&value, items),
            OutputFormat::GeminiStreamJson => self.gemini(&value, items),
            OutputFormat::CodexRollout => self.codex_rollout(&value, items),
            OutputFormat::Text => {}
        }
    }

    fn relative(&self, path: &str) -> String {
        Path::new(path)
            .strip_prefix(&self.workspace)
            .map_or_else(|_| path.to_string(), |p| p.display().to_string())
    }

    /// A call of `tool`, known by `id` to the result that follows it.
    fn tool_call(&mut self, id: &str, tool: &str, input: &Value, items: &mut Vec<TranscriptItem>) {
        if !id.is_empty() {
            self.tools.insert(id.to_string(), tool.to_string());
        }
        items.push(TranscriptItem::ToolCall {
            tool: tool.to_string(),
            input: self.summary(&summary_text(input)),
        });
        let edits = matches!(
            tool,
            "Edit" | "Write" | "MultiEdit" | "NotebookEdit" | "write_file" | "replace"
        );
        if edits
            && let Some(path) = ["file_path", "notebook_path", "path"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str))
        {
            items.push(TranscriptItem::FileEdit {
                path: self.relative(path),
            });
        }
    }

    /// Claude Code: `system`/`init` carries the session id; `assistant` messages carry text
    /// and `tool_use` blocks; `result` ends the invocation with cost, usage and the final text.
    fn claude(&mut self, v: &Value, items: &mut Vec<TranscriptItem>) {
        match str_at(v, "type") {
            "system" if str_at(v, "subtype") == "init" => {
                if let Some(id) = v.get("session_id").and_then(Value::as_str) {
                    items.push(TranscriptItem::Session { id: id.to_string() });
                }
            }
            "assistant" => {
                let content = v
                    .pointer("/message/content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for block in &content {
                    match str_at(block, "type") {
                        "text" => {
                            let text = str_at(block, "text").trim();
                            if !text.is_empty() {
                                items.push(TranscriptItem::Message {
                                    text: text.to_string(),
                                });
                            }
                        }
                        "tool_use" => self.tool_call(
                            str_at(block, "id"),
                            str_at(block, "name"),
                            block.get("input").unwrap_or(&Value::Null),
                            items,
                        ),
                        _ => {}
                    }
                }
            }
            "user" => {
                let content = v
                    .pointer("/message/content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for block in &content {
                    let failed = str_at(block, "type") == "tool_result"
                        && block
                            .get("is_error")
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                    if failed {
                        let output = result_text(block.get("content").unwrap_or(&Value::Null));
                        self.tool_failed(str_at(block, "tool_use_id"), &output, items);
                    }
                }
            }
            "result" => {
                let usage = v.get("usage").unwrap_or(&Value::Null);
                let input = [
                    "input_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                ]
                .iter()
                .map(|k| u64_at(usage, k))
                .sum();
                let cost = v
                    .get("total_cost_usd")
                    .or_else(|| v.get("cost_usd"))
                    .and_then(Value::as_f64);
                items.push(TranscriptItem::Usage {
                    input_tokens: input,
                    output_tokens: u64_at(usage, "output_tokens"),
                    cost_usd: cost,
                });
                let success = str_at(v, "subtype") == "success"
                    && !v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                items.push(TranscriptItem::Final {
                    text: str_at(v, "result").trim().to_string(),
                    success,
                });
            }
            _ => {}
        }
    }

    /// Codex: `thread.started` carries the thread id; `item.completed` carries messages,
    /// commands and file changes; `turn.completed` the usage; `turn.failed` the error.
    fn codex(&mut self, v: &Value, items: &mut Vec<TranscriptItem>) {
        match str_at(v, "type") {
            "thread.started" => {
                if let Some(id) = v.get("thread_id").and_then(Value::as_str) {
                    if self.thread.as_deref() != Some(id) {
                        self.thread = Some(id.to_string());
                        self.thread_usage = (0, 0);
                    }
                    items.push(TranscriptItem::Session { id: id.to_string() });
                }
            }
            "item.completed" => {
                let item = v.get("item").unwrap_or(&Value::Null);
                match str_at(item, "type") {
                    "agent_message" => {
                        let text = str_at(item, "text").trim().to_string();
                        if !text.is_empty() {
                            self.last_message = Some(text.clone());
                            items.push(TranscriptItem::Message { text });
                        }
                    }
                    "command_execution" => {
                        self.codex_item_command(str_at(item, "command").to_string(), item, items);
                    }
                    "file_change" => {
                        for change in item
                            .get("changes")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            if let Some(path) = change.get("path").and_then(Value::as_str) {
                                items.push(TranscriptItem::FileEdit {
                                    path: self.relative(path),
                                });
                            }
                        }
                    }
                    "mcp_tool_call" => {
                        let tool = format!("{}.{}", str_at(item, "server"), str_at(item, "tool"));
                        items.push(TranscriptItem::ToolCall {
                            tool: tool.clone(),
                            input: self.summary(&summary_text(
                                item.get("arguments").unwrap_or(&Value::Null),
                            )),
                        });
                        if str_at(item, "status") == "failed" {
                            let error = item
                                .pointer("/error/message")
                                .and_then(Value::as_str)
                                .unwrap_or("failed");
                            items.push(TranscriptItem::ToolFailed {
                                tool,
                                error: self.summary(&error_line(error, None)),
                            });
                        }
                    }
                    "web_search" => items.push(TranscriptItem::ToolCall {
                        tool: "web_search".to_string(),
                        input: self.summary(str_at(item, "query")),
                    }),
                    _ => {}
                }
            }
            "turn.completed" => {
                let usage = v.get("usage").unwrap_or(&Value::Null);
                let total = (
                    u64_at(usage, "input_tokens"),
                    u64_at(usage, "output_tokens"),
                );
                let (seen_in, seen_out) = self.thread_usage;
                self.thread_usage = total;
                items.push(TranscriptItem::Usage {
                    input_tokens: total.0.saturating_sub(seen_in),
                    output_tokens: total.1.saturating_sub(seen_out),
                    cost_usd: None,
                });
                items.push(TranscriptItem::Final {
                    text: self.last_message.take().unwrap_or_default(),
                    success: true,
                });
            }
            "turn.failed" | "error" => {
                let message = v
                    .pointer("/error/message")
                    .or_else(|| v.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("the turn failed");
                items.push(TranscriptItem::Final {
                    text: message.to_string(),
                    success: false,
                });
            }
            _ => {}
        }
    }

    /// A command Codex ran (`command`, with `item`'s `status`, `exit_code` and
    /// `aggregated_output`): a `shell` call, failed when its status says so or it exited
    /// non-zero.
    fn codex_item_command(&self, input: String, item: &Value, items: &mut Vec<TranscriptItem>) {
        let code = item.get("exit_code").and_then(Value::as_i64);
        let failed =
            matches!(str_at(item, "status"), "failed" | "declined") || code.is_some_and(|c| c != 0);
        self.codex_command(
            input,
            code,
            failed,
            str_at(item, "aggregated_output"),
            items,
        );
    }

    /// A `shell` call of `input` that exited with `code`, and when it `failed`, its error
    /// from `output`.
    fn codex_command(
        &self,
        mut input: String,
        code: Option<i64>,
        failed: bool,
        output: &str,
        items: &mut Vec<TranscriptItem>,
    ) {
        if let Some(code) = code {
            input.push_str(&format!(" (exit {code})"));
        }
        items.push(TranscriptItem::ToolCall {
            tool: "shell".to_string(),
            input: self.summary(&input),
        });
        if failed {
            items.push(TranscriptItem::ToolFailed {
                tool: "shell".to_string(),
                error: self.summary(&error_line(output, code)),
            });
        }
    }

    /// Codex's session file, the record of what ran. Each command that ran is an
    /// `event_msg` whose payload is `item_completed` with a `CommandExecution` item (its argv
    /// in `command`, with `status`, `exit_code` and `aggregated_output` as in `exec --json`).
    /// A command that never started (a sandbox that cannot start panics with exit 101) has
    /// no such item, in the session file as in `exec --json`: only the model's call (a
    /// `response_item` `function_call` of the shell tool) and Codex's answer to it (a
    /// `function_call_output`, `Process exited with code 101` and the panic), which are
    /// counted instead, each call once (by its id, within its turn). Only the commands are
    /// taken: the conversation is on the agent's screen or in its `exec --json` output.
    fn codex_rollout(&mut self, v: &Value, items: &mut Vec<TranscriptItem>) {
        let payload = v.get("payload").unwrap_or(&Value::Null);
        match (str_at(v, "type"), str_at(payload, "type")) {
            ("event_msg", "item_completed") => {
                let item = payload.get("item").unwrap_or(&Value::Null);
                if str_at(item, "type") != "CommandExecution" {
                    return;
                }
                let id = str_at(item, "id");
                if !id.is_empty() && !self.rollout_counted.insert(id.to_string()) {
                    return;
                }
                self.rollout_commands.retain(|(call, _)| call != id);
                let argv: Vec<&str> = item
                    .get("command")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                self.codex_item_command(shell_words::join(argv), item, items);
            }
            ("response_item", "function_call")
                if CODEX_SHELL_TOOLS.contains(&str_at(payload, "name")) =>
            {
                self.rollout_commands.push((
                    str_at(payload, "call_id").to_string(),
                    codex_call_command(str_at(payload, "arguments")),
                ));
            }
            ("response_item", "function_call_output") => self.codex_call_output(payload, items),
            ("event_msg", "task_complete" | "turn_aborted") => self.codex_turn_ended(items),
            // Call ids are a turn's: a model (a scripted one) may use them again later.
            ("event_msg", "task_started") => {
                self.codex_turn_ended(items);
                self.rollout_counted.clear();
            }
            _ => {}
        }
    }

    /// The turn ended: a shell call not counted yet was answered that its command still
    /// runs (`exec` ends it with the turn), and counts as a call, not a failure.
    fn codex_turn_ended(&mut self, items: &mut Vec<TranscriptItem>) {
        for (call_id, command) in std::mem::take(&mut self.rollout_commands) {
            if self.rollout_counted.insert(call_id) {
                items.push(TranscriptItem::ToolCall {
                    tool: "shell".to_string(),
                    input: self.summary(&format!("{command} (still running as its turn ended)")),
                });
            }
        }
    }

    /// Codex's answer to the model's shell call of `payload`'s `call_id`, when no
    /// `CommandExecution` item counted the call: its exit status (`Process exited with code
    /// N`) and output, or, with neither, why the command did not run. A command still
    /// running (`Process running with session ID …`) is counted by its item when it ends,
    /// or as the turn ends.
    fn codex_call_output(&mut self, payload: &Value, items: &mut Vec<TranscriptItem>) {
        let call_id = str_at(payload, "call_id");
        let Some(index) = self
            .rollout_commands
            .iter()
            .position(|(call, _)| call == call_id)
        else {
            return;
        };
        if self.rollout_counted.contains(call_id) {
            return;
        }
        let (text, success) = call_output(payload.get("output").unwrap_or(&Value::Null));
        let code = CODEX_EXIT
            .captures(&text)
            .and_then(|c| c.get(1))
            .and_then(|m| m.as_str().parse::<i64>().ok());
        if code.is_none() && text.contains(CODEX_STILL_RUNNING) {
            return;
        }
        let (_, command) = self.rollout_commands.remove(index);
        self.rollout_counted.insert(call_id.to_string());
        let output = text
            .split_once("\nOutput:\n")
            .map_or(text.as_str(), |(_, output)| output);
        let failed = success == Some(false) || code.map_or(success.is_none(), |c| c != 0);
        self.codex_command(command, code, failed, output, items);
    }

    /// The call `id` failed with `output`.
    fn tool_failed(&self, id: &str, output: &str, items: &mut Vec<TranscriptItem>) {
        let tool = self.tools.get(id).map_or("tool", String::as_str);
        items.push(TranscriptItem::ToolFailed {
            tool: tool.to_string(),
            error: self.summary(&error_line(output, None)),
        });
    }

    fn flush_text(&mut self, items: &mut Vec<TranscriptItem>) {
        let text = std::mem::take(&mut self.pending_text);
        let text = text.trim();
        if !text.is_empty() {
            self.last_message = Some(text.to_string());
            items.push(TranscriptItem::Message {
                text: text.to_string(),
            });
        }
    }

    /// Gemini CLI: `init` carries the session id; assistant `message`s stream in deltas;
    /// `tool_use` the calls; `result` the statistics.
    fn gemini(&mut self, v: &Value, items: &mut Vec<TranscriptItem>) {
        let kind = str_at(v, "type");
        if kind == "message" && str_at(v, "role") == "assistant" {
            if !v.get("delta").and_then(Value::as_bool).unwrap_or(false) {
                self.flush_text(items);
            }
            self.pending_text.push_str(str_at(v, "content"));
            return;
        }
        self.flush_text(items);
        match kind {
            "init" => {
                if let Some(id) = v.get("session_id").and_then(Value::as_str) {
                    items.push(TranscriptItem::Session { id: id.to_string() });
                }
            }
            "tool_use" => self.tool_call(
                str_at(v, "tool_id"),
                str_at(v, "tool_name"),
                v.get("parameters").unwrap_or(&Value::Null),
                items,
            ),
            "tool_result" if str_at(v, "status") == "error" => {
                let error = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map_or_else(
                        || result_text(v.get("output").unwrap_or(&Value::Null)),
                        str::to_string,
                    );
                self.tool_failed(str_at(v, "tool_id"), &error, items);
            }
            "result" => {
                let stats = v.get("stats").unwrap_or(&Value::Null);
                items.push(TranscriptItem::Usage {
                    input_tokens: u64_at(stats, "input_tokens"),
                    output_tokens: u64_at(stats, "output_tokens"),
                    cost_usd: None,
                });
                let failed = str_at(v, "status") == "error" || v.get("error").is_some();
                let text = if failed {
                    v.pointer("/error/message")
                        .and_then(Value::as_str)
                        .unwrap_or("the run failed")
                        .to_string()
                } else {
                    self.last_message.take().unwrap_or_default()
                };
                items.push(TranscriptItem::Final {
                    text,
                    success: !failed,
                });
            }
            _ => {}
        }
    }
}

/// The names Codex gives the shell tool it offers the model.
const CODEX_SHELL_TOOLS: [&str; 4] = ["exec_command", "shell", "shell_command", "container.exec"];

/// Codex's answer to a shell call whose command has not ended yet.
const CODEX_STILL_RUNNING: &str = "Process running with session ID";

/// The exit status in Codex's answer to a shell call: `Process exited with code 101`, or
/// its older tools' `Exit code: 1`.
static CODEX_EXIT: LazyLock<Regex> = LazyLock::new(|| {
    crate::patterns::constant(r"(?m)^(?:Process exited with code|Exit code:) (-?\d+)\s*$")
});

/// The command of a Codex shell call, from its `arguments` (JSON text): its `cmd` or
/// `command` (a string, or an argv joined); the arguments as they are when they are not
/// JSON.
fn codex_call_command(arguments: &str) -> String {
    let Ok(args) = serde_json::from_str::<Value>(arguments) else {
        return arguments.to_string();
    };
    match args.get("cmd").or_else(|| args.get("command")) {
        Some(Value::String(command)) => command.clone(),
        Some(Value::Array(argv)) => {
            shell_words::join(argv.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        }
        _ => arguments.to_string(),
    }
}

/// The text of a `function_call_output`'s `output` (a string, content items, or an object
/// with `content`), and its `success` when it says.
fn call_output(output: &Value) -> (String, Option<bool>) {
    match output {
        Value::Object(object) => (
            result_text(object.get("content").unwrap_or(&Value::Null)),
            object.get("success").and_then(Value::as_bool),
        ),
        other => (result_text(other), None),
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn u64_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// A tool result's text: a string, or the text blocks of a list of content blocks.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A tool input in one line: its command, file, pattern or URL when it has one, else its JSON.
fn summary_text(input: &Value) -> String {
    [
        "command",
        "file_path",
        "notebook_path",
        "path",
        "pattern",
        "url",
        "query",
    ]
    .iter()
    .find_map(|k| input.get(*k).and_then(Value::as_str))
    .map_or_else(|| input.to_string(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::REDACTED;

    fn parse(format: OutputFormat, text: &str) -> Vec<TranscriptItem> {
        let mut p = TranscriptParser::new(format, Path::new("/w")).unwrap();
        // Split across chunks on purpose: lines arrive in pieces from a terminal.
        let (a, b) = text.split_at(text.len() / 2);
        let mut items = p.feed(a);
        items.extend(p.feed(b));
        items.extend(p.finish());
        items
    }

    #[test]
    fn a_secret_straddling_the_summary_cut_leaves_nothing_of_itself() {
        let secret = "sk-live-0123456789abcdefghijklmnop";
        // The command puts the secret across the 200th character.
        let command = format!("{} {secret} tail", "x".repeat(MAX_INPUT - 10));
        let line = serde_json::json!({
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {"command": command}}]}
        });
        let mut p = TranscriptParser::new(OutputFormat::ClaudeStreamJson, Path::new("/w")).unwrap();
        p.secrets = Secrets::from_vars([("ANTHROPIC_API_KEY".to_string(), secret.to_string())]);
        let items = p.feed(&format!("{line}\n"));
        let [TranscriptItem::ToolCall { input, .. }] = items.as_slice() else {
            panic!("one tool call expected: {items:?}");
        };
        assert!(input.chars().count() <= MAX_INPUT, "{input}");
        assert!(
            !input.contains("sk-"),
            "a secret's prefix was kept: {input}"
        );
        let redacted_start = format!("{} {}", "x".repeat(MAX_INPUT - 10), &REDACTED[..5]);
        assert!(input.starts_with(&redacted_start), "{input}");
    }

    #[test]
    fn claude_stream_json() {
        let text = concat!(
            r#"{"type":"system","subtype":"init","session_id":"s-1","tools":[]}"#,
            "\r\n",
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Porting."},{"type":"tool_use","name":"Write","input":{"file_path":"/w/train.py","content":"x"}}]}}"#,
            "\r\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"python train.py"}}]}}"#,
            "\r\n",
            "not json\r\n",
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Done: eval_mse 0.011","session_id":"s-1","total_cost_usd":0.25,"usage":{"input_tokens":100,"cache_read_input_tokens":20,"output_tokens":7}}"#,
            "\r\n",
        );
        assert_eq!(
            parse(OutputFormat::ClaudeStreamJson, text),
            [
                TranscriptItem::Session { id: "s-1".into() },
                TranscriptItem::Message {
                    text: "Porting.".into()
                },
                TranscriptItem::ToolCall {
                    tool: "Write".into(),
                    input: "/w/train.py".into()
                },
                TranscriptItem::FileEdit {
                    path: "train.py".into()
                },
                TranscriptItem::ToolCall {
                    tool: "Bash".into(),
                    input: "python train.py".into()
                },
                TranscriptItem::Usage {
                    input_tokens: 120,
                    output_tokens: 7,
                    cost_usd: Some(0.25)
                },
                TranscriptItem::Final {
                    text: "Done: eval_mse 0.011".into(),
                    success: true
                },
            ]
        );
    }

    #[test]
    fn codex_json() {
        let text = concat!(
            r#"{"type":"thread.started","thread_id":"t-9"}"#,
            "\n",
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i0","type":"reasoning","text":"thinking"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":0,"status":"completed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"/w/model.py","kind":"update"}],"status":"completed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i3","type":"agent_message","text":"Migrated to JAX."}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":10,"output_tokens":5}}"#,
            "\n",
        );
        assert_eq!(
            parse(OutputFormat::CodexJson, text),
            [
                TranscriptItem::Session { id: "t-9".into() },
                TranscriptItem::ToolCall {
                    tool: "shell".into(),
                    input: "bash -lc ls (exit 0)".into()
                },
                TranscriptItem::FileEdit {
                    path: "model.py".into()
                },
                TranscriptItem::Message {
                    text: "Migrated to JAX.".into()
                },
                TranscriptItem::Usage {
                    input_tokens: 50,
                    output_tokens: 5,
                    cost_usd: None
                },
                TranscriptItem::Final {
                    text: "Migrated to JAX.".into(),
                    success: true
                },
            ]
        );
        let failed = parse(
            OutputFormat::CodexJson,
            "{\"type\":\"turn.failed\",\"error\":{\"message\":\"quota\"}}\n",
        );
        assert_eq!(
            failed,
            [TranscriptItem::Final {
                text: "quota".into(),
                success: false
            }]
        );
    }

    #[test]
    fn codex_usage_of_a_resumed_thread_counts_only_the_new_turn() {
        let phase = |total_in: u64, total_out: u64, thread: &str| {
            format!(
                "{{\"type\":\"thread.started\",\"thread_id\":\"{thread}\"}}\n{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":{total_in},\"output_tokens\":{total_out}}}}}\n"
            )
        };
        let usage = |items: Vec<TranscriptItem>| {
            items
                .into_iter()
                .find_map(|item| match item {
                    TranscriptItem::Usage {
                        input_tokens,
                        output_tokens,
                        ..
                    } => Some((input_tokens, output_tokens)),
                    _ => None,
                })
                .unwrap()
        };
        let workspace = Path::new("/w");
        let mut first = TranscriptParser::new(OutputFormat::CodexJson, workspace).unwrap();
        assert_eq!(usage(first.feed(&phase(100, 10, "t-1"))), (100, 10));
        // `exec resume` reports the thread's total: phase two added 150 in and 5 out.
        let mut resumed = TranscriptParser::new(OutputFormat::CodexJson, workspace)
            .unwrap()
            .continuing(Some(&first));
        assert_eq!(usage(resumed.feed(&phase(250, 15, "t-1"))), (150, 5));
        // A new thread starts from nothing.
        let mut fresh = TranscriptParser::new(OutputFormat::CodexJson, workspace)
            .unwrap()
            .continuing(Some(&resumed));
        assert_eq!(usage(fresh.feed(&phase(40, 4, "t-2"))), (40, 4));
    }

    /// The tool failures of `text`, as `(tool, error)`, and the tally of its calls.
    fn failures(format: OutputFormat, text: &str) -> (Vec<(String, String)>, ToolTally) {
        let items = parse(format, text);
        let failed = items
            .iter()
            .filter_map(|item| match item {
                TranscriptItem::ToolFailed { tool, error } => Some((tool.clone(), error.clone())),
                _ => None,
            })
            .collect();
        (failed, ToolTally::of(&items))
    }

    #[test]
    fn claude_tool_results_that_are_errors_are_failed_calls() {
        let text = concat!(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"python train.py"}}]}}"#,
            "\n",
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"Exit code 127\n/bin/bash: line 1: python: command not found"}]}}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/w/train.py"}}]}}"#,
            "\n",
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"import torch"}]}]}}"#,
            "\n",
        );
        let (failed, tally) = failures(OutputFormat::ClaudeStreamJson, text);
        assert_eq!(
            failed,
            [(
                "Bash".to_string(),
                "/bin/bash: line 1: python: command not found".to_string()
            )]
        );
        assert_eq!(
            (tally.calls, tally.failed, tally.all_failed()),
            (2, 1, false)
        );
        assert_eq!(
            tally.line().unwrap(),
            "1 of 2 tool calls failed, the first: Bash: /bin/bash: line 1: python: command not found"
        );
    }

    #[test]
    fn codex_commands_that_fail_are_failed_calls_with_their_error() {
        // Codex's sandbox panicking on every command (its TMPDIR did not exist).
        let panic = "thread 'main' panicked at linux-sandbox/src/main.rs:9:5:\nfailed to resolve synthetic mount registry temp directory\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        let command = |id: &str, cmd: &str| {
            serde_json::json!({"type": "item.completed", "item": {"id": id, "type": "command_execution",
                "command": cmd, "aggregated_output": panic, "exit_code": 101, "status": "failed"}})
            .to_string()
        };
        let text = format!(
            "{}\n{}\n{}\n",
            command("i1", "bash -lc ls"),
            command("i2", "bash -lc 'python train.py'"),
            r#"{"type":"item.completed","item":{"id":"i3","type":"agent_message","text":"Done"}}"#,
        );
        let (failed, tally) = failures(OutputFormat::CodexJson, &text);
        let error = "exit 101: failed to resolve synthetic mount registry temp directory";
        assert_eq!(failed, vec![("shell".to_string(), error.to_string()); 2]);
        assert!(tally.all_failed());
        assert_eq!(
            tally.line().unwrap(),
            format!("every one of its 2 tool calls failed, the first: shell: {error}")
        );
        // A command that ran and exited 0 is no failure.
        let ok = r#"{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"ls","aggregated_output":"a","exit_code":0,"status":"completed"}}"#;
        let (failed, tally) = failures(OutputFormat::CodexJson, ok);
        assert!(failed.is_empty());
        assert_eq!((tally.calls, tally.line()), (1, None));
    }

    #[test]
    fn codex_session_files_count_each_shell_call_once() {
        let call = |id: &str, name: &str, args: Value| {
            serde_json::json!({"type": "response_item", "payload": {"type": "function_call",
                "name": name, "arguments": args.to_string(), "call_id": id}})
            .to_string()
        };
        let output = |id: &str, output: Value| {
            serde_json::json!({"type": "response_item", "payload": {"type": "function_call_output",
                "call_id": id, "output": output}})
            .to_string()
        };
        let item = |id: &str, code: i64| {
            serde_json::json!({"type": "event_msg", "payload": {"type": "item_completed", "item": {
                "type": "CommandExecution", "id": id, "command": ["bash", "-lc", "sleep 60"],
                "status": "completed", "exit_code": code, "aggregated_output": ""}}})
            .to_string()
        };
        let text = [
            // Still running when Codex answered: its item, when it ends, counts it.
            call("c1", "exec_command", serde_json::json!({"cmd": "sleep 60"})),
            output("c1", "Chunk ID: 1\nProcess running with session ID 7\nOutput:\n".into()),
            item("c1", 0),
            // Counted by its item first, then answered: once.
            call("c2", "shell", serde_json::json!({"command": ["bash", "-lc", "sleep 60"]})),
            item("c2", 0),
            output("c2", "Process exited with code 0\nOutput:\n".into()),
            // Refused before it ran: no exit status.
            call("c3", "shell_command", serde_json::json!({"command": "rm -rf /"})),
            output("c3", "exec command rejected by user".into()),
            // Another tool's call is no command.
            call("c4", "update_plan", serde_json::json!({"plan": []})),
            output("c4", "Plan updated".into()),
            // An answer in content items that says it succeeded.
            call("c5", "exec_command", serde_json::json!({"cmd": "true"})),
            output(
                "c5",
                serde_json::json!({"content": [{"type": "input_text", "text": "ok"}], "success": true}),
            ),
            // Still running as the turn ends: a call, not a failure.
            call("c6", "exec_command", serde_json::json!({"cmd": "python train.py"})),
            output("c6", "Process running with session ID 8\nOutput:\n".into()),
            serde_json::json!({"type": "event_msg", "payload": {"type": "task_complete"}}).to_string(),
            // A later turn's call ids are its own.
            serde_json::json!({"type": "event_msg", "payload": {"type": "task_started"}}).to_string(),
            item("c1", 2),
        ]
        .join("\n");
        let items = parse(OutputFormat::CodexRollout, &format!("{text}\n"));
        let calls: Vec<&str> = items
            .iter()
            .filter_map(|i| match i {
                TranscriptItem::ToolCall { input, .. } => Some(input.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [
                "bash -lc 'sleep 60' (exit 0)",
                "bash -lc 'sleep 60' (exit 0)",
                "rm -rf /",
                "true",
                "python train.py (still running as its turn ended)",
                "bash -lc 'sleep 60' (exit 2)"
            ]
        );
        let tally = ToolTally::of(&items);
        assert_eq!(
            (tally.failed, tally.first_error_text().unwrap().as_str()),
            (2, "shell: exec command rejected by user")
        );
    }

    #[test]
    fn a_panics_message_is_its_error_not_its_backtrace() {
        let output = "\nthread 'main' (10747) panicked at linux-sandbox/src/linux_run_main.rs:1130:17:\nfailed to resolve synthetic mount registry temp directory /t: No such file or directory (os error 2)\nstack backtrace:\n   0: main\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n";
        assert_eq!(
            error_line(output, Some(101)),
            "exit 101: failed to resolve synthetic mount registry temp directory /t: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn gemini_tool_results_with_an_error_are_failed_calls() {
        let text = concat!(
            r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"c1","parameters":{"command":"python train.py"}}"#,
            "\n",
            r#"{"type":"tool_result","tool_id":"c1","status":"error","output":"","error":{"type":"execution_failed","message":"Command failed: sandbox unavailable"}}"#,
            "\n",
        );
        let (failed, tally) = failures(OutputFormat::GeminiStreamJson, text);
        assert_eq!(
            failed,
            [(
                "run_shell_command".to_string(),
                "Command failed: sandbox unavailable".to_string()
            )]
        );
        assert!(tally.all_failed());
    }

    #[test]
    fn gemini_stream_json_joins_deltas() {
        let text = concat!(
            r#"{"type":"init","session_id":"g-2","model":"m"}"#,
            "\n",
            r#"{"type":"message","role":"user","content":"port it"}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"Work","delta":true}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"ing.","delta":true}"#,
            "\n",
            r#"{"type":"tool_use","tool_name":"write_file","tool_id":"1","parameters":{"file_path":"/w/a.py"}}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"All done.","delta":true}"#,
            "\n",
            r#"{"type":"result","status":"success","stats":{"input_tokens":9,"output_tokens":3}}"#,
            "\n",
        );
        assert_eq!(
            parse(OutputFormat::GeminiStreamJson, text),
            [
                TranscriptItem::Session { id: "g-2".into() },
                TranscriptItem::Message {
                    text: "Working.".into()
                },
                TranscriptItem::ToolCall {
                    tool: "write_file".into(),
                    input: "/w/a.py".into()
                },
                TranscriptItem::FileEdit {
                    path: "a.py".into()
                },
                TranscriptItem::Message {
                    text: "All done.".into()
                },
                TranscriptItem::Usage {
                    input_tokens: 9,
                    output_tokens: 3,
                    cost_usd: None
                },
                TranscriptItem::Final {
                    text: "All done.".into(),
                    success: true
                },
            ]
        );
    }

    #[test]
    fn plain_text_has_no_parser() {
        assert!(TranscriptParser::new(OutputFormat::Text, Path::new("/w")).is_none());
    }
}

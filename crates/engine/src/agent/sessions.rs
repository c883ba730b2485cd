//! The session files a CLI writes as it works, read for what its output does not say in a
//! form xstack can parse: its tool calls and the ones that failed. Codex keeps each
//! conversation in `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (`CODEX_HOME` defaults
//! to `~/.codex`); its first line (`session_meta`) names the folder it works in. It is the
//! record of what ran, interactive (a TUI prints no JSON) and in `exec --json` alike, whose
//! output has no item for a command that never started (a sandbox that cannot start).

use std::collections::HashMap;
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use super::transcript::{OutputFormat, TranscriptItem, TranscriptParser};

/// A file changed this long before the agent started may still be its (file times are
/// coarse on some file systems).
const CLOCK_SLACK: Duration = Duration::from_secs(2);

/// How often the session files are read while the agent works.
const READ_EVERY: Duration = Duration::from_secs(2);

/// The commands of a Codex agent's turns: those its session files record, read while it
/// works and at the end of each turn; the commands its `exec --json` output reported are
/// held, and count only in a turn whose session files gave none (files Codex did not
/// write, or wrote elsewhere).
#[derive(Debug)]
pub struct CodexCommands {
    sessions: CodexSessions,
    read_at: Option<Instant>,
    /// The `exec --json` output's commands of this turn.
    held: Vec<TranscriptItem>,
    /// Whether the session files gave a command in this turn.
    read_some: bool,
}

impl CodexCommands {
    /// The commands of an agent whose session files `sessions` are.
    pub fn new(sessions: CodexSessions) -> CodexCommands {
        CodexCommands {
            sessions,
            read_at: None,
            held: Vec::new(),
            read_some: false,
        }
    }

    /// An item of the agent's `exec --json` output: itself, to be recorded now; None when
    /// it is a command (`shell`), held for [`CodexCommands::end_turn`].
    pub fn from_output(&mut self, item: TranscriptItem) -> Option<TranscriptItem> {
        match &item {
            TranscriptItem::ToolCall { tool, .. } | TranscriptItem::ToolFailed { tool, .. }
                if tool == "shell" =>
            {
                self.held.push(item);
                None
            }
            _ => Some(item),
        }
    }

    /// The commands written to the session files since the last reading, read at most
    /// every two seconds (`now` is the time of the call).
    pub fn poll(&mut self, now: Instant) -> Vec<TranscriptItem> {
        if self
            .read_at
            .is_some_and(|at| now.saturating_duration_since(at) < READ_EVERY)
        {
            return Vec::new();
        }
        self.read_at = Some(now);
        self.read()
    }

    /// The turn ended: the commands written since the last reading, and the held commands
    /// of the `exec --json` output when the session files gave none in the turn.
    pub fn end_turn(&mut self) -> Vec<TranscriptItem> {
        let mut items = self.read();
        let held = std::mem::take(&mut self.held);
        if !self.read_some {
            items.extend(held);
        }
        self.read_some = false;
        items
    }

    fn read(&mut self) -> Vec<TranscriptItem> {
        let items = self.sessions.read();
        self.read_some |= !items.is_empty();
        items
    }
}

/// The Codex session files of one workspace, read where the last reading stopped.
#[derive(Debug)]
pub struct CodexSessions {
    sessions: PathBuf,
    workspace: PathBuf,
    since: SystemTime,
    /// Each of the workspace's files: the bytes read so far and their parser.
    files: HashMap<PathBuf, (u64, TranscriptParser)>,
    /// Files found to belong to another folder.
    others: Vec<PathBuf>,
}

impl CodexSessions {
    /// The session files under `codex_home` of a Codex working in `workspace`, changed since
    /// `since` (when the agent started).
    pub fn new(codex_home: &Path, workspace: &Path, since: SystemTime) -> CodexSessions {
        CodexSessions {
            sessions: codex_home.join("sessions"),
            workspace: workspace.to_path_buf(),
            since: since.checked_sub(CLOCK_SLACK).unwrap_or(since),
            files: HashMap::new(),
            others: Vec::new(),
        }
    }

    /// Codex's home for an agent started with the variables `env` (the later ones win), or
    /// with this process's: `CODEX_HOME`, else `$HOME/.codex`.
    pub fn home(env: &[(String, String)]) -> Option<PathBuf> {
        let var = |name: &str| {
            env.iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var(name).ok())
                .filter(|v| !v.is_empty())
        };
        var("CODEX_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|home| Path::new(&home).join(".codex")))
    }

    /// The transcript items of the lines written since the last call, in the files' order.
    pub fn read(&mut self) -> Vec<TranscriptItem> {
        let mut found: Vec<PathBuf> = walkdir::WalkDir::new(&self.sessions)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name().to_string_lossy();
                e.file_type().is_file() && name.starts_with("rollout-") && name.ends_with(".jsonl")
            })
            .filter(|e| {
                e.metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .is_some_and(|t| t >= self.since)
            })
            .map(walkdir::DirEntry::into_path)
            .collect();
        found.sort();
        let mut items = Vec::new();
        for path in found {
            if self.others.contains(&path) {
                continue;
            }
            if !self.files.contains_key(&path) {
                match self.belongs(&path) {
                    Some(true) => {}
                    Some(false) => {
                        self.others.push(path);
                        continue;
                    }
                    None => continue,
                }
                let Some(parser) =
                    TranscriptParser::new(OutputFormat::CodexRollout, &self.workspace)
                else {
                    continue;
                };
                self.files.insert(path.clone(), (0, parser));
            }
            if let Some((offset, parser)) = self.files.get_mut(&path) {
                let text = complete_lines_from(&path, *offset);
                *offset += text.len() as u64;
                items.extend(parser.feed(&text));
            }
        }
        items
    }

    /// Whether the session file at `path` is of a Codex that works in the workspace, by the
    /// `cwd` of its first line; None while that line is not yet written whole.
    fn belongs(&self, path: &Path) -> Option<bool> {
        let mut first = String::new();
        let read = std::fs::File::open(path)
            .and_then(|f| std::io::BufReader::new(f).read_line(&mut first));
        if read.is_err() || !first.ends_with('\n') {
            return None;
        }
        let meta = serde_json::from_str::<Value>(&first).ok();
        let Some(cwd) = meta
            .as_ref()
            .and_then(|m| m.pointer("/payload/cwd"))
            .and_then(Value::as_str)
        else {
            return Some(false);
        };
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        Some(canonical(Path::new(cwd)) == canonical(&self.workspace))
    }
}

/// The text of `path` from `offset` to its last newline (a line still being written is left
/// for the next reading); empty when it cannot be read.
fn complete_lines_from(path: &Path, offset: u64) -> String {
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(offset))?;
        f.read_to_end(&mut bytes)
    });
    if read.is_err() {
        return String::new();
    }
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(end);
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::transcript::ToolTally;

    /// A session file Codex 0.171.0 wrote (tests/model_server's script: the port written
    /// with a heredoc, then `ls; python3 -c 'import torch'`, which failed), long strings cut,
    /// its folder `/w/workspace`.
    const ROLLOUT: &str = include_str!("../../../../tests/fixtures/codex/rollout-0.171.0.jsonl");

    /// `ROLLOUT` as the session file of a Codex working in `workspace`, under `home`.
    fn write_rollout(home: &Path, day: &str, name: &str, workspace: &Path, text: &str) {
        let dir = home.join("sessions").join(day);
        std::fs::create_dir_all(&dir).unwrap();
        let text = text.replace("/w/workspace", &workspace.display().to_string());
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn a_codex_session_file_gives_its_commands_and_the_failed_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let (home, workspace) = (tmp.path().join("codex"), tmp.path().join("ws"));
        std::fs::create_dir(&workspace).unwrap();
        let started = SystemTime::now();
        write_rollout(&home, "2026/12/06", "rollout-a.jsonl", &workspace, ROLLOUT);
        // Another folder's conversation is not the agent's.
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        write_rollout(&home, "2026/12/06", "rollout-b.jsonl", &elsewhere, ROLLOUT);
        let mut sessions = CodexSessions::new(&home, &workspace, started);
        let items = sessions.read();
        let tally = ToolTally::of(&items);
        assert_eq!((tally.calls, tally.failed), (2, 1), "{items:?}");
        assert_eq!(
            tally.first_error_text().unwrap(),
            "shell: exit 1: ModuleNotFoundError: No module named 'torch'"
        );
        assert!(
            items.iter().any(|i| matches!(i,
                TranscriptItem::ToolCall { tool, input }
                    if tool == "shell" && input == "/bin/bash -lc 'ls; python3 -c '\\''import torch'\\''' (exit 1)")),
            "{items:?}"
        );
        // Read again: only what was written since, a line still being written left for later.
        assert!(sessions.read().is_empty());
        let path = home.join("sessions/2026/12/06/rollout-a.jsonl");
        let failed = ROLLOUT
            .lines()
            .find(|l| l.contains("\"status\":\"failed\""))
            .unwrap()
            .replace("/w/workspace", &workspace.display().to_string())
            .replace("call_2", "call_3");
        let (head, tail) = failed.split_at(40);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, head.as_bytes()).unwrap();
        assert!(sessions.read().is_empty());
        std::io::Write::write_all(&mut file, format!("{tail}\n").as_bytes()).unwrap();
        let tally = ToolTally::of(&sessions.read());
        assert_eq!((tally.calls, tally.failed), (1, 1));
    }

    /// A session file Codex 0.171.0 wrote in `exec --json` with `TMPDIR` naming a folder
    /// that does not exist: its sandbox panicked before each command (tests/model_server's
    /// script: the port written with a heredoc, then `python train.py`), long strings cut,
    /// its folder `/w/workspace`.
    const SANDBOX_PANIC: &str =
        include_str!("../../../../tests/fixtures/codex/rollout-0.171.0-sandbox-panic.jsonl");

    #[test]
    fn commands_that_never_started_are_counted_from_the_models_calls() {
        let tmp = tempfile::tempdir().unwrap();
        let (home, workspace) = (tmp.path().join("codex"), tmp.path().join("ws"));
        std::fs::create_dir(&workspace).unwrap();
        let started = SystemTime::now();
        write_rollout(
            &home,
            "2026/12/07",
            "rollout-a.jsonl",
            &workspace,
            SANDBOX_PANIC,
        );
        let items = CodexSessions::new(&home, &workspace, started).read();
        let tally = ToolTally::of(&items);
        assert_eq!((tally.calls, tally.failed), (2, 2), "{items:?}");
        assert!(tally.all_failed());
        assert_eq!(
            tally.first_error_text().unwrap(),
            "shell: exit 101: failed to resolve synthetic mount registry temp directory /nonexistent-tmp: No such file or directory (os error 2)"
        );
        assert!(
            items.iter().any(|i| matches!(i,
                TranscriptItem::ToolCall { tool, input }
                    if tool == "shell" && input == "python train.py (exit 101)")),
            "{items:?}"
        );
    }

    /// `exec --json` items of a turn: `shell` calls (one failed) and a message.
    fn output_items() -> Vec<TranscriptItem> {
        vec![
            TranscriptItem::ToolCall {
                tool: "shell".into(),
                input: "ls (exit 2)".into(),
            },
            TranscriptItem::ToolFailed {
                tool: "shell".into(),
                error: "exit 2: ls: cannot access".into(),
            },
            TranscriptItem::Message {
                text: "Done.".into(),
            },
        ]
    }

    #[test]
    fn the_outputs_commands_count_only_where_the_session_files_gave_none() {
        let tmp = tempfile::tempdir().unwrap();
        let (home, workspace) = (tmp.path().join("codex"), tmp.path().join("ws"));
        std::fs::create_dir(&workspace).unwrap();
        let mut commands =
            CodexCommands::new(CodexSessions::new(&home, &workspace, SystemTime::now()));
        // No session file: the output's commands are the turn's, at its end.
        let recorded: Vec<TranscriptItem> = output_items()
            .into_iter()
            .filter_map(|item| commands.from_output(item))
            .collect();
        assert_eq!(
            recorded,
            [TranscriptItem::Message {
                text: "Done.".into()
            }]
        );
        assert!(commands.poll(Instant::now()).is_empty());
        let tally = ToolTally::of(&commands.end_turn());
        assert_eq!((tally.calls, tally.failed), (1, 1));
        // Next turn, the session file records what ran: the output's commands are dropped.
        for item in output_items() {
            commands.from_output(item);
        }
        write_rollout(
            &home,
            "2026/12/07",
            "rollout-a.jsonl",
            &workspace,
            SANDBOX_PANIC,
        );
        let at = Instant::now() + READ_EVERY;
        let read = ToolTally::of(&commands.poll(at));
        assert_eq!((read.calls, read.failed), (2, 2));
        assert!(commands.end_turn().is_empty());
        // A reading sooner than READ_EVERY after the last is skipped.
        let more = SANDBOX_PANIC
            .lines()
            .filter(|l| l.contains("call_2"))
            .map(|l| format!("{}\n", l.replace("call_2", "call_9")))
            .collect::<String>();
        let path = home.join("sessions/2026/12/07/rollout-a.jsonl");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, more.as_bytes()).unwrap();
        assert!(commands.poll(at + Duration::from_millis(100)).is_empty());
        let tally = ToolTally::of(&commands.poll(at + READ_EVERY));
        assert_eq!((tally.calls, tally.failed), (1, 1));
    }

    #[test]
    fn files_older_than_the_agent_are_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let (home, workspace) = (tmp.path().join("codex"), tmp.path().join("ws"));
        std::fs::create_dir(&workspace).unwrap();
        write_rollout(
            &home,
            "2026/12/05",
            "rollout-old.jsonl",
            &workspace,
            ROLLOUT,
        );
        let later = SystemTime::now() + Duration::from_secs(60);
        assert!(
            CodexSessions::new(&home, &workspace, later)
                .read()
                .is_empty()
        );
    }

    #[test]
    fn codex_home_is_codex_home_else_under_home() {
        let env = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            CodexSessions::home(&env(&[("HOME", "/h"), ("CODEX_HOME", "/c")])),
            Some(PathBuf::from("/c"))
        );
        if std::env::var_os("CODEX_HOME").is_none() {
            assert_eq!(
                CodexSessions::home(&env(&[("HOME", "/h")])),
                Some(PathBuf::from("/h/.codex"))
            );
        }
    }
}

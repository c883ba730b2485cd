//! The agent's turn: its prompt written and sent, the agent started (confined with
//! `--sandbox`) or reused, its output parsed into a transcript, its turn ended by its exit,
//! `.xstack/done`, the idle limit or the human; messages, the debug shell.

use std::path::{Path, PathBuf};

use tokio::time::Instant;

use crate::agent::sandbox;
use crate::agent::sessions::{CodexCommands, CodexSessions};
use crate::agent::submit::{
    AskingScreen, Question, Step, Submission, TRUST_MOVES, TRUST_QUIET, TRUST_SETTLE,
    asking_screen, trust_keys,
};
use crate::agent::transcript::{TranscriptItem, TranscriptParser};
use crate::agent::{AgentMode, AgentSpec, PhaseContext};
use crate::pty::PtySpec;
use crate::pty::supervise::Supervised;
use crate::workspace::watch::WorkspaceWatcher;

use super::super::policy::AgentClock;
use super::super::recorder::lock;
use super::super::state::PhaseRecord;
use super::{Driver, Input, Stop};
use crate::event::At;
use crate::event::{Event, Mode};

/// Quiet time the workspace watcher waits for before reporting a burst of writes.
const WATCH_DEBOUNCE: std::time::Duration = std::time::Duration::from_millis(50);

impl Driver {
    /// The agent's turn in `phase` with `prompt_text` (and the queued messages): ends when
    /// the agent exits, writes `.xstack/done`, idles past the limit or the human ends it.
    pub(super) async fn migrate(&mut self, phase: u8, prompt_text: &str) -> Result<(), Stop> {
        let Some(agent) = self.cfg.agent.clone() else {
            return Ok(());
        };
        let (text, prompt_file) = self.write_prompt(phase, prompt_text)?;
        // Watch before the agent starts, so that none of its writes is missed.
        self.watch_workspace();
        let interactive = agent.mode() == AgentMode::Interactive;
        let reuse = interactive && self.agent.as_ref().is_some_and(Supervised::running);
        if !reuse {
            self.start_agent(&agent, phase, &text, &prompt_file)?;
        }
        if agent.types_prompt() {
            self.pending_prompt = Some(Submission::new(&text));
        }
        let done_marker = self.workspace.join(".xstack").join("done");
        remove_done_marker(&done_marker);
        self.agent_clock.active_at = Instant::now();
        let files_before = self.files_changed;
        let end = self.turn_loop(phase, interactive, &done_marker).await?;
        self.end_turn(phase, interactive, files_before, end)
    }

    /// Writes the prompt of `phase` (`prompt_text` followed by the queued messages) to
    /// `prompts/phase-N.txt` in the run folder and records it; returns the text and the file.
    fn write_prompt(&mut self, phase: u8, prompt_text: &str) -> Result<(String, PathBuf), Stop> {
        let mut text = prompt_text.to_string();
        for message in self.pending_messages.drain(..) {
            text.push_str("\n\nMessage from the engineer supervising the migration:\n");
            text.push_str(&message);
        }
        let prompts = self.cfg.run_dir.join("prompts");
        std::fs::create_dir_all(&prompts)
            .map_err(|e| Stop::Infra(format!("{}: {e}", prompts.display())))?;
        let prompt_file = prompts.join(format!("phase-{phase}.txt"));
        std::fs::write(&prompt_file, &text)
            .map_err(|e| Stop::Infra(format!("{}: {e}", prompt_file.display())))?;
        self.rec.emit(Event::Prompt {
            phase,
            text: text.clone(),
        });
        Ok((text, prompt_file))
    }

    /// Starts the workspace watcher; where it cannot start, says so and leaves the ticks to
    /// scan the workspace.
    fn watch_workspace(&mut self) {
        self.watcher = match WorkspaceWatcher::start(&self.workspace, WATCH_DEBOUNCE) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                self.rec.emit(Event::Note {
                    text: format!("cannot watch the workspace ({e}); scanning it instead"),
                });
                None
            }
        };
    }

    /// Starts `agent` for `phase` on its own PTY (inside the sandbox where there is one) with
    /// the prompt `text` written to `prompt_file`, and resets what is kept about the agent.
    fn start_agent(
        &mut self,
        agent: &AgentSpec,
        phase: u8,
        text: &str,
        prompt_file: &Path,
    ) -> Result<(), Stop> {
        let ctx = PhaseContext {
            phase,
            prompt: text,
            prompt_file,
            workspace: &self.workspace,
            task: &self.cfg.task.spec.id,
            session: self.agent_session.as_deref(),
        };
        let mut argv = agent.argv(&ctx, Some(prompt_file));
        let env = self.agent_env(agent, phase)?;
        if let Some(sandbox) = &self.cfg.sandbox {
            let prompts = self.cfg.run_dir.join("prompts");
            let visible = sandbox_visible(agent, &env, &prompts);
            argv = sandbox.wrap(&argv, &self.workspace, &visible, &self.hidden_from_agent());
        }
        let spec = PtySpec {
            argv: argv.clone(),
            cwd: self.workspace.clone(),
            env,
            env_remove: Vec::new(),
            cols: self.cfg.agent_size.0,
            rows: self.cfg.agent_size.1,
        };
        let mut child = Supervised::spawn(&spec, None)
            .map_err(|e| Stop::Infra(format!("cannot start the agent: {e}")))?;
        if let (Some(collector), Some(pid)) = (self.agent_runs.as_mut(), child.process().pgid()) {
            collector.agent_started(pid);
        }
        self.rec.emit(Event::AgentStarted {
            phase,
            command: shell_words::join(&argv),
            cols: spec.cols,
            rows: spec.rows,
        });
        self.agent = Some(child);
        self.agent_exit_recorded = false;
        self.policy.agent_changed();
        self.transcript = TranscriptParser::new(agent.output(), &self.workspace)
            .map(|parser| parser.continuing(self.transcript.as_ref()));
        self.agent_clock = AgentClock::starting(Instant::now());
        Ok(())
    }

    /// The variables `agent` starts with in `phase`: the child's, the agent's own,
    /// `BASH_ENV`, and those of the run collector; opens the Codex sessions where the agent
    /// keeps them.
    fn agent_env(&mut self, agent: &AgentSpec, phase: u8) -> Result<Vec<(String, String)>, Stop> {
        let mut env = self.child_env(phase);
        env.extend(agent.env());
        self.bash_env(&mut env)?;
        if agent.codex_sessions() && self.codex_sessions.is_none() {
            // Kept across a restart: its offsets say what earlier turns already counted.
            self.codex_sessions = CodexSessions::home(&env).map(|home| {
                CodexCommands::new(CodexSessions::new(
                    &home,
                    &self.workspace,
                    std::time::SystemTime::now(),
                ))
            });
        }
        if let Some(collector) = &self.agent_runs {
            let pythonpath = env
                .iter()
                .rev()
                .find(|(k, _)| k == "PYTHONPATH")
                .map(|(_, v)| v.clone())
                .or_else(|| std::env::var("PYTHONPATH").ok());
            env.extend(collector.vars(pythonpath.as_deref()));
        }
        Ok(env)
    }

    /// Runs the inputs of the agent's turn in `phase` until it ends; says how it ended.
    async fn turn_loop(
        &mut self,
        phase: u8,
        interactive: bool,
        done_marker: &Path,
    ) -> Result<TurnEnd, Stop> {
        loop {
            match self.next_input().await {
                Input::AgentFinished => return Ok(TurnEnd::Exited),
                Input::Command(command) => {
                    self.command(command)?;
                    if self.policy.at() != At::Migrate(phase) {
                        self.rec.emit(Event::Note {
                            text: format!("phase {phase}: the human ended the agent's turn"),
                        });
                        if !interactive {
                            self.end_agent().await;
                        }
                        return Ok(TurnEnd::ByHuman);
                    }
                }
                Input::Tick => {
                    if let Some(end) = self.turn_tick(phase, interactive, done_marker) {
                        return Ok(end);
                    }
                }
                Input::RunFinished | Input::RunTimedOut => {}
            }
        }
    }

    /// One tick of the agent's turn in `phase`: the workspace scanned, the agent's runs and
    /// sessions recorded, its questions watched; the end of the turn where the agent wrote
    /// `.xstack/done` or idled past the limit.
    fn turn_tick(&mut self, phase: u8, interactive: bool, done_marker: &Path) -> Option<TurnEnd> {
        self.scan_workspace();
        self.record_agent_runs(phase, false);
        self.record_codex_sessions(phase, false);
        if interactive && self.pending_prompt.is_none() {
            self.watch_agent_asks();
        }
        if interactive && done_marker.exists() {
            remove_done_marker(done_marker);
            self.rec.emit(Event::Note {
                text: format!("phase {phase}: the agent wrote .xstack/done"),
            });
            return Some(TurnEnd::Done);
        }
        if let Some(limit) = self.cfg.idle_limit
            && interactive
            && !self.policy.paused()
            && self.agent_clock.idle_past(limit, Instant::now())
        {
            self.rec.emit(Event::Note {
                text: format!(
                    "phase {phase}: the agent was idle for {} s",
                    limit.as_secs()
                ),
            });
            return Some(TurnEnd::IdledOut);
        }
        None
    }

    /// The end of the agent's turn in `phase`, which ended as `end`: the last records made,
    /// and an error where the turn left nothing to grade (the agent failed, its tools all
    /// failed, or it went idle without changing a file since `files_before`).
    fn end_turn(
        &mut self,
        phase: u8,
        interactive: bool,
        files_before: u64,
        end: TurnEnd,
    ) -> Result<(), Stop> {
        let exit_code = self
            .agent
            .as_ref()
            .and_then(Supervised::exit_info)
            .and_then(|info| info.code);
        if !interactive {
            self.agent = None;
        }
        self.watcher = None;
        self.pending_prompt = None;
        self.clear_agent_asks();
        self.record_agent_runs(phase, true);
        self.record_codex_sessions(phase, true);
        self.scan_workspace();
        let changed = self.files_changed != files_before;
        if end == TurnEnd::Exited && !changed && exit_code.is_some_and(|c| c != 0) {
            return Err(Stop::AgentFailed(self.agent_error_line(exit_code)));
        }
        let tools = lock(self.rec.state())
            .phase(phase)
            .map(PhaseRecord::tools)
            .unwrap_or_default();
        if !changed && end != TurnEnd::ByHuman && tools.all_failed() {
            // Its tools could not run (a sandbox that cannot start, a shell without the
            // environment): what it left is no port to grade.
            let failed = tools.line().unwrap_or_default();
            return Err(Stop::AgentFailed(format!(
                "{failed}; the agent changed no file"
            )));
        }
        if end == TurnEnd::IdledOut && !changed {
            // An interactive agent that did nothing with its prompt (a dialog may have taken
            // it): the phase did not happen.
            return Err(Stop::AgentFailed(format!(
                "the agent changed nothing and went idle: it may never have received its prompt; its screen ends with: {}",
                self.agent_error_line(None)
            )));
        }
        Ok(())
    }

    /// Points `BASH_ENV` in the agent's variables `env` at `.xstack/bash_env.sh` in the
    /// workspace, which puts the task's environment first on `PATH` again in every bash the
    /// agent's CLI starts (Codex's login shell resets `PATH` from `/etc/profile`), after
    /// running the `BASH_ENV` the agent had. The workspace's `.xstack/` is visible to every
    /// sandbox and left out of the diff and the verify copy.
    fn bash_env(&self, env: &mut Vec<(String, String)>) -> Result<(), Stop> {
        let Some(python) = &self.env else {
            return Ok(());
        };
        let file = self.workspace.join(".xstack").join("bash_env.sh");
        let outer = env
            .iter()
            .rev()
            .find(|(k, _)| k == "BASH_ENV")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("BASH_ENV").ok())
            .filter(|outer| Path::new(outer) != file);
        let written = file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&file, python.bash_env(outer.as_deref())));
        written.map_err(|e| Stop::Infra(format!("{}: {e}", file.display())))?;
        env.push(("BASH_ENV".to_string(), file.display().to_string()));
        Ok(())
    }

    /// Records the Python processes of the agent's that ended since the last call; at the
    /// end of its turn, also those still going, which are ended (docs/CHECKS.md).
    fn record_agent_runs(&mut self, phase: u8, end_of_turn: bool) {
        let Some(collector) = self.agent_runs.as_mut() else {
            return;
        };
        for run in collector.collect(phase, end_of_turn) {
            self.rec.emit(Event::AgentRun(Box::new(run)));
        }
    }

    /// The agent's last line of output (its error), with its exit status.
    fn agent_error_line(&self, code: Option<i32>) -> String {
        let last = lock(self.rec.state()).agent_last_line();
        match code {
            Some(code) => format!("{last} (exit status {code})"),
            None => last,
        }
    }

    /// Moves the waiting prompt (or message) into the interactive agent as its screen allows
    /// ([`Submission`]): pasted once it is ready, Enter once the paste shows on its screen,
    /// and a first-run screen (folder trust, an API key, a theme or login picker) reported as
    /// `waiting: the agent asks …` for the human to answer, never answered by the prompt.
    pub(super) fn type_pending_prompt(&mut self) {
        if self.policy.paused() {
            return;
        }
        let Some(submission) = self.pending_prompt.as_mut() else {
            return;
        };
        let now = Instant::now();
        let step = {
            let state = lock(self.rec.state());
            submission.poll(
                &state.agent_screen.screen(),
                now.duration_since(self.agent_clock.started),
                self.agent_clock.output_at.map(|at| now.duration_since(at)),
            )
        };
        match step {
            Step::Wait => return,
            Step::Write(bytes) => {
                if let Some(agent) = self.agent.as_mut()
                    && let Err(e) = agent.process().write(&bytes)
                {
                    tracing::warn!("cannot type into the agent's terminal: {e}");
                    self.rec.emit(Event::Note {
                        text: format!("cannot type into the agent's terminal: {e}"),
                    });
                }
                self.clear_agent_asks();
            }
            Step::Asks(asking) => {
                if !self.answer_workspace_trust(asking) {
                    self.report_agent_asks(asking.asks);
                }
            }
        }
        if self
            .pending_prompt
            .as_ref()
            .is_some_and(Submission::submitted)
        {
            self.pending_prompt = None;
        }
    }

    /// In auto mode, nobody is there to answer the agent's question whether to trust the
    /// folder it was started in; when that folder is this run's workspace (xstack's own copy
    /// of the source, made for this run, and nothing else), xstack answers yes
    /// ([`trust_keys`]) and says so on the status line and in the journal. True when it
    /// typed something; every other question, and the trust of any other folder, stays the
    /// human's.
    fn answer_workspace_trust(&mut self, asking: &AskingScreen) -> bool {
        if asking.question != Question::FolderTrust || self.policy.mode() != Mode::Auto {
            return false;
        }
        if let Some(at) = self.trust_answered_at {
            // Answered: the screen is given time to go, then it is the human's.
            return at.elapsed() < TRUST_SETTLE;
        }
        if self.trust_keys_typed > TRUST_MOVES {
            return false;
        }
        let seen_at = *self.trust_seen_at.get_or_insert_with(Instant::now);
        let drawing = self
            .agent_clock
            .output_at
            .is_none_or(|at| at.elapsed() < TRUST_QUIET);
        if drawing && seen_at.elapsed() < TRUST_SETTLE {
            // A screen read mid-redraw may lack the folder or the marked choice: it is
            // read once the agent stopped drawing it.
            return true;
        }
        let contents = lock(self.rec.state()).agent_screen.contents();
        if let Some((before, at)) = &self.trust_screen_moved_from
            && *before == contents
        {
            // The last key has not been drawn yet: one key a redraw, so none is lost or
            // doubled; a screen that never takes it is the human's.
            return at.elapsed() < TRUST_SETTLE;
        }
        let Some(keys) = trust_keys(&contents, &self.workspace) else {
            return false;
        };
        let Some(agent) = self.agent.as_mut() else {
            return false;
        };
        if let Err(e) = agent.process().write(keys) {
            tracing::warn!("cannot answer the agent's folder-trust question: {e}");
            return false;
        }
        self.trust_keys_typed += 1;
        self.trust_screen_moved_from = Some((contents, Instant::now()));
        if keys == b"\r" {
            // One answer a session: a screen that asks again goes to the human.
            self.trust_answered_at = Some(Instant::now());
            self.clear_agent_asks();
            self.rec.emit(Event::Note {
                text: format!(
                    "auto mode: the agent asked whether to trust {}, this run's own copy of the source: answered yes",
                    self.workspace.display()
                ),
            });
        }
        true
    }

    /// While an interactive agent works on its prompt, a screen of it that asks the human
    /// (a command's permission prompt) is reported as the agent asking; the line goes once
    /// the screen does.
    fn watch_agent_asks(&mut self) {
        let asks = {
            let state = lock(self.rec.state());
            asking_screen(&state.agent_screen.contents()).map(|screen| screen.asks)
        };
        match asks {
            Some(what) => self.report_agent_asks(what),
            None => self.clear_agent_asks(),
        }
    }

    /// Records that the agent asks WHAT (once): `waiting: the agent asks WHAT (a attaches to
    /// answer)`. The agent waits for the human, not the other way round: in the TUI, where
    /// someone can answer, the wait is not the agent's idleness.
    fn report_agent_asks(&mut self, what: &str) {
        if self.cfg.linger {
            self.agent_clock.active_at = Instant::now();
        }
        if lock(self.rec.state()).agent_asks.as_deref() != Some(what) {
            self.rec.emit(Event::AgentAsks {
                question: Some(what.to_string()),
            });
        }
    }

    /// Takes back the agent's question once the asking screen is answered (or the turn
    /// ended).
    fn clear_agent_asks(&mut self) {
        if lock(self.rec.state()).agent_asks.is_some() {
            self.rec.emit(Event::AgentAsks { question: None });
        }
    }

    /// Records the agent's exit after the last of its output, so the journal never shows
    /// output after the exit (and text held back for redaction is never cut off early).
    pub(super) fn record_agent_exit(&mut self, code: Option<i32>) {
        if self.agent.is_some() && !self.agent_exit_recorded {
            self.agent_exit_recorded = true;
            self.policy.agent_changed();
            self.rec.emit(Event::AgentExited { code });
        }
    }

    /// Ends the agent (or the debug shell) if one runs, and records its exit.
    pub(super) async fn end_agent(&mut self) {
        let Some(mut agent) = self.agent.take() else {
            return;
        };
        match agent.exit_info() {
            // It exited while its output was still open: its exit is not recorded yet.
            Some(info) => {
                self.agent = Some(agent);
                self.record_agent_exit(info.code);
                self.agent = None;
            }
            None => {
                agent.terminate().await;
                self.agent = Some(agent);
                self.record_agent_exit(None);
                self.agent = None;
            }
        }
    }

    /// What a sandboxed agent must not see: the task folder and its siblings (other tasks,
    /// their `solution/`), the runs folder (this run's journal and `result.json`, other
    /// runs), and the demo task the cache holds.
    fn hidden_from_agent(&self) -> Vec<PathBuf> {
        let absolute = |p: &Path| p.canonicalize().ok();
        let task = absolute(&self.cfg.task.dir);
        let mut hidden: Vec<PathBuf> = task.iter().cloned().collect();
        hidden.extend(
            task.as_deref()
                .and_then(Path::parent)
                .map(Path::to_path_buf),
        );
        hidden.extend(absolute(&self.cfg.run_dir).and_then(|r| r.parent().map(Path::to_path_buf)));
        hidden.extend(absolute(&self.cfg.cache_dir.join("demo")));
        hidden
    }

    /// Starts an interactive shell in the workspace in the Agent pane.
    pub(super) fn open_shell(&mut self) {
        let shell = std::env::var("SHELL")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "bash".to_string());
        let spec = PtySpec {
            argv: vec![shell.clone(), "-i".to_string()],
            cwd: self.workspace.clone(),
            env: self.child_env(self.policy.at().phase().max(1)),
            env_remove: Vec::new(),
            cols: self.cfg.agent_size.0,
            rows: self.cfg.agent_size.1,
        };
        match Supervised::spawn(&spec, None) {
            Ok(child) => {
                self.rec.emit(Event::AgentStarted {
                    phase: self.policy.at().phase().max(1),
                    command: format!("{shell} -i (debug shell in the workspace; a attaches)"),
                    cols: spec.cols,
                    rows: spec.rows,
                });
                self.agent = Some(child);
                self.agent_exit_recorded = false;
                self.policy.agent_changed();
            }
            Err(e) => self.rec.emit(Event::Note {
                text: format!("cannot open a shell: {e}"),
            }),
        }
    }

    /// Parses the agent's structured output, if it has any, into transcript events.
    pub(super) fn agent_transcript(&mut self, text: &str, ended: bool) {
        let Some(parser) = self.transcript.as_mut() else {
            return;
        };
        let mut items = parser.feed(text);
        if ended {
            items.extend(parser.finish());
        }
        for item in items {
            let item = match self.codex_sessions.as_mut() {
                Some(commands) => match commands.from_output(item) {
                    Some(item) => item,
                    None => continue,
                },
                None => item,
            };
            if let TranscriptItem::Session { id } = &item {
                self.agent_session = Some(id.clone());
            }
            self.rec.emit(Event::Transcript {
                phase: self.policy.at().phase(),
                item,
            });
        }
    }

    /// Records the commands Codex wrote to its session files since the last reading (at
    /// the `end_of_turn`, with the ones its `exec --json` output reported where those files
    /// gave none).
    fn record_codex_sessions(&mut self, phase: u8, end_of_turn: bool) {
        let Some(commands) = self.codex_sessions.as_mut() else {
            return;
        };
        let items = if end_of_turn {
            commands.end_turn()
        } else {
            commands.poll(std::time::Instant::now())
        };
        for item in items {
            self.rec.emit(Event::Transcript { phase, item });
        }
    }

    /// Types `text` into the interactive agent's terminal and submits it.
    fn type_into_agent(&mut self, text: &str) {
        let bracketed = lock(self.rec.state())
            .agent_screen
            .screen()
            .bracketed_paste();
        if let Some(agent) = self.agent.as_mut()
            && let Err(e) = agent
                .process()
                .write(&crate::agent::typed_bytes(text, bracketed))
        {
            tracing::warn!("cannot type into the agent's terminal: {e}");
            self.rec.emit(Event::Note {
                text: format!("cannot type into the agent's terminal: {e}"),
            });
        }
    }

    /// Types the message into the running interactive agent, as the policy decided: Enter
    /// once the agent's screen took the paste; with the prompt not pasted yet, as its last
    /// paragraph.
    pub(super) fn type_message(&mut self, text: String) {
        match self.pending_prompt.as_mut() {
            None => self.pending_prompt = Some(Submission::new(&text)),
            Some(waiting) => {
                if !waiting.add_before_paste(&text) {
                    self.type_into_agent(&text);
                }
            }
        }
        self.rec.emit(Event::Message {
            text,
            queued: false,
        });
    }

    /// Keeps the message for the agent's next prompt, as the policy decided.
    pub(super) fn queue_message(&mut self, text: String) {
        self.rec.emit(Event::Message {
            text: text.clone(),
            queued: true,
        });
        self.pending_messages.push(text);
    }
}

/// How the agent's turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TurnEnd {
    /// The agent's process exited.
    Exited,
    /// The human moved the session on.
    ByHuman,
    /// The agent wrote `.xstack/done`.
    Done,
    /// The agent was idle past the limit.
    IdledOut,
}

/// The folders the sandbox shows the agent besides the workspace: those on its `PATH` (from
/// `env`, else this process's), the `prompts` folder, the agent's own files and this
/// program's folder.
fn sandbox_visible(agent: &AgentSpec, env: &[(String, String)], prompts: &Path) -> Vec<PathBuf> {
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| std::env::var("PATH").unwrap_or_default());
    let mut visible = sandbox::path_dirs(&path);
    visible.push(prompts.to_path_buf());
    visible.extend(agent.files_dir());
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        visible.push(dir);
    }
    visible
}

/// Removes `.xstack/done` (absent is fine; anything else is logged).
fn remove_done_marker(marker: &Path) {
    if let Err(e) = std::fs::remove_file(marker)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("cannot remove {}: {e}", marker.display());
    }
}

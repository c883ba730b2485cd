//! Agents (SPEC §1 `--agent`, §6): parsing agent specs, checking that the program exists
//! before anything starts, building the command line of each phase, and the prompts.

pub mod config;
pub mod preset;
pub mod prompt;
pub mod sandbox;
pub mod script;
pub mod sessions;
pub mod submit;
pub mod transcript;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use config::AgentConfig;
use preset::{AgentDef, PRESET_NAMES, Template};
use transcript::OutputFormat;

/// Agent spec errors.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The spec is not one of the known forms (usage error, exit 2).
    #[error(
        "unknown agent `{0}`: use script:PATH, shell, cmd:TEMPLATE, a preset ({presets}), or an agent of the config file",
        presets = PRESET_NAMES.join(", ")
    )]
    Unknown(String),
    /// The spec is malformed (usage error, exit 2).
    #[error("agent `{spec}`: {message}")]
    Invalid {
        /// The spec.
        spec: String,
        /// Why.
        message: String,
    },
    /// The agent's program is not installed (infrastructure failure, exit 3).
    #[error("agent program `{program}` not found on PATH{}", hint.as_ref().map_or_else(String::new, |h| format!(": install it with `{h}`")))]
    NotFound {
        /// The program.
        program: String,
        /// How to install it, when known.
        hint: Option<String>,
    },
}

/// How an agent's phases are delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentMode {
    /// A new process each phase; the phase ends when it exits.
    OneShot,
    /// One process for the session; the phase ends at `.xstack/done`, idle, or `n`.
    Interactive,
}

/// A parsed `--agent` spec.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentSpec {
    /// The bundled scripted agent on a trajectory file.
    Script(PathBuf),
    /// An interactive shell in the workspace: a human does the port.
    Shell,
    /// Any program, from a template with placeholders.
    Command(String),
    /// A preset (`claude`, `codex`, …) or an agent of the config file, resolved for the run.
    Preset(Box<AgentDef>),
}

/// What a phase's command line is built from.
#[derive(Debug, Clone)]
pub struct PhaseContext<'a> {
    /// The phase number.
    pub phase: u8,
    /// The prompt text.
    pub prompt: &'a str,
    /// A file holding the prompt.
    pub prompt_file: &'a Path,
    /// The workspace.
    pub workspace: &'a Path,
    /// The task id.
    pub task: &'a str,
    /// The conversation id the agent reported in an earlier phase, if any.
    pub session: Option<&'a str>,
}

impl AgentSpec {
    /// Parses `script:PATH`, `shell` or `cmd:TEMPLATE`.
    pub fn parse(spec: &str) -> Result<AgentSpec, AgentError> {
        if let Some(path) = spec.strip_prefix("script:") {
            if path.is_empty() {
                return Err(AgentError::Invalid {
                    spec: spec.to_string(),
                    message: "needs a trajectory file path after `script:`".to_string(),
                });
            }
            return Ok(AgentSpec::Script(PathBuf::from(path)));
        }
        if let Some(template) = spec.strip_prefix("cmd:") {
            if shell_words::split(template).map_or(true, |w| w.is_empty()) {
                return Err(AgentError::Invalid {
                    spec: spec.to_string(),
                    message: "the template is empty or its quotes do not match".to_string(),
                });
            }
            return Ok(AgentSpec::Command(template.to_string()));
        }
        if spec == "shell" {
            return Ok(AgentSpec::Shell);
        }
        Err(AgentError::Unknown(spec.to_string()))
    }

    /// Parses `spec` like [`AgentSpec::parse`], and also a preset or config agent name:
    /// `headless` picks a preset's one-shot command line, the TUI its interactive one.
    pub fn resolve(
        spec: &str,
        agents: &BTreeMap<String, AgentConfig>,
        headless: bool,
    ) -> Result<AgentSpec, AgentError> {
        match AgentSpec::parse(spec) {
            Err(AgentError::Unknown(_)) => preset::resolve(spec, agents, headless)
                .map(|def| AgentSpec::Preset(Box::new(def)))
                .ok_or_else(|| AgentError::Unknown(spec.to_string())),
            other => other,
        }
    }

    /// The spec as written on the command line and in results.
    pub fn display(&self) -> String {
        match self {
            AgentSpec::Script(p) => format!("script:{}", p.display()),
            AgentSpec::Shell => "shell".to_string(),
            AgentSpec::Command(t) => format!("cmd:{t}"),
            AgentSpec::Preset(def) => def.name.clone(),
        }
    }

    /// A short name for run folder names.
    pub fn slug(&self) -> String {
        match self {
            AgentSpec::Script(_) => "script".to_string(),
            AgentSpec::Shell => "shell".to_string(),
            AgentSpec::Preset(def) => def.name.clone(),
            AgentSpec::Command(t) => {
                let program = shell_words::split(t)
                    .ok()
                    .and_then(|w| w.into_iter().next())
                    .unwrap_or_default();
                let base = Path::new(&program)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let slug: String = base
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() {
                            c.to_ascii_lowercase()
                        } else {
                            '-'
                        }
                    })
                    .collect();
                if slug.is_empty() {
                    "cmd".to_string()
                } else {
                    slug
                }
            }
        }
    }

    /// One-shot or interactive.
    pub fn mode(&self) -> AgentMode {
        match self {
            AgentSpec::Shell => AgentMode::Interactive,
            AgentSpec::Script(_) | AgentSpec::Command(_) => AgentMode::OneShot,
            AgentSpec::Preset(def) => def.mode,
        }
    }

    /// Whether prompts are typed into the agent's terminal: interactive presets and config
    /// agents (the shell is left to the human).
    pub fn types_prompt(&self) -> bool {
        matches!(self, AgentSpec::Preset(def) if def.mode == AgentMode::Interactive)
    }

    /// The idle limit of an interactive agent.
    pub fn idle_limit(&self) -> Option<std::time::Duration> {
        match self {
            AgentSpec::Preset(def) if def.mode == AgentMode::Interactive => {
                def.idle_s.map(std::time::Duration::from_secs)
            }
            _ => None,
        }
    }

    /// The folder of the scripted agent's trajectory (and the files it writes), which a
    /// sandbox must show it; None for other agents.
    pub fn files_dir(&self) -> Option<PathBuf> {
        match self {
            AgentSpec::Script(path) => std::fs::canonicalize(path)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf)),
            _ => None,
        }
    }

    /// Variables the agent's own definition sets.
    pub fn env(&self) -> Vec<(String, String)> {
        match self {
            AgentSpec::Preset(def) => def
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether its commands are read from Codex's session files (Codex, either mode).
    pub fn codex_sessions(&self) -> bool {
        matches!(self, AgentSpec::Preset(def) if def.codex_sessions)
    }

    /// What the agent's terminal output looks like.
    pub fn output(&self) -> OutputFormat {
        match self {
            AgentSpec::Preset(def) => def.output,
            _ => OutputFormat::Text,
        }
    }

    /// The program that must exist, looked up on `path` (the PATH the agent will get).
    pub fn check_program(&self, path: &str) -> Result<(), AgentError> {
        let program = match self {
            AgentSpec::Script(_) => return Ok(()),
            AgentSpec::Shell => shell_program(),
            AgentSpec::Command(t) => shell_words::split(t)
                .ok()
                .and_then(|w| w.into_iter().next())
                .unwrap_or_default(),
            AgentSpec::Preset(def) => def.command.program(),
        };
        if program.contains('{') {
            return Ok(());
        }
        let hint = match self {
            AgentSpec::Preset(def) => def.install.clone(),
            _ => None,
        };
        match crate::env::which_in(&program, path) {
            Some(_) => Ok(()),
            None => Err(AgentError::NotFound { program, hint }),
        }
    }

    /// The argv of the agent process of one phase.
    pub fn argv(&self, ctx: &PhaseContext<'_>, message_file: Option<&Path>) -> Vec<String> {
        match self {
            AgentSpec::Script(path) => {
                let exe = std::env::current_exe()
                    .map(|p| replaced_program(&p.display().to_string()))
                    .unwrap_or_else(|_| "xstack".to_string());
                // The agent runs in the workspace: give it the trajectory's absolute path.
                let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
                let mut argv = vec![
                    exe,
                    "agent-script".to_string(),
                    path.display().to_string(),
                    "--phase".to_string(),
                    ctx.phase.to_string(),
                ];
                if let Some(file) = message_file {
                    argv.push("--message-file".to_string());
                    argv.push(file.display().to_string());
                }
                argv
            }
            AgentSpec::Shell => vec![shell_program(), "-i".to_string()],
            AgentSpec::Command(template) => {
                vec![
                    "bash".to_string(),
                    "-c".to_string(),
                    render_template(template, ctx),
                ]
            }
            AgentSpec::Preset(def) => render_argv(phase_template(def, ctx), ctx),
        }
    }
}

/// The template of a phase: phase one's command, or in a later phase the resume command
/// (the one naming the session when the agent reported one).
fn phase_template<'a>(def: &'a AgentDef, ctx: &PhaseContext<'_>) -> &'a Template {
    if ctx.phase < 2 {
        return &def.command;
    }
    match &def.resume {
        Some(resume) if !resume.line.contains("{session}") || ctx.session.is_some() => resume,
        _ => def.resume_last.as_ref().unwrap_or(&def.command),
    }
}

/// The argv of a template: through `bash -c` for a user's template, else its words with the
/// placeholders substituted as they are.
fn render_argv(template: &Template, ctx: &PhaseContext<'_>) -> Vec<String> {
    if template.shell {
        return vec![
            "bash".to_string(),
            "-c".to_string(),
            render_template(&template.line, ctx),
        ];
    }
    let prompt_file = ctx.prompt_file.display().to_string();
    let workspace = ctx.workspace.display().to_string();
    let phase = ctx.phase.to_string();
    shell_words::split(&template.line)
        .unwrap_or_default()
        .into_iter()
        .map(|word| {
            word.replace("{prompt_file}", &prompt_file)
                .replace("{prompt}", ctx.prompt)
                .replace("{workspace}", &workspace)
                .replace("{phase}", &phase)
                .replace("{task}", ctx.task)
                .replace("{session}", ctx.session.unwrap_or(""))
        })
        .collect()
}

/// An agent spec as tables and the status line show it: a script by its file name
/// (`script:trajectory.jsonl`), anything else as given.
pub fn label(spec: &str) -> String {
    match spec.strip_prefix("script:") {
        Some(path) => format!(
            "script:{}",
            std::path::Path::new(path)
                .file_name()
                .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
        ),
        None => spec.to_string(),
    }
}

/// The bytes that type `text` into an interactive agent's terminal and submit it with Enter:
/// as one bracketed paste when the program turned that mode on (so a multi-line text is one
/// message), else as typed.
pub fn typed_bytes(text: &str, bracketed_paste: bool) -> Vec<u8> {
    let mut bytes = submit::pasted_bytes(text, bracketed_paste);
    bytes.push(b'\r');
    bytes
}

/// This program's path as the system gives it (`/proc/self/exe`), for starting it again:
/// when the binary was rebuilt while it ran, Linux names the running one `PATH (deleted)`,
/// and the rebuilt file at PATH is the program to start.
fn replaced_program(exe: &str) -> String {
    match exe.strip_suffix(" (deleted)") {
        Some(path) if Path::new(path).is_file() => path.to_string(),
        _ => exe.to_string(),
    }
}

fn shell_program() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "bash".to_string())
}

/// Substitutes `{prompt}` (shell-quoted), `{prompt_file}`, `{workspace}`, `{phase}`, `{task}`
/// and `{session}`.
pub fn render_template(template: &str, ctx: &PhaseContext<'_>) -> String {
    let quote = |s: &str| shell_words::quote(s).into_owned();
    template
        .replace(
            "{prompt_file}",
            &quote(&ctx.prompt_file.display().to_string()),
        )
        .replace("{prompt}", &quote(ctx.prompt))
        .replace("{workspace}", &quote(&ctx.workspace.display().to_string()))
        .replace("{phase}", &ctx.phase.to_string())
        .replace("{task}", &quote(ctx.task))
        .replace("{session}", &quote(ctx.session.unwrap_or("")))
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_program_rebuilt_while_it_runs_is_started_from_its_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let rebuilt = dir.path().join("xstack");
        std::fs::write(&rebuilt, "").unwrap();
        let rebuilt = rebuilt.display().to_string();
        assert_eq!(replaced_program(&format!("{rebuilt} (deleted)")), rebuilt);
        assert_eq!(replaced_program(&rebuilt), rebuilt);
        let gone = dir.path().join("gone").display().to_string();
        assert_eq!(
            replaced_program(&format!("{gone} (deleted)")),
            format!("{gone} (deleted)"),
            "with no file there, the name stays as the system gave it"
        );
    }

    use super::*;

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(
            AgentSpec::parse("script:a/b.jsonl").unwrap(),
            AgentSpec::Script(PathBuf::from("a/b.jsonl"))
        );
        assert_eq!(AgentSpec::parse("shell").unwrap(), AgentSpec::Shell);
        assert_eq!(
            AgentSpec::parse("cmd:my-agent --go {prompt}").unwrap(),
            AgentSpec::Command("my-agent --go {prompt}".into())
        );
        assert!(matches!(
            AgentSpec::parse("nope"),
            Err(AgentError::Unknown(_))
        ));
        assert!(matches!(
            AgentSpec::parse("cmd:"),
            Err(AgentError::Invalid { .. })
        ));
    }

    #[test]
    fn template_placeholders_are_quoted() {
        let ctx = PhaseContext {
            phase: 2,
            prompt: "it's a test",
            prompt_file: Path::new("/tmp/p 1.txt"),
            workspace: Path::new("/w"),
            task: "digits-mlp",
            session: None,
        };
        let line = render_template(
            "agent -p {prompt} -f {prompt_file} -C {workspace} --phase {phase} {task}",
            &ctx,
        );
        assert_eq!(
            shell_words::split(&line).unwrap(),
            [
                "agent",
                "-p",
                "it's a test",
                "-f",
                "/tmp/p 1.txt",
                "-C",
                "/w",
                "--phase",
                "2",
                "digits-mlp"
            ]
        );
    }

    fn ctx<'a>(phase: u8, session: Option<&'a str>) -> PhaseContext<'a> {
        PhaseContext {
            phase,
            prompt: "port it",
            prompt_file: Path::new("/r/prompts/phase-1.txt"),
            workspace: Path::new("/r/workspace"),
            task: "t",
            session,
        }
    }

    #[test]
    fn presets_build_their_documented_command_lines() {
        let none = BTreeMap::new();
        let claude = AgentSpec::resolve("claude", &none, true).unwrap();
        assert_eq!(claude.display(), "claude");
        assert_eq!(
            claude.argv(&ctx(1, None), None).join(" "),
            "claude -p port it --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Bash"
        );
        let resumed = claude.argv(&ctx(2, Some("s-1")), None);
        assert!(
            resumed.windows(2).any(|w| w == ["--resume", "s-1"]),
            "{resumed:?}"
        );
        let continued = claude.argv(&ctx(2, None), None);
        assert!(
            continued.contains(&"--continue".to_string()),
            "{continued:?}"
        );
        let codex = AgentSpec::resolve("codex", &none, true).unwrap();
        assert_eq!(
            codex.argv(&ctx(2, Some("t-1")), None)[6..],
            ["resume", "t-1", "port it"]
        );
        let tui = AgentSpec::resolve("aider", &none, false).unwrap();
        assert!(tui.types_prompt());
        assert_eq!(
            tui.argv(&ctx(1, None), None),
            [
                "aider",
                "--yes-always",
                "--no-git",
                "--chat-history-file",
                ".aider.chat.history.md",
                "--input-history-file",
                ".aider.input.history"
            ]
        );
        assert!(!AgentSpec::Shell.types_prompt());
        let err = AgentSpec::resolve("gemini", &none, true)
            .unwrap()
            .check_program("/nonexistent")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "agent program `gemini` not found on PATH: install it with `npm install -g @google/gemini-cli`"
        );
    }

    #[test]
    fn typed_text_is_pasted_when_the_program_asks_for_it() {
        assert_eq!(typed_bytes("a\nb", false), b"a\rb\r");
        assert_eq!(typed_bytes("a\nb", true), b"\x1b[200~a\nb\x1b[201~\r");
    }

    #[test]
    fn missing_program_is_named() {
        let spec = AgentSpec::parse("cmd:xstack-no-such-agent --x").unwrap();
        let err = spec.check_program("/usr/bin:/bin").unwrap_err();
        assert_eq!(
            err.to_string(),
            "agent program `xstack-no-such-agent` not found on PATH"
        );
        assert!(
            AgentSpec::parse("cmd:sh -c true")
                .unwrap()
                .check_program("/usr/bin:/bin")
                .is_ok()
        );
    }
}

//! Agent presets (SPEC §6): the command lines Claude Code, Codex, aider, Gemini CLI and
//! OpenCode document for non-interactive and for interactive work, and agents defined or
//! adjusted in the user's config file. docs/AGENTS.md says where each flag is documented.

use std::collections::BTreeMap;

use super::AgentMode;
use super::config::{AgentConfig, ConfigMode};
use super::transcript::OutputFormat;

/// How long an interactive preset may stay silent (no output, no file change) before its
/// phase ends, unless the config says otherwise.
pub const DEFAULT_IDLE_S: u64 = 300;

/// A command line template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The template, with SPEC §6 placeholders and `{session}`.
    pub line: String,
    /// Run through `bash -c` with shell-quoted placeholders (templates a user wrote); else
    /// split into words and the placeholders substituted as they are (the presets' own).
    pub shell: bool,
}

impl Template {
    fn preset(line: &str) -> Template {
        Template {
            line: line.to_string(),
            shell: false,
        }
    }

    fn user(line: &str) -> Template {
        Template {
            line: line.to_string(),
            shell: true,
        }
    }

    /// The program the template starts (its first word).
    pub fn program(&self) -> String {
        shell_words::split(&self.line)
            .ok()
            .and_then(|w| w.into_iter().next())
            .unwrap_or_default()
    }
}

/// A named agent, resolved for one run: a preset, a config agent, or a preset the config
/// adjusted.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDef {
    /// The name given to `--agent`.
    pub name: String,
    /// One-shot or interactive.
    pub mode: AgentMode,
    /// The command of phase one (and of any phase that cannot resume).
    pub command: Template,
    /// The command that resumes the conversation in phase two; may use `{session}`.
    pub resume: Option<Template>,
    /// The resume command when `resume` needs a session id the agent did not report.
    pub resume_last: Option<Template>,
    /// Idle limit of an interactive agent, in seconds.
    pub idle_s: Option<u64>,
    /// Variables set for the agent.
    pub env: BTreeMap<String, String>,
    /// What its terminal output looks like.
    pub output: OutputFormat,
    /// The API hosts it needs (for the sandbox).
    pub hosts: Vec<String>,
    /// Files and folders under `$HOME` where it keeps its sessions and settings (writable in
    /// the sandbox when they exist).
    pub state: Vec<String>,
    /// How to install its program, when known.
    pub install: Option<String>,
    /// Codex: its commands are read from its session files
    /// ([`super::sessions::CodexCommands`]), the record of what ran (its TUI prints no
    /// JSON, and its `exec --json` output has no item for a command that never started).
    pub codex_sessions: bool,
}

/// One mode of a preset.
struct Variant {
    command: &'static str,
    resume: Option<&'static str>,
    resume_last: Option<&'static str>,
    output: OutputFormat,
}

/// A built-in agent.
struct Preset {
    name: &'static str,
    install: &'static str,
    hosts: &'static [&'static str],
    state: &'static [&'static str],
    oneshot: Variant,
    interactive: Variant,
}

/// The names of the presets, in the order the help lists them.
pub const PRESET_NAMES: [&str; 5] = ["claude", "codex", "aider", "gemini", "opencode"];

const PRESETS: [Preset; 5] = [
    Preset {
        name: "claude",
        install: "npm install -g @anthropic-ai/claude-code",
        hosts: &["api.anthropic.com"],
        state: &[".claude", ".claude.json"],
        oneshot: Variant {
            command: "claude -p {prompt} --output-format stream-json --verbose --permission-mode acceptEdits --allowedTools Bash",
            resume: Some(
                "claude -p {prompt} --output-format stream-json --verbose --permission-mode acceptEdits --resume {session} --allowedTools Bash",
            ),
            resume_last: Some(
                "claude -p {prompt} --output-format stream-json --verbose --permission-mode acceptEdits --continue --allowedTools Bash",
            ),
            output: OutputFormat::ClaudeStreamJson,
        },
        interactive: Variant {
            command: "claude --permission-mode acceptEdits",
            resume: Some("claude --continue --permission-mode acceptEdits"),
            resume_last: None,
            output: OutputFormat::Text,
        },
    },
    Preset {
        name: "codex",
        install: "npm install -g @openai/codex",
        hosts: &["api.openai.com", "chatgpt.com"],
        state: &[".codex"],
        oneshot: Variant {
            command: "codex exec --json --sandbox workspace-write --skip-git-repo-check {prompt}",
            resume: Some(
                "codex exec --json --sandbox workspace-write --skip-git-repo-check resume {session} {prompt}",
            ),
            resume_last: Some(
                "codex exec --json --sandbox workspace-write --skip-git-repo-check resume --last {prompt}",
            ),
            output: OutputFormat::CodexJson,
        },
        interactive: Variant {
            command: "codex --sandbox workspace-write --ask-for-approval on-request",
            resume: Some(
                "codex resume --last --sandbox workspace-write --ask-for-approval on-request",
            ),
            resume_last: None,
            output: OutputFormat::Text,
        },
    },
    Preset {
        name: "aider",
        install: "python -m pip install aider-chat",
        hosts: &["api.openai.com", "api.anthropic.com"],
        state: &[".aider"],
        oneshot: Variant {
            // The history files named, or aider puts them at the root of the Git repository
            // the run folder lies in (its defaults do, even with --no-git).
            command: "aider --message {prompt} --yes-always --no-git --chat-history-file .aider.chat.history.md --input-history-file .aider.input.history",
            resume: Some(
                "aider --message {prompt} --yes-always --no-git --chat-history-file .aider.chat.history.md --input-history-file .aider.input.history --restore-chat-history",
            ),
            resume_last: None,
            output: OutputFormat::Text,
        },
        interactive: Variant {
            command: "aider --yes-always --no-git --chat-history-file .aider.chat.history.md --input-history-file .aider.input.history",
            resume: Some(
                "aider --yes-always --no-git --chat-history-file .aider.chat.history.md --input-history-file .aider.input.history --restore-chat-history",
            ),
            resume_last: None,
            output: OutputFormat::Text,
        },
    },
    Preset {
        name: "gemini",
        install: "npm install -g @google/gemini-cli",
        hosts: &[
            "generativelanguage.googleapis.com",
            "cloudcode-pa.googleapis.com",
            "oauth2.googleapis.com",
        ],
        state: &[".gemini"],
        oneshot: Variant {
            command: "gemini -p {prompt} --output-format stream-json --yolo --skip-trust",
            resume: Some(
                "gemini --resume {session} -p {prompt} --output-format stream-json --yolo --skip-trust",
            ),
            resume_last: Some(
                "gemini --resume latest -p {prompt} --output-format stream-json --yolo --skip-trust",
            ),
            output: OutputFormat::GeminiStreamJson,
        },
        interactive: Variant {
            command: "gemini --yolo --skip-trust",
            resume: Some("gemini --resume latest --yolo --skip-trust"),
            resume_last: None,
            output: OutputFormat::Text,
        },
    },
    Preset {
        name: "opencode",
        install: "npm install -g opencode-ai",
        hosts: &["models.dev", "api.anthropic.com", "api.openai.com"],
        state: &[
            ".config/opencode",
            ".local/share/opencode",
            ".local/state/opencode",
            ".cache/opencode",
        ],
        oneshot: Variant {
            command: "opencode run {prompt}",
            resume: Some("opencode run --continue {prompt}"),
            resume_last: None,
            output: OutputFormat::Text,
        },
        interactive: Variant {
            command: "opencode",
            resume: Some("opencode --continue"),
            resume_last: None,
            output: OutputFormat::Text,
        },
    },
];

/// The agent named `name`: a preset adjusted by the config's `[agents.NAME]`, or an agent the
/// config defines. `headless` picks a preset's one-shot command line, the TUI its interactive
/// one, unless the config sets `mode`. None when neither knows the name.
pub fn resolve(
    name: &str,
    agents: &BTreeMap<String, AgentConfig>,
    headless: bool,
) -> Option<AgentDef> {
    let config = agents.get(name);
    let preset = PRESETS.iter().find(|p| p.name == name);
    let mode = match config.and_then(|c| c.mode) {
        Some(ConfigMode::Oneshot) => AgentMode::OneShot,
        Some(ConfigMode::Interactive) => AgentMode::Interactive,
        None if preset.is_some() && !headless => AgentMode::Interactive,
        None => AgentMode::OneShot,
    };
    let mut def = match preset {
        Some(p) => {
            let v = match mode {
                AgentMode::OneShot => &p.oneshot,
                AgentMode::Interactive => &p.interactive,
            };
            AgentDef {
                name: name.to_string(),
                mode,
                command: Template::preset(v.command),
                resume: v.resume.map(Template::preset),
                resume_last: v.resume_last.map(Template::preset),
                idle_s: (mode == AgentMode::Interactive).then_some(DEFAULT_IDLE_S),
                env: BTreeMap::new(),
                output: v.output,
                hosts: p.hosts.iter().map(|h| h.to_string()).collect(),
                state: p.state.iter().map(|s| s.to_string()).collect(),
                install: Some(p.install.to_string()),
                codex_sessions: p.name == "codex",
            }
        }
        None => {
            // A config agent: the config checked that it has a command.
            let command = config?.command.as_deref()?;
            AgentDef {
                name: name.to_string(),
                mode,
                command: Template::user(command),
                resume: None,
                resume_last: None,
                idle_s: None,
                env: BTreeMap::new(),
                output: OutputFormat::Text,
                hosts: Vec::new(),
                state: Vec::new(),
                install: None,
                codex_sessions: false,
            }
        }
    };
    if let Some(c) = config {
        if let Some(command) = &c.command {
            def.command = Template::user(command);
        }
        if let Some(resume) = &c.resume {
            def.resume = Some(Template::user(resume));
        }
        if c.idle_s.is_some() {
            def.idle_s = c.idle_s;
        }
        def.env.extend(c.env.clone());
    }
    Some(def)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headless_picks_one_shot_and_the_tui_interactive() {
        let none = BTreeMap::new();
        let headless = resolve("claude", &none, true).unwrap();
        assert_eq!(headless.mode, AgentMode::OneShot);
        assert_eq!(headless.output, OutputFormat::ClaudeStreamJson);
        assert!(headless.command.line.starts_with("claude -p {prompt}"));
        let tui = resolve("claude", &none, false).unwrap();
        assert_eq!(tui.mode, AgentMode::Interactive);
        assert_eq!(tui.idle_s, Some(DEFAULT_IDLE_S));
        assert!(resolve("nope", &none, true).is_none());
        for name in PRESET_NAMES {
            let def = resolve(name, &none, true).unwrap();
            assert_eq!(def.command.program(), name);
            assert!(def.install.is_some());
        }
    }

    #[test]
    fn the_config_adjusts_presets_and_defines_agents() {
        let mut agents = BTreeMap::new();
        agents.insert(
            "claude".to_string(),
            AgentConfig {
                mode: Some(ConfigMode::Interactive),
                idle_s: Some(30),
                env: [("K".to_string(), "V".to_string())].into(),
                ..AgentConfig::default()
            },
        );
        agents.insert(
            "mine".to_string(),
            AgentConfig {
                command: Some("my-agent {prompt_file}".to_string()),
                ..AgentConfig::default()
            },
        );
        let claude = resolve("claude", &agents, true).unwrap();
        assert_eq!(claude.mode, AgentMode::Interactive);
        assert_eq!(claude.idle_s, Some(30));
        assert_eq!(claude.env.get("K").map(String::as_str), Some("V"));
        let mine = resolve("mine", &agents, false).unwrap();
        assert_eq!(mine.mode, AgentMode::OneShot);
        assert!(mine.command.shell);
        assert_eq!(mine.command.program(), "my-agent");
    }
}

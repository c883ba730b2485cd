//! Agents (SPEC §1 `--agent`, §6): parsing agent specs, checking that the program exists
//! before anything starts, building the command line of each phase, and the prompts.

pub mod prompt;
pub mod script;
pub mod transcript;

use std::path::{Path, PathBuf};

/// Agent spec errors.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The spec is not one of the known forms (usage error, exit 2).
    #[error("unknown agent `{0}`: use script:PATH, shell, or cmd:TEMPLATE")]
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
    #[error("agent program `{program}` not found on PATH{hint}")]
    NotFound {
        /// The program.
        program: String,
        /// How to install it, when known.
        hint: String,
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

    /// The spec as written on the command line and in results.
    pub fn display(&self) -> String {
        match self {
            AgentSpec::Script(p) => format!("script:{}", p.display()),
            AgentSpec::Shell => "shell".to_string(),
            AgentSpec::Command(t) => format!("cmd:{t}"),
        }
    }

    /// A short name for run folder names.
    pub fn slug(&self) -> String {
        match self {
            AgentSpec::Script(_) => "script".to_string(),
            AgentSpec::Shell => "shell".to_string(),
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
        };
        if program.contains('{') {
            return Ok(());
        }
        match crate::env::which_in(&program, path) {
            Some(_) => Ok(()),
            None => Err(AgentError::NotFound {
                program,
                hint: String::new(),
            }),
        }
    }

    /// The argv of the agent process of one phase.
    pub fn argv(&self, ctx: &PhaseContext<'_>, message_file: Option<&Path>) -> Vec<String> {
        match self {
            AgentSpec::Script(path) => {
                let exe = std::env::current_exe()
                    .map(|p| p.display().to_string())
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
        }
    }
}

fn shell_program() -> String {
    std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "bash".to_string())
}

/// Substitutes `{prompt}` (shell-quoted), `{prompt_file}`, `{workspace}`, `{phase}`, `{task}`.
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
}

#[cfg(test)]
mod tests {
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

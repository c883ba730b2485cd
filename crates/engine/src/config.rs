//! The user's configuration file: `$XSTACK_CONFIG`, else `$XDG_CONFIG_HOME/xstack/config.toml`,
//! else `~/.config/xstack/config.toml`. It sets the default theme and runner and adds or
//! adjusts agents (`[agents.NAME]`). Unknown keys and bad values are errors that name the
//! file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::agent::config::AgentConfig;
use crate::agent::preset::PRESET_NAMES;
use crate::task::located::{self, KeyPath, Located, Term};

/// Why the config file could not be used: it could not be read, or it breaks a rule (its
/// file, line, key path and what is wrong).
pub type ConfigError = located::FileError;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    theme: Option<String>,
    runner: Option<String>,
    #[serde(default)]
    agents: BTreeMap<String, AgentConfig>,
}

/// The user's configuration (empty when there is no file).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// The file it came from, if any.
    pub file: Option<PathBuf>,
    /// Default `--theme`.
    pub theme: Option<String>,
    /// Default `--runner`.
    pub runner: Option<String>,
    /// Agents by name.
    pub agents: BTreeMap<String, AgentConfig>,
}

/// Where the config file is looked for.
pub fn config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("XSTACK_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("xstack").join("config.toml"))
}

impl Config {
    /// Loads the user's config: an absent default file is an empty config; a file named by
    /// `$XSTACK_CONFIG` must exist.
    pub fn load() -> Result<Config, ConfigError> {
        let explicit = std::env::var_os("XSTACK_CONFIG").is_some_and(|p| !p.is_empty());
        match config_path() {
            Some(file) if explicit || file.exists() => Config::load_file(&file),
            _ => Ok(Config::default()),
        }
    }

    /// Loads and checks `file`.
    pub fn load_file(file: &Path) -> Result<Config, ConfigError> {
        let text = located::read(file)?;
        Config::parse(file, &text)
    }

    /// Parses and checks the text of `file`.
    pub fn parse(file: &Path, text: &str) -> Result<Config, ConfigError> {
        let invalid = |key: KeyPath, message: String| {
            ConfigError::Invalid(Located::in_toml(file, text, Term::Key, key, message))
        };
        let parsed: ConfigFile = located::from_toml(file, text, Term::Key)?;
        for (name, agent) in &parsed.agents {
            let agent_key = KeyPath::of("agents").key(name);
            let key = |k: &str| agent_key.clone().key(k);
            let name_ok = {
                let mut chars = name.chars();
                matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
                    && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            };
            if !name_ok || name == "shell" {
                return Err(invalid(
                    agent_key,
                    "an agent name must match [a-z0-9][a-z0-9-]* and not be `shell`".to_string(),
                ));
            }
            for (k, value) in [("command", &agent.command), ("resume", &agent.resume)] {
                if let Some(v) = value
                    && shell_words::split(v).map_or(true, |w| w.is_empty())
                {
                    return Err(invalid(
                        key(k),
                        "the template is empty or its quotes do not match".to_string(),
                    ));
                }
            }
            if agent.command.is_none() && !PRESET_NAMES.contains(&name.as_str()) {
                return Err(invalid(
                    agent_key,
                    format!(
                        "`{name}` is not a preset ({}), so it needs `command`",
                        PRESET_NAMES.join(", ")
                    ),
                ));
            }
            if agent.idle_s == Some(0) {
                return Err(invalid(key("idle_s"), "must be at least 1".to_string()));
            }
        }
        Ok(Config {
            file: Some(file.to_path_buf()),
            theme: parsed.theme,
            runner: parsed.runner,
            agents: parsed.agents,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::config::ConfigMode;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("/c/config.toml"), text)
    }

    #[test]
    fn agents_theme_and_runner() {
        let config = parse(
            "theme = \"light\"\nrunner = \"local\"\n\n[agents.claude]\nidle_s = 60\nenv = { A = \"1\" }\n\n[agents.mine]\ncommand = \"my-agent {prompt_file}\"\nmode = \"interactive\"\nresume = \"my-agent --again\"\n",
        )
        .unwrap();
        assert_eq!(config.theme.as_deref(), Some("light"));
        assert_eq!(config.runner.as_deref(), Some("local"));
        assert_eq!(config.agents["claude"].idle_s, Some(60));
        assert_eq!(config.agents["mine"].mode, Some(ConfigMode::Interactive));
    }

    #[test]
    fn unknown_keys_name_file_line_and_key() {
        let err = parse("theme = \"dark\"\n\n[agents.claude]\nidle_s = 5\ncolour = \"red\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/c/config.toml:5: key `agents.claude.colour`: unknown field `colour`"),
            "{err}"
        );
        let err = parse("themes = \"dark\"\n").unwrap_err().to_string();
        assert!(err.starts_with("/c/config.toml:1: key `themes`:"), "{err}");
    }

    #[test]
    fn bad_values_name_their_key() {
        let err = parse("[agents.mine]\nmode = \"oneshot\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/c/config.toml:1: key `agents.mine`: `mine` is not a preset"),
            "{err}"
        );
        let err = parse("[agents.claude]\n\nidle_s = 0\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "/c/config.toml:3: key `agents.claude.idle_s`: must be at least 1"
        );
        let err = parse("[agents.claude]\nmode = \"sometimes\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/c/config.toml:2: key `agents.claude.mode`:"),
            "{err}"
        );
    }

    #[test]
    fn values_of_the_wrong_type_name_their_key_not_the_value() {
        let cases = [
            (
                "theme = 3\n",
                "/c/config.toml:1: key `theme`: invalid type: integer `3`, expected a string",
            ),
            (
                "theme = \"dark\"\nrunner = [\"local\"]\n",
                "/c/config.toml:2: key `runner`: invalid type: array, expected a string",
            ),
            (
                "[agents.mine]\ncommand = 7\n",
                "/c/config.toml:2: key `agents.mine.command`: invalid type: integer `7`, expected a string",
            ),
            (
                "[agents.claude]\nidle_s = \"soon\"\n",
                "/c/config.toml:2: key `agents.claude.idle_s`: invalid type: string \"soon\", expected a whole number >= 0",
            ),
            (
                "[agents.claude]\nenv = { A = 1 }\n",
                "/c/config.toml:2: key `agents.claude.env.A`: invalid type: integer `1`, expected a string",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text).unwrap_err().to_string(), expected, "{text:?}");
        }
    }
}

//! The agent part of the user's config file (`[agents.NAME]`): the types serde reads it
//! into. `crate::config` reads the file and checks it; the agent layer reads these types and
//! nothing else of the config.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::task::located;

/// `mode` of an agent in the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigMode {
    /// A new process each phase.
    Oneshot,
    /// One process; prompts are typed into its terminal.
    Interactive,
}

impl<'de> Deserialize<'de> for ConfigMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        located::one_of(
            d,
            &[
                ("oneshot", ConfigMode::Oneshot),
                ("interactive", ConfigMode::Interactive),
            ],
        )
    }
}

/// `[agents.NAME]`: a new agent, or changes to a preset of the same name.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The command line template (SPEC §6 placeholders, run by bash).
    pub command: Option<String>,
    /// One-shot or interactive.
    pub mode: Option<ConfigMode>,
    /// The template that resumes the conversation in phase two (`{session}` is the id the
    /// agent reported).
    pub resume: Option<String>,
    /// Idle limit of an interactive agent, in seconds.
    pub idle_s: Option<u64>,
    /// Variables set for the agent.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

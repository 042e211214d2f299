//! Resolved views: the questions the services ask of a config, answered with OpenClaw's
//! defaults applied and per-agent overrides merged. Everything here is a pure function of the
//! loaded [`Config`](crate::Config) and explicit inputs such as [`Dirs`].

mod agent;
pub mod defaults;
mod hooks;
mod models;
mod plugins;
mod settings;

use std::path::{Path, PathBuf};

pub use agent::{
    AgentRuntime, AgentView, CodexSettings, HeartbeatSettings, SandboxSettings, SkillAllowlist,
    ToolPolicy,
};
pub use hooks::{
    AgentHooks, BootstrapHook, DEFAULT_HOOK_TIMEOUT, Hook, HookCommand, PromptBuildHook,
};
pub use models::ModelAlias;
pub use plugins::PluginSkills;
pub use settings::{
    ApplyPatchSettings, BlockStreamingSettings, BootstrapLimits, ChunkSettings, CoalesceSettings,
    HumanDelaySettings, PromptSettings, QueueSettings, SkillsLimits, TtsSettings,
};

/// The directories that relative defaults hang off. Passed in, never discovered, so resolution
/// stays pure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// OpenClaw's state directory (`~/.openclaw` by default).
    pub state_dir: PathBuf,
    /// The user's home directory, for `~` in configured paths.
    pub home_dir: PathBuf,
}

impl Dirs {
    /// Expands a leading `~` or `~/` with the home directory; other paths are returned as
    /// written (relative paths stay relative: the caller decides what they are relative to).
    pub fn expand(&self, path: &str) -> PathBuf {
        match path.strip_prefix('~') {
            Some("") => self.home_dir.clone(),
            Some(rest) if rest.starts_with('/') || rest.starts_with(std::path::MAIN_SEPARATOR) => {
                self.home_dir
                    .join(rest.trim_start_matches(['/', std::path::MAIN_SEPARATOR]))
            }
            _ => Path::new(path).to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_home_only_at_the_start() {
        let dirs = Dirs {
            state_dir: "/s".into(),
            home_dir: "/home/u".into(),
        };
        assert_eq!(dirs.expand("~"), PathBuf::from("/home/u"));
        assert_eq!(dirs.expand("~/ws"), PathBuf::from("/home/u/ws"));
        assert_eq!(dirs.expand("/abs/ws"), PathBuf::from("/abs/ws"));
        assert_eq!(dirs.expand("rel/ws"), PathBuf::from("rel/ws"));
        assert_eq!(dirs.expand("~other/ws"), PathBuf::from("~other/ws"));
    }
}

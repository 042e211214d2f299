//! The names of the bootstrap files, in the order they are loaded (P-31).

use std::fmt;

/// One of the workspace's bootstrap files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BootstrapName {
    /// `AGENTS.md`: how the workspace works, standing instructions.
    Agents,
    /// `SOUL.md`: the assistant's character (optional template).
    Soul,
    /// `TOOLS.md`: local notes on tools.
    Tools,
    /// `IDENTITY.md`: the assistant's name and style (optional template).
    Identity,
    /// `USER.md`: about the user (optional template).
    User,
    /// `HEARTBEAT.md`: heartbeat checklist (optional template).
    Heartbeat,
    /// `BOOTSTRAP.md`: the first-run ritual; only in a brand-new workspace.
    Bootstrap,
    /// `MEMORY.md`: long-term memory; never seeded, loaded only when present.
    Memory,
}

impl BootstrapName {
    /// Every bootstrap file in load order: AGENTS, SOUL, TOOLS, IDENTITY, USER, HEARTBEAT,
    /// BOOTSTRAP, MEMORY.
    pub const LOAD_ORDER: [BootstrapName; 8] = [
        BootstrapName::Agents,
        BootstrapName::Soul,
        BootstrapName::Tools,
        BootstrapName::Identity,
        BootstrapName::User,
        BootstrapName::Heartbeat,
        BootstrapName::Bootstrap,
        BootstrapName::Memory,
    ];

    /// The files seeded from templates into every workspace (BOOTSTRAP.md is seeded separately,
    /// and only once; MEMORY.md never). Their presence also means a workspace is not brand new.
    pub const SEEDED: [BootstrapName; 6] = [
        BootstrapName::Agents,
        BootstrapName::Soul,
        BootstrapName::Tools,
        BootstrapName::Identity,
        BootstrapName::User,
        BootstrapName::Heartbeat,
    ];

    /// The file name in the workspace root.
    pub fn file_name(self) -> &'static str {
        match self {
            BootstrapName::Agents => "AGENTS.md",
            BootstrapName::Soul => "SOUL.md",
            BootstrapName::Tools => "TOOLS.md",
            BootstrapName::Identity => "IDENTITY.md",
            BootstrapName::User => "USER.md",
            BootstrapName::Heartbeat => "HEARTBEAT.md",
            BootstrapName::Bootstrap => "BOOTSTRAP.md",
            BootstrapName::Memory => "MEMORY.md",
        }
    }

    /// The name for a file name, matched exactly (case-sensitive, as on disk).
    pub fn from_file_name(name: &str) -> Option<BootstrapName> {
        BootstrapName::LOAD_ORDER
            .into_iter()
            .find(|n| n.file_name() == name)
    }

    /// Whether `agents.defaults.skipOptionalBootstrapFiles` skips seeding this file.
    pub fn is_optional(self) -> bool {
        matches!(
            self,
            BootstrapName::Soul
                | BootstrapName::Identity
                | BootstrapName::User
                | BootstrapName::Heartbeat
        )
    }

    /// Whether the loader lists this file only when it exists (never as missing).
    pub fn only_when_present(self) -> bool {
        matches!(self, BootstrapName::Bootstrap | BootstrapName::Memory)
    }
}

impl fmt::Display for BootstrapName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.file_name())
    }
}

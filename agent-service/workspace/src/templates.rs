//! Our own default templates for the bootstrap files, embedded at build time from
//! `templates/`. They are short, contain no secrets, and ask for nothing to be sent anywhere
//! or run automatically.

use sha2::{Digest, Sha256};

use crate::BootstrapName;

const AGENTS: &str = include_str!("../templates/AGENTS.md");
const SOUL: &str = include_str!("../templates/SOUL.md");
const TOOLS: &str = include_str!("../templates/TOOLS.md");
const IDENTITY: &str = include_str!("../templates/IDENTITY.md");
const USER: &str = include_str!("../templates/USER.md");
const HEARTBEAT: &str = include_str!("../templates/HEARTBEAT.md");
const BOOTSTRAP: &str = include_str!("../templates/BOOTSTRAP.md");

/// The default template for a bootstrap file; `None` for MEMORY.md, which is never seeded.
pub fn template(name: BootstrapName) -> Option<&'static str> {
    match name {
        BootstrapName::Agents => Some(AGENTS),
        BootstrapName::Soul => Some(SOUL),
        BootstrapName::Tools => Some(TOOLS),
        BootstrapName::Identity => Some(IDENTITY),
        BootstrapName::User => Some(USER),
        BootstrapName::Heartbeat => Some(HEARTBEAT),
        BootstrapName::Bootstrap => Some(BOOTSTRAP),
        BootstrapName::Memory => None,
    }
}

/// Lowercase hex SHA-256 of some bytes, the digest used for proof markers and slugs.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

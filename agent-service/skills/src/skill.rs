//! What discovery returns.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::metadata::Metadata;
use crate::report::{Collision, Skipped};
use crate::roots::Root;

/// The outcome of discovering one agent's skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The skills the agent may use, sorted by name (byte order).
    pub skills: Vec<DiscoveredSkill>,
    /// Same-name skills hidden by higher-priority ones, in discovery order.
    pub collisions: Vec<Collision>,
    /// Roots, directories and skills not listed, each with its reason, in discovery order.
    pub skipped: Vec<Skipped>,
    /// SHA-256 (hex) over the listed skills and the skills-related inputs; equal fingerprints
    /// mean an equal discovery.
    pub fingerprint: String,
}

impl Discovery {
    /// The skills the model is told about: those without `disable-model-invocation`.
    pub fn model_visible(&self) -> impl Iterator<Item = &DiscoveredSkill> {
        self.skills.iter().filter(|s| s.model_invocable)
    }

    /// The skill with this name.
    pub fn get(&self, name: &str) -> Option<&DiscoveredSkill> {
        self.skills
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.skills.get(i))
    }
}

/// One skill the agent may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredSkill {
    /// The frontmatter `name` (or its directory's name): never the nested path (P-39).
    pub name: String,
    /// The frontmatter `description`.
    pub description: String,
    /// Absolute path of SKILL.md, as reached through its root.
    pub location: PathBuf,
    /// `location` with the home directory written as `~/`, for the prompt.
    pub display_location: String,
    /// The raw SKILL.md bytes: the version input.
    pub content: Vec<u8>,
    /// SHA-256 of `content`, lowercase hex.
    pub sha256: String,
    /// The version the prompt shows, derived from `display_location` and
    /// `content` (see [`version_tag`]).
    pub version: String,
    /// The root it was found under.
    pub root: Root,
    /// The key of its `skills.entries` config: `skillKey`, else the name.
    pub skill_key: String,
    /// Offered as a user command (`user-invocable`, default true).
    pub user_invocable: bool,
    /// Listed to the model (not `disable-model-invocation`).
    pub model_invocable: bool,
    /// Display emoji.
    pub emoji: Option<String>,
    /// Homepage link.
    pub homepage: Option<String>,
    /// The gates and hints from `metadata.openclaw`.
    pub metadata: Metadata,
    /// Problems that did not stop it from loading (for status output).
    pub warnings: Vec<String>,
}

/// SHA-256 of the bytes, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The version tag the prompt shows (P-37), derived from the skill file's path and content:
/// `sha256:` and the first 16 hex digits of SHA-256 over the location as the prompt lists it,
/// a NUL byte and the 32-byte SHA-256 digest of the SKILL.md bytes (`sha256_hex` decoded).
/// It is prompt-render's rule; a test holds the two to the same value.
pub fn version_tag(location: &str, sha256_hex: &str) -> String {
    let mut digest = [0u8; 32];
    if hex::decode_to_slice(sha256_hex, &mut digest).is_err() {
        digest = [0u8; 32];
    }
    let mut hasher = Sha256::new();
    hasher.update(location.as_bytes());
    hasher.update([0u8]);
    hasher.update(digest);
    let full = hex::encode(hasher.finalize());
    format!("sha256:{}", &full[..16])
}

/// Writes a path under the home directory as `~/…` (always with `/`), others unchanged.
pub fn display_path(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if !home.as_os_str().is_empty() && !rest.as_os_str().is_empty() => {
            let parts: Vec<_> = rest
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect();
            format!("~/{}", parts.join("/"))
        }
        _ => path.to_string_lossy().into_owned(),
    }
}

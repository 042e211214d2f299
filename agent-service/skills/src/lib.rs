//! `openclaw-skills`: discovers the skills available to one agent (R-9, P-37, P-39, P-40).
//!
//! What it is for: given an agent's workspace, home and state directories, the `skills.*`
//! config, the agent's allowlist and limits, and a [`Host`] that answers for the machine, it
//! [`discover`]s the skills the agent may use. It searches the roots in priority order
//! (`<workspace>/skills`, `<workspace>/.agents/skills`, `~/.agents/skills`, `<stateDir>/skills`,
//! bundled, `skills.load.extraDirs`, enabled plugins' skill dirs), allows grouping folders,
//! names each skill by its flat frontmatter `name`, keeps the highest-priority skill of each
//! name, applies the config switches and the frontmatter gates, then the allowlist. Every
//! collision and every skipped root, directory or skill is reported with its reason; reads are
//! bounded by `skills.limits`. Each listed skill carries its SKILL.md bytes, their SHA-256 and
//! the `sha256:<16 hex>` version tag the prompt shows, and the whole result has a fingerprint
//! for cheap change detection (lesson L6).
//!
//! What it is not for: rendering the `<available_skills>` block or budgeting it (that is
//! `prompt-render`, which takes these skills as input), installing skills, watching files, or
//! reading config files and environment variables itself. It is synchronous `std::fs` code
//! with no global state; the only process access is in [`ProcessHost`], which callers choose.
//!
//! ```
//! use openclaw_config::raw::SkillsConfig;
//! use openclaw_config::resolve::{Dirs, SkillAllowlist, SkillsLimits};
//! use openclaw_skills::{DiscoverInput, ProcessHost, discover};
//!
//! let home = tempfile::tempdir()?;
//! let workspace = home.path().join("ws");
//! let skill_dir = workspace.join("skills").join("personal").join("notes");
//! std::fs::create_dir_all(&skill_dir)?;
//! std::fs::write(
//!     skill_dir.join("SKILL.md"),
//!     "---\nname: take-notes\ndescription: Keep notes.\n---\n# Notes\n",
//! )?;
//! let dirs = Dirs { home_dir: home.path().into(), state_dir: home.path().join(".openclaw") };
//! let discovery = discover(&DiscoverInput {
//!     workspace: &workspace,
//!     dirs: &dirs,
//!     bundled_dir: None,
//!     plugin_roots: &[],
//!     enabled_plugins: &[],
//!     skills: &SkillsConfig::default(),
//!     allowlist: &SkillAllowlist::All,
//!     limits: &SkillsLimits::default(),
//!     config: None,
//!     host: &ProcessHost::with_path("".as_ref()),
//! })?;
//! assert_eq!(discovery.skills[0].name, "take-notes");
//! assert_eq!(discovery.skills[0].display_location, "~/ws/skills/personal/notes/SKILL.md");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod consulted;
mod discover;
mod error;
mod fingerprint;
pub mod frontmatter;
mod gates;
mod host;
mod merge;
mod metadata;
mod report;
mod roots;
mod scan;
mod skill;
mod yaml;

pub use consulted::{Consulted, RACY_MARGIN};
pub use discover::{DiscoverInput, discover, discover_consulted};
pub use error::Error;
pub use frontmatter::Frontmatter;
pub use gates::{GateFailure, config_path_truthy};
pub use host::{Host, Platform, ProcessHost};
pub use metadata::{Metadata, Requires};
pub use report::{Collision, SkillOrigin, SkipReason, Skipped};
pub use roots::{PluginSkillRoot, Root, RootKind};
pub use skill::{DiscoveredSkill, Discovery, display_path, sha256_hex, version_tag};

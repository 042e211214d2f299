//! `skills`, and the limit block shared with `agents.list[].skillsLimits`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::SecretInput;

/// `skills`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SkillsConfig {
    /// Where skills are loaded from.
    pub load: Option<SkillsLoad>,
    /// Per-skill settings, keyed by skill name or skillKey.
    pub entries: Option<BTreeMap<String, SkillEntry>>,
    /// Allowlist for bundled skills only.
    pub allow_bundled: Option<Vec<String>>,
    /// Discovery and prompt limits.
    pub limits: Option<SkillsLimitsConfig>,
    /// Skill installer settings: opaque.
    pub install: Option<Value>,
}

/// `skills.load`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SkillsLoad {
    /// Extra skill roots, lowest precedence.
    pub extra_dirs: Option<Vec<String>>,
    /// Directories that symlinked skills may point into.
    pub allow_symlink_targets: Option<Vec<String>>,
    /// Reload skills when files change.
    pub watch: Option<bool>,
}

/// `skills.entries.<name>`.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SkillEntry {
    /// Turn the skill on or off.
    pub enabled: Option<bool>,
    /// The skill's primary credential (its `primaryEnv`).
    pub api_key: Option<SecretInput>,
    /// Environment variables for the skill.
    pub env: Option<BTreeMap<String, String>>,
    /// Skill-defined settings: opaque.
    pub config: Option<Value>,
}

/// `skills.limits` and `agents.list[].skillsLimits`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SkillsLimitsConfig {
    /// Directories examined per skill root (default 300).
    pub max_candidates_per_root: Option<u64>,
    /// Skills loaded per source (default 200).
    pub max_skills_loaded_per_source: Option<u64>,
    /// Skills listed in the prompt (default 150).
    pub max_skills_in_prompt: Option<u64>,
    /// Characters of the prompt's skills list (default 18000).
    pub max_skills_prompt_chars: Option<u64>,
    /// Largest SKILL.md read, in bytes (default 256000).
    pub max_skill_file_bytes: Option<u64>,
}

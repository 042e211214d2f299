//! One hash for a whole discovery (lesson L6): SHA-256 over the listed skills (name, location,
//! SKILL.md bytes, in name order) and the skills-related inputs that decide what is listed.
//! It survives restarts (no clock, no randomness, no map iteration order) and changes when a
//! skill file, `extraDirs`, an entry switch or the allowlist changes.

use openclaw_config::raw::{SecretInput, SkillsConfig};
use openclaw_config::resolve::{SkillAllowlist, SkillsLimits};
use sha2::{Digest, Sha256};

use crate::discover::DiscoverInput;
use crate::skill::DiscoveredSkill;

/// Bumped whenever the encoding below changes.
const DOMAIN: &[u8] = b"openclaw-skills/fingerprint/v1";

/// Length-prefixed, tagged fields, so no two different inputs share an encoding.
struct Encoder(Sha256);

impl Encoder {
    fn field(&mut self, tag: &str, bytes: &[u8]) {
        for part in [tag.as_bytes(), bytes] {
            self.0.update((part.len() as u64).to_le_bytes());
            self.0.update(part);
        }
    }

    fn path(&mut self, tag: &str, path: &std::path::Path) {
        self.field(tag, path.as_os_str().as_encoded_bytes());
    }

    fn number(&mut self, tag: &str, value: u64) {
        self.field(tag, &value.to_le_bytes());
    }
}

/// Computes the fingerprint, lowercase hex.
pub(crate) fn fingerprint(skills: &[DiscoveredSkill], input: &DiscoverInput<'_>) -> String {
    let mut e = Encoder(Sha256::new());
    e.field("domain", DOMAIN);
    for skill in skills {
        e.field("skill.name", skill.name.as_bytes());
        e.path("skill.location", &skill.location);
        e.field("skill.content", &skill.content);
    }
    e.path("workspace", input.workspace);
    e.path("home", &input.dirs.home_dir);
    e.path("state", &input.dirs.state_dir);
    if let Some(bundled) = input.bundled_dir {
        e.path("bundled", bundled);
    }
    let mut plugin_roots: Vec<_> = input.plugin_roots.iter().collect();
    plugin_roots.sort();
    for root in plugin_roots {
        e.field("plugin_root.plugin", root.plugin.as_bytes());
        e.path("plugin_root.dir", &root.dir);
    }
    let mut enabled: Vec<&String> = input.enabled_plugins.iter().collect();
    enabled.sort();
    enabled.dedup();
    for plugin in enabled {
        e.field("enabled_plugin", plugin.as_bytes());
    }
    skills_config(&mut e, input.skills);
    limits(&mut e, input.limits);
    match input.allowlist {
        SkillAllowlist::All => e.field("allowlist", b"all"),
        SkillAllowlist::Only(names) => {
            e.field("allowlist", b"only");
            let mut names: Vec<&String> = names.iter().collect();
            names.sort();
            names.dedup();
            for name in names {
                e.field("allowlist.name", name.as_bytes());
            }
        }
    }
    hex::encode(e.0.finalize())
}

/// The parts of `skills.*` that affect discovery. Secrets are reduced to "present": only
/// presence gates a skill, and a fingerprint may be logged.
fn skills_config(e: &mut Encoder, skills: &SkillsConfig) {
    if let Some(load) = &skills.load {
        for dir in load.extra_dirs.iter().flatten() {
            e.field("extra_dir", dir.as_bytes());
        }
        for target in load.allow_symlink_targets.iter().flatten() {
            e.field("allow_symlink_target", target.as_bytes());
        }
    }
    if let Some(allowed) = &skills.allow_bundled {
        e.field("allow_bundled", b"some");
        for name in allowed {
            e.field("allow_bundled.name", name.as_bytes());
        }
    }
    // BTreeMap: iteration is in key order.
    for (key, entry) in skills.entries.iter().flatten() {
        e.field("entry", key.as_bytes());
        let enabled: &[u8] = match entry.enabled {
            None => b"unset",
            Some(true) => b"true",
            Some(false) => b"false",
        };
        e.field("entry.enabled", enabled);
        let api_key = match &entry.api_key {
            Some(SecretInput::Plain(s)) => !s.is_empty(),
            Some(SecretInput::Ref(_)) => true,
            None => false,
        };
        e.field("entry.api_key", if api_key { b"set" } else { b"unset" });
        for (var, value) in entry.env.iter().flatten() {
            if !value.is_empty() {
                e.field("entry.env", var.as_bytes());
            }
        }
    }
}

fn limits(e: &mut Encoder, limits: &SkillsLimits) {
    e.number("max_candidates_per_root", limits.max_candidates_per_root);
    e.number(
        "max_skills_loaded_per_source",
        limits.max_skills_loaded_per_source,
    );
    e.number("max_skills_in_prompt", limits.max_skills_in_prompt);
    e.number("max_skills_prompt_chars", limits.max_skills_prompt_chars);
    e.number("max_skill_file_bytes", limits.max_skill_file_bytes);
}

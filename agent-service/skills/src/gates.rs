//! Whether a discovered skill is offered: config switches, then the frontmatter gates.
//!
//! Order (OpenClaw's `shouldIncludeSkill` and `evaluateRuntimeEligibility`):
//! 1. `skills.entries.<key>.enabled: false` (key = `skillKey`, else the name);
//! 2. `skills.allowBundled`, for bundled skills only;
//! 3. `os` (even `always` skills do not run on a platform they do not support);
//! 4. `always: true` passes everything below;
//! 5. `requires.bins`, `requires.anyBins`, `requires.env`, `requires.config`.
//!
//! The agent's allowlist is applied after all of these, by the caller.

use std::fmt;

use openclaw_config::raw::{SecretInput, SkillEntry, SkillsConfig};
use serde_json::Value;

use crate::host::{Host, Platform};
use crate::metadata::Metadata;
use crate::report::SkipReason;
use crate::roots::RootKind;

/// The gate a skill failed, with everything that was missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateFailure {
    /// The skill lists platforms and this is not one of them.
    Os {
        /// The platforms it supports.
        supported: Vec<String>,
        /// The platform it would run on.
        platform: Platform,
    },
    /// Required programs not on PATH.
    Bins {
        /// The missing ones.
        missing: Vec<String>,
    },
    /// None of the alternative programs is on PATH.
    AnyBins {
        /// The alternatives.
        wanted: Vec<String>,
    },
    /// Required environment variables that are unset and not supplied by config.
    Env {
        /// The missing ones.
        missing: Vec<String>,
    },
    /// Required config paths that are not truthy.
    Config {
        /// The falsy or absent paths.
        missing: Vec<String>,
    },
}

impl fmt::Display for GateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Os {
                supported,
                platform,
            } => write!(f, "runs on {} only, not {platform}", supported.join(", ")),
            Self::Bins { missing } => write!(f, "missing programs: {}", missing.join(", ")),
            Self::AnyBins { wanted } => {
                write!(f, "needs one of these programs: {}", wanted.join(", "))
            }
            Self::Env { missing } => {
                write!(f, "missing environment variables: {}", missing.join(", "))
            }
            Self::Config { missing } => {
                write!(f, "config not enabled: {}", missing.join(", "))
            }
        }
    }
}

/// Everything the gates read besides the skill itself.
pub(crate) struct GateInputs<'a> {
    pub skills: &'a SkillsConfig,
    pub host: &'a dyn Host,
    pub config: Option<&'a Value>,
}

/// The config entry key of a skill: its `skillKey`, else its name.
pub(crate) fn skill_key<'a>(name: &'a str, metadata: &'a Metadata) -> &'a str {
    metadata.skill_key.as_deref().unwrap_or(name)
}

/// Runs the gates in order; the first that fails is the reason.
pub(crate) fn check(
    name: &str,
    kind: RootKind,
    metadata: &Metadata,
    inputs: &GateInputs<'_>,
) -> Result<(), SkipReason> {
    let key = skill_key(name, metadata);
    let entries = inputs.skills.entries.as_ref();
    // The skillKey entry is the documented one; the name's entry is honoured when no
    // skillKey entry exists, so `entries.<name>.enabled: false` always works.
    let entry = entries.and_then(|e| e.get(key).or_else(|| e.get(name)));
    if entry.is_some_and(|e| e.enabled == Some(false)) {
        return Err(SkipReason::Disabled {
            key: key.to_owned(),
        });
    }
    if kind == RootKind::Bundled
        && let Some(allowed) = inputs.skills.allow_bundled.as_ref()
        // OpenClaw treats an empty list like no list.
        && !allowed.is_empty()
        && !allowed.iter().any(|a| a.trim() == key || a.trim() == name)
    {
        return Err(SkipReason::BundledNotAllowed);
    }
    requirements(metadata, entry, inputs).map_err(SkipReason::Gate)
}

fn requirements(
    metadata: &Metadata,
    entry: Option<&SkillEntry>,
    inputs: &GateInputs<'_>,
) -> Result<(), GateFailure> {
    let platform = inputs.host.platform();
    if !metadata.os.is_empty()
        && !metadata
            .os
            .iter()
            .any(|os| os.eq_ignore_ascii_case(platform.as_str()))
    {
        return Err(GateFailure::Os {
            supported: metadata.os.clone(),
            platform,
        });
    }
    if metadata.always {
        return Ok(());
    }
    let requires = &metadata.requires;
    let missing = absent(&requires.bins, |bin| inputs.host.has_bin(bin));
    if !missing.is_empty() {
        return Err(GateFailure::Bins { missing });
    }
    if !requires.any_bins.is_empty() && !requires.any_bins.iter().any(|b| inputs.host.has_bin(b)) {
        return Err(GateFailure::AnyBins {
            wanted: requires.any_bins.clone(),
        });
    }
    let missing = absent(&requires.env, |var| {
        inputs.host.env_is_set(var) || supplied_by_config(var, metadata, entry)
    });
    if !missing.is_empty() {
        return Err(GateFailure::Env { missing });
    }
    let missing = absent(&requires.config, |path| {
        config_path_truthy(inputs.config, path)
    });
    if !missing.is_empty() {
        return Err(GateFailure::Config { missing });
    }
    Ok(())
}

fn absent(names: &[String], present: impl Fn(&str) -> bool) -> Vec<String> {
    names.iter().filter(|n| !present(n)).cloned().collect()
}

/// `skills.entries.<key>.env.<VAR>` (non-empty), or `apiKey` when `VAR` is the skill's
/// `primaryEnv`.
fn supplied_by_config(var: &str, metadata: &Metadata, entry: Option<&SkillEntry>) -> bool {
    let Some(entry) = entry else {
        return false;
    };
    let from_env = entry
        .env
        .as_ref()
        .and_then(|env| env.get(var))
        .is_some_and(|v| !v.is_empty());
    let from_api_key = metadata.primary_env.as_deref() == Some(var)
        && match &entry.api_key {
            Some(SecretInput::Plain(secret)) => !secret.is_empty(),
            Some(SecretInput::Ref(_)) => true,
            None => false,
        };
    from_env || from_api_key
}

/// Config paths OpenClaw treats as on when the config does not mention them.
const DEFAULT_ON: [&str; 2] = ["browser.enabled", "browser.evaluateEnabled"];

/// Whether a dotted path in the loaded config JSON is truthy (OpenClaw's rules: absent and
/// null are false; numbers are true unless zero; strings unless blank; arrays and objects
/// always). Numeric segments index arrays.
pub fn config_path_truthy(config: Option<&Value>, path: &str) -> bool {
    let mut current = config;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        current = match current {
            Some(Value::Object(map)) => map.get(part),
            Some(Value::Array(items)) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
    }
    match current {
        None => DEFAULT_ON.contains(&path),
        Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.trim().is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_truthiness_follows_openclaw() {
        let config =
            json!({"a": {"on": true, "off": false, "zero": 0, "blank": " ", "list": [0, 1]}});
        let truthy = |p| config_path_truthy(Some(&config), p);
        assert!(truthy("a.on"));
        assert!(!truthy("a.off"));
        assert!(!truthy("a.zero"));
        assert!(!truthy("a.blank"));
        assert!(truthy("a.list"));
        assert!(truthy("a.list.1"));
        assert!(!truthy("a.list.0"));
        assert!(!truthy("a.missing"));
        assert!(truthy("browser.enabled"));
        assert!(!config_path_truthy(None, "a.on"));
        assert!(config_path_truthy(None, "browser.evaluateEnabled"));
        let off = json!({"browser": {"enabled": false}});
        assert!(!config_path_truthy(Some(&off), "browser.enabled"));
    }
}

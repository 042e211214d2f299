//! The `metadata.openclaw` block of a SKILL.md: gates and display hints.

use serde_json::Value;

/// OpenClaw's block in a skill's `metadata`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Metadata {
    /// `always: true` skips the requirement gates (never the OS gate).
    pub always: bool,
    /// Display emoji.
    pub emoji: Option<String>,
    /// Link for more about the skill.
    pub homepage: Option<String>,
    /// Platforms the skill runs on (`darwin`, `linux`, `win32`); empty means all.
    pub os: Vec<String>,
    /// What must be present for the skill to be offered.
    pub requires: Requires,
    /// The env var that `skills.entries.<key>.apiKey` supplies.
    pub primary_env: Option<String>,
    /// The key of the skill's `skills.entries` config, when it is not the skill's name.
    pub skill_key: Option<String>,
}

/// `metadata.openclaw.requires`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Requires {
    /// Every one of these must be on PATH.
    pub bins: Vec<String>,
    /// At least one of these must be on PATH.
    pub any_bins: Vec<String>,
    /// Each must be set in the environment or supplied by the skill's config entry.
    pub env: Vec<String>,
    /// Config paths (dotted) that must be truthy.
    pub config: Vec<String>,
}

/// Reads the block, tolerating wrong shapes field by field with a warning each.
pub(crate) fn from_json(block: &Value, warnings: &mut Vec<String>) -> Metadata {
    let mut read = Fields {
        block,
        prefix: "metadata.openclaw",
        warnings,
    };
    let always = read.bool("always");
    let emoji = read.text("emoji");
    let homepage = read.text("homepage");
    let os = read.list("os");
    let primary_env = read.text("primaryEnv");
    let skill_key = read.text("skillKey");
    let requires = match block.get("requires") {
        None | Some(Value::Null) => Requires::default(),
        Some(requires @ Value::Object(_)) => {
            let mut read = Fields {
                block: requires,
                prefix: "metadata.openclaw.requires",
                warnings: &mut *read.warnings,
            };
            Requires {
                bins: read.list("bins"),
                any_bins: read.list("anyBins"),
                env: read.list("env"),
                config: read.list("config"),
            }
        }
        Some(_) => {
            read.warnings
                .push("metadata.openclaw.requires is not an object; ignored".to_owned());
            Requires::default()
        }
    };
    Metadata {
        always,
        emoji,
        homepage,
        os,
        requires,
        primary_env,
        skill_key,
    }
}

struct Fields<'a, 'w> {
    block: &'a Value,
    prefix: &'static str,
    warnings: &'w mut Vec<String>,
}

impl Fields<'_, '_> {
    fn warn(&mut self, key: &str, what: &str) {
        self.warnings
            .push(format!("{}.{key} is not {what}; ignored", self.prefix));
    }

    fn bool(&mut self, key: &str) -> bool {
        match self.block.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                self.warn(key, "a boolean");
                false
            }
        }
    }

    fn text(&mut self, key: &str) -> Option<String> {
        match self.block.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
            Some(_) => {
                self.warn(key, "text");
                None
            }
        }
    }

    /// A list of strings, or one comma-separated string (OpenClaw accepts both). Entries that
    /// are not strings are dropped with a warning.
    fn list(&mut self, key: &str) -> Vec<String> {
        let items: Vec<&Value> = match self.block.get(key) {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::String(s)) => {
                return s
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
            }
            Some(Value::Array(items)) => items.iter().collect(),
            Some(_) => {
                self.warn(key, "a list");
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for item in items {
            match item {
                Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
                _ => self.warnings.push(format!(
                    "{}.{key} has an entry that is not text ({item}); ignored",
                    self.prefix
                )),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_field() {
        let mut warnings = Vec::new();
        let block = json!({
            "always": true, "emoji": "🔧", "homepage": "https://x", "os": ["darwin", "linux"],
            "primaryEnv": "API_KEY", "skillKey": "tool",
            "requires": {"bins": ["jq"], "anyBins": "a, b", "env": ["API_KEY"], "config": ["browser.enabled"]}
        });
        let meta = from_json(&block, &mut warnings);
        assert_eq!(
            meta,
            Metadata {
                always: true,
                emoji: Some("🔧".into()),
                homepage: Some("https://x".into()),
                os: vec!["darwin".into(), "linux".into()],
                requires: Requires {
                    bins: vec!["jq".into()],
                    any_bins: vec!["a".into(), "b".into()],
                    env: vec!["API_KEY".into()],
                    config: vec!["browser.enabled".into()],
                },
                primary_env: Some("API_KEY".into()),
                skill_key: Some("tool".into()),
            }
        );
        assert!(warnings.is_empty());
    }

    #[test]
    fn wrong_shapes_warn() {
        let mut warnings = Vec::new();
        let block =
            json!({"always": "yes", "requires": {"bins": [1, "jq"], "config": [{"path": "x"}]}});
        let meta = from_json(&block, &mut warnings);
        assert!(!meta.always);
        assert_eq!(meta.requires.bins, ["jq"]);
        assert!(meta.requires.config.is_empty());
        assert_eq!(
            warnings,
            [
                "metadata.openclaw.always is not a boolean; ignored",
                "metadata.openclaw.requires.bins has an entry that is not text (1); ignored",
                r#"metadata.openclaw.requires.config has an entry that is not text ({"path":"x"}); ignored"#,
            ]
        );
    }
}

//! Prompt-cache evidence (lesson L1): every model call reports the stable
//! prefix hash, and when it differs from the session's previous call, which
//! stable sections changed.

use std::collections::BTreeMap;

use openclaw_proto::prompt::v1 as pb;

/// The stable part of a rendered prompt, remembered per session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptFingerprint {
    /// SHA-256 of the stable prefix.
    pub stable_sha256: String,
    /// Stable section id -> SHA-256.
    pub sections: BTreeMap<String, String>,
}

impl PromptFingerprint {
    /// The fingerprint of a render.
    pub fn of(response: &pb::RenderSystemPromptResponse) -> Self {
        Self {
            stable_sha256: response.stable_prefix_sha256.clone(),
            sections: response
                .sections
                .iter()
                .filter(|s| s.layer() == pb::Layer::Stable)
                .map(|s| (s.id.clone(), s.sha256.clone()))
                .collect(),
        }
    }

    /// Stable sections added, removed or changed since `previous`, sorted.
    pub fn changed_since(&self, previous: &Self) -> Vec<String> {
        let mut changed: Vec<String> = self
            .sections
            .iter()
            .filter(|(id, sha)| previous.sections.get(*id) != Some(*sha))
            .map(|(id, _)| id.clone())
            .chain(
                previous
                    .sections
                    .keys()
                    .filter(|id| !self.sections.contains_key(*id))
                    .cloned(),
            )
            .collect();
        changed.sort();
        changed.dedup();
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(pairs: &[(&str, &str)]) -> PromptFingerprint {
        PromptFingerprint {
            stable_sha256: String::new(),
            sections: pairs
                .iter()
                .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn names_changed_added_and_removed_sections() {
        let before = fp(&[("tooling", "1"), ("skills", "2"), ("workspace", "3")]);
        let after = fp(&[
            ("tooling", "1"),
            ("skills", "9"),
            ("project_context:AGENTS.md", "4"),
        ]);
        assert_eq!(
            after.changed_since(&before),
            ["project_context:AGENTS.md", "skills", "workspace"]
        );
        assert!(before.changed_since(&before).is_empty());
    }
}

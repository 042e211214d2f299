//! Prompt-cache evidence (lesson L1): every model call reports the stable
//! prefix hash, and when it differs from the session's previous call, which
//! stable sections changed.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, LazyLock, Mutex, PoisonError, Weak},
};

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

    /// This fingerprint as one shared value: sessions whose stable prefix is
    /// the same (most sessions of an agent) hold one copy, not one each. A
    /// released session keeps its fingerprint, so with thousands of idle
    /// sessions the copies would otherwise be a good share of their memory.
    pub fn shared(self) -> Arc<Self> {
        static SHARED: LazyLock<Mutex<Shared>> = LazyLock::new(Mutex::default);
        SHARED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .share(self)
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

/// The fingerprints in use, by stable prefix hash.
#[derive(Debug)]
struct Shared {
    by_prefix: HashMap<String, Weak<PromptFingerprint>>,
    /// The table's size at which entries nobody holds are dropped next.
    prune_at: usize,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            by_prefix: HashMap::new(),
            prune_at: 64,
        }
    }
}

impl Shared {
    fn share(&mut self, fingerprint: PromptFingerprint) -> Arc<PromptFingerprint> {
        if let Some(existing) = self
            .by_prefix
            .get(&fingerprint.stable_sha256)
            .and_then(Weak::upgrade)
            .filter(|existing| **existing == fingerprint)
        {
            return existing;
        }
        let fingerprint = Arc::new(fingerprint);
        self.by_prefix.insert(
            fingerprint.stable_sha256.clone(),
            Arc::downgrade(&fingerprint),
        );
        // Entries nobody holds are dropped at doubling sizes: amortised
        // constant time, and the table stays near the prefixes in use.
        if self.by_prefix.len() >= self.prune_at {
            self.by_prefix.retain(|_, weak| weak.strong_count() > 0);
            self.prune_at = (self.by_prefix.len() * 2).max(64);
        }
        fingerprint
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

    #[test]
    fn equal_fingerprints_are_shared_and_different_ones_are_not() {
        let mut shared = Shared::default();
        let a = shared.share(fp(&[("tooling", "1")]));
        let b = shared.share(fp(&[("tooling", "1")]));
        assert!(Arc::ptr_eq(&a, &b));
        // The same prefix hash (empty here) with other sections is not merged.
        let c = shared.share(fp(&[("tooling", "2")]));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(c.sections["tooling"], "2");
        // Prefixes nobody holds any more are forgotten; those held are kept.
        let held: Vec<_> = (0..10)
            .map(|i| {
                let mut f = fp(&[("tooling", "1")]);
                f.stable_sha256 = format!("held{i}");
                shared.share(f)
            })
            .collect();
        for i in 0..1_000 {
            let mut f = fp(&[("tooling", "1")]);
            f.stable_sha256 = format!("gone{i}");
            drop(shared.share(f));
        }
        assert!(shared.by_prefix.len() < 100, "{}", shared.by_prefix.len());
        let mut f = fp(&[("tooling", "1")]);
        f.stable_sha256 = "held3".to_owned();
        assert!(Arc::ptr_eq(&shared.share(f), &held[3]));
    }
}

//! Merging skills from all roots by name: the first seen (highest-priority root, then scan
//! order) is kept, and every later one with the same name is reported as shadowed.
//!
//! Merging happens before gating, as in OpenClaw: a workspace skill that fails its gates still
//! hides a bundled skill of the same name, so an override never silently falls back.

use std::collections::BTreeMap;

use crate::report::{Collision, SkillOrigin};
use crate::scan::Loaded;

/// Keeps one skill per name, sorted by name. `loaded` must be in priority order.
pub(crate) fn merge(loaded: Vec<Loaded>) -> (Vec<Loaded>, Vec<Collision>) {
    let mut kept: BTreeMap<String, Loaded> = BTreeMap::new();
    let mut collisions = Vec::new();
    for skill in loaded {
        match kept.get(&skill.name) {
            Some(winner) => collisions.push(Collision {
                name: skill.name.clone(),
                kept: origin(winner),
                same_file: winner.real_file == skill.real_file,
                shadowed: origin(&skill),
            }),
            None => {
                kept.insert(skill.name.clone(), skill);
            }
        }
    }
    (kept.into_values().collect(), collisions)
}

fn origin(skill: &Loaded) -> SkillOrigin {
    SkillOrigin {
        location: skill.file.clone(),
        root: skill.root.clone(),
    }
}

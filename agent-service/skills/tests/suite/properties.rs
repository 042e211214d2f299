//! Property tests: no panics on any SKILL.md text, the version matches prompt-render, and
//! discovery is a deterministic function of its inputs.

use std::collections::BTreeSet;

use openclaw_skills::frontmatter;
use openclaw_skills::{sha256_hex, version_tag};
use prompt_render::{SkillVersionSource, skill_version};
use proptest::prelude::*;

use super::fixture::{World, write_skill};

proptest! {
    #[test]
    fn frontmatter_never_panics(text in any::<String>()) {
        let _ = frontmatter::parse(&text);
    }

    #[test]
    fn frontmatter_block_never_panics(
        body in "[a-z:\\-\\[\\]{}'\"&*!|> \\n\\t#,0-9]{0,200}"
    ) {
        let _ = frontmatter::parse(&format!("---\n{body}\n---\n"));
    }

    #[test]
    fn version_matches_prompt_render(
        bytes in proptest::collection::vec(any::<u8>(), 0..512),
        location in "[~/a-zA-Z0-9._ -]{1,60}",
    ) {
        prop_assert_eq!(
            version_tag(location.trim(), &sha256_hex(&bytes)),
            skill_version(location.trim(), &SkillVersionSource::Content(bytes))
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn discovery_is_deterministic_and_sorted(
        skills in proptest::collection::vec(("[a-c]{1,2}", "[a-c]{1,2}", 0usize..3, any::<bool>()), 0..8)
    ) {
        let w = World::new();
        let roots = [w.workspace.join("skills"), w.state.join("skills"), w.bundled.clone()];
        for (dir, name, root, nested) in &skills {
            let mut path = roots[*root].clone();
            if *nested {
                path.push("group");
            }
            path.push(dir);
            write_skill(&path, &format!("---\nname: {name}\ndescription: d\n---\n"));
        }
        let first = w.discover();
        let second = w.discover();
        prop_assert_eq!(&first, &second);
        let names: Vec<&str> = first.skills.iter().map(|s| s.name.as_str()).collect();
        let unique: BTreeSet<&str> = names.iter().copied().collect();
        prop_assert_eq!(names, unique.into_iter().collect::<Vec<_>>());
        // Every SKILL.md written is either listed or reported as shadowed.
        let files: BTreeSet<_> = skills
            .iter()
            .map(|(dir, _, root, nested)| {
                let mut path = roots[*root].clone();
                if *nested {
                    path.push("group");
                }
                path.join(dir).join("SKILL.md")
            })
            .collect();
        let accounted: BTreeSet<_> = first
            .skills
            .iter()
            .map(|s| s.location.clone())
            .chain(first.collisions.iter().map(|c| c.shadowed.location.clone()))
            .collect();
        prop_assert_eq!(files, accounted);
    }
}

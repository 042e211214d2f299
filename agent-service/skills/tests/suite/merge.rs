//! Merging by name happens before gating, and collisions say which file won.

use openclaw_skills::{RootKind, SkipReason};

use super::fixture::{World, gated, names, skill};

#[test]
fn a_gated_out_override_still_hides_the_lower_skill() {
    let w = World::new();
    gated(
        &w.workspace.join("skills/tool"),
        "tool",
        r#"{"requires": {"bins": ["nope"]}}"#,
    );
    skill(&w.bundled.join("tool"), "tool", "bundled");
    let d = w.discover();
    assert!(names(&d).is_empty());
    assert_eq!(d.collisions.len(), 1);
    assert_eq!(d.collisions[0].kept.root.kind, RootKind::Workspace);
    assert_eq!(d.collisions[0].shadowed.root.kind, RootKind::Bundled);
    assert!(matches!(d.skipped[0].reason, SkipReason::Gate(_)));
}

#[test]
fn names_collide_across_different_directory_names() {
    let w = World::new();
    skill(
        &w.workspace.join("skills/personal/notes-v2"),
        "notes",
        "mine",
    );
    skill(&w.state.join("skills/notes"), "notes", "managed");
    let d = w.discover();
    assert_eq!(d.skills[0].description, "mine");
    assert_eq!(
        d.collisions[0].shadowed.location,
        w.state.join("skills/notes/SKILL.md")
    );
}

#[cfg(unix)]
#[test]
fn a_skill_reached_from_two_roots_is_marked_as_the_same_file() {
    let mut w = World::new();
    let personal = w.home.join(".agents/skills/shared");
    skill(&personal, "shared", "d");
    let managed = w.state.join("skills");
    std::fs::create_dir_all(&managed).unwrap();
    std::os::unix::fs::symlink(&personal, managed.join("shared")).unwrap();
    w.config(
        "{ skills: { load: { allowSymlinkTargets: ['~/.agents/skills'] } } }",
        "main",
    );
    let d = w.discover();
    assert_eq!(names(&d), ["shared"]);
    assert_eq!(d.collisions.len(), 1);
    assert!(d.collisions[0].same_file);
    assert_eq!(d.collisions[0].kept.root.kind, RootKind::PersonalAgents);
}

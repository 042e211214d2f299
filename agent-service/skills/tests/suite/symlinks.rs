//! Requirement 2: realpath containment, and `skills.load.allowSymlinkTargets`.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use openclaw_skills::SkipReason;

use super::fixture::{World, names, reasons, skill};

/// A skill named `linked` at `target`, reached through the link `<dir>/linked`.
fn link_skill(target: &Path, dir: &Path) {
    skill(target, "linked", "d");
    fs::create_dir_all(dir).unwrap();
    symlink(target, dir.join("linked")).unwrap();
}

#[test]
fn a_skill_linked_from_outside_its_root_is_skipped_and_reported() {
    let w = World::new();
    let target = w.outside.join("shared/linked");
    let skills = w.workspace.join("skills");
    link_skill(&target, &skills);
    let d = w.discover();
    assert!(d.skills.is_empty());
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].path, skills.join("linked"));
    assert_eq!(
        d.skipped[0].reason,
        SkipReason::SymlinkEscape {
            target: target.clone()
        }
    );
    assert!(
        d.skipped[0]
            .reason
            .to_string()
            .contains("skills.load.allowSymlinkTargets")
    );
}

#[test]
fn allowed_symlink_targets_admit_the_link_and_keep_the_linked_location() {
    let mut w = World::new();
    let target = w.outside.join("shared/linked");
    let skills = w.workspace.join("skills");
    link_skill(&target, &skills);
    w.load_dirs("allowSymlinkTargets", &[&w.outside.join("shared")]);
    let d = w.discover();
    assert_eq!(names(&d), ["linked"]);
    assert_eq!(d.skills[0].location, skills.join("linked/SKILL.md"));
    assert!(d.skipped.is_empty());
}

#[test]
fn allowed_targets_accept_home_relative_paths_and_refuse_relative_ones() {
    let mut w = World::new();
    let target = w.home.join("library/linked");
    let managed = w.state.join("skills");
    link_skill(&target, &managed);
    w.config(
        "{ skills: { load: { allowSymlinkTargets: ['~/library', 'lib'] } } }",
        "main",
    );
    let d = w.discover();
    assert_eq!(names(&d), ["linked"]);
    assert_eq!(
        reasons(&d),
        [(
            "lib".into(),
            SkipReason::RelativePath {
                setting: "skills.load.allowSymlinkTargets"
            }
        )]
    );
}

#[test]
fn a_prefix_match_is_by_path_component() {
    let mut w = World::new();
    let target = w.outside.join("shared-evil/linked");
    let skills = w.workspace.join("skills");
    link_skill(&target, &skills);
    w.load_dirs("allowSymlinkTargets", &[&w.outside.join("shared")]);
    let d = w.discover();
    assert!(d.skills.is_empty());
    assert!(matches!(
        d.skipped[0].reason,
        SkipReason::SymlinkEscape { .. }
    ));
}

#[test]
fn a_skill_file_linked_from_outside_is_skipped() {
    let w = World::new();
    let secret = w.outside.join("secret.md");
    fs::write(&secret, "---\nname: s\ndescription: d\n---\n").unwrap();
    let dir = w.workspace.join("skills/sneaky");
    fs::create_dir_all(&dir).unwrap();
    symlink(&secret, dir.join("SKILL.md")).unwrap();
    let d = w.discover();
    assert!(d.skills.is_empty());
    assert_eq!(d.skipped[0].path, dir.join("SKILL.md"));
    assert_eq!(
        d.skipped[0].reason,
        SkipReason::SymlinkEscape { target: secret }
    );
}

#[test]
fn links_inside_the_root_are_followed_once() {
    let w = World::new();
    let skills = w.workspace.join("skills");
    skill(&skills.join("group/real"), "real", "d");
    symlink(skills.join("group/real"), skills.join("alias")).unwrap();
    // A loop back to the root is examined once, not forever.
    symlink(&skills, skills.join("group/loop")).unwrap();
    let d = w.discover();
    assert_eq!(names(&d), ["real"]);
    assert_eq!(d.skills[0].location, skills.join("alias/SKILL.md"));
    assert_eq!(
        reasons(&d),
        [
            (
                "loop".to_owned(),
                SkipReason::AlreadyScanned {
                    target: skills.clone()
                }
            ),
            (
                "real".to_owned(),
                SkipReason::AlreadyScanned {
                    target: skills.join("group/real")
                }
            ),
        ]
    );
}

#[test]
fn a_broken_link_is_reported() {
    let w = World::new();
    let skills = w.workspace.join("skills");
    fs::create_dir_all(&skills).unwrap();
    symlink(w.outside.join("gone"), skills.join("dangling")).unwrap();
    let d = w.discover();
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].path, skills.join("dangling"));
    assert!(matches!(d.skipped[0].reason, SkipReason::Unreadable { .. }));
}

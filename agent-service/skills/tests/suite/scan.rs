//! Requirement 2: discovery inside a root — grouping folders, flat names, depth limits.

use std::fs;

use openclaw_skills::SkipReason;

use super::fixture::{World, names, reasons, skill, write_skill};

#[test]
fn grouping_folders_are_organisation_and_the_frontmatter_name_is_the_name() {
    let w = World::new();
    let file = skill(
        &w.workspace.join("skills/personal/foo"),
        "flat-name",
        "nested skill",
    );
    let d = w.discover();
    assert_eq!(names(&d), ["flat-name"]);
    assert_eq!(d.skills[0].location, file);
    assert_eq!(
        d.skills[0].display_location,
        "~/ws/skills/personal/foo/SKILL.md"
    );
}

#[test]
fn the_directory_name_is_the_fallback_name() {
    let w = World::new();
    write_skill(
        &w.workspace.join("skills/group/dir-name"),
        "---\ndescription: no name here\n---\n",
    );
    assert_eq!(names(&w.discover()), ["dir-name"]);
}

#[test]
fn a_skill_directory_is_not_searched_for_more_skills() {
    let w = World::new();
    skill(&w.workspace.join("skills/outer"), "outer", "d");
    skill(
        &w.workspace.join("skills/outer/references/inner"),
        "inner",
        "d",
    );
    let d = w.discover();
    assert_eq!(names(&d), ["outer"]);
    assert!(d.skipped.is_empty());
}

#[test]
fn hidden_directories_node_modules_and_files_are_not_candidates() {
    let w = World::new();
    let skills = w.workspace.join("skills");
    skill(&skills.join(".hidden"), "hidden", "d");
    skill(&skills.join("node_modules/pkg"), "pkg", "d");
    skill(&skills.join("visible"), "visible", "d");
    fs::write(skills.join("README.md"), "not a skill").unwrap();
    let d = w.discover();
    assert_eq!(names(&d), ["visible"]);
    assert!(d.skipped.is_empty());
}

#[test]
fn default_roots_nest_six_levels_and_report_what_lies_deeper() {
    let w = World::new();
    let skills = w.workspace.join("skills");
    skill(&skills.join("1/2/3/4/5/six"), "six", "d");
    skill(&skills.join("a/b/c/d/e/f/seven"), "seven", "d");
    let d = w.discover();
    assert_eq!(names(&d), ["six"]);
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].path, skills.join("a/b/c/d/e/f"));
    assert_eq!(d.skipped[0].reason, SkipReason::DepthLimit { max_depth: 6 });
}

#[test]
fn configured_extra_roots_nest_two_levels() {
    let mut w = World::new();
    let extra = w.outside.join("extra");
    skill(&extra.join("group/two"), "two", "d");
    skill(&extra.join("group/deeper/three"), "three", "d");
    w.load_dirs("extraDirs", &[&extra]);
    let d = w.discover();
    assert_eq!(names(&d), ["two"]);
    assert_eq!(
        reasons(&d),
        [("deeper".to_owned(), SkipReason::DepthLimit { max_depth: 2 })]
    );
}

#[test]
fn children_are_examined_in_name_order() {
    let w = World::new();
    let skills = w.workspace.join("skills");
    // Same frontmatter name in two directories of one root: the first by name wins.
    skill(&skills.join("b-dir"), "same", "from b");
    skill(&skills.join("a-dir"), "same", "from a");
    let d = w.discover();
    assert_eq!(d.skills[0].description, "from a");
    assert_eq!(d.collisions.len(), 1);
    assert_eq!(
        d.collisions[0].shadowed.location,
        skills.join("b-dir/SKILL.md")
    );
}

#[test]
fn a_root_that_is_a_file_is_reported() {
    let mut w = World::new();
    let file = w.outside.join("not-a-dir");
    fs::write(&file, "x").unwrap();
    w.load_dirs("extraDirs", &[&file]);
    let d = w.discover();
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].path, file);
    assert_eq!(d.skipped[0].reason, SkipReason::NotAFileOrDirectory);
}

#[cfg(unix)]
#[test]
fn an_unreadable_root_is_reported_not_fatal() {
    let w = World::new();
    // A symlink loop fails to resolve even for root, unlike permission bits.
    let managed = w.state.join("skills");
    fs::create_dir_all(&w.state).unwrap();
    std::os::unix::fs::symlink(&managed, &managed).unwrap();
    skill(&w.workspace.join("skills/y"), "y", "d");
    let d = w.discover();
    assert_eq!(names(&d), ["y"]);
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].path, managed);
    assert!(
        matches!(&d.skipped[0].reason, SkipReason::Unreadable { error } if !error.is_empty()),
        "{:?}",
        d.skipped[0].reason
    );
}

/// A skill folder whose SKILL.md is a FIFO (an agent can make one in its workspace): discovery
/// skips it at once instead of waiting forever for a writer.
#[cfg(unix)]
#[test]
fn a_fifo_named_skill_md_is_skipped_without_waiting() {
    let w = World::new();
    skill(&w.workspace.join("skills/good"), "good", "a real skill");
    let dir = w.workspace.join("skills/pipe");
    fs::create_dir_all(&dir).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("SKILL.md"))
        .status()
        .unwrap();
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let d = w.discover();
        let found: Vec<String> = names(&d).into_iter().map(str::to_owned).collect();
        let _ = tx.send((found, reasons(&d)));
    });
    let (found, skipped) = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("discovery waited on the FIFO"));
    assert_eq!(found, ["good"]);
    let skipped: Vec<_> = skipped.into_iter().map(|(_, reason)| reason).collect();
    assert_eq!(skipped, [SkipReason::NotAFileOrDirectory]);
}

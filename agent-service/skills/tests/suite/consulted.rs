//! A kept discovery stands only while a new one would read the same: every change a
//! discovery could see makes `Consulted::still_holds` false, and recent files are not
//! settled.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::time::{Duration, SystemTime};

use openclaw_skills::{Consulted, Discovery, ProcessHost};

use super::fixture::{World, gated, names, skill};

/// A world with a personal skill in a grouping folder and a workspace skill.
fn world() -> World {
    let w = World::new();
    skill(&w.workspace.join("skills/notes"), "notes", "Keep notes.");
    skill(
        &w.home.join(".agents/skills/group/todo"),
        "todo",
        "Track todos.",
    );
    w
}

fn discovered(w: &World) -> (Discovery, Consulted) {
    w.discover_consulted(&w.host)
}

/// Runs `change` after a discovery and checks the discovery no longer holds, and that a
/// new discovery holds again.
fn assert_seen(w: &World, what: &str, change: impl FnOnce()) {
    let (before, consulted) = discovered(w);
    assert!(consulted.still_holds(), "{what}: holds before the change");
    change();
    assert!(!consulted.still_holds(), "{what}: not seen");
    let (after, again) = discovered(w);
    assert!(again.still_holds(), "{what}: the new discovery holds");
    assert_ne!(before, after, "{what}: the change is one discovery sees");
}

#[test]
fn nothing_changed_holds_and_discovers_the_same() {
    let w = world();
    let (first, consulted) = discovered(&w);
    assert_eq!(names(&first), ["notes", "todo"]);
    // Every root (present or absent), every directory, every SKILL.md.
    assert!(consulted.len() >= 8, "{consulted:?}");
    assert!(consulted.still_holds());
    assert_eq!(discovered(&w).0, first);
}

#[test]
fn a_new_skill_a_removed_one_and_a_created_root_are_seen() {
    let w = world();
    assert_seen(&w, "a new skill in a grouping folder", || {
        skill(&w.home.join(".agents/skills/group/mail"), "mail", "Mail.");
    });
    assert_seen(&w, "a skill removed", || {
        fs::remove_dir_all(w.workspace.join("skills/notes")).unwrap();
    });
    assert_seen(&w, "a root that was absent", || {
        skill(&w.state.join("skills/state-skill"), "state-skill", "S.");
    });
    assert_seen(&w, "a root-level SKILL.md", || {
        skill(&w.workspace.join(".agents/skills"), "whole-root", "W.");
    });
}

#[test]
fn a_skill_file_rewritten_at_the_same_size_or_replaced_is_seen() {
    let w = world();
    let file = w.workspace.join("skills/notes/SKILL.md");
    assert_seen(&w, "same size, other text", || {
        let text = fs::read_to_string(&file).unwrap();
        fs::write(&file, text.replace("Keep notes.", "Keep NOTES.")).unwrap();
    });
    assert_seen(&w, "renamed over", || {
        let spare = w.workspace.join("skills/notes/next.md");
        fs::write(&spare, "---\nname: notes\ndescription: Other.\n---\n").unwrap();
        fs::rename(&spare, &file).unwrap();
    });
}

#[test]
fn a_link_led_elsewhere_is_seen() {
    let mut w = world();
    let first = w.outside.join("shared/one");
    let second = w.outside.join("shared/two");
    skill(&first, "linked", "First.");
    skill(&second, "linked", "Second.");
    let outside = w.outside.clone();
    w.load_dirs("allowSymlinkTargets", &[&outside]);
    let link = w.workspace.join("skills/linked");
    symlink(&first, &link).unwrap();
    assert_seen(&w, "a skill link pointed at another skill", || {
        let staged = w.workspace.join("skills/.staged");
        symlink(&second, &staged).unwrap();
        fs::rename(&staged, &link).unwrap();
    });
    // A link on the way to a root (the root itself here).
    let elsewhere = w.outside.join("other-root");
    skill(&elsewhere.join("far"), "far", "F.");
    let linked_root = w.home.join(".agents/skills");
    fs::remove_dir_all(&linked_root).unwrap();
    let near = w.outside.join("near-root");
    skill(&near.join("near"), "near", "N.");
    symlink(&near, &linked_root).unwrap();
    w.load_dirs("allowSymlinkTargets", &[&outside]);
    assert_seen(&w, "a root's link pointed at another directory", || {
        let staged = w.home.join(".agents/.staged");
        symlink(&elsewhere, &staged).unwrap();
        fs::rename(&staged, &linked_root).unwrap();
    });
}

#[test]
fn a_program_a_gate_looks_for_appearing_or_losing_its_execute_bit_is_seen() {
    let w = world();
    gated(
        &w.workspace.join("skills/gh"),
        "gh-helper",
        r#"{"requires": {"bins": ["gh"]}}"#,
    );
    let bin = w.outside.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let host = ProcessHost::with_path(bin.as_os_str());
    let (without, consulted) = w.discover_consulted(&host);
    assert!(!names(&without).contains(&"gh-helper"));
    let program = bin.join("gh");
    fs::write(&program, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!consulted.still_holds(), "the program appeared");
    let (with, consulted) = w.discover_consulted(&host);
    assert!(names(&with).contains(&"gh-helper"));
    assert!(consulted.still_holds());
    fs::set_permissions(&program, fs::Permissions::from_mode(0o644)).unwrap();
    assert!(
        !consulted.still_holds(),
        "the program is no longer executable"
    );
}

#[test]
fn a_discovery_of_files_just_written_is_not_settled() {
    let w = world();
    let began = SystemTime::now();
    let (_, consulted) = discovered(&w);
    assert!(!consulted.settled_before(began), "files written just now");
    // The same stamps judged from a moment past the margin.
    let later = began + openclaw_skills::RACY_MARGIN + Duration::from_millis(100);
    assert!(consulted.settled_before(later));
    // Nothing on disk at all: nothing to be racy about.
    let empty = World::new();
    let (_, consulted) = discovered(&empty);
    assert!(consulted.settled_before(SystemTime::now()), "{consulted:?}");
}

//! Requirement 2: `skills.limits` cut-offs are reported with their reason.

use std::fs;

use openclaw_skills::SkipReason;

use super::fixture::{World, names, reasons, skill, write_skill};

#[test]
fn candidates_over_the_per_root_limit_are_reported() {
    let mut w = World::new();
    w.config(
        "{ skills: { limits: { maxCandidatesPerRoot: 3 } } }",
        "main",
    );
    let skills = w.workspace.join("skills");
    for name in ["a", "b", "c", "d", "e"] {
        skill(&skills.join(name), name, "d");
    }
    skill(&w.state.join("skills/m"), "m", "d");
    let d = w.discover();
    // The limit is per root: the managed root still loads.
    assert_eq!(names(&d), ["a", "b", "c", "m"]);
    assert_eq!(
        reasons(&d),
        [
            ("d".to_owned(), SkipReason::CandidateLimit { limit: 3 }),
            ("e".to_owned(), SkipReason::CandidateLimit { limit: 3 }),
        ]
    );
}

#[test]
fn grouping_folders_count_as_candidates() {
    let mut w = World::new();
    w.config(
        "{ skills: { limits: { maxCandidatesPerRoot: 2 } } }",
        "main",
    );
    let skills = w.workspace.join("skills");
    skill(&skills.join("group/a"), "a", "d");
    skill(&skills.join("group/b"), "b", "d");
    skill(&skills.join("z"), "z", "d");
    let d = w.discover();
    assert_eq!(names(&d), ["a"]);
    assert_eq!(
        reasons(&d),
        [
            ("b".to_owned(), SkipReason::CandidateLimit { limit: 2 }),
            ("z".to_owned(), SkipReason::CandidateLimit { limit: 2 }),
        ]
    );
}

#[test]
fn skills_over_the_per_source_limit_are_reported() {
    let mut w = World::new();
    w.config(
        "{ skills: { limits: { maxSkillsLoadedPerSource: 2 } } }",
        "main",
    );
    for name in ["a", "b", "c"] {
        skill(&w.bundled.join(name), name, "d");
    }
    let d = w.discover();
    assert_eq!(names(&d), ["a", "b"]);
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].path, w.bundled.join("c/SKILL.md"));
    assert_eq!(d.skipped[0].reason, SkipReason::SkillLimit { limit: 2 });
}

#[test]
fn broken_skills_do_not_use_up_the_per_source_limit() {
    let mut w = World::new();
    w.config(
        "{ skills: { limits: { maxSkillsLoadedPerSource: 1 } } }",
        "main",
    );
    write_skill(&w.bundled.join("a"), "---\nname: a\n---\n");
    skill(&w.bundled.join("b"), "b", "d");
    assert_eq!(names(&w.discover()), ["b"]);
}

#[test]
fn oversized_skill_files_are_reported_and_not_read() {
    let mut w = World::new();
    w.config("{ skills: { limits: { maxSkillFileBytes: 64 } } }", "main");
    let head = "---\nname: fits\ndescription: d\n---\n";
    let exact = format!("{head}{}", "x".repeat(64 - head.len()));
    assert_eq!(exact.len(), 64);
    write_skill(&w.workspace.join("skills/fits"), &exact);
    let big = write_skill(
        &w.workspace.join("skills/big"),
        &format!("---\nname: big\ndescription: d\n---\n{}", "y".repeat(100)),
    );
    let d = w.discover();
    assert_eq!(names(&d), ["fits"]);
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].path, big);
    assert_eq!(
        d.skipped[0].reason,
        SkipReason::FileTooLarge {
            size: fs::metadata(&big).unwrap().len(),
            limit: 64
        }
    );
}

#[test]
fn per_agent_limits_override_the_defaults() {
    let mut w = World::new();
    w.config(
        "{ skills: { limits: { maxSkillsLoadedPerSource: 1 } },
           agents: { list: [{ id: 'main', skillsLimits: { maxSkillsLoadedPerSource: 5 } }] } }",
        "main",
    );
    for name in ["a", "b", "c"] {
        skill(&w.bundled.join(name), name, "d");
    }
    assert_eq!(names(&w.discover()), ["a", "b", "c"]);
}

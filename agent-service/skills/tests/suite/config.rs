//! Requirement 4: the agent allowlist, resolved by `openclaw-config`, filters last.

use openclaw_config::resolve::SkillAllowlist;
use openclaw_skills::SkipReason;

use super::fixture::{World, gated, names, reasons, skill};

const CONFIG: &str = "{ agents: {
    defaults: { skills: ['a'] },
    list: [
        { id: 'main', default: true },
        { id: 'picky', skills: ['b'] },
        { id: 'none', skills: [] },
    ],
} }";

fn world() -> World {
    let w = World::new();
    for name in ["a", "b", "c"] {
        skill(&w.workspace.join("skills").join(name), name, "d");
    }
    w
}

#[test]
fn defaults_apply_to_agents_without_their_own_list() {
    let mut w = world();
    w.config(CONFIG, "main");
    assert_eq!(w.allowlist, SkillAllowlist::Only(vec!["a".into()]));
    let d = w.discover();
    assert_eq!(names(&d), ["a"]);
    assert_eq!(
        reasons(&d),
        [
            ("b".into(), SkipReason::NotInAgentAllowlist),
            ("c".into(), SkipReason::NotInAgentAllowlist),
        ]
    );
}

#[test]
fn a_per_agent_list_replaces_the_defaults() {
    let mut w = world();
    w.config(CONFIG, "picky");
    assert_eq!(names(&w.discover()), ["b"]);
}

#[test]
fn an_empty_list_means_no_skills() {
    let mut w = world();
    w.config(CONFIG, "none");
    let d = w.discover();
    assert!(d.skills.is_empty());
    assert_eq!(d.skipped.len(), 3);
}

#[test]
fn no_allowlist_means_every_skill() {
    let mut w = world();
    w.config("{}", "main");
    assert_eq!(names(&w.discover()), ["a", "b", "c"]);
}

#[test]
fn the_allowlist_comes_after_the_gates() {
    let mut w = world();
    gated(
        &w.workspace.join("skills/g"),
        "g",
        r#"{"requires": {"bins": ["nope"]}}"#,
    );
    w.config(CONFIG, "none");
    let d = w.discover();
    let g = d
        .skipped
        .iter()
        .find(|s| s.name.as_deref() == Some("g"))
        .unwrap();
    assert!(matches!(g.reason, SkipReason::Gate(_)));
}

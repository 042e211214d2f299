//! Requirement 1: roots in priority order, merged by name, collisions reported.

use std::path::PathBuf;

use openclaw_skills::{Collision, PluginSkillRoot, Root, RootKind, SkillOrigin, SkipReason};

use super::fixture::{World, names, reasons, skill};

fn root(kind: RootKind, dir: PathBuf) -> Root {
    Root {
        kind,
        dir,
        plugin: None,
    }
}

#[test]
fn higher_priority_root_wins_and_every_collision_is_reported() {
    let mut w = World::new();
    let extra = w.outside.join("extra");
    w.load_dirs("extraDirs", &[&extra]);
    let ordered = [
        (RootKind::Workspace, w.workspace.join("skills")),
        (
            RootKind::WorkspaceAgents,
            w.workspace.join(".agents/skills"),
        ),
        (RootKind::PersonalAgents, w.home.join(".agents/skills")),
        (RootKind::Managed, w.state.join("skills")),
        (RootKind::Bundled, w.bundled.clone()),
        (RootKind::Extra, extra),
    ];
    // Written lowest priority first, so discovery order is not file-creation order.
    for (kind, dir) in ordered.iter().rev() {
        skill(&dir.join("shared"), "shared", &format!("from {kind:?}"));
    }
    let d = w.discover();
    assert_eq!(names(&d), ["shared"]);
    assert_eq!(d.skills[0].description, "from Workspace");
    assert_eq!(
        d.skills[0].root,
        root(RootKind::Workspace, ordered[0].1.clone())
    );
    let kept = SkillOrigin {
        location: ordered[0].1.join("shared/SKILL.md"),
        root: root(RootKind::Workspace, ordered[0].1.clone()),
    };
    let expected: Vec<Collision> = ordered[1..]
        .iter()
        .map(|(kind, dir)| Collision {
            name: "shared".into(),
            kept: kept.clone(),
            shadowed: SkillOrigin {
                location: dir.join("shared/SKILL.md"),
                root: root(*kind, dir.clone()),
            },
            same_file: false,
        })
        .collect();
    assert_eq!(d.collisions, expected);
    assert!(d.skipped.is_empty(), "{:?}", d.skipped);
}

#[test]
fn each_root_is_searched_and_tagged_with_its_kind() {
    let mut w = World::new();
    let extra = w.outside.join("extra");
    w.load_dirs("extraDirs", &[&extra]);
    skill(&w.workspace.join("skills/a"), "a", "d");
    skill(&w.workspace.join(".agents/skills/b"), "b", "d");
    skill(&w.home.join(".agents/skills/c"), "c", "d");
    skill(&w.state.join("skills/d"), "d", "d");
    skill(&w.bundled.join("e"), "e", "d");
    skill(&extra.join("f"), "f", "d");
    let d = w.discover();
    let kinds: Vec<(&str, RootKind, &str)> = d
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.root.kind, s.root.kind.source()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("a", RootKind::Workspace, "openclaw-workspace"),
            ("b", RootKind::WorkspaceAgents, "agents-skills-project"),
            ("c", RootKind::PersonalAgents, "agents-skills-personal"),
            ("d", RootKind::Managed, "openclaw-managed"),
            ("e", RootKind::Bundled, "openclaw-bundled"),
            ("f", RootKind::Extra, "openclaw-extra"),
        ]
    );
}

#[test]
fn earlier_extra_dir_wins_over_a_later_one() {
    let mut w = World::new();
    let (first, second) = (w.outside.join("one"), w.outside.join("two"));
    skill(&first.join("x"), "x", "first");
    skill(&second.join("x"), "x", "second");
    w.load_dirs("extraDirs", &[&first, &second]);
    let d = w.discover();
    assert_eq!(d.skills[0].description, "first");
    assert_eq!(d.collisions.len(), 1);
    assert_eq!(d.collisions[0].shadowed.root.dir, second);
}

#[test]
fn extra_dirs_expand_home_and_refuse_relative_paths() {
    let mut w = World::new();
    skill(&w.home.join("mine/x"), "x", "d");
    w.config(
        "{ skills: { load: { extraDirs: ['~/mine', 'relative/dir', '~/absent', '  '] } } }",
        "main",
    );
    let d = w.discover();
    assert_eq!(names(&d), ["x"]);
    assert_eq!(d.skills[0].display_location, "~/mine/x/SKILL.md");
    assert_eq!(
        reasons(&d),
        [
            (
                "dir".into(),
                SkipReason::RelativePath {
                    setting: "skills.load.extraDirs"
                }
            ),
            ("absent".into(), SkipReason::RootMissing),
        ]
    );
}

#[test]
fn missing_default_roots_and_bundled_dir_are_not_problems() {
    let w = World::new();
    let d = w.discover();
    assert!(d.skills.is_empty());
    assert!(d.skipped.is_empty(), "{:?}", d.skipped);
    assert!(d.collisions.is_empty());
}

#[test]
fn a_root_that_is_itself_a_skill_is_one_skill() {
    let mut w = World::new();
    let single = w.outside.join("single-skill");
    skill(&single, "solo", "one skill");
    // A directory inside it is the skill's own material, not another skill.
    skill(&single.join("examples/inner"), "inner", "d");
    w.load_dirs("extraDirs", &[&single]);
    let d = w.discover();
    assert_eq!(names(&d), ["solo"]);
    assert_eq!(d.skills[0].location, single.join("SKILL.md"));
}

#[test]
fn plugin_roots_count_only_while_their_plugin_is_enabled() {
    let mut w = World::new();
    let (voice, browser) = (w.outside.join("voice"), w.outside.join("browser"));
    skill(&voice.join("call"), "call", "d");
    skill(&browser.join("surf"), "surf", "d");
    w.plugin_roots = vec![
        PluginSkillRoot {
            plugin: "voice-call".into(),
            dir: voice.clone(),
        },
        PluginSkillRoot {
            plugin: "browser".into(),
            dir: browser.clone(),
        },
    ];
    w.enabled_plugins = vec!["voice-call".into()];
    let d = w.discover();
    assert_eq!(names(&d), ["call"]);
    assert_eq!(d.skills[0].root.kind, RootKind::Plugin);
    assert_eq!(d.skills[0].root.plugin.as_deref(), Some("voice-call"));
    assert_eq!(d.skipped.len(), 1);
    assert_eq!(d.skipped[0].path, browser);
    assert_eq!(
        d.skipped[0].reason,
        SkipReason::PluginDisabled {
            plugin: "browser".into()
        }
    );

    w.enabled_plugins.push("browser".into());
    assert_eq!(names(&w.discover()), ["call", "surf"]);
}

#[test]
fn plugin_skills_rank_below_extra_dirs() {
    let mut w = World::new();
    let (extra, plugin) = (w.outside.join("extra"), w.outside.join("plugin"));
    skill(&extra.join("x"), "x", "extra");
    skill(&plugin.join("x"), "x", "plugin");
    w.load_dirs("extraDirs", &[&extra]);
    w.plugin_roots = vec![PluginSkillRoot {
        plugin: "p".into(),
        dir: plugin,
    }];
    w.enabled_plugins = vec!["p".into()];
    let d = w.discover();
    assert_eq!(d.skills[0].description, "extra");
    assert_eq!(d.collisions[0].shadowed.root.kind, RootKind::Plugin);
}

#[test]
fn relative_input_paths_are_errors() {
    let mut w = World::new();
    w.workspace = PathBuf::from("ws");
    let error = w.try_discover().unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"workspace must be an absolute path, got "ws""#
    );
    let mut w = World::new();
    w.plugin_roots = vec![PluginSkillRoot {
        plugin: "p".into(),
        dir: "plugin/skills".into(),
    }];
    assert!(matches!(
        w.try_discover(),
        Err(openclaw_skills::Error::RelativePath {
            field: "plugin_roots",
            ..
        })
    ));
}

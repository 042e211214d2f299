//! Requirement 5: the shape of each listed skill, its version tag, and the fingerprint.

use std::fs;

use openclaw_skills::{DiscoveredSkill, Metadata, Root, RootKind, version_tag};
use prompt_render::{SkillVersionSource, skill_version};

use super::fixture::{World, names, skill, write_skill};

const TEXT: &str = "---\nname: weather\ndescription: Forecasts.\nhomepage: https://w\nmetadata: {\"openclaw\": {\"emoji\": \"⛅\", \"skillKey\": \"wx\"}}\n---\n# Weather\n";

#[test]
fn a_listed_skill_carries_everything_the_prompt_and_status_need() {
    let w = World::new();
    let file = write_skill(&w.workspace.join("skills/outdoor/weather"), TEXT);
    let d = w.discover();
    let expected = DiscoveredSkill {
        name: "weather".into(),
        description: "Forecasts.".into(),
        location: file,
        display_location: "~/ws/skills/outdoor/weather/SKILL.md".into(),
        content: TEXT.as_bytes().to_vec(),
        sha256: openclaw_skills::sha256_hex(TEXT.as_bytes()),
        version: version_tag(
            "~/ws/skills/outdoor/weather/SKILL.md",
            &openclaw_skills::sha256_hex(TEXT.as_bytes()),
        ),
        root: Root {
            kind: RootKind::Workspace,
            dir: w.workspace.join("skills"),
            plugin: None,
        },
        skill_key: "wx".into(),
        user_invocable: true,
        model_invocable: true,
        emoji: Some("⛅".into()),
        homepage: Some("https://w".into()),
        metadata: Metadata {
            emoji: Some("⛅".into()),
            skill_key: Some("wx".into()),
            ..Metadata::default()
        },
        warnings: Vec::new(),
    };
    assert_eq!(d.skills, [expected]);
    assert_eq!(d.skills[0].sha256.len(), 64);
}

#[test]
fn the_version_is_what_prompt_render_computes() {
    let w = World::new();
    write_skill(&w.workspace.join("skills/weather"), TEXT);
    skill(&w.workspace.join("skills/other"), "other", "d");
    for s in &w.discover().skills {
        let at = s.display_location.as_str();
        assert_eq!(
            s.version,
            skill_version(at, &SkillVersionSource::Content(s.content.clone()))
        );
        assert_eq!(
            s.version,
            skill_version(at, &SkillVersionSource::Sha256(s.sha256.clone()))
        );
        assert_eq!(s.version, version_tag(at, &s.sha256));
    }
}

/// P-37: the version follows the skill file's path as well as its content.
#[test]
fn moving_a_skill_changes_its_version() {
    let w = World::new();
    write_skill(&w.workspace.join("skills/weather"), TEXT);
    let before = w.discover().skills[0].clone();
    fs::remove_dir_all(w.workspace.join("skills/weather")).expect("remove");
    write_skill(&w.workspace.join("skills/outdoor/weather"), TEXT);
    let after = w.discover().skills[0].clone();
    assert_eq!(before.sha256, after.sha256, "same content");
    assert_ne!(before.version, after.version, "another path");
}

#[test]
fn skills_are_sorted_by_name_not_by_root_or_directory() {
    let w = World::new();
    skill(&w.bundled.join("a-dir"), "zeta", "d");
    skill(&w.workspace.join("skills/z-dir"), "alpha", "d");
    skill(&w.state.join("skills/m"), "Mid", "d");
    assert_eq!(names(&w.discover()), ["Mid", "alpha", "zeta"]);
}

#[test]
fn paths_outside_home_are_displayed_as_they_are() {
    let w = World::new();
    let file = skill(&w.bundled.join("b"), "b", "d");
    let d = w.discover();
    assert_eq!(d.skills[0].display_location, file.to_string_lossy());
}

#[test]
fn fingerprint_is_stable_and_tracks_content_and_config() {
    let mut w = World::new();
    let file = skill(&w.workspace.join("skills/a"), "a", "d");
    let first = w.discover().fingerprint;
    assert_eq!(first.len(), 64);
    assert_eq!(
        w.discover().fingerprint,
        first,
        "same inputs, same fingerprint"
    );

    // Rewriting identical bytes (a new mtime) changes nothing.
    fs::write(&file, fs::read(&file).unwrap()).unwrap();
    assert_eq!(w.discover().fingerprint, first);

    // One byte of SKILL.md.
    let original = fs::read_to_string(&file).unwrap();
    fs::write(&file, format!("{original}!")).unwrap();
    let edited = w.discover().fingerprint;
    assert_ne!(edited, first);
    fs::write(&file, &original).unwrap();
    assert_eq!(w.discover().fingerprint, first);

    // An extra dir that holds nothing still changes the skills config.
    w.config(
        "{ skills: { load: { extraDirs: ['~/nothing-here'] } } }",
        "main",
    );
    let with_extra = w.discover().fingerprint;
    assert_ne!(with_extra, first);

    // The allowlist, and an entry's switch.
    w.config("{ agents: { defaults: { skills: ['a'] } } }", "main");
    let allowlisted = w.discover().fingerprint;
    assert_ne!(allowlisted, first);
    w.config(
        "{ skills: { entries: { other: { enabled: true } } } }",
        "main",
    );
    assert_ne!(w.discover().fingerprint, first);
}

#[test]
fn fingerprint_does_not_depend_on_secret_values() {
    let mut w = World::new();
    skill(&w.workspace.join("skills/a"), "a", "d");
    w.config("{ skills: { entries: { a: { apiKey: 'one' } } } }", "main");
    let one = w.discover().fingerprint;
    w.config("{ skills: { entries: { a: { apiKey: 'two' } } } }", "main");
    assert_eq!(w.discover().fingerprint, one);
}

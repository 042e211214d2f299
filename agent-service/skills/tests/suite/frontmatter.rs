//! Requirement 3: frontmatter fields, metadata forms, and malformed input reported.

use openclaw_skills::{Metadata, Requires, SkipReason};

use super::fixture::{World, names, reasons, write_skill};

#[test]
fn a_skill_without_description_is_dropped_and_reported() {
    let w = World::new();
    let file = write_skill(&w.workspace.join("skills/x"), "---\nname: nodesc\n---\n");
    write_skill(&w.workspace.join("skills/y"), "# no frontmatter at all\n");
    let d = w.discover();
    assert!(d.skills.is_empty());
    assert_eq!(
        reasons(&d),
        [
            ("nodesc".to_owned(), SkipReason::MissingDescription),
            ("y".to_owned(), SkipReason::MissingDescription),
        ]
    );
    assert_eq!(d.skipped[0].path, file);
}

#[test]
fn malformed_frontmatter_is_reported_with_its_line() {
    let w = World::new();
    write_skill(
        &w.workspace.join("skills/bad"),
        "---\nname: bad\ndescription: x\n  broken: [\n---\n",
    );
    write_skill(&w.workspace.join("skills/open"), "---\nname: open\n");
    write_skill(
        &w.workspace.join("skills/alias"),
        "---\nname: &n alias\ndescription: *n\n---\n",
    );
    let d = w.discover();
    assert!(d.skills.is_empty());
    let messages: Vec<String> = d
        .skipped
        .iter()
        .map(|s| match &s.reason {
            SkipReason::MalformedFrontmatter { message } => message.clone(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(messages.len(), 3);
    assert!(messages[0].contains("aliases"), "{}", messages[0]);
    assert!(
        messages[1].starts_with("frontmatter is not valid YAML: ") && messages[1].contains("line "),
        "{}",
        messages[1]
    );
    assert_eq!(
        messages[2],
        "frontmatter opens with --- but is never closed"
    );
}

#[test]
fn a_file_that_is_not_utf8_is_reported() {
    let w = World::new();
    let dir = w.workspace.join("skills/binary");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), b"---\nname: \xff\n---\n").unwrap();
    let d = w.discover();
    assert!(matches!(
        &d.skipped[0].reason,
        SkipReason::MalformedFrontmatter { message } if message.starts_with("SKILL.md is not UTF-8")
    ));
}

#[test]
fn model_invocation_can_be_disabled_without_hiding_the_skill() {
    let w = World::new();
    write_skill(
        &w.workspace.join("skills/manual"),
        "---\nname: manual\ndescription: d\ndisable-model-invocation: true\n---\n",
    );
    write_skill(
        &w.workspace.join("skills/quiet"),
        "---\nname: quiet\ndescription: d\nuser-invocable: false\n---\n",
    );
    let d = w.discover();
    assert_eq!(names(&d), ["manual", "quiet"]);
    let manual = d.get("manual").unwrap();
    assert!(!manual.model_invocable && manual.user_invocable);
    let quiet = d.get("quiet").unwrap();
    assert!(quiet.model_invocable && !quiet.user_invocable);
    let visible: Vec<&str> = d.model_visible().map(|s| s.name.as_str()).collect();
    assert_eq!(visible, ["quiet"]);
}

#[test]
fn metadata_reads_inline_json_yaml_blocks_and_json5_text() {
    let w = World::new();
    let skills = w.workspace.join("skills");
    write_skill(
        &skills.join("inline"),
        "---\nname: inline\ndescription: d\nmetadata: {\"openclaw\": {\"emoji\": \"🔧\", \"requires\": {\"bins\": [\"sh\"]}}}\n---\n",
    );
    write_skill(
        &skills.join("block"),
        "---\nname: block\ndescription: d\nmetadata:\n  openclaw:\n    emoji: \"🔧\"\n    requires:\n      bins:\n        - sh\n---\n",
    );
    write_skill(
        &skills.join("json5"),
        "---\nname: json5\ndescription: d\nmetadata: '{openclaw: {emoji: \"🔧\", requires: {bins: [\"sh\"],},},}'\n---\n",
    );
    write_skill(
        &skills.join("multiline"),
        "---\nname: multiline\ndescription: d\nmetadata:\n  {\n    \"openclaw\": { \"emoji\": \"🔧\", \"requires\": { \"bins\": [\"sh\"] } },\n  }\n---\n",
    );
    let mut w = w;
    w.host.bins.insert("sh".into());
    let d = w.discover();
    assert_eq!(names(&d), ["block", "inline", "json5", "multiline"]);
    let expected = Metadata {
        emoji: Some("🔧".into()),
        requires: Requires {
            bins: vec!["sh".into()],
            ..Requires::default()
        },
        ..Metadata::default()
    };
    for skill in &d.skills {
        assert_eq!(skill.metadata, expected, "{}", skill.name);
        assert_eq!(skill.emoji.as_deref(), Some("🔧"));
        assert!(skill.warnings.is_empty(), "{:?}", skill.warnings);
    }
}

#[test]
fn homepage_comes_from_frontmatter_or_metadata() {
    let w = World::new();
    let skills = w.workspace.join("skills");
    write_skill(
        &skills.join("top"),
        "---\nname: top\ndescription: d\nhomepage: https://top\nmetadata: {\"openclaw\": {\"homepage\": \"https://meta\"}}\n---\n",
    );
    write_skill(
        &skills.join("meta"),
        "---\nname: meta\ndescription: d\nmetadata: {\"openclaw\": {\"homepage\": \"https://meta\"}}\n---\n",
    );
    let d = w.discover();
    assert_eq!(
        d.get("top").unwrap().homepage.as_deref(),
        Some("https://top")
    );
    assert_eq!(
        d.get("meta").unwrap().homepage.as_deref(),
        Some("https://meta")
    );
}

#[test]
fn an_unquoted_colon_loads_with_a_warning() {
    let w = World::new();
    write_skill(
        &w.workspace.join("skills/colon"),
        "---\nname: colon\ndescription: Use when: the user asks\n---\n",
    );
    let d = w.discover();
    let skill = d.get("colon").unwrap();
    assert_eq!(skill.description, "Use when: the user asks");
    assert_eq!(skill.warnings.len(), 1);
}

#[test]
fn unreadable_metadata_drops_the_skill_rather_than_its_gates() {
    let w = World::new();
    write_skill(
        &w.workspace.join("skills/typo"),
        "---\nname: typo\ndescription: d\nmetadata: '{openclaw: {requires: {env: [\"KEY\"]}}'\n---\n",
    );
    let d = w.discover();
    assert!(d.skills.is_empty());
    assert!(matches!(
        &d.skipped[0].reason,
        SkipReason::MalformedFrontmatter { message } if message.starts_with("metadata is not a JSON5 object")
    ));
}

#[test]
fn a_typical_bundled_skill_reads_cleanly() {
    let mut w = World::new();
    write_skill(
        &w.bundled.join("notes-cli"),
        concat!(
            "---\n",
            "name: notes-cli\n",
            "description: Manage notes via the `notes` CLI (create, list, search). Use when a user asks to add or find a note.\n",
            "homepage: https://example.com/notes\n",
            "metadata: {\"openclaw\":{\"emoji\":\"📝\",\"os\":[\"darwin\",\"linux\"],\"requires\":{\"bins\":[\"notes\"]},",
            "\"install\":[{\"id\":\"brew\",\"kind\":\"brew\",\"formula\":\"notes\",\"bins\":[\"notes\"],\"label\":\"Install (brew)\"}]}}\n",
            "---\n\n# Notes\n",
        ),
    );
    w.host.bins.insert("notes".into());
    let d = w.discover();
    assert_eq!(names(&d), ["notes-cli"]);
    let skill = &d.skills[0];
    assert!(skill.warnings.is_empty(), "{:?}", skill.warnings);
    assert_eq!(skill.metadata.os, ["darwin", "linux"]);
    assert!(
        skill
            .description
            .starts_with("Manage notes via the `notes` CLI")
    );
}

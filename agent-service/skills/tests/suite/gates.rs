//! Requirement 4: config switches and frontmatter gates, each failure reported with its gate.

use openclaw_skills::{GateFailure, Platform, SkipReason};
use serde_json::json;

use super::fixture::{World, gated, names, reasons, skill};

/// A skill named `name` in the agent's workspace, with `openclaw` as its metadata.
fn workspace_skill(w: &World, name: &str, openclaw: &str) {
    gated(&w.workspace.join("skills").join(name), name, openclaw);
}

fn gate(failure: GateFailure) -> SkipReason {
    SkipReason::Gate(failure)
}

#[test]
fn entries_enabled_false_disables_by_name_or_skill_key() {
    let mut w = World::new();
    let skills = w.workspace.join("skills");
    skill(&skills.join("by-name"), "by-name", "d");
    workspace_skill(&w, "keyed", r#"{"skillKey": "the-key"}"#);
    skill(&skills.join("kept"), "kept", "d");
    w.config(
        "{ skills: { entries: { 'by-name': { enabled: false }, 'the-key': { enabled: false }, kept: { enabled: true } } } }",
        "main",
    );
    let d = w.discover();
    assert_eq!(names(&d), ["kept"]);
    assert_eq!(
        reasons(&d),
        [
            (
                "by-name".into(),
                SkipReason::Disabled {
                    key: "by-name".into()
                }
            ),
            (
                "keyed".into(),
                SkipReason::Disabled {
                    key: "the-key".into()
                }
            ),
        ]
    );
}

#[test]
fn allow_bundled_limits_bundled_skills_only() {
    let mut w = World::new();
    skill(&w.bundled.join("listed"), "listed", "d");
    gated(&w.bundled.join("keyed"), "keyed", r#"{"skillKey": "k"}"#);
    skill(&w.bundled.join("unlisted"), "unlisted", "d");
    skill(&w.workspace.join("skills/mine"), "mine", "d");
    w.config("{ skills: { allowBundled: ['listed', 'k'] } }", "main");
    let d = w.discover();
    assert_eq!(names(&d), ["keyed", "listed", "mine"]);
    assert_eq!(
        reasons(&d),
        [("unlisted".into(), SkipReason::BundledNotAllowed)]
    );

    // As in OpenClaw, an empty allowBundled restricts nothing.
    w.config("{ skills: { allowBundled: [] } }", "main");
    assert_eq!(
        names(&w.discover()),
        ["keyed", "listed", "mine", "unlisted"]
    );
}

#[test]
fn os_gate_names_the_supported_platforms_and_beats_always() {
    let w = World::new();
    workspace_skill(&w, "mac", r#"{"os": ["darwin"]}"#);
    workspace_skill(&w, "mac-always", r#"{"os": ["darwin"], "always": true}"#);
    workspace_skill(&w, "linux", r#"{"os": ["darwin", "linux"]}"#);
    let d = w.discover();
    assert_eq!(names(&d), ["linux"]);
    let os = gate(GateFailure::Os {
        supported: vec!["darwin".into()],
        platform: Platform::Linux,
    });
    assert_eq!(
        reasons(&d),
        [("mac".into(), os.clone()), ("mac-always".into(), os)]
    );
    assert_eq!(
        d.skipped[0].reason.to_string(),
        "runs on darwin only, not linux"
    );
}

#[test]
fn bins_gate_lists_every_missing_program() {
    let mut w = World::new();
    w.host.bins.insert("jq".into());
    workspace_skill(&w, "ok", r#"{"requires": {"bins": ["jq"]}}"#);
    workspace_skill(&w, "no", r#"{"requires": {"bins": ["jq", "gh", "rg"]}}"#);
    let d = w.discover();
    assert_eq!(names(&d), ["ok"]);
    assert_eq!(
        reasons(&d),
        [(
            "no".into(),
            gate(GateFailure::Bins {
                missing: vec!["gh".into(), "rg".into()]
            })
        )]
    );
}

#[test]
fn any_bins_gate_needs_one_of_them() {
    let mut w = World::new();
    w.host.bins.insert("claude".into());
    workspace_skill(
        &w,
        "one",
        r#"{"requires": {"anyBins": ["codex", "claude"]}}"#,
    );
    workspace_skill(&w, "none", r#"{"requires": {"anyBins": "codex, gemini"}}"#);
    let d = w.discover();
    assert_eq!(names(&d), ["one"]);
    assert_eq!(
        reasons(&d),
        [(
            "none".into(),
            gate(GateFailure::AnyBins {
                wanted: vec!["codex".into(), "gemini".into()]
            })
        )]
    );
}

#[test]
fn env_gate_accepts_the_environment_entry_env_and_api_key() {
    let mut w = World::new();
    w.host.env.insert("FROM_HOST".into());
    workspace_skill(&w, "host", r#"{"requires": {"env": ["FROM_HOST"]}}"#);
    workspace_skill(&w, "entry", r#"{"requires": {"env": ["FROM_ENTRY"]}}"#);
    workspace_skill(
        &w,
        "api",
        r#"{"primaryEnv": "API_TOKEN", "requires": {"env": ["API_TOKEN"]}}"#,
    );
    workspace_skill(
        &w,
        "api-ref",
        r#"{"primaryEnv": "API_TOKEN", "requires": {"env": ["API_TOKEN"]}}"#,
    );
    workspace_skill(
        &w,
        "missing",
        r#"{"requires": {"env": ["FROM_HOST", "NOPE", "EMPTY"]}}"#,
    );
    w.config(
        "{ skills: { entries: {
            entry: { env: { FROM_ENTRY: 'x' } },
            api: { apiKey: 'secret' },
            'api-ref': { apiKey: { source: 'env', id: 'TOKEN' } },
            missing: { env: { EMPTY: '' } },
        } } }",
        "main",
    );
    let d = w.discover();
    assert_eq!(names(&d), ["api", "api-ref", "entry", "host"]);
    assert_eq!(
        reasons(&d),
        [(
            "missing".into(),
            gate(GateFailure::Env {
                missing: vec!["NOPE".into(), "EMPTY".into()]
            })
        )]
    );
}

#[test]
fn api_key_supplies_only_the_primary_env() {
    let mut w = World::new();
    gated(
        &w.workspace.join("skills/other"),
        "other",
        r#"{"primaryEnv": "A", "requires": {"env": ["B"]}}"#,
    );
    w.config(
        "{ skills: { entries: { other: { apiKey: 'secret' } } } }",
        "main",
    );
    let d = w.discover();
    assert!(d.skills.is_empty());
}

#[test]
fn config_gate_reads_truthy_paths_with_openclaw_defaults() {
    let mut w = World::new();
    workspace_skill(
        &w,
        "on",
        r#"{"requires": {"config": ["channels.discord"]}}"#,
    );
    workspace_skill(
        &w,
        "browser",
        r#"{"requires": {"config": ["browser.enabled"]}}"#,
    );
    workspace_skill(
        &w,
        "off",
        r#"{"requires": {"config": ["channels.discord", "tools.missing"]}}"#,
    );
    w.config("{ channels: { discord: { token: 'x' } } }", "main");
    let d = w.discover();
    assert_eq!(names(&d), ["browser", "on"]);
    assert_eq!(
        reasons(&d),
        [(
            "off".into(),
            gate(GateFailure::Config {
                missing: vec!["tools.missing".into()]
            })
        )]
    );
    // A default applies only while the config does not mention the path.
    assert!(!openclaw_skills::config_path_truthy(
        Some(&json!({"browser": {"enabled": false}})),
        "browser.enabled"
    ));
}

#[test]
fn always_bypasses_the_requirement_gates() {
    let w = World::new();
    gated(
        &w.workspace.join("skills/always"),
        "always",
        r#"{"always": true, "requires": {"bins": ["nope"], "anyBins": ["no"], "env": ["NOPE"], "config": ["no.such"]}}"#,
    );
    assert_eq!(names(&w.discover()), ["always"]);
}

#[test]
fn the_first_failing_gate_is_the_reason() {
    let mut w = World::new();
    gated(
        &w.workspace.join("skills/both"),
        "both",
        r#"{"requires": {"bins": ["nope"], "env": ["NOPE"]}}"#,
    );
    w.config(
        "{ skills: { entries: { both: { enabled: false } } } }",
        "main",
    );
    let d = w.discover();
    assert_eq!(
        reasons(&d),
        [("both".into(), SkipReason::Disabled { key: "both".into() })]
    );
}

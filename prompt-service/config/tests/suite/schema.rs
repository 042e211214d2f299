//! The generated JSON Schema and `schema_lookup` (the gateway tool's `config.schema.lookup`).

use openclaw_config::{json_schema, schema_lookup};
use serde_json::json;

#[test]
fn schema_is_strict_draft_2020_12() {
    let schema = json_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["additionalProperties"], json!(false));
    assert!(schema["properties"]["agents"].is_object());
}

#[test]
fn lookup_returns_inlined_subschemas() {
    let Some(heartbeat) = schema_lookup("agents.defaults.heartbeat") else {
        panic!("heartbeat")
    };
    assert_eq!(heartbeat["type"], "object");
    assert_eq!(heartbeat["additionalProperties"], json!(false));
    assert_eq!(heartbeat["properties"]["every"]["type"], "string");
    assert!(heartbeat.get("$ref").is_none() && !heartbeat.to_string().contains("$ref"));

    let Some(max_chars) = schema_lookup("agents.defaults.bootstrapMaxChars") else {
        panic!("max chars")
    };
    assert_eq!(max_chars["type"], "integer");
    assert_eq!(max_chars["minimum"], 0);
    assert!(
        max_chars["description"]
            .as_str()
            .is_some_and(|d| d.contains("20000"))
    );
}

#[test]
fn lookup_walks_arrays_maps_and_unions() {
    let runtime = schema_lookup("agents.list[].runtime.type");
    assert_eq!(
        runtime.and_then(|r| r.get("enum").cloned()),
        Some(json!(["embedded", "codex"]))
    );
    let indexed = schema_lookup("agents.list[3].id");
    assert_eq!(indexed.map(|s| s["type"].clone()), Some(json!("string")));
    let alias = schema_lookup(r#"agents.defaults.models["openai/gpt-5.5"].alias"#);
    assert_eq!(alias.map(|s| s["type"].clone()), Some(json!("string")));
    let allow_from = schema_lookup("channels.*.allowFrom");
    assert_eq!(allow_from.map(|s| s["type"].clone()), Some(json!("array")));
    let fallbacks = schema_lookup("agents.defaults.model.fallbacks");
    assert_eq!(
        fallbacks.map(|s| s["items"]["type"].clone()),
        Some(json!("string"))
    );
    let mode = schema_lookup("messages.queue.mode");
    assert_eq!(
        mode.map(|s| s["enum"].clone()),
        Some(json!(["steer", "followup", "collect", "interrupt"]))
    );
    // Open corners accept anything.
    let open = schema_lookup("plugins.entries.openai.config");
    assert_eq!(
        open,
        Some(json!({"description": "Plugin-defined settings: opaque."}))
    );
    assert_eq!(
        schema_lookup("gateway.auth.token"),
        None,
        "opaque sections have no sub-schema"
    );
}

#[test]
fn lookup_of_the_root_and_of_unknown_paths() {
    assert_eq!(schema_lookup(""), Some(json_schema()));
    assert_eq!(schema_lookup("agents.defaults.workspac"), None);
    assert_eq!(schema_lookup("agents.list.id"), None);
    assert_eq!(schema_lookup("agents[0]"), None);
}

/// The whole configuration surface, so a change to it shows up as a reviewed diff.
#[test]
fn schema_snapshot() {
    insta::assert_json_snapshot!("openclaw_config_schema", json_schema());
}

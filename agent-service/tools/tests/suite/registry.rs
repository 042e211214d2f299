//! The registry: construction through policy, specs for the model, dispatch.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use openclaw_config::raw::ToolProfile;
use openclaw_config::resolve::{ApplyPatchSettings, ToolPolicy};
use openclaw_tools::{CORE_TOOLS, Tool, ToolContext, ToolOutcome, ToolRegistry};
use serde_json::{Value, json};

use super::{Fixture, error_text, ok_text};

struct Panicky;

#[async_trait]
impl Tool for Panicky {
    fn name(&self) -> &'static str {
        "memory_search"
    }

    fn description(&self) -> String {
        "panics".into()
    }

    fn parameters(&self) -> Value {
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }

    async fn call(&self, _ctx: &ToolContext, _arguments: Value) -> ToolOutcome {
        panic!("a bug");
    }
}

fn settings() -> ApplyPatchSettings {
    ApplyPatchSettings {
        enabled: true,
        workspace_only: true,
        allow_models: Vec::new(),
    }
}

fn coding() -> ToolPolicy {
    ToolPolicy {
        profile: Some(ToolProfile::Coding),
        allow: None,
        also_allow: Vec::new(),
        deny: Vec::new(),
        by_provider: BTreeMap::new(),
        fs_workspace_only: false,
        elevated_enabled: false,
    }
}

#[test]
fn for_run_builds_the_allowed_tools_in_order() {
    let registry = ToolRegistry::for_run(
        &coding(),
        "openai",
        "gpt-5.4",
        true,
        &settings(),
        vec![Arc::new(Panicky)],
    );
    assert_eq!(
        registry.names(),
        [
            "read",
            "write",
            "edit",
            "apply_patch",
            "exec",
            "process",
            "session_status",
            "memory_search",
            "update_plan"
        ]
    );
    let specs = registry.specs();
    assert_eq!(specs.len(), registry.len());
    assert!(registry.get("gateway").is_none());
}

#[test]
fn every_core_schema_is_a_closed_object_whose_required_fields_exist() {
    let everything: Vec<String> = CORE_TOOLS.iter().map(|s| (*s).to_owned()).collect();
    let registry = ToolRegistry::builtin(&everything, &settings());
    assert_eq!(registry.names(), CORE_TOOLS);
    for (name, description, schema) in registry.specs() {
        assert!(description.len() > 40, "{name}");
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        let properties = schema["properties"].as_object().unwrap();
        for required in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            assert!(
                properties.contains_key(required.as_str().unwrap()),
                "{name}: {required}"
            );
        }
    }
}

#[tokio::test]
async fn calls_dispatch_by_name_and_survive_bugs() {
    let f = Fixture::new();
    f.write("a.txt", "hi\n");
    let mut registry = ToolRegistry::builtin(&["read".to_owned()], &settings());
    registry.insert(Arc::new(Panicky));
    let read = registry
        .call(&f.ctx, "read", json!({ "path": "a.txt" }))
        .await;
    assert_eq!(ok_text(&read), "hi\n");
    let unknown = registry.call(&f.ctx, "delete_everything", json!({})).await;
    assert_eq!(
        error_text(&unknown),
        "there is no tool called \"delete_everything\"; the available tools are: read, memory_search"
    );
    let panicked = registry.call(&f.ctx, "memory_search", json!({})).await;
    assert_eq!(
        error_text(&panicked),
        "the memory_search tool failed unexpectedly (an internal error); the call had no result"
    );
}

//! The registry: construction through policy, specs for the model, dispatch.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use openclaw_config::raw::ToolProfile;
use openclaw_config::resolve::{ApplyPatchSettings, ToolPolicy};
use openclaw_tools::{
    CORE_TOOLS, CronTool, MemoryGetTool, MemorySearchTool, SessionsSpawnTool, SpecCache,
    SubagentsTool, Tool, ToolContext, ToolOutcome, ToolRegistry, spec_of,
};
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
        &SpecCache::new(),
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
    for spec in registry.specs() {
        let (name, description) = (&spec.name, &spec.description);
        let schema: Value = serde_json::from_str(spec.parameters.get()).unwrap();
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

/// The schema text every request and the prompt's tool list carry is exactly the schema's
/// compact JSON, for every tool of this crate, whether encoded directly or through the
/// per-config cache.
#[test]
fn every_schema_text_is_the_schemas_compact_json() {
    let everything: Vec<String> = CORE_TOOLS.iter().map(|s| (*s).to_owned()).collect();
    let registry = ToolRegistry::builtin(&everything, &settings());
    let mut tools: Vec<Arc<dyn Tool>> = registry
        .names()
        .into_iter()
        .filter_map(|name| registry.get(name))
        .collect();
    assert_eq!(tools.len(), CORE_TOOLS.len());
    let dir = tempfile::tempdir().unwrap();
    let memory = openclaw_memory::AgentMemory::new(
        openclaw_memory::MemorySettings::default(),
        dir.path().join("memory.sqlite"),
    )
    .unwrap();
    tools.extend([
        Arc::new(MemorySearchTool::new(Arc::new(memory))) as Arc<dyn Tool>,
        Arc::new(MemoryGetTool),
        Arc::new(SessionsSpawnTool),
        Arc::new(SubagentsTool),
        Arc::new(CronTool),
    ]);
    let cache = SpecCache::new();
    for tool in tools {
        let expected = tool.parameters().to_string();
        let spec = spec_of(tool.as_ref());
        assert_eq!(spec.parameters.get(), expected, "{}", tool.name());
        assert_eq!(spec.parameters.to_string(), expected, "{}", tool.name());
        assert_eq!(
            serde_json::to_string(&spec.parameters).unwrap(),
            expected,
            "{}",
            tool.name()
        );
        assert_eq!(cache.spec(tool.as_ref()), spec, "{}", tool.name());
        assert_eq!(spec.name, tool.name());
        assert_eq!(&*spec.description, tool.description());
    }
}

/// A tool that counts how often its definition is asked for.
struct Counted(Arc<AtomicUsize>);

#[async_trait]
impl Tool for Counted {
    fn name(&self) -> &'static str {
        "memory_get"
    }

    fn description(&self) -> String {
        self.0.fetch_add(1, Ordering::SeqCst);
        "counted".into()
    }

    fn parameters(&self) -> Value {
        self.0.fetch_add(1, Ordering::SeqCst);
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }

    async fn call(&self, _ctx: &ToolContext, _arguments: Value) -> ToolOutcome {
        ToolOutcome::ok("")
    }
}

#[test]
fn runs_under_one_config_encode_each_definition_once() {
    let asked = Arc::new(AtomicUsize::new(0));
    let cache = SpecCache::new();
    let run = |cache: &SpecCache| {
        ToolRegistry::for_run(
            &coding(),
            "openai",
            "gpt-5.4",
            true,
            &settings(),
            vec![Arc::new(Counted(Arc::clone(&asked)))],
            cache,
        )
    };
    let first = run(&cache).specs();
    let second = run(&cache).specs();
    assert_eq!(first, second);
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "description and parameters read once, by the first run"
    );
    let counted = first.iter().find(|s| s.name == "memory_get").unwrap();
    assert_eq!(&*counted.description, "counted");
    assert_eq!(
        counted.parameters.get(),
        r#"{"type":"object","properties":{},"additionalProperties":false}"#
    );
    // A new config's cache encodes afresh.
    run(&SpecCache::new());
    assert_eq!(asked.load(Ordering::SeqCst), 4);
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

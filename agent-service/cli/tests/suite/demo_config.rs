//! The demo files: the config loads cleanly with openclaw-config, selects
//! the scripted model, and its script parses; writing never overwrites.

use std::{collections::BTreeMap, sync::Arc};

use openclaw_cli::demo::{self, DEMO_CONFIG, DEMO_MODEL, DEMO_SCRIPT_FILE};
use openclaw_config::{LoadOptions, Loader, UnresolvedVars};

#[test]
fn the_demo_config_loads_and_selects_the_scripted_model() {
    let env: BTreeMap<String, String> = BTreeMap::new();
    let options = LoadOptions {
        unresolved_vars: UnresolvedVars::Error,
    };
    let config = Loader::new()
        .expect("loader")
        .load(DEMO_CONFIG, &env, &options)
        .unwrap_or_else(|e| panic!("the demo config must load: {e}"));
    let default = config
        .model_catalog()
        .default_model()
        .expect("a default model");
    assert_eq!(default.to_string(), DEMO_MODEL);
    assert_eq!(config.agent_ids(), ["main"]);
    let provider = &config
        .raw()
        .models
        .as_ref()
        .expect("models")
        .providers
        .as_ref()
        .expect("providers")["scripted"];
    assert_eq!(provider.script.as_deref(), Some(DEMO_SCRIPT_FILE));
}

#[test]
fn the_demo_script_parses_and_calls_read_first() {
    let clock = Arc::new(openclaw_transcript::SystemClock);
    let script = openclaw_providers::ScriptedProvider::from_json5(
        "scripted",
        openclaw_providers::DEMO_SCRIPT,
        clock,
    )
    .expect("script");
    assert_eq!(script.turn_count(), 2);
    assert!(
        openclaw_providers::DEMO_SCRIPT
            .contains(r#"toolCalls: [{ name: "read", arguments: { path: "AGENTS.md" } }]"#)
    );
}

#[test]
fn demo_files_are_written_once_and_never_overwritten() {
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("nested/state/openclaw.json");
    let first = demo::write_demo_files(&config).expect("write");
    assert!(first.config_written && first.script_written);
    assert_eq!(std::fs::read_to_string(&config).expect("read"), DEMO_CONFIG);
    assert_eq!(
        first.script_path,
        dir.path().join("nested/state").join(DEMO_SCRIPT_FILE)
    );

    std::fs::write(&config, "{ /* mine */ }").expect("edit");
    let second = demo::write_demo_files(&config).expect("again");
    assert!(!second.config_written && !second.script_written);
    assert_eq!(
        std::fs::read_to_string(&config).expect("read"),
        "{ /* mine */ }"
    );
}

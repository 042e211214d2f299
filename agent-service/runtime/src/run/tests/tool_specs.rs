//! The tools of a run as the model and the prompt see them: each tool's schema is encoded once
//! per config load, and every run under that config, the model request and the prompt's render
//! input all carry that same text, which is exactly the schema's compact JSON.

use crate::{
    prompt_input::{TurnChannel, TurnPrompt, TurnSources, render_input},
    run::{
        models::choose_model,
        run_context::{descriptors, tools_for},
    },
    sessions::SessionKind,
    visibility::PrivateFiles,
};

use super::Loop;

#[tokio::test]
async fn every_tool_schema_is_encoded_once_per_config_and_rendered_as_its_json() {
    let l = Loop::start("").await;
    let loaded = l.services.config().ready().expect("config").clone();
    let agent = loaded.agent("").expect("agent").clone();
    let model = choose_model(&l.services, &loaded, &agent, None, None).expect("model");
    let registry = tools_for(&loaded, &agent, &model, SessionKind::Main);
    let specs = descriptors(&registry);
    assert_eq!(
        specs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        registry.names(),
    );
    assert!(
        [
            "read",
            "exec",
            "gateway",
            "memory_search",
            "memory_get",
            "sessions_spawn",
            "cron"
        ]
        .iter()
        .all(|name| registry.get(name).is_some()),
        "a run of the main session gets the built-in tools: {:?}",
        registry.names()
    );

    // A second run under the same config shares the text the first encoded.
    let again = descriptors(&tools_for(&loaded, &agent, &model, SessionKind::Main));
    for (first, second) in specs.iter().zip(&again) {
        assert_eq!(first, second);
        assert!(
            std::ptr::eq(first.parameters.get(), second.parameters.get())
                && std::ptr::eq(&*first.description, &*second.description),
            "{} was encoded again for the second run",
            first.name
        );
    }

    // The prompt's render input carries the same text, the schema's compact JSON.
    let cwd = l.dir.path();
    let channel = TurnChannel::default();
    let private = PrivateFiles::scan(cwd, &[]);
    let turn = TurnPrompt::for_test(&agent, cwd, &channel, &specs);
    let sources = TurnSources {
        config: &loaded.config,
        files: &[],
        private: &private,
        docs: None,
    };
    let input = render_input(&turn, &sources);
    assert_eq!(input.tools.len(), specs.len());
    for (rendered, spec) in input.tools.iter().zip(&specs) {
        let tool = registry.get(&spec.name).expect("the tool");
        let json = tool.parameters().to_string();
        assert_eq!(rendered.name, spec.name);
        assert_eq!(rendered.json_schema, json, "{}", spec.name);
        assert_eq!(spec.parameters.get(), json, "{}", spec.name);
    }
}

//! ResolvePromptConfig and ResolveProviderContribution over a real socket.

use openclaw_proto::prompt::v1 as pb;
use pb::prompt_service_client::PromptServiceClient;
use tonic::{Code, transport::Channel};

use super::harness::Server;

const EXAMPLE_CONFIG: &str = include_str!("../../../config/examples/openclaw.json5");

fn request(agent: &str) -> pb::ResolvePromptConfigRequest {
    pb::ResolvePromptConfigRequest {
        config_json5: EXAMPLE_CONFIG.into(),
        agent_id: agent.into(),
        env: [("OWNER_SECRET".to_owned(), "pepper".to_owned())].into(),
    }
}

/// ResolvePromptConfig on a server of its own.
async fn resolve(
    request: pb::ResolvePromptConfigRequest,
) -> Result<pb::ResolvePromptConfigResponse, tonic::Status> {
    let server = Server::start().await;
    let answer = server.client().await.resolve_prompt_config(request).await;
    answer.map(tonic::Response::into_inner)
}

/// ResolveProviderContribution for `(provider, model)` with `personality` and `config`.
async fn contribution(
    client: &mut PromptServiceClient<Channel>,
    (provider, model): (&str, &str),
    personality: pb::Gpt5Personality,
    config: &str,
) -> Result<pb::ResolveProviderContributionResponse, tonic::Status> {
    let request = pb::ResolveProviderContributionRequest {
        provider_id: provider.into(),
        model_id: model.into(),
        config_json5: config.into(),
        personality: personality as i32,
    };
    let answer = client.resolve_provider_contribution(request).await;
    answer.map(tonic::Response::into_inner)
}

/// P-2: the knobs of the default agent, defaults and overrides merged.
#[tokio::test]
async fn resolves_the_default_agent_knobs() {
    let knobs = resolve(request("")).await.expect("resolve");
    assert_eq!(knobs.agent_id, "main");
    assert_eq!(knobs.owner_display(), pb::OwnerDisplay::Hash);
    assert_eq!(
        knobs.owner_display_secret, "pepper",
        "substituted from env, trimmed"
    );
    let aliases: Vec<(String, String)> = knobs
        .model_aliases
        .iter()
        .map(|a| (a.alias.clone(), a.model.clone()))
        .collect();
    assert_eq!(
        aliases,
        [
            ("gpt".to_owned(), "openai/gpt-5.5".to_owned()),
            (
                "kimi".to_owned(),
                "openrouter/moonshotai/kimi-k2".to_owned()
            ),
            ("opus".to_owned(), "anthropic/claude-opus-4-5".to_owned()),
        ]
    );
    assert_eq!(knobs.delegation_mode(), pb::DelegationMode::Prefer);
    let limits = knobs.bootstrap_limits.expect("limits");
    assert_eq!(
        (limits.max_chars_per_file, limits.total_max_chars),
        (16_000, 48_000)
    );
    let time = knobs.user_time.clone().expect("time");
    assert_eq!(
        (time.timezone.as_str(), time.time_format()),
        ("Europe/Berlin", pb::TimeFormat::TimeFormat24)
    );
    assert_eq!(
        knobs.gpt5_personality(),
        pb::Gpt5Personality::Friendly,
        "promptOverlays wins over the plugin's \"off\""
    );
    assert!(
        knobs.fs_workspace_only,
        "the agent's tools.fs override wins"
    );
    assert!(
        knobs.tts_hint.contains("voice message") && knobs.tts_hint.contains("1500"),
        "{}",
        knobs.tts_hint
    );
    assert_eq!(knobs.memory_citations_mode(), pb::MemoryCitationsMode::Auto);
    assert_eq!(knobs.identity.map(|i| i.name), Some("Clawd".to_owned()));
}

/// Per-agent overrides replace the defaults.
#[tokio::test]
async fn resolves_a_named_agent() {
    let knobs = resolve(request("work")).await.expect("resolve");
    assert_eq!(knobs.agent_id, "work");
    assert_eq!(knobs.delegation_mode(), pb::DelegationMode::Suggest);
    assert_eq!(
        knobs.bootstrap_limits.map(|l| l.max_chars_per_file),
        Some(8_000)
    );
    let heartbeat = knobs.heartbeat.expect("heartbeat");
    assert_eq!(heartbeat.prompt, "Check the inbox and the build.");
}

#[tokio::test]
async fn unknown_agent_is_not_found() {
    let status = resolve(request("ghost")).await.expect_err("no such agent");
    assert_eq!(status.code(), Code::NotFound);
    assert!(status.message().contains("ghost"), "{}", status.message());
}

/// A bad file names line, column and JSON path for every problem at once.
#[tokio::test]
async fn bad_config_is_invalid_argument_with_line_column_and_path() {
    let text = "{\n  agents: {\n    defaults: {\n      bootstrapMaxChars: \"lots\",\n      workspac: \"/ws\",\n    },\n  },\n}\n";
    let req = pb::ResolvePromptConfigRequest {
        config_json5: text.into(),
        ..Default::default()
    };
    let status = resolve(req).await.expect_err("invalid");
    assert_eq!(status.code(), Code::InvalidArgument);
    let msg = status.message();
    assert!(
        msg.contains("agents.defaults.bootstrapMaxChars (line 4, column 26)"),
        "{msg}"
    );
    assert!(
        msg.contains("agents.defaults.workspac (line 5, column 7)"),
        "{msg}"
    );
    assert!(msg.contains("did you mean \"workspace\""), "{msg}");
}

#[tokio::test]
async fn syntax_error_names_line_and_column() {
    let req = pb::ResolvePromptConfigRequest {
        config_json5: "{ agents: { defaults: { } }\n  oops }".into(),
        ..Default::default()
    };
    let status = resolve(req).await.expect_err("syntax");
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("line 2"), "{}", status.message());
}

/// P-5: the overlay for GPT-5 models on OpenAI/Codex, with the
/// configured personality; nothing for other models.
#[tokio::test]
async fn gpt5_overlay_contribution() {
    let server = Server::start().await;
    let mut client = server.client().await;
    let unspecified = pb::Gpt5Personality::Unspecified;
    let on = contribution(&mut client, ("openai", "gpt-5.5"), unspecified, "")
        .await
        .expect("on");
    assert!(on.gpt5_overlay);
    assert_eq!(on.personality(), pb::Gpt5Personality::Friendly);
    let c = on.contribution.expect("contribution");
    assert!(c.stable_prefix.contains("<execution_policy>"));
    assert!(
        c.section_overrides
            .expect("overrides")
            .interaction_style
            .starts_with("## Interaction Style")
    );

    let off_cfg = "{ agents: { defaults: { promptOverlays: { gpt5: { personality: 'off' } } } } }";
    let off = contribution(&mut client, ("codex", "gpt-5-mini"), unspecified, off_cfg)
        .await
        .expect("off");
    assert_eq!(off.personality(), pb::Gpt5Personality::Off);
    let c = off.contribution.expect("contribution");
    assert!(c.stable_prefix.contains("<completion_contract>"));
    assert!(
        c.section_overrides
            .expect("overrides")
            .interaction_style
            .is_empty()
    );

    let plugin_off = "{ plugins: { entries: { openai: { config: { personality: 'off' } } } } }";
    let by_plugin = contribution(&mut client, ("openai", "gpt-5"), unspecified, plugin_off)
        .await
        .expect("plugin");
    assert_eq!(by_plugin.personality(), pb::Gpt5Personality::Off);

    let none = contribution(
        &mut client,
        ("anthropic", "claude-sonnet-4-5"),
        pb::Gpt5Personality::Friendly,
        "",
    )
    .await
    .expect("none");
    assert!(!none.gpt5_overlay);
    assert_eq!(
        none.contribution.map(|c| c.stable_prefix),
        Some(String::new())
    );

    let bad = contribution(&mut client, ("openai", "gpt-5"), unspecified, "{ nope: 1 }")
        .await
        .expect_err("bad config");
    assert_eq!(bad.code(), Code::InvalidArgument);
    let missing = contribution(&mut client, ("openai", ""), unspecified, "")
        .await
        .expect_err("no model");
    assert_eq!(missing.message(), "model_id: is required");
}

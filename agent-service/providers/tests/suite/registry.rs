//! Building providers from `models.providers`, and model references resolved to the wire id
//! each provider expects (R-13, L14).

use std::path::Path;

use agent_testkit::{FakeReply, FakeServer, WireFormat};
use openclaw_providers::{ModelRequest, ProviderError};
use serde_json::json;

use super::support::{registry, request, run};

const CATALOG: &str = r#"{
    agents: { defaults: {
        model: "anthropic/claude-sonnet-4@20250514",
        models: { "openrouter/moonshotai/kimi-k2": { alias: "kimi" } },
    } },
    models: { providers: {
        OpenRouter: { api: "openai-completions", baseUrl: "https://openrouter.ai/api/v1", apiKey: "sk-or" },
        nvidia: { api: "openai-completions", baseUrl: "https://integrate.api.nvidia.com/v1", apiKey: "nv" },
        router2: { api: "openai-completions", baseUrl: "https://openrouter.ai/api/v1/" },
        ollama: { api: "openai-completions", baseUrl: "http://localhost:11434/v1", models: [{ id: "qwen3:8b" }] },
        anthropic: { api: "anthropic-messages", baseUrl: "https://api.anthropic.com", apiKey: "sk-ant" },
        openai: { api: "openai-responses", baseUrl: "https://api.openai.com/v1", apiKey: "sk-oai" },
    } },
}"#;

#[test]
fn model_refs_resolve_to_provider_and_wire_id() {
    let registry = registry(CATALOG, &[], Path::new(".")).unwrap();
    assert_eq!(
        registry.ids(),
        vec![
            "anthropic",
            "nvidia",
            "ollama",
            "openai",
            "openrouter",
            "router2"
        ]
    );
    let cases = [
        // (reference, provider, wire id, auth profile)
        (
            "openrouter/moonshotai/kimi-k2",
            "openrouter",
            "moonshotai/kimi-k2",
            None,
        ),
        (
            "OpenRouter/anthropic/claude-3.5-sonnet:beta",
            "openrouter",
            "anthropic/claude-3.5-sonnet:beta",
            None,
        ),
        ("openrouter/auto", "openrouter", "openrouter/auto", None),
        (
            "openrouter/openrouter/auto",
            "openrouter",
            "openrouter/auto",
            None,
        ),
        (
            "openrouter/moonshotai/kimi-k2@work",
            "openrouter",
            "moonshotai/kimi-k2",
            Some("work"),
        ),
        ("router2/auto", "router2", "openrouter/auto", None),
        (
            "nvidia/llama-3.1-nemotron-70b-instruct",
            "nvidia",
            "nvidia/llama-3.1-nemotron-70b-instruct",
            None,
        ),
        (
            "nvidia/meta/llama-3.3-70b-instruct",
            "nvidia",
            "meta/llama-3.3-70b-instruct",
            None,
        ),
        (
            "nvidia/nvidia/nemotron-4-340b",
            "nvidia",
            "nvidia/nemotron-4-340b",
            None,
        ),
        ("ollama/qwen3:8b", "ollama", "qwen3:8b", None),
        (
            "ollama/llama3.1:8b@q4_k_m",
            "ollama",
            "llama3.1:8b@q4_k_m",
            None,
        ),
        (
            "ollama/hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M",
            "ollama",
            "hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M",
            None,
        ),
        (
            "anthropic/claude-sonnet-4@20250514",
            "anthropic",
            "claude-sonnet-4@20250514",
            None,
        ),
        ("openai/gpt-5.5", "openai", "gpt-5.5", None),
        ("qwen3:8b", "ollama", "qwen3:8b", None),
        ("kimi", "openrouter", "moonshotai/kimi-k2", None),
        ("claude-opus-4-5", "anthropic", "claude-opus-4-5", None),
    ];
    for (reference, provider, wire, profile) in cases {
        let resolved = registry
            .resolve(reference)
            .unwrap_or_else(|e| panic!("{reference}: {e}"));
        assert_eq!(
            (
                resolved.provider.id(),
                resolved.wire_model.as_str(),
                resolved.reference.auth_profile.as_deref()
            ),
            (provider, wire, profile),
            "{reference}"
        );
    }
    let unknown = registry.resolve("mistral/large").unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains("no provider \"mistral\" is configured (configured: anthropic, nvidia"),
        "{unknown}"
    );
}

#[tokio::test]
async fn openrouter_vendor_model_reaches_the_wire_as_vendor_model() {
    let (base_url, fake) = FakeServer::start(WireFormat::ChatCompletions)
        .await
        .unwrap();
    let config = format!(
        r#"{{ models: {{ providers: {{ openrouter: {{ api: "openai-completions", baseUrl: "{base_url}" }} }} }} }}"#
    );
    let registry = registry(&config, &[], Path::new(".")).unwrap();
    fake.push(FakeReply::text("ok"));
    let resolved = registry.resolve("openrouter/moonshotai/kimi-k2").unwrap();
    let request = ModelRequest {
        model: resolved.wire_model.clone(),
        ..request()
    };
    let message = run(resolved.provider.as_ref(), request).await.0.unwrap();
    assert_eq!(
        fake.requests()[0].body["model"],
        json!("moonshotai/kimi-k2")
    );
    assert_eq!(
        (message.provider.as_str(), message.model.as_str()),
        ("openrouter", "moonshotai/kimi-k2")
    );
    assert_eq!(
        fake.requests()[0].header("authorization"),
        None,
        "no key configured, none sent"
    );
}

#[test]
fn every_broken_provider_is_reported_at_once_without_secrets() {
    let config = r#"{ models: { providers: {
        a: { api: "openai-responses", baseUrl: "localhost:8080" },
        b: { api: "anthropic-messages", baseUrl: "https://x", apiKey: { source: "env", id: "B_KEY" } },
        c: { api: "openai-completions", baseUrl: "https://x", apiKey: { source: "file", id: "/k" } },
        d: { api: "openai-completions", baseUrl: "https://x", apiKey: "sk-visible", headers: { "bad header": "v" } },
        e: { api: "scripted", script: "does-not-exist.json5" },
    } } }"#;
    let Err(ProviderError::Config { message }) = registry(config, &[], Path::new("/nonexistent"))
    else {
        panic!("broken providers must be refused");
    };
    for expected in [
        "models.providers.a.baseUrl must be an http:// or https:// URL",
        "models.providers.b.apiKey: environment variable B_KEY is not set",
        "models.providers.c.apiKey: secret source \"file\" is not supported yet",
        "models.providers.d.headers.bad header is not a valid HTTP header",
        "models.providers.e.script: cannot read /nonexistent/does-not-exist.json5",
    ] {
        assert!(
            message.contains(expected),
            "missing {expected:?} in {message}"
        );
    }
    assert!(!message.contains("sk-visible"));
}

#[tokio::test]
async fn keys_come_from_substituted_strings_and_the_conventional_variable() {
    let (url, fake) = FakeServer::start(WireFormat::ChatCompletions)
        .await
        .unwrap();
    let config = format!(
        r#"{{ models: {{ providers: {{
            subst: {{ api: "openai-completions", baseUrl: "{url}", apiKey: "${{SUBST_TOKEN}}" }},
            conv: {{ api: "openai-completions", baseUrl: "{url}" }},
        }} }} }}"#
    );
    let registry = registry(
        &config,
        &[("SUBST_TOKEN", "sk-1"), ("CONV_API_KEY", "sk-2")],
        Path::new("."),
    )
    .unwrap();
    for (id, key) in [("subst", "sk-1"), ("conv", "sk-2")] {
        fake.require_api_key(key);
        fake.push(FakeReply::text("ok"));
        let result = run(registry.provider(id).unwrap().as_ref(), request())
            .await
            .0;
        assert!(result.is_ok(), "{id}: {result:?}");
    }
}

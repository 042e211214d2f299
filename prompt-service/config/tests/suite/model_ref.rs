//! Model references (R-13, L14): a table of real-looking ids through the one parser, resolution
//! of aliases and bare ids, the stale-default fallback, and GPT-5 family detection.

use openclaw_config::{ConfigError, ModelCatalog, ModelRef, is_gpt5_family};

use super::support::{EXAMPLE, valid};

/// (input, provider, model, auth profile)
const CORPUS: &[(&str, &str, &str, Option<&str>)] = &[
    (
        "anthropic/claude-opus-4-5",
        "anthropic",
        "claude-opus-4-5",
        None,
    ),
    ("openai/gpt-5.5", "openai", "gpt-5.5", None),
    (
        "openrouter/moonshotai/kimi-k2",
        "openrouter",
        "moonshotai/kimi-k2",
        None,
    ),
    (
        "openrouter/anthropic/claude-sonnet-4.5",
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        None,
    ),
    ("openrouter/auto", "openrouter", "auto", None),
    (
        "openrouter/meta-llama/llama-3.3-70b-instruct:free",
        "openrouter",
        "meta-llama/llama-3.3-70b-instruct:free",
        None,
    ),
    ("OpenAI/gpt-5-mini", "openai", "gpt-5-mini", None),
    (
        "Anthropic/Claude-Opus-4-5",
        "anthropic",
        "Claude-Opus-4-5",
        None,
    ),
    ("  openai/gpt-5.5  ", "openai", "gpt-5.5", None),
    ("ollama/qwen3:8b", "ollama", "qwen3:8b", None),
    (
        "ollama/llama3.1:70b-instruct-q4_K_M",
        "ollama",
        "llama3.1:70b-instruct-q4_K_M",
        None,
    ),
    (
        "lmstudio/qwen2.5-coder-32b@q4_k_m",
        "lmstudio",
        "qwen2.5-coder-32b@q4_k_m",
        None,
    ),
    (
        "mlx/mistral-7b-instruct@4bit",
        "mlx",
        "mistral-7b-instruct@4bit",
        None,
    ),
    (
        "openrouter/qwen/qwen3-coder@Q8_0",
        "openrouter",
        "qwen/qwen3-coder@Q8_0",
        None,
    ),
    (
        "vllm/Qwen/Qwen3-8B@fp16",
        "vllm",
        "Qwen/Qwen3-8B@fp16",
        None,
    ),
    (
        "google-vertex/claude-sonnet-4@20250514",
        "google-vertex",
        "claude-sonnet-4@20250514",
        None,
    ),
    (
        "google-vertex/claude-sonnet-4@20250514@work",
        "google-vertex",
        "claude-sonnet-4@20250514",
        Some("work"),
    ),
    (
        "anthropic/claude-opus-4-5@work",
        "anthropic",
        "claude-opus-4-5",
        Some("work"),
    ),
    (
        "openai-codex/gpt-5.5@personal",
        "openai-codex",
        "gpt-5.5",
        Some("personal"),
    ),
    (
        "huggingface/Qwen/Qwen2.5-Coder-32B-Instruct@team",
        "huggingface",
        "Qwen/Qwen2.5-Coder-32B-Instruct",
        Some("team"),
    ),
    (
        "litellm/openai/gpt-4o@team:prod",
        "litellm",
        "openai/gpt-4o",
        Some("team:prod"),
    ),
    (
        "nvidia/nvidia/llama-3.1-nemotron-70b-instruct",
        "nvidia",
        "nvidia/llama-3.1-nemotron-70b-instruct",
        None,
    ),
    (
        "cloudflare-workers-ai/@cf/meta/llama-3.1-8b-instruct",
        "cloudflare-workers-ai",
        "@cf/meta/llama-3.1-8b-instruct",
        None,
    ),
    (
        "amazon-bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
        "amazon-bedrock",
        "anthropic.claude-3-5-sonnet-20240620-v1:0",
        None,
    ),
    ("azure-openai/gpt-5", "azure-openai", "gpt-5", None),
    (
        "groq/llama-3.3-70b-versatile",
        "groq",
        "llama-3.3-70b-versatile",
        None,
    ),
    (
        "together/meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "together",
        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        None,
    ),
    ("zai/glm-4.6", "zai", "glm-4.6", None),
    ("minimax/MiniMax-M2", "minimax", "MiniMax-M2", None),
    (
        "xai/grok-4-fast-reasoning",
        "xai",
        "grok-4-fast-reasoning",
        None,
    ),
    ("deepseek/deepseek-chat", "deepseek", "deepseek-chat", None),
    (
        "mistral/mistral-large-latest",
        "mistral",
        "mistral-large-latest",
        None,
    ),
    ("google/gemini-2.5-pro", "google", "gemini-2.5-pro", None),
    ("scripted/hello", "scripted", "hello", None),
];

#[test]
fn corpus_parses_on_the_first_slash_only() {
    assert!(CORPUS.len() >= 25);
    for (input, provider, model, profile) in CORPUS {
        let parsed = ModelRef::parse(input);
        let expected = ModelRef {
            provider: (*provider).to_owned(),
            model: (*model).to_owned(),
            auth_profile: profile.map(str::to_owned),
        };
        assert_eq!(parsed.ok(), Some(expected), "{input}");
    }
}

#[test]
fn display_and_key_never_add_a_prefix_twice() {
    for (input, ..) in CORPUS {
        let Ok(parsed) = ModelRef::parse(input) else {
            panic!("{input}")
        };
        // Re-parsing the rendered form gives the same reference.
        assert_eq!(
            ModelRef::parse(&parsed.to_string()).ok().as_ref(),
            Some(&parsed),
            "{input}"
        );
        assert_eq!(
            parsed.key(),
            format!("{}/{}", parsed.provider, parsed.model)
        );
    }
}

#[test]
fn malformed_references_are_refused() {
    for input in [
        "",
        "   ",
        "gpt-5",
        "/gpt-5",
        "openai/",
        "openai/  ",
        "open ai/gpt-5",
    ] {
        assert!(
            matches!(ModelRef::parse(input), Err(ConfigError::ModelRef { .. })),
            "{input:?}"
        );
    }
}

fn catalog() -> ModelCatalog {
    ModelCatalog::new()
        .with_alias("opus", "anthropic/claude-opus-4-5")
        .with_alias("Kimi", "openrouter/moonshotai/kimi-k2")
        .with_alias("team/fast", "groq/llama-3.3-70b-versatile")
        .with_provider("Anthropic", ["claude-opus-4-5", "claude-haiku-4-5"])
        .with_provider("openai", ["gpt-5.5", "gpt-5-mini"])
        .with_provider("azure-openai", ["gpt-5-mini"])
        .with_provider("openrouter", ["moonshotai/kimi-k2"])
        .with_default_model("anthropic/claude-opus-4-5")
}

#[test]
fn resolution_order_is_alias_then_slash_then_unique_provider_then_default() {
    let cases: &[(&str, &str, Option<&str>)] = &[
        // Aliases first, case-insensitively, even when they contain '/'.
        ("opus", "anthropic/claude-opus-4-5", None),
        ("OPUS", "anthropic/claude-opus-4-5", None),
        ("kimi", "openrouter/moonshotai/kimi-k2", None),
        ("team/fast", "groq/llama-3.3-70b-versatile", None),
        ("opus@work", "anthropic/claude-opus-4-5", Some("work")),
        // provider/model as written.
        ("openai/gpt-5.5", "openai/gpt-5.5", None),
        (
            "openrouter/moonshotai/kimi-k2",
            "openrouter/moonshotai/kimi-k2",
            None,
        ),
        // A bare id exposed by exactly one configured provider.
        ("gpt-5.5", "openai/gpt-5.5", None),
        (
            "claude-haiku-4-5@work",
            "anthropic/claude-haiku-4-5",
            Some("work"),
        ),
        // Exposed by two providers: ambiguous, so the default provider.
        ("gpt-5-mini", "anthropic/gpt-5-mini", None),
        // Exposed by nobody: the default provider.
        ("claude-next", "anthropic/claude-next", None),
    ];
    let catalog = catalog();
    for (input, key, profile) in cases {
        let resolved = catalog.resolve(input);
        assert_eq!(
            resolved.as_ref().map(ModelRef::key).ok().as_deref(),
            Some(*key),
            "{input}"
        );
        assert_eq!(
            resolved.ok().and_then(|r| r.auth_profile).as_deref(),
            *profile,
            "{input}"
        );
    }
}

#[test]
fn stale_default_falls_back_to_the_first_configured_provider_model() {
    let first = Some("anthropic/claude-opus-4-5".to_owned());
    // The default's provider was removed.
    let removed = catalog().with_default_model("google/gemini-2.5-pro");
    assert_eq!(removed.default_model().map(|m| m.key()), first);
    // The default's provider no longer lists the model.
    let dropped = catalog().with_default_model("openai/gpt-4.1");
    assert_eq!(dropped.default_model().map(|m| m.key()), first);
    // Bare ids then go to that fallback's provider, not the stale one.
    assert_eq!(
        removed
            .resolve("something")
            .map(|m| m.key())
            .ok()
            .as_deref(),
        Some("anthropic/something")
    );
    // A live default is kept, and an alias works as a default.
    let live = catalog().with_default_model("openai/gpt-5.5");
    assert_eq!(
        live.default_model().map(|m| m.key()).as_deref(),
        Some("openai/gpt-5.5")
    );
    let aliased = catalog().with_default_model("kimi");
    assert_eq!(
        aliased.default_model().map(|m| m.key()).as_deref(),
        Some("openrouter/moonshotai/kimi-k2")
    );
    // Without configured providers there is nothing to check against: trust the default.
    let bare = ModelCatalog::new().with_default_model("google/gemini-2.5-pro");
    assert_eq!(
        bare.default_model().map(|m| m.key()).as_deref(),
        Some("google/gemini-2.5-pro")
    );
}

#[test]
fn bare_ids_without_any_provider_are_an_error() {
    let empty = ModelCatalog::new();
    assert!(matches!(
        empty.resolve("gpt-5"),
        Err(ConfigError::ModelRef { .. })
    ));
    assert!(matches!(
        empty.resolve(""),
        Err(ConfigError::ModelRef { .. })
    ));
    assert_eq!(empty.default_model(), None);
}

#[test]
fn config_builds_its_catalog_from_models_and_providers() {
    let config = valid(EXAMPLE);
    assert_eq!(
        config.default_model().map(|m| m.key()).as_deref(),
        Some("anthropic/claude-opus-4-5")
    );
    let resolve = |text: &str| config.resolve_model(text).map(|m| m.to_string()).ok();
    assert_eq!(resolve("gpt").as_deref(), Some("openai/gpt-5.5"));
    assert_eq!(
        resolve("kimi@work").as_deref(),
        Some("openrouter/moonshotai/kimi-k2@work")
    );
    assert_eq!(
        resolve("moonshotai/kimi-k2").as_deref(),
        Some("moonshotai/kimi-k2")
    );
    assert_eq!(resolve("gpt-5.5").as_deref(), Some("openai/gpt-5.5"));
    assert_eq!(resolve("hello").as_deref(), Some("anthropic/hello"));
}

#[test]
fn gpt5_family_is_a_whole_segment_match() {
    for id in [
        "gpt-5",
        "gpt-5.5",
        "GPT-5",
        "gpt-5-mini",
        "gpt-5-codex",
        "gpt-5.4-pro",
        "openai/gpt-5-mini",
        "azure:gpt-5",
        "openrouter/openai/gpt-5.1",
        "openai-codex/gpt-5.5",
    ] {
        assert!(is_gpt5_family(id), "{id}");
    }
    for id in [
        "gpt-50",
        "gpt-4o",
        "gpt-4.1",
        "my-gpt-5",
        "chatgpt-5",
        "gpt5",
        "gpt-5x",
        "o3",
        "openai/gpt-4.1",
        "",
    ] {
        assert!(!is_gpt5_family(id), "{id}");
    }
}

/// R-17: a reference with a provider is judged by the same grammar whether it is
/// `agents.defaults.model` or a key of `agents.defaults.models`, and resolves to the same key.
#[test]
fn model_and_models_keys_share_one_grammar() {
    use super::support::{env, keep};
    for reference in [
        "openai/gpt-5",
        "OpenAI/gpt-5",
        "openrouter/moonshotai/kimi-k2",
        " anthropic/claude-sonnet-4-5 ",
        "openai/",
        "/gpt-5",
        "open ai/gpt-5",
    ] {
        let as_model = format!(r#"{{ agents: {{ defaults: {{ model: "{reference}" }} }} }}"#);
        let as_key =
            format!(r#"{{ agents: {{ defaults: {{ models: {{ "{reference}": {{}} }} }} }} }}"#);
        let verdict = |text: &str| {
            openclaw_config::load(text, &env(&[]), &keep())
                .map(|_| ())
                .map_err(|e| e.to_string().contains(reference.trim()))
        };
        let (model, key) = (verdict(&as_model), verdict(&as_key));
        assert_eq!(
            model.is_ok(),
            key.is_ok(),
            "{reference:?}: {model:?} vs {key:?}"
        );
        assert_eq!(
            model.is_ok(),
            ModelRef::parse(reference).is_ok(),
            "{reference:?}"
        );
        if model.is_ok() {
            let config = super::support::valid(&as_model);
            assert_eq!(
                config.default_model().map(|m| m.key()),
                ModelRef::parse(reference).ok().map(|m| m.key()),
                "{reference:?}"
            );
        }
    }
}

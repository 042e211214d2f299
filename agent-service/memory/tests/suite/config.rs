//! `memorySearch` settings: defaults, per-agent overrides, and errors naming the key.

use openclaw_memory::{Chunking, EmbeddingProvider, MemorySettings};

use super::settings_from;

#[test]
fn defaults_are_keyword_only_with_openclaw_chunking() {
    let settings = settings_from("{}").unwrap();
    assert_eq!(settings, MemorySettings::default());
    assert_eq!(
        settings.chunking,
        Chunking {
            tokens: 400,
            overlap: 80
        }
    );
    assert!(settings.embeddings.is_none());
}

#[test]
fn an_agent_entry_overrides_the_defaults_key_by_key() {
    let settings = settings_from(
        r#"{ agents: {
            defaults: { memorySearch: { provider: "ollama", chunking: { tokens: 200 } } },
            list: [{ id: "main", memorySearch: { model: "bge-m3", chunking: { overlap: 20 } } }],
        } }"#,
    )
    .unwrap();
    assert_eq!(
        settings.chunking,
        Chunking {
            tokens: 200,
            overlap: 20
        }
    );
    let e = settings.embeddings.unwrap();
    assert_eq!(
        (e.id.as_str(), e.model.as_str(), e.base_url.as_str(), e.wire),
        (
            "ollama",
            "bge-m3",
            "http://127.0.0.1:11434/v1",
            EmbeddingProvider::OpenAiCompatible
        )
    );
    assert!(e.api_key.is_none());
}

#[test]
fn a_provider_key_comes_from_models_providers_and_never_prints() {
    let settings = settings_from(
        r#"{ models: { providers: { openai: { api: "openai-responses", baseUrl: "https://api.openai.com/v1", apiKey: "sk-from-provider" } } },
             agents: { defaults: { memorySearch: { provider: "openai" } } } }"#,
    )
    .unwrap();
    let e = settings.embeddings.unwrap();
    assert_eq!(e.model, "text-embedding-3-small");
    assert_eq!(
        e.api_key.as_ref().map(|k| k.expose()),
        Some("sk-from-provider")
    );
    assert!(!format!("{e:?}").contains("sk-from-provider"));
}

#[test]
fn bad_settings_are_refused_naming_the_key() {
    let cases = [
        (
            r#"{ agents: { defaults: { memorySearch: { provider: "openai" } } } }"#,
            "agents.defaults.memorySearch.remote.apiKey: \"openai\" embeddings need an API key",
        ),
        (
            r#"{ agents: { defaults: { memorySearch: { provider: "local" } } } }"#,
            "agents.defaults.memorySearch.provider",
        ),
        (
            r#"{ agents: { defaults: { memorySearch: { provider: "openai-compatible", model: "m" } } } }"#,
            "agents.defaults.memorySearch.provider",
        ),
        (
            r#"{ agents: { defaults: { memorySearch: { chunking: { tokens: 100, overlap: 100 } } } } }"#,
            "agents.defaults.memorySearch.chunking.overlap",
        ),
        (
            r#"{ agents: { defaults: { memorySearch: { provider: "ollama", remote: { baseUrl: "ftp://x" } } } } }"#,
            "agents.defaults.memorySearch.remote.baseUrl",
        ),
        (
            r#"{ agents: { defaults: { memorySearch: { query: { hybrid: { vectorWeight: 0, textWeight: 0 } } } } } }"#,
            "agents.defaults.memorySearch.query.hybrid",
        ),
        (
            r#"{ agents: { defaults: { memorySearch: { provider: "cohere" } } } }"#,
            "agents.defaults.memorySearch.provider",
        ),
        (
            r#"{ agents: { defaults: { memorySearch: { chunkSize: 3 } } } }"#,
            "agents.defaults.memorySearch",
        ),
        (
            r#"{ agents: { list: [{ id: "main", memorySearch: { chunking: { overlap: 500 } } }] } }"#,
            "agents.list[0].memorySearch.chunking.overlap",
        ),
    ];
    for (config, expected) in cases {
        let error = settings_from(config).unwrap_err();
        assert!(error.contains(expected), "{config}\n-> {error}");
    }
}

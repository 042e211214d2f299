//! Embeddings through a scripted server on a real socket: a paraphrase is found only with
//! them, unchanged chunks are never embedded twice, and a failing server leaves keyword search
//! answering. The calls go over the model providers' transport, so an error status reads as a
//! model call's and a header HTTP cannot carry is refused naming the memory setting.

use openclaw_memory::{AgentMemory, MemorySettings, Mode};

use super::{EmbeddingServer, Fixture, REFUSED_MODEL, found, settings_from};

const PARAPHRASE: &str = "What caffeinated beverage does she have early?";

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.write("MEMORY.md", "# Habits\nDana drinks espresso at dawn.\n");
    f.write("memory/pets.md", "Her kitten is called Miso.\n");
    f.write("memory/work.md", "The report cutoff is Friday.\n");
    f
}

#[tokio::test]
async fn a_paraphrase_is_found_through_embeddings_and_not_without_them() {
    let f = fixture();
    let keyword_only = f.memory(MemorySettings::default());
    let outcome = f.search(&keyword_only, PARAPHRASE).await;
    assert_eq!(outcome.mode, Mode::Keyword);
    assert!(outcome.hits.is_empty(), "{outcome:?}");
    drop(keyword_only);

    let server = EmbeddingServer::start().await;
    let memory = f.memory(server.settings());
    let outcome = f.search(&memory, PARAPHRASE).await;
    assert_eq!(outcome.mode, Mode::Hybrid);
    assert_eq!(found(&outcome), ["MEMORY.md#L1-L2"], "{outcome:?}");
    assert!(outcome.hits[0].score >= 0.35 && outcome.hits[0].score <= 1.0);
    let pets = f.search(&memory, "Which feline pet lives with her?").await;
    assert_eq!(found(&pets), ["memory/pets.md#L1-L1"], "{pets:?}");
    let seen = server.seen.lock().unwrap();
    assert!(!seen.models.is_empty());
    assert!(seen.models.iter().all(|m| m == "concepts-1"));
    assert!(seen.auth.iter().all(|a| a == "Bearer sk-test-embeddings"));
}

#[tokio::test]
async fn unchanged_chunks_are_never_embedded_again() {
    let f = fixture();
    let server = EmbeddingServer::start().await;
    let memory = f.memory(server.settings());
    f.search(&memory, PARAPHRASE).await;
    let first = server.seen.lock().unwrap().inputs.len();
    // Three chunks and the query.
    assert_eq!(first, 4);
    // The same query again: nothing new to embed.
    f.search(&memory, PARAPHRASE).await;
    assert_eq!(server.seen.lock().unwrap().inputs.len(), first);
    // One file edited: only its chunk is embedded, plus the new query.
    f.write("memory/work.md", "The report cutoff moved to Monday.\n");
    f.search(&memory, "When is the report due?").await;
    let since: Vec<String> = server.seen.lock().unwrap().inputs[first..].to_vec();
    assert_eq!(
        since,
        [
            "The report cutoff moved to Monday.",
            "When is the report due?"
        ]
    );
    // A new process on the same index reuses the stored embeddings.
    drop(memory);
    let memory = f.memory(server.settings());
    f.search(&memory, PARAPHRASE).await;
    assert_eq!(server.seen.lock().unwrap().inputs.len(), first + 2);
}

#[tokio::test]
async fn a_failing_server_leaves_keyword_search_answering_and_says_so() {
    let f = fixture();
    // Nothing listens on this port once the listener is dropped.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let settings = settings_from(&format!(
        r#"{{ agents: {{ defaults: {{ memorySearch: {{
            provider: "openai-compatible", model: "m", remote: {{ baseUrl: "http://{addr}/v1" }},
        }} }} }} }}"#
    ))
    .unwrap();
    let memory = f.memory(settings);
    let outcome = f.search(&memory, "espresso").await;
    assert_eq!(found(&outcome), ["MEMORY.md#L1-L2"]);
    match &outcome.mode {
        Mode::KeywordFallback { reason } => {
            assert!(
                reason.starts_with("embeddings from openai-compatible:"),
                "{reason}"
            );
        }
        other => panic!("expected a keyword fallback, got {other:?}"),
    }
}

#[tokio::test]
async fn a_refusing_server_is_read_as_a_model_call_is() {
    let f = fixture();
    let server = EmbeddingServer::start().await;
    let memory = f.memory(server.settings_for(REFUSED_MODEL));
    let outcome = f.search(&memory, "espresso").await;
    assert_eq!(found(&outcome), ["MEMORY.md#L1-L2"]);
    match &outcome.mode {
        Mode::KeywordFallback { reason } => {
            assert!(
                reason.starts_with("embeddings from openai-compatible:")
                    && reason
                        .ends_with("provider refused the request (403): no access to this model"),
                "{reason}"
            );
            assert!(!reason.contains("sk-test-embeddings"), "{reason}");
        }
        other => panic!("expected a keyword fallback, got {other:?}"),
    }
}

#[tokio::test]
async fn a_header_http_cannot_carry_is_refused_naming_the_setting() {
    let f = Fixture::new();
    let server = EmbeddingServer::start().await;
    for (name, value) in [("bad header", "fine"), ("x-team", "line\nbreak")] {
        let mut settings = server.settings();
        let spec = settings.embeddings.as_mut().unwrap();
        spec.headers.insert(name.to_owned(), value.to_owned());
        let Err(error) = AgentMemory::new(settings, f.index.clone()) else {
            panic!("the header {name:?} is refused");
        };
        let error = error.to_string();
        assert!(
            error.contains(&format!(
                "memorySearch.remote.headers.{name} is not a valid HTTP header"
            )),
            "{error}"
        );
        assert!(!error.contains(value), "{error}");
    }
}

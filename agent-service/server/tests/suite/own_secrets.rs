//! The service's own bearer tokens are secrets to it: the release binary started with
//! `AGENT_SERVICE_TOKENS` hands the variable to no command, and a token that reaches the
//! agent some other way (a file it reads, in pieces through `fold`, repeated by the model) is
//! redacted in the tool result, the Run stream, the final reply and the transcript.

use agent_testkit::{FakeReply, FakeServer, WireFormat};
use openclaw_proto::agent::v1 as pb;
use serde_json::json;

use super::harness::{binary, config};
use super::process::{bearer, client_on, free_port, run_all, serving, spawn_until};
use super::run_events::{events_of, final_of};

const TOKEN: &str = "svc-token-0123456789abcdefghijklmn";
const EXEC_FULL: &str = r#"tools: { exec: { security: "full", ask: "off" } },"#;

fn authorized<T>(message: T) -> tonic::Request<T> {
    bearer(message, TOKEN)
}

#[tokio::test]
async fn the_binary_keeps_its_own_token_from_commands_and_redacts_it_in_pieces() {
    let (base_url, fake) = FakeServer::start(WireFormat::ChatCompletions)
        .await
        .expect("fake model");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("openclaw.json"),
        config(&base_url, WireFormat::ChatCompletions, "", EXEC_FULL),
    )
    .expect("config");
    // What the agent could come by without the variable: a copy of the token in a file.
    let ws = dir.path().join("state/workspace");
    std::fs::create_dir_all(&ws).expect("workspace");
    std::fs::write(ws.join("found.txt"), format!("{TOKEN}\n")).expect("file");
    let port = free_port();
    let mut child = spawn_until(
        serving(&mut binary(), dir.path(), &format!("127.0.0.1:{port}"))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("AGENT_SERVICE_TOKENS", TOKEN),
        "agent-service listening",
    )
    .await;
    let mut client = client_on(port).await;
    fake.push_all([
        FakeReply::tool_call(
            "c1",
            "exec",
            json!({ "command": "env; echo; fold -w 7 found.txt; echo; printf '%s' \"$AGENT_SERVICE_TOKENS\"" }),
        ),
        FakeReply::text(format!("Your token is {TOKEN}, and spaced: {}.", {
            let (a, b) = TOKEN.split_at(12);
            format!("{a} {b}")
        })),
    ]);
    let request = authorized(pb::RunRequest {
        message: "Show me your environment.".into(),
        ..Default::default()
    });
    let events = run_all(&mut client, request).await;
    let outputs: Vec<String> = events_of!(&events, ToolFinished)
        .into_iter()
        .map(|t| t.output)
        .collect();
    let deltas = events_of!(&events, TextDelta).concat();
    let reply = final_of(&events).text;
    let pieces: Vec<String> = TOKEN
        .as_bytes()
        .chunks(7)
        .filter(|c| c.len() == 7)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    let output = &outputs[0];
    assert!(output.contains("PATH="), "the command ran: {output}");
    assert!(!output.contains("AGENT_SERVICE_TOKENS="), "{output}");
    assert!(
        output.contains("[redacted AGENT_SERVICE_TOKENS]"),
        "{output}"
    );
    for text in [output, &deltas, &reply] {
        assert!(!text.contains(TOKEN), "{text}");
        for piece in &pieces {
            assert!(!text.contains(piece.as_str()), "{piece} in {text}");
        }
    }
    assert_eq!(
        reply,
        "Your token is [redacted AGENT_SERVICE_TOKENS], and spaced: [redacted AGENT_SERVICE_TOKENS]."
    );
    assert_eq!(deltas, reply);
    let mut transcript = client
        .get_transcript(authorized(pb::GetTranscriptRequest { session: None }))
        .await
        .expect("transcript")
        .into_inner();
    let mut stored = String::new();
    while let Some(item) = transcript.message().await.expect("item") {
        if let Some(pb::transcript_item::Item::Entry(entry)) = item.item {
            stored.push_str(&entry.json);
        }
    }
    assert!(
        stored.contains("[redacted AGENT_SERVICE_TOKENS]"),
        "{stored}"
    );
    assert!(!stored.contains(TOKEN), "{stored}");
    for piece in &pieces {
        assert!(!stored.contains(piece.as_str()), "{piece} in {stored}");
    }
    child.kill().await.expect("kill");
}

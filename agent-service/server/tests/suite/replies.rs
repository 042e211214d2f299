//! What a reply delivers over gRPC (P-18, P-21, P-34): directives taken out of the text and
//! sent as fields, the silent token delivering nothing, and the chat commands the runtime
//! answers itself.

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::disposition::Outcome;
use pb::run_event::Event;
use tonic::Code;

use super::calls::{call, refusal};
use super::harness::{Harness, block_streaming};
use super::run_events::{events_of, final_of, telegram};

fn request(message: &str, channel: Option<pb::ChannelContext>) -> pb::RunRequest {
    pb::RunRequest {
        message: message.into(),
        channel,
        ..Default::default()
    }
}

async fn run(h: &Harness, request: pb::RunRequest) -> Vec<pb::RunEvent> {
    h.service.run_events(request).await
}

fn blocks_of(events: &[pb::RunEvent]) -> Vec<pb::Block> {
    events_of!(&events, Block)
}

/// The default agent's workspace, set up, with `chart.png` in it.
async fn workspace_with_chart(h: &Harness) -> std::path::PathBuf {
    let setup = h.service.setup().await;
    let workspace = std::path::PathBuf::from(&setup.workspaces[0].workspace);
    std::fs::write(workspace.join("chart.png"), b"not really a png").expect("write chart");
    std::fs::canonicalize(workspace).expect("canonical workspace")
}

fn path_of(a: &pb::Attachment) -> Option<&str> {
    match &a.source {
        Some(pb::attachment::Source::Path(p)) => Some(p),
        _ => None,
    }
}

/// Without block streaming: the final reply is the text without directives, the directives
/// come as fields, a path outside the workspace and a non-web URL are dropped and reported,
/// and the transcript keeps what the model wrote.
#[tokio::test]
async fn directives_leave_the_text_and_arrive_as_fields() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let workspace = workspace_with_chart(&h).await;
    let raw = "[[reply_to:m-7]] Here is the chart.\nMEDIA: chart.png\nMEDIA: ../escape.png\n\
               MEDIA: file:///etc/passwd\nMEDIA: https://example.com/clip.mp4\n\
               [[audio_as_voice]]\nDone.";
    h.fake.push(FakeReply::text(raw).deltas(7));
    let events = run(&h, request("Send me the chart.", telegram())).await;
    let last = final_of(&events);
    assert_eq!(last.reply, "Here is the chart.\nDone.");
    assert_eq!(last.text, raw, "the final text is what the model wrote");
    assert!(!last.silent);
    let d = last.directives.expect("directives");
    let chart = workspace.join("chart.png").display().to_string();
    assert_eq!(
        d.attachments,
        vec![
            pb::Attachment {
                source: Some(pb::attachment::Source::Path(chart)),
                kind: pb::AttachmentKind::Image as i32,
            },
            pb::Attachment {
                source: Some(pb::attachment::Source::Url(
                    "https://example.com/clip.mp4".into()
                )),
                kind: pb::AttachmentKind::Video as i32,
            },
        ]
    );
    assert!(d.audio_as_voice);
    assert_eq!(
        d.reply_to,
        Some(pb::ReplyTarget {
            target: Some(pb::reply_target::Target::MessageId("m-7".into()))
        })
    );
    let dropped: Vec<&str> = d.dropped.iter().map(|x| x.target.as_str()).collect();
    assert_eq!(dropped, ["../escape.png", "file:///etc/passwd"]);
    assert!(
        d.dropped[1].reason.contains("http and https"),
        "{:?}",
        d.dropped
    );
    // The transcript keeps the raw reply.
    let entries = h.service.transcript_json().await;
    let stored = entries
        .iter()
        .rev()
        .find(|e| e["message"]["role"] == "assistant")
        .map(|e| e["message"]["content"].to_string())
        .unwrap_or_default();
    assert!(stored.contains("MEDIA: chart.png"), "{stored}");
}

/// With block streaming, no block carries a directive or part of one, each directive rides
/// on a block exactly once, and the final event repeats neither text nor directives.
#[tokio::test]
async fn streamed_blocks_never_carry_a_directive() {
    let h = Harness::start(WireFormat::ChatCompletions, &block_streaming(10, 60), "").await;
    let workspace = workspace_with_chart(&h).await;
    let raw = "[[reply_to_current]] The first paragraph says hello.\n\nMEDIA: chart.png\n\
               The second paragraph follows it.\nMEDIA: https://example.com/a.pdf";
    h.fake.push(FakeReply::text(raw).deltas(40));
    let events = run(&h, request("Two paragraphs, please.", telegram())).await;
    let blocks = blocks_of(&events);
    assert!(blocks.len() >= 2, "{blocks:#?}");
    for b in &blocks {
        assert!(
            !b.text.contains('[') && !b.text.contains("MEDIA"),
            "a block carries a directive: {b:?}"
        );
    }
    let text: String = blocks
        .iter()
        .map(|b| b.text.trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(
        text,
        "The first paragraph says hello. The second paragraph follows it."
    );
    let all: Vec<pb::ReplyDirectives> =
        blocks.iter().filter_map(|b| b.directives.clone()).collect();
    let attachments: Vec<pb::Attachment> = all.iter().flat_map(|d| d.attachments.clone()).collect();
    assert_eq!(attachments.len(), 2, "{all:#?}");
    assert_eq!(
        path_of(&attachments[0]),
        Some(workspace.join("chart.png").display().to_string().as_str())
    );
    assert_eq!(attachments[1].kind(), pb::AttachmentKind::File);
    let targets: Vec<_> = all.iter().filter_map(|d| d.reply_to.clone()).collect();
    assert_eq!(
        targets,
        [pb::ReplyTarget {
            target: Some(pb::reply_target::Target::Current(true))
        }]
    );
    let last = final_of(&events);
    assert_eq!(last.reply, "");
    assert_eq!(last.directives, None, "blocks carried them all");
    assert_eq!(last.text, raw);
}

/// A reply of exactly the silent token delivers nothing: no block (not even a partial token),
/// an empty reply, and the final event says so. A reply that only starts like it is delivered.
#[tokio::test]
async fn the_silent_token_delivers_nothing() {
    for defaults in [String::new(), block_streaming(1, 40)] {
        let h = Harness::start(WireFormat::ChatCompletions, &defaults, "").await;
        h.fake.push(FakeReply::text("  NO_REPLY\n").deltas(8));
        let events = run(&h, request("just chatting", telegram())).await;
        assert!(blocks_of(&events).is_empty(), "{defaults}: {events:#?}");
        let last = final_of(&events);
        assert!(last.silent, "{defaults}");
        assert_eq!(last.reply, "");
        assert_eq!(last.text, "  NO_REPLY\n", "the final text stays as written");

        h.fake
            .push(FakeReply::text("NO_REPLY needed? Here is one.").deltas(8));
        let events = run(&h, request("again", telegram())).await;
        let last = final_of(&events);
        assert!(!last.silent, "{defaults}");
        let delivered: String = if defaults.is_empty() {
            last.reply.clone()
        } else {
            blocks_of(&events).iter().map(|b| b.text.as_str()).collect()
        };
        let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(
            words(&delivered),
            "NO_REPLY needed? Here is one.",
            "{defaults}"
        );
    }
}

fn command_reply(events: &[pb::RunEvent]) -> pb::Disposition {
    match events.first().and_then(|e| e.event.clone()) {
        Some(Event::Accepted(d)) => d,
        other => panic!("no disposition first: {other:?}"),
    }
}

/// `/reasoning` sets the session's reasoning visibility: stored in the session index, shown in
/// the next prompt's Reasoning line, reported by a bare `/reasoning`, refused for a word it
/// does not take. No command reaches the model.
#[tokio::test]
async fn reasoning_command_sets_the_sessions_visibility() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let set = command_reply(&run(&h, request("/reasoning stream", telegram())).await);
    assert_eq!(set.outcome(), Outcome::Command);
    assert_eq!(
        set.reason,
        "Reasoning visibility for this session is now stream."
    );
    let shown = command_reply(&run(&h, request("/reasoning", telegram())).await);
    assert_eq!(
        shown.reason,
        "Reasoning visibility for this session is stream."
    );
    assert_eq!(h.fake.request_count(), 0, "commands never reach the model");

    let index = std::fs::read_to_string(h.service.path("state/agents/main/sessions/sessions.json"))
        .expect("index");
    let index: serde_json::Value = serde_json::from_str(&index).expect("index json");
    assert_eq!(
        index["agent:main:main"]["reasoningLevel"], "stream",
        "{index}"
    );

    h.fake.push(FakeReply::text("ok"));
    run(&h, request("hello", telegram())).await;
    let body = h.fake.requests()[0].body.to_string();
    assert!(body.contains("Reasoning: stream"), "{body}");

    let cleared = command_reply(&run(&h, request("/reasoning default", telegram())).await);
    assert!(
        cleared.reason.contains("default again"),
        "{}",
        cleared.reason
    );
    h.fake.push(FakeReply::text("ok"));
    run(&h, request("hello again", telegram())).await;
    let body = h.fake.requests()[1].body.to_string();
    assert!(body.contains("Reasoning: off"), "{body}");

    let bad = refusal!(h.service, run, request("/reasoning loud", telegram()));
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(
        bad.message().contains("message") && bad.message().contains("loud"),
        "{bad:?}"
    );
}

/// `/context list` and `/context detail` answer with the same report as the ContextReport
/// RPC, as the message's disposition, without a model call or a transcript entry.
#[tokio::test]
async fn context_commands_answer_with_the_report() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    for (message, detail) in [
        ("/context list", false),
        ("/context", false),
        ("/context detail", true),
    ] {
        let answer = command_reply(&run(&h, request(message, None)).await);
        assert_eq!(answer.outcome(), Outcome::Command, "{message}");
        let report = call!(
            h.service,
            context_report,
            pb::ContextReportRequest {
                session: None,
                detail,
            }
        );
        assert_eq!(answer.reason, report.text, "{message}");
        assert!(
            answer.reason.contains("Workspace files:"),
            "{}",
            answer.reason
        );
        assert_eq!(
            answer.reason.contains("Top tools by schema size:"),
            detail,
            "{message}"
        );
    }
    let bad = refusal!(h.service, run, request("/context everything", None));
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(bad.message().contains("list or detail"), "{bad:?}");
    assert_eq!(h.fake.request_count(), 0);
    let entries = h.service.transcript_json().await;
    assert!(
        entries.iter().all(|e| !e.to_string().contains("/context")),
        "{entries:#?}"
    );
}

/// `/status` is answered by the runtime, never the model: the status card (model, tokens,
/// compactions) and every workspace file with its raw and injected characters.
#[tokio::test]
async fn the_status_command_answers_without_a_model_call() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    std::fs::write(
        h.service.path("state/workspace/MEMORY.md"),
        "- the user likes tea\n",
    )
    .expect("memory");
    let answer = command_reply(&run(&h, request("/status", None)).await);
    assert_eq!(answer.outcome(), Outcome::Command);
    let text = answer.reason;
    assert!(text.contains("Model: fake/test-model"), "{text}");
    assert!(text.contains("Tokens: 0 in, 0 out"), "{text}");
    assert!(text.contains("Compactions: 0"), "{text}");
    assert!(text.contains("Workspace files:"), "{text}");
    assert!(text.contains("MEMORY.md"), "{text}");
    assert_eq!(h.fake.request_count(), 0, "the model was called");
    let bad = refusal!(h.service, run, request("/status now", None));
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(
        bad.message().contains("/status takes no argument"),
        "{bad:?}"
    );
}

/// P-49: a MEMORY.md cut on three turns in a row is reported where an operator looks: the
/// `/status` reply and GetSession name it with its sizes and the advice; a small MEMORY.md,
/// injected whole, produces none of it.
#[tokio::test]
async fn a_memory_file_cut_on_three_turns_is_reported_to_the_operator() {
    for (size, cut) in [(30_000, true), (2_000, false)] {
        let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
        let setup = h.service.setup().await;
        let workspace = std::path::PathBuf::from(&setup.workspaces[0].workspace);
        let memory: String = (0..size / 50)
            .map(|i| format!("- remembered fact number {i:>5}, kept for later.\n"))
            .collect();
        std::fs::write(workspace.join("MEMORY.md"), &memory).expect("write MEMORY.md");
        for turn in 1..=3 {
            h.fake.push(FakeReply::text("Noted."));
            let events = run(&h, request(&format!("Turn {turn}."), None)).await;
            assert_eq!(final_of(&events).text, "Noted.", "{events:?}");
            if turn == 2 {
                // Two cuts are not yet a pattern.
                assert!(session_of(&h).await.repeated_cuts.is_empty());
            }
        }
        let reply = command_reply(&run(&h, request("/status", None)).await).reason;
        let session = session_of(&h).await;
        let cuts = session.repeated_cuts;
        // ListSessions (encoded apart from GetSession) reports the same cuts.
        let listed = call!(h.service, list_sessions, pb::ListSessionsRequest::default()).sessions;
        let listed = listed
            .iter()
            .find(|s| s.session_key == session.session_key)
            .expect("the session is listed");
        assert_eq!(listed.repeated_cuts, cuts);
        if cut {
            assert_eq!(cuts.len(), 1, "{cuts:?}");
            let c = &cuts[0];
            assert_eq!((c.path.as_str(), c.turns), ("MEMORY.md", 3), "{c:?}");
            assert!(c.raw_chars > c.injected_chars, "{c:?}");
            assert!(c.advice.contains("memory/*.md"), "{c:?}");
            let line = format!(
                "Cut on the last 3 turns: MEMORY.md is cut to fit on every turn ({} of {} chars",
                c.injected_chars, c.raw_chars
            );
            assert!(reply.contains(&line), "{reply}");
        } else {
            assert!(cuts.is_empty(), "{cuts:?}");
            assert!(!reply.contains("Cut on the last"), "{reply}");
        }
    }
}

async fn session_of(h: &Harness) -> pb::Session {
    call!(
        h.service,
        get_session,
        pb::GetSessionRequest { session: None }
    )
}

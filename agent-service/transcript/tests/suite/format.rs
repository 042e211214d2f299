//! Requirement 2: the line format, exact shapes, round trips and forward compatibility.

use std::collections::HashSet;

use openclaw_transcript::{
    AssistantMessage, BadLineReason, ContentBlock, Entry, EntryBody, EntryId, ImageContent,
    Message, ReadOptions, StopReason, TextContent, ThinkingContent, ToolCall, ToolResultMessage,
    Usage, UserContent, UserMessage, for_each_entry,
};
use proptest::prelude::*;
use serde_json::json;

use super::fixture::{append_raw, fresh, lines, user};

fn read_all(path: &std::path::Path) -> (Vec<Entry>, openclaw_transcript::LoadReport) {
    let mut entries = Vec::new();
    let report = for_each_entry(path, ReadOptions::default(), |e| entries.push(e)).unwrap();
    (entries, report)
}

#[test]
fn header_is_line_one_with_the_documented_fields() {
    let t = fresh();
    assert_eq!(
        lines(&t.path),
        [format!(
            r#"{{"type":"session","version":3,"id":"{}","timestamp":"2026-07-05T12:00:00.000Z","cwd":"/work/space","sessionKey":"agent:main:main"}}"#,
            t.id
        )]
    );
}

fn assistant() -> EntryBody {
    EntryBody::Message {
        message: Message::Assistant(AssistantMessage {
            content: vec![
                ContentBlock::Thinking(ThinkingContent {
                    thinking: "plan".into(),
                    thinking_signature: Some("sig".into()),
                    redacted: false,
                }),
                ContentBlock::text("Reading it."),
                ContentBlock::ToolCall(ToolCall {
                    id: "call_1".into(),
                    name: "read".into(),
                    arguments: json!({"path": "README.md", "limit": [1, 2]}),
                }),
            ],
            provider: "anthropic".into(),
            model: "claude-opus-4".into(),
            api: Some("anthropic-messages".into()),
            usage: Some(Usage {
                input: 10,
                output: 5,
                cache_read: 100,
                cache_write: 0,
                total_tokens: 115,
                cost: None,
            }),
            stop_reason: StopReason::ToolUse,
            error_message: None,
            timestamp: 1_751_716_801_000,
        }),
    }
}

fn tool_result() -> EntryBody {
    EntryBody::Message {
        message: Message::ToolResult(ToolResultMessage {
            tool_call_id: "call_1".into(),
            tool_name: "read".into(),
            content: vec![ContentBlock::text("Title")],
            is_error: false,
            details: Some(json!({"bytes": 7})),
            timestamp: 1_751_716_802_000,
        }),
    }
}

#[test]
fn message_lines_have_the_documented_shape() {
    let mut t = fresh();
    let plain = EntryBody::Message {
        message: Message::User(UserMessage {
            content: UserContent::Text("hello".into()),
            timestamp: 1_751_716_800_000,
        }),
    };
    let a = t.writer.append(plain).unwrap();
    let b = t.writer.append(assistant()).unwrap();
    let c = t.writer.append_and_sync(tool_result()).unwrap();
    let lines = lines(&t.path);
    let ts = r#""timestamp":"2026-07-05T12:00:00.000Z""#;
    assert_eq!(
        lines[1..],
        [
            format!(
                r#"{{"type":"message","id":"{}","parentId":null,{ts},"message":{{"role":"user","content":"hello","timestamp":1751716800000}}}}"#,
                a.id
            ),
            format!(
                concat!(
                    r#"{{"type":"message","id":"{}","parentId":"{}",{},"message":{{"role":"assistant","content":["#,
                    r#"{{"type":"thinking","thinking":"plan","thinkingSignature":"sig"}},"#,
                    r#"{{"type":"text","text":"Reading it."}},"#,
                    r#"{{"type":"toolCall","id":"call_1","name":"read","arguments":{{"path":"README.md","limit":[1,2]}}}}],"#,
                    r#""provider":"anthropic","model":"claude-opus-4","api":"anthropic-messages","#,
                    r#""usage":{{"input":10,"output":5,"cacheRead":100,"cacheWrite":0,"totalTokens":115}},"#,
                    r#""stopReason":"toolUse","timestamp":1751716801000}}}}"#
                ),
                b.id, a.id, ts
            ),
            format!(
                concat!(
                    r#"{{"type":"message","id":"{}","parentId":"{}",{},"message":{{"role":"toolResult","#,
                    r#""toolCallId":"call_1","toolName":"read","content":[{{"type":"text","text":"Title"}}],"#,
                    r#""isError":false,"details":{{"bytes":7}},"timestamp":1751716802000}}}}"#
                ),
                c.id, b.id, ts
            ),
        ]
    );
}

#[test]
fn every_entry_type_round_trips_through_a_file() {
    let mut t = fresh();
    let first = t.writer.append(user("hi")).unwrap();
    let bodies = vec![
        assistant(),
        tool_result(),
        EntryBody::Message {
            message: Message::User(UserMessage {
                content: UserContent::Blocks(vec![
                    ContentBlock::text("look"),
                    ContentBlock::Image(ImageContent {
                        data: "iVBORw0KGgo=".into(),
                        mime_type: "image/png".into(),
                    }),
                ]),
                timestamp: 3,
            }),
        },
        EntryBody::ModelChange {
            provider: "openai".into(),
            model_id: "gpt-5".into(),
        },
        EntryBody::ThinkingLevelChange {
            thinking_level: "high".into(),
        },
        EntryBody::Compaction {
            summary: "we talked".into(),
            first_kept_entry_id: first.id.clone(),
            tokens_before: 120_000,
            details: None,
            from_hook: None,
        },
        EntryBody::BranchSummary {
            from_id: first.id.clone(),
            summary: "abandoned".into(),
            details: Some(json!({"files": ["a"]})),
            from_hook: Some(false),
        },
        EntryBody::Custom {
            custom_type: "memory-flush".into(),
            data: Some(json!({"at": 1})),
        },
        EntryBody::CustomMessage {
            custom_type: "subagent-announce".into(),
            content: UserContent::Text("done".into()),
            details: None,
            display: true,
        },
        EntryBody::Label {
            target_id: first.id.clone(),
            label: Some("checkpoint".into()),
        },
        EntryBody::SessionInfo {
            name: Some("Refactor".into()),
        },
    ];
    for body in bodies.clone() {
        t.writer.append(body).unwrap();
    }
    t.writer.sync().unwrap();
    let (entries, report) = read_all(&t.path);
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.entries, 12);
    let read: Vec<EntryBody> = entries.into_iter().skip(1).map(|e| e.body).collect();
    assert_eq!(read, bodies);
}

#[test]
fn unknown_types_roles_and_blocks_read_back_opaque_and_re_serialise_unchanged() {
    let t = fresh();
    let unknown_type = json!({"type": "future_thing", "id": "0000000a", "parentId": null,
        "timestamp": "2026-07-05T12:00:00.000Z", "payload": {"nested": [1, 2]}});
    let unknown_role = json!({"type": "message", "id": "0000000b", "parentId": "0000000a",
        "timestamp": "2026-07-05T12:00:00.000Z",
        "message": {"role": "bashExecution", "command": "ls", "output": "a", "timestamp": 1}});
    let unknown_block = json!({"type": "message", "id": "0000000c", "parentId": "0000000b",
        "timestamp": "2026-07-05T12:00:00.000Z",
        "message": {"role": "user", "timestamp": 1,
                    "content": [{"type": "audio", "data": "AA==", "format": "wav"}]}});
    for line in [&unknown_type, &unknown_role, &unknown_block] {
        append_raw(&t.path, format!("{line}\n").as_bytes());
    }
    let (entries, report) = read_all(&t.path);
    assert!(report.is_clean(), "{report:?}");
    match &entries[0].body {
        EntryBody::Unknown(fields) => {
            assert_eq!(entries[0].body.type_name(), "future_thing");
            assert_eq!(fields["payload"], json!({"nested": [1, 2]}));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &entries[1].body,
        EntryBody::Message { message: Message::Other(fields) } if fields["command"] == "ls"
    ));
    assert!(matches!(
        &entries[2].body,
        EntryBody::Message { message: Message::User(UserMessage { content: UserContent::Blocks(blocks), .. }) }
            if matches!(&blocks[0], ContentBlock::Other(fields) if fields["format"] == "wav")
    ));
    for (entry, original) in entries
        .iter()
        .zip([unknown_type, unknown_role, unknown_block])
    {
        assert_eq!(serde_json::to_value(entry).unwrap(), original);
    }
}

#[test]
fn a_newer_stop_reason_and_partial_usage_still_load() {
    let t = fresh();
    let line = json!({"type": "message", "id": "0000000a", "parentId": null,
        "timestamp": "2026-07-05T12:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hm"}],
                    "provider": "p", "model": "m", "usage": {"input": 3, "output": 1},
                    "stopReason": "pauseTurn", "timestamp": 1}});
    append_raw(&t.path, format!("{line}\n").as_bytes());
    let (entries, report) = read_all(&t.path);
    assert!(report.is_clean(), "{report:?}");
    let EntryBody::Message {
        message: Message::Assistant(reply),
    } = &entries[0].body
    else {
        panic!("{:?}", entries[0].body);
    };
    assert_eq!(reply.stop_reason, StopReason::Other("pauseTurn".into()));
    assert_eq!(reply.stop_reason.as_str(), "pauseTurn");
    let usage = reply.usage.as_ref().unwrap();
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.total_tokens
        ),
        (3, 1, 0, 0)
    );
}

#[test]
fn a_known_type_with_a_malformed_body_is_a_reported_bad_line() {
    let t = fresh();
    append_raw(
        &t.path,
        br#"{"type":"model_change","id":"0000000a","parentId":null,"timestamp":"t","provider":"p"}
"#,
    );
    let (entries, report) = read_all(&t.path);
    assert!(entries.is_empty());
    assert_eq!(report.bad_line_count, 1);
    assert_eq!(report.bad_lines[0].line_no, 2);
    assert!(
        matches!(&report.bad_lines[0].reason, BadLineReason::NotARecord(m) if m.contains("modelId")),
        "{report:?}"
    );
}

#[test]
fn ids_are_eight_lowercase_hex_unique_and_chained() {
    let mut t = fresh();
    for n in 0..2000 {
        t.writer.append(user(&format!("m{n}"))).unwrap();
    }
    let (entries, report) = read_all(&t.path);
    assert!(report.is_clean());
    let mut seen = HashSet::new();
    let mut parent: Option<EntryId> = None;
    for entry in &entries {
        let id = entry.id.as_str();
        assert!(
            id.len() == 8 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "{id}"
        );
        assert!(seen.insert(id.to_owned()), "duplicate {id}");
        assert_eq!(entry.parent_id, parent);
        assert_eq!(entry.timestamp, "2026-07-05T12:00:00.000Z");
        parent = Some(entry.id.clone());
    }
    assert_eq!(report.leaf, parent);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any text, newlines, NULs and U+2028 included, stays on one line and reads back equal.
    #[test]
    fn any_text_round_trips_on_one_line(texts in proptest::collection::vec(any::<String>(), 1..8)) {
        let mut t = fresh();
        for text in &texts {
            t.writer.append(user(text)).unwrap();
        }
        let (entries, report) = read_all(&t.path);
        prop_assert!(report.is_clean());
        prop_assert_eq!(lines(&t.path).len(), texts.len() + 1);
        let read: Vec<String> = entries.iter().map(|e| match &e.body {
            EntryBody::Message { message: Message::User(UserMessage { content: UserContent::Blocks(b), .. }) } => match &b[0] {
                ContentBlock::Text(TextContent { text }) => text.clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }).collect();
        prop_assert_eq!(read, texts);
    }

    /// Garbage lines between valid ones never stop a load: every valid entry comes back, in
    /// order, and every garbage line is counted.
    #[test]
    fn garbage_lines_are_skipped_and_counted(
        plan in proptest::collection::vec(
            prop_oneof![Just(None), proptest::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..64).prop_map(Some)],
            1..24,
        )
    ) {
        let mut t = fresh();
        let mut expected = Vec::new();
        let mut garbage = 0;
        for step in &plan {
            match step {
                None => {
                    // Appending through a fresh writer also exercises tail handling.
                    let entry = t.writer.append(user("ok")).unwrap();
                    expected.push(entry.id);
                }
                Some(bytes) => {
                    let mut line = b"#".to_vec();
                    line.extend_from_slice(bytes);
                    line.push(b'\n');
                    append_raw(&t.path, &line);
                    garbage += 1;
                }
            }
        }
        let (entries, report) = read_all(&t.path);
        let ids: Vec<EntryId> = entries.into_iter().map(|e| e.id).collect();
        prop_assert_eq!(ids, expected);
        prop_assert_eq!(report.bad_line_count, garbage);
        prop_assert!(report.torn_tail.is_none());
    }

    /// Decoding arbitrary bytes never panics.
    #[test]
    fn arbitrary_lines_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let t = fresh();
        append_raw(&t.path, &bytes);
        let _ = read_all(&t.path);
        let _ = openclaw_transcript::read_tail(&t.path, 3, ReadOptions::default()).unwrap();
    }
}

#[test]
fn entry_serialisation_puts_common_fields_first() {
    let entry = Entry {
        id: EntryId::new("0000002a"),
        parent_id: None,
        timestamp: "2026-07-05T12:00:00.000Z".into(),
        body: EntryBody::SessionInfo { name: None },
    };
    let line = serde_json::to_string(&entry).unwrap();
    assert_eq!(
        line,
        r#"{"type":"session_info","id":"0000002a","parentId":null,"timestamp":"2026-07-05T12:00:00.000Z"}"#
    );
    let back: Entry = serde_json::from_str(&line).unwrap();
    assert_eq!(back, entry);
}

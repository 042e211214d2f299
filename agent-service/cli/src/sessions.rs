//! `openclaw sessions`: list sessions, show a transcript readably, reset or
//! delete a session.

use openclaw_proto::agent::v1::{self as pb, transcript_item::Item};
use openclaw_transcript::{ContentBlock, Entry, EntryBody, Message, UserContent};

use crate::{
    client::{Client, Target},
    error::CliError,
    term::{Term, columns},
};

/// Sessions asked for per `ListSessions` call in `list`.
const LIST_PAGE: u32 = 1_000;

/// Tool arguments and results are cut to this many characters in `show`.
const SUMMARY_CHARS: usize = 120;

/// `openclaw sessions list`: an agent's sessions, most recently updated first.
pub async fn list(client: &mut Client, agent: &str, term: &mut Term<'_>) -> Result<(), CliError> {
    // Page by page, so an agent with many sessions never needs one huge response.
    let mut sessions = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .list_sessions(pb::ListSessionsRequest {
                agent_id: agent.to_owned(),
                page_size: LIST_PAGE,
                page_token,
                // The table shows ids, usage and overrides: every field.
                view: pb::SessionView::Full as i32,
            })
            .await?
            .into_inner();
        sessions.extend(page.sessions);
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    if sessions.is_empty() {
        term.line("no sessions yet; start one with `openclaw chat`")?;
        return Ok(());
    }
    let mut rows = vec![columns([
        "KEY",
        "SESSION ID",
        "UPDATED",
        "TOKENS IN/OUT",
        "MODEL OVERRIDE",
    ])];
    for s in sessions {
        let usage = s.usage.unwrap_or_default();
        rows.push(vec![
            s.session_key,
            s.session_id,
            s.updated_at.map(|t| t.to_string()).unwrap_or_default(),
            format!("{}/{}", usage.input, usage.output),
            s.model_override,
        ]);
    }
    term.table(&rows)?;
    Ok(())
}

/// `openclaw sessions show KEY`: every transcript entry as one readable
/// block (role and text; tool calls and results summarised), then the load
/// report.
pub async fn show(
    client: &mut Client,
    target: &Target,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let request = client
        .for_session(target, |session| pb::GetTranscriptRequest { session })
        .await?;
    let mut call = client.clone();
    let mut stream = client.open(call.get_transcript(request)).await?;
    // An entry over 1 MiB arrives in parts; its line is their `json` joined.
    let mut partial: Option<pb::TranscriptEntry> = None;
    while let Some(item) = client.next(&mut stream).await? {
        match item.item {
            Some(Item::Entry(entry)) => {
                let whole = match partial.take() {
                    Some(mut head) if head.seq == entry.seq => {
                        head.json.push_str(&entry.json);
                        head.json_continues = entry.json_continues;
                        head
                    }
                    // A part whose rest never came: shown as it is (a
                    // broken line), then the next entry.
                    Some(cut) => {
                        term.line(&describe_entry(&cut))?;
                        entry
                    }
                    None => entry,
                };
                if whole.json_continues {
                    partial = Some(whole);
                } else {
                    term.line(&describe_entry(&whole))?;
                }
            }
            Some(Item::Report(report)) => {
                if let Some(cut) = partial.take() {
                    term.line(&describe_entry(&cut))?;
                }
                for line in describe_report(&report) {
                    term.note(&line)?;
                }
            }
            None => {}
        }
    }
    Ok(())
}

/// `openclaw sessions reset KEY`: a new session id; the transcript is archived.
pub async fn reset(
    client: &mut Client,
    target: &Target,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let session = new_session_id(client, target).await?;
    term.line(&format!(
        "{}: new session {}",
        session.session_key, session.session_id
    ))?;
    Ok(())
}

/// Gives `target`'s key a new session id (the transcript is archived): `sessions reset` and
/// chat's `/new` both come here.
pub(crate) async fn new_session_id(
    client: &mut Client,
    target: &Target,
) -> Result<pb::Session, CliError> {
    let request = client
        .for_session(target, |session| pb::ResetSessionRequest { session })
        .await?;
    Ok(client.reset_session(request).await?.into_inner())
}

/// `openclaw sessions delete KEY`: removed from the index; the transcript is archived.
pub async fn delete(
    client: &mut Client,
    target: &Target,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let request = client
        .for_session(target, |session| pb::DeleteSessionRequest { session })
        .await?;
    let deleted = client.delete_session(request).await?.into_inner();
    if deleted.archived_transcript.is_empty() {
        term.line("deleted (it had no transcript)")?;
    } else {
        term.line(&format!(
            "deleted; transcript archived at {}",
            deleted.archived_transcript
        ))?;
    }
    Ok(())
}

/// One transcript entry as text: `#seq` then what it records.
pub fn describe_entry(entry: &pb::TranscriptEntry) -> String {
    let head = format!("#{}", entry.seq);
    if entry.r#type == "session" {
        let header: serde_json::Value = serde_json::from_str(&entry.json).unwrap_or_default();
        let field = |name: &str| header[name].as_str().unwrap_or_default().to_owned();
        return format!(
            "{head} session {} · started {} · cwd {}",
            field("id"),
            field("timestamp"),
            field("cwd")
        );
    }
    match serde_json::from_str::<Entry>(&entry.json) {
        Ok(parsed) => format!("{head} {}", describe_body(&parsed.body)),
        Err(error) => format!("{head} {} (unreadable: {error})", entry.r#type),
    }
}

fn describe_body(body: &EntryBody) -> String {
    match body {
        EntryBody::Message { message } => describe_message(message),
        EntryBody::ModelChange { provider, model_id } => {
            format!("model changed to {provider}/{model_id}")
        }
        EntryBody::ThinkingLevelChange { thinking_level } => {
            format!("thinking level changed to {thinking_level}")
        }
        EntryBody::Compaction {
            summary,
            tokens_before,
            ..
        } => format!(
            "compaction ({tokens_before} tokens before): {}",
            shorten(summary)
        ),
        EntryBody::BranchSummary { summary, .. } => {
            format!("branch summary: {}", shorten(summary))
        }
        EntryBody::Custom { custom_type, .. } => format!("custom {custom_type}"),
        EntryBody::CustomMessage {
            custom_type,
            content,
            ..
        } => format!(
            "custom message {custom_type}: {}",
            indent(&user_text(content))
        ),
        EntryBody::Label { target_id, label } => match label {
            Some(label) => format!("label {target_id}: {label}"),
            None => format!("label {target_id} cleared"),
        },
        EntryBody::SessionInfo { name } => {
            format!("session info: {}", name.as_deref().unwrap_or("(no name)"))
        }
        EntryBody::Unknown(fields) => fields
            .get("type")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("unknown entry")
            .to_owned(),
    }
}

fn describe_message(message: &Message) -> String {
    match message {
        Message::User(user) => format!("user: {}", indent(&user_text(&user.content))),
        Message::Assistant(reply) => {
            let mut text = Vec::new();
            let mut extra = Vec::new();
            for block in &reply.content {
                match block {
                    ContentBlock::Text(t) => text.push(t.text.as_str()),
                    ContentBlock::Thinking(t) => {
                        extra.push(format!("(thinking, {} chars)", t.thinking.chars().count()));
                    }
                    ContentBlock::ToolCall(call) => {
                        extra.push(format!(
                            "→ {} {}",
                            call.name,
                            shorten(&call.arguments.to_string())
                        ));
                    }
                    ContentBlock::Image(_) => extra.push("(image)".to_owned()),
                    ContentBlock::Other(_) => extra.push("(other block)".to_owned()),
                }
            }
            let mut out = format!(
                "assistant ({}/{}, {}): {}",
                reply.provider,
                reply.model,
                reply.stop_reason.as_str(),
                indent(&text.join("\n"))
            );
            if let Some(error) = &reply.error_message {
                extra.push(format!("error: {error}"));
            }
            if let Some(usage) = &reply.usage {
                extra.push(format!("usage: {} in, {} out", usage.input, usage.output));
            }
            for line in extra {
                out.push_str("\n    ");
                out.push_str(&line);
            }
            out
        }
        Message::ToolResult(result) => {
            let text = blocks_text(&result.content);
            let mark = if result.is_error { "✗" } else { "✓" };
            format!(
                "tool result {} {mark} ({} chars): {}",
                result.tool_name,
                text.chars().count(),
                shorten(&text)
            )
        }
        Message::Other(fields) => format!(
            "message ({})",
            fields
                .get("role")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("unknown role")
        ),
    }
}

/// The load report: entries, the torn tail, every bad line.
fn describe_report(report: &pb::LoadReport) -> Vec<String> {
    let mut lines = vec![format!(
        "· load report: {} entries · torn tail {} · {} bad line{}",
        report.entries,
        if report.torn_tail_dropped {
            "dropped"
        } else {
            "none"
        },
        report.bad_lines.len(),
        if report.bad_lines.len() == 1 { "" } else { "s" }
    )];
    for bad in &report.bad_lines {
        lines.push(format!(
            "· line {} (byte {}): {}",
            bad.line, bad.offset, bad.reason
        ));
    }
    lines
}

fn user_text(content: &UserContent) -> String {
    match content {
        UserContent::Text(text) => text.clone(),
        UserContent::Blocks(blocks) => blocks_text(blocks),
    }
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

/// Continuation lines indented under the entry's first line.
fn indent(text: &str) -> String {
    let lines: Vec<String> = text
        .trim_end()
        .lines()
        .enumerate()
        .map(|(i, line)| match (i, line.is_empty()) {
            (0, _) | (_, true) => line.to_owned(),
            _ => format!("    {line}"),
        })
        .collect();
    lines.join("\n")
}

/// The first line, cut to [`SUMMARY_CHARS`] with an ellipsis.
fn shorten(text: &str) -> String {
    let first = text.trim().lines().next().unwrap_or_default();
    let cut: String = first.chars().take(SUMMARY_CHARS).collect();
    if cut.len() < text.trim().len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(seq: u64, kind: &str, json: &str) -> pb::TranscriptEntry {
        pb::TranscriptEntry {
            seq,
            r#type: kind.into(),
            json: json.into(),
            ..Default::default()
        }
    }

    #[test]
    fn messages_read_as_role_and_text() {
        let user = entry(
            2,
            "message",
            r#"{"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi\nthere","timestamp":1}}"#,
        );
        assert_eq!(describe_entry(&user), "#2 user: hi\n    there");
        assert_eq!(indent("a\n\nb\n"), "a\n\n    b");
        let call = entry(
            3,
            "message",
            r#"{"type":"message","id":"00000002","parentId":"00000001","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"AGENTS.md"}}],"provider":"scripted","model":"demo","stopReason":"toolUse","timestamp":1}}"#,
        );
        assert_eq!(
            describe_entry(&call),
            "#3 assistant (scripted/demo, toolUse): Looking.\n    → read {\"path\":\"AGENTS.md\"}"
        );
        let result = entry(
            4,
            "message",
            r#"{"type":"message","id":"00000003","parentId":"00000002","timestamp":"t","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"line one\nline two"}],"isError":false,"timestamp":1}}"#,
        );
        assert_eq!(
            describe_entry(&result),
            "#4 tool result read ✓ (17 chars): line one…"
        );
    }

    #[test]
    fn a_broken_line_is_named_not_fatal() {
        let broken = entry(5, "message", "{");
        assert!(describe_entry(&broken).starts_with("#5 message (unreadable: "));
    }
}

//! Conversions between `openclaw.agent.v1` messages and runtime types.

use agent_runtime::origin::Origin;
use agent_runtime::skills::Discovery;
use agent_runtime::{
    RuntimeError,
    prompt_input::TurnChannel,
    run::{Acceptance, CompactionPhase, RunEvent},
    sessions::{
        NewSession, SessionInfo, SessionTarget,
        queue::{Disposition, QueueMode},
    },
};
use openclaw_proto::agent::v1 as pb;
use openclaw_tools::untrusted::META_VALUE_CHARS;
use openclaw_transcript::{BadLineReason, Entry, EntryBody, LoadReport, Message, SessionHeader};

/// Milliseconds since the epoch to a protobuf timestamp.
pub fn timestamp_ms(ms: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: i32::try_from(ms.rem_euclid(1000) * 1_000_000).unwrap_or(0),
    }
}

/// An RFC 3339 string to a protobuf timestamp (None when it does not parse).
fn timestamp_rfc3339(text: &str) -> Option<prost_types::Timestamp> {
    text.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| timestamp_ms(t.as_millisecond()))
}

/// The agent and target a `SessionRef` names. No reference, or no target,
/// means the default agent's main session (as everywhere in the API).
pub fn target_of(session: Option<pb::SessionRef>) -> (String, SessionTarget) {
    let pb::SessionRef { agent_id, target } = session.unwrap_or_default();
    let target = match target {
        Some(pb::session_ref::Target::SessionKey(key)) => SessionTarget::Key(key),
        Some(pb::session_ref::Target::SessionId(id)) => SessionTarget::Id(id),
        None => SessionTarget::Key(String::new()),
    };
    (agent_id, target)
}

/// Chat type as stored in the index.
pub fn chat_type_name(chat_type: i32) -> Result<Option<String>, RuntimeError> {
    let kind = pb::ChatType::try_from(chat_type).map_err(|_| {
        RuntimeError::invalid("chat_type", format!("unknown enum value {chat_type}"))
    })?;
    Ok(match kind {
        pb::ChatType::Unspecified => None,
        pb::ChatType::Direct => Some("direct".to_owned()),
        pb::ChatType::Group => Some("group".to_owned()),
        pb::ChatType::Channel => Some("channel".to_owned()),
    })
}

pub(crate) fn chat_type_of(stored: Option<&str>) -> pb::ChatType {
    match stored {
        Some("direct") => pb::ChatType::Direct,
        Some("group") => pb::ChatType::Group,
        Some("channel" | "room") => pb::ChatType::Channel,
        _ => pb::ChatType::Unspecified,
    }
}

/// Metadata of a CreateSession request.
pub fn new_session(req: &pb::CreateSessionRequest) -> Result<NewSession, RuntimeError> {
    let non_empty = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
    Ok(NewSession {
        channel: non_empty(&req.channel),
        chat_type: chat_type_name(req.chat_type)?,
        display_name: non_empty(&req.display_name),
    })
}

/// A session for the API.
pub fn session_to_pb(
    info: SessionInfo,
    workspace: String,
    cuts: &[agent_runtime::bootstrap_cuts::RepeatedCut],
) -> pb::Session {
    let SessionInfo {
        agent_id,
        key,
        entry,
    } = info;
    pb::Session {
        agent_id,
        session_key: key.as_str().to_owned(),
        session_id: entry.session_id.to_string(),
        created_at: Some(timestamp_ms(entry.created_at)),
        updated_at: Some(timestamp_ms(entry.updated_at)),
        channel: entry.channel.clone().unwrap_or_default(),
        chat_type: chat_type_of(entry.chat_type.as_deref()) as i32,
        display_name: entry.display_name.clone().unwrap_or_default(),
        model_override: entry.model_override.clone().unwrap_or_default(),
        usage: Some(pb::TokenUsage {
            input: entry.input_tokens,
            output: entry.output_tokens,
            total: entry.total_tokens,
            cache_read: entry.cache_read,
            cache_write: entry.cache_write,
        }),
        workspace,
        compactions: entry.compaction_count,
        repeated_cuts: cuts.iter().map(cut_to_pb).collect(),
    }
}

/// A session as a `SESSION_VIEW_BASIC` list carries it: the fields a list shows, every
/// other one at its zero value.
pub fn basic_session_to_pb(info: &SessionInfo) -> pb::Session {
    let entry = &info.entry;
    pb::Session {
        session_key: info.key.as_str().to_owned(),
        updated_at: Some(timestamp_ms(entry.updated_at)),
        channel: entry.channel.clone().unwrap_or_default(),
        chat_type: chat_type_of(entry.chat_type.as_deref()) as i32,
        display_name: entry.display_name.clone().unwrap_or_default(),
        ..pb::Session::default()
    }
}

/// A bootstrap file cut on every turn, with its advice.
pub fn cut_to_pb(cut: &agent_runtime::bootstrap_cuts::RepeatedCut) -> pb::RepeatedCut {
    pb::RepeatedCut {
        path: cut.path.clone(),
        raw_chars: cut.raw_chars,
        injected_chars: cut.injected_chars,
        turns: cut.renders,
        advice: cut.advice(),
    }
}

/// A transcript header as the first stream entry.
pub fn header_to_pb(header: &SessionHeader) -> pb::TranscriptEntry {
    pb::TranscriptEntry {
        seq: 1,
        r#type: "session".to_owned(),
        id: String::new(),
        parent_id: String::new(),
        timestamp: timestamp_rfc3339(&header.timestamp),
        role: String::new(),
        json: serde_json::to_string(header).unwrap_or_default(),
        json_continues: false,
    }
}

/// A transcript entry for the stream.
pub fn entry_to_pb(seq: u64, entry: &Entry) -> pb::TranscriptEntry {
    let role = match &entry.body {
        EntryBody::Message { message } => match message {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
            Message::Other(_) => "other",
        },
        _ => "",
    };
    pb::TranscriptEntry {
        seq,
        r#type: entry.body.type_name().to_owned(),
        id: entry.id.to_string(),
        parent_id: entry
            .parent_id
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        timestamp: timestamp_rfc3339(&entry.timestamp),
        role: role.to_owned(),
        json: serde_json::to_string(entry).unwrap_or_default(),
        json_continues: false,
    }
}

/// The load report that ends a transcript stream.
pub fn report_to_pb(report: &LoadReport) -> pb::LoadReport {
    pb::LoadReport {
        entries: report.entries + u64::from(report.header.is_some()),
        torn_tail_dropped: report.torn_tail.is_some(),
        bad_lines: report
            .bad_lines
            .iter()
            .map(|b| pb::BadLine {
                line: b.line_no,
                offset: b.offset,
                reason: match &b.reason {
                    BadLineReason::TooLong => "line too long".to_owned(),
                    BadLineReason::NulBytes => "NUL bytes".to_owned(),
                    BadLineReason::InvalidUtf8 => "invalid UTF-8".to_owned(),
                    BadLineReason::InvalidJson(m) => format!("invalid JSON: {m}"),
                    BadLineReason::NotARecord(m) => format!("not a transcript record: {m}"),
                    BadLineReason::MisplacedHeader => "a session header after line 1".to_owned(),
                },
            })
            .collect(),
    }
}

/// Discovered skills for the API.
pub fn skills_to_pb(discovery: &Discovery) -> pb::ListSkillsResponse {
    pb::ListSkillsResponse {
        skills: discovery
            .skills
            .iter()
            .map(|s| pb::SkillInfo {
                name: s.name.clone(),
                description: s.description.clone(),
                location: s.display_location.clone(),
                version: s.version.clone(),
                source: s.root.kind.source().to_owned(),
                model_invocable: s.model_invocable,
            })
            .collect(),
        collisions: discovery
            .collisions
            .iter()
            .map(|c| pb::SkillCollision {
                name: c.name.clone(),
                kept: c.kept.location.display().to_string(),
                shadowed: c.shadowed.location.display().to_string(),
            })
            .collect(),
        skipped: discovery
            .skipped
            .iter()
            .map(|s| pb::SkippedSkill {
                path: s.path.display().to_string(),
                reason: s.reason.to_string(),
            })
            .collect(),
    }
}

/// The runtime's view of a channel context. The sender's id and name and the group id are
/// bounded (they reach the model in a message's metadata).
pub fn channel_of(channel: Option<pb::ChannelContext>) -> Result<TurnChannel, RuntimeError> {
    let pb::ChannelContext {
        channel,
        chat_type,
        sender_id,
        capabilities,
        native_approvals,
        message_tool_only,
        group_context,
        sender_name,
        group_id,
    } = channel.unwrap_or_default();
    for (field, value) in [
        ("channel.sender_id", &sender_id),
        ("channel.sender_name", &sender_name),
        ("channel.group_id", &group_id),
    ] {
        if value.chars().count() > META_VALUE_CHARS {
            return Err(RuntimeError::invalid(
                field,
                format!("must be at most {META_VALUE_CHARS} characters"),
            ));
        }
    }
    Ok(TurnChannel {
        channel: channel.trim().to_lowercase(),
        chat_type: chat_type_name(chat_type)?.unwrap_or_default(),
        capabilities,
        native_approvals,
        message_tool_only,
        group_context,
        sender_id,
        sender_name,
        group_id,
    })
}

fn usage_to_pb(usage: &openclaw_transcript::Usage) -> pb::Usage {
    pb::Usage {
        input: usage.input,
        output: usage.output,
        cache_read: usage.cache_read,
        cache_write: usage.cache_write,
    }
}

/// The queue mode a request asks for (`None`: the session's or config's).
pub fn queue_mode_of(value: i32) -> Result<Option<QueueMode>, RuntimeError> {
    match pb::QueueMode::try_from(value) {
        Ok(pb::QueueMode::Unspecified) => Ok(None),
        Ok(pb::QueueMode::Steer) => Ok(Some(QueueMode::Steer)),
        Ok(pb::QueueMode::Followup) => Ok(Some(QueueMode::Followup)),
        Ok(pb::QueueMode::Collect) => Ok(Some(QueueMode::Collect)),
        Ok(pb::QueueMode::Interrupt) => Ok(Some(QueueMode::Interrupt)),
        Err(_) => Err(RuntimeError::invalid(
            "queue_mode",
            format!("unknown queue mode {value}"),
        )),
    }
}

fn queue_mode_to_pb(mode: QueueMode) -> pb::QueueMode {
    match mode {
        QueueMode::Steer => pb::QueueMode::Steer,
        QueueMode::Followup => pb::QueueMode::Followup,
        QueueMode::Collect => pb::QueueMode::Collect,
        QueueMode::Interrupt => pb::QueueMode::Interrupt,
    }
}

/// What became of a message, for the API.
pub fn disposition_to_pb(acceptance: &Acceptance) -> pb::Disposition {
    use pb::disposition::Outcome;
    let mut out = pb::Disposition {
        seq: acceptance.seq,
        queue_mode: queue_mode_to_pb(acceptance.mode) as i32,
        agent_id: acceptance.agent_id.clone(),
        session_key: acceptance.session_key.clone(),
        session_id: acceptance.session_id.clone(),
        ..pb::Disposition::default()
    };
    let outcome = match &acceptance.disposition {
        Disposition::Started { run } => {
            out.run = *run;
            Outcome::Started
        }
        Disposition::Steered { run } => {
            out.run = *run;
            Outcome::Steered
        }
        Disposition::Followup { run, ahead } => {
            out.run = *run;
            out.ahead = u32::try_from(*ahead).unwrap_or(u32::MAX);
            Outcome::Followup
        }
        Disposition::Collected { run } => {
            out.run = *run;
            Outcome::Collected
        }
        Disposition::Interrupted { run, interrupted } => {
            out.run = *run;
            out.interrupted_run = *interrupted;
            Outcome::Interrupted
        }
        Disposition::Rejected { reason } => {
            out.reason.clone_from(reason);
            Outcome::Rejected
        }
        Disposition::Command { reply } => {
            out.reason.clone_from(reply);
            Outcome::Command
        }
    };
    out.outcome = outcome as i32;
    out
}

/// A system event as the stream names it.
fn system_event_to_pb(seq: u64, origin: &Origin) -> pb::SystemEvent {
    let kind = match origin {
        Origin::User => pb::SystemEventKind::Unspecified,
        Origin::Heartbeat => pb::SystemEventKind::Heartbeat,
        Origin::Cron { .. } => pb::SystemEventKind::Cron,
        Origin::ExecExit { .. } => pb::SystemEventKind::ExecExit,
        Origin::Subagent { .. } => pb::SystemEventKind::Subagent,
    };
    pb::SystemEvent {
        seq,
        kind: kind as i32,
        source: origin.source().to_owned(),
    }
}

/// The first event of a Run stream: what became of the message.
pub fn accepted_event(acceptance: &Acceptance) -> pb::RunEvent {
    pb::RunEvent {
        seq: 1,
        run: acceptance.disposition.run().unwrap_or_default(),
        event: Some(pb::run_event::Event::Accepted(disposition_to_pb(
            acceptance,
        ))),
    }
}

/// A run event for the stream (before [`crate::parts::run_events`] splits
/// long text).
pub fn event_to_pb(event: RunEvent) -> pb::run_event::Event {
    use pb::run_event::Event as E;
    match event {
        RunEvent::Started {
            run_id,
            agent_id,
            session_key,
            session_id,
            model,
            message_seqs,
            system_events,
        } => E::Started(pb::RunStarted {
            run_id,
            agent_id,
            session_key,
            session_id,
            model,
            message_seqs,
            system_events: system_events
                .iter()
                .map(|(seq, origin)| system_event_to_pb(*seq, origin))
                .collect(),
        }),
        RunEvent::TextDelta(text) => E::TextDelta(text),
        RunEvent::ThinkingDelta(text) => E::ThinkingDelta(text),
        RunEvent::ModelCall {
            step,
            model,
            stable_prefix_sha256,
            prefix_changed,
            changed_sections,
            prompt_chars,
            messages,
        } => E::ModelCall(pb::ModelCall {
            step,
            model,
            stable_prefix_sha256,
            prefix_changed,
            changed_sections,
            prompt_chars,
            messages,
        }),
        RunEvent::ToolStarted {
            call_id,
            name,
            summary,
        } => E::ToolStarted(pb::ToolStarted {
            call_id,
            name,
            summary,
        }),
        RunEvent::ToolFinished {
            call_id,
            name,
            is_error,
            output,
            duration_ms,
        } => E::ToolFinished(pb::ToolFinished {
            call_id,
            name,
            is_error,
            output,
            duration_ms,
        }),
        RunEvent::Usage(usage) => E::Usage(usage_to_pb(&usage)),
        RunEvent::TurnEnd { step, stop_reason } => E::TurnEnd(pb::TurnEnd { step, stop_reason }),
        RunEvent::Final {
            text,
            stop_reason,
            steps,
            usage,
            reply,
            blocks,
            directives,
            silent,
        } => E::Final(pb::RunFinal {
            text,
            stop_reason,
            steps,
            usage: Some(usage_to_pb(&usage)),
            reply,
            blocks,
            directives: directives_to_pb(directives),
            silent,
        }),
        RunEvent::Error { code, message } => E::Error(pb::RunError {
            code: code.to_owned(),
            message,
        }),
        RunEvent::Block {
            index,
            message,
            text,
            directives,
        } => E::Block(pb::Block {
            index,
            text,
            message,
            directives: directives_to_pb(directives),
        }),
        RunEvent::Handoff { next_run, messages } => E::Handoff(pb::Handoff { next_run, messages }),
        RunEvent::MessageRejected { seq, reason } => {
            E::MessageRejected(pb::MessageRejected { seq, reason })
        }
        RunEvent::Lagged(missed) => E::Lagged(missed),
        RunEvent::ApprovalRequested(approval) => {
            E::ApprovalRequested(crate::approvals_api::approval_pb(*approval))
        }
        RunEvent::ApprovalResolved(approval) => {
            E::ApprovalResolved(crate::approvals_api::approval_pb(*approval))
        }
        RunEvent::Accepted(acceptance) => E::Accepted(disposition_to_pb(&acceptance)),
        RunEvent::SystemEvent { acceptance, origin } => E::SystemEvent(pb::SystemEventQueued {
            event: Some(system_event_to_pb(acceptance.seq, &origin)),
            disposition: Some(disposition_to_pb(&acceptance)),
        }),
        RunEvent::Compaction(c) => E::Compaction(pb::Compaction {
            phase: match c.phase {
                CompactionPhase::Started => pb::CompactionPhase::Started,
                CompactionPhase::MemoryFlushed => pb::CompactionPhase::MemoryFlushed,
                CompactionPhase::Finished => pb::CompactionPhase::Finished,
                CompactionPhase::Skipped => pb::CompactionPhase::Skipped,
                CompactionPhase::Failed => pb::CompactionPhase::Failed,
            } as i32,
            trigger: c.trigger.as_str().to_owned(),
            tokens_before: c.tokens_before,
            tokens_after: c.tokens_after,
            summarized_messages: c.summarized_messages,
            kept_messages: c.kept_messages,
            context_window: c.context_window,
            threshold: c.threshold,
            detail: c.detail,
        }),
    }
}

/// A repair of the state directory for the API.
pub(crate) fn state_repair(repair: agent_runtime::sessions::Repair) -> pb::StateRepair {
    use agent_runtime::sessions::RepairKind;
    let agent_runtime::sessions::Repair {
        kind,
        agent_id,
        session_id,
        file,
        detail,
        at_ms,
    } = repair;
    pb::StateRepair {
        kind: match kind {
            RepairKind::IndexRebuilt => pb::StateRepairKind::IndexRebuilt,
            RepairKind::MessagesQuarantined => pb::StateRepairKind::MessagesQuarantined,
        } as i32,
        agent_id,
        session_id: session_id.unwrap_or_default(),
        file: file.display().to_string(),
        detail,
        at_ms,
    }
}

/// A reply's directives for the API (`None` when there are none, so plain replies stay as
/// they were on the wire).
fn directives_to_pb(d: agent_runtime::run::ReplyDirectives) -> Option<pb::ReplyDirectives> {
    use agent_runtime::run::{AttachmentKind, AttachmentSource, ReplyTarget};
    if d.is_empty() {
        return None;
    }
    let agent_runtime::run::ReplyDirectives {
        attachments,
        audio_as_voice,
        reply_to,
        dropped,
    } = d;
    Some(pb::ReplyDirectives {
        attachments: attachments
            .into_iter()
            .map(|a| pb::Attachment {
                source: Some(match a.source {
                    AttachmentSource::Path(path) => {
                        pb::attachment::Source::Path(path.display().to_string())
                    }
                    AttachmentSource::Url(url) => pb::attachment::Source::Url(url),
                }),
                kind: match a.kind {
                    AttachmentKind::Image => pb::AttachmentKind::Image,
                    AttachmentKind::Audio => pb::AttachmentKind::Audio,
                    AttachmentKind::Video => pb::AttachmentKind::Video,
                    AttachmentKind::File => pb::AttachmentKind::File,
                }
                .into(),
            })
            .collect(),
        audio_as_voice,
        reply_to: reply_to.map(|t| pb::ReplyTarget {
            target: Some(match t {
                ReplyTarget::Current => pb::reply_target::Target::Current(true),
                ReplyTarget::Message(id) => pb::reply_target::Target::MessageId(id),
            }),
        }),
        dropped: dropped
            .into_iter()
            .map(|d| pb::DroppedAttachment {
                target: d.target,
                reason: d.reason,
            })
            .collect(),
    })
}

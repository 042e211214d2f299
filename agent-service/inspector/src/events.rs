//! Session events as the page's event stream carries them: an event name and a JSON body.

use agent_runtime::approvals::Approval;
use agent_runtime::run::{CompactionPhase, RunEvent};
use serde_json::{Value, json};

fn phase(phase: CompactionPhase) -> &'static str {
    match phase {
        CompactionPhase::Started => "started",
        CompactionPhase::MemoryFlushed => "memory_flushed",
        CompactionPhase::Finished => "finished",
        CompactionPhase::Skipped => "skipped",
        CompactionPhase::Failed => "failed",
    }
}

/// An exec approval as the page shows it (read-only: the page decides nothing).
pub fn approval_json(a: &Approval) -> Value {
    json!({
        "id": a.id, "agent_id": a.agent_id, "session_key": a.session_key, "call_id": a.call_id,
        "subject": a.subject.as_str(), "command": a.command, "cwd": a.cwd.display().to_string(),
        "reason": a.reason, "always_patterns": a.always_patterns,
        "state": a.state.describe(), "requested_at_ms": a.requested_at_ms,
        "expires_at_ms": a.expires_at_ms, "decided_at_ms": a.decided_at_ms,
        "decided_by": a.decided_by, "fallback_allowed": a.fallback_allowed,
    })
}

/// The event's name and body; every body names its run.
pub fn event_json(run: u64, event: &RunEvent) -> (&'static str, Value) {
    let (name, mut body) = match event {
        RunEvent::Started {
            run_id,
            model,
            message_seqs,
            ..
        } => (
            "started",
            json!({ "run_id": run_id, "model": model, "message_seqs": message_seqs }),
        ),
        RunEvent::TextDelta(text) => ("text", json!({ "text": text })),
        RunEvent::ThinkingDelta(text) => ("thinking", json!({ "text": text })),
        RunEvent::ModelCall {
            step,
            model,
            stable_prefix_sha256,
            prefix_changed,
            changed_sections,
            prompt_chars,
            messages,
        } => (
            "model_call",
            json!({
                "step": step, "model": model, "stable_prefix_sha256": stable_prefix_sha256,
                "prefix_changed": prefix_changed, "changed_sections": changed_sections,
                "prompt_chars": prompt_chars, "messages": messages,
            }),
        ),
        RunEvent::ToolStarted {
            call_id,
            name,
            summary,
        } => (
            "tool_started",
            json!({ "call_id": call_id, "name": name, "summary": summary }),
        ),
        RunEvent::ToolFinished {
            call_id,
            name,
            is_error,
            output,
            duration_ms,
        } => (
            "tool_finished",
            json!({
                "call_id": call_id, "name": name, "is_error": is_error,
                "output": output, "duration_ms": duration_ms,
            }),
        ),
        RunEvent::Usage(usage) => ("usage", json!({ "usage": usage })),
        RunEvent::TurnEnd { step, stop_reason } => (
            "turn_end",
            json!({ "step": step, "stop_reason": stop_reason }),
        ),
        RunEvent::Final {
            text,
            stop_reason,
            steps,
            usage,
            silent,
            ..
        } => (
            "final",
            json!({
                "text": text, "stop_reason": stop_reason, "steps": steps, "usage": usage,
                "silent": silent,
            }),
        ),
        RunEvent::Error { code, message } => ("error", json!({ "code": code, "message": message })),
        RunEvent::Block {
            index,
            message,
            text,
            directives,
        } => (
            "block",
            json!({
                "index": index, "message": message, "text": text,
                "attachments": directives.attachments.len(),
            }),
        ),
        RunEvent::Handoff { next_run, messages } => (
            "handoff",
            json!({ "next_run": next_run, "messages": messages }),
        ),
        RunEvent::MessageRejected { seq, reason } => {
            ("message_rejected", json!({ "seq": seq, "reason": reason }))
        }
        RunEvent::Lagged(missed) => ("lagged", json!({ "missed": missed })),
        RunEvent::ApprovalRequested(a) => ("approval_requested", approval_json(a)),
        RunEvent::ApprovalResolved(a) => ("approval_resolved", approval_json(a)),
        RunEvent::Accepted(a) => (
            "accepted",
            json!({
                "seq": a.seq, "disposition": a.disposition.to_string(),
                "queue_mode": a.mode.as_str(),
            }),
        ),
        RunEvent::SystemEvent { acceptance, origin } => (
            "system_event",
            json!({
                "seq": acceptance.seq, "kind": origin.kind(), "source": origin.source(),
                "disposition": acceptance.disposition.to_string(),
                "queue_mode": acceptance.mode.as_str(),
            }),
        ),
        RunEvent::Compaction(c) => (
            "compaction",
            json!({
                "phase": phase(c.phase), "trigger": c.trigger.as_str(),
                "tokens_before": c.tokens_before, "tokens_after": c.tokens_after,
                "summarized_messages": c.summarized_messages, "kept_messages": c.kept_messages,
                "detail": c.detail,
            }),
        ),
    };
    if let Value::Object(map) = &mut body {
        map.insert("run".to_owned(), json!(run));
    }
    (name, body)
}

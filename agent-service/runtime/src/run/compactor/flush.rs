//! The memory flush before a compaction: a silent turn in which the model may write what
//! it wants to keep into the memory files, and nothing else.

use super::*;

impl Compactor<'_> {
    /// The memory flush runs in private main sessions that can write files
    /// (lesson L5: memory is the main session's).
    pub(super) fn flush_allowed(&self) -> bool {
        self.budget.flush_enabled
            && self.s.kind.is_private()
            && self
                .tools
                .iter()
                .any(|t| t.name == "write" || t.name == "edit")
    }

    /// The silent memory-flush turn. Returns what it did, for the event; a
    /// `custom` entry records it (so it runs once per compaction cycle).
    pub(super) async fn flush(
        &self,
        prompt: &pb::RenderSystemPromptResponse,
        history: &[Arc<Message>],
    ) -> String {
        let too_big = self.estimate(prompt, history).tokens() > self.budget.window;
        let outcome = if too_big {
            Err(RuntimeError::ContextOverflow(String::new()))
        } else {
            self.flush_turn(prompt, history).await
        };
        let (detail, files) = match outcome {
            Ok(files) if files.is_empty() => ("nothing saved".to_owned(), files),
            Ok(files) => (format!("saved to {}", files.join(", ")), files),
            Err(RuntimeError::ContextOverflow(_)) => (
                "skipped: the conversation is already longer than the context window".to_owned(),
                Vec::new(),
            ),
            Err(error) => (format!("failed: {error}"), Vec::new()),
        };
        let now = self.services.now_ms();
        let recorded = self
            .s
            .live
            .append(
                vec![EntryBody::Custom {
                    custom_type: MEMORY_FLUSH_ENTRY.to_owned(),
                    data: Some(json!({ "at": now, "files": files, "outcome": detail })),
                }],
                false,
            )
            .await;
        if let Err(error) = recorded {
            tracing::warn!(%error, "could not record the memory flush");
        }
        self.services
            .record_compaction(&self.s.agent, &self.s.key, 0, Some(now));
        tracing::info!(outcome = %detail, "memory flush turn ended");
        detail
    }

    /// Runs the flush turn; returns the memory files written.
    pub(super) async fn flush_turn(
        &self,
        prompt: &pb::RenderSystemPromptResponse,
        history: &[Arc<Message>],
    ) -> Result<Vec<String>, RuntimeError> {
        let date = jiff::Timestamp::from_millisecond(self.services.now_ms())
            .map(|t| t.to_zoned_datetime(self.zone()).date().to_string())
            .unwrap_or_else(|_| "today".to_owned());
        let mut messages: Vec<Message> = history.iter().map(|m| (**m).clone()).collect();
        messages.push(user_message(
            FLUSH_PROMPT.replace("{date}", &date),
            self.services.now_ms(),
        ));
        let tools: std::sync::Arc<[ToolSpec]> = self
            .tools
            .iter()
            .filter(|t| FLUSH_TOOLS.contains(&t.name.as_str()))
            .cloned()
            .collect();
        let origin = UserOrigin::for_chat(&self.turn.channel.channel, &self.turn.channel.chat_type);
        let mut written: Vec<String> = Vec::new();
        for _ in 0..FLUSH_STEPS {
            let request = ModelRequest {
                model: self.run.model.wire_model.clone(),
                system: SystemPrompt {
                    stable: prompt.stable_prefix.as_str().into(),
                    dynamic: prompt.dynamic_suffix.as_str().into(),
                },
                messages: self.ctx.fence.model_messages(&messages, origin).into(),
                tools: tools.clone(),
                max_output_tokens: None,
                reasoning_effort: None,
            };
            let reply = self.quiet_call(request, "memory flush").await?;
            let calls: Vec<_> = reply
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolCall(call) => Some(call.clone()),
                    _ => None,
                })
                .collect();
            messages.push(Message::Assistant(reply));
            if calls.is_empty() {
                break;
            }
            for call in calls {
                let (text, is_error) = match flush_refusal(&call.name, &call.arguments) {
                    Some(refusal) => (refusal, true),
                    None => match self
                        .run
                        .tools
                        .call(self.ctx, &call.name, call.arguments.clone())
                        .await
                    {
                        ToolOutcome::Ok { text, .. } => {
                            if matches!(call.name.as_str(), "write" | "edit")
                                && let Some(path) =
                                    call.arguments.get("path").and_then(|p| p.as_str())
                                && !written.iter().any(|w| w == path)
                            {
                                written.push(path.to_owned());
                            }
                            (text, false)
                        }
                        ToolOutcome::Error { text } | ToolOutcome::EndTurn { text } => (text, true),
                    },
                };
                messages.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: vec![ContentBlock::text(text)],
                    details: None,
                    is_error,
                    timestamp: self.services.now_ms(),
                }));
            }
        }
        Ok(written)
    }

    pub(super) fn zone(&self) -> jiff::tz::TimeZone {
        self.ctx
            .timezone
            .as_deref()
            .and_then(|name| jiff::tz::TimeZone::get(name).ok())
            .unwrap_or(jiff::tz::TimeZone::UTC)
    }

    /// One model call without stream events (the flush and the summary are
    /// not shown to the user); a reply that ended in error is an error.
    pub(super) async fn quiet_call(
        &self,
        request: ModelRequest,
        what: &str,
    ) -> Result<AssistantMessage, RuntimeError> {
        let began = Instant::now();
        let (events, mut drain) = mpsc::channel(64);
        let policy = openclaw_providers::RetryPolicy {
            deadline: self.limit().saturating_duration_since(Instant::now()),
            ..openclaw_providers::RetryPolicy::default()
        };
        let call = complete_with_retry(
            self.run.model.provider.as_ref(),
            request,
            events,
            self.cancel.clone(),
            &policy,
        );
        let discard = async { while drain.recv().await.is_some() {} };
        let (result, ()) = tokio::join!(call, discard);
        crate::metrics::model_call(
            &self.run.model.reference.provider,
            &self.run.model.reference.model,
            if result.is_ok() { "ok" } else { "error" },
            began.elapsed(),
            crate::metrics::Tokens::default(),
        );
        let reply = result.map_err(provider_error)?;
        if reply.stop_reason == StopReason::Error {
            return Err(RuntimeError::Unavailable(
                reply
                    .error_message
                    .unwrap_or_else(|| format!("the {what} call failed")),
            ));
        }
        Ok(reply)
    }
}

/// Model calls the memory-flush turn may make.
pub(super) const FLUSH_STEPS: u32 = 4;

/// Tools the memory-flush turn may use.
pub(super) const FLUSH_TOOLS: [&str; 5] = ["read", "write", "edit", "memory_search", "memory_get"];

/// What the memory-flush turn is asked (our wording; `{date}` is filled in).
pub(super) const FLUSH_PROMPT: &str = "[Memory flush before compaction] Older messages of this \
conversation are about to be condensed into a summary. If anything here should outlast \
that — decisions, preferences, facts about the user or the work, promises made — save it \
now: append it to memory/{date}.md (create the file if needed) or update MEMORY.md, using \
the write or edit tool. Only files under memory/ and MEMORY.md can be written in this turn. \
Nobody sees this turn. When there is nothing to save, or once you are done, reply with \
exactly NO_REPLY.";

/// Why a flush-turn tool call is refused: only the memory files may be
/// written, and only the memory tools and reads are offered.
pub(super) fn flush_refusal(name: &str, arguments: &serde_json::Value) -> Option<String> {
    if !FLUSH_TOOLS.contains(&name) {
        return Some(format!(
            "refused: only {} can be used during the memory flush",
            FLUSH_TOOLS.join(", ")
        ));
    }
    if matches!(name, "write" | "edit") {
        let path = arguments.get("path").and_then(|p| p.as_str()).unwrap_or("");
        if !is_memory_path(path) {
            return Some(format!(
                "refused: during the memory flush only MEMORY.md and files under memory/ can be written, not {path:?}"
            ));
        }
    }
    None
}

/// `MEMORY.md`, `memory.md` or a relative path under `memory/` without `..`.
pub(super) fn is_memory_path(path: &str) -> bool {
    let path = path.trim().trim_start_matches("./");
    if path.split('/').any(|part| part == "..") || path.starts_with('/') {
        return false;
    }
    matches!(path, "MEMORY.md" | "memory.md")
        || path
            .strip_prefix("memory/")
            .is_some_and(|rest| !rest.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flush_may_write_only_memory_files() {
        for ok in [
            "MEMORY.md",
            "memory/2026-11-30.md",
            "./memory/notes/a.md",
            "memory.md",
        ] {
            assert!(is_memory_path(ok), "{ok}");
            assert_eq!(flush_refusal("write", &json!({ "path": ok })), None);
        }
        for bad in [
            "AGENTS.md",
            "memory/../AGENTS.md",
            "/etc/passwd",
            "memory/",
            "notes/memory/x.md",
            "",
        ] {
            assert!(!is_memory_path(bad), "{bad}");
            assert!(
                flush_refusal("edit", &json!({ "path": bad })).is_some(),
                "{bad}"
            );
        }
        assert!(flush_refusal("exec", &json!({ "command": "ls" })).is_some());
        assert_eq!(flush_refusal("read", &json!({ "path": "AGENTS.md" })), None);
    }
}

//! Compaction inside a run (P-3, P-40; lessons L5, L10, L12).
//!
//! Before every model call the run estimates the request (see
//! [`crate::compaction`]). Past the flush point (threshold minus
//! `softThresholdTokens`) a private main session gets one silent
//! memory-flush turn per compaction cycle; past the threshold (the context
//! window minus the reserve), or when the provider refuses a request as too
//! long, the run compacts:
//!
//! 1. the memory flush runs first on the intact history, if it has not run
//!    in this cycle: a model turn, never shown to the user and not added to
//!    the conversation, whose only tools are the memory files (`write` /
//!    `edit` limited to `MEMORY.md` and `memory/`, plus reads);
//! 2. the newest turns are kept whole and the rest is summarised by the
//!    run's model, in chunks when it is long, with tool output shortened.
//!    The summariser's system prompt comes from prompt-service like every
//!    other prompt (mode none: the identity line); the transcript it reads
//!    is fenced as quoted data;
//! 3. a `compaction` entry records the summary, the first kept entry, the
//!    size before and, when the system prompt does not carry AGENTS.md
//!    whole, an AGENTS.md excerpt within the excerpt budget that follows
//!    the summary from then on;
//! 4. the run reloads the conversation and goes on; after an overflow the
//!    model call is retried once.
//!
//! All of it runs under a deadline (three minutes, or less when the run's
//! own limit is nearer) and reports each phase as a run event. Nothing is
//! written until the summary exists, so a failure or timeout leaves the
//! transcript as it was. When the context cannot fit even so, the run ends
//! with RESOURCE_EXHAUSTED naming the largest parts.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use openclaw_proto::prompt::v1 as pb;
use openclaw_providers::{ModelRequest, SystemPrompt, ToolSpec, complete_with_retry};
use openclaw_tools::{ToolContext, ToolOutcome, UserOrigin};
use openclaw_transcript::{
    AssistantMessage, ContentBlock, EntryBody, Message, StopReason, ToolResultMessage, UserContent,
    UserMessage,
};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    CompactionEvent, CompactionPhase, CompactionTrigger, Emitter, RunEvent,
    prepare::{render_prompt, render_request},
    reply::{assistant_text, provider_error},
    run_context::{RunContext, RunModel},
};
use crate::{
    compaction::{self, Budget, Estimate},
    context::{AGENTS_REFRESH_DETAIL, MEMORY_FLUSH_ENTRY},
    error::RuntimeError,
    prompt_input::TurnPrompt,
    services::Services,
    sessions::Session,
};

mod summary;

mod flush;

/// Longest a compaction may take, memory flush included.
pub(crate) const COMPACTION_TIMEOUT: Duration = Duration::from_secs(180);
/// Compactions one run may make.
const MAX_PER_RUN: u32 = 3;
/// Outcome of the work inside the deadline.
enum Done {
    Compacted {
        summarized: usize,
        kept: usize,
        flushed: Option<String>,
    },
    Skipped {
        reason: String,
    },
}

/// Decides and runs the compactions of one run.
pub(crate) struct Compactor<'a> {
    services: &'a Arc<Services>,
    s: &'a Session,
    run: &'a RunModel,
    ctx: &'a ToolContext,
    out: &'a Emitter,
    turn: &'a TurnPrompt<'a>,
    tools: &'a [ToolSpec],
    cancel: &'a CancellationToken,
    deadline: Instant,
    budget: Budget,
    tool_chars: usize,
    done: u32,
}

impl<'a> Compactor<'a> {
    /// The compactor of run `rc`, whose tool calls run in `ctx` and whose turns render `turn`.
    pub(crate) fn new(
        rc: &'a RunContext,
        ctx: &'a ToolContext,
        turn: &'a TurnPrompt<'a>,
    ) -> Result<Self, RuntimeError> {
        let run = &rc.model;
        let budget = Budget::resolve(
            rc.loaded.config.raw(),
            &run.model.reference.provider,
            &run.model.reference.model,
        );
        let tools = turn.tools;
        let tool_chars = tools
            .iter()
            .map(|t| t.name.len() + t.description.chars().count() + t.parameters.get().len())
            .sum();
        Ok(Self {
            services: &rc.services,
            s: &rc.session,
            run,
            ctx,
            out: &rc.out,
            turn,
            tools,
            cancel: &rc.start.cancel,
            deadline: rc.deadline,
            budget,
            tool_chars,
            done: 0,
        })
    }

    /// The estimate of a request with this prompt and history.
    fn estimate(
        &self,
        prompt: &pb::RenderSystemPromptResponse,
        history: &[Arc<Message>],
    ) -> Estimate {
        Estimate::of(prompt.chars as usize, self.tool_chars, history)
    }

    /// Before a model call: flush memory past the flush point, compact past
    /// the threshold. True when a compaction replaced `history`. An error
    /// ends the run (the transcript is whole).
    pub(crate) async fn before_call(
        &mut self,
        prompt: &pb::RenderSystemPromptResponse,
        history: &mut Vec<Arc<Message>>,
    ) -> Result<bool, RuntimeError> {
        let estimate = self.estimate(prompt, history);
        let tokens = estimate.tokens();
        if tokens >= self.budget.threshold() {
            return self
                .compact(CompactionTrigger::Threshold, prompt, history, estimate)
                .await;
        }
        if tokens >= self.budget.flush_at() && self.flush_allowed() {
            let snapshot = self.s.live.snapshot().await?;
            if !snapshot.flushed_since_compaction {
                let limit = self.limit();
                let detail = match tokio::time::timeout_at(
                    limit.into(),
                    self.flush(prompt, history),
                )
                .await
                {
                    Ok(detail) => detail,
                    Err(_) => "the memory flush ran out of time".to_owned(),
                };
                self.emit(
                    CompactionPhase::MemoryFlushed,
                    CompactionTrigger::Threshold,
                    tokens,
                    detail,
                );
            }
        }
        Ok(false)
    }

    /// After the provider refused the request as too long: compact so the
    /// call can be retried once. An error ends the run.
    pub(crate) async fn after_overflow(
        &mut self,
        prompt: &pb::RenderSystemPromptResponse,
        history: &mut Vec<Arc<Message>>,
        provider_says: &str,
    ) -> Result<(), RuntimeError> {
        tracing::warn!(provider = %provider_says, "the provider refused the request as too long; compacting");
        let estimate = self.estimate(prompt, history);
        self.compact(CompactionTrigger::Overflow, prompt, history, estimate)
            .await
            .map(drop)
    }

    /// The error for a request the provider still refuses after compacting.
    pub(crate) fn still_too_big(
        &self,
        prompt: &pb::RenderSystemPromptResponse,
        history: &[Arc<Message>],
        why: &str,
    ) -> RuntimeError {
        let estimate = self.estimate(prompt, history);
        let sections: Vec<(String, usize)> = prompt
            .sections
            .iter()
            .map(|s| {
                let name = if s.heading.is_empty() {
                    &s.id
                } else {
                    &s.heading
                };
                (name.clone(), s.chars as usize)
            })
            .collect();
        let parts = compaction::largest_parts(&sections, self.tool_chars, history, 5);
        RuntimeError::ResourceExhausted(compaction::too_big_message(
            &estimate,
            &self.budget,
            &parts,
            why,
        ))
    }

    fn limit(&self) -> Instant {
        self.deadline.min(Instant::now() + COMPACTION_TIMEOUT)
    }

    fn emit(
        &self,
        phase: CompactionPhase,
        trigger: CompactionTrigger,
        before: u64,
        detail: String,
    ) {
        self.out.emit(RunEvent::Compaction(CompactionEvent {
            phase,
            trigger,
            tokens_before: before,
            tokens_after: 0,
            summarized_messages: 0,
            kept_messages: 0,
            context_window: self.budget.window,
            threshold: self.budget.threshold(),
            detail,
        }));
    }

    async fn compact(
        &mut self,
        trigger: CompactionTrigger,
        prompt: &pb::RenderSystemPromptResponse,
        history: &mut Vec<Arc<Message>>,
        estimate: Estimate,
    ) -> Result<bool, RuntimeError> {
        let before = estimate.tokens();
        // Past the window (or refused by the provider), going on without a
        // smaller context cannot work; below it, a failed compaction only
        // means the next call is large.
        let must_shrink = trigger == CompactionTrigger::Overflow || before > self.budget.window;
        if self.done >= MAX_PER_RUN {
            return if must_shrink {
                Err(self.still_too_big(
                    prompt,
                    history,
                    &format!("this run already compacted {MAX_PER_RUN} times"),
                ))
            } else {
                Ok(false)
            };
        }
        self.done += 1;
        self.emit(CompactionPhase::Started, trigger, before, String::new());
        tracing::info!(
            trigger = trigger.as_str(),
            tokens = before,
            window = self.budget.window,
            threshold = self.budget.threshold(),
            "compacting the session"
        );
        let began = Instant::now();
        let limit = self.limit();
        let outcome = tokio::time::timeout_at(
            limit.into(),
            self.compact_inner(trigger, prompt, history, estimate),
        )
        .await
        .unwrap_or_else(|_| {
            Err(RuntimeError::ResourceExhausted(format!(
                "compaction did not finish within {} s; the transcript is unchanged",
                limit.saturating_duration_since(began).as_secs()
            )))
        });
        match outcome {
            Ok(Done::Compacted {
                summarized,
                kept,
                flushed,
            }) => {
                let after = self.estimate(prompt, history).tokens();
                let detail = flushed
                    .map(|f| format!("memory flush: {f}"))
                    .unwrap_or_default();
                self.out.emit(RunEvent::Compaction(CompactionEvent {
                    phase: CompactionPhase::Finished,
                    trigger,
                    tokens_before: before,
                    tokens_after: after,
                    summarized_messages: u32::try_from(summarized).unwrap_or(u32::MAX),
                    kept_messages: u32::try_from(kept).unwrap_or(u32::MAX),
                    context_window: self.budget.window,
                    threshold: self.budget.threshold(),
                    detail,
                }));
                tracing::info!(
                    summarized,
                    kept,
                    before,
                    after,
                    elapsed_ms = began.elapsed().as_millis() as u64,
                    "compaction written"
                );
                if after > self.budget.window {
                    return Err(self.still_too_big(
                        prompt,
                        history,
                        "compaction summarised everything older than the newest turn and it is still too big",
                    ));
                }
                Ok(true)
            }
            Ok(Done::Skipped { reason }) => {
                self.emit(CompactionPhase::Skipped, trigger, before, reason.clone());
                if must_shrink {
                    return Err(self.still_too_big(prompt, history, &reason));
                }
                tracing::info!(%reason, "compaction skipped");
                Ok(false)
            }
            Err(error) => {
                self.emit(CompactionPhase::Failed, trigger, before, error.to_string());
                tracing::warn!(%error, "compaction failed; the transcript is unchanged");
                if matches!(error, RuntimeError::Aborted(_)) || self.cancel.is_cancelled() {
                    return Err(error);
                }
                if must_shrink {
                    return Err(match error {
                        RuntimeError::ResourceExhausted(m) => RuntimeError::ResourceExhausted(m),
                        other => RuntimeError::Unavailable(format!(
                            "the context is too big for the model and compaction failed: {other}"
                        )),
                    });
                }
                Ok(false)
            }
        }
    }

    async fn compact_inner(
        &self,
        trigger: CompactionTrigger,
        prompt: &pb::RenderSystemPromptResponse,
        history: &mut Vec<Arc<Message>>,
        estimate: Estimate,
    ) -> Result<Done, RuntimeError> {
        let snapshot = self.s.live.snapshot().await?;
        let messages: Vec<Message> = snapshot
            .entries
            .iter()
            .map(|(_, m)| (**m).clone())
            .collect();
        let keep = compaction::keep_budget(&self.budget, &estimate);
        let min_cut = if snapshot.starts_with_summary { 2 } else { 1 };
        let Some(cut) = compaction::choose_cut(&messages, keep, min_cut) else {
            return Ok(Done::Skipped {
                reason: "nothing older than the newest turn is left to summarise".to_owned(),
            });
        };
        // The flush sees the intact history; it adds only a `custom` entry,
        // so the cut chosen above stays valid.
        let mut flushed = None;
        if self.flush_allowed() && !snapshot.flushed_since_compaction {
            let detail = self.flush(prompt, history).await;
            self.emit(
                CompactionPhase::MemoryFlushed,
                trigger,
                estimate.tokens(),
                detail.clone(),
            );
            flushed = Some(detail);
        }
        let system = self.summariser_prompt().await?;
        let summary = self.summarise(&system, &messages[..cut]).await?;
        // A summary is worth keeping only if it is smaller than what it replaces; otherwise
        // the older messages are dropped with a note saying so (truncation), so compaction
        // never grows the history.
        let replaced: usize = messages[..cut].iter().map(compaction::message_chars).sum();
        let summary_chars = summary.chars().count();
        let (summary, fallback) = if summary_chars < replaced {
            (summary, None)
        } else {
            tracing::warn!(
                summary_chars,
                replaced,
                "the compaction summary was not smaller than what it would replace; dropping the older messages instead"
            );
            (
                format!(
                    "[{cut} older messages were dropped without a summary: the summary written \
                     for them ({summary_chars} characters) was not shorter than they were \
                     ({replaced} characters). Ask the user about anything you need from them.]"
                ),
                Some(summary_chars),
            )
        };
        let refresh = self.agents_refresh(prompt).await;
        let mut details = json!({
            "trigger": trigger.as_str(),
            "summarizedMessages": cut,
            "keptMessages": messages.len() - cut,
            "model": self.run.name,
            "contextWindow": self.budget.window,
            "threshold": self.budget.threshold(),
        });
        if let Some(rejected) = fallback {
            details["fallback"] = json!("truncated");
            details["rejectedSummaryChars"] = json!(rejected);
            details["replacedChars"] = json!(replaced);
        }
        if let Some(refresh) = refresh {
            details[AGENTS_REFRESH_DETAIL] = json!(refresh);
        }
        self.s
            .live
            .append(
                vec![EntryBody::Compaction {
                    summary,
                    first_kept_entry_id: snapshot.entries[cut].0.clone(),
                    tokens_before: estimate.tokens(),
                    details: Some(details),
                    from_hook: None,
                }],
                true,
            )
            .await?;
        self.services
            .record_compaction(&self.s.agent, &self.s.key, 1, None);
        *history = self.s.live.shared_messages().await?;
        Ok(Done::Compacted {
            summarized: cut,
            kept: messages.len() - cut,
            flushed,
        })
    }
}

fn user_message(text: String, now: i64) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text),
        timestamp: now,
    })
}

//! One run: its user messages into the transcript, then model calls and tool
//! batches until the model stops, the step limit or the time limit is hit,
//! or a newer message interrupts it. Steered messages are taken after each
//! whole tool batch, before the next model call.

use std::{sync::Arc, time::Instant};

use crate::metrics::Tokens;
use openclaw_providers::{
    ModelRequest, ProviderError, ResolvedModel, RetryPolicy, StreamEvent, SystemPrompt, ToolSpec,
    complete_with_retry,
};
use openclaw_tools::ToolOutcome;
use openclaw_transcript::{
    AssistantMessage, ContentBlock, EntryBody, Message, StopReason, ToolCall, ToolResultMessage,
    Usage,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    DEFAULT_MAX_STEPS, EVENT_OUTPUT_CHARS, Emitter, RunEvent,
    blocks::{self, BlockSink},
    compactor::Compactor,
    evidence::PromptFingerprint,
    prepare::{RunPrompt, RunRender, contribution},
    reply::{DirectiveCheck, assistant_text, cut_short, provider_error, why_cut},
    run_context::{Finished, RunContext, RunModel, add_usage, append_user, descriptors},
    shorten, summarize_call,
};
use crate::{
    context::{self, tool_call_ids},
    error::RuntimeError,
    prompt_input::TurnPrompt,
    services::Services,
    sessions::Session,
    sessions::queue::Inbound,
};

mod model;
mod refusal;
mod tools;

use model::RunParts;
use tools::{MAX_INVALID_BATCHES, after_batch, run_tool_batch};

/// Runs an admitted run on the embedded runtime to its end. The caller publishes the terminal
/// event.
pub(crate) async fn run_once(rc: &RunContext) -> Result<Finished, RuntimeError> {
    let RunContext {
        services,
        session: s,
        start,
        first,
        out,
        model: run,
        deadline,
        thinking,
        reasoning,
        ..
    } = rc;
    let (s, deadline): (&Session, Instant) = (s, *deadline);

    let RunSetup {
        mut history,
        continuation,
        skills,
        tools: tool_specs,
        contribution,
        ctx,
        mut sink,
        check,
    } = RunSetup::read(rc).await?;
    let max_steps = match first.options.max_steps {
        0 => DEFAULT_MAX_STEPS,
        n => n,
    };
    let mut total = Usage::default();
    let interrupted = || cut_short(services, start.run);

    // The session's `/think` level stands in for the agent's default on the Runtime line.
    let agent = openclaw_config::resolve::AgentView {
        thinking_default: *thinking,
        ..s.agent.clone()
    };
    let turn = TurnPrompt {
        agent: &agent,
        kind: s.kind,
        heartbeat_turn: first.options.heartbeat,
        wake_up: !first.options.heartbeat && start.user_seqs().is_empty(),
        cwd: &s.cwd,
        sandbox: ctx.sandbox.as_deref(),
        channel: &first.channel,
        tools: &tool_specs,
        skills: skills.as_deref(),
        continuation,
        model: &run.name,
        default_model: &run.default_model,
        contribution: contribution.as_ref(),
        session_key: s.key.as_str(),
        reasoning: *reasoning,
        surface: prompt_render::PromptSurface::EmbeddedRun,
        lightweight: first.options.lightweight,
    };
    // Lesson L15 b: tool results and chat participants' messages reach the model
    // fenced with nonce markers; the transcript keeps the raw text.
    // The same rule a Codex turn's input follows (`prepare::user_turn_text`).
    let origin = super::prepare::user_origin(&first.channel);
    let mut compactor = Compactor::new(rc, &ctx, &turn)?;
    let mut overflow_retried = false;
    let call = RunParts {
        services,
        s,
        run,
        ctx: &ctx,
        out,
        tool_specs: &tool_specs,
        origin,
        run_number: start.run,
        cancel: &start.cancel,
        deadline,
        thinking: *thinking,
    };

    // Model replies in a row whose tool calls all had arguments that were not JSON.
    let mut invalid_batches = 0u32;
    let mut rendered = RunRender::default();
    for step in 1..=max_steps {
        if start.cancel.is_cancelled() {
            return finish_failed(services, s, &total, interrupted()).await;
        }
        repair(services, s, &mut history).await?;
        let prompt = rendered.next(services, &turn, deadline).await?;
        // Compaction may replace older history with a summary;
        // the pairing check runs again on what it leaves (lesson L10).
        match compactor.before_call(&prompt.response, &mut history).await {
            Ok(true) => repair(services, s, &mut history).await?,
            Ok(false) => {}
            Err(error) => return finish_failed(services, s, &total, error).await,
        }
        let reply = match call
            .model_call(
                step,
                prompt,
                &mut sink,
                &mut compactor,
                &mut history,
                &mut overflow_retried,
            )
            .await?
        {
            Ok(reply) => reply,
            Err(error) => return finish_failed(services, s, &total, error).await,
        };
        let reply_message =
            record_reply(s, &reply, out, &mut sink, &mut total, &mut history).await?;
        let last_stop = reply.stop_reason.as_str().to_owned();
        let turn_end = RunEvent::TurnEnd {
            step,
            stop_reason: last_stop.clone(),
        };

        if reply.stop_reason == StopReason::Error {
            out.emit(turn_end);
            let message = reply
                .error_message
                .unwrap_or_else(|| "the model call failed".to_owned());
            return finish_failed(services, s, &total, RuntimeError::Unavailable(message)).await;
        }
        let calls = tool_call_ids(&reply_message);
        if calls.is_empty() {
            out.emit(turn_end);
            // The run would end here; a steer that arrived meanwhile gets
            // another model turn instead of being dropped. At the step limit
            // the queue hands such messages to a new run.
            let more = if step < max_steps {
                s.live.queue().finish_or_continue(start.run)
            } else {
                None
            };
            match more {
                Some(steer) => {
                    take_steer(services, s, start.run, steer, &mut history).await?;
                    continue;
                }
                None => {
                    finish(services, s, &total).await?;
                    return Ok(Finished::of(
                        assistant_text(&reply),
                        last_stop,
                        step,
                        total,
                        sink.as_ref(),
                        &check,
                    ));
                }
            }
        }

        let batch = run_tool_batch(&call, &reply, &mut history).await?;
        out.emit(turn_end);
        invalid_batches = if batch.all_invalid {
            invalid_batches + 1
        } else {
            0
        };
        let stop = if start.cancel.is_cancelled() {
            Some(interrupted())
        } else if invalid_batches >= MAX_INVALID_BATCHES {
            Some(RuntimeError::Unavailable(format!(
                "the model sent tool calls whose arguments were not JSON {MAX_INVALID_BATCHES} times in a row; the run stops here (each was answered with what was wrong and nothing ran)"
            )))
        } else {
            after_batch(services, batch.end_turn, deadline)
        };
        if let Some(error) = stop {
            return finish_failed(services, s, &total, error).await;
        }
        // Steered messages join after the whole batch, before the next call.
        let steer = s.live.queue().drain_steer(start.run);
        if !steer.is_empty() {
            take_steer(services, s, start.run, steer, &mut history).await?;
        }
    }
    finish_failed(services, s, &total, RuntimeError::ResourceExhausted(format!(
        "the run stopped after {max_steps} model calls (max_steps); the tool results so far are saved"
    )))
    .await
}

/// What a run reads before its first model call.
struct RunSetup {
    /// The session's messages, the run's own user messages last.
    history: Vec<Arc<Message>>,
    /// An earlier turn of the session already had the workspace files.
    continuation: bool,
    skills: Option<std::sync::Arc<openclaw_skills::Discovery>>,
    tools: std::sync::Arc<[ToolSpec]>,
    contribution: Option<openclaw_proto::prompt::v1::ProviderContribution>,
    ctx: openclaw_tools::ToolContext,
    /// Block streaming, when the channel has it on.
    sink: Option<BlockSink>,
    /// What of the reply's directives may be delivered.
    check: DirectiveCheck,
}

impl RunSetup {
    async fn read(rc: &RunContext) -> Result<Self, RuntimeError> {
        let (services, s, start) = (&rc.services, &rc.session, &rc.start);
        // Three independent waits (the transcript's history, skill discovery on the blocking
        // pool, the provider contribution from prompt-service), overlapped.
        let (history, skills, contribution) = tokio::join!(
            s.live.shared_messages(),
            services.list_skills(&s.agent.id),
            contribution(services, &rc.model.model, rc.deadline),
        );
        let history = history?;
        let continuation = history
            .iter()
            .rev()
            .skip(start.messages.len())
            .any(|m| matches!(**m, Message::Assistant(_)));
        let settings = blocks::settings_for(&rc.loaded.config, &rc.first.channel.channel);
        let check = DirectiveCheck::sharing(std::sync::Arc::clone(&rc.tools.workspace));
        Ok(Self {
            history,
            continuation,
            skills: skills.ok(),
            tools: descriptors(&rc.model.tools).into(),
            contribution,
            ctx: rc.tools.clone(),
            sink: BlockSink::new(settings, check.clone(), rc.out.clone()),
            check,
        })
    }
}

/// Writes the model's reply into the transcript and the history, closes its block stream and
/// counts its usage. Returns it as the history holds it (shared, not copied).
async fn record_reply(
    s: &Session,
    reply: &AssistantMessage,
    out: &Emitter,
    sink: &mut Option<BlockSink>,
    total: &mut Usage,
    history: &mut Vec<Arc<Message>>,
) -> Result<Arc<Message>, RuntimeError> {
    let message = Arc::new(Message::Assistant(reply.clone()));
    s.live
        .append(
            vec![EntryBody::Message {
                message: (*message).clone(),
            }],
            false,
        )
        .await?;
    history.push(Arc::clone(&message));
    if let Some(sink) = sink.as_mut() {
        sink.message_end();
    }
    if let Some(usage) = &reply.usage {
        add_usage(total, usage);
        out.emit(RunEvent::Usage(usage.clone()));
    }
    Ok(message)
}

/// The pairing check before a model request (lesson L10); what it fills in
/// is persisted, so the next load is clean.
async fn repair(
    services: &Services,
    s: &Session,
    history: &mut Vec<Arc<Message>>,
) -> Result<(), RuntimeError> {
    let repair = context::repair_pairing(history, services.now_ms());
    if !repair.is_clean() {
        tracing::warn!(orphans = ?repair.orphans_dropped, filled = repair.filled.len(), "repaired tool call pairing before a model call");
        let bodies = repair
            .filled
            .into_iter()
            .map(|r| EntryBody::Message {
                message: Message::ToolResult(r),
            })
            .collect();
        s.live.append(bodies, true).await?;
    }
    Ok(())
}

/// Commits steered messages; if that fails they go back to the queue, so the
/// next run takes them (lesson L11).
async fn take_steer(
    services: &Services,
    s: &Session,
    run: u64,
    steer: Vec<Inbound>,
    history: &mut Vec<Arc<Message>>,
) -> Result<(), RuntimeError> {
    match append_user(services, s, &steer).await {
        Ok(users) => {
            tracing::debug!(messages = steer.len(), "steered messages delivered");
            history.extend(users.into_iter().map(Arc::new));
            Ok(())
        }
        Err(error) => {
            s.live.queue().requeue_steer(run, steer);
            Err(error)
        }
    }
}

/// Turn boundary: fsync and record usage in the index.
async fn finish(services: &Services, s: &Session, usage: &Usage) -> Result<(), RuntimeError> {
    s.live.append(Vec::new(), true).await?;
    services.record_turn(&s.agent, &s.key, usage);
    Ok(())
}

async fn finish_failed(
    services: &Services,
    s: &Session,
    usage: &Usage,
    error: RuntimeError,
) -> Result<Finished, RuntimeError> {
    finish(services, s, usage).await?;
    Err(error)
}

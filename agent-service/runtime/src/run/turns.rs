//! One run: its user messages into the transcript, then model calls and tool
//! batches until the model stops, the step limit or the time limit is hit,
//! or a newer message interrupts it. Steered messages are taken after each
//! whole tool batch, before the next model call (SPEC R-11).

use std::{sync::Arc, time::Instant};

use openclaw_providers::{
    ModelRequest, ProviderError, ResolvedModel, RetryPolicy, StreamEvent, SystemPrompt, ToolSpec,
    complete_with_retry,
};
use openclaw_tools::ToolOutcome;
use openclaw_transcript::{
    AssistantMessage, ContentBlock, EntryBody, Message, StopReason, ToolCall, ToolResultMessage,
    Usage, UserContent, UserMessage,
};
use service_kit::metrics::Tokens;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    DEFAULT_MAX_STEPS, EVENT_OUTPUT_CHARS, Emitter, RunEvent,
    blocks::{self, BlockSink},
    compactor::Compactor,
    evidence::PromptFingerprint,
    prepare::{self, RunModel, SessionCtx},
    shorten, summarize_call,
};
use crate::{
    context::{self, tool_call_ids},
    error::RuntimeError,
    prompt_input::ToolDescriptor,
    prompt_input::TurnPrompt,
    services::Services,
    sessions::queue::{Inbound, RunStart},
};

/// Stream events buffered between the provider and the run.
const STREAM_BUFFER: usize = 256;
/// How long a tool may take to wind down by itself after an interrupt.
const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How a run ended well.
pub(crate) struct Finished {
    pub text: String,
    pub stop_reason: String,
    pub steps: u32,
    pub usage: Usage,
    pub reply: String,
    pub blocks: u32,
}

/// Writes a batch of user messages as one append (one actor round trip).
pub(crate) async fn append_user(
    services: &Services,
    session: &SessionCtx,
    messages: &[Inbound],
) -> Result<Vec<Message>, RuntimeError> {
    let now = services.now_ms();
    let users: Vec<Message> = messages
        .iter()
        .map(|m| {
            Message::User(UserMessage {
                content: UserContent::Text(m.text.clone()),
                timestamp: now,
            })
        })
        .collect();
    let bodies = users
        .iter()
        .cloned()
        .map(|message| EntryBody::Message { message })
        .collect();
    session.handle.append(bodies, false).await?;
    // In the transcript now: the journal no longer needs them.
    let seqs: Vec<u64> = messages
        .iter()
        .flat_map(|m| std::iter::once(m.seq).chain(m.folded.iter().copied()))
        .collect();
    let journal = Arc::clone(&session.journal);
    match tokio::task::spawn_blocking(move || journal.done(&seqs)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::warn!(%error, "could not mark messages done in the journal"),
        Err(error) => tracing::warn!(%error, "journal task failed"),
    }
    Ok(users)
}

/// Runs `start` to its end. The caller publishes the terminal event.
#[tracing::instrument(skip_all, fields(session_id = %s.session_id, agent = %s.agent.id, run = start.run))]
pub(crate) async fn run_once(
    services: &Arc<Services>,
    s: &SessionCtx,
    start: &RunStart,
    out: &Emitter,
) -> Result<Finished, RuntimeError> {
    if let openclaw_config::resolve::AgentRuntime::Codex(_) = s.agent.runtime {
        return super::codex::run_codex_once(services, s, start, out).await;
    }
    let began = Instant::now();
    let deadline = began + services.run_timeout();
    let first = start
        .messages
        .first()
        .cloned()
        .ok_or_else(|| RuntimeError::Internal(format!("run {} has no messages", start.run)))?;
    // The messages are accepted: they go into the transcript before anything
    // that can fail, so a run that fails still leaves them recorded.
    append_user(services, s, &start.messages).await?;
    let run = services
        .run_model(s, first.options.model.as_deref())
        .await?;
    out.emit(RunEvent::Started {
        run_id: super::beats::run_id(start),
        agent_id: s.agent.id.clone(),
        session_key: s.key.as_str().to_owned(),
        session_id: s.session_id.clone(),
        model: run.name.clone(),
        message_seqs: super::beats::user_seqs(start),
    });

    let mut history = s.handle.messages().await?;
    let continuation = history
        .iter()
        .rev()
        .skip(start.messages.len())
        .any(|m| matches!(m, Message::Assistant(_)));
    let skills = services.list_skills(&s.agent.id).await.ok();
    let tool_descriptors: Vec<ToolDescriptor> = prepare::descriptors(&run.tools);
    let contribution = services.contribution(&run.model, deadline).await;
    let ctx = services.tool_context(s, &run, start.cancel.clone())?;
    let settings = services
        .loaded_config()
        .map(|l| blocks::settings_for(&l.config, &first.channel.channel))?;
    let mut sink = BlockSink::new(settings, out.clone());
    let max_steps = match first.options.max_steps {
        0 => DEFAULT_MAX_STEPS,
        n => n,
    };
    let mut total = Usage::default();
    let interrupted = || {
        RuntimeError::Aborted(format!(
            "run {} was interrupted by a newer message",
            start.run
        ))
    };

    let turn = TurnPrompt {
        agent: &s.agent,
        kind: s.kind,
        heartbeat_turn: first.options.heartbeat,
        cwd: &s.cwd,
        sandbox: ctx.sandbox.as_deref(),
        channel: &first.channel,
        tools: &tool_descriptors,
        skills: skills.as_ref(),
        continuation,
        model: &run.name,
        default_model: &run.default_model,
        contribution: contribution.as_ref(),
    };
    let tool_specs: Vec<ToolSpec> = tool_descriptors
        .iter()
        .map(|t| ToolSpec {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
        })
        .collect();
    // Lesson L15 b: tool results and chat participants' messages reach the model
    // fenced with nonce markers; the transcript keeps the raw text.
    let origin =
        openclaw_tools::UserOrigin::for_chat(&first.channel.channel, &first.channel.chat_type);
    let mut compactor =
        Compactor::new(services, s, &run, &ctx, out, &turn, &start.cancel, deadline)?;
    let mut overflow_retried = false;

    for step in 1..=max_steps {
        if start.cancel.is_cancelled() {
            return finish_failed(services, s, &total, interrupted()).await;
        }
        repair(services, s, &mut history).await?;
        let prompt = services.render_turn(&turn, deadline).await?;
        // Compaction may replace older history with a summary (issue 10);
        // the pairing check runs again on what it leaves (lesson L10).
        match compactor.before_call(&prompt, &mut history).await {
            Ok(true) => repair(services, s, &mut history).await?,
            Ok(false) => {}
            Err(error) => return finish_failed(services, s, &total, error).await,
        }
        let fingerprint = PromptFingerprint::of(&prompt);
        let previous = s.extras.swap_fingerprint(fingerprint.clone());
        let (mut prefix_changed, mut changed_sections) = match &previous {
            Some(prev) if prev.stable_sha256 != fingerprint.stable_sha256 => {
                (true, fingerprint.changed_since(prev))
            }
            _ => (false, Vec::new()),
        };
        if prefix_changed {
            service_kit::metrics::stable_prefix_changed(&s.agent.id);
            tracing::info!(changed = ?changed_sections, "stable prompt prefix changed since the previous model call");
        }
        let system = SystemPrompt {
            stable: prompt.stable_prefix.clone(),
            dynamic: prompt.dynamic_suffix.clone(),
        };
        let reply = loop {
            out.emit(RunEvent::ModelCall {
                step,
                model: run.name.clone(),
                stable_prefix_sha256: prompt.stable_prefix_sha256.clone(),
                prefix_changed: std::mem::take(&mut prefix_changed),
                changed_sections: std::mem::take(&mut changed_sections),
                prompt_chars: prompt.chars,
                messages: u32::try_from(history.len()).unwrap_or(u32::MAX),
            });
            let request = ModelRequest {
                model: run.model.wire_model.clone(),
                system: system.clone(),
                messages: ctx.fence.model_messages(&history, origin),
                tools: tool_specs.clone(),
                max_output_tokens: None,
                reasoning_effort: None,
            };
            let error = match call_model(
                &run.model,
                request,
                out,
                &mut sink,
                &start.cancel,
                deadline,
            )
            .await
            {
                Ok(reply) => break reply,
                Err(error) => error,
            };
            if let Some(sink) = sink.as_mut() {
                sink.message_failed();
            }
            if start.cancel.is_cancelled() {
                return finish_failed(services, s, &total, interrupted()).await;
            }
            let RuntimeError::ContextOverflow(provider_says) = error else {
                return finish_failed(services, s, &total, error).await;
            };
            // The provider counted more than our estimate: compact and retry
            // the call once (issue 10).
            if overflow_retried {
                let error = compactor.still_too_big(
                    &prompt,
                    &history,
                    &format!("the provider refused the request as too long even after compaction ({provider_says})"),
                );
                return finish_failed(services, s, &total, error).await;
            }
            overflow_retried = true;
            if let Err(error) = compactor
                .after_overflow(&prompt, &mut history, &provider_says)
                .await
            {
                return finish_failed(services, s, &total, error).await;
            }
            repair(services, s, &mut history).await?;
        };
        let reply_message = Message::Assistant(reply.clone());
        s.handle
            .append(
                vec![EntryBody::Message {
                    message: reply_message.clone(),
                }],
                false,
            )
            .await?;
        history.push(reply_message.clone());
        if let Some(sink) = sink.as_mut() {
            sink.message_end();
        }
        if let Some(usage) = &reply.usage {
            add_usage(&mut total, usage);
            out.emit(RunEvent::Usage(usage.clone()));
        }
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
                s.extras.queue().finish_or_continue(start.run)
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
                    let text = assistant_text(&reply);
                    let (reply, blocks) = match &sink {
                        Some(sink) => (sink.unsent_tail(&text), sink.sent()),
                        None => (text.clone(), 0),
                    };
                    return Ok(Finished {
                        text,
                        stop_reason: last_stop,
                        steps: step,
                        usage: total,
                        reply,
                        blocks,
                    });
                }
            }
        }

        // The whole tool batch runs; no call is skipped. A tool that ends the
        // turn still lets the others finish, so every call gets a result. An
        // interrupt gives each call still to run an "interrupted" result.
        let mut end_turn: Option<String> = None;
        for block in &reply.content {
            let ContentBlock::ToolCall(call) = block else {
                continue;
            };
            out.emit(RunEvent::ToolStarted {
                call_id: call.id.clone(),
                name: call.name.clone(),
                summary: summarize_call(&call.name, &call.arguments),
            });
            let began = Instant::now();
            let (text, is_error, details) = if start.cancel.is_cancelled() {
                (
                    "interrupted: a newer message aborted the run before this call ran".to_owned(),
                    true,
                    None,
                )
            } else {
                match call_tool(&run, &ctx, call, &start.cancel).await {
                    ToolOutcome::Ok { text, details } => (text, false, details),
                    ToolOutcome::Error { text } => (text, true, None),
                    ToolOutcome::EndTurn { text } => {
                        end_turn = Some(text.clone());
                        (text, true, None)
                    }
                }
            };
            let result = ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: vec![ContentBlock::text(text.clone())],
                details,
                is_error,
                timestamp: services.now_ms(),
            };
            s.handle
                .append(
                    vec![EntryBody::Message {
                        message: Message::ToolResult(result.clone()),
                    }],
                    false,
                )
                .await?;
            history.push(Message::ToolResult(result));
            out.emit(RunEvent::ToolFinished {
                call_id: call.id.clone(),
                name: call.name.clone(),
                is_error,
                output: shorten(&text, EVENT_OUTPUT_CHARS),
                duration_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
        }
        out.emit(turn_end);
        if start.cancel.is_cancelled() {
            return finish_failed(services, s, &total, interrupted()).await;
        }
        if let Some(reason) = end_turn {
            return finish_failed(
                services,
                s,
                &total,
                RuntimeError::FailedPrecondition(format!("a tool ended the turn: {reason}")),
            )
            .await;
        }
        if Instant::now() >= deadline {
            return finish_failed(
                services,
                s,
                &total,
                RuntimeError::ResourceExhausted(format!(
                    "the run exceeded its time limit of {} s",
                    services.run_timeout().as_secs()
                )),
            )
            .await;
        }
        // Steered messages join after the whole batch, before the next call.
        let steer = s.extras.queue().drain_steer(start.run);
        if !steer.is_empty() {
            take_steer(services, s, start.run, steer, &mut history).await?;
        }
    }
    finish_failed(services, s, &total, RuntimeError::ResourceExhausted(format!(
        "the run stopped after {max_steps} model calls (max_steps); the tool results so far are saved"
    )))
    .await
}

/// The pairing check before a model request (lesson L10); what it fills in
/// is persisted, so the next load is clean.
async fn repair(
    services: &Services,
    s: &SessionCtx,
    history: &mut Vec<Message>,
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
        s.handle.append(bodies, true).await?;
    }
    Ok(())
}

/// Commits steered messages; if that fails they go back to the queue, so the
/// next run takes them (lesson L11).
async fn take_steer(
    services: &Services,
    s: &SessionCtx,
    run: u64,
    steer: Vec<Inbound>,
    history: &mut Vec<Message>,
) -> Result<(), RuntimeError> {
    match append_user(services, s, &steer).await {
        Ok(users) => {
            tracing::debug!(messages = steer.len(), "steered messages delivered");
            history.extend(users);
            Ok(())
        }
        Err(error) => {
            s.extras.queue().requeue_steer(run, steer);
            Err(error)
        }
    }
}

/// Runs one tool call. On an interrupt the tool gets a short grace to stop
/// by itself (exec kills its process group), then is abandoned.
async fn call_tool(
    run: &RunModel,
    ctx: &openclaw_tools::ToolContext,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let work = run.tools.call(ctx, &call.name, call.arguments.clone());
    tokio::pin!(work);
    tokio::select! {
        outcome = &mut work => outcome,
        () = cancel.cancelled() => {
            match tokio::time::timeout(INTERRUPT_GRACE, &mut work).await {
                Ok(outcome) => outcome,
                Err(_) => ToolOutcome::EndTurn {
                    text: "interrupted: a newer message aborted the run while this call ran".to_owned(),
                },
            }
        }
    }
}

/// Calls the model, forwarding text and thinking as they stream and feeding
/// the block sink (with its idle timer).
async fn call_model(
    model: &ResolvedModel,
    request: ModelRequest,
    out: &Emitter,
    sink: &mut Option<BlockSink>,
    cancel: &CancellationToken,
    deadline: Instant,
) -> Result<AssistantMessage, RuntimeError> {
    let began = Instant::now();
    let (ptx, mut prx) = mpsc::channel::<StreamEvent>(STREAM_BUFFER);
    let policy = RetryPolicy {
        deadline: deadline.saturating_duration_since(Instant::now()),
        ..RetryPolicy::default()
    };
    let call = complete_with_retry(
        model.provider.as_ref(),
        request,
        ptx,
        cancel.clone(),
        &policy,
    );
    let forward = async {
        enum Step {
            Event(Option<StreamEvent>),
            Idle,
        }
        loop {
            let idle_at = sink.as_ref().and_then(BlockSink::deadline);
            let step = match idle_at {
                Some(at) => tokio::select! {
                    event = prx.recv() => Step::Event(event),
                    () = tokio::time::sleep_until(at) => Step::Idle,
                },
                None => Step::Event(prx.recv().await),
            };
            match step {
                Step::Idle => {
                    if let Some(sink) = sink.as_mut() {
                        sink.poll();
                    }
                }
                Step::Event(None) => break,
                Step::Event(Some(event)) => match event {
                    StreamEvent::TextDelta(text) => {
                        if let Some(sink) = sink.as_mut() {
                            sink.text(&text);
                        }
                        out.emit(RunEvent::TextDelta(text));
                    }
                    StreamEvent::ThinkingDelta(text) => {
                        if let Some(sink) = sink.as_mut() {
                            sink.text_end();
                        }
                        out.emit(RunEvent::ThinkingDelta(text));
                    }
                    StreamEvent::ToolCallStarted { .. } => {
                        if let Some(sink) = sink.as_mut() {
                            sink.text_end();
                        }
                    }
                    StreamEvent::ToolCallFinished(_) | StreamEvent::Usage(_) => {}
                },
            }
        }
    };
    let (result, ()) = tokio::join!(call, forward);
    let (outcome, tokens) = match &result {
        Ok(reply) if reply.stop_reason == StopReason::Error => ("error", tokens_of(reply)),
        Ok(reply) => ("ok", tokens_of(reply)),
        Err(ProviderError::Cancelled) => ("aborted", Tokens::default()),
        Err(_) => ("error", Tokens::default()),
    };
    service_kit::metrics::model_call(
        &model.reference.provider,
        &model.reference.model,
        outcome,
        began.elapsed(),
        tokens,
    );
    result.map_err(provider_error)
}

fn tokens_of(reply: &AssistantMessage) -> Tokens {
    reply
        .usage
        .as_ref()
        .map_or_else(Tokens::default, |u| Tokens {
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
        })
}

pub(super) fn provider_error(error: ProviderError) -> RuntimeError {
    let message = format!("model provider: {error}");
    match error {
        ProviderError::RateLimited { .. } => RuntimeError::ResourceExhausted(message),
        ProviderError::ContextOverflow { .. } => RuntimeError::ContextOverflow(message),
        ProviderError::Config { .. } | ProviderError::Client { .. } => {
            RuntimeError::FailedPrecondition(message)
        }
        ProviderError::Cancelled => RuntimeError::Aborted(message),
        ProviderError::Server { .. }
        | ProviderError::Malformed { .. }
        | ProviderError::Connection { .. } => RuntimeError::Unavailable(message),
    }
}

/// Turn boundary: fsync and record usage in the index.
async fn finish(services: &Services, s: &SessionCtx, usage: &Usage) -> Result<(), RuntimeError> {
    s.handle.append(Vec::new(), true).await?;
    services.record_turn(&s.agent, &s.key, usage);
    Ok(())
}

async fn finish_failed(
    services: &Services,
    s: &SessionCtx,
    usage: &Usage,
    error: RuntimeError,
) -> Result<Finished, RuntimeError> {
    finish(services, s, usage).await?;
    Err(error)
}

fn add_usage(total: &mut Usage, usage: &Usage) {
    total.input += usage.input;
    total.output += usage.output;
    total.cache_read += usage.cache_read;
    total.cache_write += usage.cache_write;
    total.total_tokens += usage.total_tokens;
}

pub(super) fn assistant_text(reply: &AssistantMessage) -> String {
    reply
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

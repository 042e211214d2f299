//! The model side of a run: one model call streamed to the run's events and block sink, with
//! the provider's retries, and one retry after compaction when the provider refuses the
//! request as too long.

use super::*;

/// Stream events buffered between the provider and the run.
pub(super) const STREAM_BUFFER: usize = 256;

/// The parts of one run its model calls and tool batches use.
#[derive(Clone, Copy)]
pub(super) struct RunParts<'a> {
    pub(super) services: &'a Services,
    pub(super) s: &'a Session,
    pub(super) run: &'a RunModel,
    pub(super) ctx: &'a openclaw_tools::ToolContext,
    pub(super) out: &'a Emitter,
    pub(super) tool_specs: &'a std::sync::Arc<[ToolSpec]>,
    pub(super) origin: openclaw_tools::UserOrigin<'a>,
    pub(super) run_number: u64,
    pub(super) cancel: &'a CancellationToken,
    pub(super) deadline: Instant,
    /// The run's thinking level (see [`RunContext::thinking`]).
    pub(super) thinking: Option<openclaw_config::raw::ThinkingLevel>,
}

/// Compares the prompt's stable prefix with the session's previous model call: whether it
/// changed and which stable sections did.
pub(super) fn prefix_change(
    s: &Session,
    fingerprint: &std::sync::Arc<PromptFingerprint>,
) -> (bool, Vec<String>) {
    let previous = s.live.swap_fingerprint(std::sync::Arc::clone(fingerprint));
    let (changed, sections) = match &previous {
        Some(prev) if prev.stable_sha256 != fingerprint.stable_sha256 => {
            (true, fingerprint.changed_since(prev))
        }
        _ => (false, Vec::new()),
    };
    if changed {
        crate::metrics::stable_prefix_changed(&s.agent.id);
        tracing::info!(changed = ?sections, "stable prompt prefix changed since the previous model call");
    }
    (changed, sections)
}

/// Calls the model, forwarding text and thinking as they stream and feeding
/// the block sink (with its idle timer). What the model says is redacted on its way: the
/// deltas through a stream redactor (a secret split across deltas included), the reply whole
/// before it is returned to be stored.
pub(super) async fn call_model(
    model: &ResolvedModel,
    request: ModelRequest,
    out: &Emitter,
    sink: &mut Option<BlockSink>,
    cancel: &CancellationToken,
    deadline: Instant,
    redactor: &openclaw_secrets::Redactor,
) -> Result<AssistantMessage, (RuntimeError, String)> {
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
    let mut text_stream = openclaw_secrets::StreamRedactor::new(redactor.clone());
    let mut thinking_stream = openclaw_secrets::StreamRedactor::new(redactor.clone());
    // The text the client has been sent, for the transcript if the call does not finish (an
    // interrupt or a stop cancels it without the provider's own partial text).
    let streamed = std::sync::Mutex::new(String::new());
    let forward = async {
        // Text held back by the stream redactor is sent before anything that ends the text.
        let flush_text = |stream: &mut openclaw_secrets::StreamRedactor,
                          sink: &mut Option<BlockSink>| {
            if let Some(text) = stream.finish() {
                if let Some(sink) = sink.as_mut() {
                    sink.text(&text);
                }
                streamed
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push_str(&text);
                out.emit(RunEvent::TextDelta(text));
            }
        };
        let flush_thinking = |stream: &mut openclaw_secrets::StreamRedactor| {
            if let Some(text) = stream.finish() {
                out.emit(RunEvent::ThinkingDelta(text));
            }
        };
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
                Step::Event(None) => {
                    flush_text(&mut text_stream, sink);
                    flush_thinking(&mut thinking_stream);
                    break;
                }
                Step::Event(Some(event)) => match event {
                    StreamEvent::TextDelta(text) => {
                        flush_thinking(&mut thinking_stream);
                        if let Some(text) = text_stream.push(&text) {
                            if let Some(sink) = sink.as_mut() {
                                sink.text(&text);
                            }
                            streamed
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .push_str(&text);
                            out.emit(RunEvent::TextDelta(text));
                        }
                    }
                    StreamEvent::ThinkingDelta(text) => {
                        flush_text(&mut text_stream, sink);
                        if let Some(sink) = sink.as_mut() {
                            sink.text_end();
                        }
                        if let Some(text) = thinking_stream.push(&text) {
                            out.emit(RunEvent::ThinkingDelta(text));
                        }
                    }
                    StreamEvent::ToolCallStarted { .. } => {
                        flush_text(&mut text_stream, sink);
                        flush_thinking(&mut thinking_stream);
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
    crate::metrics::model_call(
        &model.reference.provider,
        &model.reference.model,
        outcome,
        began.elapsed(),
        tokens,
    );
    result
        .map_err(|error| {
            // What the model had streamed before the failure (the client saw it), redacted
            // like everything else it says.
            let partial = match error.partial_text() {
                "" => streamed
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
                text => redactor.redact(text).into_owned(),
            };
            (provider_error(error), partial)
        })
        .map(|mut reply| {
            crate::redaction::redact_reply(redactor, &mut reply);
            reply
        })
}

pub(super) fn tokens_of(reply: &AssistantMessage) -> Tokens {
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

impl RunParts<'_> {
    /// Keeps what the model streamed before its call failed: the client has seen that text,
    /// so the transcript holds it too, as an assistant message marked as failed (`error`, or
    /// `aborted` when the run was interrupted) with the reason. Nothing is kept when nothing
    /// was streamed.
    async fn keep_partial(
        &self,
        partial: &str,
        error: &RuntimeError,
        history: &mut Vec<Arc<Message>>,
    ) -> Result<(), RuntimeError> {
        if partial.trim().is_empty() {
            return Ok(());
        }
        let (stop_reason, why) = if self.cancel.is_cancelled() {
            (
                StopReason::Aborted,
                format!(
                    "cut short before the reply was complete: {}",
                    why_cut(self.services)
                ),
            )
        } else {
            (
                StopReason::Error,
                format!("incomplete: the model call failed after this text ({error})"),
            )
        };
        let message = Message::Assistant(AssistantMessage {
            content: vec![ContentBlock::text(partial.to_owned())],
            provider: self.run.model.reference.provider.clone(),
            model: self.run.model.reference.model.clone(),
            api: None,
            usage: None,
            stop_reason,
            error_message: Some(self.services.redactor().redact(&why).into_owned()),
            timestamp: self.services.now_ms(),
        });
        self.s
            .live
            .append(
                vec![EntryBody::Message {
                    message: message.clone(),
                }],
                false,
            )
            .await?;
        history.push(Arc::new(message));
        Ok(())
    }

    /// The request for one model call over `history`.
    pub(super) fn request(&self, system: &SystemPrompt, history: &[Arc<Message>]) -> ModelRequest {
        ModelRequest {
            model: self.run.model.wire_model.clone(),
            system: system.clone(),
            messages: self.s.live.model_history(history, self.origin),
            tools: std::sync::Arc::clone(self.tool_specs),
            max_output_tokens: None,
            reasoning_effort: openclaw_providers::reasoning_effort(self.thinking),
        }
    }

    /// Makes call `step` with `prompt` over `history`. A provider that refuses the request
    /// as too long gets one retry after compaction (`overflow_retried` remembers it for the
    /// run). The outer error ends the run as it is; the inner one after a turn boundary.
    pub(super) async fn model_call(
        &self,
        step: u32,
        rendered: &RunPrompt,
        sink: &mut Option<BlockSink>,
        compactor: &mut Compactor<'_>,
        history: &mut Vec<Arc<Message>>,
        overflow_retried: &mut bool,
    ) -> Result<Result<AssistantMessage, RuntimeError>, RuntimeError> {
        let (mut prefix_changed, mut changed_sections) =
            prefix_change(self.s, &rendered.fingerprint);
        let (prompt, system) = (&rendered.response, &rendered.system);
        loop {
            self.out.emit(RunEvent::ModelCall {
                step,
                model: self.run.name.clone(),
                stable_prefix_sha256: prompt.stable_prefix_sha256.clone(),
                prefix_changed: std::mem::take(&mut prefix_changed),
                changed_sections: std::mem::take(&mut changed_sections),
                prompt_chars: prompt.chars,
                messages: u32::try_from(history.len()).unwrap_or(u32::MAX),
            });
            let request = self.request(system, history);
            let error = match call_model(
                &self.run.model,
                request,
                self.out,
                sink,
                self.cancel,
                self.deadline,
                self.services.redactor(),
            )
            .await
            {
                Ok(reply) => return Ok(Ok(reply)),
                Err((error, partial)) => {
                    self.keep_partial(&partial, &error, history).await?;
                    error
                }
            };
            if let Some(sink) = sink.as_mut() {
                sink.message_failed();
            }
            if self.cancel.is_cancelled() {
                return Ok(Err(cut_short(self.services, self.run_number)));
            }
            let provider_says = match error {
                RuntimeError::ContextOverflow(provider_says) => provider_says,
                // A refusal of what the request holds: is the newest content the cause?
                RuntimeError::ProviderRefused(provider_says) => {
                    return Ok(Err(self
                        .judge_refusal(system, history, provider_says)
                        .await?));
                }
                error => return Ok(Err(error)),
            };
            // The provider counted more than our estimate: compact and retry
            // the call once.
            if *overflow_retried {
                let error = compactor.still_too_big(
                    prompt,
                    history,
                    &format!("the provider refused the request as too long even after compaction ({provider_says})"),
                );
                return Ok(Err(error));
            }
            *overflow_retried = true;
            if let Err(error) = compactor
                .after_overflow(prompt, history, &provider_says)
                .await
            {
                return Ok(Err(error));
            }
            repair(self.services, self.s, history).await?;
        }
    }
}

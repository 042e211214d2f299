//! The tool side of a run: each call of a tool batch run and its result written, interrupts
//! honoured, and what the batch means for the run.

use super::*;

/// How long a tool may take to wind down by itself after an interrupt.
pub(super) const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Model replies in a row whose every tool call had arguments that were not JSON, after which
/// the run stops instead of asking again.
pub(super) const MAX_INVALID_BATCHES: u32 = 3;

/// How a tool batch ended.
#[derive(Debug, Default)]
pub(super) struct Batch {
    /// The reason, when a tool ended the turn.
    pub(super) end_turn: Option<String>,
    /// Every call of the batch had arguments the tool never saw (not JSON, or cut by the
    /// output limit).
    pub(super) all_invalid: bool,
}

/// Runs every tool call of `reply`, writing each result as it comes; no call is skipped. A
/// call whose arguments are not JSON (the model wrote something else, or its output limit cut
/// the call off) is not run: its result tells the model what went wrong, so it can send the
/// call again.
pub(super) async fn run_tool_batch(
    parts: &RunParts<'_>,
    reply: &AssistantMessage,
    history: &mut Vec<Arc<Message>>,
) -> Result<Batch, RuntimeError> {
    let RunParts {
        services,
        s,
        run,
        ctx,
        out,
        cancel,
        ..
    } = *parts;
    // The whole tool batch runs; no call is skipped. A tool that ends the
    // turn still lets the others finish, so every call gets a result. An
    // interrupt gives each call still to run an "interrupted" result.
    let mut end_turn: Option<String> = None;
    let (mut calls, mut invalid) = (0usize, 0usize);
    let cut_by_limit = reply.stop_reason == StopReason::Length;
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
        calls += 1;
        let (text, is_error, details) = if cancel.is_cancelled() {
            (
                format!("interrupted: {} before this call ran", why_cut(services)),
                true,
                None,
            )
        } else if let Err(bad) = openclaw_providers::tool_arguments(call) {
            invalid += 1;
            (not_run(&bad, cut_by_limit), true, None)
        } else {
            match call_tool(services, run, ctx, call, cancel).await {
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
        s.live
            .append(
                vec![EntryBody::Message {
                    message: Message::ToolResult(result.clone()),
                }],
                false,
            )
            .await?;
        history.push(Arc::new(Message::ToolResult(result)));
        out.emit(RunEvent::ToolFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            is_error,
            output: shorten(&text, EVENT_OUTPUT_CHARS),
            duration_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
    }
    Ok(Batch {
        end_turn,
        all_invalid: calls > 0 && invalid == calls,
    })
}

/// The result of a call whose arguments never reached its tool.
fn not_run(bad: &openclaw_providers::InvalidArguments, cut_by_limit: bool) -> String {
    if cut_by_limit {
        return format!(
            "Not run: your reply reached its output limit while writing this call, so its \
             arguments are incomplete ({}). Send it again in smaller pieces, for example \
             several shorter writes or edits.",
            bad.error
        );
    }
    format!(
        "Not run: the arguments of this call are not a JSON object ({}); they began: {}. \
         Send the call again with its arguments as one valid JSON object.",
        bad.error,
        shorten(&bad.raw, 200)
    )
}

/// Runs one tool call. On an interrupt the tool gets a short grace to stop
/// by itself (exec kills its process group), then is abandoned.
pub(super) async fn call_tool(
    services: &Services,
    run: &RunModel,
    ctx: &openclaw_tools::ToolContext,
    call: &ToolCall,
    cancel: &CancellationToken,
) -> ToolOutcome {
    // The call's id travels with it, so an approval it asks for names the call.
    let mut ctx = ctx.clone();
    call.id.clone_into(&mut ctx.call_id);
    let work = run.tools.call(&ctx, &call.name, call.arguments.clone());
    tokio::pin!(work);
    tokio::select! {
        outcome = &mut work => outcome,
        () = cancel.cancelled() => {
            match tokio::time::timeout(INTERRUPT_GRACE, &mut work).await {
                Ok(outcome) => outcome,
                Err(_) => ToolOutcome::EndTurn {
                    text: format!("interrupted: {} while this call ran", why_cut(services)),
                },
            }
        }
    }
}

/// Why the run stops after a tool batch, if it does: a tool ended the turn, or the run is
/// past its time limit.
pub(super) fn after_batch(
    services: &Services,
    end_turn: Option<String>,
    deadline: Instant,
) -> Option<RuntimeError> {
    if let Some(reason) = end_turn {
        return Some(RuntimeError::FailedPrecondition(format!(
            "a tool ended the turn: {reason}"
        )));
    }
    (Instant::now() >= deadline).then(|| {
        RuntimeError::ResourceExhausted(format!(
            "the run exceeded its time limit of {} s",
            services.run_timeout().as_secs()
        ))
    })
}

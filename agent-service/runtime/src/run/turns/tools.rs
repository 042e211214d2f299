//! The tool side of a run: each call of a tool batch run and its result written, interrupts
//! honoured, and what the batch means for the run.

use super::*;

/// How long a tool may take to wind down by itself after an interrupt.
pub(super) const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs every tool call of `reply`, writing each result as it comes; no call is skipped.
/// Returns the reason when a tool ended the turn.
pub(super) async fn run_tool_batch(
    parts: &RunParts<'_>,
    reply: &AssistantMessage,
    history: &mut Vec<Message>,
) -> Result<Option<String>, RuntimeError> {
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
        let (text, is_error, details) = if cancel.is_cancelled() {
            (
                "interrupted: a newer message aborted the run before this call ran".to_owned(),
                true,
                None,
            )
        } else {
            match call_tool(run, ctx, call, cancel).await {
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
        history.push(Message::ToolResult(result));
        out.emit(RunEvent::ToolFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            is_error,
            output: shorten(&text, EVENT_OUTPUT_CHARS),
            duration_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
    }
    Ok(end_turn)
}

/// Runs one tool call. On an interrupt the tool gets a short grace to stop
/// by itself (exec kills its process group), then is abandoned.
pub(super) async fn call_tool(
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
                    text: "interrupted: a newer message aborted the run while this call ran".to_owned(),
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

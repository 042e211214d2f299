//! The driver of a session's runs: one task runs them one after another
//! while the queue has more, admits each (builds its [`RunContext`]), hands it to its agent's
//! runtime, settles a heartbeat's reply, publishes each run's terminal event, and at
//! shutdown saves whatever is still queued. Also the collect-mode timer.

use std::{sync::Arc, time::Instant};

use openclaw_config::resolve::AgentRuntime;
use tracing::Instrument;

use openclaw_transcript::EntryBody;
use serde_json::json;

use super::{
    Emitter, RunEvent,
    approver::RunApprover,
    codex,
    controls::tool_context,
    error_code,
    run_context::{self, Finished, RunContext, append_user},
    turns,
};
use crate::{
    error::{ErrorCode, RuntimeError},
    heartbeat::{DEFAULT_ACK_MAX_CHARS, HEARTBEAT_ENTRY, Verdict, classify},
    services::Services,
    sessions::Session,
    sessions::queue::{CollectLimits, RunStart},
};

/// Starts a driver for `start` (already active in the session's queue).
pub(crate) fn spawn_driver(services: Arc<Services>, session: Arc<Session>, start: RunStart) {
    tokio::spawn(drive(services, session, start));
}

async fn drive(services: Arc<Services>, session: Arc<Session>, start: RunStart) {
    let mut next = Some(start);
    while let Some(start) = next.take() {
        if services.is_stopping() {
            save_unanswered(&services, &session, start).await;
            return;
        }
        let run = start.run;
        // A heartbeat's reply forms out of sight (see crate::heartbeat).
        let out = if start.is_heartbeat() {
            Emitter::quiet(&session.live, run)
        } else {
            Emitter::new(&session.live, run)
        };
        let result = isolated(&services, &session, start, &out).await;
        let ended = session.live.queue().run_ended(run);
        if let Some((next_run, count)) = ended.handoff {
            tracing::info!(
                run,
                next_run,
                messages = count,
                "steered messages the run never took move to the next run"
            );
            out.emit(RunEvent::Handoff {
                next_run,
                messages: u32::try_from(count).unwrap_or(u32::MAX),
            });
        }
        match result {
            Ok(done) => out.emit(RunEvent::Final {
                text: done.text,
                stop_reason: done.stop_reason,
                steps: done.steps,
                usage: done.usage,
                reply: done.reply,
                blocks: done.blocks,
                directives: done.directives,
                silent: done.silent,
            }),
            Err(error) => {
                tracing::warn!(%error, run, session = %session.key.as_str(), "run failed");
                out.emit(RunEvent::Error {
                    code: error_code(&error),
                    message: services.redact(&error.to_string()).into_owned(),
                });
            }
        }
        next = ended.next;
    }
}

/// Runs one run on the driver's task, caught so a panic fails that run (as INTERNAL) instead
/// of leaving the session's queue stuck. The run is admitted (its context built), then handed
/// to its agent's runtime. Not a task of its own: a spawned task per run is a hand-off between
/// workers for nothing, as the driver only waits for it.
async fn isolated(
    services: &Arc<Services>,
    session: &Arc<Session>,
    start: RunStart,
    out: &Emitter,
) -> Result<Finished, RuntimeError> {
    use futures_util::FutureExt as _;
    let (services, session, out) = (Arc::clone(services), Arc::clone(session), out.clone());
    let _active = crate::metrics::run_active();
    let span = tracing::info_span!("run", session_id = %session.session_id, agent = %session.agent.id, run = start.run);
    let run = async move {
        let rc = admit(services, session, start, out).await?;
        let done = match rc.session.agent.runtime {
            AgentRuntime::Codex(_) => codex::run_codex_once(&rc).await?,
            AgentRuntime::Embedded => turns::run_once(&rc).await?,
        };
        if rc.start.is_heartbeat() {
            return settle(&rc, done).await;
        }
        Ok(done)
    }
    .instrument(span);
    match std::panic::AssertUnwindSafe(run).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => Err(RuntimeError::Internal(format!(
            "the run panicked: {}",
            openclaw_tools::in_place::panic_text(panic.as_ref())
        ))),
    }
}

/// Admits `start`, building its [`RunContext`]: writes its messages into the transcript before
/// anything that can fail (a run that fails still leaves them recorded), resolves the run's
/// model and tools, publishes the started event and builds the tool context. The caller publishes the terminal event.
async fn admit(
    services: Arc<Services>,
    session: Arc<Session>,
    start: RunStart,
    out: Emitter,
) -> Result<RunContext, RuntimeError> {
    let deadline = Instant::now() + services.run_timeout();
    let first = start
        .first()
        .cloned()
        .ok_or_else(|| RuntimeError::Internal(format!("run {} has no messages", start.run)))?;
    // The messages are accepted: they go into the transcript before anything
    // that can fail, so a run that fails still leaves them recorded.
    append_user(&services, &session, &start.messages).await?;
    let loaded = services.loaded_config()?;
    let model =
        run_context::run_model(&services, &loaded, &session, first.options.model.as_deref())
            .await?;
    if let AgentRuntime::Codex(_) = session.agent.runtime {
        // A Codex that cannot run (missing, or a version the harness cannot drive) refuses
        // the run before it starts, as a provider that cannot be reached does.
        codex::ready(&services, &session, &loaded, &model).await?;
    }
    out.emit(RunEvent::Started {
        run_id: start.run_id(),
        agent_id: session.agent.id.clone(),
        session_key: session.key.as_str().to_owned(),
        session_id: session.session_id.clone(),
        model: model.name.clone(),
        message_seqs: start.user_seqs(),
        system_events: start.system_events(),
    });
    let reasoning = services
        .session_reasoning(&session.agent.id, &session.key)
        .await;
    let thinking = services
        .session_thinking(&session.agent.id, &session.key)
        .await
        .or(session.agent.thinking_default);
    let mut tools = tool_context(&services, &session, &model, start.cancel.clone())?;
    tools.approver = RunApprover::for_run(&services, &session, &out, &loaded.config);
    Ok(RunContext {
        services,
        session,
        start,
        first,
        out,
        loaded,
        model,
        deadline,
        thinking,
        reasoning,
        tools,
    })
}

/// Settles a finished heartbeat run: an acknowledgement (or any reply with `target: "none"`)
/// is kept from the final reply; an alert goes out without the token. The verdict is recorded
/// in the transcript as a [`HEARTBEAT_ENTRY`] entry after the reply.
async fn settle(rc: &RunContext, done: Finished) -> Result<Finished, RuntimeError> {
    let session = &rc.session;
    let hb = &session.agent.heartbeat;
    // Judged by what it would deliver: directives out, the silent token an acknowledgement.
    let verdict = if done.silent {
        Verdict::Ack
    } else {
        classify(
            &done.clean,
            hb.ack_max_chars.unwrap_or(DEFAULT_ACK_MAX_CHARS),
        )
    };
    let muted = hb
        .target
        .as_deref()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("none"));
    let (outcome, reply) = match verdict {
        Verdict::Ack => ("ack", String::new()),
        Verdict::Alert(_) if muted => ("alert", String::new()),
        Verdict::Alert(text) => ("alert", text),
    };
    session
        .live
        .append(
            vec![EntryBody::Custom {
                custom_type: HEARTBEAT_ENTRY.to_owned(),
                data: Some(json!({ "outcome": outcome, "delivered": !reply.is_empty() })),
            }],
            true,
        )
        .await?;
    let directives = if reply.is_empty() {
        crate::events::ReplyDirectives::default()
    } else {
        done.directives.clone()
    };
    Ok(Finished {
        reply,
        directives,
        ..done
    })
}

/// Shutdown: `start` and everything still queued in the session go into the
/// transcript as user messages without an answer, and every waiting run is
/// told so. Nothing accepted is lost.
async fn save_unanswered(services: &Services, session: &Session, start: RunStart) {
    let mut runs = vec![(start.run, start.messages)];
    runs.extend(session.live.queue().drain_all());
    // A heartbeat that never ran is not a message anyone waits for: dropped.
    let messages: Vec<_> = runs
        .iter()
        .flat_map(|(_, m)| m.iter().filter(|m| !m.options.heartbeat).cloned())
        .collect();
    let saved = match append_user(services, session, &messages).await {
        Ok(_) => session.live.append(Vec::new(), true).await,
        Err(error) => Err(error),
    };
    let seqs: Vec<u64> = messages.iter().map(|m| m.seq).collect();
    let message = match &saved {
        Ok(_) => {
            tracing::info!(session = %session.key.as_str(), ?seqs, "shutdown: queued messages saved to the transcript unanswered");
            "agent-service is shutting down: the message is saved in the transcript but was not answered; send it again to get a reply".to_owned()
        }
        Err(error) => {
            tracing::error!(%error, session = %session.key.as_str(), ?seqs, "shutdown: queued messages could not be saved");
            format!("agent-service is shutting down and could not save the message: {error}")
        }
    };
    for (run, _) in runs {
        Emitter::new(&session.live, run).emit(RunEvent::Error {
            code: ErrorCode::Unavailable.as_str(),
            message: message.clone(),
        });
    }
}

/// Makes sure a timer runs the session's collect batch once it has been
/// quiet for the debounce window. One timer per session at a time.
pub(crate) fn ensure_collect_timer(
    services: &Arc<Services>,
    session: &Arc<Session>,
    limits: CollectLimits,
) {
    if !session.live.claim_collect_timer() {
        return;
    }
    let (services, session) = (Arc::clone(services), Arc::clone(session));
    tokio::spawn(async move {
        loop {
            let deadline = session.live.queue().collect_deadline_ms(limits);
            let Some(deadline) = deadline else {
                session.live.release_collect_timer();
                // A batch may have begun between the check and the release.
                let again = session.live.queue().collect_deadline_ms(limits).is_some();
                if again && session.live.claim_collect_timer() {
                    continue;
                }
                return;
            };
            tokio::time::sleep_until(session.live.instant_at(deadline)).await;
            let now = session.live.now_ms();
            let start = session.live.queue().flush_collect(now, limits);
            if let Some(start) = start {
                tracing::debug!(
                    run = start.run,
                    messages = start.messages.len(),
                    "collect batch runs"
                );
                spawn_driver(Arc::clone(&services), Arc::clone(&session), start);
            }
        }
    });
}

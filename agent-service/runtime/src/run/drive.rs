//! The driver of a session's runs: one task runs them one after another
//! while the queue has more, publishes each run's terminal event, and at
//! shutdown saves whatever is still queued. Also the collect-mode timer.

use std::sync::Arc;

use openclaw_config::resolve::AgentRuntime;
use tracing::Instrument;

use super::{
    Emitter, RunEvent, beats, codex, error_code,
    turns::{self, Finished},
};
use crate::{
    error::{ErrorCode, RuntimeError},
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

/// Runs one run on its own task, so a panic fails that run (as INTERNAL)
/// instead of leaving the session's queue stuck.
async fn isolated(
    services: &Arc<Services>,
    session: &Arc<Session>,
    start: RunStart,
    out: &Emitter,
) -> Result<Finished, RuntimeError> {
    let (services, session, out) = (Arc::clone(services), Arc::clone(session), out.clone());
    let task = tokio::spawn(async move {
        let _active = crate::metrics::run_active();
        let span = tracing::info_span!("run", session_id = %session.session_id, agent = %session.agent.id, run = start.run);
        let input = turns::RunInput {
            services: &services,
            session: &session,
            start: &start,
            out: &out,
        };
        let done = match session.agent.runtime {
            AgentRuntime::Codex(_) => codex::run_codex_once(input).instrument(span).await?,
            AgentRuntime::Embedded => turns::run_once(input).instrument(span).await?,
        };
        if start.is_heartbeat() {
            return beats::settle(&session, done).await;
        }
        Ok(done)
    });
    match task.await {
        Ok(result) => result,
        Err(error) => Err(RuntimeError::Internal(format!(
            "the run task failed: {error}"
        ))),
    }
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
    let saved = match turns::append_user(services, session, &messages).await {
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

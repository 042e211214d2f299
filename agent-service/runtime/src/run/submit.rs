//! Handing a message to its session: admission, the chat
//! commands (see [`super::commands`]), the queue mode that applies, and the
//! queue decision.

use std::sync::Arc;

use openclaw_config::raw;
use openclaw_tools::untrusted::META_LEAD;

use super::{
    Emitter, RunEvent, RunSpec, Submitted, acceptance, commands,
    drive::{ensure_collect_timer, spawn_driver},
};
use crate::{
    error::RuntimeError,
    services::Services,
    sessions::{
        journal::Accepted,
        queue::{CollectLimits, Disposition, DropPolicy, Inbound, QueueMode, RunOptions},
        stored_size::check_stored_size,
    },
};

/// Hands a user message to its session and says at once what became of it.
///
/// Refusals come back as errors before anything is written: an empty
/// message, an unknown agent, a sender outside the channel's allowlist
/// (PERMISSION_DENIED), a model that does not resolve, shutdown.
pub(crate) async fn submit(
    services: &Arc<Services>,
    spec: RunSpec,
) -> Result<Submitted, RuntimeError> {
    if services.is_stopping() {
        return Err(RuntimeError::Unavailable(
            "agent-service is shutting down; send the message again once it is back".to_owned(),
        ));
    }
    // A stored text that starts with NUL carries the runtime's sender metadata (P-52): a
    // message from outside may not hold one, so that it cannot pass for that line.
    if spec.message.contains(META_LEAD) {
        return Err(RuntimeError::invalid(
            "message",
            "must not contain NUL characters",
        ));
    }
    check_stored_size(&spec.message)?;
    let admitted = super::prepare::admit(services, &spec).await?;
    let session = admitted.session;
    if let Some(command) = commands::parse(&spec.message) {
        return commands::answer(
            services,
            &session,
            &admitted.entry,
            &spec.channel,
            &spec.channel.sender_id,
            command,
        )
        .await;
    }
    // A model that cannot resolve is refused now rather than failing the run.
    super::models::choose_model(
        services,
        &admitted.loaded,
        &session.agent,
        spec.model.as_deref(),
        admitted.entry.model_override.as_deref(),
    )?;
    let settings = admitted.loaded.config.queue();
    let mode = spec
        .queue_mode
        .or_else(|| {
            admitted
                .entry
                .queue_mode
                .as_deref()
                .and_then(QueueMode::parse)
        })
        .unwrap_or_else(|| from_config(settings.mode_for_channel(&spec.channel.channel)));
    let limits = CollectLimits {
        debounce_ms: settings.debounce_ms,
        cap: usize::try_from(settings.cap).unwrap_or(usize::MAX).max(1),
        drop: match settings.drop {
            raw::QueueDrop::Summarize => DropPolicy::Summarize,
            raw::QueueDrop::Old => DropPolicy::Old,
            raw::QueueDrop::New => DropPolicy::New,
        },
    };

    // Stored with the sender the channel reported, so that every later request shows the
    // model the same metadata (P-52).
    let text = crate::senders::chat_meta(&admitted.loaded.config, &session.agent.id, &spec.channel)
        .stamp(&spec.message);

    // The message is journaled (fsynced) before anyone is told it was
    // accepted, so a crash cannot lose it (see sessions::journal). Numbered and
    // queued under the session's admission, so concurrent arrivals keep their order.
    let admission = session.live.admission().await;
    let seq = session.live.queue().next_seq();
    let record = Accepted {
        seq,
        text: text.clone(),
        at: services.now_ms(),
        origin: Default::default(),
    };
    let journal = std::sync::Arc::clone(&session.journal);
    // An append and fdatasync of one short line: in place when a worker is to spare.
    openclaw_tools::in_place::short_file_work(move || journal.accept(&record))
        .await
        .map_err(|e| RuntimeError::Internal(format!("journal task failed: {e}")))?
        .map_err(|e| {
            RuntimeError::Unavailable(format!(
                "cannot record the message durably, so it was not accepted: {e}"
            ))
        })?;

    // Subscribe before the decision, so the caller sees the run's first event.
    let events = session.live.subscribe();
    let (disposition, start, displaced) = {
        let mut queue = session.live.queue();
        let inbound = Inbound {
            seq,
            text,
            channel: spec.channel,
            options: RunOptions {
                model: spec.model,
                max_steps: spec.max_steps,
                heartbeat: false,
                lightweight: false,
            },
            folded: Vec::new(),
            origin: Default::default(),
        };
        let (disposition, start) = queue.submit(inbound, mode, session.live.now_ms(), limits);
        // Published under the queue's lock, so the acceptance comes before
        // anything the run it goes to does with the message.
        if let Some(run) = disposition.run() {
            session.live.publish(
                run,
                RunEvent::Accepted(Box::new(acceptance(
                    &session,
                    disposition.clone(),
                    seq,
                    mode,
                ))),
            );
        }
        (disposition, start, queue.take_displaced())
    };
    drop(admission);
    // Refused messages are settled: nothing of them goes to the transcript.
    let mut settled: Vec<u64> = displaced.iter().map(|(m, _)| m.seq).collect();
    if matches!(disposition, Disposition::Rejected { .. }) {
        settled.push(seq);
    }
    if !settled.is_empty() {
        let journal = std::sync::Arc::clone(&session.journal);
        let _ = tokio::task::spawn_blocking(move || journal.done(&settled)).await;
    }
    tracing::info!(session = %session.key.as_str(), seq, mode = mode.as_str(), disposition = %disposition, "message accepted");
    if let Some(run) = disposition.run() {
        for (message, reason) in displaced {
            tracing::warn!(seq = message.seq, %reason, "collected message displaced");
            Emitter::new(&session.live, run).emit(RunEvent::MessageRejected {
                seq: message.seq,
                reason,
            });
        }
    }
    if let Some(start) = start {
        spawn_driver(Arc::clone(services), Arc::clone(&session), start);
    }
    if matches!(disposition, Disposition::Collected { .. }) {
        ensure_collect_timer(services, &session, limits);
    }
    Ok(Submitted {
        acceptance: acceptance(&session, disposition, seq, mode),
        events,
    })
}

fn from_config(mode: raw::QueueMode) -> QueueMode {
    match mode {
        raw::QueueMode::Steer => QueueMode::Steer,
        raw::QueueMode::Followup => QueueMode::Followup,
        raw::QueueMode::Collect => QueueMode::Collect,
        raw::QueueMode::Interrupt => QueueMode::Interrupt,
    }
}

//! Handing a message to its session: admission, the
//! `/queue` command, the queue mode that applies, and the queue decision.

use std::sync::Arc;

use openclaw_config::raw;

use super::{
    Acceptance, Emitter, RunEvent, RunSpec, Submitted,
    drive::{ensure_collect_timer, spawn_driver},
};
use crate::{
    error::RuntimeError,
    services::Services,
    sessions::Session,
    sessions::{
        journal::Accepted,
        queue::{CollectLimits, Disposition, DropPolicy, Inbound, QueueMode, RunOptions},
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
    check_stored_size(&spec.message)?;
    let admitted = services.admit(&spec).await?;
    let session = admitted.session;
    if let Some(argument) = queue_command(&spec.message) {
        return queue_command_reply(services, &session, admitted.entry.queue_mode, argument).await;
    }
    // A model that cannot resolve is refused now rather than failing the run.
    services.choose_model(
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

    // The message is journaled (fsynced) before anyone is told it was
    // accepted, so a crash cannot lose it (see sessions::journal).
    let seq = session.live.queue().next_seq();
    let record = Accepted {
        seq,
        text: spec.message.clone(),
        at: services.now_ms(),
    };
    let journal = std::sync::Arc::clone(&session.journal);
    tokio::task::spawn_blocking(move || journal.accept(&record))
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
            text: spec.message,
            channel: spec.channel,
            options: RunOptions {
                model: spec.model,
                max_steps: spec.max_steps,
                heartbeat: false,
            },
            folded: Vec::new(),
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

/// What became of message `seq` of `session`.
fn acceptance(
    session: &Session,
    disposition: Disposition,
    seq: u64,
    mode: QueueMode,
) -> Acceptance {
    Acceptance {
        disposition,
        seq,
        mode,
        agent_id: session.agent.id.clone(),
        session_key: session.key.as_str().to_owned(),
        session_id: session.session_id.clone(),
    }
}

fn from_config(mode: raw::QueueMode) -> QueueMode {
    match mode {
        raw::QueueMode::Steer => QueueMode::Steer,
        raw::QueueMode::Followup => QueueMode::Followup,
        raw::QueueMode::Collect => QueueMode::Collect,
        raw::QueueMode::Interrupt => QueueMode::Interrupt,
    }
}

/// The argument of a `/queue` command (`""` when bare), or `None` when the
/// message is not one.
fn queue_command(message: &str) -> Option<&str> {
    let rest = message.trim().strip_prefix("/queue")?;
    if rest.is_empty() || rest.starts_with(char::is_whitespace) {
        Some(rest.trim())
    } else {
        None
    }
}

/// Applies `/queue <mode>` (or `/queue default`) to the session; a bare
/// `/queue` reports the mode in effect.
async fn queue_command_reply(
    services: &Arc<Services>,
    session: &Arc<Session>,
    current: Option<String>,
    argument: &str,
) -> Result<Submitted, RuntimeError> {
    let events = session.live.subscribe();
    let word = argument.to_ascii_lowercase();
    let (stored, reply) = match word.as_str() {
        "" => {
            let reply = match current.as_deref().and_then(QueueMode::parse) {
                Some(mode) => format!("This session's queue mode is {}.", mode.as_str()),
                None => {
                    "This session follows the configured queue mode (messages.queue).".to_owned()
                }
            };
            (None, reply)
        }
        "default" | "reset" | "clear" => (
            Some(None),
            "This session now follows the configured queue mode again.".to_owned(),
        ),
        other => match QueueMode::parse(other) {
            Some(mode) => (
                Some(Some(mode.as_str().to_owned())),
                format!("This session's queue mode is now {}.", mode.as_str()),
            ),
            None => {
                return Err(RuntimeError::invalid(
                    "message",
                    format!(
                        "/queue takes one of steer, followup, collect, interrupt or default; got {argument:?}"
                    ),
                ));
            }
        },
    };
    if let Some(value) = stored {
        services
            .sessions()
            .update_entry(&session.agent, &session.key, move |entry| {
                entry.queue_mode = value;
            })
            .await?;
    }
    tracing::info!(session = %session.key.as_str(), %reply, "queue command");
    let mode = match word.as_str() {
        "" | "default" | "reset" | "clear" => QueueMode::default(),
        other => QueueMode::parse(other).unwrap_or_default(),
    };
    Ok(Submitted {
        acceptance: acceptance(session, Disposition::Command { reply }, 0, mode),
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::queue_command;

    #[test]
    fn queue_commands_are_recognised_only_as_whole_words() {
        assert_eq!(queue_command("/queue collect"), Some("collect"));
        assert_eq!(queue_command("  /queue  "), Some(""));
        assert_eq!(queue_command("/queued work"), None);
        assert_eq!(queue_command("please /queue collect"), None);
    }
}

/// Room a transcript line keeps for the entry around the message text (ids, timestamps, keys).
const ENTRY_OVERHEAD: usize = 64 * 1024;

/// Bytes `text` takes as a JSON string body, counted by serde_json itself (the encoder the
/// transcript writes with) into a sink that keeps nothing.
fn json_escaped_len(text: &str) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a string into a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, text);
    count.0.saturating_sub(2)
}

/// A message is refused before it is acknowledged when, escaped as it is stored, it would not
/// fit one transcript line: acknowledged, it could never be written, and would block its
/// session's journal for good.
fn check_stored_size(message: &str) -> Result<(), RuntimeError> {
    let limit = openclaw_transcript::DEFAULT_MAX_LINE_LEN - ENTRY_OVERHEAD;
    let stored = json_escaped_len(message);
    if stored > limit {
        return Err(RuntimeError::ResourceExhausted(format!(
            "message: {} bytes, {stored} once stored as JSON (control characters and quotes are \
             escaped), over the {limit} bytes a transcript line holds for a message",
            message.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn the_escaped_length_is_serde_jsons() {
        for text in [
            "plain",
            "quote \" and \\",
            "\u{1}\u{1f}\n\t\r\u{8}\u{c}",
            "é中🙂",
            "",
        ] {
            let encoded = serde_json::to_string(text).unwrap_or_default();
            assert_eq!(json_escaped_len(text) + 2, encoded.len(), "{text:?}");
        }
    }

    #[test]
    fn a_message_that_escapes_past_a_line_is_refused() {
        let control = "\u{1}".repeat(3 * 1024 * 1024);
        let err = check_stored_size(&control).unwrap_err();
        assert!(matches!(err, RuntimeError::ResourceExhausted(_)), "{err:?}");
        assert!(err.to_string().contains("transcript line"), "{err}");
        assert!(check_stored_size(&"a".repeat(3 * 1024 * 1024)).is_ok());
    }
}

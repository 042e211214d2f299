//! System events: messages the runtime itself puts into a session's queue (see
//! [`crate::origin`]): a heartbeat, a cron job that is due, a background command that ended
//! on its own, a subagent's result. They take one path, [`deliver`]:
//!
//! - journaled before they count as delivered, like a user's message, so one acknowledged
//!   by the queue survives a crash and is written into the transcript once on the next start
//!   (a heartbeat is the exception: it is not journaled, the next one replaces it);
//! - queued by mode: steered into the active run, which takes it after its current tool
//!   batch, or a follow-up run after whatever is queued; either starts a run when the session
//!   is idle;
//! - framed for the model by a bracketed label (`[Exec Finished]`, `[Cron Job Due]`,
//!   `[Subagent Result]`), which the prompt tells the model comes from the runtime; an
//!   isolated cron run gets its scheduled prompt unframed, byte for byte;
//! - announced on the session's event stream as [`RunEvent::SystemEvent`] on the run that
//!   takes it, and listed in that run's started event when it starts one.

use std::sync::{Arc, Weak};

use openclaw_tools::{EXEC_EXIT_LABEL, EXEC_EXIT_OUTPUT, ExitSink, ProcessExit, ProcessStatus};

use super::{RunEvent, RunSpec, acceptance, drive::spawn_driver};
use crate::{
    error::RuntimeError,
    origin::Origin,
    prompt_input::TurnChannel,
    services::Services,
    sessions::{
        Session, SessionEvents,
        journal::Accepted,
        queue::{CollectLimits, Disposition, Inbound, QueueMode, RunOptions},
        stored_size::check_stored_size,
    },
};

/// A message the runtime queues in a session.
#[derive(Debug, Clone)]
pub(crate) struct SystemEvent {
    /// Who sends it (never [`Origin::User`]).
    pub origin: Origin,
    /// The text the model reads.
    pub text: String,
    /// Steer (into the active run) or follow-up (after what is queued).
    pub mode: QueueMode,
    /// Options of the run it starts (a heartbeat's model, its quiet reply).
    pub options: RunOptions,
    /// Journaled before it counts as delivered (all but heartbeats).
    pub durable: bool,
}

impl SystemEvent {
    /// A durable event with default run options.
    pub(crate) fn new(origin: Origin, text: String, mode: QueueMode) -> Self {
        Self {
            origin,
            text,
            mode,
            options: RunOptions::default(),
            durable: true,
        }
    }
}

/// What became of a delivered event.
pub(crate) struct Delivered {
    /// The session it went to.
    pub session: Arc<Session>,
    /// Its arrival number and disposition.
    pub seq: u64,
    pub disposition: Disposition,
    /// The session's events from just before it was queued.
    pub events: SessionEvents,
}

/// Queues `event` in session `session_key` of `agent_id` ("" for the main session, created
/// if new). With `once`, an event whose text the session's transcript already holds as a
/// user message is not queued again (`Ok(None)`): the re-delivery after a restart of
/// something that may have arrived before it.
pub(crate) async fn deliver(
    services: &Arc<Services>,
    agent_id: &str,
    session_key: &str,
    event: SystemEvent,
    once: bool,
) -> Result<Option<Delivered>, RuntimeError> {
    if services.is_stopping() {
        return Err(RuntimeError::Unavailable(
            "agent-service is shutting down".to_owned(),
        ));
    }
    check_stored_size(&event.text)?;
    let admitted = super::prepare::admit(
        services,
        &RunSpec {
            agent_id: agent_id.to_owned(),
            session_key: session_key.to_owned(),
            message: event.text.clone(),
            ..RunSpec::default()
        },
    )
    .await?;
    let session = admitted.session;
    if once && holds_user_text(&session, &event.text).await? {
        return Ok(None);
    }
    // A run started for the event keeps the session's channel label (a system event must
    // not change what the session's prompt says about its channel).
    let channel = TurnChannel {
        channel: admitted.entry.channel.clone().unwrap_or_default(),
        chat_type: admitted.entry.chat_type.clone().unwrap_or_default(),
        ..TurnChannel::default()
    };
    // Numbered and queued under the session's admission, like a user's message.
    let admission = session.live.admission().await;
    let seq = session.live.queue().next_seq();
    if event.durable {
        let record = Accepted {
            seq,
            text: event.text.clone(),
            at: services.now_ms(),
            origin: event.origin.clone(),
        };
        let journal = Arc::clone(&session.journal);
        tokio::task::spawn_blocking(move || journal.accept(&record))
            .await
            .map_err(|e| RuntimeError::Internal(format!("journal task failed: {e}")))?
            .map_err(|e| {
                RuntimeError::Unavailable(format!("cannot journal the system event: {e}"))
            })?;
    }
    let events = session.live.subscribe();
    let (disposition, start) = {
        let mut queue = session.live.queue();
        let inbound = Inbound {
            seq,
            text: event.text,
            channel,
            options: event.options,
            folded: Vec::new(),
            origin: event.origin.clone(),
        };
        let (disposition, start) = queue.submit(
            inbound,
            event.mode,
            session.live.now_ms(),
            CollectLimits::default(),
        );
        // Published under the queue's lock, like a user's acceptance: before anything the
        // run that takes it does with it.
        if let Some(run) = disposition.run() {
            session.live.publish(
                run,
                RunEvent::SystemEvent {
                    acceptance: Box::new(acceptance(
                        &session,
                        disposition.clone(),
                        seq,
                        event.mode,
                    )),
                    origin: event.origin.clone(),
                },
            );
        }
        (disposition, start)
    };
    drop(admission);
    if event.durable && disposition.run().is_none() {
        let journal = Arc::clone(&session.journal);
        let _ = tokio::task::spawn_blocking(move || journal.done(&[seq])).await;
    }
    tracing::info!(session = %session.key.as_str(), seq, origin = event.origin.kind(), source = event.origin.source(), disposition = %disposition, "system event queued");
    if let Some(start) = start {
        spawn_driver(Arc::clone(services), Arc::clone(&session), start);
    }
    Ok(Some(Delivered {
        session,
        seq,
        disposition,
        events,
    }))
}

async fn holds_user_text(session: &Session, text: &str) -> Result<bool, RuntimeError> {
    use openclaw_transcript::{Message, UserContent};
    Ok(session.live.messages().await?.iter().any(|m| {
        matches!(m, Message::User(u) if matches!(&u.content, UserContent::Text(t) if t == text))
    }))
}

/// The message a background command's end becomes. The copy sent to a model fences the
/// output as untrusted data, as a tool result's would be (the command may print anything;
/// see [`openclaw_tools::Fence`]).
pub(crate) fn exec_exit_text(exit: &ProcessExit) -> String {
    let info = &exit.info;
    let how = match info.status {
        ProcessStatus::Exited { code } => format!("exited with code {code}"),
        ProcessStatus::TimedOut => "was killed when its timeout passed".to_owned(),
        status => format!("ended: {status}"),
    };
    let command: String = info.command.chars().take(200).collect();
    let output = if exit.tail.trim().is_empty() {
        "It printed nothing.".to_owned()
    } else {
        format!("{EXEC_EXIT_OUTPUT}{}", exit.tail.trim_end())
    };
    format!(
        "{EXEC_EXIT_LABEL}Background process {} ({command}) {how}. {output}",
        info.id
    )
}

/// Hears the end of a session's background commands and queues each as a steered system
/// event in that session (when `tools.exec.notifyOnExit` is on at that moment).
pub(crate) struct ExitWakeups {
    pub services: Weak<Services>,
    pub agent_id: String,
    pub session_key: String,
}

impl ExitSink for ExitWakeups {
    fn exited(&self, exit: ProcessExit) {
        let Some(services) = self.services.upgrade() else {
            return;
        };
        let agent_id = self.agent_id.clone();
        let session_key = self.session_key.clone();
        let text = exec_exit_text(&exit);
        tokio::spawn(async move {
            let on = services
                .loaded_config()
                .is_ok_and(|l| l.config.exec_notify_on_exit());
            if !on {
                tracing::debug!(session = %session_key, process = %exit.info.id, "background command ended; notifyOnExit is off");
                return;
            }
            let event = SystemEvent::new(
                Origin::ExecExit {
                    process_id: exit.info.id.clone(),
                },
                text,
                QueueMode::Steer,
            );
            if let Err(error) = deliver(&services, &agent_id, &session_key, event, false).await {
                tracing::warn!(session = %session_key, process = %exit.info.id, %error, "could not queue a background command's exit");
            }
        });
    }
}

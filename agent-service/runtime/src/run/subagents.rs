//! Subagent runs (see [`crate::subagents`]): the control a run's tools use to spawn, list,
//! steer and kill children, the watcher that follows a child to its end and pushes its
//! outcome into the parent, and the start-up recovery of results still owed.

use std::sync::Arc;

use async_trait::async_trait;
use openclaw_tools::{ChildInfo, SpawnRequest, SubagentControl};
use openclaw_transcript::{Message, SessionId, SessionKey};

use super::{
    RunEvent, RunSpec, submit,
    system::{self, SystemEvent},
};
use crate::{
    error::RuntimeError,
    origin::Origin,
    services::Services,
    sessions::{
        SessionTarget,
        queue::{Disposition, QueueMode},
    },
    subagents::{
        Record, Status, SubagentLimits, child_key, depth_of, outcome_after_restart, result_message,
        task_message,
    },
};

/// The subagent control of a run in session `parent`, for its tool context.
pub(crate) fn control(
    services: &Arc<Services>,
    agent_id: &str,
    parent: &SessionKey,
) -> Arc<dyn SubagentControl> {
    Arc::new(Control {
        services: Arc::clone(services),
        agent_id: agent_id.to_owned(),
        parent: parent.clone(),
    })
}

/// [`SubagentControl`] for the runs of one session.
struct Control {
    services: Arc<Services>,
    agent_id: String,
    parent: SessionKey,
}

#[async_trait]
impl SubagentControl for Control {
    async fn spawn(&self, request: SpawnRequest) -> Result<ChildInfo, String> {
        let rt = &self.services;
        let limits = rt
            .loaded_config()
            .map(|l| SubagentLimits::of_agent(&l.config, &self.agent_id))
            .map_err(|e| e.to_string())?;
        let depth = depth_of(&self.parent);
        if depth >= limits.max_depth {
            return Err(format!(
                "this session is {depth} subagent level(s) deep and subagents.maxDepth is {}, \
                 so it cannot start subagents; do the work yourself",
                limits.max_depth
            ));
        }
        let id: String = SessionId::new_v4().to_string().chars().take(8).collect();
        let key = child_key(&self.agent_id, &self.parent, &id)?;
        let record = Record {
            id,
            key: key.clone(),
            parent: self.parent.clone(),
            agent_id: self.agent_id.clone(),
            label: request.label.clone(),
            task: request.task.clone(),
            status: Status::Running,
            started_ms: rt.now_ms(),
            session_id: None,
            pending: None,
        };
        rt.subagents().reserve(record, limits.max_concurrent)?;
        let spec = RunSpec {
            agent_id: self.agent_id.clone(),
            session_key: key.as_str().to_owned(),
            message: task_message(&self.parent, &request),
            model: limits.model.clone(),
            queue_mode: Some(QueueMode::Followup),
            ..RunSpec::default()
        };
        let submitted = match submit(rt, spec).await {
            Ok(submitted) => submitted,
            Err(error) => {
                rt.subagents().remove(&key);
                return Err(format!("the subagent could not start: {error}"));
            }
        };
        let session_id = submitted.acceptance.session_id.clone();
        let record = rt
            .subagents()
            .update(&key, |r| r.session_id = Some(session_id))
            .ok_or_else(|| "the subagent vanished while starting".to_owned())?;
        tracing::info!(parent = %self.parent.as_str(), child = %key.as_str(), "subagent started");
        tokio::spawn(watch(Arc::clone(rt), key, submitted.follow()));
        Ok(record.info(rt.now_ms()))
    }

    async fn list(&self) -> Vec<ChildInfo> {
        let now = self.services.now_ms();
        self.services
            .subagents()
            .children(&self.parent)
            .iter()
            .map(|r| r.info(now))
            .collect()
    }

    async fn steer(&self, id: &str, message: &str) -> Result<String, String> {
        let rt = &self.services;
        let record = self.running(id)?;
        let spec = RunSpec {
            agent_id: self.agent_id.clone(),
            session_key: record.key.as_str().to_owned(),
            message: format!("[Message from the session that started you] {message}"),
            queue_mode: Some(QueueMode::Steer),
            ..RunSpec::default()
        };
        let submitted = submit(rt, spec)
            .await
            .map_err(|e| format!("the message could not be delivered: {e}"))?;
        if !matches!(
            submitted.acceptance.disposition,
            Disposition::Steered { .. }
        ) {
            // The child's run ended just before the message arrived, so the message started
            // a new run of the child: follow that one too, so its result is pushed back.
            rt.subagents()
                .update(&record.key, |r| r.status = Status::Running);
            tokio::spawn(watch(
                Arc::clone(rt),
                record.key.clone(),
                submitted.follow(),
            ));
        }
        Ok(format!(
            "Message delivered to subagent {}; it takes it before its next step.",
            record.name()
        ))
    }

    async fn kill(&self, id: &str) -> Result<String, String> {
        let rt = &self.services;
        let record = self.running(id)?;
        rt.subagents()
            .update(&record.key, |r| r.status = Status::Killed);
        let session_id = record
            .session_id
            .as_deref()
            .and_then(|s| s.parse::<SessionId>().ok());
        if let Some(session_id) = session_id {
            let live = rt.sessions().live(&record.agent_id, &session_id);
            let dropped: Vec<u64> = {
                let mut queue = live.queue();
                queue.cancel_active();
                queue
                    .drain_all()
                    .into_iter()
                    .flat_map(|(_, messages)| messages)
                    .map(|m| m.seq)
                    .collect()
            };
            if !dropped.is_empty()
                && let Some(journal) = live.opened_journal()
            {
                let _ = tokio::task::spawn_blocking(move || journal.done(&dropped)).await;
            }
        }
        tracing::info!(parent = %self.parent.as_str(), child = %record.key.as_str(), "subagent killed");
        Ok(format!(
            "Subagent {} stopped; no result will be sent for it.",
            record.name()
        ))
    }
}

impl Control {
    /// The caller's child `id`, which must still be running.
    fn running(&self, id: &str) -> Result<Record, String> {
        let record = self.services.subagents().child(&self.parent, id).ok_or_else(|| {
            format!("this session has no subagent {id:?}; call subagents with action=list to see them")
        })?;
        if record.status != Status::Running {
            return Err(format!(
                "subagent {} is no longer running (it is {})",
                record.name(),
                record.status.as_str()
            ));
        }
        Ok(record)
    }
}

/// Follows a child's run to its end, records the outcome and pushes it to the parent.
async fn watch(services: Arc<Services>, key: SessionKey, mut events: super::RunFollower) {
    let mut outcome = Err("the subagent's run ended without a result".to_owned());
    while let Some(event) = events.recv().await {
        match event.event {
            RunEvent::Final { text, .. } => {
                outcome = Ok(text);
                break;
            }
            RunEvent::Error { message, .. } => {
                outcome = Err(message);
                break;
            }
            _ => {}
        }
    }
    let mut killed = false;
    // Recorded as pending first: a stop or crash before the parent has it
    // leaves it for the next start (see the module docs).
    let record = services.subagents().update(&key, |r| {
        killed = r.status == Status::Killed;
        if !killed {
            r.status = if outcome.is_ok() {
                Status::Done
            } else {
                Status::Failed
            };
            r.pending = Some(result_message(r, &outcome));
        }
    });
    let Some(record) = record else { return };
    if killed {
        return;
    }
    deliver(&services, &record, false).await;
}

/// Pushes a record's pending result and clears it once the parent has it. With `once`, a
/// result the parent's transcript already holds is not pushed again.
async fn deliver(services: &Arc<Services>, record: &Record, once: bool) {
    let Some(message) = record.pending.clone() else {
        return;
    };
    match announce(services, record, message, once).await {
        Ok(()) => {
            services
                .subagents()
                .update(&record.key, |r| r.pending = None);
        }
        Err(error) => {
            tracing::warn!(%error, parent = %record.parent.as_str(), child = %record.key.as_str(), "could not push a subagent's result to its parent; it is pushed at the next start");
        }
    }
}

/// Start-up: reloads the subagent registry; children still marked running were cut short
/// by the previous stop or crash, and every result their parents have not received yet
/// is pushed now (see [`crate::subagents`]). Returns how many results were pushed.
pub(crate) async fn recover_subagents(services: &Arc<Services>) -> usize {
    if services.subagents().load() == 0 {
        return 0;
    }
    for record in services.subagents().all() {
        if record.status != Status::Running {
            continue;
        }
        let messages = child_messages(services, &record).await.unwrap_or_else(|error| {
            tracing::warn!(child = %record.key.as_str(), %error, "cannot read a subagent's transcript");
            Vec::new()
        });
        let outcome = outcome_after_restart(&record, &messages);
        services.subagents().update(&record.key, |r| {
            r.status = if outcome.is_ok() {
                Status::Done
            } else {
                Status::Failed
            };
            r.pending = Some(result_message(r, &outcome));
        });
    }
    let mut pushed = 0;
    for record in services.subagents().all() {
        if record.pending.is_some() {
            deliver(services, &record, true).await;
            pushed += 1;
        }
    }
    if pushed > 0 {
        tracing::info!(
            results = pushed,
            "subagent results from before the restart pushed to their parents"
        );
    }
    pushed
}

async fn child_messages(
    services: &Services,
    record: &Record,
) -> Result<Vec<Message>, RuntimeError> {
    let agent = services.agent_view(&record.agent_id)?;
    let info = services
        .sessions()
        .get(&agent, &SessionTarget::Key(record.key.as_str().to_owned()))
        .await?;
    let cwd = services.session_workspace(&agent, &info.key).await?;
    services
        .sessions()
        .writable(&agent, &info, &cwd)?
        .messages()
        .await
}

/// Pushes `message` into the parent session as a steered system event (see
/// [`super::system`]): taken by the parent's active run after its current tool batch, or
/// starting a run when the parent is idle.
async fn announce(
    services: &Arc<Services>,
    record: &Record,
    message: String,
    once: bool,
) -> Result<(), RuntimeError> {
    let event = SystemEvent::new(
        Origin::Subagent {
            child_key: record.key.as_str().to_owned(),
        },
        message,
        QueueMode::Steer,
    );
    let delivered = system::deliver(
        services,
        &record.agent_id,
        record.parent.as_str(),
        event,
        once,
    )
    .await?;
    if let Some(delivered) = delivered {
        tracing::info!(parent = %record.parent.as_str(), child = %record.key.as_str(), disposition = %delivered.disposition, "subagent result pushed to its parent");
    }
    Ok(())
}

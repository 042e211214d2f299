//! Heartbeat runs (see [`crate::heartbeat`]): the scheduler that starts them, deciding whether
//! one runs at all, and queueing it on the main session like a follow-up. Its reply is settled
//! by the driver once the run ends (see `super::drive`).

use std::{
    collections::BTreeMap,
    sync::{Arc, Weak},
    time::Duration,
};

use openclaw_workspace::BootstrapName;
use tokio::{sync::Notify, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{
    RunEvent,
    system::{SystemEvent, deliver},
};
use crate::{
    error::RuntimeError,
    heartbeat::{HeartbeatOutcome, MIN_INTERVAL, SkipReason},
    origin::Origin,
    services::Services,
    sessions::{
        RecvError, SessionEvents, key,
        queue::{QueueMode, RunOptions},
    },
};

/// Runs one heartbeat of `agent_id` and waits for it to end (or for `stop`).
pub(crate) async fn beat(
    services: &Arc<Services>,
    agent_id: &str,
    stop: &CancellationToken,
) -> HeartbeatOutcome {
    match queue_beat(services, agent_id).await {
        Ok(Queued::Skipped(reason)) => HeartbeatOutcome::Skipped(reason),
        Ok(Queued::Run { run, events }) => wait_for(run, events, stop).await,
        Err(error) => HeartbeatOutcome::Failed {
            message: error.to_string(),
        },
    }
}

enum Queued {
    Skipped(SkipReason),
    Run { run: u64, events: SessionEvents },
}

/// Checks whether the heartbeat should run and, if so, queues it on the main session.
async fn queue_beat(services: &Arc<Services>, agent_id: &str) -> Result<Queued, RuntimeError> {
    if services.is_stopping() {
        return Ok(Queued::Skipped(SkipReason::ShuttingDown));
    }
    let agent = services.usable_agent(agent_id)?;
    if !agent.heartbeat.enabled {
        return Ok(Queued::Skipped(SkipReason::Disabled));
    }
    let key = key::normalize(&agent.id, "")?;
    let cwd = services.session_workspace(&agent, &key).await?;
    // HEARTBEAT.md decides whether there is anything to do; nothing to do
    // means no model call and nothing written (its cost is the point). The renderer's rule,
    // the one that also leaves such a file out of the prompt.
    let files = services.bootstrap_files(&cwd).await?;
    match files.iter().find(|f| f.name == BootstrapName::Heartbeat) {
        Some(file) if !file.is_missing() => {
            if prompt_render::heartbeat_is_empty(&file.content) {
                return Ok(Queued::Skipped(SkipReason::EmptyFile));
            }
        }
        _ => return Ok(Queued::Skipped(SkipReason::MissingFile)),
    }
    let prompt = agent
        .heartbeat
        .prompt
        .clone()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| prompt_render::DEFAULT_HEARTBEAT_PROMPT.to_owned());
    // A system event on the main session (see `super::system`), which keeps the session's
    // channel label (lesson L2: a heartbeat must not change what the session's prompt says
    // about its channel). Follow-up: it starts now when the session is idle, else after
    // whatever is active or already waiting. Not journaled: a heartbeat lost to a crash is
    // replaced by the next one.
    let event = SystemEvent {
        origin: Origin::Heartbeat,
        text: prompt,
        mode: QueueMode::Followup,
        options: RunOptions {
            model: agent.heartbeat.model.clone(),
            max_steps: 0,
            heartbeat: true,
            lightweight: false,
        },
        durable: false,
    };
    let delivered = deliver(services, &agent.id, "", event, false)
        .await?
        .ok_or_else(|| RuntimeError::Internal("heartbeat was not queued".to_owned()))?;
    let run = delivered.disposition.run().ok_or_else(|| {
        RuntimeError::Internal(format!(
            "heartbeat was not queued: {}",
            delivered.disposition
        ))
    })?;
    let events = delivered.events;
    Ok(Queued::Run { run, events })
}

async fn wait_for(
    run: u64,
    mut events: SessionEvents,
    stop: &CancellationToken,
) -> HeartbeatOutcome {
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            () = stop.cancelled() => return HeartbeatOutcome::Skipped(SkipReason::ShuttingDown),
        };
        match event {
            Ok(e) if e.run == run => match &e.event {
                RunEvent::Final { reply, .. } => {
                    return HeartbeatOutcome::Ran {
                        run,
                        delivered: !reply.is_empty(),
                        reply: reply.clone(),
                    };
                }
                RunEvent::Error { message, .. } => {
                    return HeartbeatOutcome::Failed {
                        message: message.clone(),
                    };
                }
                _ => {}
            },
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => {
                return HeartbeatOutcome::Failed {
                    message: "the session closed before the heartbeat ended".to_owned(),
                };
            }
        }
    }
}

/// Starts the heartbeat scheduler on the current tokio runtime (the first call only). It
/// stops when shutdown begins.
pub(crate) fn start_heartbeats(services: &Arc<Services>) {
    let hb = services.heartbeats();
    if !hb.claim_start() {
        return;
    }
    tokio::spawn(schedule(
        Arc::downgrade(services),
        hb.stop_token(),
        hb.changes(),
    ));
}

/// Runs one heartbeat of an agent ("" for the default) now, waits for its outcome and
/// publishes it like a scheduled one.
pub(crate) async fn heartbeat_now(services: &Arc<Services>, agent_id: &str) -> HeartbeatOutcome {
    let stop = services.heartbeats().stop_token();
    let id = services
        .agent_view(agent_id)
        .map_or_else(|_| agent_id.to_owned(), |a| a.id);
    let outcome = beat(services, &id, &stop).await;
    services.heartbeats().publish(&id, outcome.clone());
    outcome
}

/// Agents with heartbeats on and their intervals (none while the config is invalid). Only
/// agents whose main session lives on this replica: a heartbeat elsewhere would create a
/// second main session.
pub(super) fn heartbeat_plan(services: &Services) -> BTreeMap<String, Duration> {
    let Ok((agents, _)) = services.agents() else {
        return BTreeMap::new();
    };
    agents
        .into_iter()
        .filter(|a| a.heartbeat.enabled)
        .filter(|a| {
            crate::sessions::key::normalize(&a.id, "")
                .is_ok_and(|main| services.owns(main.as_str()))
        })
        .map(|a| (a.id, a.heartbeat.every.max(MIN_INTERVAL)))
        .collect()
}

/// One agent's schedule.
struct Slot {
    every: Duration,
    due: Instant,
    running: Option<tokio::task::JoinHandle<()>>,
}

/// The scheduler: wakes at the earliest due heartbeat (or a config change), starts the due
/// ones on their own tasks, and ends at shutdown or when the services are gone.
async fn schedule(services: Weak<Services>, stop: CancellationToken, changed: Arc<Notify>) {
    let mut slots: BTreeMap<String, Slot> = BTreeMap::new();
    loop {
        let Some(rt) = services.upgrade() else { return };
        let plan = heartbeat_plan(&rt);
        let now = Instant::now();
        slots.retain(|id, slot| plan.get(id) == Some(&slot.every));
        for (id, every) in plan {
            slots.entry(id).or_insert_with(|| Slot {
                every,
                due: now + every,
                running: None,
            });
        }
        for (id, slot) in &mut slots {
            if slot.due > now {
                continue;
            }
            slot.due = now + slot.every;
            if slot.running.as_ref().is_some_and(|t| !t.is_finished()) {
                rt.heartbeats()
                    .publish(id, HeartbeatOutcome::Skipped(SkipReason::StillRunning));
                continue;
            }
            let (rt, id, stop) = (Arc::clone(&rt), id.clone(), stop.clone());
            slot.running = Some(tokio::spawn(async move {
                let outcome = beat(&rt, &id, &stop).await;
                rt.heartbeats().publish(&id, outcome);
            }));
        }
        let next = slots.values().map(|s| s.due).min();
        // Not held while waiting: the services may go away meanwhile.
        drop(rt);
        let wake = async {
            match next {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = changed.notified() => {}
            () = wake => {}
        }
    }
}

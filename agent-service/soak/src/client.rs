//! Conversation clients. Each owns a few sessions and, until its deadline,
//! sends messages into them through `Send` or `Run` in a mix of queue modes,
//! with short random pauses so messages meet runs in flight. It records every
//! attempt and what came back (see [`crate::ledger`] for the acknowledgement
//! rule), retries unacknowledged messages later with the same id, and
//! watches each of its sessions (`WatchSession`) to note which messages a
//! run was seen starting with.

use std::{
    collections::{BTreeSet, VecDeque},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use openclaw_proto::agent::v1::{
    self as pb, agent_service_client::AgentServiceClient, disposition::Outcome, run_event::Event,
};
use tokio::{sync::mpsc, task::JoinSet};
use tonic::{
    Request, Status,
    metadata::{Ascii, MetadataValue},
    service::{Interceptor, interceptor::InterceptedService},
    transport::{Channel, Endpoint},
};

use crate::{
    cluster::Clock,
    error::SoakError,
    ledger::{Ack, Api, Attempt, AttemptResult, MessageRecord, message_text},
    rng::Rng,
};

/// Deadline of one attempt (a Send, or a Run until its first event).
const RPC_TIMEOUT: Duration = Duration::from_secs(15);
/// Attempts at one message before the client gives up on it.
const MAX_ATTEMPTS: usize = 50;
/// How long, after its deadline, a client waits for the runs it follows.
const SETTLE: Duration = Duration::from_secs(30);
/// Queue modes asked for, with weights: unspecified (the session's, then
/// steer), steer, followup, collect, interrupt.
const MODES: [(pb::QueueMode, u64); 5] = [
    (pb::QueueMode::Unspecified, 10),
    (pb::QueueMode::Steer, 35),
    (pb::QueueMode::Followup, 25),
    (pb::QueueMode::Collect, 25),
    (pb::QueueMode::Interrupt, 5),
];

/// An AgentService client that sends `authorization: Bearer <token>` when
/// given a token.
pub(crate) type AgentClient = AgentServiceClient<InterceptedService<Channel, Bearer>>;

/// Adds the bearer token to every call.
#[derive(Debug, Clone)]
pub(crate) struct Bearer(Option<MetadataValue<Ascii>>);

impl Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// A lazily connecting client: it reconnects by itself after a restart.
pub(crate) fn connect(endpoint: &str, token: Option<&str>) -> Result<AgentClient, SoakError> {
    let channel = Endpoint::from_shared(endpoint.to_owned())
        .map_err(|e| SoakError::Invalid(format!("endpoint {endpoint}: {e}")))?
        .connect_timeout(Duration::from_secs(2))
        .tcp_nodelay(true)
        .connect_lazy();
    let bearer = token
        .map(|t| format!("Bearer {t}").parse::<MetadataValue<Ascii>>())
        .transpose()
        .map_err(|e| SoakError::Invalid(format!("--token is not a valid header value: {e}")))?;
    Ok(AgentServiceClient::with_interceptor(
        channel,
        Bearer(bearer),
    ))
}

/// A session by key.
pub(crate) fn session_ref(key: &str) -> Option<pb::SessionRef> {
    Some(pb::SessionRef {
        agent_id: String::new(),
        target: Some(pb::session_ref::Target::SessionKey(key.to_owned())),
    })
}

/// A run a watcher saw start with message `seq` of `session_key`, in
/// agent-service incarnation `incarnation` (arrival numbers restart with the
/// process).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Started {
    pub incarnation: u64,
    pub session_key: String,
    pub seq: u64,
}

/// What one client should do.
pub(crate) struct ClientPlan {
    pub index: usize,
    pub agent: AgentClient,
    pub rng: Rng,
    pub sessions: usize,
    pub messages_per_session: usize,
    pub think: (Duration, Duration),
    pub until: Instant,
    pub clock: Clock,
    pub current: Arc<AtomicU64>,
    /// Percent of messages sent as poison instead (see [`Poison`]).
    pub poison_percent: u64,
}

/// What one client did.
#[derive(Debug, Default)]
pub(crate) struct ClientOutcome {
    pub records: Vec<MessageRecord>,
    pub started: BTreeSet<Started>,
    pub keys: Vec<String>,
    pub runs: RunEnds,
    pub poison: Poison,
}

/// Poison messages: under the request size limit, but too large for a transcript line once
/// stored (control characters escape to six bytes each). Each must be refused
/// RESOURCE_EXHAUSTED before it is acknowledged; one acknowledged would wedge its session.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Poison {
    /// Sent.
    pub sent: u64,
    /// Refused with RESOURCE_EXHAUSTED.
    pub refused: u64,
    /// Failed otherwise (agent-service restarting, say), by code.
    pub other: std::collections::BTreeMap<String, u64>,
    /// Acknowledged (a failure), as "session key: disposition".
    pub acknowledged: Vec<String>,
}

impl Poison {
    /// Adds another client's tally.
    pub(crate) fn merge(&mut self, other: &Self) {
        self.sent += other.sent;
        self.refused += other.refused;
        for (code, n) in &other.other {
            *self.other.entry(code.clone()).or_default() += n;
        }
        self.acknowledged.extend(other.acknowledged.iter().cloned());
    }

    fn count(&mut self, key: &str, result: &AttemptResult) {
        self.sent += 1;
        match result {
            AttemptResult::Acked(ack) => self
                .acknowledged
                .push(format!("{key}: {:?} (run {})", ack.outcome, ack.run)),
            AttemptResult::Failed { code, .. } if code == "ResourceExhausted" => self.refused += 1,
            AttemptResult::Failed { code, .. } => *self.other.entry(code.clone()).or_default() += 1,
            AttemptResult::Rejected(_) => {
                *self.other.entry("Rejected".to_owned()).or_default() += 1
            }
        }
    }
}

/// Characters of a poison message: 3 MiB of U+0001, about 18 MiB once escaped.
const POISON_CHARS: usize = 3 * 1024 * 1024;

/// How the `Run` streams the client followed ended.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RunEnds {
    /// With a final event.
    pub finished: u64,
    /// With an error event (for example UNAVAILABLE at shutdown).
    pub failed: u64,
    /// Cut without a terminal event (a restart), or still open at the end.
    pub cut: u64,
}

/// One of the client's sessions: its key changes every
/// `messages_per_session` acknowledged messages, so transcripts stay short.
struct Slot {
    index: usize,
    generation: usize,
    acked: usize,
}

impl Slot {
    fn key(&self, client: usize) -> String {
        format!(
            "agent:main:soak-c{client}-s{}-g{}",
            self.index, self.generation
        )
    }
}

/// Runs one client until its deadline, then waits (bounded) for the runs it
/// follows.
pub(crate) async fn run_client(mut plan: ClientPlan) -> ClientOutcome {
    let (started_tx, mut started_rx) = mpsc::unbounded_channel();
    let mut watchers = JoinSet::new();
    let mut followed = Followed {
        streams: JoinSet::new(),
        started: started_tx.clone(),
    };
    let mut out = ClientOutcome::default();
    let mut slots: Vec<Slot> = (0..plan.sessions.max(1))
        .map(|index| Slot {
            index,
            generation: 0,
            acked: 0,
        })
        .collect();
    let mut retries: VecDeque<(usize, Instant)> = VecDeque::new();
    let mut next_id = 0u64;
    let poison = "\u{1}".repeat(POISON_CHARS);

    while Instant::now() < plan.until {
        if plan.poison_percent > 0 && plan.rng.chance(plan.poison_percent) {
            let slot = usize::try_from(plan.rng.below(slots.len() as u64)).unwrap_or(0);
            let key = slots[slot].key(plan.index);
            let result = if plan.rng.chance(50) {
                send(
                    &mut plan.agent,
                    &key,
                    poison.clone(),
                    pb::QueueMode::Unspecified,
                )
                .await
            } else {
                run(
                    &mut plan.agent,
                    &key,
                    poison.clone(),
                    pb::QueueMode::Unspecified,
                )
                .await
                .0
            };
            out.poison.count(&key, &result);
            continue;
        }
        let due = retries.front().is_some_and(|(_, at)| *at <= Instant::now());
        let retry = if due { retries.pop_front() } else { None };
        let index = match retry {
            Some((index, _)) => index,
            None => {
                let slot = usize::try_from(plan.rng.below(slots.len() as u64)).unwrap_or(0);
                next_id += 1;
                out.records.push(MessageRecord {
                    id: format!("c{}-m{next_id}", plan.index),
                    session_key: slots[slot].key(plan.index),
                    attempts: Vec::new(),
                });
                out.records.len() - 1
            }
        };
        let api = if plan.rng.chance(50) {
            Api::Send
        } else {
            Api::Run
        };
        let weights: Vec<u64> = MODES.iter().map(|(_, w)| *w).collect();
        let mode = MODES[plan.rng.weighted(&weights)].0;
        let record = &out.records[index];
        let text = message_text(&record.id, plan.rng.below(30));
        let key = record.session_key.clone();
        let attempt = attempt(&mut plan, &key, text, api, mode, &mut followed).await;
        let acked = matches!(attempt.result, AttemptResult::Acked(_));
        let may_retry = attempt.result.safe_to_retry();
        let record = &mut out.records[index];
        record.attempts.push(attempt);
        if acked {
            if !out.keys.contains(&key) {
                out.keys.push(key.clone());
                watchers.spawn(watch(
                    plan.agent.clone(),
                    key.clone(),
                    Arc::clone(&plan.current),
                    started_tx.clone(),
                ));
            }
            if let Some(slot) = slots.iter_mut().find(|s| s.key(plan.index) == key) {
                slot.acked += 1;
                if slot.acked >= plan.messages_per_session.max(1) {
                    slot.generation += 1;
                    slot.acked = 0;
                }
            }
        } else if may_retry && record.attempts.len() < MAX_ATTEMPTS {
            let shift = u32::try_from(record.attempts.len().min(5)).unwrap_or(5);
            let backoff = Duration::from_millis(100 * (1 << shift)).min(Duration::from_secs(2));
            retries.push_back((index, Instant::now() + backoff));
        }
        while let Some(ended) = followed.streams.try_join_next() {
            out.runs.count(ended.ok());
        }
        let pause = plan.rng.between(plan.think.0, plan.think.1);
        tokio::time::sleep(pause).await;
    }

    let settle = tokio::time::sleep(SETTLE);
    tokio::pin!(settle);
    loop {
        tokio::select! {
            ended = followed.streams.join_next() => match ended {
                Some(ended) => out.runs.count(ended.ok()),
                None => break,
            },
            () = &mut settle => {
                out.runs.cut += u64::try_from(followed.streams.len()).unwrap_or(0);
                followed.streams.abort_all();
                break;
            }
        }
    }
    watchers.abort_all();
    while watchers.join_next().await.is_some() {}
    drop((started_tx, followed));
    while let Ok(started) = started_rx.try_recv() {
        out.started.insert(started);
    }
    out
}

async fn attempt(
    plan: &mut ClientPlan,
    key: &str,
    text: String,
    api: Api,
    mode: pb::QueueMode,
    followed: &mut Followed,
) -> Attempt {
    let at = plan.clock.now();
    let before = plan.current.load(Ordering::SeqCst);
    let result = match api {
        Api::Send => send(&mut plan.agent, key, text, mode).await,
        Api::Run => {
            let (result, stream) = run(&mut plan.agent, key, text, mode).await;
            // Its events belong to one process only if no restart came between.
            if let Some(stream) = stream {
                let incarnation = plan.current.load(Ordering::SeqCst);
                let started = (incarnation == before).then(|| followed.started.clone());
                followed
                    .streams
                    .spawn(follow(stream, key.to_owned(), incarnation, started));
            }
            result
        }
    };
    Attempt {
        at,
        answered_at: plan.clock.now(),
        api,
        mode,
        incarnations: (before, plan.current.load(Ordering::SeqCst)),
        result,
    }
}

async fn send(
    agent: &mut AgentClient,
    key: &str,
    message: String,
    mode: pb::QueueMode,
) -> AttemptResult {
    let mut request = Request::new(pb::SendRequest {
        session: session_ref(key),
        message,
        queue_mode: mode as i32,
        ..Default::default()
    });
    request.set_timeout(RPC_TIMEOUT);
    match agent.send(request).await {
        Ok(response) => judge(response.into_inner().disposition),
        Err(status) => failed(&status),
    }
}

async fn run(
    agent: &mut AgentClient,
    key: &str,
    message: String,
    mode: pb::QueueMode,
) -> (AttemptResult, Option<tonic::Streaming<pb::RunEvent>>) {
    let request = Request::new(pb::RunRequest {
        session: session_ref(key),
        message,
        queue_mode: mode as i32,
        ..Default::default()
    });
    // No grpc-timeout on the request: it would end the stream, not just the
    // wait for its first event.
    let opened = tokio::time::timeout(RPC_TIMEOUT, async {
        let mut stream = agent.run(request).await?.into_inner();
        let first = stream.message().await?;
        Ok::<_, Status>((stream, first))
    })
    .await;
    let result = match opened {
        Err(_) => AttemptResult::Failed {
            code: "TIMEOUT".to_owned(),
            message: format!("no first event within {RPC_TIMEOUT:?}"),
        },
        Ok(Err(status)) => failed(&status),
        Ok(Ok((_, None))) => AttemptResult::Failed {
            code: "NO_ACCEPTED_EVENT".to_owned(),
            message: "the stream ended before its first event".to_owned(),
        },
        Ok(Ok((stream, Some(first)))) => match first.event {
            Some(Event::Accepted(disposition)) => {
                let result = judge(Some(disposition));
                let acked = matches!(result, AttemptResult::Acked(_));
                return (result, acked.then_some(stream));
            }
            other => AttemptResult::Failed {
                code: "NO_ACCEPTED_EVENT".to_owned(),
                message: format!("the first event was {other:?}"),
            },
        },
    };
    (result, None)
}

/// The acknowledgement rule applied to a disposition.
fn judge(disposition: Option<pb::Disposition>) -> AttemptResult {
    let Some(d) = disposition else {
        return AttemptResult::Failed {
            code: "NO_DISPOSITION".to_owned(),
            message: "the response carried no disposition".to_owned(),
        };
    };
    match d.outcome() {
        Outcome::Started
        | Outcome::Steered
        | Outcome::Followup
        | Outcome::Collected
        | Outcome::Interrupted => AttemptResult::Acked(Ack {
            outcome: d.outcome(),
            run: d.run,
            seq: d.seq,
            session_id: d.session_id,
        }),
        Outcome::Rejected => AttemptResult::Rejected(d.reason),
        other @ (Outcome::Unspecified | Outcome::Command) => AttemptResult::Failed {
            code: "UNEXPECTED_OUTCOME".to_owned(),
            message: format!("{other:?}: {}", d.reason),
        },
    }
}

fn failed(status: &Status) -> AttemptResult {
    AttemptResult::Failed {
        code: format!("{:?}", status.code()),
        message: status.message().to_owned(),
    }
}

/// How a followed run stream ended.
enum RunEnd {
    Finished,
    Failed,
    Cut,
}

impl RunEnds {
    fn count(&mut self, end: Option<RunEnd>) {
        match end {
            Some(RunEnd::Finished) => self.finished += 1,
            Some(RunEnd::Failed) => self.failed += 1,
            Some(RunEnd::Cut) | None => self.cut += 1,
        }
    }
}

/// The `Run` streams being followed, and where their run starts go.
struct Followed {
    streams: JoinSet<RunEnd>,
    started: mpsc::UnboundedSender<Started>,
}

/// Reads a run stream to its end, reporting the runs it saw start.
async fn follow(
    mut stream: tonic::Streaming<pb::RunEvent>,
    key: String,
    incarnation: u64,
    started: Option<mpsc::UnboundedSender<Started>>,
) -> RunEnd {
    while let Ok(Some(event)) = stream.message().await {
        match event.event {
            Some(Event::Final(_)) => return RunEnd::Finished,
            Some(Event::Error(_)) => return RunEnd::Failed,
            Some(Event::Started(run)) => {
                for seq in run.message_seqs {
                    if let Some(started) = &started {
                        let _ = started.send(Started {
                            incarnation,
                            session_key: key.clone(),
                            seq,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    RunEnd::Cut
}

/// Watches one session across restarts and reports the message numbers
/// every run starts with.
async fn watch(
    mut agent: AgentClient,
    key: String,
    current: Arc<AtomicU64>,
    started: mpsc::UnboundedSender<Started>,
) {
    loop {
        let incarnation = current.load(Ordering::SeqCst);
        let request = Request::new(pb::WatchSessionRequest {
            session: session_ref(&key),
        });
        if let Ok(response) = agent.watch_session(request).await
            // A stream opened across a restart could belong to either process.
            && current.load(Ordering::SeqCst) == incarnation
        {
            let mut stream = response.into_inner();
            while let Ok(Some(event)) = stream.message().await {
                if let Some(Event::Started(run)) = event.event {
                    for seq in run.message_seqs {
                        let _ = started.send(Started {
                            incarnation,
                            session_key: key.clone(),
                            seq,
                        });
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs one short message in each session after the soak and reports the sessions where it
/// did not end with a final answer within `timeout`: a wedged session (one whose journal or
/// transcript can no longer take a message) fails here.
pub(crate) async fn probe_sessions(
    agent: &AgentClient,
    keys: &[String],
    timeout: Duration,
) -> Vec<String> {
    const IN_FLIGHT: usize = 4;
    let mut wedged = Vec::new();
    for chunk in keys.chunks(IN_FLIGHT) {
        let mut probes = JoinSet::new();
        for key in chunk {
            let mut agent = agent.clone();
            let key = key.clone();
            probes.spawn(async move {
                let request = Request::new(pb::RunRequest {
                    session: session_ref(&key),
                    message: "soak probe: are you there?".to_owned(),
                    ..Default::default()
                });
                let outcome = tokio::time::timeout(timeout, async {
                    let mut stream = agent.run(request).await?.into_inner();
                    while let Some(event) = stream.message().await? {
                        match event.event {
                            Some(Event::Final(_)) => return Ok(None),
                            Some(Event::Error(error)) => {
                                return Ok(Some(format!("{}: {}", error.code, error.message)));
                            }
                            _ => {}
                        }
                    }
                    Ok::<_, Status>(Some("the stream ended without a final event".to_owned()))
                })
                .await;
                match outcome {
                    Ok(Ok(None)) => None,
                    Ok(Ok(Some(why))) => Some(format!("{key}: {why}")),
                    Ok(Err(status)) => {
                        Some(format!("{key}: {:?}: {}", status.code(), status.message()))
                    }
                    Err(_) => Some(format!("{key}: no final answer within {timeout:?}")),
                }
            });
        }
        while let Some(done) = probes.join_next().await {
            if let Ok(Some(why)) = done {
                wedged.push(why);
            }
        }
    }
    wedged
}

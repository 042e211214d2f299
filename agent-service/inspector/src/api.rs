//! The routes: the page and its assets, the read-only JSON API, and the event stream.

use std::{convert::Infallible, sync::Arc, time::Duration};

use agent_runtime::{
    Runtime, RuntimeError, TranscriptItem,
    config::resolve::AgentRuntime,
    sessions::{SessionInfo, SessionTarget},
};
use axum::{
    Json, Router,
    extract::{Query, State as Extract},
    http::{StatusCode, header},
    middleware,
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
    routing::get,
};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_stream::wrappers::WatchStream;

use crate::{auth, events, layers, turns::Observer};

/// Entries sent per transcript page unless the request asks for fewer.
pub const DEFAULT_PAGE: usize = 100;
/// The most entries one page may hold.
pub const MAX_PAGE: usize = 500;
/// Longest string value of an entry sent whole; longer ones are cut (the transcript keeps
/// them whole).
pub const MAX_STRING_CHARS: usize = 20_000;

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct State {
    pub runtime: Arc<Runtime>,
    pub observer: Arc<Observer>,
    /// Turns true when the server begins to stop (event streams end).
    pub stopping: tokio::sync::watch::Receiver<bool>,
}

/// Every route, behind `auth`.
pub fn router(state: State, auth: auth::Auth) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/app.css", get(styles))
        .route("/api/agents", get(agents))
        .route("/api/sessions", get(sessions))
        .route("/api/session", get(session_of))
        .route("/api/transcript", get(transcript))
        .route("/api/turns", get(turns))
        .route("/api/layers", get(layers_of))
        .route("/api/cache-break", get(cache_break))
        .route("/api/approvals", get(approvals_of))
        .route("/api/events", get(events_of))
        .fallback(not_found)
        .with_state(state)
        .layer(middleware::from_fn_with_state(auth, auth::require))
}

const PAGE: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLES: &str = include_str!("../assets/app.css");

async fn page() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn styles() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLES).into_response()
}

async fn not_found() -> Response {
    ApiError(StatusCode::NOT_FOUND, "no such page".to_owned()).into_response()
}

/// An error answer: a status and `{"error": message}`.
#[derive(Debug)]
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

impl ApiError {
    fn of(runtime: &Runtime, error: RuntimeError) -> Self {
        let message = runtime.redactor().redact(&error.to_string()).into_owned();
        let status = match error {
            RuntimeError::InvalidArgument { .. } => StatusCode::BAD_REQUEST,
            RuntimeError::UnknownAgent(_)
            | RuntimeError::SessionNotFound(_)
            | RuntimeError::NotFound(_) => StatusCode::NOT_FOUND,
            RuntimeError::PermissionDenied(_) => StatusCode::FORBIDDEN,
            RuntimeError::FailedPrecondition(_)
            | RuntimeError::ProviderRefused(_)
            | RuntimeError::Aborted(_) => StatusCode::CONFLICT,
            RuntimeError::ResourceExhausted(_) | RuntimeError::ContextOverflow(_) => {
                StatusCode::TOO_MANY_REQUESTS
            }
            RuntimeError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            RuntimeError::Internal(detail) => {
                tracing::error!(%detail, "inspector: internal error");
                return Self(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal error; see the agent-service log".to_owned(),
                );
            }
        };
        Self(status, message)
    }

    fn bad(field: &str, reason: &str) -> Self {
        Self(StatusCode::BAD_REQUEST, format!("{field}: {reason}"))
    }
}

type ApiResult = Result<Json<Value>, ApiError>;

async fn agents(Extract(state): Extract<State>) -> ApiResult {
    let (agents, default_id) = state
        .runtime
        .agents()
        .list()
        .map_err(|e| ApiError::of(&state.runtime, e))?;
    let agents: Vec<Value> = agents
        .into_iter()
        .map(|a| {
            json!({
                "id": a.id,
                "is_default": a.id == default_id,
                "name": a.name,
                "workspace": a.workspace.display().to_string(),
                "model": a.model,
                "runtime": match a.runtime {
                    AgentRuntime::Embedded => "embedded",
                    AgentRuntime::Codex(_) => "codex",
                },
            })
        })
        .collect();
    Ok(Json(json!({ "agents": agents })))
}

#[derive(Debug, Deserialize)]
struct SessionsQuery {
    /// One agent's sessions; absent: every agent's.
    agent: Option<String>,
    /// Only sessions whose key, id, name or channel contains this (any case).
    q: Option<String>,
    /// 0-based position of the first session of the page, most recent activity first.
    offset: Option<usize>,
    /// Sessions per page (at most [`MAX_SESSIONS_PAGE`]).
    limit: Option<usize>,
    /// The `version` of the caller's previous answer to the same query: when nothing it
    /// showed has changed the answer is `{"unchanged": true}` and nothing is redrawn.
    since: Option<String>,
}

/// Sessions per page of the list unless the request asks for another size.
pub const DEFAULT_SESSIONS_PAGE: usize = 50;
/// The most sessions one page of the list may hold.
pub const MAX_SESSIONS_PAGE: usize = 1000;

/// When a session was last active (what the list is ordered by).
fn last_activity(info: &SessionInfo) -> i64 {
    let e = &info.entry;
    e.last_interaction_at
        .unwrap_or(e.updated_at)
        .max(e.updated_at)
}

/// One page of the session list, most recent activity first, filtered by `q`. Only the page
/// is turned into JSON and only its sessions are observed, so the answer's size and cost
/// follow the page, not the number of sessions.
async fn sessions(Extract(state): Extract<State>, Query(query): Query<SessionsQuery>) -> ApiResult {
    let limit = query.limit.unwrap_or(DEFAULT_SESSIONS_PAGE);
    if limit == 0 || limit > MAX_SESSIONS_PAGE {
        return Err(ApiError::bad(
            "limit",
            &format!("must be between 1 and {MAX_SESSIONS_PAGE}"),
        ));
    }
    let offset = query.offset.unwrap_or(0);
    let agent_ids = match &query.agent {
        Some(id) => vec![id.clone()],
        None => {
            let (agents, _) = state
                .runtime
                .agents()
                .list()
                .map_err(|e| ApiError::of(&state.runtime, e))?;
            agents.into_iter().map(|a| a.id).collect()
        }
    };
    let needle = query.q.as_deref().unwrap_or_default().trim().to_lowercase();
    let mut matching = Vec::new();
    for agent in agent_ids {
        let sessions = state
            .runtime
            .sessions()
            .list(&agent)
            .await
            .map_err(|e| ApiError::of(&state.runtime, e))?;
        matching.extend(sessions.into_iter().filter(|info| matches(info, &needle)));
    }
    let total = matching.len();
    // Most recent activity first; the key breaks ties so pages do not overlap.
    matching.sort_by(|a, b| {
        last_activity(b)
            .cmp(&last_activity(a))
            .then_with(|| a.agent_id.cmp(&b.agent_id))
            .then_with(|| a.key.as_str().cmp(b.key.as_str()))
    });
    let page: Vec<&SessionInfo> = matching.iter().skip(offset).take(limit).collect();
    for info in &page {
        state.observer.observe(info).await;
    }
    let views: Vec<Value> = page.iter().map(|info| session_json(&state, info)).collect();
    let version = page_version(total, offset, &views);
    if query.since.as_deref() == Some(version.as_str()) {
        return Ok(Json(json!({ "unchanged": true, "version": version })));
    }
    Ok(Json(json!({
        "sessions": views,
        "total": total,
        "offset": offset,
        "limit": limit,
        "version": version,
    })))
}

/// True when `needle` (lowercase; empty matches all) is in the session's key, id, name or
/// channel.
fn matches(info: &SessionInfo, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    let e = &info.entry;
    [
        info.key.as_str(),
        &e.session_id.to_string(),
        e.display_name.as_deref().unwrap_or_default(),
        e.channel.as_deref().unwrap_or_default(),
    ]
    .iter()
    .any(|field| field.to_lowercase().contains(needle))
}

/// A digest of what one page shows: the same digest means the same rows, so a refresh that
/// gets it back redraws nothing.
fn page_version(total: usize, offset: usize, views: &[Value]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(format!("{total}/{offset}/").as_bytes());
    hasher.update(Value::Array(views.to_vec()).to_string().as_bytes());
    hex::encode(&hasher.finalize()[..12])
}

/// One session's summary and the run it is in, if any (the page's header).
async fn session_of(
    Extract(state): Extract<State>,
    Query(query): Query<SessionQuery>,
) -> ApiResult {
    let info = query.info(&state).await?;
    Ok(Json(json!({
        "session": session_json(&state, &info),
        "active_run": active_run(&state, &info),
    })))
}

/// The number of the run `info`'s session is in now, if any.
fn active_run(state: &State, info: &SessionInfo) -> Option<u64> {
    state
        .runtime
        .sessions()
        .manager()
        .peek(&info.agent_id, &info.entry.session_id)
        .and_then(|live| live.active_run())
}

fn session_json(state: &State, info: &SessionInfo) -> Value {
    let e = &info.entry;
    let running = state
        .runtime
        .sessions()
        .manager()
        .peek(&info.agent_id, &e.session_id)
        .is_some_and(|live| live.is_running());
    json!({
        "agent_id": info.agent_id,
        "key": info.key.as_str(),
        "session_id": e.session_id.to_string(),
        "display_name": e.display_name,
        "channel": e.channel,
        "chat_type": e.chat_type,
        "created_at": e.created_at,
        "updated_at": e.updated_at,
        "last_activity": last_activity(info),
        "model_override": e.model_override,
        "compactions": e.compaction_count,
        "input_tokens": e.input_tokens,
        "output_tokens": e.output_tokens,
        "total_tokens": e.total_tokens,
        "running": running,
        "observed": state.observer.watches(info),
    })
}

#[derive(Debug, Deserialize)]
struct SessionQuery {
    agent: Option<String>,
    key: Option<String>,
}

impl SessionQuery {
    fn parts(&self) -> Result<(String, SessionTarget), ApiError> {
        let key = self
            .key
            .clone()
            .filter(|k| !k.trim().is_empty())
            .ok_or_else(|| ApiError::bad("key", "a session key is required"))?;
        Ok((
            self.agent.clone().unwrap_or_default(),
            SessionTarget::Key(key),
        ))
    }

    async fn info(&self, state: &State) -> Result<SessionInfo, ApiError> {
        let (agent, target) = self.parts()?;
        let info = state
            .runtime
            .sessions()
            .get(&agent, &target)
            .await
            .map_err(|e| ApiError::of(&state.runtime, e))?;
        state.observer.observe(&info).await;
        Ok(info)
    }
}

/// A session's exec approvals: pending ones (oldest first), then those decided since the
/// service started (newest first). Read-only: deciding is for the API, the CLI or chat.
async fn approvals_of(
    Extract(state): Extract<State>,
    Query(query): Query<SessionQuery>,
) -> ApiResult {
    let info = query.info(&state).await?;
    let approvals = state
        .runtime
        .approvals()
        .list(&info.agent_id, info.key.as_str(), true)
        .map_err(|e| ApiError::of(&state.runtime, e))?;
    let approvals: Vec<Value> = approvals.iter().map(events::approval_json).collect();
    Ok(Json(json!({
        "agent_id": info.agent_id,
        "key": info.key.as_str(),
        "approvals": approvals,
    })))
}

#[derive(Debug, Deserialize)]
struct TranscriptQuery {
    #[serde(flatten)]
    session: SessionQuery,
    /// 0-based index of the first entry; absent: the last page.
    offset: Option<usize>,
    /// Entries per page (at most [`MAX_PAGE`]).
    limit: Option<usize>,
}

async fn transcript(
    Extract(state): Extract<State>,
    Query(query): Query<TranscriptQuery>,
) -> ApiResult {
    let limit = query.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::bad(
            "limit",
            &format!("must be between 1 and {MAX_PAGE}"),
        ));
    }
    let info = query.session.info(&state).await?;
    let target = SessionTarget::Key(info.key.as_str().to_owned());
    let mut rx = state
        .runtime
        .sessions()
        .transcript(&info.agent_id, &target)
        .await
        .map_err(|e| ApiError::of(&state.runtime, e))?;
    let mut header = Value::Null;
    let mut report = Value::Null;
    let mut total = 0usize;
    // Only one page is ever held: a window from `offset`, or the last `limit` entries.
    let mut page: std::collections::VecDeque<Value> = std::collections::VecDeque::new();
    while let Some(item) = rx.recv().await {
        match item.map_err(|e| ApiError::of(&state.runtime, e))? {
            TranscriptItem::Header(h) => header = serde_json::to_value(&h).unwrap_or_default(),
            TranscriptItem::Entry(entry) => {
                let index = total;
                total += 1;
                let wanted = match query.offset {
                    Some(offset) => index >= offset && index < offset + limit,
                    None => true,
                };
                if wanted {
                    let mut value = serde_json::to_value(&entry).unwrap_or_default();
                    shorten(&mut value);
                    page.push_back(json!({ "index": index, "entry": value }));
                    if query.offset.is_none() && page.len() > limit {
                        page.pop_front();
                    }
                }
            }
            TranscriptItem::Report(r) => {
                report = json!({
                    "entries": r.entries,
                    "bad_lines": r.bad_line_count,
                    "torn_tail": r.torn_tail.is_some(),
                    "bytes": r.bytes,
                });
            }
        }
    }
    let first = page
        .front()
        .and_then(|e| e["index"].as_u64())
        .unwrap_or(total as u64);
    Ok(Json(json!({
        "session": session_json(&state, &info),
        "header": header,
        "entries": page,
        "offset": first,
        "limit": limit,
        "total": total,
        "report": report,
    })))
}

/// Cuts long strings (tool outputs, images) so one page stays small.
fn shorten(value: &mut Value) {
    match value {
        Value::String(s) => {
            let chars = s.chars().count();
            if chars > MAX_STRING_CHARS {
                let kept: String = s.chars().take(MAX_STRING_CHARS).collect();
                *s = format!("{kept}\n[… {} more characters]", chars - MAX_STRING_CHARS);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(shorten),
        Value::Object(map) => {
            // Image data is never shown: its size is.
            if map.get("type").and_then(Value::as_str) == Some("image")
                && let Some(Value::String(data)) = map.get_mut("data")
            {
                *data = format!("[image, {} bytes of base64]", data.len());
            }
            map.values_mut().for_each(shorten);
        }
        _ => {}
    }
}

async fn turns(Extract(state): Extract<State>, Query(query): Query<SessionQuery>) -> ApiResult {
    let info = query.info(&state).await?;
    let turns = state.observer.turns(&info);
    let list: Vec<Value> = turns
        .iter()
        .enumerate()
        .map(|(i, t)| layers::turn_summary(t, i.checked_sub(1).map(|p| &turns[p])))
        .collect();
    Ok(Json(json!({
        "session": session_json(&state, &info),
        "turns": list,
    })))
}

#[derive(Debug, Deserialize)]
struct TurnQuery {
    #[serde(flatten)]
    session: SessionQuery,
    /// A turn's index (from `/api/turns`); absent: the prompt the next call would send.
    turn: Option<u64>,
}

async fn layers_of(Extract(state): Extract<State>, Query(query): Query<TurnQuery>) -> ApiResult {
    let Some(index) = query.turn else {
        let (agent, target) = query.session.parts()?;
        let SessionTarget::Key(key) = target else {
            return Err(ApiError::bad("key", "a session key is required"));
        };
        let preview = state
            .runtime
            .runs()
            .preview(
                &agent,
                &key,
                &agent_runtime::prompt_input::TurnChannel::default(),
            )
            .await
            .map_err(|e| ApiError::of(&state.runtime, e))?;
        return Ok(Json(json!({
            "source": "preview",
            "model": preview.model,
            "workspace": preview.workspace.display().to_string(),
            "layers": layers::layers(&preview.prompt),
        })));
    };
    let info = query.session.info(&state).await?;
    let turns = state.observer.turns(&info);
    let turn = turns
        .iter()
        .find(|t| t.index == index)
        .ok_or_else(|| ApiError::bad("turn", "no such model call is remembered"))?;
    let prompt = turn.prompt.as_ref().ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            "the prompt of this model call is no longer remembered".to_owned(),
        )
    })?;
    Ok(Json(json!({
        "source": "turn",
        "turn": layers::turn_summary(turn, None),
        "model": turn.model,
        "layers": layers::layers(prompt),
    })))
}

async fn cache_break(Extract(state): Extract<State>, Query(query): Query<TurnQuery>) -> ApiResult {
    let index = query
        .turn
        .ok_or_else(|| ApiError::bad("turn", "a turn index is required"))?;
    let info = query.session.info(&state).await?;
    let turns = state.observer.turns(&info);
    let at = turns
        .iter()
        .position(|t| t.index == index)
        .ok_or_else(|| ApiError::bad("turn", "no such model call is remembered"))?;
    let previous = at.checked_sub(1).map(|p| &turns[p]);
    Ok(Json(layers::cache_break(&turns[at], previous)))
}

/// Sent on an idle stream so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

async fn events_of(
    Extract(state): Extract<State>,
    Query(query): Query<SessionQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let info = query.info(&state).await?;
    let target = SessionTarget::Key(info.key.as_str().to_owned());
    let events = state
        .runtime
        .sessions()
        .watch(&info.agent_id, &target)
        .await
        .map_err(|e| ApiError::of(&state.runtime, e))?;
    // Subscribed first, then asked: a run that starts in between is seen by both, never by
    // neither, and the page tells a duplicate by its number.
    let hello = Event::default()
        .event("watching")
        .json_data(json!({
            "session_id": info.entry.session_id.to_string(),
            "active_run": active_run(&state, &info),
        }))
        .unwrap_or_default();
    let stream = events.into_stream().map(|item| {
        let (name, body) = match item {
            Ok(event) => events::event_json(event.run, &event.event),
            Err(missed) => ("lagged", json!({ "missed": missed })),
        };
        Ok(Event::default()
            .event(name)
            .json_data(body)
            .unwrap_or_default())
    });
    let mut stopping = WatchStream::new(state.stopping.clone());
    let stop = async move {
        while let Some(stop) = stopping.next().await {
            if stop {
                return;
            }
        }
    };
    let stream = tokio_stream::once(Ok(hello)).chain(stream).take_until(stop);
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

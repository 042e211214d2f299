//! The fake model server: one axum app per wire format on `127.0.0.1:0`, answering from a
//! queue of scripted replies (or instantly, for benchmarks) and recording what it received.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::{CONTENT_TYPE, HeaderName, RETRY_AFTER};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use futures_util::stream;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::frames::{self, Frame, Step};
use crate::reply::{Body as ReplyBody, FakeError, FakeReply, FakeTurn};
use crate::{WireFormat, anthropic, chat, responses};

/// One request as the fake received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// The request path, e.g. `/v1/messages`.
    pub path: String,
    /// Every header, names lowercase.
    pub headers: HeaderMap,
    /// The JSON body (`null` if it was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// A header's value, if present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

/// Starts fake model servers.
#[derive(Debug)]
pub struct FakeServer;

impl FakeServer {
    /// Binds `127.0.0.1:0` and serves `format` until the last handle is dropped. Returns the
    /// base URL to configure as the provider's `baseUrl` (`http://127.0.0.1:<port>/v1` for the
    /// OpenAI formats, `http://127.0.0.1:<port>` for Anthropic, as the real services differ)
    /// and the handle that scripts and inspects it.
    pub async fn start(format: WireFormat) -> io::Result<(String, FakeServerHandle)> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base_url = format!("http://{}{}", listener.local_addr()?, format.base_path());
        let shutdown = CancellationToken::new();
        let shared = Arc::new(Shared {
            format,
            state: Mutex::new(ServerState::default()),
            shutdown: shutdown.clone(),
        });
        let app = Router::new()
            .route(format.path(), post(answer))
            .layer(DefaultBodyLimit::disable())
            .with_state(shared.clone());
        let task = tokio::spawn(async move {
            // Errors of single connections are the client's business; the server itself only
            // stops when the handle goes.
            let _ = axum::serve(listener, app).await;
        });
        let guard = Arc::new(Guard { task, shutdown });
        let handle = FakeServerHandle {
            base_url: base_url.clone(),
            shared,
            _guard: guard,
        };
        Ok((base_url, handle))
    }
}

/// Scripts and inspects a running fake server. Clones share it; dropping the last one stops
/// the server and ends any stalled stream.
#[derive(Clone)]
pub struct FakeServerHandle {
    base_url: String,
    shared: Arc<Shared>,
    _guard: Arc<Guard>,
}

impl std::fmt::Debug for FakeServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServerHandle")
            .field("format", &self.shared.format)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl FakeServerHandle {
    /// The base URL, as returned by [`FakeServer::start`].
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Queues a reply; requests take replies in order. With the queue empty (and instant mode
    /// off) the fake answers 400 "no reply queued".
    pub fn push(&self, reply: FakeReply) {
        self.shared.lock().queue.push_back(reply);
    }

    /// Queues several replies.
    pub fn push_all(&self, replies: impl IntoIterator<Item = FakeReply>) {
        self.shared.lock().queue.extend(replies);
    }

    /// Every request received so far (instant-mode requests are counted, not recorded).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many requests arrived, instant mode included.
    pub fn request_count(&self) -> u64 {
        self.shared.lock().served
    }

    /// Stops (`false`) or resumes (`true`, the default) keeping a copy of each request for
    /// [`FakeServerHandle::requests`]; requests are still checked and counted. For long runs
    /// (the soak tool), where every request body would otherwise be kept until the server stops.
    pub fn set_recording(&self, on: bool) {
        self.shared.lock().not_recording = !on;
    }

    /// Refuses requests without this key (`Authorization: Bearer` for OpenAI formats,
    /// `x-api-key` for Anthropic) with the API's 401.
    pub fn require_api_key(&self, key: impl Into<String>) {
        self.shared.lock().api_key = Some(key.into());
    }

    /// Refuses, as chat templates of many local models do (vLLM's, llama.cpp's for some
    /// models), a Chat Completions request in which two user or two assistant messages follow
    /// each other: 400 "Conversation roles must alternate ...". OpenAI itself accepts them.
    pub fn require_alternating_roles(&self) {
        self.shared.lock().alternating_roles = true;
    }

    /// Answers every request whose body contains `marker` with `error`, without taking a
    /// queued reply: a provider that refuses one piece of content (an image, a long message,
    /// a content policy) every time it is sent. Requests without the marker are answered as
    /// usual.
    pub fn refuse_containing(&self, marker: impl Into<String>, error: FakeError) {
        self.shared.lock().refusals.push((marker.into(), error));
    }

    /// A hung model, for fault drills: while on, every request is taken (recorded and counted,
    /// no queued reply used) and then, in turn, either never answered (no status line until the
    /// server stops) or answered with a stream that goes silent after its first delta and stays
    /// open. What a client's first-byte and idle timeouts are for.
    pub fn set_hanging(&self, on: bool) {
        self.shared.lock().hanging = on;
    }

    /// Requests taken while hanging (see [`FakeServerHandle::set_hanging`]).
    pub fn hung_count(&self) -> u64 {
        self.shared.lock().hung
    }

    /// Drops every [`FakeServerHandle::refuse_containing`] rule.
    pub fn clear_refusals(&self) {
        self.shared.lock().refusals.clear();
    }

    /// Instant mode, for benchmarks: every request is answered at once, without queue,
    /// recording, checks, delays or faults, with `on_tool_result` when the request's last
    /// message is a tool result and `on_user` otherwise. Both bodies are rendered once, here.
    pub fn set_instant(&self, on_user: FakeReply, on_tool_result: FakeReply) {
        let format = self.shared.format;
        let instant = Instant {
            on_user: Prepared::new(format, on_user),
            on_tool_result: Prepared::new(format, on_tool_result),
        };
        self.shared.lock().instant = Some(instant);
    }

    /// Leaves instant mode.
    pub fn clear_instant(&self) {
        self.shared.lock().instant = None;
    }
}

struct Guard {
    task: JoinHandle<()>,
    shutdown: CancellationToken,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.task.abort();
    }
}

struct Shared {
    format: WireFormat,
    state: Mutex<ServerState>,
    shutdown: CancellationToken,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, ServerState> {
        // A panicking test thread must not hide what the server recorded.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Default)]
struct ServerState {
    queue: VecDeque<FakeReply>,
    requests: Vec<RecordedRequest>,
    instant: Option<Instant>,
    api_key: Option<String>,
    served: u64,
    not_recording: bool,
    alternating_roles: bool,
    /// Requests are hung (see [`FakeServerHandle::set_hanging`]).
    hanging: bool,
    /// Requests hung so far.
    hung: u64,
    /// Body markers answered with an error (see [`FakeServerHandle::refuse_containing`]).
    refusals: Vec<(String, FakeError)>,
}

struct Instant {
    on_user: Prepared,
    on_tool_result: Prepared,
}

/// A reply rendered ahead of time.
#[derive(Clone)]
enum Prepared {
    Stream(Bytes),
    Error(FakeError),
}

impl Prepared {
    fn new(format: WireFormat, reply: FakeReply) -> Self {
        match reply.body {
            ReplyBody::Turn(turn) => Self::Stream(frames::concatenated(&render(
                format,
                &turn,
                "fake-model",
                0,
            ))),
            ReplyBody::Error(error) => Self::Error(error),
        }
    }
}

fn render(format: WireFormat, turn: &FakeTurn, model: &str, n: u64) -> Vec<Frame> {
    match format {
        WireFormat::OpenAiResponses => responses::frames(turn, model, n),
        WireFormat::ChatCompletions => chat::frames(turn, model, n),
        WireFormat::AnthropicMessages => anthropic::frames(turn, model, n),
    }
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let format = shared.format;
    let json: Option<Value> = serde_json::from_slice(&body).ok();
    let (n, reply) = {
        let mut state = shared.lock();
        state.served += 1;
        let n = state.served;
        if let Some(instant) = &state.instant {
            let after_tool = json.as_ref().is_some_and(|body| match format {
                WireFormat::OpenAiResponses => responses::after_tool_result(body),
                WireFormat::ChatCompletions => chat::after_tool_result(body),
                WireFormat::AnthropicMessages => anthropic::after_tool_result(body),
            });
            let prepared = if after_tool {
                &instant.on_tool_result
            } else {
                &instant.on_user
            };
            return match prepared.clone() {
                Prepared::Stream(bytes) => stream_response(format, n, Body::from(bytes)),
                Prepared::Error(error) => error_response(format, &error),
            };
        }
        if !state.not_recording {
            state.requests.push(RecordedRequest {
                path: uri.path().to_owned(),
                headers: headers.clone(),
                body: json.clone().unwrap_or(Value::Null),
            });
        }
        if let Some(refusal) = refuse(format, &headers, json.as_ref(), state.api_key.as_deref()) {
            return refusal;
        }
        let refused_roles = (state.alternating_roles && format == WireFormat::ChatCompletions)
            .then(|| json.as_ref().and_then(chat::roles_not_alternating))
            .flatten();
        let text = String::from_utf8_lossy(&body);
        let refused = state
            .refusals
            .iter()
            .find(|(marker, _)| text.contains(marker.as_str()));
        if let Some((_, error)) = refused {
            return error_response(format, error);
        }
        if let Some(message) = refused_roles {
            return error_response(
                format,
                &FakeError::Other {
                    status: 400,
                    message,
                },
            );
        }
        if state.hanging {
            state.hung += 1;
            (n, Err(state.hung % 2 == 1))
        } else {
            (n, Ok(state.queue.pop_front()))
        }
    };
    let reply = match reply {
        Ok(reply) => reply,
        Err(silent) => return hung(&shared, format, n, silent).await,
    };
    let Some(reply) = reply else {
        return error_response(
            format,
            &FakeError::Other {
                status: 400,
                message: "agent-testkit: no reply queued".to_owned(),
            },
        );
    };
    if !reply.delay.is_zero() {
        tokio::select! {
            () = tokio::time::sleep(reply.delay) => {}
            () = shared.shutdown.cancelled() => {}
        }
    }
    let turn = match reply.body {
        ReplyBody::Turn(turn) => turn,
        ReplyBody::Error(error) if reply.error_as_events => {
            return error_event_stream(format, &error);
        }
        ReplyBody::Error(error) => return error_response(format, &error),
    };
    let model = json
        .as_ref()
        .and_then(|b| b.get("model"))
        .and_then(Value::as_str)
        .unwrap_or("fake-model");
    if reply.unstreamed {
        let body = match format {
            WireFormat::OpenAiResponses => responses::whole(&turn, model, n),
            WireFormat::ChatCompletions => chat::whole(&turn, model, n),
            WireFormat::AnthropicMessages => anthropic::whole(&turn, model, n),
        };
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return (StatusCode::OK, headers, body.to_string()).into_response();
    }
    let steps = frames::steps(&render(format, &turn, model, n), reply.fault);
    stream_response(
        format,
        n,
        streamed(steps, reply.frame_delay, shared.shutdown.clone()),
    )
}

/// A hung request: never answered (`silent`), or a stream that stops after its first delta.
/// Either holds the connection until the server stops.
async fn hung(shared: &Shared, format: WireFormat, n: u64, silent: bool) -> Response {
    if silent {
        shared.shutdown.cancelled().await;
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let turn = FakeTurn {
        text: Some("This answer stops after its first words".to_owned()),
        deltas: 4,
        ..FakeTurn::default()
    };
    let steps = frames::steps(
        &render(format, &turn, "fake-model", n),
        Some(crate::reply::Fault::Stall(1)),
    );
    stream_response(
        format,
        n,
        streamed(steps, Duration::ZERO, shared.shutdown.clone()),
    )
}

/// Checks what the real API would refuse: a non-JSON body, a missing or wrong key, a missing
/// `anthropic-version`, a request that does not ask to stream, a missing model.
fn refuse(
    format: WireFormat,
    headers: &HeaderMap,
    body: Option<&Value>,
    api_key: Option<&str>,
) -> Option<Response> {
    let bad = |message: &str| {
        Some(error_response(
            format,
            &FakeError::Other {
                status: 400,
                message: message.to_owned(),
            },
        ))
    };
    let Some(body) = body else {
        return bad("the request body is not valid JSON");
    };
    if let Some(key) = api_key {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let sent = match format {
            WireFormat::AnthropicMessages => header("x-api-key"),
            WireFormat::OpenAiResponses | WireFormat::ChatCompletions => {
                header("authorization").and_then(|v| v.strip_prefix("Bearer "))
            }
        };
        if sent != Some(key) {
            return Some(error_response(
                format,
                &FakeError::Other {
                    status: 401,
                    message: "invalid api key".to_owned(),
                },
            ));
        }
    }
    if format == WireFormat::AnthropicMessages && !headers.contains_key("anthropic-version") {
        return bad("anthropic-version: header is required");
    }
    if body.get("stream") != Some(&json!(true)) {
        return bad("agent-testkit fake servers only stream: send \"stream\": true");
    }
    if !body.get("model").is_some_and(Value::is_string) {
        return bad("model: field required");
    }
    None
}

fn streamed(steps: VecDeque<Step>, frame_delay: Duration, shutdown: CancellationToken) -> Body {
    let body = stream::unfold(
        (steps, frame_delay, shutdown),
        |(mut steps, delay, shutdown)| async move {
            let step = steps.pop_front()?;
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            match step {
                Step::Write(bytes) => Some((Ok(bytes), (steps, delay, shutdown))),
                Step::Cut => {
                    // Pending once, so hyper flushes the frames already written; then the body's
                    // error makes it close the connection without the final chunk.
                    tokio::task::yield_now().await;
                    let cut = io::Error::new(io::ErrorKind::ConnectionReset, "cut by the fake");
                    Some((Err(cut), (VecDeque::new(), delay, shutdown)))
                }
                Step::Stall => {
                    shutdown.cancelled().await;
                    None
                }
            }
        },
    );
    Body::from_stream(body)
}

fn stream_response(format: WireFormat, n: u64, body: Body) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    if let Ok(id) = HeaderValue::from_str(&format!("req_fake_{n}")) {
        headers.insert(request_id_header(format), id);
    }
    (StatusCode::OK, headers, body).into_response()
}

fn request_id_header(format: WireFormat) -> HeaderName {
    match format {
        WireFormat::AnthropicMessages => HeaderName::from_static("request-id"),
        WireFormat::OpenAiResponses | WireFormat::ChatCompletions => {
            HeaderName::from_static("x-request-id")
        }
    }
}

/// An error in the API's own body shape (see [`error_parts`]).
fn error_response(format: WireFormat, error: &FakeError) -> Response {
    let (status, mut headers, body) = error_parts(format, error);
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    (status, headers, body.to_string()).into_response()
}

/// The same error status with its body as one `error` event of an event stream.
fn error_event_stream(format: WireFormat, error: &FakeError) -> Response {
    let (status, mut headers, body) = error_parts(format, error);
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    let event = match format {
        WireFormat::ChatCompletions => String::new(),
        WireFormat::OpenAiResponses | WireFormat::AnthropicMessages => "event: error\n".to_owned(),
    };
    (status, headers, format!("{event}data: {body}\n\n")).into_response()
}

/// An error's status, headers and body in the API's own shape: `{error: {message, type,
/// param, code}}` for OpenAI, `{type: "error", error: {type, message}}` for Anthropic.
fn error_parts(format: WireFormat, error: &FakeError) -> (StatusCode, HeaderMap, Value) {
    let anthropic = format == WireFormat::AnthropicMessages;
    let (status, kind, code, message) = match error {
        FakeError::RateLimited { .. } if anthropic => (
            429,
            "rate_limit_error",
            None,
            "Number of request tokens has exceeded your per-minute rate limit",
        ),
        FakeError::RateLimited { .. } => (
            429,
            "requests",
            Some("rate_limit_exceeded"),
            "Rate limit reached for requests",
        ),
        FakeError::Server { status: 529 } if anthropic => {
            (529, "overloaded_error", None, "Overloaded")
        }
        FakeError::Server { status } if anthropic => {
            (*status, "api_error", None, "Internal server error")
        }
        FakeError::Server { status } => (
            *status,
            "server_error",
            None,
            "The server had an error while processing your request.",
        ),
        FakeError::ContextOverflow if anthropic => (
            400,
            "invalid_request_error",
            None,
            "prompt is too long: 210000 tokens > 200000 maximum",
        ),
        FakeError::ContextOverflow => (
            400,
            "invalid_request_error",
            Some("context_length_exceeded"),
            concat!(
                "This model's maximum context length is 128000 tokens. ",
                "However, your messages resulted in 210000 tokens."
            ),
        ),
        FakeError::Other { status, message } if anthropic => (
            *status,
            if *status == 401 {
                "authentication_error"
            } else {
                "invalid_request_error"
            },
            None,
            message.as_str(),
        ),
        FakeError::Other { status, message } => {
            (*status, "invalid_request_error", None, message.as_str())
        }
    };
    let body = if anthropic {
        let error = json!({"type": kind, "message": message});
        json!({"type": "error", "error": error, "request_id": "req_fake"})
    } else {
        json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
    };
    let mut headers = HeaderMap::new();
    if let FakeError::RateLimited {
        retry_after: Some(seconds),
    } = error
    {
        headers.insert(RETRY_AFTER, HeaderValue::from(*seconds));
    }
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, headers, body)
}

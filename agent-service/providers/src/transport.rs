//! HTTP for the wire-format providers: the shared client, an endpoint (base URL, key, extra
//! headers), one streaming POST, and the loop that feeds SSE events to a wire decoder and its
//! stream events to the caller, watching the cancellation token at every await.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::sync::{Arc, OnceLock};

use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderName, HeaderValue};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::credentials::ApiKey;
use crate::error::{self, ProviderError};
use crate::excerpt::{excerpt, excerpt_with, looks_like_sse};
use crate::reply::ReplyBuilder;
use crate::request::StreamEvent;
use crate::sse::{SseDecoder, SseEvent};
use crate::timeouts::{HttpSettings, Idle, seconds};

/// The most of an error body read to explain a failure.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// One HTTP client (connection pool, TLS via rustls), shared by the providers with the same
/// timeouts.
#[derive(Debug, Clone)]
pub struct HttpClient {
    inner: reqwest::Client,
    settings: HttpSettings,
}

impl HttpClient {
    /// Builds the client. Proxies come from the usual `HTTPS_PROXY` / `NO_PROXY` variables.
    /// The connect timeout is the client's; the first-byte and idle timeouts are applied per
    /// read by the calls (a client-wide read timeout would also cut a reply that streams for
    /// longer than it).
    pub fn new(settings: &HttpSettings) -> Result<Self, ProviderError> {
        let inner = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .tcp_nodelay(true)
            .build()
            .map_err(|error| ProviderError::config(format!("HTTP client: {}", chain(&error))))?;
        Ok(Self {
            inner,
            settings: *settings,
        })
    }

    /// The timeouts this client was built with.
    pub fn settings(&self) -> &HttpSettings {
        &self.settings
    }
}

/// Where an HTTP provider sends its requests: provider id, base URL, API key and extra headers.
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) id: String,
    /// The config path its settings live under, named in messages about them.
    setting: String,
    /// Whether `<setting>.timeouts` configures the timeouts (so a timeout message names it).
    timeouts_configurable: bool,
    base_url: String,
    api_key: Option<ApiKey>,
    headers: HeaderMap,
    client: HttpClient,
    output_limits: BTreeMap<String, u32>,
    without_reasoning: Vec<String>,
    /// The first path posted to and its whole URL, parsed once: a wire format posts to one
    /// path, and parsing a URL (the host's IDNA check included) would otherwise be paid on
    /// every model call.
    posted_to: Arc<OnceLock<(String, reqwest::Url)>>,
}

impl Endpoint {
    /// An endpoint without key or extra headers. A trailing `/` on `base_url` is dropped.
    pub fn new(id: impl Into<String>, base_url: &str, client: HttpClient) -> Self {
        let id = id.into();
        Self {
            setting: format!("models.providers.{id}"),
            timeouts_configurable: true,
            id,
            base_url: base_url.trim().trim_end_matches('/').to_owned(),
            api_key: None,
            headers: HeaderMap::new(),
            client,
            output_limits: BTreeMap::new(),
            without_reasoning: Vec::new(),
            posted_to: Arc::default(),
        }
    }

    /// `{base_url}{path}`, parsed: kept for the first path posted to, parsed again for any
    /// other. `None` when it does not parse; the HTTP client is then given the text and
    /// refuses it as it always has.
    fn url(&self, path: &str) -> Option<reqwest::Url> {
        if let Some((kept, url)) = self.posted_to.get()
            && kept == path
        {
            return Some(url.clone());
        }
        let url = reqwest::Url::parse(&format!("{}{path}", self.base_url)).ok()?;
        let _ = self.posted_to.set((path.to_owned(), url.clone()));
        Some(url)
    }

    /// Names the models configured with `reasoning: false`: requests for them carry no
    /// reasoning settings, which such models refuse.
    pub fn with_models_without_reasoning(mut self, models: Vec<String>) -> Self {
        self.without_reasoning = models;
        self
    }

    /// Whether `model` (its wire id, or the id as configured) is configured not to reason.
    pub fn reasons(&self, model: &str) -> bool {
        let bare = model.split_once('/').map(|(_, bare)| bare);
        !self
            .without_reasoning
            .iter()
            .any(|id| id == model || Some(id.as_str()) == bare)
    }

    /// Sets the output token limit of each model (`models.providers.<id>.models[].maxTokens`),
    /// used when a request sets none.
    pub fn with_output_limits(mut self, limits: BTreeMap<String, u32>) -> Self {
        self.output_limits = limits;
        self
    }

    /// The configured output limit of `model` (its wire id, or the id as configured).
    pub fn output_limit(&self, model: &str) -> Option<u32> {
        self.output_limits.get(model).copied().or_else(|| {
            let (_, bare) = model.split_once('/')?;
            self.output_limits.get(bare).copied()
        })
    }

    /// Names `setting` (a config path such as `memorySearch.remote`) instead of
    /// `models.providers.<id>` in messages about the key and headers, for an endpoint that
    /// is configured elsewhere; its timeouts are then the client's, configured nowhere.
    pub fn with_setting(mut self, setting: impl Into<String>) -> Self {
        self.setting = setting.into();
        self.timeouts_configurable = false;
        self
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, api_key: Option<ApiKey>) -> Self {
        self.api_key = api_key;
        self
    }

    /// Adds headers sent with every request, after the API's own (so they may override them).
    /// An invalid name or value is a config error naming the header (never its value).
    pub fn with_headers(
        mut self,
        headers: &BTreeMap<String, String>,
    ) -> Result<Self, ProviderError> {
        for (name, value) in headers {
            let invalid = || {
                ProviderError::config(format!(
                    "{}.headers.{name} is not a valid HTTP header",
                    self.setting
                ))
            };
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            let mut value = HeaderValue::from_str(value).map_err(|_| invalid())?;
            value.set_sensitive(true);
            self.headers.insert(header, value);
        }
        Ok(self)
    }

    /// The API key, if any.
    pub(crate) fn api_key(&self) -> Option<&ApiKey> {
        self.api_key.as_ref()
    }

    /// The base URL, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// ` (<setting>.timeouts.<name>)` where that setting exists, else nothing.
    fn timeout_hint(&self, name: &str) -> String {
        if self.timeouts_configurable {
            format!(" ({}.timeouts.{name})", self.setting)
        } else {
            String::new()
        }
    }

    /// POSTs `body` to `{base_url}{path}` and returns the JSON it is answered with (an
    /// embeddings call, say): the key, headers and timeouts of a streaming call, the answer
    /// read whole. Another status than success is mapped to an error as a model call's is.
    pub async fn post_json(
        &self,
        path: &str,
        auth: Auth,
        body: &serde_json::Value,
    ) -> Result<serde_json::Value, ProviderError> {
        let call = Call {
            path,
            auth,
            accept: "application/json",
            api_headers: &[],
            body: crate::body::to_bytes(body)?,
        };
        let (response, idle) = send(self, call, &CancellationToken::new()).await?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = read_limited(response, &idle).await;
            return Err(error::from_http(status.as_u16(), &headers, &text));
        }
        let body = read_whole(response, &idle).await?;
        serde_json::from_slice(&body)
            .map_err(|error| ProviderError::malformed(format!("the answer is not JSON: {error}")))
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.keys().map(HeaderName::as_str).collect();
        f.debug_struct("Endpoint")
            .field("id", &self.id)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("headers", &header_names)
            .finish_non_exhaustive()
    }
}

/// How the API key travels.
#[derive(Debug, Clone, Copy)]
pub enum Auth {
    /// `Authorization: Bearer <key>` (OpenAI and compatibles).
    Bearer,
    /// `x-api-key: <key>` (Anthropic).
    XApiKey,
    /// `x-goog-api-key: <key>` (Gemini).
    XGoogApiKey,
}

/// What a model API answered a streaming request with.
pub(crate) enum Answer {
    /// The event stream asked for (boxed: it is several times the size of the other).
    Stream(Box<SseStream>),
    /// One JSON body: the server (or a proxy before it) ignored `stream: true` and sent the
    /// API's non-streaming response, or an error with status 200.
    Whole(serde_json::Value),
}

/// The most of a non-streamed JSON answer read (a whole reply, as the stream's lines may be).
const MAX_WHOLE_BODY: usize = 16 * 1024 * 1024;

/// A response body being read as server-sent events.
pub(crate) struct SseStream {
    response: reqwest::Response,
    decoder: SseDecoder,
    ready: VecDeque<SseEvent>,
    scratch: Vec<SseEvent>,
    idle: Idle,
    /// Whether any event was decoded; a body that ends without one was no event stream.
    events_seen: bool,
    /// The first bytes of the body, kept until the first event to explain a body without one.
    head: Vec<u8>,
    excerpt_key: Option<ApiKey>,
}

/// POSTs `body` to `{base_url}{path}` asking for an event stream, and returns the stream (or
/// the whole JSON body a server sent instead) once the status says success; any other status
/// is read and mapped to an error.
pub(crate) async fn post_sse(
    endpoint: &Endpoint,
    path: &str,
    auth: Auth,
    api_headers: &[(HeaderName, HeaderValue)],
    body: Vec<u8>,
    cancel: &CancellationToken,
) -> Result<Answer, ProviderError> {
    let (response, idle) = send(
        endpoint,
        Call {
            path,
            auth,
            accept: "text/event-stream",
            api_headers,
            body,
        },
        cancel,
    )
    .await?;
    let status = response.status();
    if !status.is_success() {
        let headers = response.headers().clone();
        let text = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            text = read_limited(response, &idle) => text,
        };
        return Err(error::from_http(status.as_u16(), &headers, &text));
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("text/event-stream")
        .to_ascii_lowercase();
    if !content_type.starts_with("text/event-stream")
        && !content_type.starts_with("application/json")
    {
        // A login page, a proxy's notice, a maintenance page: a success status that carries
        // no reply. Its first bytes say what it is.
        let text = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            text = read_limited(response, &idle) => text,
        };
        return Err(ProviderError::malformed(format!(
            "expected an event stream, got {content_type} with status {status}: {}",
            excerpt(&text, endpoint)
        )));
    }
    if content_type.starts_with("application/json") {
        tracing::debug!("the server answered with one JSON body, not an event stream");
        let body = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            body = read_whole(response, &idle) => body?,
        };
        let json = serde_json::from_slice(&body).map_err(|error| {
            ProviderError::malformed(format!(
                "expected an event stream, got a JSON content type with a body that is not JSON: {error}"
            ))
        })?;
        return Ok(Answer::Whole(json));
    }
    Ok(Answer::Stream(Box::new(SseStream {
        response,
        decoder: SseDecoder::default(),
        ready: VecDeque::new(),
        scratch: Vec::new(),
        idle,
        events_seen: false,
        head: Vec::new(),
        excerpt_key: endpoint.api_key.clone(),
    })))
}

/// One POST: where it goes, how the key travels, what it accepts, the API's own headers and
/// the encoded JSON body.
struct Call<'a> {
    path: &'a str,
    auth: Auth,
    accept: &'static str,
    api_headers: &'a [(HeaderName, HeaderValue)],
    body: Vec<u8>,
}

/// Sends `call` to `{base_url}{path}` with the key, the API's headers and then the endpoint's
/// own (so they may override), and waits at most the first-byte timeout for the response
/// headers. Returns the response with the idle limit its body is read under.
async fn send(
    endpoint: &Endpoint,
    call: Call<'_>,
    cancel: &CancellationToken,
) -> Result<(reqwest::Response, Idle), ProviderError> {
    let post = match endpoint.url(call.path) {
        Some(url) => endpoint.client.inner.post(url),
        None => endpoint
            .client
            .inner
            .post(format!("{}{}", endpoint.base_url, call.path)),
    };
    let mut request = post
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, call.accept);
    if let Some(key) = &endpoint.api_key {
        let (name, value) = match call.auth {
            Auth::Bearer => (
                http::header::AUTHORIZATION,
                format!("Bearer {}", key.expose()),
            ),
            Auth::XApiKey => (
                HeaderName::from_static("x-api-key"),
                key.expose().to_owned(),
            ),
            Auth::XGoogApiKey => (
                HeaderName::from_static("x-goog-api-key"),
                key.expose().to_owned(),
            ),
        };
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            ProviderError::config(format!(
                "{}.apiKey is not a valid header value",
                endpoint.setting
            ))
        })?;
        value.set_sensitive(true);
        request = request.header(name, value);
    }
    for (name, value) in call.api_headers {
        request = request.header(name, value);
    }
    for (name, value) in &endpoint.headers {
        request = request.header(name, value);
    }
    let settings = endpoint.client.settings;
    let first_byte = settings.first_byte_timeout;
    let response = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(ProviderError::Cancelled),
        sent = tokio::time::timeout(first_byte, request.body(call.body).send()) => match sent {
            Ok(sent) => sent.map_err(connection)?,
            Err(_) => return Err(ProviderError::connection(format!(
                    "no response within {} of sending the request{}",
                    seconds(first_byte),
                    endpoint.timeout_hint("firstByteSeconds")
                ))),
        },
    };
    let idle = Idle {
        limit: settings.idle_timeout,
        hint: endpoint.timeout_hint("idleSeconds"),
    };
    Ok((response, idle))
}

impl SseStream {
    /// The next event, or `None` at the end of the body.
    pub(crate) async fn next(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Option<SseEvent>, ProviderError> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Ok(Some(event));
            }
            let chunk = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ProviderError::Cancelled),
                chunk = self.idle.chunk(&mut self.response) => chunk?.map_err(|error| ProviderError::connection(format!("the stream broke off: {}", chain(&error))))?,
            };
            let Some(chunk) = chunk else {
                if !self.events_seen && !self.head.is_empty() && !looks_like_sse(&self.head) {
                    return Err(ProviderError::malformed(format!(
                        "expected an event stream, got a body without a single event: {}",
                        excerpt_with(
                            &String::from_utf8_lossy(&self.head),
                            self.excerpt_key.as_ref()
                        )
                    )));
                }
                return Ok(None);
            };
            if !self.events_seen && self.head.len() < MAX_ERROR_BODY {
                self.head.extend_from_slice(&chunk);
            }
            self.decoder.push(&chunk, &mut self.scratch)?;
            if !self.scratch.is_empty() {
                self.events_seen = true;
                self.head = Vec::new();
            }
            self.ready.extend(self.scratch.drain(..));
        }
    }
}

/// A wire format's stream parser: consumes SSE events, builds the reply.
pub(crate) trait WireDecoder {
    /// Handles one event; `Ok(true)` once the API's terminal event arrived.
    fn on_event(&mut self, event: &SseEvent) -> Result<bool, ProviderError>;

    /// The body ended without a terminal event. By default that is a cut connection.
    fn on_eof(&mut self) -> Result<(), ProviderError> {
        Err(ProviderError::connection(
            "the stream ended before the reply was complete".to_owned(),
        ))
    }

    /// The reply being built.
    fn reply(&mut self) -> &mut ReplyBuilder;

    /// The events the stream would have carried for `body`, the API's non-streaming response
    /// (or an error object), ending with the terminal event. Decoding them builds the same
    /// reply, with one delta per block.
    fn unstreamed(&self, body: serde_json::Value) -> Vec<SseEvent>;
}

/// Feeds the answer to `decoder` until its terminal event, sending the stream events it
/// produced to `events` after each SSE event. A failure once text streamed carries that text
/// ([`ProviderError::partial_text`]).
pub(crate) async fn drive(
    answer: Answer,
    decoder: &mut impl WireDecoder,
    events: &mpsc::Sender<StreamEvent>,
    cancel: &CancellationToken,
) -> Result<(), ProviderError> {
    let result = feed(answer, decoder, events, cancel).await;
    result.map_err(|error| {
        let text = decoder.reply().text_so_far();
        if text.is_empty() {
            error
        } else {
            error.with_partial(text)
        }
    })
}

async fn feed(
    answer: Answer,
    decoder: &mut impl WireDecoder,
    events: &mpsc::Sender<StreamEvent>,
    cancel: &CancellationToken,
) -> Result<(), ProviderError> {
    let mut stream = match answer {
        Answer::Stream(stream) => stream,
        Answer::Whole(body) => {
            let mut done = false;
            for event in decoder.unstreamed(body) {
                if decoder.on_event(&event)? {
                    done = true;
                    break;
                }
            }
            if !done {
                decoder.on_eof()?;
            }
            decoder.reply().finish_open_tools()?;
            decoder.reply().emit_usage();
            return send_all(decoder.reply().take_events(), events, cancel).await;
        }
    };
    loop {
        let done = match stream.next(cancel).await? {
            Some(event) => decoder.on_event(&event)?,
            None => {
                decoder.on_eof()?;
                true
            }
        };
        if done {
            // Drop the body before the last sends, so the connection is released promptly.
            drop(stream);
            decoder.reply().finish_open_tools()?;
            decoder.reply().emit_usage();
            return send_all(decoder.reply().take_events(), events, cancel).await;
        }
        send_all(decoder.reply().take_events(), events, cancel).await?;
    }
}

/// Sends events in order; a dropped receiver is ignored (the reply is still returned), a
/// cancellation while waiting for room is not.
pub(crate) async fn send_all(
    batch: Vec<StreamEvent>,
    events: &mpsc::Sender<StreamEvent>,
    cancel: &CancellationToken,
) -> Result<(), ProviderError> {
    for event in batch {
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ProviderError::Cancelled),
            sent = events.send(event) => if sent.is_err() { return Ok(()) },
        }
    }
    Ok(())
}

async fn read_limited(mut response: reqwest::Response, idle: &Idle) -> String {
    let mut body = Vec::new();
    while let Ok(Ok(Some(chunk))) = idle.chunk(&mut response).await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_ERROR_BODY {
            body.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

async fn read_whole(
    mut response: reqwest::Response,
    idle: &Idle,
) -> Result<Vec<u8>, ProviderError> {
    let mut body = Vec::new();
    while let Some(chunk) = idle.chunk(&mut response).await?.map_err(|error| {
        ProviderError::connection(format!("the answer broke off: {}", chain(&error)))
    })? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_WHOLE_BODY {
            return Err(ProviderError::malformed(
                "a non-streamed answer exceeds 16 MiB",
            ));
        }
    }
    Ok(body)
}

fn connection(error: reqwest::Error) -> ProviderError {
    ProviderError::connection(chain(&error))
}

/// An error and its sources on one line; reqwest's own message alone says little.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first path's URL is kept and handed out again; another path gets its own; a base
    /// URL that does not parse gives none, so the text goes to the HTTP client as before.
    #[test]
    fn an_endpoint_parses_the_url_it_posts_to_once() {
        let client = HttpClient::new(&HttpSettings::default()).unwrap();
        let endpoint = Endpoint::new("p", "https://example.test/v1/", client.clone());
        let first = endpoint.url("/chat/completions").unwrap();
        assert_eq!(first.as_str(), "https://example.test/v1/chat/completions");
        assert_eq!(endpoint.url("/chat/completions"), Some(first.clone()));
        assert_eq!(
            endpoint
                .posted_to
                .get()
                .map(|(path, url)| (path.as_str(), url)),
            Some(("/chat/completions", &first))
        );
        assert_eq!(
            endpoint.url("/embeddings").unwrap().as_str(),
            "https://example.test/v1/embeddings"
        );
        assert_eq!(endpoint.url("/chat/completions"), Some(first));
        assert_eq!(Endpoint::new("p", "http://[bad", client).url("/x"), None);
    }

    #[test]
    fn an_endpoint_never_prints_its_key_or_header_values() {
        let client = HttpClient::new(&HttpSettings::default()).unwrap();
        let headers = BTreeMap::from([("x-secret-token".to_owned(), "hidden-value".to_owned())]);
        let endpoint = Endpoint::new("p", "https://example.test/v1/", client)
            .with_api_key(Some(ApiKey::new("sk-live-123")))
            .with_headers(&headers)
            .unwrap();
        let printed = format!("{endpoint:?}");
        assert!(
            !printed.contains("sk-live-123") && !printed.contains("hidden-value"),
            "{printed}"
        );
        assert!(
            printed.contains("x-secret-token") && printed.contains("***"),
            "{printed}"
        );
        assert_eq!(endpoint.base_url(), "https://example.test/v1");
    }
}

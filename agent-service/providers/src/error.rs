//! The one error type of this crate, and how each API's way of failing maps onto it.

use std::time::Duration;

use http::HeaderMap;
use serde_json::Value;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// HTTP 429 (or an in-stream rate-limit error); `retry_after` from `retry-after-ms` or
    /// `retry-after` (seconds), else from the error body's hint, when the provider gave one.
    /// The message says the wait (`retry after 7 s`), so it reaches the client.
    #[error("rate limited by the provider{}: {message}", wait_phrase(*.retry_after))]
    RateLimited {
        /// How long the provider asked us to wait.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
        /// Text the model streamed before the failure, empty when there was none.
        partial: String,
    },
    /// HTTP 5xx (529 overloaded included), or an in-stream server error (reported as 500, or
    /// 529 for Anthropic's `overloaded_error`).
    #[error("provider server error {status}: {message}")]
    Server {
        /// HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// Text the model streamed before the failure, empty when there was none.
        partial: String,
    },
    /// Any other 4xx: bad request, authentication, permission, not found, quota exhausted.
    #[error("provider refused the request ({status}): {message}")]
    Client {
        /// HTTP status (400 for an in-stream invalid-request error).
        status: u16,
        /// The provider's message.
        message: String,
        /// Text the model streamed before the failure, empty when there was none.
        partial: String,
    },
    /// The prompt does not fit the model's context window, in whichever words the API says it.
    #[error("context window exceeded: {message}")]
    ContextOverflow {
        /// The provider's message.
        message: String,
        /// Text the model streamed before the failure, empty when there was none.
        partial: String,
    },
    /// The response could not be understood: a chunk that is not JSON, a JSON answer that is
    /// not JSON after all, a success status whose body is no event stream (an HTML page).
    #[error("malformed provider response: {message}")]
    Malformed {
        /// What was wrong.
        message: String,
        /// Text the model streamed before the failure, empty when there was none.
        partial: String,
    },
    /// Connecting failed, or the stream ended before its terminal event.
    #[error("connection to the provider failed: {message}")]
    Connection {
        /// What happened.
        message: String,
        /// Text the model streamed before the failure, empty when there was none.
        partial: String,
    },
    /// The caller cancelled the call.
    #[error("the model call was cancelled")]
    Cancelled,
    /// The provider is misconfigured (missing base URL, unreadable script, bad header...).
    #[error("provider configuration: {message}")]
    Config {
        /// What is wrong, naming the setting.
        message: String,
    },
}

impl ProviderError {
    /// Whether trying again later may succeed: rate limits, server errors, connection failures
    /// and HTTP 408. A malformed response is not retried: a server that sends one tends to send
    /// it again.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::RateLimited { .. } | Self::Server { .. } | Self::Connection { .. } => true,
            Self::Client { status, .. } => *status == 408,
            Self::ContextOverflow { .. }
            | Self::Malformed { .. }
            | Self::Cancelled
            | Self::Config { .. } => false,
        }
    }

    /// The wait the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The text the model streamed before the failure (empty when there was none), so the
    /// loop can keep what the user already saw.
    pub fn partial_text(&self) -> &str {
        match self {
            Self::RateLimited { partial, .. }
            | Self::Server { partial, .. }
            | Self::Client { partial, .. }
            | Self::ContextOverflow { partial, .. }
            | Self::Malformed { partial, .. }
            | Self::Connection { partial, .. } => partial,
            Self::Cancelled | Self::Config { .. } => "",
        }
    }

    /// The same error, carrying `text` as what the model streamed before it.
    pub(crate) fn with_partial(mut self, text: String) -> Self {
        match &mut self {
            Self::RateLimited { partial, .. }
            | Self::Server { partial, .. }
            | Self::Client { partial, .. }
            | Self::ContextOverflow { partial, .. }
            | Self::Malformed { partial, .. }
            | Self::Connection { partial, .. } => *partial = text,
            Self::Cancelled | Self::Config { .. } => {}
        }
        self
    }

    /// [`ProviderError::RateLimited`] before any output.
    pub fn rate_limited(retry_after: Option<Duration>, message: impl Into<String>) -> Self {
        Self::RateLimited {
            retry_after,
            message: message.into(),
            partial: String::new(),
        }
    }

    /// [`ProviderError::Server`] before any output.
    pub fn server(status: u16, message: impl Into<String>) -> Self {
        Self::Server {
            status,
            message: message.into(),
            partial: String::new(),
        }
    }

    /// [`ProviderError::Client`] before any output.
    pub fn client(status: u16, message: impl Into<String>) -> Self {
        Self::Client {
            status,
            message: message.into(),
            partial: String::new(),
        }
    }

    /// [`ProviderError::ContextOverflow`] before any output.
    pub fn context_overflow(message: impl Into<String>) -> Self {
        Self::ContextOverflow {
            message: message.into(),
            partial: String::new(),
        }
    }

    /// [`ProviderError::Malformed`] before any output.
    pub fn malformed(message: impl Into<String>) -> Self {
        Self::Malformed {
            message: message.into(),
            partial: String::new(),
        }
    }

    /// [`ProviderError::Connection`] before any output.
    pub fn connection(message: impl Into<String>) -> Self {
        Self::Connection {
            message: message.into(),
            partial: String::new(),
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::Config {
            message: message.into(),
        }
    }
}

/// ` (retry after 7 s)` for a known wait, nothing otherwise. Whole seconds, rounded up, so a
/// client that waits that long waits long enough.
fn wait_phrase(wait: Option<Duration>) -> String {
    match wait {
        Some(wait) => {
            let millis = wait.as_millis();
            format!(" (retry after {} s)", millis.div_ceil(1000).max(1))
        }
        None => String::new(),
    }
}

/// The longest provider error text kept in an error.
const MAX_MESSAGE_CHARS: usize = 2000;

/// Maps a non-success HTTP response onto an error, from its status, headers and body.
pub(crate) fn from_http(status: u16, headers: &HeaderMap, body: &str) -> ProviderError {
    let (code, message) = error_fields(body);
    // 413: the body is too large for the server, which compaction cures as it does a prompt
    // too long for the window; it is never judged as a refused message (R-21).
    if status == 413 || (status != 429 && is_context_overflow(code.as_deref(), &message)) {
        return ProviderError::context_overflow(message);
    }
    match status {
        // OpenAI answers an exhausted quota with 429 too; waiting does not help.
        429 if code.as_deref() == Some("insufficient_quota") => {
            ProviderError::client(status, message)
        }
        429 => {
            let wait = retry_after(headers).or_else(|| body_retry_hint(body, &message));
            ProviderError::rate_limited(wait, message)
        }
        500..=599 => ProviderError::server(status, message),
        _ => ProviderError::client(status, message),
    }
}

/// Maps an error reported inside a stream (`response.failed`, Anthropic `error`, a chat chunk
/// with `error`) onto an error; `code` is the API's code or type.
pub(crate) fn from_stream(code: Option<&str>, message: String) -> ProviderError {
    if is_context_overflow(code, &message) {
        return ProviderError::context_overflow(message);
    }
    match code.unwrap_or_default() {
        "rate_limit_exceeded" | "rate_limit_error" | "rate_limited" => {
            ProviderError::rate_limited(None, message)
        }
        "overloaded_error" => ProviderError::server(529, message),
        "invalid_request_error"
        | "invalid_prompt"
        | "invalid_request"
        | "insufficient_quota"
        | "authentication_error"
        | "permission_error"
        | "not_found_error"
        | "billing_error" => ProviderError::client(400, message),
        _ => ProviderError::server(500, message),
    }
}

/// Whether an error means "the prompt is too long", in each API's words: OpenAI's
/// `context_length_exceeded`, Anthropic's `prompt is too long`, vLLM's and OpenRouter's
/// `maximum context length`, llama.cpp's `exceeds the available context size`, Ollama's
/// `prompt too long`.
pub(crate) fn is_context_overflow(code: Option<&str>, message: &str) -> bool {
    if code == Some("context_length_exceeded") {
        return true;
    }
    let message = message.to_lowercase();
    [
        "context_length_exceeded",
        "prompt is too long",
        "prompt too long",
        "maximum context length",
        "context window",
        "exceeds the context",
        "exceed_context_size",
        "exceeds the available context",
        "input is too long",
        "too many input tokens",
        "exceed context limit",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds. An HTTP-date `retry-after` is ignored:
/// turning it into a wait would need a clock, and APIs send seconds.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite() && *value >= 0.0)
    };
    if let Some(millis) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(millis / 1000.0));
    }
    number("retry-after").map(Duration::from_secs_f64)
}

/// The wait an error body asks for when no header did: a `retry_after` / `retryAfter` number
/// of seconds (in the error object or at the top), Google's `retryDelay: "20s"` in the error's
/// details, or OpenAI's sentence `Please try again in 1.5s` (or `in 250ms`).
fn body_retry_hint(body: &str, message: &str) -> Option<Duration> {
    let secs = |value: f64| {
        (value.is_finite() && (0.0..=86_400.0).contains(&value))
            .then(|| Duration::from_secs_f64(value))
    };
    if let Ok(json) = serde_json::from_str::<Value>(body) {
        let places = [
            "/error/retry_after",
            "/error/retryAfter",
            "/retry_after",
            "/retryAfter",
        ];
        for place in places {
            if let Some(value) = json.pointer(place).and_then(Value::as_f64) {
                return secs(value);
            }
        }
        let details = json.pointer("/error/details").and_then(Value::as_array);
        for detail in details.into_iter().flatten() {
            if let Some(delay) = detail.get("retryDelay").and_then(Value::as_str) {
                return delay
                    .trim()
                    .strip_suffix('s')
                    .and_then(|n| n.parse::<f64>().ok())
                    .and_then(secs);
            }
        }
    }
    let lower = message.to_ascii_lowercase();
    let at = lower
        .find("try again in ")
        .map(|i| i + "try again in ".len())
        .or_else(|| lower.find("retry in ").map(|i| i + "retry in ".len()))?;
    let rest = &lower[at..];
    let number: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let value: f64 = number.parse().ok()?;
    let unit = rest[number.len()..].trim_start();
    if unit.starts_with("ms") {
        secs(value / 1000.0)
    } else if unit.starts_with('s') {
        secs(value)
    } else if unit.starts_with('m') {
        secs(value * 60.0)
    } else {
        None
    }
}

/// The code and message of an error body, whichever of the common shapes it has:
/// `{error: {message, code|type}}` (OpenAI and compatibles), `{type: "error", error: {type,
/// message}}` (Anthropic), `{error: "text"}` (Ollama), `{message}` or `{detail}`, any of them
/// inside an event stream (gateways answer a streaming request that failed with its error as
/// an SSE event, `data: {...}`); otherwise the body text itself.
pub(crate) fn error_fields(body: &str) -> (Option<String>, String) {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let Ok(json) = serde_json::from_str::<Value>(body) else {
        if let Some(found) = event_stream_error(body) {
            return found;
        }
        return (None, truncate(body.trim()));
    };
    let inner = json.get("error");
    let code = match inner {
        Some(Value::Object(error)) => text(error.get("code")).or_else(|| text(error.get("type"))),
        _ => text(json.get("code")),
    };
    let message = match inner {
        Some(Value::Object(error)) => text(error.get("message")),
        Some(Value::String(message)) => Some(message.clone()),
        _ => None,
    }
    .or_else(|| text(json.get("message")))
    .or_else(|| text(json.get("detail")))
    .unwrap_or_else(|| body.trim().to_owned());
    (code, truncate(&message))
}

/// The error an event-stream body carries: the first event whose data is a JSON object with
/// an error in it. None when the body is no event stream or holds no such event.
fn event_stream_error(body: &str) -> Option<(Option<String>, String)> {
    let mut events = Vec::new();
    let mut decoder = crate::sse::SseDecoder::default();
    decoder.push(body.as_bytes(), &mut events).ok()?;
    // A body cut off by the read limit may lack the blank line that ends its last event.
    decoder.push(b"\n\n", &mut events).ok()?;
    events.iter().find_map(|event| {
        let json: Value = serde_json::from_str(&event.data).ok()?;
        let is_error = json.get("error").is_some_and(|e| !e.is_null())
            || json.get("type").and_then(Value::as_str) == Some("error")
            || event.event.as_deref() == Some("error");
        is_error.then(|| error_fields(&event.data))
    })
}

fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn http_statuses_map_to_variants() {
        let openai_429 =
            r#"{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}"#;
        assert_eq!(
            from_http(429, &headers(&[("retry-after", "7")]), openai_429),
            ProviderError::rate_limited(Some(Duration::from_secs(7)), "slow down")
        );
        let quota = r#"{"error":{"message":"no money","code":"insufficient_quota"}}"#;
        assert!(!from_http(429, &HeaderMap::new(), quota).is_retryable());
        let anthropic_overflow = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert!(matches!(
            from_http(400, &HeaderMap::new(), anthropic_overflow),
            ProviderError::ContextOverflow { .. }
        ));
        assert!(matches!(
            from_http(413, &HeaderMap::new(), "Request Entity Too Large"),
            ProviderError::ContextOverflow { .. }
        ));
        let openai_overflow = r#"{"error":{"message":"too big","code":"context_length_exceeded"}}"#;
        assert!(matches!(
            from_http(400, &HeaderMap::new(), openai_overflow),
            ProviderError::ContextOverflow { .. }
        ));
        assert_eq!(
            from_http(
                529,
                &HeaderMap::new(),
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            ProviderError::server(529, "Overloaded")
        );
        assert_eq!(
            from_http(401, &HeaderMap::new(), r#"{"error":"unauthorized"}"#),
            ProviderError::client(401, "unauthorized")
        );
        assert_eq!(
            from_http(502, &HeaderMap::new(), "<html>bad gateway</html>"),
            ProviderError::server(502, "<html>bad gateway</html>")
        );
    }

    #[test]
    fn retry_after_prefers_milliseconds_and_ignores_dates() {
        let both = headers(&[("retry-after-ms", "250"), ("retry-after", "3")]);
        assert_eq!(retry_after(&both), Some(Duration::from_millis(250)));
        assert_eq!(
            retry_after(&headers(&[("retry-after", "1.5")])),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(&headers(&[(
                "retry-after",
                "Wed, 21 Oct 2015 07:28:00 GMT"
            )])),
            None
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")])), None);
    }

    #[test]
    fn stream_errors_map_by_code() {
        assert!(matches!(
            from_stream(Some("overloaded_error"), "x".into()),
            ProviderError::Server { status: 529, .. }
        ));
        assert!(matches!(
            from_stream(Some("rate_limit_exceeded"), "x".into()),
            ProviderError::RateLimited { .. }
        ));
        assert!(matches!(
            from_stream(Some("invalid_prompt"), "x".into()),
            ProviderError::Client { status: 400, .. }
        ));
        assert!(matches!(
            from_stream(
                None,
                "This model's maximum context length is 8192 tokens".into()
            ),
            ProviderError::ContextOverflow { .. }
        ));
        assert!(matches!(
            from_stream(Some("server_error"), "x".into()),
            ProviderError::Server { status: 500, .. }
        ));
    }

    #[test]
    fn an_error_sent_as_an_event_stream_reads_as_its_message() {
        let anthropic = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
        assert_eq!(
            from_http(529, &HeaderMap::new(), anthropic),
            ProviderError::server(529, "Overloaded")
        );
        // OpenAI style, without `event:` and cut before its blank line.
        let openai = ": keep-alive\n\ndata: {\"error\":{\"message\":\"slow down\",\"code\":\"rate_limit_exceeded\"}}";
        assert_eq!(
            error_fields(openai),
            (Some("rate_limit_exceeded".into()), "slow down".into())
        );
        // Events that are no error: the body text, as before.
        assert_eq!(error_fields("data: [DONE]\n\n").1, "data: [DONE]");
    }

    #[test]
    fn a_rate_limit_without_headers_takes_the_bodys_hint_and_says_it() {
        let wait = |body: &str| match from_http(429, &HeaderMap::new(), body) {
            ProviderError::RateLimited { retry_after, .. } => retry_after,
            other => panic!("{other:?}"),
        };
        let openai = r#"{"error":{"message":"Rate limit reached for gpt-5 on tokens per min. Please try again in 1.898s.","code":"rate_limit_exceeded"}}"#;
        assert_eq!(wait(openai), Some(Duration::from_millis(1898)));
        let millis =
            r#"{"error":{"message":"Please try again in 250ms.","code":"rate_limit_exceeded"}}"#;
        assert_eq!(wait(millis), Some(Duration::from_millis(250)));
        let google = r#"{"error":{"code":429,"message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"20s"}]}}"#;
        assert_eq!(wait(google), Some(Duration::from_secs(20)));
        let field = r#"{"error":{"message":"slow","retry_after":3}}"#;
        assert_eq!(wait(field), Some(Duration::from_secs(3)));
        assert_eq!(wait(r#"{"error":{"message":"slow down"}}"#), None);
        // The header wins over the body.
        let headed = from_http(429, &headers(&[("retry-after", "7")]), openai);
        assert_eq!(headed.retry_after(), Some(Duration::from_secs(7)));
        assert_eq!(
            headed.to_string(),
            "rate limited by the provider (retry after 7 s): Rate limit reached for gpt-5 on tokens per min. Please try again in 1.898s."
        );
        let rounded = ProviderError::rate_limited(Some(Duration::from_millis(1898)), "m");
        assert_eq!(
            rounded.to_string(),
            "rate limited by the provider (retry after 2 s): m"
        );
    }

    #[test]
    fn long_messages_are_truncated() {
        let (_, message) = error_fields(&"x".repeat(5000));
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS + 1);
    }
}

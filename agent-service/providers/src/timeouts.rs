//! The timeouts of a provider's HTTP calls: the settings (`models.providers.<id>.timeouts`)
//! and the per-read idle limit that applies them to a response body. The connect timeout is
//! the HTTP client's; the others are applied per read, because a client-wide read timeout
//! would also cut a reply that streams for longer than it.

use std::time::Duration;

use crate::error::ProviderError;

/// The timeouts of one provider's HTTP calls (`models.providers.<id>.timeouts`). Each one
/// that expires fails the attempt with [`ProviderError::Connection`] naming its setting; the
/// whole call, retries included, is bounded by [`crate::RetryPolicy::deadline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    /// How long connecting (TCP and TLS) may take (`connectSeconds`, default 10 s).
    pub connect_timeout: Duration,
    /// How long the response headers may take once the request is sent (`firstByteSeconds`,
    /// default 60 s): a server that accepts the request and sends nothing fails this soon.
    pub first_byte_timeout: Duration,
    /// How long the body may stay silent between two chunks, the first included
    /// (`idleSeconds`, default 60 s). Streaming APIs send keep-alive events while a model
    /// thinks, so a minute of silence means a hung stream.
    pub idle_timeout: Duration,
}

impl HttpSettings {
    /// Default connect timeout.
    pub const DEFAULT_CONNECT: Duration = Duration::from_secs(10);
    /// Default time to the response headers.
    pub const DEFAULT_FIRST_BYTE: Duration = Duration::from_secs(60);
    /// Default silence allowed between two body chunks.
    pub const DEFAULT_IDLE: Duration = Duration::from_secs(60);
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            connect_timeout: Self::DEFAULT_CONNECT,
            first_byte_timeout: Self::DEFAULT_FIRST_BYTE,
            idle_timeout: Self::DEFAULT_IDLE,
        }
    }
}

/// The idle timeout of one response body, and the setting that configures it (for the message).
pub(crate) struct Idle {
    pub(crate) limit: Duration,
    /// ` (<setting>)` naming the idle setting, or nothing where there is none.
    pub(crate) hint: String,
}

impl Idle {
    /// The next chunk of `response`, or a [`ProviderError::Connection`] naming the idle
    /// setting when none arrives in time.
    pub(crate) async fn chunk(
        &self,
        response: &mut reqwest::Response,
    ) -> Result<Result<Option<bytes::Bytes>, reqwest::Error>, ProviderError> {
        tokio::time::timeout(self.limit, response.chunk())
            .await
            .map_err(|_| {
                ProviderError::connection(format!(
                    "the stream was silent for {}{}",
                    seconds(self.limit),
                    self.hint
                ))
            })
    }
}

/// A duration as people write it: `60 s`, `1.5 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

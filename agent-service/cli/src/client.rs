//! Connecting to agent-service and naming sessions.

use std::time::Duration;

use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use tonic::transport::{Channel, Endpoint};

use crate::error::CliError;

/// The agent-service a client command talks to by default.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:50052";

/// How long a connection attempt may take before the command gives up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An AgentService client.
pub type Client = AgentServiceClient<Channel>;

/// `127.0.0.1:50052` or `http://127.0.0.1:50052` -> an `http://` URL.
pub fn server_url(server: &str) -> String {
    let server = server.trim();
    if server.contains("://") {
        server.to_owned()
    } else {
        format!("http://{server}")
    }
}

/// Connects now (not lazily), so an absent server is reported once, up front.
pub async fn connect(server: &str) -> Result<Client, CliError> {
    let url = server_url(server);
    let connect_error = |detail: String| CliError::Connect {
        server: url.clone(),
        detail,
    };
    let channel = Endpoint::from_shared(url.clone())
        .map_err(|e| connect_error(format!("invalid address: {e}")))?
        .connect_timeout(CONNECT_TIMEOUT)
        .connect()
        .await
        .map_err(|e| connect_error(describe_transport(&e)))?;
    Ok(AgentServiceClient::new(channel))
}

/// The transport error with its causes ("transport error" alone says nothing).
fn describe_transport(error: &tonic::transport::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        // hyper and tonic often wrap an error in one with the same text.
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text.push_str(" (is `openclaw up` running?)");
    text
}

/// Which session a command acts on: the agent ("" for the default) and the
/// key ("" for the agent's main session).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// Agent id; empty means the default agent.
    pub agent: String,
    /// Session key; empty means the agent's main session.
    pub session: String,
}

impl Target {
    /// From optional `--agent` and `--session` flags.
    pub fn new(agent: Option<&str>, session: Option<&str>) -> Self {
        Self {
            agent: agent.unwrap_or_default().trim().to_owned(),
            session: session.unwrap_or_default().trim().to_owned(),
        }
    }

    /// The request field naming this session.
    pub fn session_ref(&self) -> pb::SessionRef {
        pb::SessionRef {
            agent_id: self.agent.clone(),
            target: (!self.session.is_empty())
                .then(|| pb::session_ref::Target::SessionKey(self.session.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_addresses_get_a_scheme() {
        assert_eq!(server_url("127.0.0.1:1"), "http://127.0.0.1:1");
        assert_eq!(server_url(" https://x:1 "), "https://x:1");
    }

    #[test]
    fn empty_flags_mean_the_defaults() {
        let target = Target::new(None, Some(" "));
        assert_eq!(
            target.session_ref(),
            pb::SessionRef {
                agent_id: String::new(),
                target: None
            }
        );
    }
}

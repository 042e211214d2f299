//! Connecting to agent-service and naming sessions: the URL, the bearer token and TLS
//! (`service_kit`'s, as the servers use), the timeouts, and the session-key header a router
//! in front of several replicas routes by.

use std::{
    future::Future,
    ops::{Deref, DerefMut},
    time::Duration,
};

use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use service_kit::{BearerToken, ClientTls};
use tonic::{
    GrpcMethod, Request, Status, Streaming,
    service::{Interceptor, interceptor::InterceptedService},
    transport::{Channel, Endpoint},
};

use crate::{args::ServerArgs, error::CliError};

/// The agent-service a client command talks to by default.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:50052";

/// How long a connection attempt (TCP, then TLS) may take by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a call may take to answer by default: every unary call here answers in well
/// under a second on a healthy service.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a stream may stay silent by default: longer than a run's own limit
/// (`agents.defaults.timeoutSeconds`, 600 s), so only a service that stopped answering is
/// given up on.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(900);

/// Calls whose answer takes as long as a run: they carry no deadline to the server (it
/// would end the run) and are bounded here by silence instead ([`Client::next`],
/// [`Client::long`]).
const LONG_CALLS: [&str; 4] = ["Run", "WatchSession", "GetTranscript", "RunCronJob"];

/// How to reach agent-service: from the command's flags, or [`Connect::plain`].
#[derive(Debug, Clone)]
pub struct Connect {
    url: String,
    token: Option<BearerToken>,
    tls: Option<ClientTls>,
    connect_timeout: Duration,
    call_timeout: Duration,
    idle_timeout: Duration,
}

impl Connect {
    /// `server` without credentials or TLS, with the default timeouts (the services `up`
    /// and `demo` start are on loopback and open).
    pub fn plain(server: &str) -> Self {
        Self {
            url: server_url(server, false),
            token: None,
            tls: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }

    /// From the flags: the token and the TLS files are read now, and every problem is
    /// reported at once (one line each, exit 64).
    pub fn from_args(args: &ServerArgs) -> Result<Self, CliError> {
        let mut problems = Vec::new();
        let token = match (&args.connection.token, &args.connection.token_file) {
            (Some(_), Some(_)) => {
                problems.push(
                    "--token (OPENCLAW_TOKEN) and --token-file (OPENCLAW_TOKEN_FILE): give one \
                     of them"
                        .to_owned(),
                );
                None
            }
            (Some(token), None) => BearerToken::new(&token.0)
                .map_err(|e| problems.push(format!("--token (OPENCLAW_TOKEN): {e}")))
                .ok(),
            (None, Some(path)) => BearerToken::from_file(path)
                .map_err(|e| {
                    problems.push(format!(
                        "--token-file (OPENCLAW_TOKEN_FILE) {}: {e}",
                        path.display()
                    ));
                })
                .ok(),
            (None, None) => None,
        };
        let url = server_url(&args.server, args.connection.tls_ca.is_some());
        let https = url
            .get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"));
        let tls = match (&args.connection.tls_ca, https) {
            (Some(ca), true) => ClientTls::from_files(
                ca,
                args.connection.tls_cert.as_deref(),
                args.connection.tls_key.as_deref(),
                args.connection.tls_server_name.clone(),
            )
            .map_err(|e| {
                problems.push(format!(
                    "TLS to {url} (--tls-ca, --tls-cert, --tls-key): {e}"
                ))
            })
            .ok(),
            (None, true) => {
                problems.push(format!(
                    "--server {url} uses TLS: --tls-ca (OPENCLAW_TLS_CA) must name the CA that \
                     signed its certificate"
                ));
                None
            }
            (_, false) => {
                let given = [
                    ("--tls-ca", args.connection.tls_ca.is_some()),
                    ("--tls-cert", args.connection.tls_cert.is_some()),
                    ("--tls-key", args.connection.tls_key.is_some()),
                    (
                        "--tls-server-name",
                        args.connection.tls_server_name.is_some(),
                    ),
                ];
                let given: Vec<&str> = given
                    .iter()
                    .filter(|(_, set)| *set)
                    .map(|(f, _)| *f)
                    .collect();
                if !given.is_empty() {
                    problems.push(format!(
                        "{} given, but --server {url} is not https://",
                        given.join(", ")
                    ));
                }
                None
            }
        };
        if !problems.is_empty() {
            return Err(CliError::Config(problems.join("\nerror: ")));
        }
        Ok(Self {
            url,
            token,
            tls,
            connect_timeout: Duration::from_secs(args.connection.connect_timeout),
            call_timeout: Duration::from_secs(args.connection.call_timeout),
            idle_timeout: Duration::from_secs(args.connection.idle_timeout),
        })
    }

    /// The URL dialled.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Connects now (not lazily), so an absent server is reported once, up front.
    pub async fn open(&self) -> Result<Client, CliError> {
        let connect_error = |detail: String| CliError::Connect {
            server: self.url.clone(),
            detail,
        };
        let mut endpoint = Endpoint::from_shared(self.url.clone())
            .map_err(|e| connect_error(format!("invalid address: {e}")))?
            .connect_timeout(self.connect_timeout)
            .tcp_nodelay(true);
        if let Some(tls) = &self.tls {
            endpoint = endpoint
                .tls_config(tls.client_config())
                .map_err(|e| connect_error(describe_transport(&e)))?;
        }
        // The TCP connect and the TLS handshake are bounded by the connect timeout; the
        // HTTP/2 preface a server never answers is bounded by the first call's timeout.
        let channel = tokio::time::timeout(self.connect_timeout, endpoint.connect())
            .await
            .map_err(|_| {
                connect_error(format!(
                    "no connection within {} s (--connect-timeout)",
                    self.connect_timeout.as_secs()
                ))
            })?
            .map_err(|e| connect_error(describe_transport(&e)))?;
        let credentials = Credentials {
            token: self.token.clone(),
            call_timeout: self.call_timeout,
        };
        Ok(Client {
            api: AgentServiceClient::with_interceptor(channel, credentials),
            call_timeout: self.call_timeout,
            idle_timeout: self.idle_timeout,
            agents: None,
        })
    }
}

/// Connects to `server` without credentials ([`Connect::plain`]).
pub async fn connect(server: &str) -> Result<Client, CliError> {
    Connect::plain(server).open().await
}

/// What every call carries: the bearer token, and a deadline for the calls that answer at
/// once (sent to the server too, which then stops working on a call nobody waits for).
#[derive(Debug, Clone)]
pub struct Credentials {
    token: Option<BearerToken>,
    call_timeout: Duration,
}

impl Interceptor for Credentials {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(token) = &self.token {
            token.apply(&mut request);
        }
        let long = request
            .extensions()
            .get::<GrpcMethod<'static>>()
            .is_some_and(|m| LONG_CALLS.contains(&m.method()));
        if !long && request.metadata().get("grpc-timeout").is_none() {
            request.set_timeout(self.call_timeout);
        }
        Ok(request)
    }
}

/// The transport an AgentService client speaks over.
pub type Transport = InterceptedService<Channel, Credentials>;

/// An AgentService client with this command's timeouts, and the agents it has looked up to
/// name sessions in full. It dereferences to the generated client.
#[derive(Debug, Clone)]
pub struct Client {
    api: AgentServiceClient<Transport>,
    call_timeout: Duration,
    idle_timeout: Duration,
    /// Agent ids as the service names them, the default first; looked up once.
    agents: Option<Vec<String>>,
}

impl Deref for Client {
    type Target = AgentServiceClient<Transport>;

    fn deref(&self) -> &Self::Target {
        &self.api
    }
}

impl DerefMut for Client {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.api
    }
}

impl Client {
    /// The full key of `target`'s session (`agent:<id>:<rest>`), as the router hashes it and
    /// agent-service checks it: the default agent and the canonical spelling of the agent id
    /// are looked up once (ListAgents, which the router passes without a key).
    pub async fn session_key(&mut self, target: &Target) -> Result<String, CliError> {
        if self.agents.is_none() {
            let listed = self.api.list_agents(pb::ListAgentsRequest {}).await?;
            let mut agents = listed.into_inner().agents;
            // The default first: `agents[0]` below.
            agents.sort_by_key(|a| !a.is_default);
            self.agents = Some(agents.into_iter().map(|a| a.id).collect());
        }
        let agents = self.agents.as_deref().unwrap_or_default();
        let agent = if target.agent.is_empty() {
            agents.first().cloned().unwrap_or_default()
        } else {
            agents
                .iter()
                .find(|id| id.eq_ignore_ascii_case(&target.agent))
                .cloned()
                .unwrap_or_else(|| target.agent.clone())
        };
        agent_runtime::sessions::key::normalize(&agent, &target.session)
            .map(|key| key.as_str().to_owned())
            .map_err(|e| CliError::Status(Status::invalid_argument(e.to_string())))
    }

    /// `message` with the session-key header naming `target`'s session in full.
    pub async fn keyed<T>(&mut self, target: &Target, message: T) -> Result<Request<T>, CliError> {
        let key = self.session_key(target).await?;
        with_session_key(&key, message)
    }

    /// A request about `target`'s session (`message` builds it around the session reference),
    /// with the routing header naming the session.
    pub async fn for_session<T>(
        &mut self,
        target: &Target,
        message: impl FnOnce(Option<pb::SessionRef>) -> T,
    ) -> Result<Request<T>, CliError> {
        self.keyed(target, message(Some(target.session_ref())))
            .await
    }

    /// `message` with the header naming agent `agent`'s main session, as cron job and
    /// allowlist calls carry it (an agent's jobs live with its main session).
    pub async fn main_keyed<T>(&mut self, agent: &str, message: T) -> Result<Request<T>, CliError> {
        self.keyed(&Target::new(Some(agent), None), message).await
    }

    /// Opens a stream: its answer must start within the call timeout.
    pub async fn open<T>(
        &self,
        call: impl Future<Output = Result<tonic::Response<Streaming<T>>, Status>>,
    ) -> Result<Streaming<T>, CliError> {
        let opened = tokio::time::timeout(self.call_timeout, call)
            .await
            .map_err(|_| {
                CliError::Timeout(format!(
                    "agent-service did not answer within {} s (--call-timeout)",
                    self.call_timeout.as_secs()
                ))
            })??;
        Ok(opened.into_inner())
    }

    /// The next message of `stream`, or the end; silence longer than the idle timeout is an
    /// error.
    pub async fn next<T>(&self, stream: &mut Streaming<T>) -> Result<Option<T>, CliError> {
        next_within(self.idle_timeout, stream).await
    }

    /// How long a stream may stay silent (`--idle-timeout`).
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// A call that answers when a run ends (`RunCronJob`): bounded by the idle timeout.
    pub async fn long<T>(
        &self,
        call: impl Future<Output = Result<tonic::Response<T>, Status>>,
    ) -> Result<T, CliError> {
        Ok(self.quiet(call).await?.into_inner())
    }

    async fn quiet<T>(&self, wait: impl Future<Output = Result<T, Status>>) -> Result<T, CliError> {
        within(self.idle_timeout, wait).await
    }
}

/// [`Client::next`] with the idle timeout given, for a loop that lends the client elsewhere
/// while it waits.
pub async fn next_within<T>(
    idle: Duration,
    stream: &mut Streaming<T>,
) -> Result<Option<T>, CliError> {
    within(idle, stream.message()).await
}

async fn within<T>(
    idle: Duration,
    wait: impl Future<Output = Result<T, Status>>,
) -> Result<T, CliError> {
    tokio::time::timeout(idle, wait)
        .await
        .map_err(|_| {
            CliError::Timeout(format!(
                "nothing from agent-service for {} s (--idle-timeout)",
                idle.as_secs()
            ))
        })?
        .map_err(CliError::from)
}

/// `message` with the session-key header set to `key` (a full key).
pub fn with_session_key<T>(key: &str, message: T) -> Result<Request<T>, CliError> {
    let mut request = Request::new(message);
    let value = key.parse().map_err(|_| {
        CliError::Status(Status::invalid_argument(format!(
            "session key {key:?} cannot travel in the {} header (visible ASCII only)",
            service_kit::SESSION_KEY_HEADER
        )))
    })?;
    request
        .metadata_mut()
        .insert(service_kit::SESSION_KEY_HEADER, value);
    Ok(request)
}

/// `127.0.0.1:50052` or `http://127.0.0.1:50052` -> a URL with a scheme: a bare address is
/// `https://` when `tls` (a CA was given), else `http://`.
pub fn server_url(server: &str, tls: bool) -> String {
    let server = server.trim();
    if server.contains("://") {
        server.to_owned()
    } else if tls {
        format!("https://{server}")
    } else {
        format!("http://{server}")
    }
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
        assert_eq!(server_url("127.0.0.1:1", false), "http://127.0.0.1:1");
        assert_eq!(server_url("127.0.0.1:1", true), "https://127.0.0.1:1");
        assert_eq!(server_url(" https://x:1 ", false), "https://x:1");
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

    #[test]
    fn a_key_that_cannot_be_a_header_is_refused_by_name() {
        let error = with_session_key("agent:main:a\nb", ()).err();
        assert!(
            error.is_some_and(|e| e.to_string().contains("x-openclaw-session-key")),
            "a newline is no header value"
        );
        let request = with_session_key("agent:main:x", ()).expect("a header");
        assert_eq!(
            request
                .metadata()
                .get(service_kit::SESSION_KEY_HEADER)
                .and_then(|v| v.to_str().ok()),
            Some("agent:main:x")
        );
    }
}

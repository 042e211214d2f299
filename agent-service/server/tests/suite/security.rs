//! Authentication, TLS, load shedding and deadlines of agent-service over
//! real sockets, and its calls to prompt-service over mTLS with a token
//!.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use agent_runtime::Runtime;
use agent_testkit::{FakeReply, FakeServer, WireFormat};
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use prompt_client::{GrpcPromptSource, PromptError, PromptSource, RetryPolicy};
use service_kit::{
    ClientSecurity, ClientTls, OverloadConfig, ServerSecurity, TokenSet,
    test_pki::{TestCa, write},
};
use tokio::{net::TcpListener, sync::oneshot};
use tonic::{Code, Request, transport::Channel};
use tonic_health::pb::health_check_response::ServingStatus;

use super::calls::{assert_health, health_of};
use super::harness::{binary, runtime_options};
use super::process::{bearer, free_port, refused};
use super::run_events::telegram;

const TOKEN_A: &str = "agent-token-a-0123456789";
const TOKEN_B: &str = "agent-token-b-0123456789";
const PROMPT_TOKEN: &str = "prompt-token-0123456789";

/// agent-service on 127.0.0.1:0 with `config` (stopped on drop).
struct Agent {
    port: u16,
    _dir: tempfile::TempDir,
    _stop: oneshot::Sender<()>,
}

impl Agent {
    async fn start(
        config: agent_server::ServeConfig,
        openclaw_json: &str,
        prompt: Arc<dyn PromptSource>,
    ) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let runtime = Runtime::start(runtime_options(dir.path(), Some(openclaw_json), prompt))
            .expect("runtime");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(agent_server::serve(listener, config, runtime, async {
            let _ = stopped.await;
        }));
        Self {
            port,
            _dir: dir,
            _stop: stop,
        }
    }

    fn url(&self, scheme: &str) -> String {
        format!("{scheme}://127.0.0.1:{}", self.port)
    }
}

/// prompt-service on 127.0.0.1:0 (stopped on drop).
struct Prompt {
    port: u16,
    _stop: oneshot::Sender<()>,
}

impl Prompt {
    async fn start(config: prompt_server::ServeConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(prompt_server::serve(listener, config, async {
            let _ = stopped.await;
        }));
        Self { port, _stop: stop }
    }
}

fn in_process() -> Arc<dyn PromptSource> {
    Arc::new(prompt_client::InProcessPromptSource::new().expect("prompt source"))
}

/// A config whose default agent talks to the fake model server.
async fn with_fake_model() -> (String, agent_testkit::FakeServerHandle) {
    let (base_url, fake) = FakeServer::start(WireFormat::ChatCompletions)
        .await
        .expect("fake server");
    let config = super::harness::config(&base_url, WireFormat::ChatCompletions, "", "");
    (config, fake)
}

async fn connect(url: &str, tls: Option<&ClientTls>) -> Channel {
    let mut endpoint = Channel::from_shared(url.to_owned()).expect("url");
    if let Some(tls) = tls {
        endpoint = endpoint.tls_config(tls.client_config()).expect("tls");
    }
    endpoint
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .expect("connect")
}

fn with_token<T>(message: T, token: Option<&str>) -> Request<T> {
    match token {
        Some(token) => bearer(message, token),
        None => Request::new(message),
    }
}

async fn list_agents(channel: Channel, token: Option<&str>) -> Result<(), tonic::Status> {
    AgentServiceClient::new(channel)
        .list_agents(with_token(pb::ListAgentsRequest {}, token))
        .await
        .map(drop)
}

fn run_request(message: &str, token: Option<&str>) -> Request<pb::RunRequest> {
    with_token(
        pb::RunRequest {
            message: message.into(),
            channel: telegram(),
            ..Default::default()
        },
        token,
    )
}

/// Runs one turn; its final text, or the run's error.
async fn run(channel: Channel, token: Option<&str>, message: &str) -> Result<String, String> {
    let mut stream = AgentServiceClient::new(channel)
        .run(run_request(message, token))
        .await
        .map_err(|s| format!("{:?}: {}", s.code(), s.message()))?
        .into_inner();
    let mut last_error = None;
    while let Some(event) = stream.message().await.map_err(|s| s.to_string())? {
        match event.event {
            Some(pb::run_event::Event::Final(f)) => return Ok(f.text),
            Some(pb::run_event::Event::Error(e)) => last_error = Some(e.message),
            _ => {}
        }
    }
    Err(last_error.unwrap_or_else(|| "no final event".to_owned()))
}

#[tokio::test]
async fn calls_need_one_of_the_tokens_and_health_stays_open() {
    let (config, fake) = with_fake_model().await;
    let agent = Agent::start(
        agent_server::ServeConfig {
            security: ServerSecurity {
                tokens: TokenSet::new(&[TOKEN_A, TOKEN_B]),
                ..ServerSecurity::default()
            },
            ..agent_server::ServeConfig::default()
        },
        &config,
        in_process(),
    )
    .await;
    let channel = connect(&agent.url("http"), None).await;
    let missing = list_agents(channel.clone(), None)
        .await
        .expect_err("no token");
    assert_eq!(missing.code(), Code::Unauthenticated);
    assert_eq!(
        missing.message(),
        "missing credentials: send `authorization: Bearer <token>` metadata"
    );
    let wrong = list_agents(channel.clone(), Some("agent-token-c-0123456789"))
        .await
        .expect_err("wrong token");
    assert_eq!(wrong.code(), Code::Unauthenticated);
    assert_eq!(wrong.message(), "invalid bearer token");
    // A Run without a token never starts: nothing reaches the model.
    let refused = run(channel.clone(), None, "hello")
        .await
        .expect_err("no token");
    assert!(refused.starts_with("Unauthenticated: "), "{refused}");
    assert_eq!(fake.request_count(), 0);
    // Both tokens of a rotation work.
    list_agents(channel.clone(), Some(TOKEN_A))
        .await
        .expect("first token");
    list_agents(channel.clone(), Some(TOKEN_B))
        .await
        .expect("rotated token");
    fake.push(FakeReply::text("Hello back."));
    assert_eq!(
        run(channel.clone(), Some(TOKEN_B), "hello")
            .await
            .as_deref(),
        Ok("Hello back.")
    );
    // Health needs no token, for the server and for the AgentService.
    assert_health(&channel, ServingStatus::Serving, ServingStatus::Serving).await;
}

/// Both services over TLS with client certificates, and a token for each
/// hop: a client → agent-service → prompt-service → a turn answered.
#[tokio::test]
async fn agent_service_calls_prompt_service_over_mtls_with_a_token() {
    let server_ca = TestCa::new("server CA");
    let client_ca = TestCa::new("client CA");
    let prompt = Prompt::start(prompt_server::ServeConfig {
        security: ServerSecurity {
            tokens: TokenSet::new(&[PROMPT_TOKEN]),
            tls: Some(server_ca.server_tls(Some(&client_ca))),
            ..ServerSecurity::default()
        },
        ..prompt_server::ServeConfig::default()
    })
    .await;
    // An IP address: the certificate names 127.0.0.1 as well as localhost.
    let prompt_url = format!("https://127.0.0.1:{}", prompt.port);

    // agent-service's client, built from files as the binary builds it.
    let dir = tempfile::tempdir().expect("tempdir");
    let identity = client_ca.client("agent-service");
    let flags = service_kit::ClientFlags {
        token: None,
        token_file: Some(write(
            dir.path(),
            "prompt-tokens",
            &format!("{PROMPT_TOKEN}\n"),
        )),
        ca: Some(write(dir.path(), "server-ca.pem", &server_ca.cert)),
        cert: Some(write(dir.path(), "agent.pem", &identity.cert)),
        key: Some(write(dir.path(), "agent.key", &identity.key)),
        server_name: None,
    };
    let security = ClientSecurity::resolve(&flags, &prompt_url, "prompt-service", "PROMPT_SERVICE")
        .expect("client settings");
    let source =
        GrpcPromptSource::connect_lazy_with(&prompt_url, RetryPolicy::default(), &security)
            .expect("client");
    assert!(!format!("{source:?}").contains(PROMPT_TOKEN), "{source:?}");

    let (config, fake) = with_fake_model().await;
    let agent = Agent::start(
        agent_server::ServeConfig {
            security: ServerSecurity {
                tokens: TokenSet::new(&[TOKEN_A]),
                tls: Some(server_ca.server_tls(Some(&client_ca))),
                ..ServerSecurity::default()
            },
            ..agent_server::ServeConfig::default()
        },
        &config,
        Arc::new(source),
    )
    .await;
    let caller = client_ca.client("operator");
    let channel = connect(
        &agent.url("https"),
        Some(&server_ca.client_tls(Some(&caller))),
    )
    .await;
    fake.push(FakeReply::text("Rendered over mTLS."));
    assert_eq!(
        run(channel.clone(), Some(TOKEN_A), "hello")
            .await
            .as_deref(),
        Ok("Rendered over mTLS.")
    );
    // The system prompt the model got came from prompt-service.
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]
            .body
            .to_string()
            .contains("working inside OpenClaw"),
        "{}",
        requests[0].body
    );

    // Without the token prompt-service refuses (not retried); with a
    // certificate from another CA the handshake fails and the client keeps
    // trying until its deadline.
    // Refused before any handler reads it, so an empty request will do.
    let request = openclaw_proto::prompt::v1::RenderSystemPromptRequest::default();
    let soon = || std::time::Instant::now() + Duration::from_secs(1);
    let no_token = ClientSecurity {
        token: None,
        ..security.clone()
    };
    let error = GrpcPromptSource::connect_lazy_with(&prompt_url, RetryPolicy::default(), &no_token)
        .expect("client")
        .render(request.clone(), soon())
        .await
        .expect_err("no token");
    assert_eq!(
        error,
        PromptError::Refused(
            "Unauthenticated: missing credentials: send `authorization: Bearer <token>` metadata"
                .into()
        )
    );
    let intruder = TestCa::new("intruder CA").client("agent-service");
    let wrong_cert = ClientSecurity {
        token: security.token.clone(),
        tls: Some(server_ca.client_tls(Some(&intruder))),
    };
    let error =
        GrpcPromptSource::connect_lazy_with(&prompt_url, RetryPolicy::default(), &wrong_cert)
            .expect("client")
            .render(request, soon())
            .await
            .expect_err("wrong certificate");
    assert!(matches!(error, PromptError::Unavailable(_)), "{error:?}");

    // agent-service itself refuses a caller whose certificate another CA signed.
    let refused = Channel::from_shared(agent.url("https"))
        .expect("url")
        .tls_config(server_ca.client_tls(Some(&intruder)).client_config())
        .expect("tls")
        .connect()
        .await;
    let refused = match refused {
        Err(e) => Err(e.to_string()),
        Ok(channel) => list_agents(channel, Some(TOKEN_A))
            .await
            .map_err(|s| s.to_string()),
    };
    assert!(
        refused.is_err(),
        "a foreign client certificate was accepted"
    );
}

#[tokio::test]
async fn past_capacity_streams_are_shed_at_once_and_health_still_answers() {
    let (config, _fake) = with_fake_model().await;
    let agent = Agent::start(
        agent_server::ServeConfig {
            overload: OverloadConfig {
                max_concurrent_requests: 4,
                max_concurrent_streams: 1,
            },
            ..agent_server::ServeConfig::default()
        },
        &config,
        in_process(),
    )
    .await;
    let channel = connect(&agent.url("http"), None).await;
    let mut client = AgentServiceClient::new(channel.clone());
    client
        .create_session(pb::CreateSessionRequest::default())
        .await
        .expect("session");
    // One WatchSession takes the only stream slot and keeps it.
    let watch = client
        .watch_session(pb::WatchSessionRequest { session: None })
        .await
        .expect("watch")
        .into_inner();
    let asked = Instant::now();
    let shed = client
        .watch_session(pb::WatchSessionRequest { session: None })
        .await
        .expect_err("no stream slot left");
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(shed.code(), Code::ResourceExhausted);
    assert_eq!(
        shed.message(),
        "server at capacity: 1 concurrent streams in progress; retry with backoff"
    );
    // Unary calls have their own pool, and health is exempt.
    list_agents(channel.clone(), None)
        .await
        .expect("unary call");
    assert_eq!(health_of(&channel, "").await, ServingStatus::Serving);
    // Closing the stream frees its slot.
    drop(watch);
    let started = Instant::now();
    loop {
        match client
            .watch_session(pb::WatchSessionRequest { session: None })
            .await
        {
            Ok(_) => break,
            Err(status) => {
                assert_eq!(status.code(), Code::ResourceExhausted);
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "slot never freed"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

#[tokio::test]
async fn an_expired_deadline_ends_a_stream_with_deadline_exceeded() {
    let (config, _fake) = with_fake_model().await;
    let agent = Agent::start(agent_server::ServeConfig::default(), &config, in_process()).await;
    let mut client = AgentServiceClient::new(connect(&agent.url("http"), None).await);
    client
        .create_session(pb::CreateSessionRequest::default())
        .await
        .expect("session");
    let mut request = Request::new(pb::WatchSessionRequest { session: None });
    request.set_timeout(Duration::from_millis(300));
    let asked = Instant::now();
    let mut watch = client
        .watch_session(request)
        .await
        .expect("watch")
        .into_inner();
    let ended = loop {
        match watch.message().await {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the stream ended without a status"),
            Err(status) => break status,
        }
    };
    let took = asked.elapsed();
    assert_eq!(ended.code(), Code::DeadlineExceeded, "{ended:?}");
    assert_eq!(
        ended.message(),
        "deadline exceeded: the call ran past its grpc-timeout of 300ms"
    );
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

#[tokio::test]
async fn the_binary_refuses_to_serve_other_hosts_without_a_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stderr = refused(
        binary()
            .args(["--listen", "0.0.0.0:0", "--state-dir"])
            .arg(dir.path()),
    )
    .await;
    assert!(
        stderr.contains(
            "error: refusing to listen on 0.0.0.0:0 without authentication: anyone who can \
             reach it could call every RPC. Set AGENT_SERVICE_TOKENS or \
             AGENT_SERVICE_TOKENS_FILE (--tokens-file)"
        ),
        "{stderr}"
    );
    // Nothing was started: no state was created.
    assert!(
        std::fs::read_dir(dir.path()).expect("dir").next().is_none(),
        "the state dir was touched"
    );
    // Credentials for prompt-service without a prompt-service to use them on.
    let stderr = refused(
        binary()
            .args(["--listen", "127.0.0.1:0", "--state-dir"])
            .arg(dir.path())
            .env("PROMPT_SERVICE_TOKEN", PROMPT_TOKEN),
    )
    .await;
    assert!(
        stderr.contains("but --prompt-service (PROMPT_SERVICE_URL) is not"),
        "{stderr}"
    );
    assert!(!stderr.contains(PROMPT_TOKEN), "{stderr}");
}

#[tokio::test]
async fn healthcheck_probes_a_tls_server_that_requires_tokens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = TestCa::new("test CA");
    let pair = ca.server(&["localhost"]);
    let env = [
        (
            "AGENT_SERVICE_TOKENS_FILE",
            write(dir.path(), "tokens", &format!("{TOKEN_A}\n")),
        ),
        (
            "AGENT_SERVICE_TLS_CERT",
            write(dir.path(), "cert.pem", &pair.cert),
        ),
        (
            "AGENT_SERVICE_TLS_KEY",
            write(dir.path(), "key.pem", &pair.key),
        ),
        (
            "AGENT_SERVICE_TLS_CA",
            write(dir.path(), "ca.pem", &ca.cert),
        ),
    ];
    let listen = format!("127.0.0.1:{}", free_port());
    let mut server = binary()
        .args(["--listen", &listen, "--state-dir"])
        .arg(dir.path().join("state"))
        .env("HOME", dir.path())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .spawn()
        .expect("spawn agent-service");
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = server.try_wait() {
            let mut stderr = String::new();
            if let Some(mut pipe) = server.stderr.take() {
                let _ = tokio::io::AsyncReadExt::read_to_string(&mut pipe, &mut stderr).await;
            }
            panic!("agent-service exited with {status}: {stderr}");
        }
        let status = binary()
            .args(["healthcheck", "--listen", &listen])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .status()
            .await
            .expect("healthcheck");
        if status.success() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "never healthy");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let channel = connect(&format!("https://{listen}"), Some(&ca.client_tls(None))).await;
    list_agents(channel.clone(), Some(TOKEN_A))
        .await
        .expect("with the token");
    assert_eq!(
        list_agents(channel, None)
            .await
            .expect_err("without")
            .code(),
        Code::Unauthenticated
    );
    server.kill().await.expect("kill");
}

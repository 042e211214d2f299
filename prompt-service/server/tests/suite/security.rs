//! Authentication, TLS, load shedding and deadlines over real sockets
//!, and the binary's refusal to serve other hosts unauthenticated.

use std::{
    path::Path,
    process::Stdio,
    time::{Duration, Instant},
};

use openclaw_proto::prompt::v1 as pb;
use prompt_server::ServeConfig;
use service_kit::{
    BearerToken, ClientTls, OverloadConfig, ServerSecurity, TokenSet, error_chain,
    test_pki::{TestCa, write},
};
use tonic::{Code, Request, transport::Channel};
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

use super::harness::Server;

const TOKEN_A: &str = "token-a-0123456789abcdef";
const TOKEN_B: &str = "token-b-0123456789abcdef";
const RENDER: &str = "/openclaw.prompt.v1.PromptService/RenderSystemPrompt";

fn tokens() -> Option<TokenSet> {
    TokenSet::new(&[TOKEN_A, TOKEN_B])
}

/// `http://127.0.0.1:P` → `https://127.0.0.1:P`.
fn https(server: &Server) -> String {
    server.endpoint.replacen("http://", "https://", 1)
}

async fn connect(url: &str, tls: Option<&ClientTls>) -> Result<Channel, String> {
    let mut endpoint = Channel::from_shared(url.to_owned()).map_err(|e| e.to_string())?;
    if let Some(tls) = tls {
        endpoint = endpoint
            .tls_config(tls.client_config())
            .map_err(|e| e.to_string())?;
    }
    endpoint
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .map_err(|e| format!("connect: {}", error_chain(&e)))
}

/// One cheap unary call, with `token` as the bearer token when given.
async fn call(channel: Channel, token: Option<&str>) -> Result<(), tonic::Status> {
    let mut request = Request::new(pb::ResolveProviderContributionRequest {
        provider_id: "openai".into(),
        model_id: "gpt-5.5".into(),
        ..Default::default()
    });
    if let Some(token) = token {
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("ascii"),
        );
    }
    pb::prompt_service_client::PromptServiceClient::new(channel)
        .resolve_provider_contribution(request)
        .await
        .map(drop)
}

/// Connect, then one call: what a client sees, as text (Ok: "OK").
async fn outcome(url: &str, tls: Option<&ClientTls>, token: Option<&str>) -> String {
    match connect(url, tls).await {
        Err(e) => e,
        Ok(channel) => match call(channel, token).await {
            Ok(()) => "OK".to_owned(),
            Err(status) => format!("{:?}: {}", status.code(), status.message()),
        },
    }
}

async fn health(channel: Channel) -> ServingStatus {
    HealthClient::new(channel)
        .check(HealthCheckRequest::default())
        .await
        .expect("health check")
        .into_inner()
        .status()
}

/// A unary RenderSystemPrompt whose request message never comes: the call
/// holds its slot (and runs towards its deadline) until dropped.
fn stalled_render(
    channel: Channel,
    timeout: Option<Duration>,
) -> tokio::task::JoinHandle<tonic::Status> {
    tokio::spawn(async move {
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready().await.expect("ready");
        let mut request = Request::new(tokio_stream::pending::<pb::RenderSystemPromptRequest>());
        if let Some(timeout) = timeout {
            request.set_timeout(timeout);
        }
        let codec = tonic_prost::ProstCodec::<
            pb::RenderSystemPromptRequest,
            pb::RenderSystemPromptResponse,
        >::default();
        match grpc
            .client_streaming(request, http::uri::PathAndQuery::from_static(RENDER), codec)
            .await
        {
            Ok(_) => tonic::Status::ok("answered"),
            Err(status) => status,
        }
    })
}

#[tokio::test]
async fn calls_need_one_of_the_tokens_and_health_stays_open() {
    let server = Server::start_with(ServeConfig {
        security: ServerSecurity {
            tokens: tokens(),
            ..ServerSecurity::default()
        },
        ..ServeConfig::default()
    })
    .await;
    let channel = server.channel().await;

    let missing = call(channel.clone(), None).await.expect_err("no token");
    assert_eq!(missing.code(), Code::Unauthenticated);
    assert_eq!(
        missing.message(),
        "missing credentials: send `authorization: Bearer <token>` metadata"
    );
    let wrong_token = "token-c-0123456789abcdef";
    let wrong = call(channel.clone(), Some(wrong_token))
        .await
        .expect_err("wrong token");
    assert_eq!(wrong.code(), Code::Unauthenticated);
    assert_eq!(wrong.message(), "invalid bearer token");
    // A prefix of a real token is as wrong as any other.
    let prefix = call(channel.clone(), Some(&TOKEN_A[..20]))
        .await
        .expect_err("prefix");
    assert_eq!(prefix.code(), Code::Unauthenticated);
    // Both tokens of a rotation are accepted.
    call(channel.clone(), Some(TOKEN_A))
        .await
        .expect("first token");
    call(channel.clone(), Some(TOKEN_B))
        .await
        .expect("rotated token");
    // The client's own token type sends the same header.
    let mut request = Request::new(pb::ResolveProviderContributionRequest {
        provider_id: "openai".into(),
        model_id: "gpt-5.5".into(),
        ..Default::default()
    });
    BearerToken::new(TOKEN_B)
        .expect("token")
        .apply(&mut request);
    pb::prompt_service_client::PromptServiceClient::new(channel.clone())
        .resolve_provider_contribution(request)
        .await
        .expect("BearerToken");
    // Health needs no token, for the server and for the service.
    assert_eq!(health(channel.clone()).await, ServingStatus::Serving);
    let service = HealthClient::new(channel.clone())
        .check(HealthCheckRequest {
            service: "openclaw.prompt.v1.PromptService".into(),
        })
        .await
        .expect("service health")
        .into_inner();
    assert_eq!(service.status(), ServingStatus::Serving);
    server.stop().await.expect("stop");
}

#[tokio::test]
async fn tls_with_a_ca_generated_in_the_test() {
    let ca = TestCa::new("test CA");
    let server = Server::start_with(ServeConfig {
        security: ServerSecurity {
            tokens: tokens(),
            tls: Some(ca.server_tls(None)),
            ..ServerSecurity::default()
        },
        ..ServeConfig::default()
    })
    .await;
    let url = https(&server);
    assert_eq!(
        outcome(&url, Some(&ca.client_tls(None)), Some(TOKEN_A)).await,
        "OK"
    );
    // TLS alone does not authenticate: the token is still required.
    assert!(
        outcome(&url, Some(&ca.client_tls(None)), None)
            .await
            .starts_with("Unauthenticated: missing credentials"),
    );
    // A client that trusts another CA refuses the server's certificate.
    let other = TestCa::new("other CA");
    let refused = outcome(&url, Some(&other.client_tls(None)), Some(TOKEN_A)).await;
    assert!(refused.starts_with("connect: "), "{refused}");
    assert!(refused.contains("certificate"), "{refused}");
    // Plaintext HTTP/2 to a TLS port gets nowhere.
    assert_ne!(outcome(&server.endpoint, None, Some(TOKEN_A)).await, "OK");
    // Health over TLS, without a token.
    let channel = connect(&url, Some(&ca.client_tls(None)))
        .await
        .expect("connect");
    assert_eq!(health(channel).await, ServingStatus::Serving);
    server.stop().await.expect("stop");
}

#[tokio::test]
async fn mtls_refuses_a_wrong_client_certificate() {
    let server_ca = TestCa::new("server CA");
    let client_ca = TestCa::new("client CA");
    let server = Server::start_with(ServeConfig {
        security: ServerSecurity {
            tls: Some(server_ca.server_tls(Some(&client_ca))),
            ..ServerSecurity::default()
        },
        ..ServeConfig::default()
    })
    .await;
    let url = https(&server);
    // A certificate the client CA signed is enough (no token is configured).
    let agent = client_ca.client("agent-service");
    assert_eq!(
        outcome(&url, Some(&server_ca.client_tls(Some(&agent))), None).await,
        "OK"
    );
    // A certificate from another CA fails the handshake.
    let intruder = TestCa::new("intruder CA").client("agent-service");
    let refused = outcome(&url, Some(&server_ca.client_tls(Some(&intruder))), None).await;
    assert_ne!(refused, "OK");
    assert!(
        !refused.starts_with("Unauthenticated"),
        "refused at the handshake: {refused}"
    );
    // No certificate at all: the handshake completes (health must work),
    // every other call is UNAUTHENTICATED.
    assert_eq!(
        outcome(&url, Some(&server_ca.client_tls(None)), None).await,
        "Unauthenticated: a client certificate is required"
    );
    let channel = connect(&url, Some(&server_ca.client_tls(None)))
        .await
        .expect("connect without a certificate");
    assert_eq!(health(channel).await, ServingStatus::Serving);
    server.stop().await.expect("stop");
}

/// Calls until one is served, every refusal before it being ResourceExhausted (a slot still
/// held), for at most `within`.
async fn until_served(channel: &Channel, within: Duration, what: &str) {
    let started = Instant::now();
    while let Err(status) = call(channel.clone(), None).await {
        assert_eq!(status.code(), Code::ResourceExhausted);
        assert!(started.elapsed() < within, "{what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn past_capacity_calls_are_shed_at_once_and_health_still_answers() {
    let server = Server::start_with(ServeConfig {
        overload: OverloadConfig {
            max_concurrent_requests: 2,
            max_concurrent_streams: 1,
        },
        ..ServeConfig::default()
    })
    .await;
    let channel = server.channel().await;
    let held = [
        stalled_render(channel.clone(), None),
        stalled_render(channel.clone(), None),
    ];
    // Wait until both calls hold their slots.
    let started = Instant::now();
    let shed = loop {
        match call(channel.clone(), None).await {
            Err(status) if status.code() == Code::ResourceExhausted => break status,
            other => {
                assert!(other.is_ok(), "{other:?}");
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "never saturated"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    assert_eq!(
        shed.message(),
        "server at capacity: 2 concurrent requests in progress; retry with backoff"
    );
    // Shed at once, not queued.
    let asked = Instant::now();
    let again = call(channel.clone(), None).await.expect_err("still full");
    assert_eq!(again.code(), Code::ResourceExhausted);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    // Health answers while the server is full, on the same connection and a new one.
    assert_eq!(health(channel.clone()).await, ServingStatus::Serving);
    assert_eq!(health(server.channel().await).await, ServingStatus::Serving);
    // Releasing the held calls frees their slots.
    for task in held {
        task.abort();
    }
    until_served(&channel, Duration::from_secs(10), "slots never freed").await;
    server.stop().await.expect("stop");
}

#[tokio::test]
async fn an_expired_deadline_ends_the_call_with_deadline_exceeded() {
    let server = Server::start_with(ServeConfig {
        request_timeout: Duration::from_secs(1),
        overload: OverloadConfig {
            max_concurrent_requests: 1,
            max_concurrent_streams: 1,
        },
        ..ServeConfig::default()
    })
    .await;
    let channel = server.channel().await;
    // The client's grpc-timeout, on a stream (its headers come at once, so
    // the client's own timer is out of the way): the server ends it.
    let asked = Instant::now();
    let mut request = Request::new(HealthCheckRequest::default());
    request.set_timeout(Duration::from_millis(200));
    let mut watch = HealthClient::new(channel.clone())
        .watch(request)
        .await
        .expect("watch")
        .into_inner();
    let first = watch
        .message()
        .await
        .expect("first update")
        .expect("an update");
    assert_eq!(first.status(), ServingStatus::Serving);
    let ended = watch.message().await.expect_err("ended by the deadline");
    let took = asked.elapsed();
    assert_eq!(ended.code(), Code::DeadlineExceeded, "{ended:?}");
    assert_eq!(
        ended.message(),
        "deadline exceeded: the call ran past its grpc-timeout of 200ms"
    );
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(1),
        "{took:?}"
    );

    // No grpc-timeout: the server's own limit (--request-timeout-secs).
    let asked = Instant::now();
    let status = stalled_render(channel.clone(), None).await.expect("task");
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert_eq!(
        status.message(),
        "deadline exceeded: the call ran past the server's limit of 1s"
    );
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );

    // A unary call past its grpc-timeout: tonic's client gives up on its
    // side as well; either way the server frees the call's only slot.
    let status = stalled_render(channel.clone(), Some(Duration::from_millis(100)))
        .await
        .expect("task");
    assert!(
        matches!(status.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{status:?}"
    );
    until_served(&channel, Duration::from_secs(5), "slot never freed").await;
    server.stop().await.expect("stop");
}

/// A loopback port nobody listens on (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

fn binary() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_prompt-service"));
    command
        .env_clear()
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

#[tokio::test]
async fn the_binary_refuses_to_serve_other_hosts_without_a_token() {
    let output = binary()
        .args(["--listen", "0.0.0.0:0"])
        .output()
        .await
        .expect("run prompt-service");
    assert_eq!(output.status.code(), Some(64));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "error: refusing to listen on 0.0.0.0:0 without authentication: anyone who can \
             reach it could call every RPC. Set PROMPT_SERVICE_TOKENS or \
             PROMPT_SERVICE_TOKENS_FILE (--tokens-file)"
        ),
        "{stderr}"
    );
    // TLS alone authenticates nobody.
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = TestCa::new("test CA");
    let pair = ca.server(&["localhost"]);
    let output = binary()
        .args(["--listen", "0.0.0.0:0", "--tls-cert"])
        .arg(write(dir.path(), "cert.pem", &pair.cert))
        .arg("--tls-key")
        .arg(write(dir.path(), "key.pem", &pair.key))
        .output()
        .await
        .expect("run prompt-service");
    assert_eq!(output.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&output.stderr).contains("refusing to listen"));
    // Bad settings are reported together, naming the flags, never the token.
    let output = binary()
        .args(["--listen", "127.0.0.1:0"])
        .env("PROMPT_SERVICE_TOKENS", "tooshort")
        .env("PROMPT_SERVICE_TLS_CLIENT_CA", "/nowhere/ca.pem")
        .output()
        .await
        .expect("run prompt-service");
    assert_eq!(output.status.code(), Some(64));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("tooshort"), "{stderr}");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            "error: PROMPT_SERVICE_TOKENS / --tokens: token 1: a token has 8 characters; at \
             least 16 are required (for example `openssl rand -hex 32`)",
            "error: --tls-client-ca (PROMPT_SERVICE_TLS_CLIENT_CA) needs --tls-cert and --tls-key",
        ]
    );
}

/// Waits until `healthcheck` (run with `args`) exits 0.
async fn wait_healthy(args: &[&str], env: &[(&str, &Path)], server: &mut tokio::process::Child) {
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = server.try_wait() {
            panic!("prompt-service exited with {status}");
        }
        let mut command = binary();
        command.arg("healthcheck").args(args);
        for (key, value) in env {
            command.env(key, value);
        }
        let status = command.status().await.expect("healthcheck");
        if status.success() {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "never healthy");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn healthcheck_probes_a_tls_server_that_requires_tokens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = TestCa::new("test CA");
    let pair = ca.server(&["localhost"]);
    let cert = write(dir.path(), "cert.pem", &pair.cert);
    let key = write(dir.path(), "key.pem", &pair.key);
    let ca_file = write(dir.path(), "ca.pem", &ca.cert);
    let tokens = write(
        dir.path(),
        "tokens",
        &format!("# newest first\n{TOKEN_B}\n{TOKEN_A}  # old\n"),
    );
    let listen = format!("127.0.0.1:{}", free_port());
    // The settings come from the environment, as in a container: the
    // health check subcommand sees the same ones.
    let env: [(&str, &Path); 4] = [
        ("PROMPT_SERVICE_TOKENS_FILE", &tokens),
        ("PROMPT_SERVICE_TLS_CERT", &cert),
        ("PROMPT_SERVICE_TLS_KEY", &key),
        ("PROMPT_SERVICE_TLS_CA", &ca_file),
    ];
    let mut command = binary();
    command.args(["--listen", &listen]);
    for (k, v) in env {
        command.env(k, v);
    }
    let mut server = command.spawn().expect("spawn prompt-service");
    wait_healthy(&["--listen", &listen], &env, &mut server).await;
    // Without the CA the probe cannot verify the server, and says why.
    let output = binary()
        .args(["healthcheck", "--listen", &listen])
        .env("PROMPT_SERVICE_TLS_CERT", &cert)
        .output()
        .await
        .expect("healthcheck");
    assert_eq!(output.status.code(), Some(64));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("healthcheck needs --tls-ca"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // A client with the file's tokens gets through; without, it does not.
    let url = format!("https://{listen}");
    let tls = ca.client_tls(None);
    assert_eq!(outcome(&url, Some(&tls), Some(TOKEN_A)).await, "OK");
    assert_eq!(outcome(&url, Some(&tls), Some(TOKEN_B)).await, "OK");
    assert_eq!(
        outcome(&url, Some(&tls), Some("token-c-0123456789abcdef")).await,
        "Unauthenticated: invalid bearer token"
    );
    server.kill().await.expect("kill");
}

#[tokio::test]
async fn the_binary_refuses_a_certificate_and_key_that_do_not_match() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = TestCa::new("test CA");
    // Two valid pairs; the certificate of one with the key of the other.
    let first = ca.server(&["localhost"]);
    let second = ca.server(&["localhost"]);
    let cert = write(dir.path(), "cert.pem", &first.cert);
    let key = write(dir.path(), "other-key.pem", &second.key);
    let output = binary()
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .env("PROMPT_SERVICE_TLS_CERT", &cert)
        .env("PROMPT_SERVICE_TLS_KEY", &key)
        .output()
        .await
        .expect("run prompt-service");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(64), "{stderr}");
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [format!(
            "error: TLS: the key in {} does not belong to the certificate in {} (their public \
             keys differ)",
            key.display(),
            cert.display()
        )],
    );
    // Nothing was served: the refusal comes before the port opens.
    assert!(!stderr.contains("listening"), "{stderr}");
}

//! A sandbox on the host network shares the host's loopback: the release binary refuses
//! `sandbox.network: "host"` while its own API answers without a token, naming the key, and
//! accepts it once the API asks for one.

use openclaw_proto::agent::v1 as pb;
use pb::agent_service_client::AgentServiceClient;
use tokio::io::{AsyncBufReadExt, BufReader};
use tonic::transport::Channel;

use super::harness::binary;

const TOKEN: &str = "host-network-token-0123456789";
const HOST_NETWORK: &str =
    r#"{ agents: { defaults: { sandbox: { mode: "non-main", network: "host" } } } }"#;

/// Starts the binary on a free port with `env`; a client once it listens, and the child.
async fn start(
    dir: &std::path::Path,
    env: &[(&str, &str)],
) -> (AgentServiceClient<Channel>, tokio::process::Child) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut child = binary()
        .args(["--listen", &format!("127.0.0.1:{port}"), "--state-dir"])
        .arg(dir.join("state"))
        .arg("--config")
        .arg(dir.join("openclaw.json"))
        .env("HOME", dir)
        .envs(env.iter().copied())
        .spawn()
        .expect("start agent-service");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen = String::new();
    while !seen.contains("agent-service listening") {
        match lines.next_line().await.expect("stderr line") {
            Some(line) => {
                seen.push_str(&line);
                seen.push('\n');
            }
            None => panic!("agent-service ended before it listened:\n{seen}"),
        }
    }
    let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    (AgentServiceClient::new(channel), child)
}

fn with_token<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {TOKEN}").parse().expect("header"),
    );
    request
}

#[tokio::test]
async fn host_network_is_refused_while_the_api_takes_no_token() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("openclaw.json"), HOST_NETWORK).expect("config");
    let (mut client, mut child) = start(dir.path(), &[]).await;
    let status = client
        .list_agents(pb::ListAgentsRequest::default())
        .await
        .expect_err("the config is refused");
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(
        status
            .message()
            .contains("sandbox.network \"host\" (agents.defaults.sandbox.network"),
        "{}",
        status.message()
    );
    assert!(
        status.message().contains("answers without a token"),
        "{}",
        status.message()
    );
    child.kill().await.expect("kill");

    let (mut client, mut child) = start(dir.path(), &[("AGENT_SERVICE_TOKENS", TOKEN)]).await;
    client
        .list_agents(with_token(pb::ListAgentsRequest::default()))
        .await
        .expect("with tokens the config is accepted");
    child.kill().await.expect("kill");
}

/// A listen address already in use is named in the error, with the flag that set it.
#[tokio::test]
async fn an_address_in_use_is_named_with_its_flag() {
    let dir = tempfile::tempdir().expect("dir");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr");
    let output = binary()
        .args(["--listen", &addr.to_string(), "--state-dir"])
        .arg(dir.path().join("state"))
        .arg("--config")
        .arg(dir.path().join("openclaw.json"))
        .env("HOME", dir.path())
        .output()
        .await
        .expect("run agent-service");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("cannot listen on {addr} (--listen)")),
        "{stderr}"
    );
    drop(taken);
}

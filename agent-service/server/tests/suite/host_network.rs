//! A sandbox on the host network shares the host's loopback: the release binary refuses
//! `sandbox.network: "host"` while its own API answers without a token, naming the key, and
//! accepts it once the API asks for one.

use openclaw_proto::agent::v1 as pb;
use pb::agent_service_client::AgentServiceClient;
use tonic::transport::Channel;

use super::harness::binary;
use super::process::{bearer, client_on, free_port, serving, spawn_until};
use super::status::assert_status;

const TOKEN: &str = "host-network-token-0123456789";
const HOST_NETWORK: &str =
    r#"{ agents: { defaults: { sandbox: { mode: "non-main", network: "host" } } } }"#;

/// Starts the binary on a free port with `env`; a client once it listens, and the child.
async fn start(
    dir: &std::path::Path,
    env: &[(&str, &str)],
) -> (AgentServiceClient<Channel>, tokio::process::Child) {
    let port = free_port();
    let child = spawn_until(
        serving(&mut binary(), dir, &format!("127.0.0.1:{port}")).envs(env.iter().copied()),
        "agent-service listening",
    )
    .await;
    (client_on(port).await, child)
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
    assert_status(
        &status,
        tonic::Code::FailedPrecondition,
        &[
            "sandbox.network \"host\" (agents.defaults.sandbox.network",
            "answers without a token",
        ],
    );
    child.kill().await.expect("kill");

    let (mut client, mut child) = start(dir.path(), &[("AGENT_SERVICE_TOKENS", TOKEN)]).await;
    client
        .list_agents(bearer(pb::ListAgentsRequest::default(), TOKEN))
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
    let output = serving(&mut binary(), dir.path(), &addr.to_string())
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

//! Silent connections cannot exhaust the service: each listener holds a bounded number of
//! connections, and one that carries nothing is closed after the idle timeout. A client that
//! was connected keeps being served while the listener is full, and a new client is served as
//! soon as the idle connections have been closed.

use std::sync::Arc;
use std::time::Duration;

use openclaw_proto::agent::v1 as pb;
use tokio::io::AsyncReadExt;

use super::harness::{Service, StartOptions};

/// More than the bound: what a flood of silent connections looks like, scaled down.
const SILENT: usize = 12;

fn limits() -> service_kit::ConnectionLimits {
    service_kit::ConnectionLimits {
        max_connections: 3,
        idle_timeout: Duration::from_millis(400),
    }
}

#[tokio::test]
async fn silent_connections_are_bounded_and_closed_and_clients_are_still_served() {
    let prompt: Arc<dyn prompt_client::PromptSource> =
        Arc::new(prompt_client::InProcessPromptSource::new().expect("prompt source"));
    let options = StartOptions {
        serve_config: agent_server::ServeConfig {
            connections: limits(),
            ..agent_server::ServeConfig::default()
        },
        ..StartOptions::default()
    };
    let service =
        Service::start_with(tempfile::tempdir().expect("tempdir"), None, prompt, options).await;
    let mut existing = service.client().await;
    existing
        .list_agents(pb::ListAgentsRequest::default())
        .await
        .expect("served before the flood");
    let addr = service.endpoint.trim_start_matches("http://").to_owned();
    let mut silent = Vec::new();
    for _ in 0..SILENT {
        silent.push(
            tokio::net::TcpStream::connect(&addr)
                .await
                .expect("connect"),
        );
    }
    // The connection the client holds is served while the listener is full.
    existing
        .list_agents(pb::ListAgentsRequest::default())
        .await
        .expect("served while full");
    // Every silent connection is closed by the service in the end (accepted ones when idle,
    // the rest once a place frees up for them), never held for ever.
    let closing = silent.into_iter().map(|mut stream| async move {
        let mut sink = Vec::new();
        let _ = stream.read_to_end(&mut sink).await;
    });
    tokio::time::timeout(
        Duration::from_secs(30),
        futures_util::future::join_all(closing),
    )
    .await
    .expect("the service closed every silent connection");
    // A new client is served, and so is the one that was there.
    let mut newcomer = service.client().await;
    newcomer
        .list_agents(pb::ListAgentsRequest::default())
        .await
        .expect("a new client is served");
    existing
        .list_agents(pb::ListAgentsRequest::default())
        .await
        .expect("the existing client is still served");
}

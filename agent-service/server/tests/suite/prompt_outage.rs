//! prompt-service down: calls fail fast with UNAVAILABLE (a bounded retry
//! budget, not the caller's deadline), a Run stream ends with an error
//! event, and readiness follows prompt-service while liveness stays up.

use std::{sync::Arc, time::Duration};

use agent_testkit::{FakeServer, WireFormat};
use openclaw_proto::agent::v1 as pb;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

use super::calls::{AGENT_SERVICE, call, health_of};
use super::harness::{PromptService, Service, StartOptions, config};
use super::run_events::telegram;

/// A loopback address nobody listens on (bound, then released).
fn free_addr() -> std::net::SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
}

fn grpc_source(addr: std::net::SocketAddr) -> prompt_client::GrpcPromptSource {
    prompt_client::GrpcPromptSource::connect_lazy(
        &format!("http://{addr}"),
        prompt_client::RetryPolicy {
            initial_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(200),
            ..prompt_client::RetryPolicy::default()
        },
    )
    .expect("client")
}

#[tokio::test]
async fn a_run_against_a_dead_prompt_service_ends_with_an_error_event_long_before_its_deadline() {
    let (base_url, fake) = FakeServer::start(WireFormat::ChatCompletions)
        .await
        .expect("fake");
    let dead: Arc<dyn prompt_client::PromptSource> = Arc::new(grpc_source(free_addr()));
    let dir = tempfile::tempdir().expect("dir");
    // No run timeout in the config: the default is minutes.
    let config = config(&base_url, WireFormat::ChatCompletions, "", "");
    let service = Service::start_full(dir, Some(&config), dead).await;
    let mut request = tonic::Request::new(pb::RunRequest {
        message: "hello?".into(),
        channel: telegram(),
        ..Default::default()
    });
    request.set_timeout(Duration::from_secs(40));
    let mut stream = service.open_run(request).await;
    // Far below the 40 s deadline: the 2 s budget, for the provider
    // contribution and for the prompt, and the rest of the run.
    let error = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(event) = stream.message().await.expect("stream") {
            if let Some(pb::run_event::Event::Error(error)) = event.event {
                return Some(error);
            }
        }
        None
    })
    .await
    .expect("an error event before the deadline")
    .expect("an error event");
    assert_eq!(error.code, "UNAVAILABLE", "{error:?}");
    assert!(error.message.contains("cannot be reached"), "{error:?}");
    assert_eq!(fake.request_count(), 0, "no model call without a prompt");

    // A call without any deadline fails just as fast.
    let status = tokio::time::timeout(
        Duration::from_secs(20),
        service
            .client()
            .await
            .preview_prompt(pb::PreviewPromptRequest {
                session: None,
                channel: None,
            }),
    )
    .await
    .expect("an answer")
    .expect_err("unavailable");
    assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
}

/// Waits until AgentService reports `want`, through the health Watch.
async fn agent_becomes(channel: &tonic::transport::Channel, want: ServingStatus) {
    let mut watch = HealthClient::new(channel.clone())
        .watch(HealthCheckRequest {
            service: AGENT_SERVICE.into(),
        })
        .await
        .expect("watch")
        .into_inner();
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(reply) = watch.message().await.expect("watch stream") {
            if reply.status() == want {
                return;
            }
        }
        panic!("the health stream ended");
    })
    .await
    .unwrap_or_else(|_| panic!("AgentService never became {want:?}"));
}

async fn service_status(service: &Service) -> openclaw_proto::agent::v1::ServiceStatus {
    call!(
        service,
        get_service_status,
        openclaw_proto::agent::v1::GetServiceStatusRequest {}
    )
}

/// Readiness (the AgentService health status, and GetServiceStatus's `ready`) follows
/// prompt-service; liveness stays SERVING throughout.
#[tokio::test]
async fn readiness_follows_prompt_service_and_liveness_stays_up() {
    let addr = free_addr();
    let source = grpc_source(addr);
    let options = StartOptions {
        serve_config: agent_server::ServeConfig {
            prompt_reachability: Some(source.reachability()),
            ..agent_server::ServeConfig::default()
        },
        ..StartOptions::default()
    };
    let dir = tempfile::tempdir().expect("dir");
    let service = Service::start_with(dir, None, Arc::new(source), options).await;
    let channel = service.channel().await;
    // Down from the start.
    agent_becomes(&channel, ServingStatus::NotServing).await;
    assert_eq!(health_of(&channel, "").await, ServingStatus::Serving);
    let status = service_status(&service).await;
    assert!(
        !status.ready && !status.prompt_service_reachable,
        "{status:?}"
    );

    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    let prompt = PromptService::start_on(listener).await;
    agent_becomes(&channel, ServingStatus::Serving).await;
    let status = service_status(&service).await;
    assert!(
        status.ready && status.prompt_service_reachable,
        "{status:?}"
    );
    assert!(
        !status.version.is_empty() && status.started_at_ms > 0,
        "{status:?}"
    );

    drop(prompt);
    agent_becomes(&channel, ServingStatus::NotServing).await;
    assert_eq!(health_of(&channel, "").await, ServingStatus::Serving);

    // Back again, and shutdown still ends it.
    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    let _prompt = PromptService::start_on(listener).await;
    agent_becomes(&channel, ServingStatus::Serving).await;
    service.stop().await;
}

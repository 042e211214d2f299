//! Both transports over real sockets: byte-identical prompts, retries and
//! the deadline (P-3).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed expectation is a test failure"
)]

use std::time::{Duration, Instant};

use openclaw_proto::prompt::v1 as pb;
use prompt_client::{
    GrpcPromptSource, InProcessPromptSource, PromptError, PromptSource, RetryPolicy,
    request_from_input,
};
use prompt_render::fixtures;

async fn start_server(listener: tokio::net::TcpListener) -> tokio::sync::oneshot::Sender<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(prompt_server::serve(
        listener,
        prompt_server::ServeConfig::default(),
        async {
            let _ = stopped.await;
        },
    ));
    stop
}

/// A server on 127.0.0.1:0 (running until the sender is dropped) and a client of it with
/// the default retry policy.
async fn served() -> (tokio::sync::oneshot::Sender<()>, GrpcPromptSource) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let stop = start_server(listener).await;
    let grpc = GrpcPromptSource::connect_lazy(&endpoint, RetryPolicy::default()).unwrap();
    (stop, grpc)
}

fn soon(secs: u64) -> Instant {
    Instant::now() + Duration::from_secs(secs)
}

/// P-3: the gRPC client and the in-process call produce byte-identical
/// prompts (and identical reports), for several session kinds.
#[tokio::test]
async fn grpc_and_in_process_are_byte_identical() {
    let (_stop, grpc) = served().await;
    let local = InProcessPromptSource::new().unwrap();
    for kind in [
        prompt_render::SessionKind::Main,
        prompt_render::SessionKind::Subagent,
        prompt_render::SessionKind::Heartbeat,
    ] {
        let mut input = fixtures::realistic();
        input.session_kind = kind;
        let request = request_from_input(&input);
        let remote = grpc.render(request.clone(), soon(10)).await.unwrap();
        let inproc = local.render(request, soon(10)).await.unwrap();
        assert_eq!(remote, inproc, "{kind:?}");
        assert_eq!(remote.text, prompt_render::render(&input).unwrap().text);
    }
    let contribution = pb::ResolveProviderContributionRequest {
        provider_id: "openai".into(),
        model_id: "gpt-5.5".into(),
        ..Default::default()
    };
    assert_eq!(
        grpc.contribution(contribution.clone(), soon(10))
            .await
            .unwrap(),
        local.contribution(contribution, soon(10)).await.unwrap()
    );
}

/// An address nothing listens on (a port the system handed out, then closed).
fn unused_addr() -> std::net::SocketAddr {
    let reserved = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    reserved.local_addr().unwrap()
}

/// A client of `endpoint` that retries every 20 ms to 100 ms (tests wait less).
fn quick_retrying(endpoint: &str) -> GrpcPromptSource {
    GrpcPromptSource::connect_lazy(
        endpoint,
        RetryPolicy {
            initial_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(100),
            ..RetryPolicy::default()
        },
    )
    .unwrap()
}

/// An unreachable prompt-service is retried until the deadline, then
/// reported as unavailable.
#[tokio::test]
async fn unreachable_service_is_unavailable_after_the_deadline() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let grpc = quick_retrying(&format!("http://127.0.0.1:{port}"));
    let started = Instant::now();
    let err = grpc
        .render(
            request_from_input(&fixtures::realistic()),
            Instant::now() + Duration::from_millis(600),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, PromptError::Unavailable(_)), "{err:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "kept retrying until the deadline"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "gave up at the deadline"
    );
}

/// A service that comes up while the client is retrying is used.
#[tokio::test]
async fn a_late_service_is_reached_by_retrying() {
    let addr = unused_addr();
    let grpc = quick_retrying(&format!("http://{addr}"));
    let call = tokio::spawn(async move {
        grpc.render(request_from_input(&fixtures::realistic()), soon(10))
            .await
    });
    // Let the first attempts fail, then bring the service up on that port.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let _stop = start_server(listener).await;
    let response = call.await.unwrap().expect("reached after retries");
    assert!(response.chars > 1000);
}

/// A refusal (a bad request) is not retried.
#[tokio::test]
async fn refusals_are_not_retried() {
    let (_stop, grpc) = served().await;
    let mut request = request_from_input(&fixtures::realistic());
    request.workspace_dir = "relative".into();
    let err = grpc.render(request, soon(10)).await.unwrap_err();
    assert!(
        matches!(&err, PromptError::Refused(m) if m.contains("workspace_dir")),
        "{err:?}"
    );
}

/// `RenderCodexTurn` over gRPC and in-process give the same params and
/// layers; a bad request is refused with the field named, not retried.
#[tokio::test]
async fn codex_turns_render_the_same_over_both_transports() {
    let (_stop, grpc) = served().await;
    let local = InProcessPromptSource::new().unwrap();
    let request = pb::RenderCodexTurnRequest {
        base: Some(request_from_input(&fixtures::realistic())),
        trigger: pb::CodexTrigger::User as i32,
        model: "gpt-5.5".into(),
        approval_policy: pb::CodexApprovalPolicy::Untrusted as i32,
        sandbox: pb::CodexSandboxMode::ReadOnly as i32,
        input_text: "Hello.".into(),
        ..Default::default()
    };
    let remote = grpc.render_codex(request.clone(), soon(10)).await.unwrap();
    let inproc = local.render_codex(request.clone(), soon(10)).await.unwrap();
    assert_eq!(remote, inproc);
    assert!(
        remote.turn_start_params_json.contains("Hello."),
        "{}",
        remote.turn_start_params_json
    );
    assert!(!remote.layers.is_empty());

    let mut bad = request;
    bad.approval_policy = pb::CodexApprovalPolicy::Unspecified as i32;
    for source in [&grpc as &dyn PromptSource, &local] {
        let err = source
            .render_codex(bad.clone(), soon(10))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, PromptError::Refused(m) if m.contains("approval_policy")),
            "{err:?}"
        );
    }
}

/// A prompt-service that refuses connections is reported unavailable once
/// the retry budget is spent, long before a distant deadline.
#[tokio::test]
async fn a_refusing_service_is_unavailable_after_the_retry_budget_not_the_deadline() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let grpc = GrpcPromptSource::connect_lazy(&endpoint, RetryPolicy::default()).unwrap();
    let call = grpc.render(request_from_input(&fixtures::realistic()), soon(40));
    // Ten seconds is far past the 2 s budget and far before the deadline.
    let err = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("gave up before the deadline")
        .unwrap_err();
    let PromptError::Unavailable(message) = &err else {
        panic!("{err:?}")
    };
    assert!(
        message.starts_with(&format!("{endpoint} cannot be reached: ")),
        "{message}"
    );
}

/// Reachability follows prompt-service's health: false while nothing
/// listens, true once it serves, false again when it stops.
#[tokio::test]
async fn reachability_follows_the_service_coming_and_going() {
    let addr = unused_addr();
    let grpc = quick_retrying(&format!("http://{addr}"));
    let mut reachable = grpc.reachability();
    assert!(!*reachable.borrow());
    let wait = |reachable: &mut tokio::sync::watch::Receiver<bool>, want: bool| {
        let mut reachable = reachable.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(10), reachable.wait_for(|r| *r == want))
                .await
                .unwrap_or_else(|_| panic!("reachability never became {want}"))
                .map(|_| ())
                .expect("watch task alive");
        }
    };
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let stop = start_server(listener).await;
    wait(&mut reachable, true).await;
    stop.send(()).unwrap();
    wait(&mut reachable, false).await;
    // And back.
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let _stop = start_server(listener).await;
    wait(&mut reachable, true).await;
}

/// Two prompt-service instances behind a router, as the health service sees them: the
/// first watch reaches an instance that later drains (NOT_SERVING); any later watch reaches
/// one that serves.
struct TwoInstances {
    watches: std::sync::atomic::AtomicUsize,
    drain: std::sync::Arc<tokio::sync::Notify>,
    reopened: std::sync::Arc<tokio::sync::Notify>,
}

type HealthStream = std::pin::Pin<
    Box<
        dyn tokio_stream::Stream<
                Item = Result<tonic_health::pb::HealthCheckResponse, tonic::Status>,
            > + Send,
    >,
>;

#[tonic::async_trait]
impl tonic_health::pb::health_server::Health for TwoInstances {
    async fn check(
        &self,
        _request: tonic::Request<tonic_health::pb::HealthCheckRequest>,
    ) -> Result<tonic::Response<tonic_health::pb::HealthCheckResponse>, tonic::Status> {
        Ok(tonic::Response::new(
            tonic_health::pb::HealthCheckResponse {
                status: tonic_health::pb::health_check_response::ServingStatus::Serving.into(),
            },
        ))
    }

    type WatchStream = HealthStream;

    async fn watch(
        &self,
        _request: tonic::Request<tonic_health::pb::HealthCheckRequest>,
    ) -> Result<tonic::Response<HealthStream>, tonic::Status> {
        use tonic_health::pb::{HealthCheckResponse, health_check_response::ServingStatus};
        let answer = |status: ServingStatus| {
            Ok(HealthCheckResponse {
                status: status.into(),
            })
        };
        let first = self
            .watches
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
            == 0;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let (drain, reopened) = (self.drain.clone(), self.reopened.clone());
        tokio::spawn(async move {
            let _ = tx.send(answer(ServingStatus::Serving)).await;
            if first {
                drain.notified().await;
                let _ = tx.send(answer(ServingStatus::NotServing)).await;
            } else {
                reopened.notify_one();
            }
            // A live instance keeps the stream open.
            tx.closed().await;
        });
        Ok(tonic::Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }
}

/// Behind a router, one prompt-service instance draining is not prompt-service going away:
/// the client watches again at once, reaches a serving instance, and never reports it
/// unreachable (agent-service's readiness would flap otherwise).
#[tokio::test]
async fn one_instance_draining_behind_a_router_does_not_flap_reachability() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let drain = std::sync::Arc::new(tokio::sync::Notify::new());
    let reopened = std::sync::Arc::new(tokio::sync::Notify::new());
    let health = TwoInstances {
        watches: std::sync::atomic::AtomicUsize::new(0),
        drain: drain.clone(),
        reopened: reopened.clone(),
    };
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(tonic_health::pb::health_server::HealthServer::new(health))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let grpc = quick_retrying(&format!("http://{addr}"));
    let mut reachable = grpc.reachability();
    tokio::time::timeout(Duration::from_secs(10), reachable.wait_for(|r| *r))
        .await
        .expect("reachable within 10 s")
        .expect("watch task alive");
    reachable.borrow_and_update();
    drain.notify_one();
    tokio::time::timeout(Duration::from_secs(10), reopened.notified())
        .await
        .expect("the client watches again");
    assert!(
        !reachable.has_changed().expect("watch task alive"),
        "reachability changed while one instance drained: now {}",
        *reachable.borrow()
    );
    assert!(*reachable.borrow());
}

/// A gateway in front of prompt-service answering for it with its own HTML 503 page (as
/// HAProxy does without gRPC error files): the call is retried like an unreachable service
/// and fails UNAVAILABLE, not as a refusal tonic reports as INTERNAL.
#[tokio::test]
async fn a_gateways_error_page_is_unavailable_and_retried() {
    use std::sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let answered = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&answered);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let counter = Arc::clone(&counter);
            let service = hyper::service::service_fn(move |_request| {
                counter.fetch_add(1, Ordering::SeqCst);
                let page = "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n";
                async move {
                    hyper::Response::builder()
                        .status(503)
                        .header("content-type", "text/html")
                        .body(http_body_util::Full::new(hyper::body::Bytes::from(page)))
                }
            });
            tokio::spawn(
                hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
            );
        }
    });
    let grpc = GrpcPromptSource::connect_lazy(
        &endpoint,
        RetryPolicy {
            initial_backoff: Duration::from_millis(20),
            max_backoff: Duration::from_millis(50),
            give_up_after: Duration::from_millis(300),
        },
    )
    .unwrap();
    let err = grpc
        .render(request_from_input(&fixtures::realistic()), soon(10))
        .await
        .unwrap_err();
    let PromptError::Unavailable(message) = &err else {
        panic!("{err:?}");
    };
    assert!(message.contains("503 Service Unavailable"), "{message}");
    assert!(answered.load(Ordering::SeqCst) > 1, "retried");
}

/// A provider contribution is used again for the same request within its time to live (so
/// here it is answered while prompt-service is down), never for another request, and not
/// after the time to live or with it zero.
#[tokio::test]
async fn contributions_are_kept_for_their_time_to_live_per_request() {
    let request = |model: &str| pb::ResolveProviderContributionRequest {
        provider_id: "openai".into(),
        model_id: model.into(),
        ..Default::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let stop = start_server(listener).await;
    let quick = RetryPolicy {
        initial_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(50),
        give_up_after: Duration::from_millis(300),
    };
    let kept = GrpcPromptSource::connect_lazy(&endpoint, quick)
        .unwrap()
        .with_contribution_ttl(Duration::from_secs(3));
    let shared = kept.clone();
    let never = GrpcPromptSource::connect_lazy(&endpoint, quick)
        .unwrap()
        .with_contribution_ttl(Duration::ZERO);
    let asked = Instant::now();
    let first = kept
        .contribution(request("gpt-5.5"), soon(10))
        .await
        .unwrap();
    assert!(first.contribution.is_some(), "{first:?}");
    never
        .contribution(request("gpt-5.5"), soon(10))
        .await
        .unwrap();
    drop(stop);
    // prompt-service is gone: wait until a fresh request finds it so.
    let gone = Instant::now() + Duration::from_secs(10);
    while never
        .contribution(request("gpt-5.5"), soon(10))
        .await
        .is_ok()
    {
        assert!(
            Instant::now() < gone,
            "prompt-service never stopped answering"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The same request, by this client and its clone: the kept answer (well within the
    // time to live: stopping took about the 300 ms a failed call retries for).
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(
        kept.contribution(request("gpt-5.5"), soon(10))
            .await
            .unwrap(),
        first
    );
    assert_eq!(
        shared
            .contribution(request("gpt-5.5"), soon(10))
            .await
            .unwrap(),
        first
    );
    // Another request is never answered from what was kept.
    let other = kept.contribution(request("gpt-5.4"), soon(10)).await;
    assert!(
        matches!(other, Err(PromptError::Unavailable(_))),
        "{other:?}"
    );
    // Once the time to live has passed, the service is asked again (and is down).
    tokio::time::sleep(Duration::from_millis(3_050).saturating_sub(asked.elapsed())).await;
    let expired = kept.contribution(request("gpt-5.5"), soon(10)).await;
    assert!(
        matches!(expired, Err(PromptError::Unavailable(_))),
        "{expired:?}"
    );
}

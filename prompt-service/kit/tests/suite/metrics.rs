//! The RPC metrics layer and the Prometheus endpoint, over real sockets:
//! a tonic server on 127.0.0.1:0 serving gRPC health behind the same layers
//! as the services, and a scrape of the metrics listener over HTTP.

use service_kit::test_metrics::{request, scrape};
use tonic::{Code, transport::Server};
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
use tower::ServiceBuilder;

/// A histogram with buckets of its own (not in seconds).
const SIZE: &str = "kit_test_size";
/// A gauge moved by a guard.
const OPEN: &str = "kit_test_open";

/// What a service would add to the endpoint.
const SERVICE: service_kit::metrics::Catalog = service_kit::metrics::Catalog {
    describe: || {
        ::metrics::describe_histogram!(SIZE, "Sizes a test service records.");
        ::metrics::describe_gauge!(OPEN, "Things a test service holds open.");
    },
    buckets: &[(SIZE, &[1.0, 4.0, 16.0])],
};

/// The one line of `text` that starts with `prefix`.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(lines.len(), 1, "{prefix} in\n{text}");
    lines[0]
}

#[tokio::test]
async fn rpc_count_latency_and_status_are_scraped_over_http() {
    let metrics = service_kit::test_metrics::serve_on_loopback(&[SERVICE]).await;
    // Installing twice in one process is refused, not silently ignored.
    assert!(matches!(
        service_kit::metrics::serve(
            tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind"),
            &[SERVICE],
        ),
        Err(service_kit::metrics::MetricsError::AlreadyInstalled)
    ));

    let health = service_kit::health_services(&[], false).expect("health");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let layers = ServiceBuilder::new()
        .layer(service_kit::RpcMetricsLayer::new())
        .layer(service_kit::RequestSizeLimitLayer::new(64));
    let server = tokio::spawn(
        Server::builder()
            .layer(layers)
            .add_routes(health.routes)
            .serve_with_incoming(service_kit::incoming(listener)),
    );

    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    let mut client = HealthClient::new(channel);
    for _ in 0..2 {
        client
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .expect("check");
    }
    let unknown = client
        .check(HealthCheckRequest {
            service: "no.such.Service".into(),
        })
        .await
        .expect_err("unknown service");
    assert_eq!(unknown.code(), Code::NotFound);
    let oversize = client
        .check(HealthCheckRequest {
            service: "x".repeat(100),
        })
        .await
        .expect_err("oversize");
    assert_eq!(oversize.code(), Code::ResourceExhausted);

    let text = scrape(metrics).await;
    let check = r#"grpc_service="grpc.health.v1.Health",grpc_method="Check""#;
    let ok = format!(r#"{{{check},grpc_code="OK"}}"#);
    assert!(
        line(&text, &format!("grpc_server_handled_total{ok}")).ends_with(" 2"),
        "{text}"
    );
    assert!(
        line(
            &text,
            &format!(r#"grpc_server_handled_total{{{check},grpc_code="NOT_FOUND"}}"#)
        )
        .ends_with(" 1")
    );
    assert!(
        line(
            &text,
            &format!(r#"grpc_server_handled_total{{{check},grpc_code="RESOURCE_EXHAUSTED"}}"#)
        )
        .ends_with(" 1")
    );
    assert!(line(&text, &format!("grpc_server_handling_seconds_count{ok}")).ends_with(" 2"));
    assert!(
        line(
            &text,
            &format!(r#"grpc_server_handling_seconds_bucket{{{check},grpc_code="OK",le="+Inf"}}"#)
        )
        .ends_with(" 2")
    );
    assert!(line(&text, &format!("grpc_server_in_flight{{{check}}}")).ends_with(" 0"));
    assert!(
        text.contains("# HELP grpc_server_handled_total gRPC calls completed"),
        "{text}"
    );
    assert!(
        text.contains("# TYPE grpc_server_handling_seconds histogram"),
        "{text}"
    );

    // A path no proto defines is folded into one series.
    let raw = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    let mut grpc = tonic::client::Grpc::new(raw);
    grpc.ready().await.expect("ready");
    let made_up = grpc
        .unary::<_, (), _>(
            tonic::Request::new(()),
            http::uri::PathAndQuery::from_static("/made.up.Service/Random"),
            tonic_prost::ProstCodec::<(), ()>::default(),
        )
        .await
        .expect_err("unimplemented");
    assert_eq!(made_up.code(), Code::Unimplemented);
    let text = scrape(metrics).await;
    assert!(line(&text, r#"grpc_server_handled_total{grpc_service="unknown",grpc_method="unknown",grpc_code="UNIMPLEMENTED"}"#).ends_with(" 1"));
    assert!(!text.contains("made.up"), "{text}");

    // A service's catalog adds its HELP lines and its own buckets; a gauge
    // guard counts while it lives.
    ::metrics::histogram!(SIZE).record(3.0);
    let guard = service_kit::metrics::GaugeGuard::new(OPEN);
    let text = scrape(metrics).await;
    assert!(
        line(&text, &format!("{SIZE}_bucket{{le=\"4\"}}")).ends_with(" 1"),
        "{text}"
    );
    assert!(
        text.contains(&format!("# HELP {SIZE} Sizes a test service records.")),
        "{text}"
    );
    assert!(line(&text, &format!("{OPEN} ")).ends_with(" 1"), "{text}");
    drop(guard);
    assert!(line(&scrape(metrics).await, &format!("{OPEN} ")).ends_with(" 0"));

    // Only `GET /metrics` is served: any other path is 404 (with no
    // metrics in it), another method on `/metrics` 405 naming GET.
    for path in ["/", "/metric", "/metrics/", "/other", "/metrics?x=1"] {
        let (head, body) = request(metrics, "GET", path).await;
        if path == "/metrics?x=1" {
            assert!(head.starts_with("HTTP/1.1 200 OK"), "{path}: {head}");
            continue;
        }
        assert!(head.starts_with("HTTP/1.1 404 Not Found"), "{path}: {head}");
        assert!(body.contains("/metrics"), "{path}: {body}");
        assert!(!body.contains("# TYPE"), "{path}: {body}");
    }
    for method in ["POST", "PUT", "DELETE", "HEAD"] {
        let (head, body) = request(metrics, method, "/metrics").await;
        assert!(
            head.starts_with("HTTP/1.1 405 Method Not Allowed"),
            "{method}: {head}"
        );
        assert!(head.to_ascii_lowercase().contains("allow: get"), "{head}");
        assert!(!body.contains("# TYPE"), "{method}: {body}");
    }
    server.abort();
}

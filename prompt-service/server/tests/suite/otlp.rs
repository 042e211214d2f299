//! OTLP trace export: the real `prompt-service` binary, started with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a fake collector on loopback,
//! exports the request span of a call it served, with the method and the
//! session key, and flushes it when stopped with SIGTERM.

use std::{
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{Router, body::Bytes, extract::State, http::HeaderMap, routing::post};
use openclaw_proto::prompt::v1::{
    RenderSystemPromptRequest, prompt_service_client::PromptServiceClient,
};
use opentelemetry_proto::tonic::{
    collector::trace::v1::ExportTraceServiceRequest, common::v1::any_value::Value,
};
use prost::Message as _;

/// One export request: its content type and body.
type Export = (Option<String>, Bytes);

#[derive(Default, Clone)]
struct Received(Arc<Mutex<Vec<Export>>>);

async fn collect(State(received): State<Received>, headers: HeaderMap, body: Bytes) -> Vec<u8> {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    received.0.lock().unwrap().push((content_type, body));
    // An empty ExportTraceServiceResponse: everything accepted.
    Vec::new()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn string_attr(
    attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<String> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            Value::StringValue(s) => Some(s.clone()),
            _ => None,
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_exports_request_spans_when_the_otlp_endpoint_is_set() {
    let received = Received::default();
    let collector = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let collector_addr = collector.local_addr().unwrap();
    let app = Router::new()
        .route("/v1/traces", post(collect))
        .with_state(received.clone());
    tokio::spawn(async move { axum::serve(collector, app).await });

    let listen = format!("127.0.0.1:{}", free_port());
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_prompt-service"))
        .args(["--listen", &listen])
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://{collector_addr}"),
        )
        .env("OTEL_SERVICE_NAME", "prompt-service-under-test")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn prompt-service");

    let endpoint = format!("http://{listen}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut client = loop {
        if let Ok(client) = PromptServiceClient::connect(endpoint.clone()).await {
            break client;
        }
        assert!(Instant::now() < deadline, "prompt-service did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut request = tonic::Request::new(RenderSystemPromptRequest {
        workspace_dir: "/work/ws".into(),
        ..Default::default()
    });
    request.metadata_mut().insert(
        "x-openclaw-session-key",
        "agent:main:otlp-test".parse().unwrap(),
    );
    client.render_system_prompt(request).await.expect("render");

    // SIGTERM: the server drains, then flushes the batched spans before exiting.
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id().unwrap()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("exit after SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");

    let bodies = received.0.lock().unwrap().clone();
    assert!(!bodies.is_empty(), "the collector received no export");
    let mut found = None;
    for (content_type, body) in &bodies {
        assert_eq!(content_type.as_deref(), Some("application/x-protobuf"));
        let export = ExportTraceServiceRequest::decode(body.as_ref()).expect("OTLP protobuf");
        for resource in &export.resource_spans {
            let service = resource
                .resource
                .as_ref()
                .and_then(|r| string_attr(&r.attributes, "service.name"));
            for scope in &resource.scope_spans {
                for span in &scope.spans {
                    if string_attr(&span.attributes, "method").as_deref()
                        == Some("/openclaw.prompt.v1.PromptService/RenderSystemPrompt")
                    {
                        found = Some((service.clone(), span.name.clone(), span.attributes.clone()));
                    }
                }
            }
        }
    }
    let (service, name, attributes) = found.expect("the RenderSystemPrompt request span");
    assert_eq!(service.as_deref(), Some("prompt-service-under-test"));
    assert_eq!(name, "grpc");
    assert_eq!(
        string_attr(&attributes, "session_key").as_deref(),
        Some("agent:main:otlp-test")
    );
}

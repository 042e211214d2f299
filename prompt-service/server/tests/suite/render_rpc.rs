//! RenderSystemPrompt over a real socket: happy path, health, reflection,
//! the CLI preview's equality with the RPC, and every bad-input rule.

use openclaw_proto::prompt::v1 as pb;
use tonic::Code;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

use prompt_server::ServeConfig;

use super::harness::Server;

const EXAMPLE: &str = include_str!("../../examples/render-request.json5");

fn example() -> pb::RenderSystemPromptRequest {
    prompt_server::parse_request(EXAMPLE).expect("example parses")
}

async fn status_of(server: &Server, req: pb::RenderSystemPromptRequest) -> tonic::Status {
    match server.client().await.render_system_prompt(req).await {
        Ok(_) => panic!("expected an error"),
        Err(status) => status,
    }
}

/// Sends `req`, which must be refused with InvalidArgument; the status message.
async fn invalid_message(server: &Server, req: pb::RenderSystemPromptRequest) -> String {
    let status = status_of(server, req).await;
    assert_eq!(status.code(), Code::InvalidArgument, "{}", status.message());
    status.message().to_owned()
}

/// Sends the example changed by `change` to a fresh server; the message of the
/// InvalidArgument it must be refused with.
async fn invalid_argument(change: impl FnOnce(&mut pb::RenderSystemPromptRequest)) -> String {
    let server = Server::start().await;
    let mut req = example();
    change(&mut req);
    invalid_message(&server, req).await
}

#[tokio::test]
async fn health_reports_serving_for_the_server_and_the_service() {
    let server = Server::start().await;
    let mut health = HealthClient::new(server.channel().await);
    for service in ["", "openclaw.prompt.v1.PromptService"] {
        let reply = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect("check");
        assert_eq!(
            reply.into_inner().status(),
            ServingStatus::Serving,
            "{service:?}"
        );
    }
}

/// Reflection lists what this server serves and nothing else: no
/// AgentService, and the bench Echo only when it is turned on.
#[tokio::test]
async fn reflection_lists_only_the_served_services() {
    let base = [
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
        "openclaw.prompt.v1.PromptService",
    ];
    let listed = |names: &[&str]| service_kit::ListedServices {
        v1: names.iter().map(|n| (*n).to_owned()).collect(),
        v1alpha: names.iter().map(|n| (*n).to_owned()).collect(),
    };
    let server = Server::start().await;
    let served = service_kit::listed_services(server.channel().await)
        .await
        .expect("reflection");
    assert_eq!(served, listed(&base));
    let server = Server::start_with(ServeConfig {
        bench_echo: true,
        ..ServeConfig::default()
    })
    .await;
    let mut with_echo = base.to_vec();
    with_echo.insert(3, "openclaw.bench.v1.Echo");
    let served = service_kit::listed_services(server.channel().await)
        .await
        .expect("reflection");
    assert_eq!(served, listed(&with_echo));
}

/// P-3: the preview prints exactly what the RPC returns.
#[tokio::test]
async fn render_over_grpc_matches_the_cli_preview() {
    let server = Server::start().await;
    let reply = server
        .client()
        .await
        .render_system_prompt(example())
        .await
        .expect("render")
        .into_inner();
    let preview =
        prompt_server::preview(EXAMPLE, prompt_server::PreviewFormat::Text).expect("preview");
    assert_eq!(reply.text, preview);
    let json = prompt_server::preview(EXAMPLE, prompt_server::PreviewFormat::Json).expect("json");
    assert_eq!(
        json,
        prompt_server::response_json(&reply).expect("json of reply")
    );
    assert_eq!(reply.resolved_mode(), pb::PromptMode::Full);
    assert!(reply.text.contains("## SOUL.md"));
    assert!(
        reply
            .text
            .contains("[missing file: expected at /home/ada/.openclaw/workspace/IDENTITY.md]")
    );
    assert_eq!(
        &reply.text[reply.boundary_offset as usize..][..reply.boundary_marker.len()],
        reply.boundary_marker
    );
    let skills = reply.skills.expect("skills report");
    assert_eq!(skills.entries.len(), 1);
    assert!(skills.entries[0].version.starts_with("sha256:"));
}

/// A session's turns share their stable inputs: from the second turn on the
/// server recognises them by their bytes and decodes only the turn fields.
/// Every reply must still be exactly the plain render of its own request,
/// a bad turn field on a recognised request is refused naming the field, and
/// bytes that are not a request are refused as invalid.
#[tokio::test]
async fn turns_sharing_stable_inputs_render_exactly_as_fresh_requests() {
    use prost::Message;
    let server = Server::start().await;
    let mut client = server.client().await;
    let first = example();
    let mut turns = vec![first.clone()];
    for (i, channel) in ["discord", "slack", "webchat"].into_iter().enumerate() {
        let mut turn = first.clone();
        turn.channel.get_or_insert_with(Default::default).name = channel.into();
        turn.extra_system_prompt = format!("Turn {i} context.");
        turn.runtime.get_or_insert_with(Default::default).host = format!("host-{i}");
        turn.think_level = pb::ThinkLevel::High as i32;
        turns.push(turn);
    }
    // A stable change in between, then the first stable inputs again.
    let mut other = first.clone();
    other
        .workspace_notes
        .push("A note that changes the stable prefix.".into());
    turns.push(other);
    turns.push(first.clone());
    for (i, turn) in turns.into_iter().enumerate() {
        let want = prompt_server::render_request(turn.clone()).expect("renders");
        let got = client
            .render_system_prompt(turn)
            .await
            .expect("render")
            .into_inner();
        assert!(
            got.encode_to_vec() == want.encode_to_vec(),
            "turn {i}: the reply differs from the plain render"
        );
    }

    let mut bad = first.clone();
    bad.reasoning_level = 42;
    let message = invalid_message(&server, bad).await;
    assert!(message.contains("reasoning_level"), "{message}");

    // A turn kind out of range is named, on a cached prefix as on a cold one.
    let mut bad = first.clone();
    bad.turn_kind = 9;
    let message = invalid_message(&server, bad).await;
    assert!(
        message.contains("turn_kind") && message.contains("unknown enum value 9"),
        "{message}"
    );

    // Bytes that are not a RenderSystemPromptRequest (a field 1 whose
    // length runs past the end).
    let mut grpc = tonic::client::Grpc::new(server.channel().await);
    grpc.ready().await.expect("ready");
    let status = grpc
        .unary::<_, pb::RenderSystemPromptResponse, _>(
            tonic::Request::new(RawRequest(vec![0x0a, 0x7f, 0x01])),
            tonic::codegen::http::uri::PathAndQuery::from_static(
                "/openclaw.prompt.v1.PromptService/RenderSystemPrompt",
            ),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .expect_err("refused");
    assert_eq!(status.code(), Code::InvalidArgument, "{}", status.message());
    assert!(
        status
            .message()
            .contains("not a valid RenderSystemPromptRequest")
    );
}

/// A message whose encoding is the given bytes, to send malformed requests.
#[derive(Clone, PartialEq, Default)]
struct RawRequest(Vec<u8>);

impl std::fmt::Debug for RawRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawRequest({} bytes)", self.0.len())
    }
}

impl prost::Message for RawRequest {
    fn encode_raw(&self, buf: &mut impl prost::bytes::BufMut) {
        buf.put_slice(&self.0);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: prost::encoding::WireType,
        buf: &mut impl prost::bytes::Buf,
        ctx: prost::encoding::DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        prost::encoding::skip_field(wire_type, tag, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

#[tokio::test]
async fn gzip_requests_are_accepted() {
    let server = Server::start().await;
    let mut client = server
        .client()
        .await
        .send_compressed(tonic::codec::CompressionEncoding::Gzip)
        .accept_compressed(tonic::codec::CompressionEncoding::Gzip);
    let reply = client
        .render_system_prompt(example())
        .await
        .expect("render");
    assert!(reply.into_inner().chars > 1000);
}

/// Responses go uncompressed unless the server is told to gzip them, even to a
/// client that accepts gzip; told to, both the render route and the generated
/// routes gzip.
#[tokio::test]
async fn responses_are_gzipped_only_when_the_server_is_told_to() {
    for compress_responses in [false, true] {
        let server = Server::start_with(ServeConfig {
            compress_responses,
            ..ServeConfig::default()
        })
        .await;
        let mut client = server
            .client()
            .await
            .accept_compressed(tonic::codec::CompressionEncoding::Gzip);
        let render = client
            .render_system_prompt(example())
            .await
            .expect("render");
        let resolve = client
            .resolve_prompt_config(pb::ResolvePromptConfigRequest {
                config_json5: "{}".into(),
                ..Default::default()
            })
            .await
            .expect("resolve");
        let health = tonic_health::pb::health_client::HealthClient::new(server.channel().await)
            .accept_compressed(tonic::codec::CompressionEncoding::Gzip)
            .check(tonic_health::pb::HealthCheckRequest::default())
            .await
            .expect("health");
        let expected = compress_responses.then_some("gzip");
        for (method, metadata) in [
            ("render", render.metadata()),
            ("resolve", resolve.metadata()),
            ("health", health.metadata()),
        ] {
            assert_eq!(
                metadata.get("grpc-encoding").and_then(|v| v.to_str().ok()),
                expected,
                "{method}, compress_responses: {compress_responses}"
            );
        }
        assert!(render.into_inner().chars > 1000);
    }
}

#[tokio::test]
async fn unknown_mode_is_invalid_argument() {
    let message = invalid_argument(|req| req.prompt_mode = 42).await;
    assert!(message.starts_with("prompt_mode:"), "{message}");
}

#[tokio::test]
async fn invalid_timezone_is_invalid_argument() {
    let message = invalid_argument(|req| {
        req.user_time = Some(pb::UserTime {
            timezone: "Europe/Atlantis".into(),
            time_format: 0,
        });
    })
    .await;
    assert!(message.contains("user_time.timezone"), "{message}");
}

#[tokio::test]
async fn relative_workspace_is_invalid_argument() {
    let message = invalid_argument(|req| req.workspace_dir = "workspace".into()).await;
    assert!(message.starts_with("workspace_dir:"), "{message}");
}

#[tokio::test]
async fn missing_workspace_is_invalid_argument() {
    let message = invalid_argument(|req| req.workspace_dir.clear()).await;
    assert_eq!(message, "workspace_dir: is required");
}

#[tokio::test]
async fn context_file_outside_the_workspace_is_invalid_argument() {
    let message = invalid_argument(|req| {
        req.context_files.push(pb::ContextFile {
            path: "/etc/shadow".into(),
            content: "x".into(),
            missing: false,
        });
    })
    .await;
    assert!(message.starts_with("context_files[5].path:"), "{message}");
    assert!(message.contains("outside the workspace"), "{message}");
}

#[tokio::test]
async fn duplicate_tool_names_are_invalid_argument() {
    let message = invalid_argument(|req| {
        req.tools.push(pb::Tool {
            name: "Read".into(),
            ..Default::default()
        });
    })
    .await;
    assert!(message.starts_with("tools[6].name:"), "{message}");
}

#[tokio::test]
async fn oversized_request_is_resource_exhausted() {
    let server = Server::start_with(prompt_server::ServeConfig {
        max_request_bytes: 64 * 1024,
        ..Default::default()
    })
    .await;
    let mut req = example();
    req.context_files.push(pb::ContextFile {
        path: "big.md".into(),
        content: "x".repeat(100 * 1024),
        missing: false,
    });
    let status = status_of(&server, req).await;
    assert_eq!(
        status.code(),
        Code::ResourceExhausted,
        "{}",
        status.message()
    );
    assert!(
        status.message().contains("limit is 65536 bytes"),
        "{}",
        status.message()
    );
    // The server is still healthy and serves normal requests afterwards.
    let ok = server.client().await.render_system_prompt(example()).await;
    assert!(ok.is_ok());
}

#[tokio::test]
async fn shutdown_returns_cleanly() {
    let server = Server::start().await;
    let _ = server
        .client()
        .await
        .render_system_prompt(example())
        .await
        .expect("render");
    server
        .stop()
        .await
        .expect("serve returns Ok after the shutdown signal");
}

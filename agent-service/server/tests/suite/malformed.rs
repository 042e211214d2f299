//! A request body that is not the method's message answers INVALID_ARGUMENT
//! on every RPC of both services (and on gRPC health), never INTERNAL. The
//! RPCs come from the descriptor set, so a new one is covered without
//! touching this test.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use prost::Message as _;
use tonic::{Code, Status, transport::Channel};
use tower::ServiceExt;

use super::harness::{PromptService, Service};

/// Bodies no request message can be read from, each with what is wrong.
fn garbage() -> Vec<(&'static str, Vec<u8>)> {
    let framed = |message: &[u8]| {
        let mut body = vec![0];
        body.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
        body.extend_from_slice(message);
        body
    };
    vec![
        // Field 1 with wire type 7, which does not exist.
        ("invalid wire type", framed(&[0x0f, 0x01, 0x02])),
        // Field 1, length-delimited, 127 bytes announced, 1 sent.
        ("cut field", framed(&[0x0a, 0x7f, b'x'])),
        (
            "varint overflow",
            framed(&[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ]),
        ),
        (
            "no gRPC frame",
            b"{\"json\": \"instead of protobuf\"}".to_vec(),
        ),
        (
            "compressed flag without grpc-encoding",
            vec![1, 0, 0, 0, 1, 0],
        ),
        (
            "body ends inside the message",
            vec![0, 0, 0, 0, 100, 1, 2, 3],
        ),
        ("no message at all", Vec::new()),
    ]
}

/// `/package.Service/Method` of every RPC of the agent and prompt services.
fn rpcs(package: &str) -> Vec<String> {
    let set = prost_types::FileDescriptorSet::decode(openclaw_proto::FILE_DESCRIPTOR_SET)
        .expect("descriptor set");
    let mut paths = Vec::new();
    for file in set.file.iter().filter(|f| f.package() == package) {
        for service in &file.service {
            for method in &service.method {
                paths.push(format!("/{package}.{}/{}", service.name(), method.name()));
            }
        }
    }
    paths
}

/// Sends `body` as the raw HTTP/2 body of a gRPC call to `path`.
async fn call_raw(channel: &Channel, path: &str, body: Vec<u8>) -> Status {
    let request = http::Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(tonic::body::Body::new(Full::new(Bytes::from(body))))
        .expect("request");
    let response = channel.clone().oneshot(request).await.expect("response");
    if let Some(status) = Status::from_header_map(response.headers()) {
        return status;
    }
    let collected = response.into_body().collect().await.expect("body");
    let trailers = collected.trailers().cloned().unwrap_or_default();
    Status::from_header_map(&trailers).expect("grpc-status in the trailers")
}

async fn assert_refused(channel: &Channel, paths: &[String]) {
    let mut wrong = Vec::new();
    for path in paths {
        for (what, body) in garbage() {
            let status = call_raw(channel, path, body).await;
            if status.code() != Code::InvalidArgument {
                wrong.push(format!(
                    "{path} ({what}): {:?} {}",
                    status.code(),
                    status.message()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn garbage_bodies_get_invalid_argument_on_every_rpc_of_both_services() {
    let agent_rpcs = rpcs("openclaw.agent.v1");
    let prompt_rpcs = rpcs("openclaw.prompt.v1");
    assert!(agent_rpcs.len() >= 14 && prompt_rpcs.len() >= 4);
    let health = ["/grpc.health.v1.Health/Check".to_owned()];

    let prompt = PromptService::start().await;
    let service =
        Service::start_full(tempfile::tempdir().expect("dir"), None, prompt.client()).await;
    let agent = service.channel().await;
    assert_refused(&agent, &agent_rpcs).await;
    assert_refused(&agent, &health).await;

    let prompt_channel = Channel::from_shared(prompt.endpoint.clone())
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    assert_refused(&prompt_channel, &prompt_rpcs).await;
    assert_refused(&prompt_channel, &health).await;

    // The message names the type the method expects and what was wrong.
    let status = call_raw(
        &agent,
        "/openclaw.agent.v1.AgentService/Send",
        garbage()[0].1.clone(),
    )
    .await;
    assert!(
        status
            .message()
            .starts_with("the request body is not a valid openclaw.agent.v1.SendRequest message: "),
        "{}",
        status.message()
    );
    // A well-formed request still reaches its handler, whose own answer
    // passes unchanged.
    let status = call_raw(
        &agent,
        "/openclaw.agent.v1.AgentService/GetSession",
        vec![0, 0, 0, 0, 0],
    )
    .await;
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
}

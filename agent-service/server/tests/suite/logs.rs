//! Log levels of failed calls: a caller's own mistakes (a bad field, an
//! unknown session or health service name, its deadline) are not logged at
//! ERROR; ERROR is for faults of the server.

use std::time::Duration;

use openclaw_proto::agent::v1 as pb;
use tonic::Code;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
use tracing_subscriber::prelude::*;

use super::captured_logs::Captured;
use super::harness::Service;
use super::run_events::session_key;

/// The (level, code) of every "call failed" line.
fn failures(lines: &[serde_json::Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter(|l| l["fields"]["message"] == "call failed")
        .map(|l| {
            (
                l["level"].as_str().unwrap_or_default().to_owned(),
                l["fields"]["grpc_code"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

// A current-thread runtime (the default): the server's tasks run on this
// thread, where the capturing subscriber is the default.
#[tokio::test]
async fn a_callers_mistakes_are_not_logged_as_errors() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::new("info"))
        .with(
            tracing_subscriber::fmt::layer()
                .json()
                .with_writer(captured.clone()),
        );
    let _default = tracing::subscriber::set_default(subscriber);
    let service = Service::start(None).await;
    let mut client = service.client().await;

    let unknown = pb::SessionRef {
        agent_id: String::new(),
        target: Some(pb::session_ref::Target::SessionId(
            "0b7e6c3a-1f2d-4c5e-9a8b-7c6d5e4f3a2b".into(),
        )),
    };
    let status = client
        .get_session(pb::GetSessionRequest {
            session: Some(unknown),
        })
        .await
        .expect_err("unknown session");
    assert_eq!(status.code(), Code::NotFound, "{status:?}");

    let status = client
        .create_session(pb::CreateSessionRequest {
            session_key: "telegram:1".into(),
            chat_type: 99,
            ..Default::default()
        })
        .await
        .expect_err("bad chat type");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");

    let status = HealthClient::new(service.channel().await)
        .check(HealthCheckRequest {
            service: "openclaw.nothing.v1.Nothing".into(),
        })
        .await
        .expect_err("unknown health service");
    assert_eq!(status.code(), Code::NotFound, "{status:?}");

    // The caller's own deadline ends a stream that would go on.
    client
        .create_session(pb::CreateSessionRequest {
            session_key: "telegram:1".into(),
            ..Default::default()
        })
        .await
        .expect("create session");
    let mut request = tonic::Request::new(pb::WatchSessionRequest {
        session: session_key("telegram:1"),
    });
    request.set_timeout(Duration::from_millis(200));
    let mut watch = client
        .watch_session(request)
        .await
        .expect("watch")
        .into_inner();
    let status = watch.message().await.expect_err("deadline");
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    drop(watch);
    drop(client);
    service.stop().await;

    let lines = captured.lines();
    let mut seen = failures(&lines);
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        [
            ("INFO".to_owned(), "DEADLINE_EXCEEDED".to_owned()),
            ("INFO".to_owned(), "INVALID_ARGUMENT".to_owned()),
            ("INFO".to_owned(), "NOT_FOUND".to_owned()),
        ],
        "{lines:#?}"
    );
    let errors: Vec<_> = lines.iter().filter(|l| l["level"] == "ERROR").collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn server_faults_are_errors_and_limits_warnings() {
    use service_kit::failure_level;
    use tracing::Level;
    for code in [
        Code::Internal,
        Code::Unknown,
        Code::DataLoss,
        Code::Unavailable,
    ] {
        assert_eq!(failure_level(code), Level::ERROR, "{code:?}");
    }
    for code in [
        Code::ResourceExhausted,
        Code::Unauthenticated,
        Code::PermissionDenied,
    ] {
        assert_eq!(failure_level(code), Level::WARN, "{code:?}");
    }
    for code in [
        Code::InvalidArgument,
        Code::NotFound,
        Code::DeadlineExceeded,
        Code::Cancelled,
        Code::FailedPrecondition,
        Code::AlreadyExists,
        Code::OutOfRange,
        Code::Unimplemented,
        Code::Aborted,
    ] {
        assert_eq!(failure_level(code), Level::INFO, "{code:?}");
    }
}

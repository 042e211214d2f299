//! The request span: method, session key from the header, session id
//! recorded by the handler, all on the JSON log lines inside it.

use std::sync::{Arc, Mutex};

use tracing_subscriber::{fmt::MakeWriter, prelude::*};

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("buffer").extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Buffer {
    type Writer = Buffer;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[test]
fn the_request_span_carries_method_session_key_and_session_id() {
    let buffer = Buffer::default();
    let subscriber = tracing_subscriber::registry().with(
        tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_writer(buffer.clone()),
    );
    tracing::subscriber::with_default(subscriber, || {
        let request = http::Request::builder()
            .uri("/openclaw.agent.v1.AgentService/Run")
            .header(service_kit::SESSION_KEY_HEADER, "agent:main:telegram:42")
            .body(tonic::body::Body::empty())
            .expect("request");
        let span = service_kit::request_span(&request);
        let _entered = span.enter();
        service_kit::record_session_id("0b7e6c3a-1f2d-4c5e-9a8b-7c6d5e4f3a2b");
        tracing::info!("handled");
    });
    let text = String::from_utf8(buffer.0.lock().expect("buffer").clone()).expect("utf-8");
    let line: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON line");
    assert_eq!(
        line["span"],
        serde_json::json!({
            "name": "grpc",
            "method": "/openclaw.agent.v1.AgentService/Run",
            "session_key": "agent:main:telegram:42",
            "session_id": "0b7e6c3a-1f2d-4c5e-9a8b-7c6d5e4f3a2b",
        })
    );
}

//! prompt-service's own metrics, recorded by the service and scraped from
//! the kit's endpoint over a real socket.

use prompt_server::{PromptServiceImpl, request_from_input};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn scrape(addr: std::net::SocketAddr) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("response");
    let (head, body) = response.split_once("\r\n\r\n").expect("http");
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    body.to_owned()
}

/// The value of the one series named exactly `series` (other tests of this
/// process render too, so counts are at least what this test caused).
fn value(text: &str, series: &str) -> f64 {
    let values: Vec<f64> = text
        .lines()
        .filter_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .collect();
    assert_eq!(values.len(), 1, "{series} in\n{text}");
    values[0]
}

#[tokio::test]
async fn renders_are_counted_by_how_their_stable_inputs_were_obtained() {
    let metrics = service_kit::metrics::serve(
        tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind"),
        &[prompt_server::metrics::CATALOG],
    )
    .expect("recorder");
    let service = PromptServiceImpl::new().expect("the service starts");
    let mut input = prompt_render::fixtures::realistic();
    input.agent_name = "Metrics".into();
    let bytes = request_from_input(&input).encode_to_vec();
    for _ in 0..3 {
        service.render_wire(&bytes).expect("renders");
    }
    let text = scrape(metrics).await;
    assert!(
        value(
            &text,
            r#"prompt_render_stable_inputs_total{source="prepared"}"#
        ) >= 1.0
    );
    assert!(
        value(
            &text,
            r#"prompt_render_stable_inputs_total{source="remembered"}"#
        ) >= 2.0
    );
    // The chars histogram has the catalog's buckets, not the latency ones.
    assert!(
        value(
            &text,
            r#"prompt_render_chars_bucket{part="total",le="64000"}"#
        ) >= 3.0
    );
    assert!(value(&text, r#"prompt_render_chars_count{part="stable_prefix"}"#) >= 3.0);
    assert!(
        text.contains("# HELP prompt_render_stable_inputs_total RenderSystemPrompt requests"),
        "{text}"
    );
}

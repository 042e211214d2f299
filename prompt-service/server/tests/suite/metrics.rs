//! prompt-service's own metrics, recorded by the service and scraped from
//! the kit's endpoint over a real socket.

use prompt_server::{PromptServiceImpl, request_from_input};
use prost::Message;
use service_kit::test_metrics::{scrape, value};

#[tokio::test]
async fn renders_are_counted_by_how_their_stable_inputs_were_obtained() {
    let metrics =
        service_kit::test_metrics::serve_on_loopback(&[prompt_server::metrics::CATALOG]).await;
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

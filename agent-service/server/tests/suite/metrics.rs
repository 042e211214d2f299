//! Both services' metrics on one endpoint, as `openclaw up` serves them: a
//! message runs over real gRPC (agent-service, a real prompt-service and the
//! fake model server), then the kit's endpoint is scraped over HTTP. The
//! recorder is process-wide, so this is the only test here that installs it
//! and its counts are lower bounds (other tests record too).

use agent_testkit::{FakeReply, WireFormat};
use service_kit::test_metrics::{scrape, value};

use super::harness::Harness;

#[tokio::test]
async fn agent_and_prompt_metrics_are_scraped_from_one_endpoint() {
    let metrics = service_kit::test_metrics::serve_on_loopback(&[
        prompt_server::metrics::CATALOG,
        agent_runtime::metrics::CATALOG,
    ])
    .await;
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push(FakeReply::text("Counted."));
    h.service.run_message("Count this.").await;

    let text = scrape(metrics).await;
    let call = r#"provider="fake",model="test-model""#;
    let handled = |service: &str, method: &str| {
        format!(
            r#"grpc_server_handled_total{{grpc_service="openclaw.{service}",grpc_method="{method}",grpc_code="OK"}}"#
        )
    };
    // Each series with the least this run made of it: agent-service's own
    // metrics, prompt-service's (recorded by the prompt-service the run
    // called) and the kit's RPC metrics of both.
    for (series, least) in [
        (
            format!(r#"agent_model_calls_total{{{call},outcome="ok"}}"#),
            1.0,
        ),
        (
            format!(r#"agent_model_call_seconds_count{{{call},outcome="ok"}}"#),
            1.0,
        ),
        (
            format!(r#"agent_model_tokens_total{{{call},kind="output"}}"#),
            0.0,
        ),
        (
            r#"agent_transcript_append_seconds_count{sync="true"}"#.to_owned(),
            1.0,
        ),
        (
            r#"agent_fsync_seconds_count{file="journal"}"#.to_owned(),
            1.0,
        ),
        (
            r#"agent_fsync_seconds_count{file="transcript"}"#.to_owned(),
            1.0,
        ),
        ("agent_runs_active".to_owned(), 0.0),
        (r#"prompt_render_chars_count{part="total"}"#.to_owned(), 1.0),
        (handled("agent.v1.AgentService", "Run"), 1.0),
        (
            handled("prompt.v1.PromptService", "RenderSystemPrompt"),
            1.0,
        ),
    ] {
        assert!(value(&text, &series) >= least, "{series} in\n{text}");
    }
    for help in [
        "# HELP agent_model_calls_total Model calls, by provider, model and outcome.",
        "# HELP agent_runs_active Agent runs in progress.",
        "# HELP agent_transcript_append_seconds Transcript append latency",
        "# HELP prompt_render_chars Characters of rendered system prompts",
    ] {
        assert!(text.contains(help), "{help} in\n{text}");
    }
}

//! Both services' metrics on one endpoint, as `openclaw up` serves them: a
//! message runs over real gRPC (agent-service, a real prompt-service and the
//! fake model server), then the kit's endpoint is scraped over HTTP. The
//! recorder is process-wide, so this is the only test here that installs it
//! and its counts are lower bounds (other tests record too).

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1 as pb;
use service_kit::test_metrics::{scrape, value};

use super::harness::Harness;

#[tokio::test]
async fn agent_and_prompt_metrics_are_scraped_from_one_endpoint() {
    let metrics = service_kit::metrics::serve(
        tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind"),
        &[
            prompt_server::metrics::CATALOG,
            agent_runtime::metrics::CATALOG,
        ],
    )
    .expect("recorder");
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push(FakeReply::text("Counted."));
    let mut stream = h
        .service
        .client()
        .await
        .run(pb::RunRequest {
            message: "Count this.".into(),
            ..Default::default()
        })
        .await
        .expect("run")
        .into_inner();
    while stream.message().await.expect("stream").is_some() {}

    let text = scrape(metrics).await;
    // agent-service's own metrics, under their documented names and HELP.
    let call = r#"provider="fake",model="test-model""#;
    assert!(
        value(
            &text,
            &format!(r#"agent_model_calls_total{{{call},outcome="ok"}}"#)
        ) >= 1.0
    );
    assert!(
        value(
            &text,
            &format!(r#"agent_model_call_seconds_count{{{call},outcome="ok"}}"#)
        ) >= 1.0
    );
    assert!(
        value(
            &text,
            &format!(r#"agent_model_tokens_total{{{call},kind="output"}}"#)
        ) >= 0.0
    );
    assert!(
        value(
            &text,
            r#"agent_transcript_append_seconds_count{sync="true"}"#
        ) >= 1.0
    );
    assert!(value(&text, "agent_runs_active") >= 0.0);
    for help in [
        "# HELP agent_model_calls_total Model calls, by provider, model and outcome.",
        "# HELP agent_runs_active Agent runs in progress.",
        "# HELP agent_transcript_append_seconds Transcript append latency",
    ] {
        assert!(text.contains(help), "{help} in\n{text}");
    }
    // prompt-service's, recorded by the prompt-service the run called.
    assert!(value(&text, r#"prompt_render_chars_count{part="total"}"#) >= 1.0);
    assert!(
        text.contains("# HELP prompt_render_chars Characters of rendered system prompts"),
        "{text}"
    );
    // The kit's RPC metrics, for both services.
    assert!(
        value(
            &text,
            r#"grpc_server_handled_total{grpc_service="openclaw.agent.v1.AgentService",grpc_method="Run",grpc_code="OK"}"#
        ) >= 1.0
    );
    assert!(
        value(
            &text,
            r#"grpc_server_handled_total{grpc_service="openclaw.prompt.v1.PromptService",grpc_method="RenderSystemPrompt",grpc_code="OK"}"#
        ) >= 1.0
    );
}

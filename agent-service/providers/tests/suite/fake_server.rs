//! The fake servers refuse what the real APIs refuse, so a provider that passes against them
//! sends well-formed requests.

use agent_testkit::{FakeReply, FakeServer, WireFormat};
use serde_json::{Value, json};

async fn post(url: String, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.body(body.to_string()).send().await.unwrap();
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_str(&response.text().await.unwrap()).unwrap(),
    )
}

#[tokio::test]
async fn refusals_use_each_api_error_shape() {
    let (base, fake) = FakeServer::start(WireFormat::AnthropicMessages)
        .await
        .unwrap();
    fake.push(FakeReply::text("unused"));
    let body = json!({"model": "m", "max_tokens": 10, "messages": [], "stream": true});
    let (status, error) = post(format!("{base}/v1/messages"), &[], &body).await;
    assert_eq!(status, 400);
    assert_eq!(error["type"], "error");
    assert_eq!(
        error["error"]["message"],
        "anthropic-version: header is required"
    );

    let (base, fake) = FakeServer::start(WireFormat::OpenAiResponses)
        .await
        .unwrap();
    fake.push(FakeReply::text("unused"));
    let (status, error) = post(
        format!("{base}/responses"),
        &[],
        &json!({"model": "m", "input": []}),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stream"),
        "{error}"
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "refused requests are recorded too"
    );
}

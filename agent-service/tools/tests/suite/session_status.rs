//! session_status: the card with its timestamp line, and the per-session model override.

use openclaw_tools::SessionStatusTool;
use serde_json::json;

use super::{Fixture, error_text, ok_text};

#[tokio::test]
async fn the_card_starts_with_the_time_in_the_users_zone() {
    let mut f = Fixture::new();
    f.ctx.timezone = Some("Europe/Berlin".into());
    let outcome = f.call(&SessionStatusTool, json!({})).await;
    assert_eq!(
        ok_text(&outcome),
        "Time: Tuesday, 2026-03-03 14:05 CET (Europe/Berlin)
Session: agent:main:main (agent main)
Model: openai/gpt-5.4
Tokens: 1200 in, 340 out, 800 from cache
Context: 5000 of 200000 tokens
Compactions: 1
Thinking: low
Queue: steer
Sandbox: off"
    );
    let details = outcome.details().unwrap();
    assert_eq!(details["now"], "2026-03-03T13:05:00Z");
    assert_eq!(details["card"]["usage"]["input_tokens"], 1200);
}

#[tokio::test]
async fn utc_without_a_zone_and_one_fallback_for_a_bad_one() {
    let mut f = Fixture::new();
    let plain = f.call(&SessionStatusTool, json!({})).await;
    assert!(ok_text(&plain).starts_with("Time: Tuesday, 2026-03-03 13:05 UTC (UTC)\n"));
    f.ctx.timezone = Some("Mars/Olympus".into());
    let bad = f.call(&SessionStatusTool, json!({})).await;
    assert!(
        ok_text(&bad).starts_with(
            "Time: Tuesday, 2026-03-03 13:05 UTC (UTC) [unknown time zone \"Mars/Olympus\"; showing UTC]\n"
        ),
        "{}",
        ok_text(&bad)
    );
}

#[tokio::test]
async fn model_sets_and_default_clears_the_override() {
    let f = Fixture::new();
    let set = f
        .call(
            &SessionStatusTool,
            json!({ "model": "anthropic/claude-opus-4" }),
        )
        .await;
    let text = ok_text(&set);
    assert!(
        text.starts_with("Model override set; now using anthropic/claude-opus-4.\nTime: "),
        "{text}"
    );
    assert!(
        text.contains(
            "\nModel: anthropic/claude-opus-4 (session override; default openai/gpt-5.4)\n"
        ),
        "{text}"
    );
    assert_eq!(
        f.session.model_override.lock().unwrap().as_deref(),
        Some("anthropic/claude-opus-4")
    );

    let cleared = f
        .call(&SessionStatusTool, json!({ "model": "Default" }))
        .await;
    let text = ok_text(&cleared);
    assert!(
        text.starts_with("Model override cleared; now using openai/gpt-5.4.\n"),
        "{text}"
    );
    assert!(text.contains("\nModel: openai/gpt-5.4\n"), "{text}");
    assert_eq!(*f.session.model_override.lock().unwrap(), None);
}

#[tokio::test]
async fn a_refused_model_is_an_error_and_changes_nothing() {
    let f = Fixture::new();
    let refused = f
        .call(&SessionStatusTool, json!({ "model": "nope/x" }))
        .await;
    assert_eq!(
        error_text(&refused),
        "cannot switch the model: unknown model nope/x"
    );
    assert_eq!(*f.session.model_override.lock().unwrap(), None);
    let blank = f.call(&SessionStatusTool, json!({ "model": "  " })).await;
    assert!(
        error_text(&blank)
            .starts_with("invalid arguments for session_status: model: must not be empty")
    );
}

//! `/think`: a per-session thinking level that the next request carries on the wire and the
//! prompt's Runtime line states, kept across a restart; a level it does not take is refused
//! naming the ones it does.

use agent_testkit::{FakeReply, WireFormat};

use super::{Loop, final_of, submit};
use crate::{error::RuntimeError, sessions::queue::Disposition};

/// The runtime's own answer to a chat command.
async fn command(l: &Loop, message: &str) -> Result<String, RuntimeError> {
    let submitted = submit(&l.services, Loop::spec(message)).await?;
    match submitted.acceptance.disposition {
        Disposition::Command { reply } => Ok(reply),
        other => panic!("{message:?} was not answered as a command: {other:?}"),
    }
}

/// The last request's body and its system prompt text.
fn last_request(l: &Loop) -> serde_json::Value {
    l.model.requests().last().expect("a request").body.clone()
}

#[tokio::test]
async fn think_sets_the_wire_field_and_the_runtime_line_and_survives_a_restart() {
    let l = Loop::start_on(WireFormat::ChatCompletions, "").await;
    l.model.push(FakeReply::text("Before."));
    assert_eq!(final_of(&l.run("First?").await).0, "Before.");
    let before = last_request(&l);
    assert_eq!(before.get("reasoning_effort"), None, "{before}");
    assert!(before.to_string().contains("thinking=off"), "{before}");

    let set = command(&l, "/think high").await.expect("set");
    assert!(set.contains("now high"), "{set}");
    l.model.push(FakeReply::text("Thought hard."));
    assert_eq!(final_of(&l.run("Second?").await).0, "Thought hard.");
    let after = last_request(&l);
    assert_eq!(after["reasoning_effort"], "high", "{after}");
    assert!(after.to_string().contains("thinking=high"), "{after}");

    let l = l.restarted().await;
    let shown = command(&l, "/think").await.expect("report");
    assert!(shown.contains("is high"), "{shown}");
    l.model.push(FakeReply::text("Still thinking."));
    assert_eq!(final_of(&l.run("Third?").await).0, "Still thinking.");
    assert_eq!(last_request(&l)["reasoning_effort"], "high");

    let off = command(&l, "/think off").await.expect("off");
    assert!(off.contains("now off"), "{off}");
    l.model.push(FakeReply::text("Quick."));
    assert_eq!(final_of(&l.run("Fourth?").await).0, "Quick.");
    let quick = last_request(&l);
    assert_eq!(quick.get("reasoning_effort"), None, "{quick}");
    assert!(quick.to_string().contains("thinking=off"), "{quick}");
}

#[tokio::test]
async fn think_on_anthropic_asks_for_a_thinking_budget() {
    let l = Loop::start_on(WireFormat::AnthropicMessages, "").await;
    command(&l, "/thinking medium").await.expect("set");
    l.model.push(FakeReply::text("Budgeted."));
    assert_eq!(final_of(&l.run("Go.").await).0, "Budgeted.");
    let body = last_request(&l);
    assert_eq!(body["thinking"]["type"], "enabled", "{body}");
    assert_eq!(body["thinking"]["budget_tokens"], 8192, "{body}");
}

#[tokio::test]
async fn a_level_it_does_not_take_is_refused_naming_the_levels() {
    let l = Loop::start("").await;
    let error = command(&l, "/think ultra").await.expect_err("refused");
    let RuntimeError::InvalidArgument { field, reason } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(field, "message");
    for level in [
        "off", "minimal", "low", "medium", "high", "xhigh", "adaptive", "default",
    ] {
        assert!(reason.contains(level), "{reason}");
    }
    assert!(reason.contains("\"ultra\""), "{reason}");
    let shown = command(&l, "/think").await.expect("report");
    assert!(shown.contains("thinking default"), "{shown}");
    assert_eq!(l.model.request_count(), 0, "commands never reach the model");
}

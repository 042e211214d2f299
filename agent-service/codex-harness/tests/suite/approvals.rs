//! Codex's command approvals answered from the agent's exec policy
//! (`approvalPolicy: "untrusted"`, so Codex asks before running any
//! command, read-only ones included).

use agent_testkit::FakeReply;
use openclaw_codex_harness::{
    ApprovalKind, ApprovalRules, Decision, HarnessEvent, TurnOutcome, TurnStatus,
};
use openclaw_transcript::{ContentBlock, Message};
use prompt_codex::{ApprovalPolicy, SandboxMode};
use serde_json::{Value, json};

use super::fixture::{Fixture, Turn, input_items, tool_names};

const MARKER: &str = "approved.txt";

async fn shell_turn(f: &Fixture, rules: ApprovalRules) -> (TurnOutcome, Vec<HarnessEvent>) {
    f.fake.push(FakeReply::tool_call(
        "call_exec",
        "exec_command",
        json!({"cmd": format!("touch {MARKER}")}),
    ));
    f.fake.push(FakeReply::text("Done."));
    let mut turn = Turn::new("Create the marker file.");
    turn.approval_policy = ApprovalPolicy::Untrusted;
    turn.sandbox = SandboxMode::WorkspaceWrite;
    turn.rules = rules;
    f.run(&turn).await
}

/// The `function_call_output` the model got for `call_exec`.
fn exec_output(f: &Fixture) -> String {
    let requests = f.requests();
    assert_eq!(requests.len(), 2, "one call for the command, one after it");
    input_items(&requests[1])
        .iter()
        .find(|item| item["type"] == "function_call_output" && item["call_id"] == "call_exec")
        .map(|item| match &item["output"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .expect("the command's output reached the model")
}

fn exec_result(outcome: &TurnOutcome) -> (&str, bool) {
    let [
        Message::Assistant(call),
        Message::ToolResult(result),
        Message::Assistant(_),
    ] = &outcome.entries[..]
    else {
        panic!("unexpected entries: {:#?}", outcome.entries);
    };
    assert!(matches!(&call.content[..], [ContentBlock::ToolCall(c)]
        if c.id == "call_exec" && c.name == "codex_exec"
            && c.arguments["command"].as_str().is_some_and(|cmd| cmd.contains(MARKER))));
    assert_eq!(result.tool_call_id, "call_exec");
    let ContentBlock::Text(text) = &result.content[0] else {
        panic!("text result expected");
    };
    (text.text.as_str(), result.is_error)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_is_accepted_when_exec_security_is_full() {
    let f = Fixture::start().await;
    let (outcome, events) = shell_turn(&f, ApprovalRules::accept_all()).await;

    assert_eq!(outcome.status, TurnStatus::Completed);
    let [approval] = &outcome.approvals[..] else {
        panic!("one approval request expected: {:#?}", outcome.approvals);
    };
    assert_eq!(approval.kind, ApprovalKind::Command);
    assert_eq!(approval.decision, Decision::Accept);
    assert_eq!(approval.item_id, "call_exec");
    assert!(approval.subject.contains(MARKER), "{approval:?}");
    assert!(events.contains(&HarnessEvent::Approval(approval.clone())));
    assert!(f.workspace.path().join(MARKER).exists(), "the command ran");
    let output = exec_output(&f);
    assert!(output.contains("exited with code 0"), "{output}");
    let (text, is_error) = exec_result(&outcome);
    assert!(text.starts_with("Exit code: 0"), "{text}");
    assert!(!is_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unattended_run_without_an_exec_policy_declines() {
    let f = Fixture::start().await;
    let (outcome, _) = shell_turn(&f, ApprovalRules::default()).await;

    assert_eq!(outcome.status, TurnStatus::Completed);
    let [approval] = &outcome.approvals[..] else {
        panic!("one approval request expected: {:#?}", outcome.approvals);
    };
    assert_eq!(approval.decision, Decision::Decline);
    assert!(
        approval
            .reason
            .contains("tools.exec.askFallback (deny) decides"),
        "{approval:?}"
    );
    assert!(
        !f.workspace.path().join(MARKER).exists(),
        "the command did not run"
    );
    let output = exec_output(&f);
    assert!(
        output.contains("rejected"),
        "Codex tells the model: {output}"
    );
    let (text, is_error) = exec_result(&outcome);
    assert!(text.contains("declined"), "{text}");
    assert!(is_error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowlist_never_accepts_codex_login_shell_wrapper() {
    let f = Fixture::start().await;
    let policy = openclaw_tools::ExecPolicy::allowlist(["/usr/bin/touch", "/bin/touch"]);
    let rules = ApprovalRules {
        policy,
        ..ApprovalRules::default()
    };
    let (outcome, _) = shell_turn(&f, rules).await;
    let [approval] = &outcome.approvals[..] else {
        panic!("one approval request expected: {:#?}", outcome.approvals);
    };
    // Codex asks about `/bin/bash -lc 'touch approved.txt'`: a login shell
    // reads profile files before the script, so `touch` being allowlisted
    // does not cover it.
    assert!(
        approval.subject.starts_with("/bin/bash -lc"),
        "{approval:?}"
    );
    assert_eq!(approval.decision, Decision::Decline, "{approval:?}");
    assert!(
        approval.reason.contains("reads a startup file"),
        "{approval:?}"
    );
    assert!(!f.workspace.path().join(MARKER).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_native_exec_codex_offers_no_shell() {
    let mut f = Fixture::start().await;
    let mut settings = f.settings.clone();
    settings.native_exec = false;
    f.runner = std::sync::Arc::new(openclaw_codex_harness::CodexRunner::new(settings));
    f.fake.push(FakeReply::text("No shell here."));
    let (outcome, _) = f.run(&Turn::new("Run ls.")).await;
    assert_eq!(outcome.status, TurnStatus::Completed);
    let requests = f.requests();
    let names = tool_names(&requests[0]);
    assert!(
        !names.contains(&"exec_command") && !names.contains(&"write_stdin"),
        "{names:?}"
    );
    assert!(names.contains(&"lookup_fact"), "our tools stay: {names:?}");
}

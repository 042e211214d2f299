//! Exec approvals with a person in the loop, end to end: agent-service and a real
//! prompt-service over gRPC, a fake model server whose model calls `exec`, and a client that
//! follows the Run stream and decides with ResolveApproval (or `/approve` in chat).

use std::time::Duration;

use agent_testkit::{FakeReply, WireFormat};
use openclaw_proto::agent::v1::{self as pb, run_event::Event};
use serde_json::json;
use tonic::Code;

use super::calls::{call, refusal, stream_refusal};
use super::harness::{APPROVALS_EXPIRE_AT_ONCE, Harness};
use super::run_events::{events_of, read_until, telegram};

/// A model that runs `command` once, then says "Done.".
fn script(h: &Harness, command: &str) {
    h.fake.push_all([
        FakeReply::tool_call("call-1", "exec", json!({ "command": command })),
        FakeReply::text("Done."),
    ]);
}

/// Runs `message`, the model touching `file` in the workspace: no approval is asked, and the
/// file is made.
async fn touches_unasked(h: &Harness, file: &str, message: &str) {
    script(h, &format!("touch {file}"));
    let events = h.service.run_message(message).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalRequested(_))),
        "{events:?}"
    );
    assert!(h.service.path(&format!("state/workspace/{file}")).exists());
}

fn approval_of(event: &pb::RunEvent) -> Option<&pb::Approval> {
    match &event.event {
        Some(Event::ApprovalRequested(a)) => Some(a),
        _ => None,
    }
}

fn resolved_of(events: &[pb::RunEvent]) -> Vec<pb::Approval> {
    events_of!(&events, ApprovalResolved)
}

fn tool_results(events: &[pb::RunEvent]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::ToolFinished(t)) => Some((t.is_error, t.output.clone())),
            _ => None,
        })
        .collect()
}

fn is_end(event: &pb::RunEvent) -> bool {
    matches!(event.event, Some(Event::Final(_) | Event::Error(_)))
}

/// Opens a Run of `message` in the main session and reads until the approval request.
async fn until_requested(
    h: &Harness,
    message: &str,
) -> (tonic::Streaming<pb::RunEvent>, pb::Approval) {
    let mut stream = h
        .service
        .open_run(pb::RunRequest {
            message: message.into(),
            ..Default::default()
        })
        .await;
    let events = read_until(&mut stream, |e| approval_of(e).is_some()).await;
    let approval = events
        .last()
        .and_then(approval_of)
        .cloned()
        .unwrap_or_else(|| panic!("no approval_requested in {events:?}"));
    (stream, approval)
}

async fn resolve(
    h: &Harness,
    id: &str,
    decision: pb::ApprovalDecision,
) -> Result<pb::Approval, tonic::Status> {
    h.service
        .client()
        .await
        .resolve_approval(pb::ResolveApprovalRequest {
            session: None,
            id: id.to_owned(),
            decision: decision as i32,
            decided_by: "operator".to_owned(),
        })
        .await
        .map(tonic::Response::into_inner)
}

async fn pending(h: &Harness) -> Vec<pb::Approval> {
    call!(
        h.service,
        list_approvals,
        pb::ListApprovalsRequest::default()
    )
    .approvals
}

/// With no exec policy configured, a command that is not pre-approved asks; the tool call
/// waits (nothing runs) until a person allows it once, then it runs exactly once.
#[tokio::test]
async fn a_command_waits_for_approval_and_allow_once_runs_it_once() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    script(&h, "echo ran >> approved.txt");
    let (mut stream, approval) = until_requested(&h, "Record that it ran.").await;
    let workspace = h.service.path("state/workspace");
    assert_eq!(approval.command, "echo ran >> approved.txt");
    assert_eq!(approval.state(), pb::ApprovalState::Pending);
    assert_eq!(approval.subject(), pb::ApprovalSubject::Command);
    assert_eq!(approval.call_id, "call-1");
    assert_eq!(approval.session_key, "agent:main:main");
    assert!(
        approval.reason.contains("approval") || approval.reason.contains("allowlist"),
        "{approval:?}"
    );
    let seconds = |t: &Option<prost_types::Timestamp>| t.as_ref().expect("time").seconds;
    assert!(seconds(&approval.expires_at) >= seconds(&approval.requested_at) + 100);
    assert!(
        !workspace.join("approved.txt").exists(),
        "the command ran before it was approved"
    );
    // The request is listed as pending, and only once.
    let listed = pending(&h).await;
    assert_eq!(
        listed.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        [approval.id.as_str()]
    );

    let decided = resolve(&h, &approval.id, pb::ApprovalDecision::AllowOnce)
        .await
        .expect("resolve");
    assert_eq!(decided.state(), pb::ApprovalState::AllowedOnce);
    assert_eq!(decided.decided_by, "operator");
    let events = read_until(&mut stream, is_end).await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{events:?}");
    assert!(!results[0].0, "{results:?}");
    assert!(
        results[0].1.contains("allow-once by operator"),
        "{results:?}"
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("approved.txt")).expect("ran"),
        "ran\n"
    );
    let resolved = resolved_of(&events);
    assert_eq!(resolved.len(), 1, "{events:?}");
    assert_eq!(resolved[0].state(), pb::ApprovalState::AllowedOnce);

    // Decided once: a second decision is refused and nothing runs again.
    let again = resolve(&h, &approval.id, pb::ApprovalDecision::AllowOnce)
        .await
        .expect_err("a second decision");
    assert_eq!(again.code(), Code::FailedPrecondition, "{again:?}");
    assert!(
        again.message().contains("already allowed once"),
        "{again:?}"
    );
    assert!(pending(&h).await.is_empty());
    let history = call!(
        h.service,
        list_approvals,
        pb::ListApprovalsRequest {
            include_decided: true,
            ..Default::default()
        }
    )
    .approvals;
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].state(), pb::ApprovalState::AllowedOnce);
    // The next call of the same command asks again: allow-once covered one command.
    script(&h, "echo ran >> approved.txt");
    let (_stream, second) = until_requested(&h, "Once more.").await;
    assert_ne!(second.id, approval.id);
    assert_eq!(
        std::fs::read_to_string(workspace.join("approved.txt")).expect("file"),
        "ran\n"
    );
}

/// A denial reaches the model as a refusal it can act on; nothing runs.
#[tokio::test]
async fn a_denied_command_does_not_run_and_the_model_is_told() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    script(&h, "touch denied.txt");
    let (mut stream, approval) = until_requested(&h, "Make a file.").await;
    let decided = resolve(&h, &approval.id, pb::ApprovalDecision::Deny)
        .await
        .expect("resolve");
    assert_eq!(decided.state(), pb::ApprovalState::Denied);
    let events = read_until(&mut stream, is_end).await;
    let results = tool_results(&events);
    assert!(results[0].0, "{results:?}");
    assert!(
        results[0].1.contains("operator denied this command"),
        "{results:?}"
    );
    assert!(!h.service.path("state/workspace/denied.txt").exists());
    // The model got the refusal as the call's result.
    let requests = h.fake.requests();
    let last = requests.last().expect("a second model request");
    assert!(
        last.body.to_string().contains("denied this command"),
        "{}",
        last.body
    );
}

/// Nobody answers: after the approval timeout `askFallback` (deny by default) decides, the
/// approval ends as expired and the tool result says so.
#[tokio::test]
async fn an_unanswered_approval_expires_and_ask_fallback_decides() {
    let h = Harness::start(WireFormat::ChatCompletions, "", APPROVALS_EXPIRE_AT_ONCE).await;
    script(&h, "touch late.txt");
    let (mut stream, approval) = until_requested(&h, "Make a file.").await;
    let events = read_until(&mut stream, is_end).await;
    let results = tool_results(&events);
    assert!(results[0].0, "{results:?}");
    assert!(
        results[0].1.contains(&format!(
            "nobody answered approval {} within 1 s",
            approval.id
        )),
        "{results:?}"
    );
    assert!(results[0].1.contains("askFallback (deny)"), "{results:?}");
    let resolved = resolved_of(&events);
    assert_eq!(resolved[0].state(), pb::ApprovalState::Expired);
    assert!(!resolved[0].fallback_allowed);
    assert!(!h.service.path("state/workspace/late.txt").exists());
    let late = resolve(&h, &approval.id, pb::ApprovalDecision::AllowOnce)
        .await
        .expect_err("too late");
    assert_eq!(late.code(), Code::FailedPrecondition);
    assert!(late.message().contains("expired"), "{late:?}");

    // With askFallback full, the same expiry lets the command run, and says why.
    let h = Harness::start(
        WireFormat::ChatCompletions,
        "",
        r#"tools: { exec: { approvalTimeoutSec: 1, askFallback: "full" } },"#,
    )
    .await;
    script(&h, "touch late.txt");
    let (mut stream, _approval) = until_requested(&h, "Make a file.").await;
    let events = read_until(&mut stream, is_end).await;
    let results = tool_results(&events);
    assert!(!results[0].0, "{results:?}");
    assert!(results[0].1.contains("askFallback (full)"), "{results:?}");
    assert!(h.service.path("state/workspace/late.txt").exists());
}

/// A run nobody follows (no Run stream, no watcher) cannot ask anyone: `askFallback`
/// decides at once and no approval is filed.
#[tokio::test]
async fn an_unfollowed_run_falls_back_at_once() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    script(&h, "touch quiet.txt");
    let sent = call!(
        h.service,
        send,
        pb::SendRequest {
            message: "Make a file.".into(),
            ..Default::default()
        }
    );
    drop(sent);
    // The run ends without anyone deciding; its transcript holds the refusal.
    let mut refused = None;
    for _ in 0..200 {
        let messages = h.service.transcript_messages().await;
        refused = messages
            .iter()
            .find(|(role, _)| role == "toolResult")
            .map(|(_, m)| m.to_string());
        if refused.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = refused.expect("a tool result");
    assert!(
        refused.contains("nobody can approve commands in this session"),
        "{refused}"
    );
    assert!(!h.service.path("state/workspace/quiet.txt").exists());
    assert!(pending(&h).await.is_empty());
}

/// A WatchSession sees the request too, and a bad decision is refused with a status that
/// names the field.
#[tokio::test]
async fn watchers_see_requests_and_bad_decisions_are_refused() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push(FakeReply::text("Hi."));
    h.service.run_message("Hello").await;
    let mut watch = h.service.watch().await;
    script(&h, "touch watched.txt");
    let (mut stream, approval) = until_requested(&h, "Make a file.").await;
    let seen = read_until(&mut watch, |e| approval_of(e).is_some()).await;
    assert_eq!(
        seen.last().and_then(approval_of).map(|a| a.id.clone()),
        Some(approval.id.clone())
    );
    let unknown = resolve(&h, "nope1234", pb::ApprovalDecision::AllowOnce)
        .await
        .expect_err("unknown");
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
    let unspecified = resolve(&h, &approval.id, pb::ApprovalDecision::Unspecified)
        .await
        .expect_err("no decision");
    assert_eq!(unspecified.code(), Code::InvalidArgument);
    assert!(
        unspecified.message().starts_with("decision"),
        "{unspecified:?}"
    );
    let anonymous = refusal!(
        h.service,
        resolve_approval,
        pb::ResolveApprovalRequest {
            session: None,
            id: approval.id.clone(),
            decision: pb::ApprovalDecision::AllowOnce as i32,
            decided_by: " ".into(),
        }
    );
    assert_eq!(anonymous.code(), Code::InvalidArgument);
    assert!(anonymous.message().contains("decided_by"), "{anonymous:?}");
    // Still pending after the refused calls; a real decision ends it.
    assert_eq!(pending(&h).await.len(), 1);
    resolve(&h, &approval.id, pb::ApprovalDecision::Deny)
        .await
        .expect("deny");
    read_until(&mut stream, is_end).await;
}

/// `/approve` in chat decides an approval for an owner (`commands.ownerAllowFrom`) and is
/// refused for anyone else, leaving the approval pending.
#[tokio::test]
async fn approve_in_chat_works_for_owners_only() {
    let h = Harness::start(
        WireFormat::ChatCompletions,
        "",
        r#"commands: { ownerAllowFrom: ["42"] },"#,
    )
    .await;
    script(&h, "touch chat.txt");
    let (mut stream, approval) = until_requested(&h, "Make a file.").await;
    let chat = |sender: &str, channel: &str, text: String| pb::RunRequest {
        session: Some(pb::SessionRef {
            agent_id: String::new(),
            target: Some(pb::session_ref::Target::SessionKey(format!(
                "{channel}:direct:{sender}"
            ))),
        }),
        message: text,
        channel: Some(pb::ChannelContext {
            channel: channel.into(),
            chat_type: pb::ChatType::Direct as i32,
            sender_id: sender.into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    // A sender who is not an owner is refused, and the approval stays pending.
    let approve = format!("/approve {} allow-once", approval.id);
    let refused = stream_refusal!(h.service, run, chat("99", "discord", approve));
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    assert!(refused.message().contains("ownerAllowFrom"), "{refused:?}");
    assert_eq!(pending(&h).await.len(), 1);
    // A malformed /approve is INVALID_ARGUMENT naming the message.
    let malformed = stream_refusal!(
        h.service,
        run,
        chat("42", "telegram", "/approve".to_owned())
    );
    assert_eq!(malformed.code(), Code::InvalidArgument, "{malformed:?}");
    // The owner decides; the command runs.
    let events = h
        .service
        .run_to_end(chat(
            "42",
            "telegram",
            format!("/approve {} allow-once", approval.id),
        ))
        .await;
    let reply = events_of!(&events, Accepted)
        .into_iter()
        .next()
        .expect("the command's answer")
        .reason;
    assert!(reply.contains("allowed once"), "{reply}");
    let events = read_until(&mut stream, is_end).await;
    assert!(!tool_results(&events)[0].0, "{events:?}");
    assert!(resolved_of(&events)[0].decided_by == "telegram:42");
    assert!(h.service.path("state/workspace/chat.txt").exists());
}

async fn allowlist(h: &Harness) -> Vec<(String, String)> {
    call!(
        h.service,
        list_exec_allowlist,
        pb::ListExecAllowlistRequest::default()
    )
    .entries
    .into_iter()
    .map(|e| (e.pattern, e.source))
    .collect()
}

/// allow-always adds the command's executable to the agent's allowlist in the approvals file:
/// the next such command runs without asking, also after a restart; removing the entry makes
/// it ask again.
#[tokio::test]
async fn allow_always_persists_across_a_restart_and_skips_the_next_ask() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    script(&h, "touch first.txt");
    let (mut stream, approval) = until_requested(&h, "Make a file.").await;
    let touch = std::fs::canonicalize(
        std::env::split_paths(&std::env::var_os("PATH").expect("PATH"))
            .map(|d| d.join("touch"))
            .find(|p| p.is_file())
            .expect("touch on PATH"),
    )
    .expect("canonical touch");
    let touch = touch.display().to_string();
    assert_eq!(approval.always_patterns, std::slice::from_ref(&touch));
    let decided = resolve(&h, &approval.id, pb::ApprovalDecision::AllowAlways)
        .await
        .expect("resolve");
    assert_eq!(decided.state(), pb::ApprovalState::AllowedAlways);
    read_until(&mut stream, is_end).await;
    assert!(h.service.path("state/workspace/first.txt").exists());
    assert_eq!(allowlist(&h).await, [(touch.clone(), "file".to_owned())]);
    let file = std::fs::read_to_string(h.service.path("state/exec-approvals.json"))
        .expect("approvals file");
    assert!(file.contains(&touch), "{file}");

    // The same program again: no approval asked.
    touches_unasked(&h, "second.txt", "Another.").await;

    // After a restart too.
    let (dir, fake, prompt) = h.stop().await;
    let h = Harness::resume(dir, fake, prompt).await;
    touches_unasked(&h, "third.txt", "And another.").await;

    // Removed, it asks again; removing it twice is NOT_FOUND.
    let mut client = h.service.client().await;
    let after = client
        .remove_exec_allowlist_entry(pb::RemoveExecAllowlistEntryRequest {
            agent_id: String::new(),
            pattern: touch.clone(),
        })
        .await
        .expect("remove")
        .into_inner();
    assert!(after.entries.is_empty(), "{after:?}");
    let twice = client
        .remove_exec_allowlist_entry(pb::RemoveExecAllowlistEntryRequest {
            agent_id: String::new(),
            pattern: touch.clone(),
        })
        .await
        .expect_err("gone");
    assert_eq!(twice.code(), Code::NotFound);
    script(&h, "touch fourth.txt");
    let (_stream, again) = until_requested(&h, "Last one.").await;
    assert_eq!(again.command, "touch fourth.txt");
}

/// Entries added over the API are checked: relative patterns and globs that do not compile
/// are INVALID_ARGUMENT naming the pattern.
#[tokio::test]
async fn allowlist_entries_are_validated() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    let mut client = h.service.client().await;
    for bad in ["git", "~/bin/tool", "/usr/bin/[", ""] {
        let status = client
            .add_exec_allowlist_entry(pb::AddExecAllowlistEntryRequest {
                agent_id: String::new(),
                pattern: bad.into(),
                added_by: "operator".into(),
            })
            .await
            .expect_err(bad);
        assert_eq!(status.code(), Code::InvalidArgument, "{bad}: {status:?}");
        assert!(status.message().starts_with("pattern"), "{status:?}");
    }
    let added = client
        .add_exec_allowlist_entry(pb::AddExecAllowlistEntryRequest {
            agent_id: String::new(),
            pattern: "/usr/bin/git".into(),
            added_by: "operator".into(),
        })
        .await
        .expect("add")
        .into_inner();
    assert_eq!(added.agent_id, "main");
    assert_eq!(added.entries[0].pattern, "/usr/bin/git");
    assert_eq!(added.entries[0].added_by, "operator");
    let unknown = client
        .list_exec_allowlist(pb::ListExecAllowlistRequest {
            agent_id: "nobody".into(),
        })
        .await
        .expect_err("unknown agent");
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
}

/// A restart while an approval is pending never runs the command: the waiting call ends, the
/// approval's id is unknown afterwards, and the transcript records the call as not run.
#[tokio::test]
async fn a_restart_with_a_pending_approval_does_not_run_the_command() {
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    script(&h, "touch never.txt");
    let (_stream, approval) = until_requested(&h, "Make a file.").await;
    let (dir, fake, prompt) = h.stop().await;
    let h = Harness::resume(dir, fake, prompt).await;
    let gone = resolve(&h, &approval.id, pb::ApprovalDecision::AllowOnce)
        .await
        .expect_err("unknown after a restart");
    assert_eq!(gone.code(), Code::NotFound, "{gone:?}");
    assert!(gone.message().contains("never run"), "{gone:?}");
    assert!(!h.service.path("state/workspace/never.txt").exists());
    let messages = h.service.transcript_messages().await;
    let result = messages
        .iter()
        .find(|(role, _)| role == "toolResult")
        .map(|(_, m)| m.to_string())
        .expect("the waiting call has a result");
    assert!(result.contains("\"isError\":true"), "{result}");
    assert!(
        result.contains("cancelled while it waited for approval") || result.contains("interrupted"),
        "{result}"
    );
}

/// The prompt's Approvals section (native cards first, `/approve` only as the fallback) is
/// offered only when the client says its channel shows approval cards and the agent's exec
/// policy can ask; with `ask: off` it is gone, whatever the channel.
#[tokio::test]
async fn the_approvals_section_follows_the_policy_in_force() {
    async fn suffix(h: &Harness, cards: bool) -> String {
        h.service
            .preview(
                None,
                Some(pb::ChannelContext {
                    native_approvals: cards,
                    ..telegram().expect("a chat")
                }),
            )
            .await
            .prompt
            .expect("prompt")
            .dynamic_suffix
    }
    async fn stable(h: &Harness) -> String {
        h.service
            .preview(None, None)
            .await
            .prompt
            .expect("prompt")
            .stable_prefix
    }
    let h = Harness::start(WireFormat::ChatCompletions, "", "").await;
    assert!(suffix(&h, true).await.contains("## Approvals"));
    assert!(!suffix(&h, false).await.contains("## Approvals"));
    assert!(stable(&h).await.contains("then wait for the decision."));
    let h = Harness::start(
        WireFormat::ChatCompletions,
        "",
        r#"tools: { exec: { ask: "off" } },"#,
    )
    .await;
    let text = suffix(&h, true).await;
    assert!(!text.contains("## Approvals"), "{text}");
    assert!(!text.contains("/approve"), "{text}");
    let text = stable(&h).await;
    assert!(!text.contains("wait for the decision"), "{text}");
    assert!(
        text.contains("a command the policy refuses stays refused"),
        "{text}"
    );
}

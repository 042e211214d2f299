//! One turn: `turn/start`, then the thread's traffic until `turn/completed`
//! (or the process dies), answering Codex's requests and turning its items
//! into events and transcript entries.

use std::{sync::Arc, time::Duration};

use serde_json::{Value, json};
use tokio::{
    sync::mpsc,
    task::JoinSet,
    time::{Instant, sleep_until},
};

use crate::{
    approvals::{ApprovalKind, ApprovalRecord, Decision},
    dynamic_tools,
    error::HarnessError,
    events::{HarnessEvent, TurnOutcome, TurnStatus},
    items::ItemTracker,
    process::AppServer,
    projection,
    rpc::{Connection, Inbound},
    runner::TurnInput,
    settings::HarnessSettings,
    steer::{SteerQueue, steer_params},
    thread::BoundThread,
};

/// JSON-RPC "method not found", for requests we do not serve.
const METHOD_NOT_FOUND: i64 = -32601;
/// How long an interrupted turn may take to report `turn/completed`
/// (observed: about 10 ms) before the harness stops waiting for it.
const INTERRUPT_WAIT: Duration = Duration::from_secs(10);
/// How long `turn/interrupt` and `turn/steer` may go unanswered (observed: milliseconds)
/// before the app-server is taken for hung and killed.
const CONTROL_WAIT: Duration = Duration::from_secs(5);
/// How long the check that the app-server still answers
/// ([`HarnessSettings::liveness_interval`](crate::HarnessSettings)) may go unanswered: a
/// model may stream nothing for minutes, a stopped process says nothing at all.
const PROBE_WAIT: Duration = Duration::from_secs(10);

/// What the caller can do to a running turn.
#[derive(Debug)]
pub(crate) enum Control {
    /// Queue a steer message.
    Steer(String),
    /// Interrupt the turn.
    Interrupt,
}

/// Runs one turn on a bound thread. Errors are failures before Codex
/// accepted `turn/start`; after that, every ending is a [`TurnOutcome`].
pub(crate) async fn run(
    server: &Arc<AppServer>,
    input: TurnInput,
    thread: BoundThread,
    projection: Option<String>,
    mut controls: mpsc::Receiver<Control>,
    events: &mpsc::Sender<HarnessEvent>,
    settings: &HarnessSettings,
) -> Result<TurnOutcome, HarnessError> {
    let conn = &server.conn;
    let mut subscription = conn.subscribe(&thread.id)?;
    let turn_start = input.params.turn_start_for(&thread.binding);
    let params = turn_params(turn_start, &thread.id, projection.as_deref())?;
    let result = conn.request("turn/start", params).await?;
    let turn_id = result
        .get("turn")
        .and_then(|t| t.get("id"))
        .and_then(Value::as_str)
        .ok_or_else(|| HarnessError::protocol("turn/start", "no turn.id in the result"))?
        .to_owned();
    emit(
        events,
        HarnessEvent::TurnStarted {
            thread_id: thread.id.clone(),
            turn_id: turn_id.clone(),
        },
    )
    .await;

    let provider = if thread.info.provider.is_empty() {
        "codex"
    } else {
        &thread.info.provider
    };
    let mut items = ItemTracker::new(provider, &thread.info.model);
    let mut steers = SteerQueue::new(settings.steer_debounce);
    let mut undelivered: Vec<String> = Vec::new();
    let mut approvals: Vec<ApprovalRecord> = Vec::new();
    let mut tools: JoinSet<bool> = JoinSet::new();
    let mut interrupting = false;
    let mut give_up = Instant::now();
    let mut controls_open = true;
    // The run's token interrupts the turn; our own token (its child) also
    // stops the tools when the turn is interrupted another way.
    let cancel = input.tool_ctx.cancel.clone();
    let mut tool_ctx = input.tool_ctx.clone();
    tool_ctx.cancel = cancel.child_token();

    // The watchdog's probe: never completes; an app-server that stopped answering is given
    // up on, which closes the connection (the subscription then reports why).
    let probe = probe(conn, settings.liveness_interval);
    tokio::pin!(probe);
    let closed = |detail: String| {
        if conn.is_unresponsive() {
            TurnStatus::Unresponsive { detail }
        } else {
            TurnStatus::ProcessExited { detail }
        }
    };

    let status = loop {
        // Steering waits while a tool call runs (R-11).
        let steer_due = steers
            .deadline()
            .filter(|_| !interrupting && !items.tool_in_flight() && tools.is_empty());
        let interrupt = tokio::select! {
            inbound = subscription.rx.recv() => {
                let Some(inbound) = inbound else {
                    break closed("the connection closed".to_owned());
                };
                match inbound {
                    Inbound::Closed { detail } => break closed(detail),
                    Inbound::Notification { method, params } => {
                        if method == "turn/completed" && completes(&params, &turn_id) {
                            break status_of(&params["turn"]);
                        }
                        for event in notification(&mut items, &method, &params) {
                            emit(events, event).await;
                        }
                        false
                    }
                    Inbound::Request { id, method, params } => {
                        if method == "item/tool/call" {
                            // The task answers Codex itself: the answer goes out
                            // the moment the tool returns, not after a hop back here.
                            let (registry, ctx) = (Arc::clone(&input.tools), tool_ctx.clone());
                            let conn = Arc::clone(&server.conn);
                            let answers = items.answers();
                            tools.spawn(async move {
                                let call_id = params
                                    .get("callId")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default()
                                    .to_owned();
                                let answer = dynamic_tools::answer(registry, ctx, params).await;
                                // Recorded before Codex hears it: its item follows the answer.
                                answers
                                    .lock()
                                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                                    .insert(call_id, answer.raw);
                                reply(&conn, id, answer.result).await;
                                answer.end_turn
                            });
                        } else if let Some(record) = answer(conn, &input, id, &method, &params).await {
                            emit(events, HarnessEvent::Approval(record.clone())).await;
                            approvals.push(record);
                        }
                        false
                    }
                }
            }
            Some(done) = tools.join_next(), if !tools.is_empty() => {
                match done {
                    Ok(end_turn) => end_turn,
                    Err(error) => {
                        // The task panicked or was aborted; Codex still waits, but
                        // the request id went with the task: end the turn.
                        tracing::warn!(%error, "a dynamic tool task failed");
                        true
                    }
                }
            }
            control = controls.recv(), if controls_open => match control {
                Some(Control::Steer(text)) => {
                    steers.push(text, Instant::now());
                    false
                }
                Some(Control::Interrupt) => true,
                None => {
                    controls_open = false;
                    false
                }
            },
            () = cancel.cancelled(), if !interrupting => true,
            () = &mut probe => false,
            () = sleep_until(give_up), if interrupting => {
                tracing::warn!(turn_id = %turn_id, "no turn/completed after turn/interrupt; ending the turn anyway");
                break TurnStatus::Interrupted;
            }
            () = sleep_until(steer_due.unwrap_or_else(Instant::now)), if steer_due.is_some() => {
                let batch = steers.take();
                let params = steer_params(&thread.id, &turn_id, &batch);
                match conn.request_within("turn/steer", params, CONTROL_WAIT).await {
                    Ok(_) => {
                        items.steered(&batch);
                        emit(events, HarnessEvent::Steered { messages: batch }).await;
                    }
                    Err(error) => {
                        tracing::info!(%error, "turn/steer was refused; the messages stay queued for a later turn");
                        undelivered.extend(batch);
                    }
                }
                false
            }
        };
        if interrupt && !interrupting {
            interrupting = true;
            give_up = Instant::now() + INTERRUPT_WAIT;
            tool_ctx.cancel.cancel();
            let params = json!({"threadId": thread.id, "turnId": turn_id});
            if let Err(error) = conn
                .request_within("turn/interrupt", params, CONTROL_WAIT)
                .await
            {
                tracing::info!(%error, "turn/interrupt failed");
            }
        }
    };
    // Unanswered tool calls die with the turn.
    tools.abort_all();
    drop(subscription);

    let finished = items.finish(&status);
    for event in finished.events {
        emit(events, event).await;
    }
    undelivered.extend(steers.take());
    // Closed first: a steer sent from now on is refused (the caller runs it
    // as the next turn) instead of vanishing with the channel's buffer.
    controls.close();
    while let Ok(control) = controls.try_recv() {
        if let Control::Steer(text) = control {
            undelivered.push(text);
        }
    }
    Ok(TurnOutcome {
        thread_id: thread.id,
        binding: thread.binding,
        turn_id,
        status,
        entries: finished.entries,
        final_text: finished.final_text,
        usage: finished.usage,
        approvals,
        undelivered_steers: undelivered,
    })
}

/// Asks the app-server a cheap question every `every`, until the connection closes (an
/// unanswered question closes it and kills the process); never completes.
async fn probe(conn: &Connection, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        if let Err(error) = conn
            .request_within("thread/loaded/list", json!({}), PROBE_WAIT)
            .await
        {
            tracing::debug!(%error, "the Codex app-server's liveness check failed");
            if conn.closed().is_some() {
                // Pending forever: the turn ends on the closed subscription.
                return std::future::pending().await;
            }
        }
    }
}

/// The mapped `turn/start` params on this thread, with the projection in
/// front of the first text input when there is one.
fn turn_params(
    params: &Value,
    thread_id: &str,
    projection: Option<&str>,
) -> Result<Value, HarnessError> {
    let mut params = params.clone();
    let Some(object) = params.as_object_mut() else {
        return Err(HarnessError::InvalidInput {
            field: "params.turn_start",
            reason: "must be a JSON object".to_owned(),
        });
    };
    object.insert("threadId".to_owned(), json!(thread_id));
    if let Some(projection) = projection {
        let input = object
            .entry("input")
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(items) = input.as_array_mut() else {
            return Err(HarnessError::InvalidInput {
                field: "params.turn_start.input",
                reason: "must be an array".to_owned(),
            });
        };
        let first_text = items
            .iter_mut()
            .find(|item| item.get("type").and_then(Value::as_str) == Some("text"));
        match first_text {
            Some(item) => {
                let text = item.get("text").and_then(Value::as_str).unwrap_or_default();
                item["text"] = json!(projection::with_projection(projection, text));
            }
            None => items.insert(
                0,
                json!({"type": "text", "text": projection, "text_elements": []}),
            ),
        }
    }
    Ok(params)
}

fn completes(params: &Value, turn_id: &str) -> bool {
    params
        .get("turn")
        .and_then(|t| t.get("id"))
        .and_then(Value::as_str)
        .is_none_or(|id| id == turn_id)
}

fn status_of(turn: &Value) -> TurnStatus {
    match turn.get("status").and_then(Value::as_str) {
        Some("completed") => TurnStatus::Completed,
        Some("interrupted") => TurnStatus::Interrupted,
        other => {
            let error = turn.get("error").filter(|e| e.is_object());
            let (mut kind, mut http_status) = error.map(error_kind).unwrap_or_default();
            if let (Some(error), "" | "other", None) = (error, kind.as_str(), http_status)
                && let (found, Some(status)) = body_kind(error)
            {
                (kind, http_status) = (if found.is_empty() { kind } else { found }, Some(status));
            }
            TurnStatus::Failed {
                message: error
                    .map(error_message)
                    .unwrap_or_else(|| format!("the turn ended with status {other:?}")),
                kind,
                http_status,
            }
        }
    }
}

/// Codex's kind of a turn error (`codexErrorInfo`, a name or `{name: {httpStatusCode}}`)
/// and the provider's HTTP status when it gave one.
fn error_kind(error: &Value) -> (String, Option<u16>) {
    let (kind, status) = match error.get("codexErrorInfo") {
        Some(Value::String(kind)) => (kind.clone(), None),
        Some(Value::Object(map)) => match map.iter().next() {
            Some((kind, detail)) => (
                kind.clone(),
                detail
                    .get("httpStatusCode")
                    .and_then(Value::as_u64)
                    .and_then(|s| u16::try_from(s).ok()),
            ),
            None => (String::new(), None),
        },
        _ => (String::new(), None),
    };
    // Codex raises `internalServerError` for a provider's HTTP 500 alone.
    let status = status.or((kind == "internalServerError").then_some(500));
    (kind, status)
}

/// The kind and HTTP status of a provider's answer that Codex passed on as its raw JSON
/// error body under the kind `other` (a 400, say): read from the body's `type` and `code`
/// as the provider defines them. Nothing when the message is no such body.
fn body_kind(error: &Value) -> (String, Option<u16>) {
    let text = error.get("message").and_then(Value::as_str).unwrap_or("");
    let Some(body) = serde_json::from_str::<Value>(text).ok() else {
        return (String::new(), None);
    };
    let inner = body.get("error").unwrap_or(&Value::Null);
    let field = |key: &str| inner.get(key).and_then(Value::as_str).unwrap_or("");
    if field("code") == "context_length_exceeded" {
        return ("contextWindowExceeded".to_owned(), Some(400));
    }
    let status = match (field("type"), field("code")) {
        (_, "rate_limit_exceeded") | ("rate_limit_error" | "requests" | "tokens", _) => 429,
        ("invalid_request_error", _) => 400,
        ("authentication_error", _) | (_, "invalid_api_key") => 401,
        ("permission_error", _) => 403,
        ("not_found_error", _) | (_, "model_not_found") => 404,
        ("overloaded_error", _) => 529,
        ("server_error" | "api_error", _) => 500,
        _ => return (String::new(), None),
    };
    (String::new(), Some(status))
}

/// A Codex turn error as our run error says it. Codex passes some provider
/// errors on as the raw JSON body (their message is taken out of it) and
/// replaces others with a generic text (an HTTP 500 reads "We're currently
/// experiencing high demand"): its error kind, the HTTP status and any
/// additional details are kept next to the text, so the provider's real
/// answer is never lost when the notification carries it.
pub(crate) fn error_message(error: &Value) -> String {
    let text = error.get("message").and_then(Value::as_str).unwrap_or("");
    let mut out = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|body| {
            let inner = body.get("error")?;
            inner
                .get("message")
                .and_then(Value::as_str)
                .or_else(|| inner.as_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| text.to_owned());
    if let Some(details) = error
        .get("additionalDetails")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
    {
        out.push_str(&format!(" ({details})"));
    }
    let (kind, status) = error_kind(error);
    match (kind.as_str(), status) {
        ("" | "other", None) => {}
        (kind, None) => out.push_str(&format!(" [Codex error: {kind}]")),
        (kind, Some(status)) => out.push_str(&format!(
            " [Codex error: {kind}; the model provider answered HTTP {status}]"
        )),
    }
    out
}

/// Feeds one notification to the tracker.
fn notification(items: &mut ItemTracker, method: &str, params: &Value) -> Vec<HarnessEvent> {
    match method {
        "item/started" => items.started(params),
        "item/completed" => items.completed(params),
        "item/agentMessage/delta" => items.agent_delta(params).into_iter().collect(),
        // Raw reasoning text (`item/reasoning/textDelta`) is not forwarded:
        // the summary is what a reader is shown.
        "item/reasoning/summaryTextDelta" => items.reasoning_delta(params).into_iter().collect(),
        "thread/tokenUsage/updated" => items.usage(params).into_iter().collect(),
        "rawResponseItem/completed" => items.raw_item(params),
        "warning" => vec![HarnessEvent::Warning(
            params
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        )],
        "error" => {
            let message = params
                .get("error")
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            vec![HarnessEvent::Warning(format!("Codex error: {message}"))]
        }
        _ => Vec::new(),
    }
}

/// Answers every server request other than `item/tool/call`; approvals
/// return their record.
async fn answer(
    conn: &Connection,
    input: &TurnInput,
    id: Value,
    method: &str,
    params: &Value,
) -> Option<ApprovalRecord> {
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    let item_id = text("itemId").unwrap_or_default();
    let (record, result) = match method {
        "item/commandExecution/requestApproval" => {
            let command = text("command").unwrap_or_default();
            let cwd = text("cwd")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| input.tool_ctx.workspace.root().to_path_buf());
            let (decision, reason) = input
                .approvals
                .decide_command_asking(&command, &cwd, &input.tool_ctx, &item_id)
                .await;
            let record = ApprovalRecord {
                kind: ApprovalKind::Command,
                item_id,
                subject: command,
                decision,
                reason,
            };
            (Some(record), json!({"decision": decision.as_str()}))
        }
        "item/fileChange/requestApproval" => {
            let grant_root = text("grantRoot");
            let (decision, reason) = input
                .approvals
                .decide_file_change_asking(
                    grant_root.as_deref(),
                    &text("reason").unwrap_or_default(),
                    input.tool_ctx.workspace.root(),
                    &input.tool_ctx,
                    &item_id,
                )
                .await;
            let record = ApprovalRecord {
                kind: ApprovalKind::FileChange,
                item_id,
                subject: text("reason").unwrap_or_default(),
                decision,
                reason,
            };
            (Some(record), json!({"decision": decision.as_str()}))
        }
        // Extra permissions are never granted: the sandbox chosen in the
        // params is the boundary.
        "item/permissions/requestApproval" => (None, json!({"permissions": {}, "scope": "turn"})),
        "item/tool/requestUserInput" => (None, json!({"answers": {}})),
        "mcpServer/elicitation/request" => (
            None,
            json!({"action": "decline", "content": null, "_meta": null}),
        ),
        "currentTime/read" => (
            None,
            json!({"currentTimeAt": crate::items::now_ms() / 1000}),
        ),
        // Legacy v1 approvals.
        "execCommandApproval" | "applyPatchApproval" => (None, json!({"decision": "denied"})),
        _ => {
            tracing::debug!(%method, "refused an unknown Codex request");
            if let Err(error) = conn
                .respond_error(id, METHOD_NOT_FOUND, "not handled by OpenClaw")
                .await
            {
                tracing::debug!(%error, "could not answer a Codex request");
            }
            return None;
        }
    };
    if let Some(record) = &record {
        tracing::info!(kind = ?record.kind, decision = record.decision.as_str(), reason = %record.reason, "answered a Codex approval request");
        if record.decision == Decision::Decline {
            tracing::debug!(subject = %record.subject, "declined");
        }
    }
    reply(conn, id, result).await;
    record
}

async fn reply(conn: &Connection, id: Value, result: Value) {
    if let Err(error) = conn.respond(id, result).await {
        tracing::debug!(%error, "could not answer a Codex request");
    }
}

async fn emit(events: &mpsc::Sender<HarnessEvent>, event: HarnessEvent) {
    // A listener that went away does not stop the turn.
    let _ = events.send(event).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_projection_goes_in_front_of_the_first_text_input() {
        let params = json!({"threadId": "", "input": [
            {"type": "image", "url": "u"},
            {"type": "text", "text": "hello", "text_elements": []},
        ]});
        let out = turn_params(&params, "t1", Some("EARLIER")).expect("params");
        assert_eq!(out["threadId"], "t1");
        assert_eq!(out["input"][1]["text"], "EARLIER\n\nhello");
        let plain = turn_params(&params, "t1", None).expect("params");
        assert_eq!(plain["input"][1]["text"], "hello");
        let empty = turn_params(&json!({}), "t1", Some("EARLIER")).expect("params");
        assert_eq!(empty["input"][0]["text"], "EARLIER");
        assert!(turn_params(&json!([]), "t1", None).is_err());
    }

    #[test]
    fn turn_statuses_map_from_codex() {
        assert_eq!(
            status_of(&json!({"status": "completed"})),
            TurnStatus::Completed
        );
        assert_eq!(
            status_of(&json!({"status": "interrupted"})),
            TurnStatus::Interrupted
        );
        assert_eq!(
            status_of(&json!({"status": "failed", "error": {"message": "boom"}})),
            TurnStatus::Failed {
                message: "boom".to_owned(),
                kind: String::new(),
                http_status: None,
            }
        );
    }

    #[test]
    fn a_providers_body_passed_on_as_other_tells_its_status() {
        let failed = |message: &str| {
            status_of(&json!({"status": "failed", "error": {
                "message": message, "codexErrorInfo": "other"}}))
        };
        let kind_of = |status: TurnStatus| match status {
            TurnStatus::Failed {
                kind, http_status, ..
            } => (kind, http_status),
            other => panic!("{other:?}"),
        };
        let body = |kind: &str, code: &str| {
            json!({"error": {"message": "m", "type": kind, "code": code}}).to_string()
        };
        assert_eq!(
            kind_of(failed(&body("invalid_request_error", ""))),
            ("other".to_owned(), Some(400))
        );
        assert_eq!(
            kind_of(failed(&body(
                "invalid_request_error",
                "context_length_exceeded"
            ))),
            ("contextWindowExceeded".to_owned(), Some(400))
        );
        assert_eq!(
            kind_of(failed(&body("requests", "rate_limit_exceeded"))),
            ("other".to_owned(), Some(429))
        );
        assert_eq!(
            kind_of(failed("stream disconnected before completion: gone")),
            ("other".to_owned(), None),
            "no body: Codex's own kind stays"
        );
        let named = status_of(&json!({"status": "failed", "error": {
            "message": body("invalid_request_error", ""),
            "codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": 502}}}}));
        assert_eq!(
            kind_of(named),
            ("httpConnectionFailed".to_owned(), Some(502)),
            "what Codex says wins"
        );
    }

    #[test]
    fn provider_errors_keep_what_codex_reports_of_them() {
        let generic = json!({
            "message": "We're currently experiencing high demand, which may cause temporary errors.",
            "codexErrorInfo": "internalServerError",
            "additionalDetails": null,
        });
        assert_eq!(
            error_message(&generic),
            "We're currently experiencing high demand, which may cause temporary errors. \
             [Codex error: internalServerError; the model provider answered HTTP 500]"
        );
        let body = json!({
            "message": r#"{"error":{"message":"bad tool schema","type":"invalid_request_error"}}"#,
            "codexErrorInfo": "other",
        });
        assert_eq!(error_message(&body), "bad tool schema");
        let gateway = json!({
            "message": "unexpected status 502 Bad Gateway: down",
            "codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": 502}},
            "additionalDetails": "retry later",
        });
        assert_eq!(
            error_message(&gateway),
            "unexpected status 502 Bad Gateway: down (retry later) \
             [Codex error: httpConnectionFailed; the model provider answered HTTP 502]"
        );
    }
}

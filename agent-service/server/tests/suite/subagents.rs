//! Subagents end to end (P-7, P-22, P-26, P-35): agent-service + a real
//! prompt-service over gRPC + two fake model servers, one answering the parent session and one
//! answering its children (`agents.defaults.subagents.model`), so each side's replies come in a
//! fixed order however the two sessions interleave.

use std::time::Duration;

use agent_testkit::{FakeReply, FakeServer, FakeServerHandle, WireFormat};
use openclaw_proto::agent::v1 as pb;
use pb::run_event::Event;
use serde_json::{Value, json};

use super::harness::{PromptService, Service};
use super::model_json::tool_names;
use super::run_events::{final_of, read_until};
use super::status::assert_holds;

const FORMAT: WireFormat = WireFormat::AnthropicMessages;

/// agent-service whose default agent runs on `parent` and whose subagents run on `child`.
struct Stack {
    service: Service,
    parent: FakeServerHandle,
    child: FakeServerHandle,
    _prompt: PromptService,
    config: String,
}

impl Stack {
    /// `subagents` goes into `agents.defaults.subagents` after the model (start it with a
    /// comma); `top_extra` at the top level (end it with a comma).
    async fn start(subagents: &str, top_extra: &str) -> Self {
        let (parent_url, parent) = FakeServer::start(FORMAT).await.expect("parent fake");
        let (child_url, child) = FakeServer::start(FORMAT).await.expect("child fake");
        let prompt = PromptService::start().await;
        let api = FORMAT.api();
        let config = format!(
            r#"{{
  agents: {{ defaults: {{ model: "fake/test-model",
    subagents: {{ model: "kid/kid-model" {subagents} }} }} }},
  models: {{ providers: {{
    fake: {{ baseUrl: "{parent_url}", api: "{api}", apiKey: "k", models: [{{ id: "test-model" }}] }},
    kid: {{ baseUrl: "{child_url}", api: "{api}", apiKey: "k", models: [{{ id: "kid-model" }}] }}
  }} }},
  {top_extra}
}}"#
        );
        let dir = tempfile::tempdir().expect("dir");
        let service = Service::start_full(dir, Some(&config), prompt.client()).await;
        Self {
            service,
            parent,
            child,
            _prompt: prompt,
            config,
        }
    }

    /// Stops agent-service gracefully and starts a new one on the same state dir and config.
    async fn restart(self) -> Self {
        let Self {
            service,
            parent,
            child,
            _prompt: prompt,
            config,
        } = self;
        let dir = service.stop().await;
        let service = Service::start_full(dir, Some(&config), prompt.client()).await;
        Self {
            service,
            parent,
            child,
            _prompt: prompt,
            config,
        }
    }

    fn workspace_file(&self, name: &str) -> std::path::PathBuf {
        self.service.path(&format!("state/workspace/{name}"))
    }

    async fn open_run(&self, message: &str) -> tonic::Streaming<pb::RunEvent> {
        self.service
            .open_run(pb::RunRequest {
                message: message.into(),
                ..Default::default()
            })
            .await
    }

    async fn watch(&self) -> tonic::Streaming<pb::RunEvent> {
        self.service.watch().await
    }

    /// The main session's entries as JSON.
    async fn transcript(&self) -> Vec<Value> {
        self.service.transcript_json().await
    }
}

fn is_terminal(e: &pb::RunEvent) -> bool {
    matches!(e.event, Some(Event::Final(_) | Event::Error(_)))
}

/// (tool name, is_error, output) of every finished tool call, in order.
fn tool_results(events: &[pb::RunEvent]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::ToolFinished(t)) => Some((t.name.clone(), t.is_error, t.output.clone())),
            _ => None,
        })
        .collect()
}

/// The text of every user message in a request body (Anthropic Messages shape).
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str().or(b["content"].as_str()))
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        })
        .collect()
}

/// Waits until `fake` has received `n` requests.
async fn wait_requests(fake: &FakeServerHandle, n: u64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while fake.request_count() < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the fake saw {} of {n} requests within 30 s",
            fake.request_count()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn spawn(call: &str, task: &str, label: &str) -> FakeReply {
    FakeReply::tool_call(
        call,
        "sessions_spawn",
        json!({ "task": task, "label": label }),
    )
}

fn subagents(call: &str, arguments: Value) -> FakeReply {
    FakeReply::tool_call(call, "subagents", arguments)
}

/// A child that finishes while its parent is still in its run: the result is steered into
/// that run (the run takes another model turn for it), not lost and not a second run. The
/// child is a minimal-mode subagent session with only AGENTS.md and TOOLS.md and the task as
/// its first user message.
#[tokio::test]
async fn a_result_arriving_mid_run_is_steered_into_the_parent() {
    let s = Stack::start("", "").await;
    std::fs::write(
        s.workspace_file("AGENTS.md"),
        "Agents marker: tidy desks.\n",
    )
    .unwrap();
    std::fs::write(
        s.workspace_file("TOOLS.md"),
        "Tools marker: the red hammer.\n",
    )
    .unwrap();
    std::fs::write(s.workspace_file("SOUL.md"), "Soul marker: speak softly.\n").unwrap();
    std::fs::write(s.workspace_file("USER.md"), "User marker: likes jazz.\n").unwrap();
    s.parent.push_all([
        spawn("s1", "Count the files in the archive.", "counter"),
        // The parent is still busy (this call is slow) when the child's result arrives.
        FakeReply::text("Started a counter; waiting for it.").delay(Duration::from_secs(4)),
        FakeReply::text("The archive holds 7 files."),
    ]);
    s.child.push(FakeReply::text("There are 7 files."));

    let mut stream = s.open_run("How many files are in the archive?").await;
    let events = read_until(&mut stream, is_terminal).await;
    let done = final_of(&events);
    assert_eq!(done.text, "The archive holds 7 files.");
    assert_eq!(done.steps, 3, "{events:?}");
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{results:?}");
    let (name, is_error, output) = &results[0];
    assert_eq!(name, "sessions_spawn");
    assert!(!is_error, "{output}");
    // The child's key names its parent (the main session).
    assert!(output.contains("agent:main:main:subagent:"), "{output}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.event, Some(Event::Handoff(_)))),
        "{events:?}"
    );

    // The third parent call carries the result as a user message after its own reply.
    let parent = s.parent.requests();
    assert_eq!(parent.len(), 3);
    let third = user_texts(&parent[2].body);
    let result = third.last().expect("a user message");
    assert!(
        result.starts_with("[Subagent Result] Subagent ")
            && result.contains("\"counter\"")
            && result.ends_with("There are 7 files."),
        "{third:?}"
    );
    assert!(
        !user_texts(&parent[1].body)
            .iter()
            .any(|t| t.contains("[Subagent"))
    );

    // The child: minimal prompt with AGENTS.md and TOOLS.md only, the task first.
    let child = s.child.requests();
    assert_eq!(child.len(), 1);
    let body = &child[0].body;
    let system = body["system"].to_string();
    assert!(system.contains("Agents marker: tidy desks."), "{system}");
    assert!(system.contains("Tools marker: the red hammer."), "{system}");
    assert!(!system.contains("Soul marker"), "{system}");
    assert!(!system.contains("User marker"), "{system}");
    assert!(!system.contains("## Heartbeat"), "{system}");
    assert!(!system.contains("## Sub-Agent Delegation"), "{system}");
    let first = user_texts(body);
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(
        first[0].starts_with("[Subagent Task]")
            && first[0].ends_with("Count the files in the archive."),
        "{first:?}"
    );
    assert!(!tool_names(body).iter().any(|t| t.starts_with("memory_")));

    // The parent transcript holds the result between the two replies, once.
    let entries = s.transcript().await;
    let results: Vec<&Value> = entries
        .iter()
        .filter(|e| {
            e["message"]["role"] == "user"
                && e["message"]["content"]
                    .to_string()
                    .contains("[Subagent Result]")
        })
        .collect();
    assert_eq!(results.len(), 1, "{entries:?}");
}

/// `subagents` lists the caller's children, steers a running one (the child takes the message
/// before its next model call) and an idle parent gets a run of its own for the result.
#[tokio::test]
async fn list_and_steer_a_running_child_then_take_its_result() {
    let s = Stack::start("", "").await;
    s.parent.push_all([
        spawn("s1", "Summarise the quarterly report.", "summary"),
        subagents("l1", json!({ "action": "list" })),
        subagents(
            "t1",
            json!({ "action": "steer", "id": "summary", "message": "Also count the pages." }),
        ),
        FakeReply::text("The summary is on its way."),
        FakeReply::text("Noted: summarised, 12 pages."),
    ]);
    s.child.push_all([
        // Still working when the steer arrives.
        FakeReply::tool_call("k1", "session_status", json!({})).delay(Duration::from_secs(3)),
        FakeReply::text("Report summarised; it has 12 pages."),
    ]);

    let mut stream = s.open_run("Please get the report summarised.").await;
    // The session exists once the run is accepted; its later runs show on the watch.
    let mut events = read_until(&mut stream, |e| matches!(e.event, Some(Event::Started(_)))).await;
    let mut watch = s.watch().await;
    events.extend(read_until(&mut stream, is_terminal).await);
    assert_eq!(final_of(&events).text, "The summary is on its way.");
    let results = tool_results(&events);
    assert_eq!(results.len(), 3, "{results:?}");
    let (_, list_error, list) = &results[1];
    assert!(!list_error, "{list}");
    assert!(
        list.contains("1 subagent(s)") && list.contains("\"summary\": running"),
        "{list}"
    );
    let (_, steer_error, steer) = &results[2];
    assert!(!steer_error, "{steer}");
    assert!(steer.contains("Message delivered"), "{steer}");

    // The child's second call carries the steered message after its tool result.
    wait_requests(&s.child, 2).await;
    let child = s.child.requests();
    let texts = user_texts(&child[1].body);
    assert!(
        texts.iter().any(
            |t| t.contains("[Message from the session that started you] Also count the pages.")
        ),
        "{texts:?}"
    );

    // The parent was idle when the result came: it starts a run of its own.
    let first_run = events.last().map(|e| e.run).unwrap_or_default();
    let next = read_until(&mut watch, |e| e.run > first_run && is_terminal(e)).await;
    let second: Vec<pb::RunEvent> = next.into_iter().filter(|e| e.run > first_run).collect();
    assert_eq!(final_of(&second).text, "Noted: summarised, 12 pages.");
    let parent = s.parent.requests();
    assert_eq!(parent.len(), 5);
    let last = user_texts(&parent[4].body);
    assert!(
        last.last()
            .is_some_and(|t| t.ends_with("Report summarised; it has 12 pages.")),
        "{last:?}"
    );
}

/// A killed child stops, shows as killed, cannot be steered, and sends no result.
#[tokio::test]
async fn a_killed_child_stops_and_reports_nothing() {
    let s = Stack::start("", "").await;
    s.parent.push_all([
        spawn("s1", "Crawl every page of the site.", "crawler"),
        subagents("k1", json!({ "action": "kill", "id": "crawler" })),
        subagents("l1", json!({ "action": "list" })),
        subagents(
            "t1",
            json!({ "action": "steer", "id": "crawler", "message": "Faster." }),
        ),
        subagents("k2", json!({ "action": "kill", "id": "nobody" })),
        FakeReply::text("Stopped the crawler."),
    ]);
    s.child
        .push(FakeReply::text("Crawled everything.").delay(Duration::from_secs(3)));

    let mut stream = s.open_run("Crawl the site, then stop.").await;
    let events = read_until(&mut stream, is_terminal).await;
    assert_eq!(final_of(&events).text, "Stopped the crawler.");
    let results = tool_results(&events);
    assert_eq!(results.len(), 5, "{results:?}");
    let (_, kill_error, kill) = &results[1];
    assert!(!kill_error && kill.contains("stopped"), "{kill}");
    assert!(
        results[2].2.contains("\"crawler\": killed"),
        "{:?}",
        results[2]
    );
    let (_, steer_error, steer) = &results[3];
    assert!(
        *steer_error && steer.contains("no longer running (it is killed)"),
        "{steer}"
    );
    let (_, unknown_error, unknown) = &results[4];
    assert!(
        *unknown_error && unknown.contains("no subagent \"nobody\""),
        "{unknown}"
    );

    // Well past the child's slow reply: no result reached the parent.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(s.parent.request_count(), 6);
    let entries = s.transcript().await;
    assert!(
        !entries
            .iter()
            .any(|e| e.to_string().contains("[Subagent Result]")
                || e.to_string().contains("[Subagent Failed]")),
        "{entries:?}"
    );
}

/// `maxConcurrent` and `maxDepth` refuse with a tool error the model reads; the refused spawn
/// starts nothing, and the allowed child still reports back.
#[tokio::test]
async fn limits_are_refused_with_a_clear_tool_error() {
    let s = Stack::start(", maxConcurrent: 1, maxDepth: 1", "").await;
    s.parent.push_all([
        spawn("s1", "Check the first mirror.", "first"),
        spawn("s2", "Check the second mirror.", "second"),
        FakeReply::text("One check is running."),
        FakeReply::text("The first mirror is fine."),
    ]);
    s.child.push_all([
        // The child tries to delegate further and is told it is too deep.
        spawn("n1", "Check a sub-mirror.", "nested").delay(Duration::from_secs(2)),
        FakeReply::text("Mirror one is fine."),
    ]);

    let mut stream = s.open_run("Check both mirrors.").await;
    let mut events = read_until(&mut stream, |e| matches!(e.event, Some(Event::Started(_)))).await;
    let mut watch = s.watch().await;
    events.extend(read_until(&mut stream, is_terminal).await);
    let results = tool_results(&events);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(!results[0].1, "{:?}", results[0]);
    let (_, busy_error, busy) = &results[1];
    assert!(*busy_error, "{busy}");
    assert_holds(
        busy,
        &[
            "sessions_spawn refused",
            "already running",
            "subagents.maxConcurrent = 1",
        ],
    );

    // The child's refused spawn reaches it as an error tool result.
    wait_requests(&s.child, 2).await;
    let child = s.child.requests();
    let second = child[1].body.to_string();
    assert!(
        second.contains("subagents.maxDepth is 1") && second.contains("cannot start subagents"),
        "{second}"
    );

    // Only one child ever ran; its result still comes back to the parent.
    let first_run = events.last().map(|e| e.run).unwrap_or_default();
    if s.parent.request_count() < 4 {
        read_until(&mut watch, |e| e.run > first_run && is_terminal(e)).await;
    }
    wait_requests(&s.parent, 4).await;
    let parent = s.parent.requests();
    assert!(
        user_texts(&parent[3].body)
            .last()
            .is_some_and(|t| t.ends_with("Mirror one is fine.")),
        "{:?}",
        user_texts(&parent[3].body)
    );
    assert_eq!(s.child.request_count(), 2);
}

/// `delegationMode: "prefer"` adds the delegation section while `sessions_spawn` is offered,
/// and tool policy that removes the tool removes the section (P-22).
#[tokio::test]
async fn prefer_delegation_follows_the_spawn_tool() {
    let with_tool = Stack::start(", delegationMode: \"prefer\"", "").await;
    with_tool.parent.push(FakeReply::text("Hi."));
    let mut stream = with_tool.open_run("Hello.").await;
    read_until(&mut stream, is_terminal).await;
    let body = &with_tool.parent.requests()[0].body;
    assert!(tool_names(body).contains(&"sessions_spawn".to_owned()));
    assert!(
        body["system"]
            .to_string()
            .contains("## Sub-Agent Delegation")
    );

    let without = Stack::start(
        ", delegationMode: \"prefer\"",
        "tools: { deny: [\"sessions_spawn\"] },",
    )
    .await;
    without.parent.push(FakeReply::text("Hi."));
    let mut stream = without.open_run("Hello.").await;
    read_until(&mut stream, is_terminal).await;
    let body = &without.parent.requests()[0].body;
    assert!(!tool_names(body).contains(&"sessions_spawn".to_owned()));
    assert!(
        !body["system"]
            .to_string()
            .contains("## Sub-Agent Delegation")
    );
}

/// A child cut short by a stop of agent-service is not forgotten: the registry is on disk, and
/// at the next start the parent is told (a run starts for the message); a further restart does
/// not tell it twice.
#[tokio::test]
async fn a_child_cut_short_by_a_restart_is_reported_to_its_parent_after_it() {
    let s = Stack::start("", "").await;
    s.parent.push_all([
        spawn("s1", "Index the whole archive.", "indexer"),
        FakeReply::text("Started an indexer."),
    ]);
    // The child's model call outlasts the service.
    s.child
        .push(FakeReply::text("Indexed.").delay(Duration::from_secs(60)));
    let mut stream = s.open_run("Index the archive, please.").await;
    let events = read_until(&mut stream, is_terminal).await;
    assert_eq!(final_of(&events).text, "Started an indexer.");
    wait_requests(&s.child, 1).await;
    let registry = s.service.path("state/subagents.json");
    let stored: Value = serde_json::from_slice(&std::fs::read(&registry).unwrap()).unwrap();
    assert_eq!(stored["children"][0]["status"], "running", "{stored}");

    s.parent.push(FakeReply::text(
        "The indexer was interrupted; I will restart it later.",
    ));
    let s = s.restart().await;
    wait_requests(&s.parent, 3).await;
    let told = user_texts(&s.parent.requests()[2].body);
    let last = told.last().expect("a user message");
    assert!(
        last.starts_with("[Subagent Failed] Subagent ") && last.contains("\"indexer\""),
        "{told:?}"
    );
    let stored: Value = serde_json::from_slice(&std::fs::read(&registry).unwrap()).unwrap();
    let child = &stored["children"][0];
    assert_eq!(child["status"], "failed", "{stored}");
    assert!(child.get("pendingResult").is_none(), "delivered: {stored}");

    // Once told, never again: another restart pushes nothing.
    let s = s.restart().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.parent.request_count(), 3);
    let mentions = s
        .transcript()
        .await
        .iter()
        .filter(|e| {
            e["message"]["content"]
                .to_string()
                .contains("[Subagent Failed]")
        })
        .count();
    assert_eq!(mentions, 1);
}

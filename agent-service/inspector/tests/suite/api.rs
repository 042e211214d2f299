//! The JSON API and the event stream over a real socket.

use std::time::Duration;

use agent_testkit::{FakeReply, FakeUsage};
use serde_json::json;

use super::harness::{Inspected, KEY, main_session, next_approval, next_picked, read_until};

fn usage(input: u64, output: u64, cache_read: u64) -> FakeUsage {
    FakeUsage {
        input,
        output,
        cache_read,
        cache_write: 0,
    }
}

/// Sessions with their counters, searched; a transcript paged from the end and from an
/// offset, with a tool call beside its result; bad parameters answered with 400 and 404.
#[tokio::test]
async fn lists_sessions_and_pages_a_transcript() {
    let h = Inspected::start(&[]).await;
    std::fs::write(
        h.path("state/workspace/notes.txt"),
        "The launch code is 1234.",
    )
    .expect("note");
    h.fake.push_all([
        FakeReply::tool_call("call-1", "read", json!({ "path": "notes.txt" }))
            .usage(usage(50, 7, 0)),
        FakeReply::text("The note says 1234.").usage(usage(60, 5, 40)),
        FakeReply::text("Second answer.").usage(usage(70, 3, 50)),
    ]);
    assert_eq!(
        h.run("What does notes.txt say?").await,
        "The note says 1234."
    );
    assert_eq!(h.run("And again?").await, "Second answer.");

    let agents = h.ok("/api/agents").await;
    assert_eq!(agents["agents"][0]["id"], "main");
    assert_eq!(agents["agents"][0]["is_default"], true);
    assert_eq!(agents["agents"][0]["model"], "fake/test-model");

    let sessions = h.ok("/api/sessions").await;
    let main = &sessions["sessions"][0];
    assert_eq!(main["key"], KEY, "{sessions}");
    assert_eq!(main["output_tokens"], 15, "{main}");
    assert_eq!(main["compactions"], 0);
    assert!(
        main["last_activity"].as_i64().unwrap_or_default() > 0,
        "{main}"
    );
    assert_eq!(main["running"], false);
    let found = h.ok("/api/sessions?q=MAIN:MA").await;
    assert_eq!(found["sessions"].as_array().map(Vec::len), Some(1));
    let none = h.ok("/api/sessions?q=no-such-session").await;
    assert_eq!(none["sessions"], json!([]));

    // user, assistant (tool call), tool result, assistant, user, assistant; plus whatever
    // bookkeeping entries the runtime writes before them.
    let whole = h
        .ok(&format!(
            "/api/transcript?{}&offset=0&limit=500",
            main_session()
        ))
        .await;
    let total = whole["total"].as_u64().expect("total");
    let entries = whole["entries"].as_array().expect("entries");
    assert_eq!(entries.len() as u64, total);
    let messages: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["entry"]["message"]["role"].as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant"
        ]
    );
    let call = entries
        .iter()
        .find_map(|e| {
            e["entry"]["message"]["content"]
                .as_array()?
                .iter()
                .find(|b| b["type"] == "toolCall")
                .cloned()
        })
        .expect("a tool call");
    assert_eq!(call["id"], "call-1");
    assert_eq!(whole["header"]["type"], "session");

    // The last page by default.
    let last = h
        .ok(&format!("/api/transcript?{}&limit=2", main_session()))
        .await;
    assert_eq!(last["total"].as_u64(), Some(total));
    assert_eq!(last["offset"].as_u64(), Some(total - 2));
    let page: Vec<u64> = last["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| e["index"].as_u64().expect("index"))
        .collect();
    assert_eq!(page, [total - 2, total - 1]);
    assert_eq!(
        last["entries"][1]["entry"]["message"]["content"][0]["text"],
        "Second answer."
    );
    // A page from an offset.
    let one = h
        .ok(&format!(
            "/api/transcript?{}&offset=1&limit=1",
            main_session()
        ))
        .await;
    assert_eq!(one["entries"].as_array().map(Vec::len), Some(1));
    assert_eq!(one["entries"][0]["index"], 1);
    assert_eq!(one["entries"][0]["entry"], entries[1]["entry"]);

    let (status, body) = h
        .get(&format!("/api/transcript?{}&limit=0", main_session()))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("limit: must be between 1 and 500"))
    );
    let (status, body) = h.get("/api/transcript?agent=main").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("key: a session key is required"))
    );
    let (status, body) = h
        .get("/api/transcript?agent=main&key=agent:main:nobody")
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = h.get("/api/sessions?agent=ghost").await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"].as_str().unwrap_or_default().contains("ghost"),
        "{body}"
    );
}

/// Each model call is kept with its prompt; a changed AGENTS.md shows as a cache break in the
/// project-context section, with the changed line on both sides of the diff; the layers of a
/// call and of the next call carry sections, files, skills and tools.
#[tokio::test]
async fn model_calls_layers_and_cache_breaks() {
    let h = Inspected::start(&[]).await;
    let agents_md = h.path("state/workspace/AGENTS.md");
    std::fs::write(&agents_md, "# Rules\n\nAlways answer in English.\n").expect("AGENTS.md");
    h.create_main_session().await;
    h.observe().await;
    h.fake.push_all([
        FakeReply::text("one").usage(usage(100, 1, 0)),
        FakeReply::text("two").usage(usage(10, 1, 90)),
        FakeReply::text("three").usage(usage(100, 1, 0)),
    ]);
    h.run("first").await;
    h.run("second").await;
    std::fs::write(&agents_md, "# Rules\n\nAlways answer in French.\n").expect("AGENTS.md");
    h.run("third").await;

    let turns = h.ok(&format!("/api/turns?{}", main_session())).await;
    let list = turns["turns"].as_array().expect("turns");
    assert_eq!(list.len(), 3, "{turns}");
    assert!(list.iter().all(|t| t["has_prompt"] == true), "{turns}");
    assert_eq!(list[1]["hash_changed"], false, "{turns}");
    assert_eq!(list[1]["usage"]["cacheRead"], 90, "{turns}");
    assert_eq!(list[2]["hash_changed"], true, "{turns}");
    assert_eq!(list[2]["prefix_changed"], true, "{turns}");
    let changed: Vec<String> = list[2]["changed_sections"]
        .as_array()
        .expect("changed")
        .iter()
        .map(|s| s.as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        changed.iter().any(|s| s.contains("AGENTS.md")),
        "{changed:?}"
    );

    let third = list[2]["index"].as_u64().expect("index");
    let cb = h
        .ok(&format!("/api/cache-break?{}&turn={third}", main_session()))
        .await;
    assert_eq!(cb["hash_changed"], true, "{cb}");
    assert_eq!(cb["previous_index"], list[1]["index"]);
    let first = cb["first_changed"].as_str().expect("first changed");
    assert!(first.contains("AGENTS.md"), "{cb}");
    let section = &cb["sections"][0];
    assert_eq!(section["change"], "changed", "{cb}");
    let rows = section["diff"].as_array().expect("a diff");
    let replaced = rows
        .iter()
        .find(|r| r["kind"] == "replace")
        .expect("a replaced line");
    assert_eq!(replaced["old"], "Always answer in English.", "{rows:?}");
    assert_eq!(replaced["new"], "Always answer in French.", "{rows:?}");
    // The unchanged call before it: no break.
    let second = list[1]["index"].as_u64().expect("index");
    let same = h
        .ok(&format!(
            "/api/cache-break?{}&turn={second}",
            main_session()
        ))
        .await;
    assert_eq!(same["hash_changed"], false, "{same}");
    assert_eq!(same["sections"], json!([]), "{same}");

    let layers = h
        .ok(&format!("/api/layers?{}&turn={third}", main_session()))
        .await;
    assert_eq!(layers["source"], "turn");
    let l = &layers["layers"];
    let sections = l["sections"].as_array().expect("sections");
    assert!(sections.iter().any(|s| s["layer"] == "stable"), "{l}");
    assert!(sections.iter().any(|s| s["layer"] == "dynamic"), "{l}");
    assert!(
        sections.iter().all(|s| s["text"].is_string()),
        "every section is cut out of the prompt: {l}"
    );
    let sum: u64 = sections
        .iter()
        .map(|s| s["chars"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        sum,
        l["stable_chars"].as_u64().unwrap_or(0) + l["dynamic_chars"].as_u64().unwrap_or(0)
    );
    assert_eq!(l["stable_prefix_sha256"], list[2]["stable_prefix_sha256"]);
    let file = l["bootstrap"]["files"]
        .as_array()
        .expect("files")
        .iter()
        .find(|f| f["path"].as_str().is_some_and(|p| p.ends_with("AGENTS.md")))
        .cloned()
        .expect("AGENTS.md reported");
    assert_eq!(file["status"], "injected", "{file}");
    assert_eq!(file["raw_chars"], 34, "{file}");
    assert!(
        l["tools"]["entries"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{l}"
    );
    assert!(l["tools"]["schema_chars"].as_u64().unwrap_or(0) > 0, "{l}");

    // The next call's prompt (a preview, through the runtime's own preview).
    let next = h.ok(&format!("/api/layers?{}", main_session())).await;
    assert_eq!(next["source"], "preview");
    assert_eq!(next["model"], "fake/test-model");
    assert_eq!(
        next["layers"]["stable_prefix_sha256"],
        list[2]["stable_prefix_sha256"]
    );

    let (status, body) = h
        .get(&format!("/api/cache-break?{}&turn=999", main_session()))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("turn: no such model call is remembered"))
    );
}

/// A run shows on the event stream as it happens: started, the model call, text, final.
#[tokio::test]
async fn the_event_stream_carries_a_live_run() {
    let h = Inspected::start(&[]).await;
    h.create_main_session().await;
    h.fake
        .push(FakeReply::text("Streaming reply here").deltas(3));
    let mut response = reqwest::get(format!("{}/api/events?{}", h.http, main_session()))
        .await
        .expect("events");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().ok(),
        Some("text/event-stream")
    );
    // The first event says the stream is subscribed: a run started now is seen whole.
    let mut seen = String::new();
    read_until(&mut response, &mut seen, "event: watching").await;
    let mut stream = h.start_run("hello").await;
    let run = tokio::spawn(async move {
        stream.message().await.expect("first event");
    });
    read_until(&mut response, &mut seen, "event: final").await;
    run.await.expect("run task");
    let names: Vec<&str> = seen
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    let at = |name: &str| names.iter().position(|n| *n == name);
    assert!(at("started") < at("model_call"), "{names:?}");
    assert!(at("model_call") < at("text"), "{names:?}");
    assert!(at("text") < at("final"), "{names:?}");
    assert!(seen.contains(r#""text":"Streaming reply here""#), "{seen}");
}

/// A session's exec approvals: the pending one while its tool call waits, then the same
/// one decided, with who decided; a session that does not exist is 404, no key is 400.
#[tokio::test]
async fn the_approvals_of_a_session() {
    use openclaw_proto::agent::v1 as pb;
    let h = Inspected::start(&[]).await;
    h.create_main_session().await;
    let (_, empty) = h.get(&format!("/api/approvals?{}", main_session())).await;
    assert_eq!(empty["approvals"], json!([]), "{empty}");
    h.fake.push_all([
        FakeReply::tool_call("call-1", "exec", json!({ "command": "touch waited.txt" })),
        FakeReply::text("Done."),
    ]);
    let mut stream = h.start_run("Make the file.").await;
    let approval = next_approval(&mut stream).await;
    let body = h.ok(&format!("/api/approvals?{}", main_session())).await;
    assert_eq!(body["key"], KEY, "{body}");
    let listed = body["approvals"].as_array().expect("approvals");
    assert_eq!(listed.len(), 1, "{body}");
    assert_eq!(listed[0]["id"], approval.id.as_str());
    assert_eq!(listed[0]["state"], "pending");
    assert_eq!(listed[0]["command"], "touch waited.txt");
    assert_eq!(listed[0]["session_key"], KEY);
    assert!(
        listed[0]["expires_at_ms"].as_i64().unwrap_or_default() > 0,
        "{body}"
    );
    assert!(!h.path("state/workspace/waited.txt").exists());

    h.decide(&approval.id, pb::ApprovalDecision::Deny).await;
    while stream.message().await.expect("stream").is_some() {}
    let body = h.ok(&format!("/api/approvals?{}", main_session())).await;
    let listed = body["approvals"].as_array().expect("approvals");
    assert_eq!(listed.len(), 1, "{body}");
    assert_eq!(listed[0]["state"], "denied");
    assert_eq!(listed[0]["decided_by"], "ada");
    assert!(!h.path("state/workspace/waited.txt").exists());

    let (status, body) = h.get("/api/approvals?agent=main&key=agent:main:nope").await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = h.get("/api/approvals?agent=main").await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("key:"),
        "{body}"
    );
}

/// With tokens, nothing passes without one: a bearer header or the cookie `/?token=` sets.
/// Every answer carries the Content-Security-Policy; nothing but GET is routed.
#[tokio::test]
async fn tokens_cookie_security_headers_and_read_only() {
    let h = Inspected::start(&["inspect-token-1"]).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let url = |path: &str| format!("{}{path}", h.http);

    let refused = client.get(url("/api/agents")).send().await.expect("GET");
    assert_eq!(refused.status(), 401);
    let csp = refused.headers()["content-security-policy"]
        .to_str()
        .expect("csp")
        .to_owned();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    let page = client.get(url("/")).send().await.expect("GET");
    assert_eq!(page.status(), 401, "the page asks for the token too");

    let ok = client
        .get(url("/api/agents"))
        .bearer_auth("inspect-token-1")
        .send()
        .await
        .expect("GET");
    assert_eq!(ok.status(), 200);
    let wrong = client
        .get(url("/api/agents"))
        .bearer_auth("inspect-token-2")
        .send()
        .await
        .expect("GET");
    assert_eq!(wrong.status(), 401);

    let bad = client.get(url("/?token=nope")).send().await.expect("GET");
    assert_eq!(bad.status(), 401);
    let login = client
        .get(url("/?token=inspect-token-1"))
        .send()
        .await
        .expect("GET");
    assert_eq!(login.status(), 303);
    assert_eq!(login.headers()["location"], "/");
    let cookie = login.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().expect("name=value").to_owned();
    let page = client
        .get(url("/"))
        .header("cookie", &pair)
        .send()
        .await
        .expect("GET");
    assert_eq!(page.status(), 200);
    assert!(page.headers().contains_key("content-security-policy"));
    let html = page.text().await.expect("html");
    assert!(
        html.contains(r#"<script src="/app.js" defer></script>"#),
        "{html}"
    );
    let script = client
        .get(url("/app.js"))
        .header("cookie", &pair)
        .send()
        .await
        .expect("GET");
    assert_eq!(script.status(), 200);
    assert_eq!(
        script.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );

    let post = client
        .post(url("/api/sessions"))
        .bearer_auth("inspect-token-1")
        .send()
        .await
        .expect("POST");
    assert_eq!(post.status(), 405, "the API is read-only");
}

/// Without tokens the inspector serves loopback only.
#[tokio::test]
async fn refuses_other_hosts_without_tokens() {
    let wildcard = "0.0.0.0:9".parse().expect("addr");
    let refusal = agent_inspector::check_listen(wildcard, None).expect_err("refused");
    assert!(
        refusal.starts_with("refusing to serve the inspector on 0.0.0.0:9 without bearer tokens"),
        "{refusal}"
    );
    let tokens = service_kit::TokenSet::new(&["t0ken-for-test"]);
    assert!(agent_inspector::check_listen(wildcard, tokens.as_ref()).is_ok());
    assert!(agent_inspector::check_listen("127.0.0.1:9".parse().expect("addr"), None).is_ok());
}

/// A raw HTTP/1.1 request to the inspector with `host` in its Host header; the status line
/// and the whole response.
async fn raw_get(http: &str, path: &str, host: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = http.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("response");
    let status = response.lines().next().unwrap_or_default().to_owned();
    (status, response)
}

/// Without tokens, a request naming another host (a DNS-rebinding page's own name) is refused
/// with 421; loopback names and the listen address are answered.
#[tokio::test]
async fn without_tokens_a_request_for_another_host_is_misdirected() {
    let h = Inspected::start(&[]).await;
    let port = h.http.rsplit(':').next().expect("port").to_owned();
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_owned(),
        format!("localhost.evil.example:{port}"),
    ] {
        let (status, response) = raw_get(&h.http, "/api/sessions", &host).await;
        assert!(status.contains(" 421 "), "{host}: {response}");
        assert!(!response.contains(KEY), "{host}: {response}");
        assert!(
            response.contains("answers only requests addressed to"),
            "{response}"
        );
    }
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let (status, response) = raw_get(&h.http, "/api/sessions", &host).await;
        assert!(status.contains(" 200 "), "{host}: {response}");
    }
}

/// Silent connections to the inspector are bounded and closed when idle: the page is still
/// served afterwards.
#[tokio::test]
async fn silent_connections_are_bounded_and_closed() {
    let limits = service_kit::ConnectionLimits {
        max_connections: 3,
        idle_timeout: Duration::from_millis(400),
    };
    let h = Inspected::start_with(&[], limits).await;
    let addr = h.http.trim_start_matches("http://").to_owned();
    let mut silent = Vec::new();
    for _ in 0..12 {
        silent.push(
            tokio::net::TcpStream::connect(&addr)
                .await
                .expect("connect"),
        );
    }
    for mut stream in silent {
        use tokio::io::AsyncReadExt;
        let mut sink = Vec::new();
        tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut sink))
            .await
            .expect("the inspector closed a silent connection")
            .ok();
    }
    let port = h.http.rsplit(':').next().expect("port").to_owned();
    let (status, response) = raw_get(&h.http, "/api/agents", &format!("127.0.0.1:{port}")).await;
    assert!(status.contains(" 200 "), "{response}");
}

/// A list longer than a page comes a page at a time, most recent first, without overlap; a
/// refresh that names the version it has gets `unchanged` until a row it shows changes;
/// page sizes out of range are refused.
#[tokio::test]
async fn a_long_session_list_is_paged_and_a_refresh_of_nothing_new_is_tiny() {
    let h = Inspected::start(&[]).await;
    let mut grpc = h.client().await;
    for n in 0..120 {
        grpc.create_session(openclaw_proto::agent::v1::CreateSessionRequest {
            session_key: format!("agent:main:probe-{n:03}"),
            ..Default::default()
        })
        .await
        .expect("create session");
    }
    h.fake.push(FakeReply::text("Hello."));
    assert_eq!(h.run("hi").await, "Hello.");

    let first = h.ok("/api/sessions?limit=50").await;
    assert_eq!(first["total"], 121, "{first}");
    let keys = |page: &serde_json::Value| -> Vec<String> {
        page["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .map(|s| s["key"].as_str().expect("key").to_owned())
            .collect()
    };
    let one = keys(&first);
    assert_eq!(one.len(), 50);
    assert_eq!(one[0], KEY, "the session that just ran comes first");
    let two = keys(&h.ok("/api/sessions?limit=50&offset=50").await);
    let three = keys(&h.ok("/api/sessions?limit=50&offset=100").await);
    assert_eq!((two.len(), three.len()), (50, 21));
    let mut all: Vec<&String> = one.iter().chain(&two).chain(&three).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 121, "pages overlap or miss sessions");

    // Nothing changed: a refresh answers in a few bytes.
    let version = first["version"].as_str().expect("version").to_owned();
    let again = h
        .ok(&format!("/api/sessions?limit=50&since={version}"))
        .await;
    assert_eq!(again, json!({ "unchanged": true, "version": version }));
    // A run changes the first row's counters: the refresh carries the page again.
    h.fake
        .push(FakeReply::text("Again.").usage(usage(10, 4, 0)));
    assert_eq!(h.run("again").await, "Again.");
    let changed = h
        .ok(&format!("/api/sessions?limit=50&since={version}"))
        .await;
    assert_eq!(
        changed["sessions"].as_array().map(Vec::len),
        Some(50),
        "{changed}"
    );
    assert_ne!(changed["version"], json!(version));

    // Search is server-side and counts what matched.
    let found = h.ok("/api/sessions?q=probe-11&limit=5").await;
    assert_eq!(found["total"], 10, "{found}");
    assert_eq!(found["sessions"].as_array().map(Vec::len), Some(5));

    for bad in ["limit=0", "limit=1001"] {
        let (status, body) = h.get(&format!("/api/sessions?{bad}")).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("limit: must be between 1 and 1000")),
            "{bad}"
        );
    }
    let (status, body) = h.get("/api/session?agent=main").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("key: a session key is required"))
    );
    let head = h.ok(&format!("/api/session?{}", main_session())).await;
    assert_eq!(head["session"]["key"], KEY);
    assert_eq!(head["active_run"], serde_json::Value::Null);
}

/// A page that starts watching while a run is going learns that run's number at once, then
/// sees the rest of it.
#[tokio::test]
async fn a_watcher_that_arrives_mid_run_is_told_of_it() {
    let h = Inspected::start(&[]).await;
    h.create_main_session().await;
    h.fake
        .push(FakeReply::text("Slow reply").delay(Duration::from_secs(2)));
    let mut stream = h.start_run("hello").await;
    // The run is going once its `started` event arrives.
    let run = next_picked(&mut stream, |event| match event.event {
        Some(openclaw_proto::agent::v1::run_event::Event::Started(_)) => Some(event.run),
        _ => None,
    })
    .await;
    let head = h.ok(&format!("/api/session?{}", main_session())).await;
    assert_eq!(head["active_run"], run, "{head}");

    let mut response = reqwest::get(format!("{}/api/events?{}", h.http, main_session()))
        .await
        .expect("events");
    let mut seen = String::new();
    read_until(&mut response, &mut seen, "event: final").await;
    let hello = seen
        .lines()
        .skip_while(|l| *l != "event: watching")
        .find_map(|l| l.strip_prefix("data: "))
        .expect("the greeting's data");
    let hello: serde_json::Value = serde_json::from_str(hello).expect("JSON");
    assert_eq!(hello["active_run"], run, "{seen}");
    assert!(seen.contains(r#""text":"Slow reply""#), "{seen}");
    // What followed belongs to that run.
    assert!(seen.contains(&format!(r#""run":{run}"#)), "{seen}");
    while stream.message().await.expect("stream").is_some() {}
}

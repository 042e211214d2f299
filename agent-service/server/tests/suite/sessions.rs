//! Agents, sessions and transcripts over gRPC (R-1, R-10).

use std::io::Write;

use agent_runtime::{
    config::resolve::AgentView,
    sessions::{SessionInfo, SessionTarget},
};
use openclaw_proto::agent::v1 as pb;
use openclaw_transcript::{EntryBody, Message, UserContent, UserMessage};
use tonic::Code;
use tonic_health::pb::health_check_response::ServingStatus;

use super::calls::{assert_health, call, refusal, stream_refusal};
use super::harness::{Service, StartOptions};
use super::status::{assert_status, assert_status_starts};

const TWO_AGENTS: &str = r#"{
  // JSON5: comments and trailing commas are fine.
  agents: {
    list: [
      { id: "main", name: "Clawd" },
      { id: "work", default: true, workspace: "~/work-ws" },
    ],
  },
}"#;

fn key_ref(agent: &str, key: &str) -> Option<pb::SessionRef> {
    Some(pb::SessionRef {
        agent_id: agent.into(),
        target: Some(pb::session_ref::Target::SessionKey(key.into())),
    })
}

fn id_ref(agent: &str, id: &str) -> Option<pb::SessionRef> {
    Some(pb::SessionRef {
        agent_id: agent.into(),
        target: Some(pb::session_ref::Target::SessionId(id.into())),
    })
}

fn user(text: &str) -> EntryBody {
    EntryBody::Message {
        message: Message::User(UserMessage {
            content: UserContent::Text(text.into()),
            timestamp: 0,
        }),
    }
}

/// Creates the default agent's main session over the API.
async fn create_main(service: &Service) -> pb::Session {
    call!(service, create_session, pb::CreateSessionRequest::default())
        .session
        .expect("session")
}

/// Appends `bodies` to the default agent's session `target` through its session actor
/// (`sync` as the actor's append takes it); returns the agent and the session it wrote.
async fn append_to(
    service: &Service,
    target: SessionTarget,
    bodies: Vec<EntryBody>,
    sync: bool,
) -> (AgentView, SessionInfo) {
    let agent = service.runtime.agents().view("").expect("agent");
    let info = service
        .runtime
        .sessions()
        .get("", &target)
        .await
        .expect("info");
    service
        .runtime
        .sessions()
        .manager()
        .writable(&agent, &info, &agent.workspace)
        .expect("live session")
        .append(bodies, sync)
        .await
        .expect("append");
    (agent, info)
}

async fn transcript(
    service: &Service,
    session: Option<pb::SessionRef>,
) -> (Vec<pb::TranscriptEntry>, pb::LoadReport) {
    let mut stream = call!(
        service,
        get_transcript,
        pb::GetTranscriptRequest { session }
    );
    let mut entries = Vec::new();
    let mut report = None;
    while let Some(item) = stream.message().await.expect("stream") {
        match item.item.expect("item") {
            pb::transcript_item::Item::Entry(e) => entries.push(e),
            pb::transcript_item::Item::Report(r) => report = Some(r),
        }
    }
    (entries, report.expect("a report ends the stream"))
}

/// R-1: each configured agent with its own workspace; the default is the one marked default.
#[tokio::test]
async fn lists_agents_with_the_default_marked() {
    let service = Service::start(Some(TWO_AGENTS)).await;
    let agents = call!(service, list_agents, pb::ListAgentsRequest {}).agents;
    let summary: Vec<(String, bool, String)> = agents
        .iter()
        .map(|a| (a.id.clone(), a.is_default, a.workspace.clone()))
        .collect();
    let home = service.root().display().to_string();
    assert_eq!(
        summary,
        [
            (
                "main".to_owned(),
                false,
                format!("{home}/state/workspace-main")
            ),
            ("work".to_owned(), true, format!("{home}/work-ws")),
        ]
    );
}

#[tokio::test]
async fn session_lifecycle_create_get_list_reset_delete() {
    let service = Service::start(Some(TWO_AGENTS)).await;
    let mut client = service.client().await;
    let created = client
        .create_session(pb::CreateSessionRequest {
            agent_id: "main".into(),
            session_key: "telegram:direct:42".into(),
            channel: "telegram".into(),
            chat_type: pb::ChatType::Direct as i32,
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    assert!(created.created);
    let session = created.session.expect("session");
    assert_eq!(session.session_key, "agent:main:telegram:direct:42");
    assert_eq!(session.chat_type(), pb::ChatType::Direct);
    // R-10: the transcript exists at <stateDir>/agents/<agentId>/sessions/<id>.jsonl with a header.
    let file = service.path(&format!(
        "state/agents/main/sessions/{}.jsonl",
        session.session_id
    ));
    assert!(file.exists(), "{}", file.display());

    let again = client
        .create_session(pb::CreateSessionRequest {
            agent_id: "main".into(),
            session_key: "agent:main:telegram:direct:42".into(),
            ..Default::default()
        })
        .await
        .expect("again")
        .into_inner();
    assert!(!again.created);
    assert_eq!(
        again.session.map(|s| s.session_id),
        Some(session.session_id.clone())
    );

    let by_id = client
        .get_session(pb::GetSessionRequest {
            session: id_ref("main", &session.session_id),
        })
        .await
        .expect("by id")
        .into_inner();
    assert_eq!(by_id.session_key, session.session_key);

    let listed = client
        .list_sessions(pb::ListSessionsRequest {
            agent_id: "main".into(),
            ..Default::default()
        })
        .await
        .expect("list")
        .into_inner()
        .sessions;
    assert_eq!(listed.len(), 1);

    let reset = client
        .reset_session(pb::ResetSessionRequest {
            session: key_ref("main", "telegram:direct:42"),
        })
        .await
        .expect("reset")
        .into_inner();
    assert_ne!(reset.session_id, session.session_id);
    assert!(!file.exists(), "old transcript archived");
    let archived = std::fs::read_dir(service.path("state/agents/main/sessions"))
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().contains(".jsonl.reset."));
    assert!(archived);

    let deleted = client
        .delete_session(pb::DeleteSessionRequest {
            session: key_ref("main", "telegram:direct:42"),
        })
        .await
        .expect("delete")
        .into_inner();
    assert!(
        deleted.archived_transcript.contains(".deleted."),
        "{}",
        deleted.archived_transcript
    );
    let gone = client
        .get_session(pb::GetSessionRequest {
            session: key_ref("main", "telegram:direct:42"),
        })
        .await
        .expect_err("deleted");
    assert_eq!(gone.code(), Code::NotFound);
}

/// The main key is the default; the default agent is used when none is named.
#[tokio::test]
async fn defaults_to_the_default_agents_main_session() {
    let service = Service::start(Some(TWO_AGENTS)).await;
    let session = create_main(&service).await;
    assert_eq!(
        (session.agent_id.as_str(), session.session_key.as_str()),
        ("work", "agent:work:main")
    );
}

#[tokio::test]
async fn transcript_streams_entries_then_a_clean_report() {
    let service = Service::start(None).await;
    let session = create_main(&service).await;
    append_to(
        &service,
        SessionTarget::Key(String::new()),
        vec![user("hello"), user("again")],
        true,
    )
    .await;
    let (entries, report) = transcript(&service, key_ref("", "")).await;
    let kinds: Vec<(u64, &str, &str)> = entries
        .iter()
        .map(|e| (e.seq, e.r#type.as_str(), e.role.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (1, "session", ""),
            (2, "message", "user"),
            (3, "message", "user")
        ]
    );
    assert!(entries[2].json.contains("\"again\""));
    assert_eq!(
        entries[2].parent_id, entries[1].id,
        "entries chain by parent id"
    );
    assert_eq!(report.entries, 3);
    assert!(!report.torn_tail_dropped && report.bad_lines.is_empty());
    assert!(!session.session_id.is_empty());
}

/// Lesson L7: a torn final line is dropped and reported; a bad middle line is
/// quarantined and reported; the session still loads.
#[tokio::test]
async fn damaged_transcripts_still_load_with_a_report() {
    let service = Service::start(None).await;
    let id = create_main(&service).await.session_id;
    let path = service.path(&format!("state/agents/main/sessions/{id}.jsonl"));
    append_to(
        &service,
        SessionTarget::Id(id.clone()),
        vec![user("one")],
        true,
    )
    .await;
    // Damage the file behind the writer's back: a garbage middle line, a good line, a torn tail.
    service
        .runtime
        .shutdown(std::time::Duration::from_secs(5))
        .await;
    {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        f.write_all(b"{not json\n").unwrap();
        f.write_all(br#"{"type":"custom","id":"deadbeef","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":"note"}"#).unwrap();
        f.write_all(b"\n{\"type\":\"message\",\"id\":\"torn")
            .unwrap();
    }
    let (entries, report) = transcript(&service, id_ref("", &id)).await;
    assert_eq!(
        entries.len(),
        3,
        "header, the good message, the good custom line"
    );
    assert!(report.torn_tail_dropped);
    assert_eq!(report.bad_lines.len(), 1);
    assert_eq!(report.bad_lines[0].line, 3);
    assert!(
        report.bad_lines[0].reason.starts_with("invalid JSON"),
        "{}",
        report.bad_lines[0].reason
    );
    // The next append repairs the torn tail first and the file loads cleanly after it.
    append_to(
        &service,
        SessionTarget::Id(id.clone()),
        vec![user("after repair")],
        true,
    )
    .await;
    let (entries, report) = transcript(&service, id_ref("", &id)).await;
    assert!(!report.torn_tail_dropped);
    assert!(
        entries
            .last()
            .is_some_and(|e| e.json.contains("after repair"))
    );
}

// ---- bad input: status code and field ---------------------------------------

#[tokio::test]
async fn unknown_agent_is_not_found() {
    let service = Service::start(Some(TWO_AGENTS)).await;
    let status = refusal!(
        service,
        list_sessions,
        pb::ListSessionsRequest {
            agent_id: "ghost".into(),
            ..Default::default()
        }
    );
    assert_status(&status, Code::NotFound, &["\"ghost\""]);
}

#[tokio::test]
async fn bad_session_keys_and_refs_are_invalid_argument() {
    let service = Service::start(None).await;
    let mut client = service.client().await;
    let foreign = client
        .create_session(pb::CreateSessionRequest {
            session_key: "agent:other:main".into(),
            ..Default::default()
        })
        .await
        .expect_err("foreign");
    assert_status_starts(&foreign, Code::InvalidArgument, "session_key:");
    let traversal = client
        .create_session(pb::CreateSessionRequest {
            session_key: "../../etc/passwd".into(),
            ..Default::default()
        })
        .await
        .expect_err("traversal");
    assert_eq!(traversal.code(), Code::InvalidArgument);
    // No target means the main session, which does not exist yet.
    let no_target = client
        .get_session(pb::GetSessionRequest {
            session: Some(pb::SessionRef::default()),
        })
        .await
        .expect_err("no main session yet");
    assert_eq!(no_target.code(), Code::NotFound);
    let bad_id = client
        .get_session(pb::GetSessionRequest {
            session: id_ref("", "not-a-uuid"),
        })
        .await
        .expect_err("bad id");
    assert_status_starts(&bad_id, Code::InvalidArgument, "session_id:");
    let bad_enum = client
        .create_session(pb::CreateSessionRequest {
            chat_type: 77,
            ..Default::default()
        })
        .await
        .expect_err("enum");
    assert!(
        bad_enum.message().starts_with("chat_type:"),
        "{}",
        bad_enum.message()
    );
}

#[tokio::test]
async fn unknown_session_is_not_found() {
    let service = Service::start(None).await;
    let status = refusal!(
        service,
        get_session,
        pb::GetSessionRequest {
            session: key_ref("", "slack:channel:nope"),
        }
    );
    assert_eq!(status.code(), Code::NotFound);
}

/// A bad config: the process keeps serving health, the agent service is
/// NOT_SERVING, and every call answers FAILED_PRECONDITION listing every
/// problem with its path and line.
#[tokio::test]
async fn invalid_config_is_failed_precondition_listing_every_error() {
    let bad = "{\n  agents: { defaults: { bootstrapMaxChars: 'many' } },\n  tools: { profle: 'full' },\n}\n";
    let service = Service::start(Some(bad)).await;
    let status = refusal!(service, list_agents, pb::ListAgentsRequest {});
    assert_status(
        &status,
        Code::FailedPrecondition,
        &[
            "2 problems",
            "agents.defaults.bootstrapMaxChars (line 2",
            "tools.profle (line 3",
        ],
    );
    let channel = service.channel().await;
    assert_health(&channel, ServingStatus::Serving, ServingStatus::NotServing).await;
}

/// Lesson L8: a second process cannot write a session the first one holds.
#[tokio::test]
async fn a_second_writer_on_the_same_state_dir_is_refused() {
    let service = Service::start(None).await;
    create_main(&service).await;
    let (agent, info) = append_to(
        &service,
        SessionTarget::Key(String::new()),
        vec![user("held")],
        true,
    )
    .await;
    // Another runtime over the same state dir (as another process would be).
    let other = agent_runtime::Runtime::start(agent_runtime::RuntimeOptions::new(
        service.runtime.settings().clone(),
        std::sync::Arc::new(agent_runtime::MapEnv::of([(
            "HOME",
            service.root().display().to_string(),
        )])),
        std::sync::Arc::new(openclaw_transcript::SystemClock),
        std::sync::Arc::new(prompt_client::InProcessPromptSource::new().expect("prompt source")),
    ))
    .expect("second runtime");
    let err = other
        .sessions()
        .manager()
        .writable(&agent, &info, &agent.workspace)
        .expect("live session")
        .append(vec![user("intruder")], true)
        .await
        .expect_err("locked");
    assert!(
        matches!(err, agent_runtime::RuntimeError::FailedPrecondition(_)),
        "{err:?}"
    );
    assert!(err.to_string().contains("locked"), "{err}");
}

/// Graceful stop flushes and closes sessions; the transcript keeps every line.
#[tokio::test]
async fn shutdown_flushes_sessions() {
    let service = Service::start(None).await;
    create_main(&service).await;
    let (_, info) = append_to(
        &service,
        SessionTarget::Key(String::new()),
        vec![user("last words")],
        false,
    )
    .await;
    let path = service.path(&format!(
        "state/agents/main/sessions/{}.jsonl",
        info.entry.session_id
    ));
    let dir = service.stop().await;
    let text = std::fs::read_to_string(&path).expect("transcript");
    assert!(text.ends_with('\n') && text.contains("last words"));
    drop(dir);
}

/// Responses go uncompressed unless the server is told to gzip them, even to a client that
/// accepts gzip: a unary call (ListSessions) and a stream (WatchSession) alike.
#[tokio::test]
async fn responses_are_gzipped_only_when_the_server_is_told_to() {
    for compress_responses in [false, true] {
        let options = StartOptions {
            serve_config: agent_server::ServeConfig {
                compress_responses,
                ..agent_server::ServeConfig::default()
            },
            ..StartOptions::default()
        };
        let prompt =
            std::sync::Arc::new(prompt_client::InProcessPromptSource::new().expect("prompt"));
        let service =
            Service::start_with(tempfile::tempdir().expect("tempdir"), None, prompt, options).await;
        create_main(&service).await;
        let mut client = service
            .client()
            .await
            .accept_compressed(tonic::codec::CompressionEncoding::Gzip);
        let listed = client
            .list_sessions(pb::ListSessionsRequest::default())
            .await
            .expect("list");
        let watch = client
            .watch_session(pb::WatchSessionRequest { session: None })
            .await
            .expect("watch");
        let health = tonic_health::pb::health_client::HealthClient::new(service.channel().await)
            .accept_compressed(tonic::codec::CompressionEncoding::Gzip)
            .check(tonic_health::pb::HealthCheckRequest::default())
            .await
            .expect("health");
        let expected = compress_responses.then_some("gzip");
        for (method, metadata) in [
            ("list", listed.metadata()),
            ("watch", watch.metadata()),
            ("health", health.metadata()),
        ] {
            assert_eq!(
                metadata.get("grpc-encoding").and_then(|v| v.to_str().ok()),
                expected,
                "{method}, compress_responses: {compress_responses}"
            );
        }
        assert_eq!(listed.into_inner().sessions.len(), 1);
        drop(watch);
        service.stop().await;
    }
}

/// An idle WatchSession does not hold a stop for the whole drain window: it ends as soon as
/// the stop begins, with UNAVAILABLE saying the service is shutting down, and the stop
/// completes long before the drain window would have.
#[tokio::test]
async fn a_stop_ends_idle_watches_at_once_with_unavailable() {
    let drain = std::time::Duration::from_secs(60);
    let options = StartOptions {
        serve_config: agent_server::ServeConfig {
            drain_timeout: drain,
            ..agent_server::ServeConfig::default()
        },
        ..StartOptions::default()
    };
    let prompt = std::sync::Arc::new(prompt_client::InProcessPromptSource::new().expect("prompt"));
    let service =
        Service::start_with(tempfile::tempdir().expect("tempdir"), None, prompt, options).await;
    create_main(&service).await;
    let mut watch = service.watch().await;
    let started = std::time::Instant::now();
    let stop = tokio::spawn(service.stop());
    let ended = tokio::time::timeout(drain, async {
        loop {
            match watch.message().await {
                Ok(Some(_)) => {}
                Ok(None) => break None,
                Err(status) => break Some(status),
            }
        }
    })
    .await
    .expect("the watch ends before the drain window does")
    .expect("the watch ends with a status, not a clean end");
    assert_eq!(ended.code(), tonic::Code::Unavailable, "{ended:?}");
    assert!(ended.message().contains("shutting down"), "{ended:?}");
    tokio::time::timeout(drain, stop)
        .await
        .expect("the stop completes before the drain window ends")
        .expect("stop task");
    assert!(
        started.elapsed() < drain / 2,
        "the stop waited {:?} of a {drain:?} drain window for an idle watch",
        started.elapsed()
    );
}

/// Reflection lists what agent-service serves: not the PromptService it
/// calls, nor the bench Echo of prompt-service (both would answer
/// UNIMPLEMENTED here).
#[tokio::test]
async fn reflection_lists_only_the_agent_service() {
    let service = Service::start(None).await;
    let served = service_kit::listed_services(service.channel().await)
        .await
        .expect("reflection");
    let expected: Vec<String> = [
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
        "openclaw.agent.v1.AgentService",
    ]
    .map(String::from)
    .into();
    assert_eq!(
        served,
        service_kit::ListedServices {
            v1: expected.clone(),
            v1alpha: expected,
        }
    );
}

/// A request whose `x-openclaw-session-key` routing header names another session than its
/// body is refused (the router would have sent it to the wrong replica); a matching header,
/// by key or by id, and no header at all are served.
#[tokio::test]
async fn a_routing_header_naming_another_session_is_refused() {
    let service = Service::start(None).await;
    let mut client = service.client().await;
    let with_header = |header: &str, session| {
        let mut request = tonic::Request::new(pb::GetSessionRequest { session });
        request
            .metadata_mut()
            .insert("x-openclaw-session-key", header.parse().unwrap());
        request
    };
    let created = service.create_session("demo").await;

    // Matching: the full key, for a body by short key and for a body by id.
    client
        .get_session(with_header("agent:main:demo", key_ref("", "demo")))
        .await
        .expect("header and body agree");
    client
        .get_session(with_header(
            "agent:main:demo",
            id_ref("", &created.session_id),
        ))
        .await
        .expect("header and the id's key agree");
    client
        .get_session(pb::GetSessionRequest {
            session: key_ref("", "demo"),
        })
        .await
        .expect("no header: not routed by it, not checked");

    // Another session, or a key the router would hash differently.
    for (header, session) in [
        ("agent:main:other", key_ref("", "demo")),
        ("agent:main:other", id_ref("", &created.session_id)),
        ("demo", key_ref("", "demo")),
    ] {
        let err = client
            .get_session(with_header(header, session))
            .await
            .expect_err(header);
        assert_eq!(err.code(), Code::InvalidArgument, "{header}: {err:?}");
        assert!(
            err.message().contains("x-openclaw-session-key")
                && err.message().contains("agent:main:demo"),
            "{header}: {}",
            err.message()
        );
    }

    // Runs are checked the same way, before anything is written.
    let mut run = tonic::Request::new(pb::SendRequest {
        session: key_ref("", "demo"),
        message: "hello".into(),
        ..Default::default()
    });
    run.metadata_mut().insert(
        "x-openclaw-session-key",
        "agent:main:elsewhere".parse().unwrap(),
    );
    let err = client.send(run).await.expect_err("mismatched send");
    assert_eq!(err.code(), Code::InvalidArgument);
    let (entries, _) = transcript(&service, key_ref("", "demo")).await;
    assert!(
        entries.iter().all(|e| !e.json.contains("hello")),
        "a refused message must not reach the transcript"
    );
}

/// A `sessions.json` that cannot be read at all (truncated, empty, an array, random bytes) is
/// moved aside at start-up and rebuilt from the transcripts: every session keeps its id, and
/// new sessions can be created, instead of every session call failing.
#[tokio::test]
async fn a_corrupt_session_index_is_rebuilt_at_start_up() {
    let service = Service::start(None).await;
    let mut ids = Vec::new();
    for key in ["demo", "other"] {
        let session = service.create_session(key).await;
        ids.push((session.session_key, session.session_id));
    }
    let mut dir = service.stop().await;
    let sessions = dir.path().join("state/agents/main/sessions");
    let index = sessions.join("sessions.json");
    assert!(index.exists(), "{}", index.display());
    let variants: [(&str, &[u8]); 4] = [
        ("truncated", b"{\"agent:main:demo\": {\"sessionId\": \"0"),
        ("empty", b""),
        ("array", b"[]"),
        ("random bytes", b"\x8f\x00\xffgarbage\x13"),
    ];
    for (n, (what, bytes)) in variants.into_iter().enumerate() {
        std::fs::write(&index, bytes).expect("corrupt the index");
        let service = Service::start_in(dir, None).await;
        let mut client = service.client().await;
        let listed = client
            .list_sessions(pb::ListSessionsRequest {
                agent_id: String::new(),
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{what}: list failed: {e:?}"))
            .into_inner()
            .sessions;
        for (key, id) in &ids {
            let found = listed
                .iter()
                .find(|s| &s.session_key == key)
                .unwrap_or_else(|| panic!("{what}: {key} not in the rebuilt index"));
            assert_eq!(&found.session_id, id, "{what}: {key} kept its id");
        }
        client
            .create_session(pb::CreateSessionRequest {
                session_key: format!("fresh-{n}"),
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{what}: a new session failed: {e:?}"));
        let aside = std::fs::read_dir(&sessions)
            .expect("dir")
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("sessions.json.corrupt.")
            })
            .count();
        assert_eq!(aside, n + 1, "{what}: the bad file is kept aside");
        dir = service.stop().await;
        ids.push((format!("agent:main:fresh-{n}"), String::new()));
        ids.retain(|(_, id)| !id.is_empty());
    }
}

/// A transcript written in a newer format than this release reads is refused with
/// FAILED_PRECONDITION naming the file and the version, never shown or appended to.
#[tokio::test]
async fn a_transcript_of_a_newer_format_is_refused_by_name() {
    use agent_testkit::{FakeReply, WireFormat};
    let h = super::harness::Harness::start(WireFormat::ChatCompletions, "", "").await;
    h.fake.push(FakeReply::text("Hi."));
    h.service.run_message("Hello").await;
    let (dir, fake, prompt) = h.stop().await;
    let sessions = dir.path().join("state/agents/main/sessions");
    let file = std::fs::read_dir(&sessions)
        .expect("sessions dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a transcript");
    let text = std::fs::read_to_string(&file).expect("transcript");
    std::fs::write(&file, text.replacen("\"version\":3", "\"version\":99", 1)).expect("write");
    let before = std::fs::read(&file).expect("bytes");
    let service = super::harness::Service::start_in(dir, None).await;
    let h = super::harness::Harness {
        service,
        fake,
        _prompt: prompt,
    };
    let mut client = h.service.client().await;
    let read = stream_refusal!(
        h.service,
        get_transcript,
        pb::GetTranscriptRequest { session: None }
    );
    assert_eq!(read.code(), Code::FailedPrecondition, "{read:?}");
    assert!(read.message().contains("format version 99"), "{read:?}");
    assert!(
        read.message().contains(&file.display().to_string()),
        "{read:?}"
    );
    let run = match client
        .run(pb::RunRequest {
            message: "Again".into(),
            ..Default::default()
        })
        .await
    {
        Err(status) => status,
        Ok(stream) => {
            let mut stream = stream.into_inner();
            loop {
                match stream.message().await {
                    Err(status) => break status,
                    Ok(Some(pb::RunEvent {
                        event: Some(pb::run_event::Event::Error(e)),
                        ..
                    })) => {
                        assert_eq!(e.code, "FAILED_PRECONDITION", "{e:?}");
                        break tonic::Status::new(Code::FailedPrecondition, e.message);
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("the run ended without refusing the transcript"),
                }
            }
        }
    };
    assert_eq!(run.code(), Code::FailedPrecondition, "{run:?}");
    assert!(run.message().contains("format version 99"), "{run:?}");
    assert_eq!(
        std::fs::read(&file).expect("bytes"),
        before,
        "the file changed"
    );
}

/// A listed session of the default agent names a working directory, the one GetSession names.
async fn assert_names_its_workspace_as_get_session_does(service: &Service, listed: &pb::Session) {
    let one = call!(
        service,
        get_session,
        pb::GetSessionRequest {
            session: Some(pb::SessionRef {
                agent_id: String::new(),
                target: Some(pb::session_ref::Target::SessionKey(
                    listed.session_key.clone(),
                )),
            }),
        }
    );
    assert!(!listed.workspace.is_empty(), "{listed:?}");
    assert_eq!(listed.workspace, one.workspace, "{}", listed.session_key);
}

/// With a sandbox for every session but the main one, ListSessions names each session's
/// working directory as GetSession does: the agent's own for the main session, its own
/// sandbox's for the others.
#[tokio::test]
async fn listed_sessions_name_their_sandboxes_as_get_session_does() {
    let service = Service::start(Some(
        r#"{ agents: { defaults: { sandbox: { mode: "non-main", scope: "session" } } } }"#,
    ))
    .await;
    for key in ["main", "telegram:group:1", "telegram:group:2"] {
        call!(
            service,
            create_session,
            pb::CreateSessionRequest {
                session_key: key.into(),
                ..Default::default()
            }
        );
    }
    let listed = call!(service, list_sessions, pb::ListSessionsRequest::default()).sessions;
    assert_eq!(listed.len(), 3);
    let mut workspaces = std::collections::BTreeSet::new();
    for session in &listed {
        assert_names_its_workspace_as_get_session_does(&service, session).await;
        workspaces.insert(session.workspace.clone());
    }
    assert_eq!(
        workspaces.len(),
        3,
        "each session has its own: {workspaces:?}"
    );
}

/// The default agent's sessions listed `page_size` at a time in `view`, each page taking up
/// where the previous one's token ended, until a page comes without one; and the page sizes.
async fn list_in_pages(
    service: &Service,
    page_size: u32,
    view: pb::SessionView,
) -> (Vec<pb::Session>, Vec<usize>) {
    let (mut sessions, mut sizes) = (Vec::new(), Vec::new());
    let mut page_token = String::new();
    loop {
        let page = call!(
            service,
            list_sessions,
            pb::ListSessionsRequest {
                page_size,
                page_token,
                view: view as i32,
                ..Default::default()
            }
        );
        sizes.push(page.sessions.len());
        sessions.extend(page.sessions);
        if page.next_page_token.is_empty() {
            return (sessions, sizes);
        }
        page_token = page.next_page_token;
    }
}

/// ListSessions pages: pages of `page_size` in list order, each token taking up where the
/// previous page ended, the last page without a token, together exactly the whole list; a
/// token ListSessions did not make is refused naming it.
#[tokio::test]
async fn sessions_are_listed_page_by_page() {
    let service = Service::start(None).await;
    for i in 0..7 {
        call!(
            service,
            create_session,
            pb::CreateSessionRequest {
                session_key: format!("paged-{i}"),
                ..Default::default()
            }
        );
    }
    let all = call!(service, list_sessions, pb::ListSessionsRequest::default());
    assert_eq!(all.sessions.len(), 7);
    assert!(all.next_page_token.is_empty(), "page_size 0 is everything");
    let (paged, sizes) = list_in_pages(&service, 3, pb::SessionView::Unspecified).await;
    assert_eq!(sizes, [3, 3, 1]);
    let keys = |sessions: &[pb::Session]| {
        sessions
            .iter()
            .map(|s| s.session_key.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&paged), keys(&all.sessions));
    // List order: most recently updated first, then by key (ties are likely here: the
    // sessions were created within the same milliseconds).
    let order = |s: &pb::Session| {
        let at = s.updated_at.as_ref().map(|t| (t.seconds, t.nanos));
        (std::cmp::Reverse(at), s.session_key.clone())
    };
    assert!(
        all.sessions
            .windows(2)
            .all(|w| order(&w[0]) <= order(&w[1])),
        "{:?}",
        keys(&all.sessions)
    );
    // A listed session names its working directory as GetSession does.
    for listed in &paged {
        assert_names_its_workspace_as_get_session_does(&service, listed).await;
    }
    let bad = refusal!(
        service,
        list_sessions,
        pb::ListSessionsRequest {
            page_size: 3,
            page_token: "not-a-token".into(),
            ..Default::default()
        }
    );
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");
    assert!(bad.message().contains("page_token"), "{bad:?}");
}

/// `SESSION_VIEW_BASIC` lists the same sessions in the same order and pages as the full
/// view, each with its key, update time, channel, chat type and display name only; a view
/// the server does not know is refused naming the field.
#[tokio::test]
async fn the_basic_view_lists_the_same_sessions_with_only_the_listed_fields() {
    let service = Service::start(None).await;
    for (i, key) in ["viewed-a", "viewed-b", "viewed-c", "viewed-d"]
        .into_iter()
        .enumerate()
    {
        call!(
            service,
            create_session,
            pb::CreateSessionRequest {
                session_key: key.into(),
                display_name: format!("Room {i}"),
                channel: "telegram".into(),
                chat_type: pb::ChatType::Group as i32,
                ..Default::default()
            }
        );
    }
    let full = call!(service, list_sessions, pb::ListSessionsRequest::default()).sessions;
    let (basic, _) = list_in_pages(&service, 3, pb::SessionView::Basic).await;
    assert_eq!(basic.len(), 4);
    // Less than half the bytes, as the proto says, for sessions with a channel and a name.
    let bytes = |sessions: &[pb::Session]| {
        sessions
            .iter()
            .map(prost::Message::encoded_len)
            .sum::<usize>()
    };
    assert!(
        bytes(&basic) * 2 < bytes(&full),
        "{} against {}",
        bytes(&basic),
        bytes(&full)
    );
    for (basic, full) in basic.iter().zip(&full) {
        let expected = pb::Session {
            session_key: full.session_key.clone(),
            updated_at: full.updated_at,
            channel: full.channel.clone(),
            chat_type: full.chat_type,
            display_name: full.display_name.clone(),
            ..Default::default()
        };
        assert_eq!(basic, &expected);
        assert!(!full.session_id.is_empty() && !full.workspace.is_empty());
        assert_eq!(full.channel, "telegram");
        assert!(full.display_name.starts_with("Room "));
    }
    let explicit_full = call!(
        service,
        list_sessions,
        pb::ListSessionsRequest {
            view: pb::SessionView::Full as i32,
            ..Default::default()
        }
    )
    .sessions;
    assert_eq!(explicit_full, full);
    let unknown = refusal!(
        service,
        list_sessions,
        pb::ListSessionsRequest {
            view: 9,
            ..Default::default()
        }
    );
    assert_eq!(unknown.code(), Code::InvalidArgument, "{unknown:?}");
    assert!(unknown.message().contains("view 9"), "{unknown:?}");
}

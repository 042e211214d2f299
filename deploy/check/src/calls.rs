//! The AgentService calls the checks make (a Run and what it ended with, a
//! session's transcript), with the session-key header the router hashes.

use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use tonic::{Request, Status, service::Interceptor, transport::Channel};

/// What the demo script's second turn begins with (it quotes AGENTS.md).
pub const DEMO_REPLY: &str = "(scripted model) AGENTS.md begins like this:";

/// A client that sends `authorization: Bearer <token>` on every call.
pub type Client =
    AgentServiceClient<tonic::service::interceptor::InterceptedService<Channel, BearerInterceptor>>;

/// Adds the bearer token to each request.
#[derive(Clone)]
pub struct BearerInterceptor(service_kit::BearerToken);

impl Interceptor for BearerInterceptor {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        self.0.apply(&mut request);
        Ok(request)
    }
}

/// An AgentService client over `channel` sending `token`.
pub fn client(channel: Channel, token: &str) -> Result<Client, String> {
    let token = service_kit::BearerToken::new(token)?;
    Ok(AgentServiceClient::with_interceptor(
        channel,
        BearerInterceptor(token),
    ))
}

/// A reference to the session of `key`: in the agent the key names
/// (`agent:<id>:...`), else in the default agent.
pub fn session_ref(key: &str) -> Option<pb::SessionRef> {
    let agent_id = key
        .strip_prefix("agent:")
        .and_then(|rest| rest.split_once(':'))
        .map(|(id, _)| id.to_owned())
        .unwrap_or_default();
    Some(pb::SessionRef {
        agent_id,
        target: Some(pb::session_ref::Target::SessionKey(key.into())),
    })
}

/// `message` with the session-key header set to `key`, as clients behind
/// the router send every session call.
pub fn keyed<T>(key: &str, message: T) -> Result<Request<T>, String> {
    let mut request = Request::new(message);
    let value = key
        .parse()
        .map_err(|e| format!("session key {key:?} is not a header value: {e}"))?;
    request
        .metadata_mut()
        .insert(service_kit::SESSION_KEY_HEADER, value);
    Ok(request)
}

/// A Run of `message` in the session of `key`, with the header.
pub fn run_request(key: &str, message: &str) -> Result<Request<pb::RunRequest>, String> {
    keyed(
        key,
        pb::RunRequest {
            session: session_ref(key),
            message: message.into(),
            ..Default::default()
        },
    )
}

/// What a run ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    /// The session it ran in.
    pub session_id: String,
    /// The final answer.
    pub final_text: String,
}

/// The outcome of a run's events: its session id and final text; an
/// `Error` event is an error.
pub fn outcome(events: Vec<pb::RunEvent>) -> Result<RunOutcome, String> {
    let mut session_id = None;
    let mut final_text = None;
    for event in events {
        match event.event {
            Some(pb::run_event::Event::Started(s)) => session_id = Some(s.session_id),
            Some(pb::run_event::Event::Final(f)) => final_text = Some(f.text),
            Some(pb::run_event::Event::Error(e)) => {
                return Err(format!("run failed: {} {}", e.code, e.message));
            }
            _ => {}
        }
    }
    Ok(RunOutcome {
        session_id: session_id.ok_or("the run sent no RunStarted")?,
        final_text: final_text.ok_or("the run sent no RunFinal")?,
    })
}

/// Reads a run's stream to its end.
pub async fn finish(mut stream: tonic::Streaming<pb::RunEvent>) -> Result<RunOutcome, String> {
    let mut events = Vec::new();
    while let Some(event) = stream
        .message()
        .await
        .map_err(|s| format!("run stream: {:?} {}", s.code(), s.message()))?
    {
        events.push(event);
    }
    outcome(events)
}

/// Runs `message` in the session of `key` to its end.
pub async fn run(client: &mut Client, key: &str, message: &str) -> Result<RunOutcome, String> {
    let stream = client
        .run(run_request(key, message)?)
        .await
        .map_err(|s| format!("Run {key}: {:?} {}", s.code(), s.message()))?
        .into_inner();
    finish(stream).await
}

/// The texts of the user messages in a session's transcript, in order.
pub async fn user_messages(client: &mut Client, key: &str) -> Result<Vec<String>, String> {
    texts_of(client, key, "user").await
}

/// The texts of the messages with `role` (`user`, `assistant`, `toolResult`) in a
/// session's transcript, in order.
pub async fn texts_of(client: &mut Client, key: &str, role: &str) -> Result<Vec<String>, String> {
    let mut stream = client
        .get_transcript(keyed(
            key,
            pb::GetTranscriptRequest {
                session: session_ref(key),
            },
        )?)
        .await
        .map_err(|s| format!("GetTranscript {key}: {:?} {}", s.code(), s.message()))?
        .into_inner();
    let mut said = Vec::new();
    while let Some(item) = stream
        .message()
        .await
        .map_err(|s| format!("transcript stream: {:?} {}", s.code(), s.message()))?
    {
        let Some(pb::transcript_item::Item::Entry(entry)) = item.item else {
            continue;
        };
        if entry.role != role {
            continue;
        }
        let line: serde_json::Value = serde_json::from_str(&entry.json)
            .map_err(|e| format!("transcript line {}: {e}", entry.seq))?;
        let content = &line["message"]["content"];
        let text = match content {
            serde_json::Value::String(text) => text.clone(),
            blocks => blocks
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["text"].as_str())
                .collect(),
        };
        said.push(text);
    }
    Ok(said)
}

//! `openclaw status`: whether the services answer and how they are set up, read from
//! agent-service's GetServiceStatus, ListAgents and ListSessions.

use openclaw_proto::agent::v1 as pb;

use crate::{
    args::ServerArgs,
    client::{self, Client},
    error::CliError,
    term::{Term, columns},
};

/// Prints the status of the agent-service at `server` (and of the prompt-service behind it).
/// An unreachable agent-service fails the command (exit 69); a reachable one that is not ready
/// is reported, and the command succeeds.
pub async fn status(server: &ServerArgs, term: &mut Term<'_>) -> Result<(), CliError> {
    let connect = client::Connect::from_args(server)?;
    let url = connect.url().to_owned();
    let mut client = connect.open().await?;
    let s = client
        .get_service_status(pb::GetServiceStatusRequest {})
        .await?
        .into_inner();
    let ready = if s.ready { "ready" } else { "NOT READY" };
    term.line(&format!(
        "agent-service   {url}: reachable, version {}, {ready}",
        s.version
    ))?;
    let prompt = match (s.prompt_service_remote, s.prompt_service_reachable) {
        (false, _) => "in process (the renderer built into agent-service)",
        (true, true) => "remote over gRPC: reachable",
        (true, false) => "remote over gRPC: UNREACHABLE",
    };
    term.line(&format!("prompt-service  {prompt}"))?;
    let config = if s.config_error.is_empty() {
        "valid".to_owned()
    } else {
        format!("INVALID: {}", s.config_error)
    };
    term.line(&format!("config          {}: {config}", s.config_path))?;
    term.line(&format!("security        {}", security(&s)))?;
    let model = if s.default_model.is_empty() {
        "none configured"
    } else {
        s.default_model.as_str()
    };
    term.line(&format!(
        "default         agent {}, model {model}",
        if s.default_agent.is_empty() {
            "unknown"
        } else {
            &s.default_agent
        }
    ))?;
    if s.repairs.is_empty() {
        term.line("repairs         none since start-up")?;
    } else {
        term.line(&format!(
            "repairs         {} since start-up (state directory):",
            s.repairs.len()
        ))?;
        for repair in &s.repairs {
            let what = match repair.kind() {
                pb::StateRepairKind::IndexRebuilt => "session index rebuilt",
                pb::StateRepairKind::MessagesQuarantined => "messages quarantined",
                pb::StateRepairKind::Unspecified => "repair",
            };
            term.line(&format!(
                "  - {what}, agent {}: {} (see {})",
                repair.agent_id, repair.detail, repair.file
            ))?;
        }
    }
    agents(&mut client, term).await
}

fn security(s: &pb::ServiceStatus) -> String {
    let tls = if s.tls { "TLS on" } else { "TLS off" };
    let auth = match (s.bearer_tokens, s.client_certificates) {
        (true, true) => "callers need a bearer token and a client certificate",
        (true, false) => "callers need a bearer token",
        (false, true) => "callers need a client certificate",
        (false, false) => "callers are not authenticated",
    };
    format!("{tls}; {auth}")
}

/// The agents with their session counts; an unusable config is reported, not fatal.
async fn agents(client: &mut Client, term: &mut Term<'_>) -> Result<(), CliError> {
    let agents = match client.list_agents(pb::ListAgentsRequest {}).await {
        Ok(response) => response.into_inner().agents,
        Err(status) => {
            term.line(&format!(
                "agents          unavailable: {}",
                status.message()
            ))?;
            return Ok(());
        }
    };
    let mut rows = vec![columns(["", "AGENT", "MODEL", "RUNTIME", "SESSIONS"])];
    for a in agents {
        let sessions = client
            .list_sessions(pb::ListSessionsRequest {
                agent_id: a.id.clone(),
                // Only counted: the lightest view.
                view: pb::SessionView::Basic as i32,
                ..Default::default()
            })
            .await?
            .into_inner()
            .sessions
            .len();
        rows.push(vec![
            if a.is_default { "*" } else { "" }.to_owned(),
            a.id,
            a.model,
            a.runtime,
            sessions.to_string(),
        ]);
    }
    term.table(&rows)?;
    Ok(())
}

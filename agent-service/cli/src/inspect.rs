//! The one-call commands: `setup`, `agents`, `skills`, `preview`, `context`.
//! Each makes one RPC and prints its answer readably on stdout.

use openclaw_proto::agent::v1 as pb;
use prompt_server::PreviewFormat;

use crate::{
    client::{Client, Target},
    error::CliError,
    term::{Term, columns},
};

/// `openclaw setup`: creates `openclaw.json` when missing and seeds the
/// workspaces (one agent, or all for "").
pub async fn setup(
    client: &mut Client,
    agent: &str,
    full_reset: bool,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let done = client
        .setup(pb::SetupRequest {
            agent_id: agent.to_owned(),
            full_reset,
        })
        .await?
        .into_inner();
    let state = if done.config_created {
        "created"
    } else {
        "kept"
    };
    term.line(&format!("config: {} ({state})", done.config_path))?;
    for ws in &done.workspaces {
        let created = if ws.created_files.is_empty() {
            "nothing to create".to_owned()
        } else {
            format!("created {}", ws.created_files.join(", "))
        };
        let mut line = format!("{}: {} ({created})", ws.agent_id, ws.workspace);
        if ws.bootstrap_seeded {
            line.push_str("; BOOTSTRAP.md seeded");
        }
        if ws.skipped_bootstrap {
            line.push_str("; templates skipped (skipBootstrap)");
        }
        term.line(&line)?;
    }
    Ok(())
}

/// `openclaw agents`: the configured agents, the default marked with `*`.
pub async fn agents(client: &mut Client, term: &mut Term<'_>) -> Result<(), CliError> {
    let agents = client
        .list_agents(pb::ListAgentsRequest {})
        .await?
        .into_inner()
        .agents;
    let mut rows = vec![columns(["", "ID", "NAME", "MODEL", "RUNTIME", "WORKSPACE"])];
    for a in agents {
        let default = if a.is_default { "*" } else { "" };
        rows.push(vec![
            default.to_owned(),
            a.id,
            a.name,
            a.model,
            a.runtime,
            a.workspace,
        ]);
    }
    term.table(&rows)?;
    Ok(())
}

/// `openclaw skills`: available skills, name collisions and skipped candidates.
pub async fn skills(client: &mut Client, agent: &str, term: &mut Term<'_>) -> Result<(), CliError> {
    let skills = client
        .list_skills(pb::ListSkillsRequest {
            agent_id: agent.to_owned(),
        })
        .await?
        .into_inner();
    if skills.skills.is_empty() {
        term.line("no skills available")?;
    } else {
        let mut rows = vec![columns(["NAME", "VERSION", "SOURCE", "DESCRIPTION"])];
        for s in &skills.skills {
            let mut description = s.description.clone();
            if !s.model_invocable {
                description.push_str(" [hidden from the model]");
            }
            rows.push(vec![
                s.name.clone(),
                s.version.clone(),
                s.source.clone(),
                description,
            ]);
        }
        term.table(&rows)?;
    }
    for c in &skills.collisions {
        term.line(&format!(
            "collision {}: kept {}, shadowed {}",
            c.name, c.kept, c.shadowed
        ))?;
    }
    for s in &skills.skipped {
        term.line(&format!("skipped {}: {}", s.path, s.reason))?;
    }
    Ok(())
}

/// `openclaw preview`: the exact system prompt the session's next turn
/// would send (or one side of the cache boundary, or the whole response as
/// canonical protobuf JSON) on stdout; the model and tools as a note.
pub async fn preview(
    client: &mut Client,
    target: &Target,
    part: PreviewFormat,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let request = client
        .for_session(target, |session| pb::PreviewPromptRequest {
            session,
            channel: None,
        })
        .await?;
    let preview = client.preview_prompt(request).await?.into_inner();
    let prompt = preview.prompt.unwrap_or_default();
    let text = match part {
        PreviewFormat::Text => prompt.text.clone(),
        PreviewFormat::Stable => prompt.stable_prefix.clone(),
        PreviewFormat::Dynamic => prompt.dynamic_suffix.clone(),
        PreviewFormat::Json => prompt_server::response_json(&prompt)
            .map_err(|e| CliError::Internal(format!("cannot print the prompt as JSON: {e}")))?,
    };
    // Like `prompt-service render`: the text, then one newline.
    term.line(&text)?;
    term.note(&format!(
        "· {} chars (~{} tok) · model {} · tools: {}",
        prompt.chars,
        prompt.approx_tokens,
        preview.model,
        if preview.tools.is_empty() {
            "none".to_owned()
        } else {
            preview.tools.join(", ")
        }
    ))?;
    Ok(())
}

/// `openclaw context`: `/context list` (or detail) for a session.
pub async fn context(
    client: &mut Client,
    target: &Target,
    detail: bool,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let request = client
        .for_session(target, |session| pb::ContextReportRequest {
            session,
            detail,
        })
        .await?;
    let report = client.context_report(request).await?.into_inner();
    term.line(report.text.trim_end())?;
    Ok(())
}

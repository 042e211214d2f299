//! `openclaw approvals`: the exec approvals waiting for a person (list,
//! approve, deny) and an agent's exec allowlist, over the API.

use openclaw_proto::agent::v1 as pb;

use crate::{
    args::{AllowlistAction, ApprovalsAction},
    chat::approval_state_word,
    client::{Client, Target},
    error::CliError,
    term::{Term, columns, visible},
};

/// Who decides when `--by` is not given: the local user name (`$USER`),
/// else "cli".
pub fn default_decider(user: Option<&str>) -> String {
    match user.map(str::trim) {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => "cli".to_owned(),
    }
}

/// Runs one `openclaw approvals` action for `agent` ("" for the default);
/// `decider` is who decides when the action names nobody (`--by`).
pub async fn run(
    client: &mut Client,
    agent: &str,
    action: ApprovalsAction,
    decider: &str,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let agent_id = agent.trim().to_owned();
    let by = |by: Option<String>| by.unwrap_or_else(|| decider.to_owned());
    match action {
        ApprovalsAction::List { session, all } => {
            let session_key = session.unwrap_or_default().trim().to_owned();
            // Routed to the replica of the session asked about, else of the agent's main
            // session.
            let request = client
                .keyed(
                    &Target::new(Some(agent), Some(&session_key)),
                    pb::ListApprovalsRequest {
                        agent_id,
                        session_key: session_key.clone(),
                        include_decided: all,
                    },
                )
                .await?;
            let approvals = client.list_approvals(request).await?.into_inner().approvals;
            if approvals.is_empty() {
                let none = if all {
                    "no approvals since the service started"
                } else {
                    "no approvals pending (--all lists the decided ones too)"
                };
                term.line(none)?;
                return Ok(());
            }
            let mut rows = vec![columns([
                "ID",
                "SESSION",
                "STATE",
                "COMMAND",
                "REASON",
                "EXPIRES / DECIDED BY",
            ])];
            rows.extend(approvals.iter().map(row));
            term.table(&rows)?;
        }
        ApprovalsAction::Approve {
            id,
            always,
            by: who,
        } => {
            let decision = if always {
                pb::ApprovalDecision::AllowAlways
            } else {
                pb::ApprovalDecision::AllowOnce
            };
            let target = Target::new(Some(agent), None);
            let approval = resolve(client, &target, &id, decision, &by(who)).await?;
            term.line(&decided_line(&approval))?;
        }
        ApprovalsAction::Deny { id, by: who } => {
            let target = Target::new(Some(agent), None);
            let approval =
                resolve(client, &target, &id, pb::ApprovalDecision::Deny, &by(who)).await?;
            term.line(&decided_line(&approval))?;
        }
        ApprovalsAction::Allowlist { action } => match action.unwrap_or(AllowlistAction::List) {
            AllowlistAction::List => {
                let request = client
                    .main_keyed(agent, pb::ListExecAllowlistRequest { agent_id })
                    .await?;
                let list = client.list_exec_allowlist(request).await?.into_inner();
                print_allowlist(&list, term)?;
            }
            AllowlistAction::Add { pattern, by: who } => {
                let request = client
                    .main_keyed(
                        agent,
                        pb::AddExecAllowlistEntryRequest {
                            agent_id,
                            pattern: pattern.clone(),
                            added_by: by(who),
                        },
                    )
                    .await?;
                let list = client.add_exec_allowlist_entry(request).await?.into_inner();
                term.line(&format!(
                    "added {pattern} to the allowlist of agent {}",
                    list.agent_id
                ))?;
            }
            AllowlistAction::Remove { pattern } => {
                let request = client
                    .main_keyed(
                        agent,
                        pb::RemoveExecAllowlistEntryRequest {
                            agent_id,
                            pattern: pattern.clone(),
                        },
                    )
                    .await?;
                let list = client
                    .remove_exec_allowlist_entry(request)
                    .await?
                    .into_inner();
                term.line(&format!(
                    "removed {pattern} from the allowlist of agent {}",
                    list.agent_id
                ))?;
            }
        },
    }
    Ok(())
}

/// Decides approval `id` (routed by `target`'s agent and session).
pub async fn resolve(
    client: &mut Client,
    target: &Target,
    id: &str,
    decision: pb::ApprovalDecision,
    decided_by: &str,
) -> Result<pb::Approval, CliError> {
    let request = client
        .for_session(target, |session| pb::ResolveApprovalRequest {
            session,
            id: id.trim().to_owned(),
            decision: decision as i32,
            decided_by: decided_by.to_owned(),
        })
        .await?;
    let approval = client.resolve_approval(request).await?.into_inner();
    Ok(approval)
}

/// "approval ID: allowed once by NAME (COMMAND)".
fn decided_line(approval: &pb::Approval) -> String {
    format!(
        "approval {}: {} by {} ({})",
        visible(&approval.id),
        approval_state_word(approval.state()),
        visible(&approval.decided_by),
        visible(&approval.command)
    )
}

fn print_allowlist(
    list: &pb::ListExecAllowlistResponse,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    if list.entries.is_empty() {
        term.line(&format!(
            "the allowlist of agent {} is empty; add a pattern with `openclaw approvals allowlist add /usr/bin/git`",
            list.agent_id
        ))?;
        return Ok(());
    }
    let mut rows = vec![columns(["PATTERN", "SOURCE", "ADDED BY", "ADDED AT"])];
    rows.extend(list.entries.iter().map(|entry| {
        vec![
            visible(&entry.pattern),
            entry.source.clone(),
            dash(&visible(&entry.added_by)),
            when(entry.added_at.as_ref()),
        ]
    }));
    term.table(&rows)?;
    Ok(())
}

/// One row of the approvals table.
fn row(approval: &pb::Approval) -> Vec<String> {
    let state = approval.state();
    let last = if state == pb::ApprovalState::Pending {
        format!("expires {}", when(approval.expires_at.as_ref()))
    } else if approval.decided_by.is_empty() {
        when(approval.decided_at.as_ref())
    } else {
        format!(
            "{} by {}",
            when(approval.decided_at.as_ref()),
            visible(&approval.decided_by)
        )
    };
    let state = match state {
        pb::ApprovalState::Expired if approval.fallback_allowed => "expired (ran)".to_owned(),
        pb::ApprovalState::Expired => "expired (refused)".to_owned(),
        other => approval_state_word(other).to_owned(),
    };
    vec![
        visible(&approval.id),
        visible(&approval.session_key),
        state,
        visible(&approval.command),
        visible(&approval.reason),
        last,
    ]
}

fn dash(text: &str) -> String {
    if text.is_empty() {
        "-".to_owned()
    } else {
        text.to_owned()
    }
}

/// A timestamp as RFC 3339 (UTC, whole seconds), or "-" for none.
pub(crate) fn when(at: Option<&prost_types::Timestamp>) -> String {
    match at {
        Some(t) if t.seconds != 0 || t.nanos != 0 => jiff::Timestamp::from_second(t.seconds)
            .map_or_else(|_| t.seconds.to_string(), |t| t.to_string()),
        _ => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decider_is_the_local_user_else_cli() {
        assert_eq!(default_decider(Some("ada")), "ada");
        assert_eq!(default_decider(Some(" ")), "cli");
        assert_eq!(default_decider(None), "cli");
    }

    #[test]
    fn rows_say_when_a_pending_approval_expires_and_who_decided() {
        let pending = pb::Approval {
            id: "a1".into(),
            session_key: "agent:main:main".into(),
            command: "rm -rf\n build\x1b[2K".into(),
            reason: "not on the allowlist".into(),
            state: pb::ApprovalState::Pending as i32,
            expires_at: Some(prost_types::Timestamp {
                seconds: 1_800_000_000,
                nanos: 0,
            }),
            ..Default::default()
        };
        assert_eq!(
            row(&pending),
            [
                "a1",
                "agent:main:main",
                "pending",
                "rm -rf\\n build\\u{1b}[2K",
                "not on the allowlist",
                "expires 2027-01-15T08:00:00Z"
            ]
        );
        let denied = pb::Approval {
            state: pb::ApprovalState::Denied as i32,
            decided_by: "ada".into(),
            decided_at: pending.expires_at,
            ..pending
        };
        assert_eq!(row(&denied)[2], "denied");
        assert_eq!(row(&denied)[5], "2027-01-15T08:00:00Z by ada");
    }
}

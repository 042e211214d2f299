//! Chat commands the runtime answers itself, never the model (R-11, P-21, P-34).
//!
//! | Command                                        | Does                                      |
//! |------------------------------------------------|-------------------------------------------|
//! | `/queue` steer, followup, collect, interrupt, default | the session's queue mode    |
//! | `/reasoning` on, off, stream, default          | the session's reasoning visibility (P-21) |
//! | `/think` (`/thinking`) off … xhigh, adaptive, default | the session's thinking level      |
//! | `/context` list, detail                        | what the next prompt holds (P-34)         |
//! | `/approve` <id> allow-once, allow-always, deny | decides a pending exec approval (owners)  |
//! | `/status`                                      | the status card and the workspace files    |
//!
//! A command is a message whose first word is one of these names. Settings are stored in the
//! session's index entry (they survive restarts and resets) and a bare command reports the
//! value in effect. The answer is the message's disposition (`Disposition::Command`): no run
//! starts and nothing reaches the transcript. An argument the command does not take is refused
//! as INVALID_ARGUMENT naming `message`.

use std::sync::Arc;

use openclaw_transcript::SessionEntry;
use prompt_render::ReasoningLevel;

use super::{Submitted, run_context};
use crate::{
    error::RuntimeError,
    prompt_input::{THINKING_LEVELS, TurnChannel, reasoning_of, thinking_of},
    services::Services,
    sessions::{
        Session,
        queue::{Disposition, QueueMode},
    },
};

/// A chat command and its argument (trimmed; `""` when bare).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Command<'a> {
    kind: Kind,
    argument: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Queue,
    Reasoning,
    Think,
    Context,
    Approve,
    Status,
}

/// The commands by name.
const COMMANDS: &[(&str, Kind)] = &[
    ("/queue", Kind::Queue),
    ("/reasoning", Kind::Reasoning),
    ("/think", Kind::Think),
    ("/thinking", Kind::Think),
    ("/context", Kind::Context),
    ("/approve", Kind::Approve),
    ("/status", Kind::Status),
];

/// Words that put a setting back to the config's.
const RESET_WORDS: &[&str] = &["default", "reset", "clear"];

/// The command a message is, if it is one: its name must be the whole first word.
pub(crate) fn parse(message: &str) -> Option<Command<'_>> {
    let message = message.trim();
    COMMANDS.iter().find_map(|(name, kind)| {
        let rest = message.strip_prefix(name)?;
        (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| Command {
            kind: *kind,
            argument: rest.trim(),
        })
    })
}

/// Answers `command` for `session`.
pub(crate) async fn answer(
    services: &Arc<Services>,
    session: &Arc<Session>,
    entry: &SessionEntry,
    channel: &TurnChannel,
    sender_id: &str,
    command: Command<'_>,
) -> Result<Submitted, RuntimeError> {
    // Subscribed before anything changes, like a message's submission.
    let events = session.live.subscribe();
    let word = command.argument.to_ascii_lowercase();
    let mut mode = entry
        .queue_mode
        .as_deref()
        .and_then(QueueMode::parse)
        .unwrap_or_default();
    let reply = match command.kind {
        Kind::Queue => {
            let (reply, applied) = queue(services, session, entry, command.argument).await?;
            mode = applied;
            reply
        }
        Kind::Reasoning => reasoning(services, session, entry, command.argument).await?,
        Kind::Think => think(services, session, entry, command.argument).await?,
        Kind::Approve => approve(services, session, channel, sender_id, command.argument).await?,
        Kind::Status => {
            if !word.is_empty() {
                return Err(RuntimeError::invalid(
                    "message",
                    format!("/status takes no argument; got {:?}", command.argument),
                ));
            }
            status(services, session, channel).await?
        }
        Kind::Context => {
            let detail = match word.as_str() {
                "" | "list" => false,
                "detail" => true,
                _ => {
                    return Err(RuntimeError::invalid(
                        "message",
                        format!("/context takes list or detail; got {:?}", command.argument),
                    ));
                }
            };
            let preview =
                super::preview(services, &session.agent.id, session.key.as_str(), channel).await?;
            crate::report::context_text(
                &preview.workspace.display().to_string(),
                &preview.prompt,
                detail,
            )
        }
    };
    tracing::info!(session = %session.key.as_str(), command = ?command.kind, "chat command answered");
    Ok(Submitted {
        acceptance: super::acceptance(session, Disposition::Command { reply }, 0, mode),
        events,
    })
}

/// `/queue <mode>` (or `/queue default`) sets the session's queue mode; a bare `/queue`
/// reports the mode in effect. Returns the reply and the mode that now applies.
async fn queue(
    services: &Arc<Services>,
    session: &Arc<Session>,
    entry: &SessionEntry,
    argument: &str,
) -> Result<(String, QueueMode), RuntimeError> {
    let word = argument.to_ascii_lowercase();
    let current = entry.queue_mode.as_deref().and_then(QueueMode::parse);
    let (stored, reply, mode) = match word.as_str() {
        "" => {
            let reply = match current {
                Some(mode) => format!("This session's queue mode is {}.", mode.as_str()),
                None => {
                    "This session follows the configured queue mode (messages.queue).".to_owned()
                }
            };
            (None, reply, current.unwrap_or_default())
        }
        w if RESET_WORDS.contains(&w) => (
            Some(None),
            "This session now follows the configured queue mode again.".to_owned(),
            QueueMode::default(),
        ),
        other => match QueueMode::parse(other) {
            Some(mode) => (
                Some(Some(mode.as_str().to_owned())),
                format!("This session's queue mode is now {}.", mode.as_str()),
                mode,
            ),
            None => {
                return Err(RuntimeError::invalid(
                    "message",
                    format!(
                        "/queue takes one of steer, followup, collect, interrupt or default; got {argument:?}"
                    ),
                ));
            }
        },
    };
    if let Some(value) = stored {
        services
            .sessions()
            .update_entry(&session.agent, &session.key, move |entry| {
                entry.queue_mode = value;
            })
            .await?;
    }
    Ok((reply, mode))
}

/// `/approve <id> allow-once|allow-always|deny` decides a pending exec approval of the
/// session's agent. Only an owner may: a sender listed in `commands.ownerAllowFrom`, or a
/// message with no channel (an API client, which authenticated to the service itself).
/// Anyone else is PERMISSION_DENIED and the approval stays pending.
async fn approve(
    services: &Arc<Services>,
    session: &Arc<Session>,
    channel: &TurnChannel,
    sender_id: &str,
    argument: &str,
) -> Result<String, RuntimeError> {
    let usage = || {
        RuntimeError::invalid(
            "message",
            format!(
                "/approve takes an approval id and allow-once, allow-always or deny, e.g. \
                 /approve 3f9a1c2e allow-once; got {argument:?}"
            ),
        )
    };
    let mut words = argument.split_whitespace();
    let (Some(id), Some(word), None) = (words.next(), words.next(), words.next()) else {
        return Err(usage());
    };
    let decision = openclaw_tools::ApprovalDecision::parse(word).ok_or_else(usage)?;
    let by = if channel.channel.is_empty() {
        "the API client".to_owned()
    } else {
        let owners = services
            .loaded_config()?
            .config
            .raw()
            .commands
            .as_ref()
            .and_then(|c| c.owner_allow_from.clone())
            .unwrap_or_default();
        let owner = crate::senders::is_owner(&owners, &channel.channel, sender_id);
        if !owner {
            tracing::warn!(session = %session.key.as_str(), channel = %channel.channel, sender = %sender_id, "an /approve from a sender who is not an owner was refused");
            return Err(RuntimeError::PermissionDenied(format!(
                "only an owner (commands.ownerAllowFrom) can decide approvals; sender {sender_id:?} on {} is not one",
                channel.channel
            )));
        }
        format!("{}:{sender_id}", channel.channel)
    };
    let approval = services
        .approvals()
        .resolve(
            Some(&session.agent.id),
            id,
            decision,
            &by,
            services.now_ms(),
        )
        .await?;
    Ok(format!(
        "Approval {} is {}: {}",
        approval.id,
        approval.state.describe(),
        approval.command
    ))
}

/// `/status`: the session's status card, as `session_status` shows it to the model (time,
/// model, tokens, context window, compactions, settings), then what the next prompt injects
/// of each workspace file, raw and injected characters with the reason of every cut.
async fn status(
    services: &Arc<Services>,
    session: &Arc<Session>,
    channel: &TurnChannel,
) -> Result<String, RuntimeError> {
    use openclaw_tools::Tool as _;
    let loaded = services.loaded_config()?;
    let run = run_context::run_model(services, &loaded, session, None).await?;
    let ctx = super::controls::tool_context(
        services,
        session,
        &run,
        openclaw_tools::CancellationToken::new(),
    )?;
    let card = openclaw_tools::SessionStatusTool
        .call(&ctx, serde_json::json!({}))
        .await;
    let preview =
        super::preview(services, &session.agent.id, session.key.as_str(), channel).await?;
    let files = crate::report::context_text(
        &preview.workspace.display().to_string(),
        &preview.prompt,
        false,
    );
    // P-49: files the session's turns keep cutting, with what to do about them.
    let cuts: String = services
        .cuts()
        .repeated(&session.agent.id, session.key.as_str())
        .iter()
        .map(|cut| format!("\nCut on the last {} turns: {}.", cut.renders, cut.advice()))
        .collect();
    Ok(format!("{}\n\n{files}{cuts}", card.text()))
}

fn level_name(level: ReasoningLevel) -> &'static str {
    match level {
        ReasoningLevel::On => "on",
        ReasoningLevel::Stream => "stream",
        _ => "off",
    }
}

/// `/reasoning on|off|stream` (or `default`) sets whether the session's reasoning is shown;
/// a bare `/reasoning` reports the level in effect. The prompt's Reasoning line follows it
/// from the next turn on.
async fn reasoning(
    services: &Arc<Services>,
    session: &Arc<Session>,
    entry: &SessionEntry,
    argument: &str,
) -> Result<String, RuntimeError> {
    let word = argument.to_ascii_lowercase();
    let (stored, reply) = match word.as_str() {
        "" => {
            let reply = match reasoning_of(entry.reasoning_level.as_deref()) {
                Some(level) => format!(
                    "Reasoning visibility for this session is {}.",
                    level_name(level)
                ),
                None => "This session follows the agent's reasoning default (reasoningDefault)."
                    .to_owned(),
            };
            return Ok(reply);
        }
        w if RESET_WORDS.contains(&w) => (
            None,
            "This session now follows the agent's reasoning default again.".to_owned(),
        ),
        other => match reasoning_of(Some(other)) {
            Some(level) => (
                Some(level_name(level).to_owned()),
                format!(
                    "Reasoning visibility for this session is now {}.",
                    level_name(level)
                ),
            ),
            None => {
                return Err(RuntimeError::invalid(
                    "message",
                    format!("/reasoning takes one of on, off, stream or default; got {argument:?}"),
                ));
            }
        },
    };
    services
        .sessions()
        .update_entry(&session.agent, &session.key, move |entry| {
            entry.reasoning_level = stored;
        })
        .await?;
    Ok(reply)
}

/// `/think <level>` (or `default`) sets the session's thinking level: the prompt's Runtime
/// line (`thinking=`) and the reasoning every model request asks for (an Anthropic thinking
/// budget, a Responses effort, a Chat Completions `reasoning_effort`) follow it from the next
/// run on. A bare `/think` reports the level in effect. Stored as `thinkingLevel` in the
/// session's index entry, so it survives restarts and resets.
async fn think(
    services: &Arc<Services>,
    session: &Arc<Session>,
    entry: &SessionEntry,
    argument: &str,
) -> Result<String, RuntimeError> {
    if let openclaw_config::resolve::AgentRuntime::Codex(_) = session.agent.runtime {
        return Err(RuntimeError::FailedPrecondition(format!(
            "/think: agent {:?} runs on the Codex runtime, which takes its reasoning effort from its own settings",
            session.agent.id
        )));
    }
    let word = argument.to_ascii_lowercase();
    let default = session
        .agent
        .thinking_default
        .map_or("off", openclaw_config::raw::ThinkingLevel::as_str);
    let (stored, reply) = match word.as_str() {
        "" => {
            let reply = match thinking_of(entry.thinking_level.as_deref()) {
                Some(level) => format!("Thinking for this session is {level}."),
                None => format!(
                    "This session follows the agent's thinking default (thinkingDefault): {default}."
                ),
            };
            return Ok(reply);
        }
        w if RESET_WORDS.contains(&w) => (
            None,
            format!("This session now follows the agent's thinking default again: {default}."),
        ),
        other => match thinking_of(Some(other)) {
            Some(level) => (
                Some(level.as_str().to_owned()),
                format!("Thinking for this session is now {level}."),
            ),
            None => {
                let levels: Vec<&str> = THINKING_LEVELS.iter().map(|l| l.as_str()).collect();
                return Err(RuntimeError::invalid(
                    "message",
                    format!(
                        "/think takes one of {} or default; got {argument:?}",
                        levels.join(", ")
                    ),
                ));
            }
        },
    };
    services
        .sessions()
        .update_entry(&session.agent, &session.key, move |entry| {
            entry.thinking_level = stored;
        })
        .await?;
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_recognised_only_as_whole_first_words() {
        let got = |m| parse(m).map(|c| (c.kind, c.argument));
        assert_eq!(got("/queue collect"), Some((Kind::Queue, "collect")));
        assert_eq!(got("  /queue  "), Some((Kind::Queue, "")));
        assert_eq!(got("/reasoning stream"), Some((Kind::Reasoning, "stream")));
        assert_eq!(got("/context list"), Some((Kind::Context, "list")));
        assert_eq!(got("/context\tdetail "), Some((Kind::Context, "detail")));
        assert_eq!(got("/queued work"), None);
        assert_eq!(got("/reasoningx on"), None);
        assert_eq!(got("please /queue collect"), None);
        assert_eq!(got("/contexts"), None);
        assert_eq!(
            got("/approve 3f9a1c2e deny"),
            Some((Kind::Approve, "3f9a1c2e deny"))
        );
        assert_eq!(got("/approved"), None);
        assert_eq!(got("/status"), Some((Kind::Status, "")));
        assert_eq!(got("/statusx"), None);
        assert_eq!(got("/think high"), Some((Kind::Think, "high")));
        assert_eq!(got("/thinking"), Some((Kind::Think, "")));
        assert_eq!(got("/thinker on"), None);
    }
}

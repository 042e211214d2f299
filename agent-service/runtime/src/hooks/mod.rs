//! The bootstrap-file hook (P-36) and the prompt-build hook (P-6), in the two forms this
//! runtime offers in place of a JavaScript plugin host: declarative config rules and an
//! external command that speaks JSON on stdin and stdout.
//!
//! Both run while a turn's render request is built, so a run and a preview of it apply the
//! same hooks. Bootstrap hooks change the list of injected files; the privacy filter (L5)
//! runs on whatever they return, judging names and real paths afresh, so no hook can put
//! MEMORY.md into a shared session. Prompt-build additions go below the cache boundary unless
//! they ask for the stable prefix.
//!
//! Hooks are operator config: their commands run as the service, never inside a session's
//! sandbox, so they must run code no session can write and read nothing a session wrote
//! unless asked to: a vetted program ([`program`]), a filtered environment, and `/` as the
//! working directory, never the workspace. A failing hook fails the turn with
//! FAILED_PRECONDITION naming its key, unless it is configured `onError: "skip"`, which keeps
//! what came before it and logs a warning; a command refused by that rule fails the turn
//! whatever `onError` says.

mod command;
mod program;
mod rules;

pub use program::HookLaunch;

use std::path::Path;

use openclaw_config::raw::{HookOnError, HookPlacement};
use openclaw_config::resolve::{BootstrapHook, Hook, HookCommand, PromptBuildHook};
use serde::Serialize;

pub use crate::visibility::InjectedFile;
use crate::{error::RuntimeError, sessions::SessionKind};

/// The facts of the session a hook runs for, as a command receives them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookFacts<'a> {
    /// The agent.
    pub agent_id: &'a str,
    /// The session's full key.
    pub session_key: &'a str,
    /// `main`, `direct`, `group`, `channel`, `subagent` or `cron`.
    pub session_kind: &'static str,
    /// Whether the session may see private files (only the agent's main session).
    pub private: bool,
    /// Whether the turn is a heartbeat.
    pub heartbeat: bool,
    /// The workspace directory (named in a command's request; never its working directory).
    pub workspace: &'a Path,
    /// What commands are judged against and launched with.
    #[serde(skip)]
    pub launch: &'a HookLaunch,
}

impl<'a> HookFacts<'a> {
    /// The facts of a session of `kind`.
    pub fn new(
        agent_id: &'a str,
        session_key: &'a str,
        kind: SessionKind,
        heartbeat: bool,
        workspace: &'a Path,
        launch: &'a HookLaunch,
    ) -> Self {
        Self {
            agent_id,
            session_key,
            session_kind: kind_name(kind),
            private: kind.is_private(),
            heartbeat,
            workspace,
            launch,
        }
    }
}

fn kind_name(kind: SessionKind) -> &'static str {
    match kind {
        SessionKind::Main => "main",
        SessionKind::Direct => "direct",
        SessionKind::Group => "group",
        SessionKind::Channel => "channel",
        SessionKind::Subagent => "subagent",
        SessionKind::Cron => "cron",
    }
}

/// Text the prompt-build hooks add, by where it goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptAdditions {
    /// Above the cache boundary, in the stable prefix.
    pub stable: Vec<String>,
    /// Below the cache boundary, with the per-turn sections.
    pub dynamic: Vec<String>,
}

impl PromptAdditions {
    fn push(&mut self, placement: HookPlacement, text: String) {
        if text.trim().is_empty() {
            return;
        }
        match placement {
            HookPlacement::Stable => self.stable.push(text),
            HookPlacement::Dynamic => self.dynamic.push(text),
        }
    }

    /// Appends the additions after the provider contribution's own text, a blank line apart.
    pub fn apply(self, contribution: &mut prompt_render::Contribution) {
        append(&mut contribution.stable_prefix, self.stable);
        append(&mut contribution.dynamic_suffix, self.dynamic);
    }
}

fn append(target: &mut String, texts: Vec<String>) {
    for text in texts {
        if !target.trim().is_empty() {
            target.push_str("\n\n");
        }
        target.push_str(text.trim_end());
    }
}

/// Runs the bootstrap hooks in order over the loaded files.
pub async fn apply_bootstrap(
    hooks: &[Hook<BootstrapHook>],
    facts: &HookFacts<'_>,
    mut files: Vec<InjectedFile>,
) -> Result<Vec<InjectedFile>, RuntimeError> {
    for hook in hooks {
        let result = match &hook.form {
            BootstrapHook::Command(cmd) => command::bootstrap(cmd, facts, &files)
                .await
                .map(|next| files = next),
            rule => rules::apply(rule, facts.workspace, &mut files).await,
        };
        if let Err(error) = result {
            skip_or_fail(&hook.key, on_error(&hook.form), error)?;
        }
    }
    Ok(files)
}

/// Runs the prompt-build hooks in order and gathers what they add.
pub async fn prompt_additions(
    hooks: &[Hook<PromptBuildHook>],
    facts: &HookFacts<'_>,
) -> Result<PromptAdditions, RuntimeError> {
    let mut out = PromptAdditions::default();
    for hook in hooks {
        let result = match &hook.form {
            PromptBuildHook::Text { text, placement } => Ok(vec![(*placement, text.clone())]),
            PromptBuildHook::File { from, placement } => rules::read(facts.workspace, from)
                .await
                .map(|(text, _)| vec![(*placement, text)]),
            PromptBuildHook::Command(cmd) => command::prompt_build(cmd, facts).await,
        };
        let on_error = match &hook.form {
            PromptBuildHook::Command(cmd) => cmd.on_error,
            PromptBuildHook::Text { .. } | PromptBuildHook::File { .. } => HookOnError::Fail,
        };
        match result {
            Ok(additions) => {
                for (placement, text) in additions {
                    out.push(placement, text);
                }
            }
            Err(error) => skip_or_fail(&hook.key, on_error, error)?,
        }
    }
    Ok(out)
}

/// Why a hook failed, before its key is attached.
#[derive(Debug)]
pub(crate) enum HookError {
    /// The hook cannot do what it says (a missing file, a failed or silent command).
    Failed(String),
    /// The hook reached outside the workspace.
    Denied(String),
    /// The command runs code a session or another user can change: never run, never skipped.
    Refused(String),
}

fn on_error(form: &BootstrapHook) -> HookOnError {
    match form {
        BootstrapHook::Command(HookCommand { on_error, .. }) => *on_error,
        // A rule is checked config: when its file is gone the operator must hear of it.
        BootstrapHook::Replace { .. } | BootstrapHook::Drop { .. } | BootstrapHook::Add { .. } => {
            HookOnError::Fail
        }
    }
}

fn skip_or_fail(key: &str, on_error: HookOnError, error: HookError) -> Result<(), RuntimeError> {
    let (message, denied) = match error {
        HookError::Failed(m) => (m, false),
        HookError::Denied(m) => (m, true),
        HookError::Refused(m) => {
            return Err(RuntimeError::FailedPrecondition(format!("{key}: {m}")));
        }
    };
    match on_error {
        HookOnError::Skip => {
            tracing::warn!(hook = %key, error = %message, "hook failed; skipped as configured (onError: skip)");
            Ok(())
        }
        HookOnError::Fail if denied => {
            Err(RuntimeError::PermissionDenied(format!("{key}: {message}")))
        }
        HookOnError::Fail => Err(RuntimeError::FailedPrecondition(format!(
            "{key}: {message}"
        ))),
    }
}

#[cfg(test)]
mod tests;

//! What a message and a run need from the shared services: admitting a message to its
//! session, choosing a model, and the small services the loop and the tools call. A run's own
//! model, tools and tool context are decided once, in `super::run_context`.

use std::{
    path::Path,
    sync::Arc,
    time::{Duration, Instant},
};

use openclaw_config::resolve::AgentRuntime;
use openclaw_proto::prompt::v1 as pb;
use openclaw_providers::ResolvedModel;
use openclaw_transcript::{SessionEntry, SessionKey, Usage};
use openclaw_workspace::BootstrapFile;

use super::{
    DEFAULT_RUN_TIMEOUT, RunSpec, kind_of, millis,
    run_context::{descriptors, tools_for},
    sender_allowed,
};
use crate::{
    config_state::Loaded,
    error::RuntimeError,
    prompt_input::{self, TurnChannel, TurnPrompt, TurnSources},
    services::Services,
    sessions::Session,
    sessions::{NewSession, SessionTarget, key},
};

mod prompt;

pub use prompt::Preview;

/// An admitted message's session, with its index entry and the config it
/// was checked against.
pub(crate) struct Admitted {
    pub session: Arc<Session>,
    pub entry: Arc<SessionEntry>,
    pub loaded: Arc<Loaded>,
}

impl Services {
    /// Checks a message and opens its session, refusing before anything is
    /// written: an empty message, an unknown or blocked agent, a sender
    /// outside the channel's allowlist, a bad session key.
    pub(crate) async fn admit(&self, spec: &RunSpec) -> Result<Admitted, RuntimeError> {
        if spec.message.trim().is_empty() {
            return Err(RuntimeError::invalid("message", "must not be empty"));
        }
        let loaded = self.loaded_config()?;
        let agent = self.usable_agent(&spec.agent_id)?;
        // a sender outside a configured allowlist is refused and
        // recorded nowhere.
        if !spec.channel.channel.is_empty()
            && !sender_allowed(&loaded.config, &spec.channel.channel, &spec.sender_id)
        {
            return Err(RuntimeError::PermissionDenied(format!(
                "sender {:?} is not in channels.{}.allowFrom",
                spec.sender_id, spec.channel.channel
            )));
        }
        let key = key::normalize(&agent.id, &spec.session_key)?;
        let cwd = self.session_workspace(&agent, &key).await?;
        // A sandboxed session whose sandbox cannot be made is refused before the message is
        // accepted, so nothing is recorded that no run could answer.
        self.session_isolation(&agent, &key, &cwd)?;
        let meta = NewSession {
            channel: (!spec.channel.channel.is_empty()).then(|| spec.channel.channel.clone()),
            chat_type: (!spec.channel.chat_type.is_empty()).then(|| spec.channel.chat_type.clone()),
            display_name: None,
        };
        let (info, _) = self.sessions().create(&agent, &key, &cwd, meta).await?;
        let session = self.sessions().open(&agent, &info, &cwd).await?;
        Ok(Admitted {
            session: Arc::new(session),
            entry: info.entry,
            loaded,
        })
    }

    /// Run override > session override > agent model > configured default.
    /// A Codex agent's model is not looked up among our providers: Codex
    /// calls it, and the model id part is the Codex model slug.
    pub(crate) fn choose_model(
        &self,
        loaded: &Loaded,
        agent: &openclaw_config::resolve::AgentView,
        run: Option<&str>,
        session: Option<&str>,
    ) -> Result<ResolvedModel, RuntimeError> {
        let wanted = run
            .filter(|m| !m.trim().is_empty())
            .or(session)
            .or(agent.model.as_deref())
            .map(str::to_owned)
            .or_else(|| {
                loaded
                    .config
                    .default_model()
                    .map(|m| format!("{}/{}", m.provider, m.model))
            });
        let Some(wanted) = wanted else {
            return Err(RuntimeError::FailedPrecondition(
                "no model is configured: set agents.defaults.model and define its provider under models.providers (the offline `scripted` provider needs no account)".to_owned(),
            ));
        };
        if let AgentRuntime::Codex(_) = agent.runtime {
            return super::codex::codex_model(&loaded.config, &wanted);
        }
        self.providers()?
            .resolve(&wanted)
            .map_err(|e| RuntimeError::FailedPrecondition(format!("model {wanted:?}: {e}")))
    }

    /// The workspace bootstrap files, read now.
    pub(crate) async fn bootstrap_files(
        &self,
        cwd: &Path,
    ) -> Result<Vec<BootstrapFile>, RuntimeError> {
        let cwd = cwd.to_path_buf();
        tokio::task::spawn_blocking(move || openclaw_workspace::load_bootstrap_files(&cwd))
            .await
            .map_err(|e| RuntimeError::Internal(format!("file task failed: {e}")))?
            .map_err(crate::workspaces::workspace_error)
    }

    /// How long one run may take (`agents.defaults.timeoutSeconds`).
    pub(crate) fn run_timeout(&self) -> Duration {
        self.loaded_config()
            .ok()
            .and_then(|l| {
                l.config
                    .raw()
                    .agents
                    .as_ref()
                    .and_then(|a| a.defaults.as_ref())
                    .and_then(|d| d.timeout_seconds)
            })
            .map_or(DEFAULT_RUN_TIMEOUT, Duration::from_secs)
    }

    /// Milliseconds since the epoch, from the services' clock.
    pub(crate) fn now_ms(&self) -> i64 {
        millis(self.clock().now())
    }

    /// Adds a turn's usage to the index and touches the timestamps (written
    /// behind the run; see `sessions::touches`).
    pub(crate) fn record_turn(
        &self,
        agent: &openclaw_config::resolve::AgentView,
        key: &SessionKey,
        usage: &Usage,
    ) {
        self.sessions().record_turn(
            agent,
            key,
            crate::sessions::TurnDelta {
                input: usage.input,
                output: usage.output,
                total: usage.total_tokens,
                at: self.now_ms(),
                ..crate::sessions::TurnDelta::default()
            },
        );
    }

    /// Counts a compaction and a memory flush in the index (written behind
    /// the run, like turn usage).
    pub(crate) fn record_compaction(
        &self,
        agent: &openclaw_config::resolve::AgentView,
        key: &SessionKey,
        compactions: u64,
        memory_flush_at: Option<i64>,
    ) {
        self.sessions().record_turn(
            agent,
            key,
            crate::sessions::TurnDelta {
                at: self.now_ms(),
                compactions,
                memory_flush_at,
                ..crate::sessions::TurnDelta::default()
            },
        );
    }

    /// A session's `/reasoning` setting, if it has one (an unreadable index reads as none: the
    /// agent's default applies).
    pub(crate) async fn session_reasoning(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Option<prompt_render::ReasoningLevel> {
        let entry = self.index_entry(agent_id, key).await.ok().flatten()?;
        crate::prompt_input::reasoning_of(entry.reasoning_level.as_deref())
    }

    /// The index entry of a session.
    pub(crate) async fn index_entry(
        &self,
        agent_id: &str,
        key: &SessionKey,
    ) -> Result<Option<Arc<SessionEntry>>, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        match self
            .sessions()
            .lookup(&agent, &SessionTarget::Key(key.as_str().to_owned()))
            .await
        {
            Ok(info) => Ok(Some(info.entry)),
            Err(RuntimeError::SessionNotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sets (or with `None` / `"default"` clears) a session's model override
    /// after checking that the model resolves. Returns the model
    /// now in effect.
    pub(crate) async fn set_model_override(
        &self,
        agent_id: &str,
        key: &SessionKey,
        model: Option<String>,
    ) -> Result<String, RuntimeError> {
        let agent = self.agent_view(agent_id)?;
        let model =
            model.filter(|m| !m.trim().is_empty() && !m.trim().eq_ignore_ascii_case("default"));
        let loaded = self.loaded_config()?;
        let effective = self.choose_model(&loaded, &agent, None, model.as_deref())?;
        let stored = model.map(|_| {
            format!(
                "{}/{}",
                effective.reference.provider, effective.reference.model
            )
        });
        self.sessions()
            .update_entry(&agent, key, move |entry| entry.model_override = stored)
            .await?;
        Ok(format!(
            "{}/{}",
            effective.reference.provider, effective.reference.model
        ))
    }

    /// Replaces `openclaw.json` atomically (temp file + fsync + rename) and
    /// reloads it. The caller has validated the text.
    pub(crate) fn write_config(&self, text: &str) -> Result<(), RuntimeError> {
        let path = &self.settings().config_path;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut temp = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| RuntimeError::Internal(format!("cannot write the config: {e}")))?;
        std::io::Write::write_all(&mut temp, text.as_bytes())
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| RuntimeError::Internal(format!("cannot write the config: {e}")))?;
        temp.persist(path)
            .map_err(|e| RuntimeError::Internal(format!("cannot replace the config: {e}")))?;
        tracing::info!(path = %path.display(), "config rewritten by the gateway tool; reloading");
        self.reload();
        Ok(())
    }
}

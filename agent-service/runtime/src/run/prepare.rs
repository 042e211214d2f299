//! What a message and a run need from the shared services: admitting a message to its
//! session, choosing a model, and the small services the loop and the tools call. A run's own
//! model, tools and tool context are decided once, in `super::run_context`.

use std::{sync::Arc, time::Instant};

use openclaw_config::resolve::AgentRuntime;
use openclaw_proto::prompt::v1 as pb;
use openclaw_providers::ResolvedModel;
use openclaw_transcript::{SessionEntry, SessionKey};

use super::{
    RunSpec, kind_of,
    models::choose_model,
    run_context::{descriptors, tools_for},
    sender_allowed,
};
use crate::{
    config_state::Loaded,
    error::RuntimeError,
    prompt_input::{self, TurnChannel, TurnPrompt, TurnSources},
    services::Services,
    sessions::Session,
    sessions::{NewSession, key},
};

mod model_view;
mod prompt;

pub(crate) use model_view::{model_messages, user_origin, user_turn_text};
pub use prompt::Preview;
pub(crate) use prompt::{
    RunPrompt, RunRender, contribution, preview, render_prompt, render_request, render_turn,
};

/// An admitted message's session, with its index entry and the config it
/// was checked against.
pub(crate) struct Admitted {
    pub session: Arc<Session>,
    pub entry: Arc<SessionEntry>,
    pub loaded: Arc<Loaded>,
}

/// Checks a message and opens its session, refusing before anything is
/// written: an empty message, an unknown or blocked agent, a sender
/// outside the channel's allowlist, a bad session key.
pub(crate) async fn admit(services: &Services, spec: &RunSpec) -> Result<Admitted, RuntimeError> {
    if spec.message.trim().is_empty() {
        return Err(RuntimeError::invalid("message", "must not be empty"));
    }
    let loaded = services.loaded_config()?;
    let agent = services.usable_agent(&spec.agent_id)?;
    // a sender outside a configured allowlist is refused and
    // recorded nowhere.
    if !spec.channel.channel.is_empty()
        && !sender_allowed(
            &loaded.config,
            &spec.channel.channel,
            &spec.channel.sender_id,
        )
    {
        return Err(RuntimeError::PermissionDenied(format!(
            "sender {:?} is not in channels.{}.allowFrom",
            spec.channel.sender_id, spec.channel.channel
        )));
    }
    let key = key::normalize(&agent.id, &spec.session_key)?;
    let cwd = services.session_workspace(&agent, &key).await?;
    // A sandboxed session whose sandbox cannot be made is refused before the message is
    // accepted, so nothing is recorded that no run could answer.
    services.session_isolation(&agent, &key, &cwd)?;
    let meta = NewSession {
        channel: (!spec.channel.channel.is_empty()).then(|| spec.channel.channel.clone()),
        chat_type: (!spec.channel.chat_type.is_empty()).then(|| spec.channel.chat_type.clone()),
        display_name: None,
    };
    let (info, _) = services.sessions().create(&agent, &key, &cwd, meta).await?;
    let session = services.sessions().open(&agent, &info, &cwd).await?;
    Ok(Admitted {
        session: Arc::new(session),
        entry: info.entry,
        loaded,
    })
}

/// Sets (or with `None` / `"default"` clears) a session's model override
/// after checking that the model resolves. Returns the model
/// now in effect.
pub(crate) async fn set_model_override(
    services: &Services,
    agent_id: &str,
    key: &SessionKey,
    model: Option<String>,
) -> Result<String, RuntimeError> {
    let agent = services.agent_view(agent_id)?;
    let model = model.filter(|m| !m.trim().is_empty() && !m.trim().eq_ignore_ascii_case("default"));
    let loaded = services.loaded_config()?;
    let effective = choose_model(services, &loaded, &agent, None, model.as_deref())?;
    let stored = model.map(|_| {
        format!(
            "{}/{}",
            effective.reference.provider, effective.reference.model
        )
    });
    services
        .sessions()
        .update_entry(&agent, key, move |entry| entry.model_override = stored)
        .await?;
    Ok(format!(
        "{}/{}",
        effective.reference.provider, effective.reference.model
    ))
}

//! A run's model: the run's override, else the session's, else the agent's, else the
//! configured default, resolved among the model providers; a Codex agent's model is not
//! looked up there (Codex calls it) and gets a stand-in provider that refuses every call.

use std::sync::Arc;

use openclaw_config::{Config, ModelRef, resolve::AgentRuntime};
use openclaw_providers::{ModelProvider, ModelRequest, ProviderError, ResolvedModel, StreamEvent};
use openclaw_transcript::AssistantMessage;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::{config_state::Loaded, error::RuntimeError, services::Services};

/// Run override > session override > agent model > configured default.
/// A Codex agent's model is not looked up among our providers: Codex
/// calls it, and the model id part is the Codex model slug.
pub(crate) fn choose_model(
    services: &Services,
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
        return codex_model(&loaded.config, &wanted);
    }
    services
        .providers()?
        .resolve(&wanted)
        .map_err(|e| RuntimeError::FailedPrecondition(format!("model {wanted:?}: {e}")))
}

/// The provider id a Codex model gets when its reference names none.
pub(crate) const CODEX_PROVIDER: &str = "codex";

/// Stands in for a model provider in a Codex agent's [`RunModel`]: Codex
/// calls the model itself, so nothing may call it through us.
struct CodexModel;

/// A Codex agent's model: no provider lookup (Codex calls the model). An
/// alias or `provider/model` resolves through the catalog when it can; a
/// bare id is taken as it is. The model id part is the Codex model slug.
fn codex_model(config: &Config, wanted: &str) -> Result<ResolvedModel, RuntimeError> {
    let reference = config
        .resolve_model(wanted)
        .or_else(|_| ModelRef::parse(wanted))
        .or_else(|e| match wanted.trim() {
            bare if !bare.is_empty() && !bare.contains('/') => Ok(ModelRef {
                provider: CODEX_PROVIDER.to_owned(),
                model: bare.to_owned(),
                auth_profile: None,
            }),
            _ => Err(RuntimeError::FailedPrecondition(format!(
                "model {wanted:?}: {e}"
            ))),
        })?;
    Ok(ResolvedModel {
        provider: Arc::new(CodexModel),
        wire_model: reference.model.clone(),
        reference,
    })
}

#[async_trait::async_trait]
impl ModelProvider for CodexModel {
    fn id(&self) -> &str {
        CODEX_PROVIDER
    }

    fn api(&self) -> &'static str {
        "codex-app-server"
    }

    async fn complete(
        &self,
        _request: &ModelRequest,
        _events: mpsc::Sender<StreamEvent>,
        _cancel: CancellationToken,
    ) -> Result<AssistantMessage, ProviderError> {
        Err(ProviderError::Config {
            message: "a Codex agent's model is called by the Codex app-server, not by OpenClaw"
                .to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_models_need_no_provider() {
        let config = openclaw_config::load(
            "{}",
            &openclaw_config::NoEnv,
            &openclaw_config::LoadOptions::default(),
        )
        .expect("an empty config");
        let named = codex_model(&config, "openai/gpt-5.5").expect("provider/model");
        assert_eq!(
            (named.reference.provider.as_str(), named.wire_model.as_str()),
            ("openai", "gpt-5.5")
        );
        let bare = codex_model(&config, "gpt-5.5").expect("bare id");
        assert_eq!(
            (bare.reference.provider.as_str(), bare.wire_model.as_str()),
            ("codex", "gpt-5.5")
        );
        assert!(codex_model(&config, "openai/").is_err());
    }
}

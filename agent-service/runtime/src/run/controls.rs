//! The runtime's side of the tools that act on it: `session_status` (the
//! status card and the per-session model override, R-15) and the
//! gateway's config operations (reading and writing `openclaw.json`).

use std::sync::Arc;

use openclaw_tools::{ConfigControl, SessionControl, StatusCard, Usage};

use crate::services::Services;

/// One session's controls.
pub struct SessionControls {
    pub(crate) services: Arc<Services>,
    pub(crate) agent_id: String,
    pub(crate) key: openclaw_transcript::SessionKey,
    /// The model in effect for the run, provider/model.
    pub(crate) model: String,
    /// The agent's configured model.
    pub(crate) default_model: String,
}

#[async_trait::async_trait]
impl SessionControl for SessionControls {
    async fn status(&self) -> StatusCard {
        let entry = self
            .services
            .index_entry(&self.agent_id, &self.key)
            .await
            .ok()
            .flatten();
        StatusCard {
            model: self.model.clone(),
            default_model: Some(self.default_model.clone()),
            model_override: entry.as_ref().and_then(|e| e.model_override.clone()),
            usage: entry
                .as_ref()
                .map(|e| Usage {
                    input_tokens: e.input_tokens,
                    output_tokens: e.output_tokens,
                    cache_read_tokens: 0,
                })
                .unwrap_or_default(),
            context_tokens: None,
            context_window: self.services.loaded_config().ok().map(|loaded| {
                let (provider, model) = self.model.split_once('/').unwrap_or(("", &self.model));
                crate::compaction::Budget::resolve(loaded.config.raw(), provider, model).window
            }),
            compactions: entry.as_ref().map_or(0, |e| e.compaction_count),
            thinking: entry.as_ref().and_then(|e| e.thinking_level.clone()),
            queue_mode: entry.as_ref().and_then(|e| e.queue_mode.clone()),
            extra: vec![("session".to_owned(), self.key.as_str().to_owned())],
        }
    }

    async fn set_model_override(&self, model: Option<String>) -> Result<String, String> {
        self.services
            .set_model_override(&self.agent_id, &self.key, model)
            .await
            .map_err(|e| e.to_string())
    }
}

/// The config file, for the gateway tool.
pub struct ConfigFileControl {
    pub(crate) services: Arc<Services>,
}

impl ConfigControl for ConfigFileControl {
    fn read(&self) -> Result<String, String> {
        match std::fs::read_to_string(&self.services.settings().config_path) {
            Ok(text) => Ok(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(format!("cannot read the config file: {e}")),
        }
    }

    fn write(&self, text: &str) -> Result<(), String> {
        self.services.write_config(text).map_err(|e| e.to_string())
    }
}

//! Model questions answered from config, all through the one parser in
//! [`crate::model_ref`].

use crate::error::ConfigError;
use crate::load::Config;
use crate::model_ref::{ModelCatalog, ModelRef};
use crate::raw::ProviderConfig;

/// One `alias -> provider/model` line for the prompt's model aliases section.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ModelAlias {
    /// The alias as written.
    pub alias: String,
    /// The `agents.defaults.models` key it names.
    pub target: String,
}

impl Config {
    /// The facts model resolution needs: aliases (ordered by model key), providers and their
    /// model ids (file order), and the configured default model.
    pub fn model_catalog(&self) -> ModelCatalog {
        let mut catalog = ModelCatalog::new();
        let defaults = self.agent_defaults();
        for (key, entry) in defaults
            .and_then(|d| d.models.as_ref())
            .into_iter()
            .flatten()
        {
            if let Some(alias) = &entry.alias {
                catalog = catalog.with_alias(alias.clone(), key.clone());
            }
        }
        for (id, provider) in self.model_providers() {
            let ids = provider.models.iter().flatten().map(|m| m.id.clone());
            catalog = catalog.with_provider(id, ids);
        }
        if let Some(primary) = defaults
            .and_then(|d| d.model.as_ref())
            .and_then(|m| m.primary())
        {
            catalog = catalog.with_default_model(primary);
        }
        catalog
    }

    /// The entries of `models.providers`, in file order (none when unset).
    pub fn model_providers(&self) -> impl Iterator<Item = (&String, &ProviderConfig)> {
        let providers = self.raw.models.as_ref().and_then(|m| m.providers.as_ref());
        providers.into_iter().flatten()
    }

    /// Resolves user text (`opus`, `gpt-5.5`, `openrouter/moonshotai/kimi-k2@work`) to a model
    /// reference.
    pub fn resolve_model(&self, input: &str) -> Result<ModelRef, ConfigError> {
        self.model_catalog().resolve(input)
    }

    /// The default model, with the stale-default fallback.
    pub fn default_model(&self) -> Option<ModelRef> {
        self.model_catalog().default_model()
    }

    /// Aliases from `agents.defaults.models`, sorted by alias (case-insensitively, then exactly).
    pub fn model_aliases(&self) -> Vec<ModelAlias> {
        let models = self.agent_defaults().and_then(|d| d.models.as_ref());
        let mut aliases: Vec<ModelAlias> = models
            .into_iter()
            .flatten()
            .filter_map(|(key, entry)| {
                let alias = entry.alias.as_deref()?.trim();
                (!alias.is_empty()).then(|| ModelAlias {
                    alias: alias.to_owned(),
                    target: key.clone(),
                })
            })
            .collect();
        aliases.sort_by(|a, b| {
            (a.alias.to_lowercase(), &a.alias, &a.target).cmp(&(
                b.alias.to_lowercase(),
                &b.alias,
                &b.target,
            ))
        });
        aliases
    }
}

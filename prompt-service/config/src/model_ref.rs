//! Model references (R-13, L14): the one parser for `provider/model` text in this system.
//!
//! Grammar: `provider/rest`, split on the FIRST `/` only. `rest` is an opaque model id that may
//! itself hold `/`, `:` and `@` (`openrouter/moonshotai/kimi-k2`, `ollama/qwen3:8b`). A trailing
//! `@profile` on the last `/`-segment names an auth profile and is returned separately, except
//! when it is an 8-digit date version (`claude-sonnet-4@20250514`) or a quantisation tag
//! (`@q4_k_m`, `@4bit`), which belong to the model id. Provider ids compare case-insensitively
//! and are stored lowercase; model ids are kept exactly as written.
//!
//! Resolution of user input (`/model opus`, `agents.defaults.model`) adds config facts, held in a
//! [`ModelCatalog`]: an alias (case-insensitive, may contain `/`) is tried before any parsing;
//! a bare id then goes to the one configured provider exposing exactly that id, else to the
//! default model's provider. The default model itself falls back to the first configured
//! provider/model when its provider no longer exposes it.

use std::fmt;

use crate::error::ConfigError;

/// A parsed model reference.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModelRef {
    /// Provider id, lowercase (`openai`, `openrouter`).
    pub provider: String,
    /// The provider's model id, opaque and exactly as written (`moonshotai/kimi-k2`).
    pub model: String,
    /// Auth profile named by a trailing `@profile`, if any.
    pub auth_profile: Option<String>,
}

impl ModelRef {
    /// Parses `provider/model[@profile]`. A reference without `/` is refused here; resolve bare
    /// ids and aliases with [`ModelCatalog::resolve`].
    pub fn parse(input: &str) -> Result<Self, ConfigError> {
        let text = input.trim();
        let (base, profile) = split_auth_profile(text);
        let Some((provider, model)) = base.split_once('/') else {
            return Err(model_error(input, "expected provider/model"));
        };
        let provider = normalize_provider(provider);
        if provider.is_empty() {
            return Err(model_error(input, "the provider part before '/' is empty"));
        }
        if provider.chars().any(char::is_whitespace) {
            return Err(model_error(input, "the provider id contains whitespace"));
        }
        if model.trim().is_empty() {
            return Err(model_error(input, "the model part after '/' is empty"));
        }
        Ok(Self {
            provider,
            model: model.to_owned(),
            auth_profile: profile.map(str::to_owned),
        })
    }

    /// `provider/model`, without the auth profile: the key used in `agents.defaults.models`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.provider, self.model)
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)?;
        if let Some(profile) = &self.auth_profile {
            write!(f, "@{profile}")?;
        }
        Ok(())
    }
}

fn model_error(input: &str, reason: &str) -> ConfigError {
    ConfigError::ModelRef {
        input: input.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Lowercases and trims a provider id; the only normalisation applied (L14: ids are matched
/// exactly apart from case).
pub fn normalize_provider(provider: &str) -> String {
    provider.trim().to_lowercase()
}

/// Splits a trailing `@profile` off the last `/`-segment. Date versions (`@20250514`), quant
/// tags (`@q4_k_m`, `@4bit`, `@fp16`), an empty suffix and an `@` that starts the segment
/// (`@cf/...` style ids) are part of the model id and are not split.
pub fn split_auth_profile(reference: &str) -> (&str, Option<&str>) {
    let segment_start = reference.rfind('/').map_or(0, |i| i + 1);
    let Some(at) = reference[segment_start..]
        .rfind('@')
        .map(|i| segment_start + i)
    else {
        return (reference, None);
    };
    let suffix = &reference[at + 1..];
    if at == segment_start || suffix.is_empty() || is_date_version(suffix) || is_quant_tag(suffix) {
        return (reference, None);
    }
    (&reference[..at], Some(suffix))
}

fn is_date_version(suffix: &str) -> bool {
    suffix.len() == 8 && suffix.bytes().all(|b| b.is_ascii_digit())
}

/// Quantisation and weight-format tags seen on local-model ids.
fn is_quant_tag(suffix: &str) -> bool {
    let tag = suffix.to_ascii_lowercase();
    let digit_after = |prefix: &str| {
        tag.strip_prefix(prefix)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| c.is_ascii_digit())
    };
    let bits = tag
        .strip_suffix("bit")
        .map(|n| n.trim_end_matches('-'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    bits || digit_after("q")
        || digit_after("iq")
        || digit_after("fp")
        || digit_after("bf")
        || digit_after("int")
        || (tag.len() <= 4 && digit_after("f"))
        || matches!(tag.as_str(), "awq" | "gptq" | "gguf" | "mlx" | "exl2")
}

/// True for GPT-5 family ids (the GPT-5 prompt overlay, P-5): `gpt-5` as a whole segment at the
/// start or after `/` or `:`, followed by `.`, `-` or the end, case-insensitively. Matches
/// `gpt-5`, `gpt-5.5`, `openai/gpt-5-mini`, `azure:gpt-5`; not `gpt-50`, `gpt-4o`, `my-gpt-5`.
pub fn is_gpt5_family(model_id: &str) -> bool {
    let id = model_id.to_ascii_lowercase();
    id.match_indices("gpt-5").any(|(at, needle)| {
        let before_ok = at == 0 || matches!(id.as_bytes()[at - 1], b'/' | b':');
        let after = id.as_bytes().get(at + needle.len());
        let after_ok = matches!(after, None | Some(b'.' | b'-'));
        before_ok && after_ok
    })
}

/// The configuration facts that model resolution needs, detached from the full config so that
/// callers (and tests) can build one directly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelCatalog {
    /// `(alias, target reference)` in a fixed order; the first case-insensitive match wins.
    aliases: Vec<(String, String)>,
    /// `(provider id, model ids)` in configuration order.
    providers: Vec<(String, Vec<String>)>,
    /// The configured default model reference, as written.
    default_model: Option<String>,
}

impl ModelCatalog {
    /// An empty catalog: no aliases, no providers, no default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an alias (`opus`) for a target reference (`anthropic/claude-opus-4-5`).
    pub fn with_alias(mut self, alias: impl Into<String>, target: impl Into<String>) -> Self {
        self.aliases.push((alias.into(), target.into()));
        self
    }

    /// Adds a configured provider and the model ids it exposes, after those added before.
    pub fn with_provider<I, S>(mut self, provider: &str, models: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let models = models.into_iter().map(Into::into).collect();
        self.providers.push((normalize_provider(provider), models));
        self
    }

    /// Sets the configured default model reference (`agents.defaults.model`).
    pub fn with_default_model(mut self, reference: impl Into<String>) -> Self {
        self.default_model = Some(reference.into());
        self
    }

    /// Resolves user text to a model reference: alias, then `provider/model`, then the single
    /// configured provider exposing a bare id, then the default model's provider.
    pub fn resolve(&self, input: &str) -> Result<ModelRef, ConfigError> {
        let text = input.trim();
        if text.is_empty() {
            return Err(model_error(input, "empty"));
        }
        if let Some(found) = self.resolve_alias(text)? {
            return Ok(found);
        }
        if let Some(found) = self.resolve_without_default(text)? {
            return Ok(found);
        }
        let (base, profile) = split_auth_profile(text);
        match self.default_model() {
            Some(default) => Ok(ModelRef {
                provider: default.provider,
                model: base.to_owned(),
                auth_profile: profile.map(str::to_owned),
            }),
            None => Err(model_error(
                input,
                "no provider: write it as provider/model, or configure models.providers or agents.defaults.model",
            )),
        }
    }

    /// The default model: the configured one when its provider still exposes it (or when no
    /// providers are configured to check against), else the first configured provider/model.
    pub fn default_model(&self) -> Option<ModelRef> {
        let configured =
            self.default_model
                .as_deref()
                .and_then(|text| match self.resolve_alias(text) {
                    Ok(Some(found)) => Some(found),
                    _ => self.resolve_without_default(text).ok().flatten(),
                });
        match configured {
            Some(reference) if !self.is_stale(&reference) => Some(reference),
            _ => self.first_configured(),
        }
    }

    /// Alias lookup on the whole text, then on the text without an `@profile` suffix.
    fn resolve_alias(&self, text: &str) -> Result<Option<ModelRef>, ConfigError> {
        let lookup = |name: &str| {
            self.aliases
                .iter()
                .find(|(alias, _)| alias.trim().to_lowercase() == name.to_lowercase())
                .map(|(_, target)| target.as_str())
        };
        let (target, profile) = match lookup(text) {
            Some(target) => (target, None),
            None => {
                let (base, profile) = split_auth_profile(text);
                match (profile, lookup(base)) {
                    (Some(profile), Some(target)) => (target, Some(profile)),
                    _ => return Ok(None),
                }
            }
        };
        // The alias target is itself a reference; it is not alias-expanded again.
        let Some(mut found) = self.resolve_without_default(target)? else {
            return Err(model_error(text, "alias target has no provider"));
        };
        if let Some(profile) = profile {
            found.auth_profile = Some(profile.to_owned());
        }
        Ok(Some(found))
    }

    /// `provider/model`, or a bare id exposed by exactly one configured provider.
    fn resolve_without_default(&self, text: &str) -> Result<Option<ModelRef>, ConfigError> {
        let (base, profile) = split_auth_profile(text.trim());
        if base.contains('/') {
            return ModelRef::parse(text).map(Some);
        }
        let mut exposing = self
            .providers
            .iter()
            .filter(|(_, models)| models.iter().any(|m| m == base));
        match (exposing.next(), exposing.next()) {
            (Some((provider, _)), None) => Ok(Some(ModelRef {
                provider: provider.clone(),
                model: base.to_owned(),
                auth_profile: profile.map(str::to_owned),
            })),
            _ => Ok(None),
        }
    }

    fn is_stale(&self, reference: &ModelRef) -> bool {
        if self.providers.is_empty() {
            return false;
        }
        match self
            .providers
            .iter()
            .find(|(p, _)| *p == reference.provider)
        {
            None => true,
            Some((_, models)) => !models.is_empty() && !models.contains(&reference.model),
        }
    }

    fn first_configured(&self) -> Option<ModelRef> {
        self.providers.iter().find_map(|(provider, models)| {
            models.first().map(|model| ModelRef {
                provider: provider.clone(),
                model: model.clone(),
                auth_profile: None,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_auth_profile_only_takes_the_last_segment() {
        assert_eq!(split_auth_profile("a/b@work"), ("a/b", Some("work")));
        assert_eq!(split_auth_profile("a/b@x/c"), ("a/b@x/c", None));
        assert_eq!(split_auth_profile("a/@cf"), ("a/@cf", None));
        assert_eq!(split_auth_profile("a/b@"), ("a/b@", None));
        assert_eq!(
            split_auth_profile("m@20250514@work"),
            ("m@20250514", Some("work"))
        );
    }

    #[test]
    fn quant_tags() {
        for tag in [
            "q4_k_m", "Q8_0", "iq4_xs", "4bit", "8-bit", "fp16", "bf16", "f16", "int4", "awq",
            "gguf",
        ] {
            assert!(is_quant_tag(tag), "{tag}");
        }
        for tag in ["work", "personal", "default", "qa", "fast", "bit"] {
            assert!(!is_quant_tag(tag), "{tag}");
        }
    }
}

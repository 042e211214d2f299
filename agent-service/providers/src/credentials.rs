//! API keys: where they come from, and a type that never prints them.

use std::fmt;

use openclaw_config::EnvSource;
use openclaw_config::raw::{SecretInput, SecretSource};

use crate::error::ProviderError;

/// An API key. `Debug` and `Display` print `***`, so a key cannot reach a log by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the one place that puts it in a header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The key for provider `id`: `apiKey` as a string (the config crate already substituted
/// `${VAR}`), or `{source: "env", id}` read from `env`; without `apiKey`, the conventional
/// `<ID>_API_KEY` variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENROUTER_API_KEY`) if set.
/// `None` means no key at all, which local servers (Ollama, vLLM, llama.cpp) accept.
///
/// `file` and `exec` secret sources are refused with a config error: they are not supported
/// yet. Errors name the variable, never a value.
pub fn resolve_api_key(
    id: &str,
    input: Option<&SecretInput>,
    env: &dyn EnvSource,
) -> Result<Option<ApiKey>, ProviderError> {
    let non_empty = |value: String| (!value.trim().is_empty()).then_some(ApiKey(value));
    match input {
        Some(SecretInput::Plain(value)) => Ok(non_empty(value.clone())),
        Some(SecretInput::Ref(reference)) => match reference.source {
            SecretSource::Env => match env.get(&reference.id).and_then(non_empty) {
                Some(key) => Ok(Some(key)),
                None => Err(ProviderError::config(format!(
                    "models.providers.{id}.apiKey: environment variable {} is not set",
                    reference.id
                ))),
            },
            source @ (SecretSource::File | SecretSource::Exec) => {
                Err(ProviderError::config(format!(
                    "models.providers.{id}.apiKey: secret source \"{source}\" is not supported \
                     yet; use \"env\" or a ${{VAR}} string"
                )))
            }
        },
        None => Ok(env.get(&conventional_variable(id)).and_then(non_empty)),
    }
}

/// The key of provider `id` as configured: from `apiKeyFile` (the file's first non-empty line,
/// trimmed) when it is set, else as [`resolve_api_key`] finds it. A file that cannot be read,
/// or holds no key, is a config error naming the key and the file, never its content.
pub fn resolve_provider_key(
    id: &str,
    settings: &openclaw_config::raw::ProviderConfig,
    env: &dyn EnvSource,
) -> Result<Option<ApiKey>, ProviderError> {
    let Some(path) = settings.api_key_file.as_deref() else {
        return resolve_api_key(id, settings.api_key.as_ref(), env);
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        ProviderError::config(format!(
            "models.providers.{id}.apiKeyFile: {path} cannot be read: {e}"
        ))
    })?;
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|key| Some(ApiKey(key.to_owned())))
        .ok_or_else(|| {
            ProviderError::config(format!(
                "models.providers.{id}.apiKeyFile: {path} holds no key"
            ))
        })
}

/// `openrouter` -> `OPENROUTER_API_KEY`, `my-llm` -> `MY_LLM_API_KEY`.
fn conventional_variable(id: &str) -> String {
    let stem: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{stem}_API_KEY")
}

/// The keys of every configured provider, for redaction: `(label, key)` where the label is
/// the variable the key came from or `models.providers.<id>.apiKey`; and the names of the
/// environment variables providers read keys from (which commands must not inherit). Broken
/// entries are skipped: the registry reports them.
pub fn provider_secrets(
    config: &openclaw_config::Config,
    env: &dyn EnvSource,
) -> (Vec<(String, ApiKey)>, Vec<String>) {
    let mut keys = Vec::new();
    let mut variables = Vec::new();
    for (id, settings) in config.model_providers() {
        let variable = match (settings.api_key.as_ref(), &settings.api_key_file) {
            (_, Some(_)) => None,
            (Some(SecretInput::Ref(reference)), None) if reference.source == SecretSource::Env => {
                Some(reference.id.clone())
            }
            (Some(_), None) => None,
            (None, None) => Some(conventional_variable(id)),
        };
        let field = if settings.api_key_file.is_some() {
            "apiKeyFile"
        } else {
            "apiKey"
        };
        let label = variable
            .clone()
            .unwrap_or_else(|| format!("models.providers.{id}.{field}"));
        if let Ok(Some(key)) = resolve_provider_key(id, settings, env) {
            keys.push((label, key));
        }
        variables.extend(variable);
    }
    (keys, variables)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use openclaw_config::raw::SecretRef;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn keys_come_from_string_env_ref_or_convention() {
        let vars = env(&[("MY_KEY", "sk-ref"), ("MY_LLM_API_KEY", "sk-conv")]);
        let plain = SecretInput::Plain("sk-plain".into());
        let reference = SecretInput::Ref(SecretRef {
            source: SecretSource::Env,
            provider: None,
            id: "MY_KEY".into(),
        });
        let key = |input| {
            resolve_api_key("my-llm", input, &vars)
                .unwrap()
                .map(|k| k.0)
        };
        assert_eq!(key(Some(&plain)), Some("sk-plain".into()));
        assert_eq!(key(Some(&reference)), Some("sk-ref".into()));
        assert_eq!(key(None), Some("sk-conv".into()));
        assert_eq!(resolve_api_key("ollama", None, &vars).unwrap(), None);
    }

    #[test]
    fn a_missing_variable_is_named_and_a_key_never_printed() {
        let reference = SecretInput::Ref(SecretRef {
            source: SecretSource::Env,
            provider: None,
            id: "ABSENT".into(),
        });
        let error = resolve_api_key("x", Some(&reference), &env(&[])).unwrap_err();
        assert!(error.to_string().contains("ABSENT"), "{error}");
        let key = ApiKey::new("sk-secret");
        assert_eq!(format!("{key:?} {key}"), "ApiKey(***) ***");
    }

    #[test]
    fn a_key_file_is_read_and_named_in_errors_without_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("openai.key");
        std::fs::write(&file, "\n  sk-from-file-0123456789  \nignored\n").unwrap();
        let settings = |path: &std::path::Path| openclaw_config::raw::ProviderConfig {
            base_url: None,
            api_key: None,
            api_key_file: Some(path.display().to_string()),
            api: openclaw_config::raw::ProviderApi::OpenaiCompletions,
            headers: None,
            models: None,
            script: None,
            timeouts: None,
        };
        // The conventional variable is not consulted once a file is named.
        let vars = env(&[("OPENAI_API_KEY", "sk-from-env")]);
        let key = resolve_provider_key("openai", &settings(&file), &vars).unwrap();
        assert_eq!(key.map(|k| k.0), Some("sk-from-file-0123456789".into()));
        std::fs::write(&file, "  \n").unwrap();
        let error = resolve_provider_key("openai", &settings(&file), &vars).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("models.providers.openai.apiKeyFile:"),
            "{error}"
        );
        assert!(error.to_string().contains("holds no key"), "{error}");
        let missing = dir.path().join("absent.key");
        let error = resolve_provider_key("openai", &settings(&missing), &vars).unwrap_err();
        assert!(error.to_string().contains("cannot be read"), "{error}");
    }
}

//! Environment access behind a trait, so tests never touch process env vars.

use std::collections::BTreeMap;

/// A source of environment variables.
pub trait Env: Send + Sync + std::fmt::Debug {
    /// The variable's value, if set.
    fn var(&self, name: &str) -> Option<String>;

    /// Every variable (names and values that are UTF-8), to find those that hold a secret.
    fn vars(&self) -> Vec<(String, String)>;
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn vars(&self) -> Vec<(String, String)> {
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect()
    }
}

/// A fixed map of variables (tests, embedded use).
#[derive(Debug, Clone, Default)]
pub struct MapEnv(pub BTreeMap<String, String>);

impl MapEnv {
    /// Builds from pairs.
    pub fn of<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Self(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }

    fn vars(&self) -> Vec<(String, String)> {
        self.0.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

/// Adapts an [`Env`] to the config crate's `${VAR}` source.
#[derive(Debug)]
pub(crate) struct ConfigEnv<'a>(pub &'a dyn Env);

impl openclaw_config::EnvSource for ConfigEnv<'_> {
    fn get(&self, name: &str) -> Option<String> {
        self.0.var(name)
    }
}

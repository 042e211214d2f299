//! The environment a `codex app-server` child starts with: only what Codex needs, never the
//! service's own (no `RUST_LOG`, whose Codex log lines with colour codes would end up in
//! error messages; no provider keys or tokens of other agents).
//!
//! Kept from the service's environment, by name: `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`,
//! `TMPDIR`, `TZ`, `LANG`, `LC_*`, the proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`,
//! `ALL_PROXY`, `NO_PROXY`, any case), TLS trust (`SSL_CERT_FILE`, `SSL_CERT_DIR`),
//! `CODEX_*` and `OPENAI_*` (Codex's own settings and the key of its default provider), and
//! every variable the inline model provider names as its `env_key`. A configured `CODEX_HOME`
//! replaces the service's. `NO_COLOR=1` keeps colour codes out of what Codex writes.
//! With `SSL_CERT_FILE` set Codex spends about 10 ms more on each model request (with the
//! system bundle, agent-service/README.md), so it is passed only when the service has it.

use std::ffi::OsString;

/// Variables kept by exact name.
const KEPT: [&str; 9] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];
/// Variables kept by prefix.
const KEPT_PREFIXES: [&str; 3] = ["LC_", "CODEX_", "OPENAI_"];
/// Proxy variables, compared without case.
const PROXIES: [&str; 4] = ["http_proxy", "https_proxy", "all_proxy", "no_proxy"];

/// The child's environment from the service's: `parent` filtered as the module says, plus
/// `extra_names` (the provider's `env_key`s) and `NO_COLOR=1`. Names that are not UTF-8 are
/// never kept; values are passed as they are.
pub(crate) fn child_env<I>(parent: I, extra_names: &[String]) -> Vec<(OsString, OsString)>
where
    I: IntoIterator<Item = (OsString, OsString)>,
{
    let kept = |name: &str| {
        KEPT.contains(&name)
            || name == "LANG"
            || KEPT_PREFIXES.iter().any(|p| name.starts_with(p))
            || PROXIES.iter().any(|p| name.eq_ignore_ascii_case(p))
            || extra_names.iter().any(|e| e == name)
    };
    let mut out: Vec<(OsString, OsString)> = parent
        .into_iter()
        .filter(|(name, _)| name.to_str().is_some_and(kept))
        .collect();
    out.push(("NO_COLOR".into(), "1".into()));
    out.sort();
    out
}

/// The `env_key` values of an inline model-provider table (Codex reads the key from the
/// variable it names).
pub(crate) fn provider_key_names(
    table: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Vec<String> {
    table
        .and_then(|t| t.get("env_key"))
        .and_then(serde_json::Value::as_str)
        .map(|name| vec![name.to_owned()])
        .unwrap_or_default()
}

/// `text` without ANSI escape sequences and other control characters (newlines kept): what a
/// child wrote to stderr, made fit for an error message.
pub fn printable(text: &str) -> String {
    let stripped = strip_ansi_escapes::strip_str(text);
    stripped
        .chars()
        .filter(|c| !c.is_control() || *c == '\n')
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn only_what_codex_needs_is_kept() {
        let parent = env(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/a"),
            ("RUST_LOG", "debug"),
            ("RUST_BACKTRACE", "1"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("AGENT_SERVICE_TOKENS", "t"),
            ("LC_ALL", "C.UTF-8"),
            ("LANG", "C.UTF-8"),
            ("https_proxy", "http://proxy:3128"),
            ("NO_PROXY", "localhost"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("CODEX_HOME", "/inherited"),
            ("CODEX_SANDBOX", "x"),
            ("MY_GATEWAY_KEY", "sk-gw"),
        ]);
        let child = child_env(parent, &["MY_GATEWAY_KEY".to_owned()]);
        let names: Vec<&str> = child.iter().filter_map(|(k, _)| k.to_str()).collect();
        assert_eq!(
            names,
            [
                "CODEX_HOME",
                "CODEX_SANDBOX",
                "HOME",
                "LANG",
                "LC_ALL",
                "MY_GATEWAY_KEY",
                "NO_COLOR",
                "NO_PROXY",
                "OPENAI_API_KEY",
                "PATH",
                "https_proxy",
            ]
        );
    }

    #[test]
    fn escape_sequences_and_controls_are_removed() {
        let raw =
            "\u{1b}[2m2026-12-01T20:00:00Z\u{1b}[0m \u{1b}[31mERROR\u{1b}[0m boom\u{7}\n\tat x";
        assert_eq!(printable(raw), "2026-12-01T20:00:00Z ERROR boom\nat x");
    }

    #[test]
    fn the_provider_names_its_key_variable() {
        let table = serde_json::json!({"base_url": "http://x", "env_key": "GW_KEY"});
        assert_eq!(provider_key_names(table.as_object()), ["GW_KEY"]);
        assert!(provider_key_names(None).is_empty());
    }
}

//! The service's own credentials as secrets: the bearer tokens it accepts (`--tokens`,
//! `--tokens-file`), the token it sends to prompt-service and the one it sends to the router.
//! They go to the redactor beside the provider keys, so no tool result, reply, log line or
//! status shows one, and the runtime keeps every variable that holds one out of the commands
//! it starts.

use std::path::PathBuf;

use openclaw_secrets::Secret;

/// Where the service's credentials come from, as its flags give them.
#[derive(Debug, Default, Clone)]
pub struct OwnCredentials {
    /// `--tokens` (`AGENT_SERVICE_TOKENS`).
    pub tokens: Option<String>,
    /// `--tokens-file` (`AGENT_SERVICE_TOKENS_FILE`).
    pub tokens_file: Option<PathBuf>,
    /// `--prompt-service-token` (`PROMPT_SERVICE_TOKEN`).
    pub prompt_token: Option<String>,
    /// `--prompt-service-token-file` (`PROMPT_SERVICE_TOKEN_FILE`).
    pub prompt_token_file: Option<PathBuf>,
    /// `--router-token-file` (`AGENT_SERVICE_ROUTER_TOKEN_FILE`).
    pub router_token_file: Option<PathBuf>,
}

impl OwnCredentials {
    /// Every credential value, labelled by where it came from. A file that cannot be read
    /// adds nothing here (the flag's own check reports it).
    pub fn secrets(&self) -> Vec<Secret> {
        let mut out = Vec::new();
        let listed = |value: &str| {
            value
                .split(|c: char| c == ',' || c.is_whitespace())
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        let from_file = |path: &PathBuf| {
            std::fs::read_to_string(path)
                .ok()
                .and_then(|text| service_kit::auth::parse_token_file(&text).ok())
                .unwrap_or_default()
        };
        let sources: [(&str, Vec<String>); 5] = [
            (
                "AGENT_SERVICE_TOKENS",
                self.tokens.as_deref().map(listed).unwrap_or_default(),
            ),
            (
                "AGENT_SERVICE_TOKENS_FILE",
                self.tokens_file.as_ref().map(from_file).unwrap_or_default(),
            ),
            (
                "PROMPT_SERVICE_TOKEN",
                self.prompt_token
                    .as_deref()
                    .map(|t| vec![t.trim().to_owned()])
                    .unwrap_or_default(),
            ),
            (
                "PROMPT_SERVICE_TOKEN_FILE",
                self.prompt_token_file
                    .as_ref()
                    .map(from_file)
                    .unwrap_or_default(),
            ),
            (
                "AGENT_SERVICE_ROUTER_TOKEN_FILE",
                self.router_token_file
                    .as_ref()
                    .map(from_file)
                    .unwrap_or_default(),
            ),
        ];
        for (label, values) in sources {
            out.extend(values.into_iter().map(|v| Secret::new(label, v)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_from_flags_and_files_are_secrets() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("tokens");
        std::fs::write(
            &file,
            "# rotated\nfile-token-0123456789\nold-token-0123456789\n",
        )?;
        let own = OwnCredentials {
            tokens: Some("flag-token-0123456789, second-token-012345".to_owned()),
            tokens_file: Some(file.clone()),
            prompt_token: Some(" prompt-token-0123456789 ".to_owned()),
            prompt_token_file: None,
            router_token_file: Some(file),
        };
        let shown: Vec<(String, String)> = own
            .secrets()
            .into_iter()
            .map(|s| (s.label, s.value))
            .collect();
        let expect = |l: &str, v: &str| (l.to_owned(), v.to_owned());
        assert_eq!(
            shown,
            [
                expect("AGENT_SERVICE_TOKENS", "flag-token-0123456789"),
                expect("AGENT_SERVICE_TOKENS", "second-token-012345"),
                expect("AGENT_SERVICE_TOKENS_FILE", "file-token-0123456789"),
                expect("AGENT_SERVICE_TOKENS_FILE", "old-token-0123456789"),
                expect("PROMPT_SERVICE_TOKEN", "prompt-token-0123456789"),
                expect("AGENT_SERVICE_ROUTER_TOKEN_FILE", "file-token-0123456789"),
                expect("AGENT_SERVICE_ROUTER_TOKEN_FILE", "old-token-0123456789"),
            ]
        );
        Ok(())
    }
}

//! A server's security settings: from flags to what `serve` enforces, the
//! rule that a server reachable from other hosts must authenticate its
//! callers, and how the `healthcheck` subcommand reaches a TLS server.

use std::{
    fmt,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    path::PathBuf,
};

use tonic::transport::Server;

use crate::{
    auth::{self, AuthLayer, AuthPolicy, BearerToken, TokenSet},
    tls::{ClientTls, ServerTls},
};

/// Security flags as the command line and environment give them, before
/// any file is read. `env_prefix` names the variables in messages
/// (`PROMPT_SERVICE` → `PROMPT_SERVICE_TOKENS`). Debug output leaves the
/// tokens out.
#[derive(Clone, Default)]
pub struct SecurityFlags {
    /// Accepted tokens, separated by commas or whitespace.
    pub tokens: Option<String>,
    /// A file of accepted tokens, one per line (`#` comments).
    pub tokens_file: Option<PathBuf>,
    /// Serve a non-loopback address without authentication.
    pub insecure_no_auth: bool,
    /// Server certificate chain (PEM).
    pub tls_cert: Option<PathBuf>,
    /// Server private key (PEM).
    pub tls_key: Option<PathBuf>,
    /// CA whose client certificates are required (mTLS).
    pub tls_client_ca: Option<PathBuf>,
    /// CA that signed `tls_cert`: what `healthcheck` verifies the server with.
    pub tls_ca: Option<PathBuf>,
    /// Name `healthcheck` expects in the server certificate (default `localhost`).
    pub tls_server_name: Option<String>,
}

/// The server security flags of both service binaries (help heading "Security"), flattened
/// into each binary's command line. Their environment variables carry the binary's prefix
/// (`PROMPT_SERVICE_TOKENS`, `AGENT_SERVICE_TLS_CERT`, ...): build the command with
/// [`SecurityArgs::with_env`].
#[derive(Clone, clap::Args)]
pub struct SecurityArgs {
    /// File of accepted bearer tokens, one per line (`#` starts a comment); list several to
    /// rotate without downtime. Callers send `authorization: Bearer <token>`; health and
    /// reflection stay open. A non-loopback --listen needs a token (or --tls-client-ca).
    #[arg(long, value_name = "PATH", help_heading = "Security")]
    pub tokens_file: Option<PathBuf>,
    /// Accepted bearer tokens, separated by commas or whitespace, 16+ characters each
    /// (`openssl rand -hex 32`). Prefer --tokens-file or the variable: a command line is
    /// visible to every local user.
    #[arg(
        long,
        hide_env_values = true,
        value_name = "TOKENS",
        help_heading = "Security"
    )]
    pub tokens: Option<String>,
    /// Serve a non-loopback --listen without any authentication. Only when something in
    /// front of this service authenticates every caller (agent-service's callers can run
    /// commands on its machine).
    #[arg(
        long,
        value_parser = clap::builder::BoolishValueParser::new(),
        help_heading = "Security"
    )]
    pub insecure_no_auth: bool,
    /// Serve TLS with this certificate chain (PEM, leaf first; with --tls-key). Unset:
    /// plaintext HTTP/2. `healthcheck` then probes over TLS (needs --tls-ca).
    #[arg(long, value_name = "PEM", help_heading = "Security")]
    pub tls_cert: Option<PathBuf>,
    /// Private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PEM", help_heading = "Security")]
    pub tls_key: Option<PathBuf>,
    /// Require client certificates signed by this CA (PEM; mTLS, needs --tls-cert). A
    /// certificate it did not sign fails the handshake; a call without one gets
    /// UNAUTHENTICATED (health stays open).
    #[arg(long, value_name = "PEM", help_heading = "Security")]
    pub tls_client_ca: Option<PathBuf>,
    /// `healthcheck` against a TLS server: the CA (PEM) that signed --tls-cert.
    #[arg(long, value_name = "PEM", help_heading = "Security")]
    pub tls_ca: Option<PathBuf>,
    /// `healthcheck` against a TLS server: the name its certificate must carry.
    #[arg(long, default_value = "localhost", help_heading = "Security")]
    pub tls_server_name: String,
}

impl SecurityArgs {
    /// Each flag's environment variable, after the binary's prefix and `_`.
    const VARS: [(&'static str, &'static str); 8] = [
        ("tokens_file", "TOKENS_FILE"),
        ("tokens", "TOKENS"),
        ("insecure_no_auth", "INSECURE_NO_AUTH"),
        ("tls_cert", "TLS_CERT"),
        ("tls_key", "TLS_KEY"),
        ("tls_client_ca", "TLS_CLIENT_CA"),
        ("tls_ca", "TLS_CA"),
        ("tls_server_name", "TLS_SERVER_NAME"),
    ];

    /// `command` (which flattens these flags) with their variables named `<prefix>_...`.
    pub fn with_env(command: clap::Command, prefix: &str) -> clap::Command {
        Self::VARS.iter().fold(command, |command, (id, var)| {
            command.mut_arg(*id, |arg| arg.env(format!("{prefix}_{var}")))
        })
    }

    /// Parses the process's command line into `C`, which flattens these flags, with their
    /// variables named `<prefix>_...`; on bad input prints clap's message and exits.
    pub fn parse_cli<C: clap::Parser>(prefix: &str) -> C {
        let matches = Self::with_env(C::command(), prefix).get_matches();
        C::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
    }

    /// The flags as [`ServerSecurity::resolve`] takes them.
    pub fn flags(&self) -> SecurityFlags {
        SecurityFlags {
            tokens: self.tokens.clone(),
            tokens_file: self.tokens_file.clone(),
            insecure_no_auth: self.insecure_no_auth,
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            tls_client_ca: self.tls_client_ca.clone(),
            tls_ca: self.tls_ca.clone(),
            tls_server_name: Some(self.tls_server_name.clone()),
        }
    }
}

impl fmt::Debug for SecurityArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Through SecurityFlags: the tokens are redacted there.
        fmt::Debug::fmt(&self.flags(), f)
    }
}

impl fmt::Debug for SecurityFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecurityFlags")
            .field("tokens", &self.tokens.as_ref().map(|_| "<redacted>"))
            .field("tokens_file", &self.tokens_file)
            .field("insecure_no_auth", &self.insecure_no_auth)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .field("tls_client_ca", &self.tls_client_ca)
            .field("tls_ca", &self.tls_ca)
            .field("tls_server_name", &self.tls_server_name)
            .finish()
    }
}

/// What a server enforces: caller authentication and transport security.
#[derive(Debug, Clone, Default)]
pub struct ServerSecurity {
    /// Accepted bearer tokens; None: no token is asked for.
    pub tokens: Option<TokenSet>,
    /// TLS; with a client CA, callers must present a certificate it signed.
    pub tls: Option<ServerTls>,
    /// Serve a non-loopback address although nothing authenticates callers
    /// (something in front of the server does, or the network is trusted).
    pub insecure_no_auth: bool,
}

impl ServerSecurity {
    /// Reads the token and certificate files. Every problem is reported,
    /// each naming its flag or variable.
    pub fn resolve(flags: &SecurityFlags, env_prefix: &str) -> Result<Self, Vec<String>> {
        let mut problems = Vec::new();
        let mut tokens: Vec<String> = Vec::new();
        if let Some(list) = &flags.tokens {
            match auth::parse_token_list(list) {
                Ok(found) => tokens.extend(found),
                Err(e) => problems.push(format!("{env_prefix}_TOKENS / --tokens: {e}")),
            }
        }
        if let Some(path) = &flags.tokens_file {
            let read = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|text| auth::parse_token_file(&text));
            match read {
                Ok(found) if found.is_empty() => problems.push(format!(
                    "--tokens-file {}: holds no token (an empty file would turn authentication off)",
                    path.display()
                )),
                Ok(found) => tokens.extend(found),
                Err(e) => problems.push(format!("--tokens-file {}: {e}", path.display())),
            }
        }
        let tls = match (&flags.tls_cert, &flags.tls_key) {
            (Some(cert), Some(key)) => {
                match ServerTls::from_files(cert, key, flags.tls_client_ca.as_deref()) {
                    Ok(tls) => Some(tls),
                    Err(e) => {
                        problems.push(format!("TLS: {e}"));
                        None
                    }
                }
            }
            (None, None) => {
                if flags.tls_client_ca.is_some() {
                    problems.push(format!(
                        "--tls-client-ca ({env_prefix}_TLS_CLIENT_CA) needs --tls-cert and --tls-key"
                    ));
                }
                None
            }
            (Some(_), None) => {
                problems.push(format!("--tls-cert needs --tls-key ({env_prefix}_TLS_KEY)"));
                None
            }
            (None, Some(_)) => {
                problems.push(format!(
                    "--tls-key needs --tls-cert ({env_prefix}_TLS_CERT)"
                ));
                None
            }
        };
        if problems.is_empty() {
            Ok(Self {
                tokens: TokenSet::new(&tokens),
                tls,
                insecure_no_auth: flags.insecure_no_auth,
            })
        } else {
            Err(problems)
        }
    }

    /// The auth layer's policy.
    pub fn auth_policy(&self) -> AuthPolicy {
        AuthPolicy {
            tokens: self.tokens.clone(),
            require_client_cert: self
                .tls
                .as_ref()
                .is_some_and(ServerTls::requires_client_cert),
        }
    }

    /// The auth layer for these settings.
    pub fn auth_layer(&self) -> AuthLayer {
        AuthLayer::new(self.auth_policy())
    }

    /// Refuses to serve an address other hosts can reach when nothing
    /// authenticates callers (no token, no required client certificate),
    /// unless `insecure_no_auth` says so. Loopback addresses are reachable
    /// from this host only and may serve without authentication.
    pub fn check_listen(&self, addr: SocketAddr, env_prefix: &str) -> Result<(), String> {
        if addr.ip().is_loopback() || self.auth_policy().authenticates() || self.insecure_no_auth {
            return Ok(());
        }
        Err(format!(
            "refusing to listen on {addr} without authentication: anyone who can reach it could \
             call every RPC. Set {env_prefix}_TOKENS or {env_prefix}_TOKENS_FILE (--tokens-file), \
             or require client certificates with --tls-client-ca; or pass --insecure-no-auth \
             ({env_prefix}_INSECURE_NO_AUTH=true) if something in front of this service \
             authenticates callers"
        ))
    }

    /// Logs what is enforced, and warns about weak combinations.
    pub fn log_startup(&self, addr: SocketAddr) {
        let mtls = self
            .tls
            .as_ref()
            .is_some_and(ServerTls::requires_client_cert);
        tracing::info!(
            tokens = self.tokens.as_ref().map_or(0, TokenSet::len),
            tls = self.tls.is_some(),
            mtls,
            "security"
        );
        if addr.ip().is_loopback() {
            return;
        }
        if !self.auth_policy().authenticates() {
            tracing::warn!(%addr, "serving without authentication (--insecure-no-auth)");
        } else if self.tls.is_none() {
            tracing::warn!(
                %addr,
                "bearer tokens travel in cleartext: serve TLS (--tls-cert, --tls-key) or keep this port on a trusted network"
            );
        }
    }

    /// Applies TLS to a server builder (a no-op without TLS).
    pub fn apply_tls<L>(&self, server: Server<L>) -> Result<Server<L>, tonic::transport::Error> {
        match &self.tls {
            Some(tls) => server.tls_config(tls.server_config()),
            None => Ok(server),
        }
    }
}

impl SecurityFlags {
    /// How the `healthcheck` subcommand reaches the server at `listen`: the
    /// URL (`https` when the server has a certificate, the unspecified
    /// address turned into loopback) and the TLS settings to verify it.
    /// Health is open, so no token is sent.
    pub fn probe_target(
        &self,
        listen: SocketAddr,
        env_prefix: &str,
    ) -> Result<(String, Option<ClientTls>), String> {
        let ip = match listen.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let addr = SocketAddr::new(ip, listen.port());
        if self.tls_cert.is_none() {
            return Ok((format!("http://{addr}"), None));
        }
        let ca = self.tls_ca.as_deref().ok_or_else(|| {
            format!(
                "the server serves TLS: healthcheck needs --tls-ca ({env_prefix}_TLS_CA), the CA \
                 that signed --tls-cert"
            )
        })?;
        let name = self
            .tls_server_name
            .clone()
            .unwrap_or_else(|| "localhost".to_owned());
        let tls = ClientTls::from_files(ca, None, None, Some(name))?;
        Ok((format!("https://{addr}"), Some(tls)))
    }
}

/// How a client reaches a server, as flags give it: the token to send and
/// the TLS settings for an `https://` URL. Debug output leaves the token out.
#[derive(Clone, Default)]
pub struct ClientFlags {
    /// The bearer token to send.
    pub token: Option<String>,
    /// A file whose first token is sent (a server's token file will do).
    pub token_file: Option<PathBuf>,
    /// CA that signed the server's certificate (required for `https://`).
    pub ca: Option<PathBuf>,
    /// Client certificate chain (PEM), for servers that require one (mTLS).
    pub cert: Option<PathBuf>,
    /// Its private key (PEM).
    pub key: Option<PathBuf>,
    /// Name expected in the server's certificate (default: the URL's host).
    pub server_name: Option<String>,
}

impl fmt::Debug for ClientFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientFlags")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("token_file", &self.token_file)
            .field("ca", &self.ca)
            .field("cert", &self.cert)
            .field("key", &self.key)
            .field("server_name", &self.server_name)
            .finish()
    }
}

/// What a client sends and verifies: resolved [`ClientFlags`].
#[derive(Debug, Clone, Default)]
pub struct ClientSecurity {
    /// Sent as `authorization: Bearer <token>` on every call.
    pub token: Option<BearerToken>,
    /// TLS (the URL is `https://`).
    pub tls: Option<ClientTls>,
}

impl ClientSecurity {
    /// Reads the token and certificate files for a client of `url`.
    /// `flag_prefix` and `env_prefix` name the flags and variables in
    /// messages (`prompt-service` → `--prompt-service-ca`,
    /// `PROMPT_SERVICE` → `PROMPT_SERVICE_CA`). Every problem is reported.
    pub fn resolve(
        flags: &ClientFlags,
        url: &str,
        flag_prefix: &str,
        env_prefix: &str,
    ) -> Result<Self, Vec<String>> {
        let name = |flag: &str, var: &str| format!("--{flag_prefix}-{flag} ({env_prefix}_{var})");
        let mut problems = Vec::new();
        let token = match (&flags.token, &flags.token_file) {
            (Some(_), Some(_)) => {
                problems.push(format!(
                    "{} and {}: give one of them",
                    name("token", "TOKEN"),
                    name("token-file", "TOKEN_FILE")
                ));
                None
            }
            (Some(token), None) => BearerToken::new(token)
                .map_err(|e| problems.push(format!("{}: {e}", name("token", "TOKEN"))))
                .ok(),
            (None, Some(path)) => BearerToken::from_file(path)
                .map_err(|e| problems.push(format!("{}: {e}", name("token-file", "TOKEN_FILE"))))
                .ok(),
            (None, None) => None,
        };
        let https = url
            .trim()
            .get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"));
        let tls_flags = flags.ca.is_some()
            || flags.cert.is_some()
            || flags.key.is_some()
            || flags.server_name.is_some();
        let tls = match (&flags.ca, https) {
            (Some(ca), true) => ClientTls::from_files(
                ca,
                flags.cert.as_deref(),
                flags.key.as_deref(),
                flags.server_name.clone(),
            )
            .map_err(|e| problems.push(format!("TLS to {url}: {e}")))
            .ok(),
            (None, true) => {
                problems.push(format!(
                    "{url} uses TLS: {} must name the CA that signed its certificate",
                    name("ca", "CA")
                ));
                None
            }
            (_, false) => {
                if tls_flags {
                    problems.push(format!(
                        "TLS settings given for {url}, which is not https://: use an https:// URL \
                         or drop {}, {}, {} and {}",
                        name("ca", "CA"),
                        name("client-cert", "CLIENT_CERT"),
                        name("client-key", "CLIENT_KEY"),
                        name("server-name", "SERVER_NAME")
                    ));
                }
                None
            }
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        if token.is_some() && tls.is_none() && !loopback_url(url) {
            tracing::warn!(
                url,
                "the bearer token travels in cleartext: use an https:// URL or keep this link on a trusted network"
            );
        }
        Ok(Self { token, tls })
    }
}

/// Whether `url`'s host is a loopback address or `localhost`.
fn loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn non_loopback_needs_authentication_or_an_explicit_opt_out() {
        let open = ServerSecurity::default();
        assert!(open.check_listen(addr("127.0.0.1:50051"), "P").is_ok());
        assert!(open.check_listen(addr("[::1]:50051"), "P").is_ok());
        let refused = open.check_listen(addr("0.0.0.0:50051"), "P").unwrap_err();
        assert!(
            refused.starts_with("refusing to listen on 0.0.0.0:50051 without authentication"),
            "{refused}"
        );
        assert!(refused.contains("P_TOKENS"), "{refused}");
        assert!(open.check_listen(addr("10.0.0.7:1"), "P").is_err());
        let tokens = ServerSecurity {
            tokens: TokenSet::new(&["aaaaaaaaaaaaaaaaaaaa"]),
            ..ServerSecurity::default()
        };
        assert!(tokens.check_listen(addr("0.0.0.0:50051"), "P").is_ok());
        let insecure = ServerSecurity {
            insecure_no_auth: true,
            ..ServerSecurity::default()
        };
        assert!(insecure.check_listen(addr("0.0.0.0:50051"), "P").is_ok());
        // TLS alone does not authenticate callers; a required client certificate does.
        let tls = ServerSecurity {
            tls: Some(ServerTls::from_pem("c", "k", None)),
            ..ServerSecurity::default()
        };
        assert!(tls.check_listen(addr("0.0.0.0:50051"), "P").is_err());
        let mtls = ServerSecurity {
            tls: Some(ServerTls::from_pem("c", "k", Some("ca"))),
            ..ServerSecurity::default()
        };
        assert!(mtls.check_listen(addr("0.0.0.0:50051"), "P").is_ok());
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let empty = dir.join("empty.tokens");
        std::fs::write(&empty, "# nothing yet\n").unwrap();
        let flags = SecurityFlags {
            tokens: Some("short".into()),
            tokens_file: Some(empty),
            tls_cert: Some(dir.join("missing.pem")),
            tls_client_ca: Some(dir.join("ca.pem")),
            ..SecurityFlags::default()
        };
        let problems = ServerSecurity::resolve(&flags, "P").unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:#?}");
        assert!(
            problems[0].starts_with("P_TOKENS / --tokens: token 1: "),
            "{problems:#?}"
        );
        assert!(problems[1].contains("holds no token"), "{problems:#?}");
        assert_eq!(problems[2], "--tls-cert needs --tls-key (P_TLS_KEY)");

        let ok = ServerSecurity::resolve(
            &SecurityFlags {
                tokens: Some("aaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbb".into()),
                ..SecurityFlags::default()
            },
            "P",
        )
        .unwrap();
        assert_eq!(ok.tokens.map(|t| t.len()), Some(2));
    }

    #[test]
    fn client_settings_follow_the_url() {
        let names = |flags: &ClientFlags, url: &str| {
            ClientSecurity::resolve(flags, url, "prompt-service", "PROMPT_SERVICE")
        };
        let plain = names(&ClientFlags::default(), "http://10.0.0.1:50051").unwrap();
        assert!(plain.token.is_none() && plain.tls.is_none());
        let token = ClientFlags {
            token: Some("aaaaaaaaaaaaaaaaaaaa".into()),
            ..ClientFlags::default()
        };
        assert!(names(&token, "http://127.0.0.1:1").unwrap().token.is_some());
        assert!(!format!("{token:?}").contains("aaaa"), "{token:?}");
        let https = names(&ClientFlags::default(), "https://prompt:50051").unwrap_err();
        assert_eq!(
            https,
            [
                "https://prompt:50051 uses TLS: --prompt-service-ca (PROMPT_SERVICE_CA) must name \
              the CA that signed its certificate"
            ]
        );
        let both = ClientFlags {
            token: Some("aaaaaaaaaaaaaaaaaaaa".into()),
            token_file: Some("/nowhere".into()),
            ca: Some("/ca.pem".into()),
            ..ClientFlags::default()
        };
        let problems = names(&both, "http://prompt:50051").unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert!(problems[0].ends_with("give one of them"), "{problems:#?}");
        assert!(
            problems[1].starts_with("TLS settings given for http://prompt:50051"),
            "{problems:#?}"
        );
        assert!(loopback_url("http://localhost:1/x"));
        assert!(loopback_url("http://[::1]:1"));
        assert!(loopback_url("http://127.0.0.2"));
        assert!(!loopback_url("http://prompt-service:50051"));
    }

    #[test]
    fn the_probe_follows_the_server() {
        let plain = SecurityFlags::default();
        assert_eq!(
            plain.probe_target(addr("0.0.0.0:50051"), "P").unwrap().0,
            "http://127.0.0.1:50051"
        );
        assert_eq!(
            plain.probe_target(addr("[::]:7"), "P").unwrap().0,
            "http://[::1]:7"
        );
        let tls = SecurityFlags {
            tls_cert: Some("/x/cert.pem".into()),
            ..SecurityFlags::default()
        };
        let error = tls.probe_target(addr("0.0.0.0:50051"), "P").unwrap_err();
        assert!(error.contains("--tls-ca (P_TLS_CA)"), "{error}");
    }
}

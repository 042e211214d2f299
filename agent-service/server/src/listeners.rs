//! Which of the service's own listeners answer without a token: what a sandbox on the host
//! network could reach (see `agent_runtime::RuntimeOptions::open_listeners`).

use std::net::SocketAddr;

use service_kit::ServerSecurity;

/// The listeners that take no credential, described for messages: the gRPC API and the
/// inspector (which shares its tokens) when neither a token nor a client certificate is
/// asked for, and the metrics endpoint, which never asks.
pub fn open_listeners(
    api: SocketAddr,
    security: &ServerSecurity,
    inspector: Option<SocketAddr>,
    metrics: Option<&str>,
) -> Vec<String> {
    let mut open = Vec::new();
    if !security.auth_policy().authenticates() {
        open.push(format!("the gRPC API on {api}"));
    }
    if let Some(inspector) = inspector
        && security.tokens.is_none()
    {
        open.push(format!("the inspector on {inspector}"));
    }
    if let Some(metrics) = metrics {
        open.push(format!("the metrics endpoint on {metrics}"));
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listeners_without_a_credential_are_open() {
        let api: SocketAddr = "127.0.0.1:50052".parse().expect("addr");
        let inspector: SocketAddr = "127.0.0.1:8081".parse().expect("addr");
        let open = ServerSecurity {
            tokens: None,
            tls: None,
            insecure_no_auth: false,
        };
        assert_eq!(
            open_listeners(api, &open, Some(inspector), Some("127.0.0.1:9090")),
            [
                "the gRPC API on 127.0.0.1:50052",
                "the inspector on 127.0.0.1:8081",
                "the metrics endpoint on 127.0.0.1:9090"
            ]
        );
        let tokens = ServerSecurity {
            tokens: service_kit::TokenSet::new(&["a-token-of-twenty-chars"]),
            ..open
        };
        assert!(open_listeners(api, &tokens, Some(inspector), None).is_empty());
    }
}

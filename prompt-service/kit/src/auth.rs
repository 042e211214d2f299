//! Caller authentication: bearer tokens and client certificates, as one
//! tower layer in front of every service of a server.
//!
//! A tower layer rather than a tonic interceptor: it sees the request path,
//! so one rule covers our services, health and reflection alike (health and
//! reflection stay open: probes and `grpcurl list` carry no credentials),
//! and an unknown path is refused like a known one, so nothing can be
//! enumerated without a token. It reads headers only, never the body.
//!
//! Tokens are compared as SHA-256 digests, in constant time, against every
//! configured token without stopping at a match: the time a check takes
//! does not depend on how much of a guess was right, on its length, or on
//! which token matched. Refusals are UNAUTHENTICATED with a fixed message
//! that says what is missing and never echoes what was sent.

use std::{fmt, sync::Arc};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tonic::{
    Status,
    body::Body,
    transport::server::{TcpConnectInfo, TlsConnectInfo},
};
use tower::Layer;

use crate::layer::{Inner, Layered, OnCall, Request, ResponseFuture};

/// Paths served without credentials: gRPC health (probes, load balancers)
/// and server reflection (schema only, no data).
pub const OPEN_PATH_PREFIXES: [&str; 3] = [
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1.ServerReflection/",
    "/grpc.reflection.v1alpha.ServerReflection/",
];

/// Fewest characters a token may have. 16 random characters are far beyond
/// guessing; `openssl rand -hex 32` gives 64.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Whether `path` is served without credentials.
pub fn is_open_path(path: &str) -> bool {
    OPEN_PATH_PREFIXES.iter().any(|p| path.starts_with(p))
}

/// The accepted bearer tokens, kept as SHA-256 digests. Several tokens are
/// accepted at once so they can be rotated without downtime.
#[derive(Clone)]
pub struct TokenSet {
    digests: Arc<[[u8; 32]]>,
}

impl fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the tokens, not even their digests.
        f.debug_struct("TokenSet")
            .field("tokens", &self.digests.len())
            .finish()
    }
}

impl TokenSet {
    /// The tokens in `tokens` (each checked with [`check_token`]); None when
    /// there are none.
    pub fn new<S: AsRef<str>>(tokens: &[S]) -> Option<Self> {
        let mut digests: Vec<[u8; 32]> = tokens.iter().map(|t| digest(t.as_ref())).collect();
        digests.sort_unstable();
        digests.dedup();
        (!digests.is_empty()).then(|| Self {
            digests: digests.into(),
        })
    }

    /// How many distinct tokens are accepted.
    pub fn len(&self) -> usize {
        self.digests.len()
    }

    /// Always false: an empty set is never built (see [`TokenSet::new`]).
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// Whether `presented` is one of the tokens, in constant time.
    pub fn accepts(&self, presented: &str) -> bool {
        let presented = digest(presented);
        let mut found = subtle::Choice::from(0);
        for known in self.digests.iter() {
            found |= known.ct_eq(&presented);
        }
        found.into()
    }
}

fn digest(token: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(Sha256::digest(token.as_bytes()).as_slice());
    out
}

/// Checks one token: RFC 6750 `b64token` characters (letters, digits and
/// `-._~+/`, then `=` padding) and at least [`MIN_TOKEN_CHARS`] of them.
/// The message never contains the token.
pub fn check_token(token: &str) -> Result<(), String> {
    let body = token.trim_end_matches('=');
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~+/".contains(c);
    if body.is_empty() || !body.chars().all(allowed) {
        return Err(
            "a token may hold only letters, digits and - . _ ~ + / (then = padding)".to_owned(),
        );
    }
    let chars = token.chars().count();
    if chars < MIN_TOKEN_CHARS {
        return Err(format!(
            "a token has {chars} characters; at least {MIN_TOKEN_CHARS} are required \
             (for example `openssl rand -hex 32`)"
        ));
    }
    Ok(())
}

/// Tokens from a token file: one per line; blank lines and everything from
/// `#` to the end of a line are ignored (`#` is never part of a token).
/// Errors name the line, never its content.
pub fn parse_token_file(text: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let token = line.split('#').next().unwrap_or_default().trim();
        if token.is_empty() {
            continue;
        }
        check_token(token).map_err(|e| format!("line {}: {e}", n + 1))?;
        tokens.push(token.to_owned());
    }
    Ok(tokens)
}

/// Tokens from an environment value: separated by commas or whitespace.
pub fn parse_token_list(value: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    for (n, token) in value
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .enumerate()
    {
        check_token(token).map_err(|e| format!("token {}: {e}", n + 1))?;
        tokens.push(token.to_owned());
    }
    Ok(tokens)
}

/// The bearer token a client sends (`authorization: Bearer <token>`). Its
/// Debug output and the metadata value it makes are marked sensitive, so
/// neither logs nor error messages ever show it.
#[derive(Clone)]
pub struct BearerToken {
    header: tonic::metadata::MetadataValue<tonic::metadata::Ascii>,
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

impl BearerToken {
    /// A token checked with [`check_token`]. The message never contains it.
    pub fn new(token: &str) -> Result<Self, String> {
        let token = token.trim();
        check_token(token)?;
        let mut header = tonic::metadata::MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|_| "a token must be printable ASCII".to_owned())?;
        header.set_sensitive(true);
        Ok(Self { header })
    }

    /// The first token of a token file (the format of a server's
    /// `--tokens-file`, so a client may read the very file the server
    /// accepts: put the newest token first when rotating).
    pub fn from_file(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let tokens = parse_token_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let first = tokens
            .first()
            .ok_or_else(|| format!("{}: holds no token", path.display()))?;
        Self::new(first)
    }

    /// Adds the `authorization` metadata to `request`.
    pub fn apply<T>(&self, request: &mut tonic::Request<T>) {
        request
            .metadata_mut()
            .insert("authorization", self.header.clone());
    }
}

/// What a server requires of its callers (outside [`OPEN_PATH_PREFIXES`]).
#[derive(Debug, Clone, Default)]
pub struct AuthPolicy {
    /// `authorization: Bearer <token>` with one of these; None: no token needed.
    pub tokens: Option<TokenSet>,
    /// A TLS client certificate (already verified against the client CA by
    /// the handshake) on the connection.
    pub require_client_cert: bool,
}

impl AuthPolicy {
    /// Whether any credential is required.
    pub fn authenticates(&self) -> bool {
        self.tokens.is_some() || self.require_client_cert
    }

    /// Why `req` may not pass, or None.
    fn refusal(&self, req: &http::Request<Body>) -> Option<&'static str> {
        if is_open_path(req.uri().path()) {
            return None;
        }
        if self.require_client_cert && !has_client_cert(req) {
            return Some("a client certificate is required");
        }
        let tokens = self.tokens.as_ref()?;
        let Some(value) = req.headers().get(http::header::AUTHORIZATION) else {
            return Some("missing credentials: send `authorization: Bearer <token>` metadata");
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        match token {
            None => Some("malformed authorization metadata: expected `Bearer <token>`"),
            Some(token) if tokens.accepts(token) => None,
            Some(_) => Some("invalid bearer token"),
        }
    }
}

/// Whether the connection presented a client certificate. The handshake has
/// verified it against the client CA already: with `client_auth_optional` a
/// certificate that does not verify fails the handshake, and only its
/// absence reaches this check.
fn has_client_cert(req: &http::Request<Body>) -> bool {
    req.extensions()
        .get::<TlsConnectInfo<TcpConnectInfo>>()
        .and_then(TlsConnectInfo::peer_certs)
        .is_some_and(|certs| !certs.is_empty())
}

/// Tower layer adding [`Auth`].
#[derive(Debug, Clone)]
pub struct AuthLayer {
    policy: Arc<AuthPolicy>,
}

impl AuthLayer {
    /// Enforces `policy`; a policy that requires nothing passes every call.
    pub fn new(policy: AuthPolicy) -> Self {
        Self {
            policy: Arc::new(policy),
        }
    }
}

impl OnCall for AuthLayer {
    fn on_call<S: Inner>(&self, inner: &mut S, req: Request) -> ResponseFuture<S::Error> {
        match self.policy.refusal(&req) {
            // Called here, not in the future: layers inside (the deadline)
            // start their clocks when the request arrives.
            None => Box::pin(inner.call(req)),
            Some(message) => {
                tracing::warn!(reason = message, "request refused: unauthenticated");
                let response = Status::unauthenticated(message).into_http();
                Box::pin(std::future::ready(Ok(response)))
            }
        }
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Auth<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Layered::new(self.clone(), inner)
    }
}

/// See the module docs.
pub type Auth<S> = Layered<AuthLayer, S>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_and_parsed() {
        assert!(check_token("0123456789abcdef").is_ok());
        assert!(check_token("abc.DEF_ghi~jkl+mno/pqr==").is_ok());
        let short = check_token("short").unwrap_err();
        assert!(short.contains("5 characters"), "{short}");
        let bad = check_token("0123456789abcdef!").unwrap_err();
        assert!(!bad.contains("0123456789abcdef"), "{bad}");
        assert!(check_token("====").is_err());

        let file = "# rotation: new token first\n\
                    aaaaaaaaaaaaaaaaaaaa\n\
                    \n\
                    bbbbbbbbbbbbbbbbbbbb   # old, remove after 2026-12-01\n";
        assert_eq!(
            parse_token_file(file).unwrap(),
            ["aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb"]
        );
        assert_eq!(
            parse_token_file("aaaaaaaaaaaaaaaaaaaa\nnot valid\n").unwrap_err(),
            "line 2: a token may hold only letters, digits and - . _ ~ + / (then = padding)"
        );
        assert_eq!(
            parse_token_list(" aaaaaaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbbbbbb\ncccccccccccccccccccc ")
                .unwrap()
                .len(),
            3
        );
        assert!(
            parse_token_list("aaaaaaaaaaaaaaaaaaaa,short")
                .unwrap_err()
                .starts_with("token 2: ")
        );
    }

    #[test]
    fn a_token_set_accepts_exactly_its_tokens() {
        assert!(TokenSet::new::<&str>(&[]).is_none());
        let set = TokenSet::new(&[
            "aaaaaaaaaaaaaaaaaaaa",
            "bbbbbbbbbbbbbbbbbbbb",
            "aaaaaaaaaaaaaaaaaaaa",
        ])
        .unwrap();
        assert_eq!(set.len(), 2);
        assert!(set.accepts("aaaaaaaaaaaaaaaaaaaa"));
        assert!(set.accepts("bbbbbbbbbbbbbbbbbbbb"));
        assert!(!set.accepts("aaaaaaaaaaaaaaaaaaa"));
        assert!(!set.accepts(""));
        assert_eq!(format!("{set:?}"), "TokenSet { tokens: 2 }");
    }

    #[test]
    fn a_client_token_is_never_shown() {
        let token = BearerToken::new("  aaaaaaaaaaaaaaaaaaaa\n").unwrap();
        assert_eq!(format!("{token:?}"), "BearerToken(<redacted>)");
        let mut request = tonic::Request::new(());
        token.apply(&mut request);
        let value = request.metadata().get("authorization").unwrap();
        assert_eq!(value.to_str().unwrap(), "Bearer aaaaaaaaaaaaaaaaaaaa");
        assert!(!format!("{:?}", request.metadata()).contains("aaaa"));
        assert!(BearerToken::new("short").is_err());

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokens");
        std::fs::write(
            &file,
            "# newest first\nbbbbbbbbbbbbbbbbbbbb\naaaaaaaaaaaaaaaaaaaa\n",
        )
        .unwrap();
        let mut request = tonic::Request::new(());
        BearerToken::from_file(&file).unwrap().apply(&mut request);
        assert_eq!(
            request
                .metadata()
                .get("authorization")
                .unwrap()
                .to_str()
                .unwrap(),
            "Bearer bbbbbbbbbbbbbbbbbbbb"
        );
        std::fs::write(&file, "# nothing\n").unwrap();
        assert!(
            BearerToken::from_file(&file)
                .unwrap_err()
                .ends_with("holds no token")
        );
    }

    fn request(path: &str, authorization: Option<&str>) -> http::Request<Body> {
        let mut builder = http::Request::builder().uri(path);
        if let Some(value) = authorization {
            builder = builder.header("authorization", value);
        }
        builder.body(Body::empty()).unwrap()
    }

    #[test]
    fn the_policy_refuses_with_what_is_missing() {
        let policy = AuthPolicy {
            tokens: TokenSet::new(&["aaaaaaaaaaaaaaaaaaaa"]),
            require_client_cert: false,
        };
        let path = "/openclaw.prompt.v1.PromptService/RenderSystemPrompt";
        assert_eq!(
            policy.refusal(&request(path, None)),
            Some("missing credentials: send `authorization: Bearer <token>` metadata")
        );
        assert_eq!(
            policy.refusal(&request(path, Some("Basic aaaaaaaaaaaaaaaaaaaa"))),
            Some("malformed authorization metadata: expected `Bearer <token>`")
        );
        assert_eq!(
            policy.refusal(&request(path, Some("Bearer bbbbbbbbbbbbbbbbbbbb"))),
            Some("invalid bearer token")
        );
        assert_eq!(
            policy.refusal(&request(path, Some("bearer aaaaaaaaaaaaaaaaaaaa"))),
            None
        );
        assert!(policy.refusal(&request("/no.Such/Path", None)).is_some());
        assert_eq!(
            policy.refusal(&request("/grpc.health.v1.Health/Check", None)),
            None
        );
        assert_eq!(
            policy.refusal(&request(
                "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                None
            )),
            None
        );
        let mtls = AuthPolicy {
            tokens: None,
            require_client_cert: true,
        };
        assert_eq!(
            mtls.refusal(&request(path, None)),
            Some("a client certificate is required")
        );
        assert!(
            AuthPolicy::default()
                .refusal(&request(path, None))
                .is_none()
        );
    }
}

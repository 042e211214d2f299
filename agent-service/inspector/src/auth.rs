//! Bearer tokens for the inspector: the gRPC API's own, presented as a header or as the
//! cookie the page sets, and the security headers on every response.
//!
//! Without tokens the inspector trusts that only this machine reaches it, and a web page the
//! operator visits is on this machine too: a page on `evil.example` whose name it re-points at
//! 127.0.0.1 (DNS rebinding) sends requests the browser deems same-origin. Such a request
//! carries the page's name in `Host`, so without tokens only a loopback name (`localhost`,
//! `127.0.0.1`, `[::1]`) or the listen address itself is answered; anything else gets 421.

use std::net::{IpAddr, SocketAddr};

use axum::{
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use service_kit::TokenSet;

/// The cookie that carries the token (hex-encoded) after `/?token=...`.
pub const COOKIE: &str = "openclaw_inspector";

/// The policy every response carries: only this origin's script, styles and API, no inline
/// script or style, no frames, no forms, no plugins.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// Who may pass.
#[derive(Debug, Clone)]
pub struct Auth {
    tokens: Option<TokenSet>,
    listen: SocketAddr,
}

impl Auth {
    /// Asks for one of `tokens` (None: lets in every request that names a loopback host or
    /// `listen`).
    pub fn new(tokens: Option<TokenSet>, listen: SocketAddr) -> Self {
        Self { tokens, listen }
    }

    /// Whether `host` (a `Host` header or an HTTP/2 authority, port optional) names this
    /// machine's loopback or the listen address.
    fn local_host(&self, host: &str) -> bool {
        let name = match host.rsplit_once(':') {
            // `[::1]:8080`, `localhost:8080`; a bare IPv6 literal has more than one colon.
            Some((name, port))
                if port.bytes().all(|b| b.is_ascii_digit())
                    && (name.starts_with('[') || !name.contains(':')) =>
            {
                name
            }
            _ => host,
        };
        let name = name.trim_start_matches('[').trim_end_matches(']');
        if name.eq_ignore_ascii_case("localhost") {
            return true;
        }
        name.parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip == self.listen.ip())
    }

    fn accepts(&self, headers: &HeaderMap) -> bool {
        let Some(tokens) = &self.tokens else {
            return true;
        };
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim().to_owned());
        bearer
            .into_iter()
            .chain(cookie_token(headers))
            .any(|token| tokens.accepts(&token))
    }
}

/// The token in the inspector's cookie, decoded.
fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .and_then(|(_, value)| hex::decode(value).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
}

/// The `token` query parameter of a URI, percent-decoding left to the browser's usual
/// alphabet: tokens are printable ASCII, and `+`, `%` and `&` arrive encoded.
fn query_token(query: Option<&str>) -> Option<String> {
    let query = query?;
    let value = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "token")
        .map(|(_, value)| value)?;
    percent_decode(value)
}

fn percent_decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = value.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Lets a request through when its token is good; `GET /?token=<token>` with a good token
/// sets the cookie and redirects to `/`, so the token leaves the address bar.
pub async fn require(State(auth): State<Auth>, request: Request, next: Next) -> Response {
    if auth.tokens.is_none() {
        let host = request
            .uri()
            .authority()
            .map(|a| a.as_str().to_owned())
            .or_else(|| {
                request
                    .headers()
                    .get(header::HOST)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            });
        if !host.as_deref().is_some_and(|h| auth.local_host(h)) {
            let body = "this inspector has no tokens and answers only requests addressed to \
                        localhost, 127.0.0.1, [::1] or its own listen address\n";
            return secure((StatusCode::MISDIRECTED_REQUEST, body).into_response());
        }
    }
    if let Some(tokens) = &auth.tokens
        && request.uri().path() == "/"
        && let Some(token) = query_token(request.uri().query())
    {
        if !tokens.accepts(&token) {
            return refuse("invalid token");
        }
        let cookie = format!(
            "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            hex::encode(token.as_bytes())
        );
        let mut response = Redirect::to("/").into_response();
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        return secure(response);
    }
    if !auth.accepts(request.headers()) {
        return refuse(
            "missing or invalid credentials: send `authorization: Bearer <token>`, or open \
             /?token=<token> once in the browser",
        );
    }
    secure(next.run(request).await)
}

fn refuse(message: &str) -> Response {
    let body = axum::Json(serde_json::json!({ "error": message }));
    secure((StatusCode::UNAUTHORIZED, body).into_response())
}

/// Adds the security headers.
pub fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_token_from_a_header_or_the_cookie() {
        let auth = Auth::new(TokenSet::new(&["s3cret-token"]), ANY);
        let mut headers = HeaderMap::new();
        assert!(!auth.accepts(&headers));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer s3cret-token"),
        );
        assert!(auth.accepts(&headers));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer wrong"),
        );
        assert!(!auth.accepts(&headers));
        let cookie = format!("a=b; {COOKIE}={}", hex::encode("s3cret-token"));
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&cookie).expect("cookie"),
        );
        assert!(
            auth.accepts(&headers),
            "a good cookie passes beside a bad header"
        );
        assert!(Auth::new(None, ANY).accepts(&HeaderMap::new()));
    }

    const ANY: SocketAddr = SocketAddr::new(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8080);

    #[test]
    fn without_tokens_only_local_names_are_answered() {
        let listen: SocketAddr = "192.0.2.7:9000".parse().expect("addr");
        let auth = Auth::new(None, listen);
        for host in [
            "localhost",
            "LOCALHOST:9000",
            "127.0.0.1",
            "127.0.0.1:9000",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:9000",
            "192.0.2.7:9000",
            "192.0.2.7",
        ] {
            assert!(auth.local_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:9000",
            "localhost.evil.example:9000",
            "127.0.0.1.nip.io:9000",
            "192.0.2.8:9000",
            "[::2]:9000",
            "",
            "::1:9000",
        ] {
            assert!(!auth.local_host(host), "{host}");
        }
    }

    #[test]
    fn decodes_the_query_token() {
        assert_eq!(
            query_token(Some("x=1&token=a%2Bb%25c")).as_deref(),
            Some("a+b%c")
        );
        assert_eq!(query_token(Some("x=1")), None);
        assert_eq!(query_token(None), None);
        assert_eq!(query_token(Some("token=%zz")), None);
    }
}

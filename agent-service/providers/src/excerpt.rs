//! What a body that is not a reply looks like in an error: whether it even starts like an
//! event stream, and the excerpt quoted (short, on one line, without control characters, the
//! provider's key blanked), since it may reach a client and a log.

use crate::credentials::ApiKey;
use crate::transport::Endpoint;

/// Whether a body starts like an event stream: its first non-blank line is a comment or one
/// of the SSE fields. A stream of keep-alive comments that breaks off is a cut stream (worth a
/// retry); a page is not.
pub(crate) fn looks_like_sse(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let Some(first) = text
        .lines()
        .map(str::trim_end)
        .find(|line| !line.is_empty())
    else {
        return true;
    };
    first.starts_with(':')
        || ["data", "event", "id", "retry"].iter().any(|field| {
            first
                .strip_prefix(field)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
        })
}

/// The most of a body that is not a reply quoted in the error.
const EXCERPT_CHARS: usize = 200;

/// The first characters of a body that is not a reply, on one line, with the endpoint's API
/// key blanked should a page echo it.
pub(crate) fn excerpt(body: &str, endpoint: &Endpoint) -> String {
    excerpt_with(body, endpoint.api_key())
}

pub(crate) fn excerpt_with(body: &str, key: Option<&ApiKey>) -> String {
    let mut text: String = body
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .take(EXCERPT_CHARS)
        .collect();
    if let Some(key) = key.map(ApiKey::expose).filter(|key| !key.is_empty()) {
        text = text.replace(key, "***");
    }
    if text.is_empty() {
        "(empty body)".to_owned()
    } else {
        format!("{text:?}")
    }
}

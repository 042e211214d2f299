//! The model's reply: its text, a failed call's error, and what it delivers (P-18, P-28): its
//! directives checked against the session's workspace, and the silent token recognised.
//!
//! The directive syntax is read by [`openclaw_blocks::DirectiveFilter`], the one parser for
//! final replies and streamed blocks alike; this module decides what of it may go out. A path
//! must resolve inside the session's workspace (the same confinement the file tools use) to an
//! existing file; a URL must be http or https. Anything else is dropped, logged and reported
//! in [`ReplyDirectives::dropped`], never delivered.

use std::path::Path;
use std::sync::Arc;

use openclaw_blocks::{AttachmentKind, Directive, parse_directives};
use openclaw_providers::ProviderError;
use openclaw_transcript::{AssistantMessage, ContentBlock};
use openclaw_workspace::Confined;
use prompt_render::NO_REPLY;

use crate::{
    error::RuntimeError,
    events::{Attachment, AttachmentSource, DroppedAttachment, ReplyDirectives, ReplyTarget},
};

/// Checks a session's reply directives.
#[derive(Debug, Clone)]
pub(crate) struct DirectiveCheck {
    /// The session's workspace, or why it cannot be opened (then no path is delivered).
    workspace: Result<Arc<Confined>, String>,
}

impl DirectiveCheck {
    /// Checks against the workspace at `root`.
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            workspace: Confined::new(root).map(Arc::new).map_err(|e| e.to_string()),
        }
    }

    /// Checks against a workspace already opened (a run's tool context has one: the same
    /// root, not resolved again).
    pub(crate) fn sharing(workspace: Arc<Confined>) -> Self {
        Self {
            workspace: Ok(workspace),
        }
    }

    /// The deliverable form of `directives`.
    pub(crate) fn resolve(&self, directives: Vec<Directive>) -> ReplyDirectives {
        let mut out = ReplyDirectives::default();
        for directive in directives {
            match directive {
                Directive::AudioAsVoice => out.audio_as_voice = true,
                Directive::ReplyToCurrent => {
                    out.reply_to.get_or_insert(ReplyTarget::Current);
                }
                Directive::ReplyTo(id) => {
                    out.reply_to.get_or_insert(ReplyTarget::Message(id));
                }
                Directive::Media(target) => match self.attachment(&target) {
                    Ok(attachment) => {
                        // The prompt describes an audio attachment as the way to send a
                        // voice note.
                        out.audio_as_voice |= attachment.kind == AttachmentKind::Audio;
                        out.attachments.push(attachment);
                    }
                    Err(reason) => {
                        tracing::warn!(%target, %reason, "reply attachment dropped");
                        out.dropped.push(DroppedAttachment { target, reason });
                    }
                },
            }
        }
        out
    }

    fn attachment(&self, target: &str) -> Result<Attachment, String> {
        let kind = AttachmentKind::of(target);
        if let Some(scheme) = url_scheme(target) {
            let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
            let rest = &target[scheme.len() + 1..];
            if !web {
                return Err(format!(
                    "only http and https URLs are delivered, not {scheme}:"
                ));
            }
            let host = rest.strip_prefix("//").unwrap_or("");
            if host.split(['/', '?', '#']).next().unwrap_or("").is_empty() {
                return Err("the URL has no host".to_owned());
            }
            return Ok(Attachment {
                source: AttachmentSource::Url(target.to_owned()),
                kind,
            });
        }
        let workspace = self
            .workspace
            .as_ref()
            .map_err(|e| format!("the session's workspace cannot be opened: {e}"))?;
        let path = workspace.resolve_read(target).map_err(|e| e.to_string())?;
        if !path.is_file() {
            return Err(format!("{} is not a file", path.display()));
        }
        Ok(Attachment {
            source: AttachmentSource::Path(path),
            kind,
        })
    }
}

/// The scheme of a target written as a URL (`https:`, `file:`, `data:`...), when it is one:
/// letters first, then letters, digits, `+`, `-` or `.`, then a colon. One letter is not a
/// scheme, so a path never reads as one.
fn url_scheme(target: &str) -> Option<&str> {
    let (scheme, _) = target.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && scheme.len() > 1
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// A reply that says nothing: exactly the silent token once blanks around it are removed.
pub(crate) fn is_silent(clean: &str) -> bool {
    clean.trim() == NO_REPLY
}

/// Text that may still grow into the silent token.
pub(crate) fn may_be_silent(clean: &str) -> bool {
    NO_REPLY.starts_with(clean.trim()) || is_silent(clean)
}

/// What a whole message delivers without block streaming.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Delivery {
    /// The text without directives (empty when silent).
    pub text: String,
    /// Its checked directives (none when silent).
    pub directives: ReplyDirectives,
    /// It was the silent token.
    pub silent: bool,
}

impl Delivery {
    /// Reads `text` whole.
    pub(crate) fn of(text: &str, check: &DirectiveCheck) -> Self {
        let parsed = parse_directives(text);
        if is_silent(&parsed.text) {
            return Self {
                text: String::new(),
                directives: ReplyDirectives::default(),
                silent: true,
            };
        }
        Self {
            directives: check.resolve(parsed.directives),
            text: parsed.text,
            silent: false,
        }
    }
}

/// The text of a model's reply: its text blocks, joined.
pub(crate) fn assistant_text(reply: &AssistantMessage) -> String {
    reply
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// A failed model call as a runtime error, by what the provider said.
/// Why a run's cancel token fired, in words for its tool results: the service began to stop,
/// or a newer message interrupted the run.
pub(crate) fn why_cut(services: &crate::services::Services) -> &'static str {
    if services.is_stopping() {
        "agent-service began shutting down"
    } else {
        "a newer message interrupted the run"
    }
}

/// The error of a run cut short: UNAVAILABLE while the service stops (send the message again,
/// through the router or once the service is back; what the run said so far is kept), ABORTED
/// when a newer message interrupted it.
pub(crate) fn cut_short(services: &crate::services::Services, run: u64) -> RuntimeError {
    if services.is_stopping() {
        RuntimeError::Unavailable(format!(
            "run {run} was stopped because agent-service is shutting down; what it said so far \
             is saved in the transcript"
        ))
    } else {
        RuntimeError::Aborted(format!("run {run} was interrupted by a newer message"))
    }
}

pub(crate) fn provider_error(error: ProviderError) -> RuntimeError {
    let message = format!("model provider: {error}");
    match error {
        ProviderError::RateLimited { .. } => RuntimeError::ResourceExhausted(message),
        ProviderError::ContextOverflow { .. } => RuntimeError::ContextOverflow(message),
        // A 400 or 422 is about what the request holds: the run checks whether its newest
        // message is the cause. Other refusals (401, 403, 404, 408...) are setup.
        ProviderError::Client {
            status: 400 | 422, ..
        } => RuntimeError::ProviderRefused(message),
        ProviderError::Config { .. } | ProviderError::Client { .. } => {
            RuntimeError::FailedPrecondition(message)
        }
        ProviderError::Cancelled => RuntimeError::Aborted(message),
        ProviderError::Server { .. }
        | ProviderError::Malformed { .. }
        | ProviderError::Connection { .. } => RuntimeError::Unavailable(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(dir: &Path) -> DirectiveCheck {
        DirectiveCheck::new(dir)
    }

    #[test]
    fn paths_inside_the_workspace_and_web_urls_are_delivered() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("chart.png"), b"png").unwrap();
        let got = check(dir.path()).resolve(vec![
            Directive::Media("chart.png".into()),
            Directive::Media("https://example.com/a.mp3".into()),
            Directive::ReplyTo("9".into()),
            Directive::ReplyToCurrent,
        ]);
        let real = std::fs::canonicalize(dir.path().join("chart.png")).unwrap();
        assert_eq!(
            got,
            ReplyDirectives {
                attachments: vec![
                    Attachment {
                        source: AttachmentSource::Path(real),
                        kind: AttachmentKind::Image
                    },
                    Attachment {
                        source: AttachmentSource::Url("https://example.com/a.mp3".into()),
                        kind: AttachmentKind::Audio
                    },
                ],
                audio_as_voice: true,
                reply_to: Some(ReplyTarget::Message("9".into())),
                dropped: vec![],
            }
        );
    }

    #[test]
    fn escaping_paths_other_schemes_and_missing_files_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let got = check(dir.path()).resolve(vec![
            Directive::Media("../outside.png".into()),
            Directive::Media("/etc/passwd".into()),
            Directive::Media("file:///etc/passwd".into()),
            Directive::Media("javascript:alert(1)".into()),
            Directive::Media("https://".into()),
            Directive::Media("missing.pdf".into()),
        ]);
        assert!(got.attachments.is_empty(), "{got:?}");
        let targets: Vec<&str> = got.dropped.iter().map(|d| d.target.as_str()).collect();
        assert_eq!(
            targets,
            [
                "../outside.png",
                "/etc/passwd",
                "file:///etc/passwd",
                "javascript:alert(1)",
                "https://",
                "missing.pdf"
            ]
        );
        assert!(got.dropped[2].reason.contains("http and https"), "{got:?}");
        assert!(got.dropped.iter().all(|d| !d.reason.is_empty()));
    }

    #[test]
    fn the_silent_token_alone_delivers_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let c = check(dir.path());
        for text in ["NO_REPLY", "  NO_REPLY\n", "[[reply_to_current]] NO_REPLY"] {
            let d = Delivery::of(text, &c);
            assert!(
                d.silent && d.text.is_empty() && d.directives.is_empty(),
                "{text:?}"
            );
        }
        for text in ["NO_REPLY, sorry", "No reply needed", "NO_REPLY_NOT"] {
            assert!(!Delivery::of(text, &c).silent, "{text:?}");
        }
        assert!(may_be_silent("NO_"));
        assert!(may_be_silent(" "));
        assert!(!may_be_silent("NO_X"));
    }
}

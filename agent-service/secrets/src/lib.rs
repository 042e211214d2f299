//! `openclaw-secrets`: the one place that knows which strings are secret, and replaces them
//! wherever text leaves agent-service.
//!
//! What it is for: a [`Redactor`] holds the resolved secrets of the running config (provider
//! API keys, tokens, the values `${VAR}` references expanded to), each with a label naming
//! where it came from, and replaces every occurrence in a text with `[redacted LABEL]`. The
//! runtime refreshes it on every config load; it is applied to log lines
//! ([`RedactingWriter`]), gRPC status messages and run errors, tool results (so neither the
//! model nor the transcript sees a key a command printed) and the render inputs of every
//! prompt. Values shorter than [`MIN_SECRET_CHARS`] are not treated as secrets: a three-letter
//! value would redact ordinary words.
//!
//! Text a model or a command shapes can carry a secret in pieces: `fold -w 20` prints a key as
//! lines of 20 characters, a model can put spaces between its parts. A secret of
//! [`SPLIT_SECRET_MIN_CHARS`] or more is therefore also found with whitespace between any of
//! its characters ([`split`]), and the whole span is replaced. Text that arrives in pieces (a
//! model's stream) goes through a [`StreamRedactor`], which holds back the last characters
//! until they can no longer be the start of a secret.
//!
//! What it is not for: finding secrets nobody declared (no entropy guessing), or encryption.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::{Arc, PoisonError, RwLock};

use aho_corasick::{AhoCorasick, MatchKind};
use tracing_subscriber::fmt::MakeWriter;

mod split;
mod stream;

pub use stream::StreamRedactor;

/// Shorter values are never redacted (they would match ordinary text).
pub const MIN_SECRET_CHARS: usize = 6;

/// Values at least this long are also found split by whitespace (shorter ones would match
/// ordinary words spread over a text).
pub const SPLIT_SECRET_MIN_CHARS: usize = 16;

/// One secret value and where it came from (`ANTHROPIC_API_KEY`,
/// `models.providers.openai.apiKey`).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret {
    /// Where it came from; shown in place of the value.
    pub label: String,
    /// The value itself.
    pub value: String,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret")
            .field("label", &self.label)
            .field("value", &"***")
            .finish()
    }
}

impl Secret {
    /// A secret labelled `label`.
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            value: value.into(),
        }
    }
}

/// The compiled set: an automaton over the values and a replacement per value, and one over
/// the long values for their split form.
#[derive(Default)]
struct Matcher {
    automaton: Option<AhoCorasick>,
    replacements: Vec<String>,
    split: split::SplitMatcher,
    /// The longest value, in characters.
    longest: usize,
}

/// Replaces secret values in text. Cheap to clone: clones share one set. Secrets come in
/// named sources (`config`, `auth`): [`Redactor::replace_source`] swaps one source whole (a
/// config reload) and keeps the others.
#[derive(Clone, Default)]
pub struct Redactor {
    set: Arc<RwLock<Arc<Matcher>>>,
    sources: Arc<std::sync::Mutex<std::collections::BTreeMap<String, Vec<Secret>>>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.current().replacements.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor with no secrets yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the secrets of every source with `secrets` (one source, `default`).
    pub fn replace(&self, secrets: impl IntoIterator<Item = Secret>) {
        let mut sources = self.sources.lock().unwrap_or_else(PoisonError::into_inner);
        sources.clear();
        sources.insert("default".to_owned(), secrets.into_iter().collect());
        self.rebuild(&sources);
    }

    /// Replaces the secrets of one source, keeping the others. Values shorter than
    /// [`MIN_SECRET_CHARS`] are left out; when one value has several labels the first wins;
    /// longer values match before their prefixes.
    pub fn replace_source(&self, source: &str, secrets: impl IntoIterator<Item = Secret>) {
        let mut sources = self.sources.lock().unwrap_or_else(PoisonError::into_inner);
        sources.insert(source.to_owned(), secrets.into_iter().collect());
        self.rebuild(&sources);
    }

    fn rebuild(&self, sources: &std::collections::BTreeMap<String, Vec<Secret>>) {
        let mut values: Vec<String> = Vec::new();
        let mut replacements: Vec<String> = Vec::new();
        for secret in sources.values().flatten().cloned() {
            if secret.value.chars().count() < MIN_SECRET_CHARS || values.contains(&secret.value) {
                continue;
            }
            replacements.push(format!("[redacted {}]", secret.label));
            values.push(secret.value);
        }
        let automaton = if values.is_empty() {
            None
        } else {
            // Leftmost-longest: a key that contains another key is replaced whole.
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&values)
                .ok()
        };
        let split = split::SplitMatcher::new(&values, &replacements);
        let longest = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
        let matcher = Arc::new(Matcher {
            automaton,
            replacements,
            split,
            longest,
        });
        *self.set.write().unwrap_or_else(PoisonError::into_inner) = matcher;
    }

    fn current(&self) -> Arc<Matcher> {
        Arc::clone(&self.set.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// How many secrets it replaces.
    pub fn len(&self) -> usize {
        self.current().replacements.len()
    }

    /// Whether it replaces nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The longest secret, in characters (0 with none).
    pub fn longest_secret_chars(&self) -> usize {
        self.current().longest
    }

    /// `text` with every secret value replaced by `[redacted LABEL]`, whole or split by
    /// whitespace (long values); borrowed when there was nothing to replace.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let matcher = self.current();
        let Some(automaton) = &matcher.automaton else {
            return Cow::Borrowed(text);
        };
        let whole = if automaton.is_match(text) {
            Cow::Owned(automaton.replace_all(text, &matcher.replacements))
        } else {
            Cow::Borrowed(text)
        };
        match matcher.split.redact(&whole) {
            Some(split) => Cow::Owned(split),
            None => whole,
        }
    }

    /// Whether `bytes` contain a secret value anywhere, whole or split by whitespace.
    pub fn contains_secret(&self, bytes: &[u8]) -> bool {
        let matcher = self.current();
        matcher
            .automaton
            .as_ref()
            .is_some_and(|a| a.is_match(bytes))
            || matcher.split.contains(bytes)
    }

    /// Redacts `text` in place.
    pub fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redact(text) {
            *text = redacted;
        }
    }
}

/// A [`MakeWriter`] for tracing's fmt layer whose writers redact each log event before it
/// reaches `inner` (stderr, say): an event is buffered whole, then written once.
#[derive(Clone, Debug)]
pub struct RedactingWriter<M> {
    redactor: Redactor,
    inner: M,
}

impl<M> RedactingWriter<M> {
    /// Log lines written through `inner`, redacted by `redactor`.
    pub fn new(redactor: Redactor, inner: M) -> Self {
        Self { redactor, inner }
    }
}

impl<'a, M> MakeWriter<'a> for RedactingWriter<M>
where
    M: MakeWriter<'a>,
{
    type Writer = EventWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        EventWriter {
            redactor: self.redactor.clone(),
            buffer: Vec::new(),
            inner: self.inner.make_writer(),
        }
    }
}

/// One log event on its way out; written (redacted) when dropped.
pub struct EventWriter<W: Write> {
    redactor: Redactor,
    buffer: Vec<u8>,
    inner: W,
}

impl<W: Write> Write for EventWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Drop for EventWriter<W> {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.buffer);
        let out = self.redactor.redact(&text);
        // A log line that cannot be written has nowhere else to go.
        let _ = self.inner.write_all(out.as_bytes());
        let _ = self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor(pairs: &[(&str, &str)]) -> Redactor {
        let r = Redactor::new();
        r.replace(pairs.iter().map(|(l, v)| Secret::new(*l, *v)));
        r
    }

    #[test]
    fn every_occurrence_is_replaced_with_its_label() {
        let r = redactor(&[
            ("ANTHROPIC_API_KEY", "sk-ant-123456"),
            ("TOKEN", "tok-abcdef"),
        ]);
        assert_eq!(
            r.redact("key sk-ant-123456 and sk-ant-123456, token tok-abcdef."),
            "key [redacted ANTHROPIC_API_KEY] and [redacted ANTHROPIC_API_KEY], token [redacted TOKEN]."
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn short_values_are_not_secrets_and_longer_values_win() {
        let r = redactor(&[("SHORT", "abc"), ("A", "secret-1"), ("B", "secret-1-long")]);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r.redact("abc secret-1-long secret-1"),
            "abc [redacted B] [redacted A]"
        );
    }

    #[test]
    fn replacing_the_set_forgets_the_old_one_in_every_clone() {
        let r = redactor(&[("OLD", "old-secret")]);
        let clone = r.clone();
        r.replace([Secret::new("NEW", "new-secret")]);
        assert_eq!(
            clone.redact("old-secret new-secret"),
            "old-secret [redacted NEW]"
        );
    }

    #[test]
    fn sources_are_replaced_one_at_a_time() {
        let r = Redactor::new();
        r.replace_source("auth", [Secret::new("TOKEN", "token-123456")]);
        r.replace_source("config", [Secret::new("KEY", "key-123456")]);
        r.replace_source("config", [Secret::new("KEY2", "key2-123456")]);
        assert_eq!(
            r.redact("token-123456 key-123456 key2-123456"),
            "[redacted TOKEN] key-123456 [redacted KEY2]"
        );
    }

    #[test]
    fn log_events_are_redacted_whole() {
        let r = redactor(&[("KEY", "sk-live-999999")]);
        let sink = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        struct Sink(Arc<std::sync::Mutex<Vec<u8>>>);
        impl Write for Sink {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0
                    .lock()
                    .map_err(|_| io::Error::other("poisoned"))?
                    .extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let shared = Arc::clone(&sink);
        let make = RedactingWriter::new(r, move || Sink(Arc::clone(&shared)));
        {
            let mut w = make.make_writer();
            // Split across writes: still caught, the event is redacted whole.
            w.write_all(b"provider said sk-live").ok();
            w.write_all(b"-999999 in its body\n").ok();
        }
        let written = String::from_utf8(sink.lock().map(|s| s.clone()).unwrap_or_default())
            .unwrap_or_default();
        assert_eq!(written, "provider said [redacted KEY] in its body\n");
    }

    #[test]
    fn a_long_secret_split_by_whitespace_is_redacted_whole() {
        let key = "sk-live-0123456789abcdefghij";
        let r = redactor(&[("KEY", key), ("SHORT", "short-1")]);
        // `fold -w 5`, spaces between every character, a tab and a CRLF.
        let folded: String = key
            .as_bytes()
            .chunks(5)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect::<Vec<_>>()
            .join("\n");
        let spaced: String = key.chars().map(|c| format!("{c} ")).collect();
        let mixed = format!("{}\t{}\r\n{}", &key[..4], &key[4..20], &key[20..]);
        for text in [folded, spaced.trim_end().to_owned(), mixed] {
            let input = format!("before\n{text}\nafter");
            let out = r.redact(&input);
            assert_eq!(out, "before\n[redacted KEY]\nafter", "{text:?}");
            assert!(r.contains_secret(text.as_bytes()), "{text:?}");
        }
        // Short values are only found whole; a long one needs every character in order.
        assert_eq!(r.redact("short -1 short-1"), "short -1 [redacted SHORT]");
        let broken = format!("{} X {}", &key[..10], &key[10..]);
        assert_eq!(r.redact(&broken), broken);
        assert!(!r.contains_secret(broken.as_bytes()));
    }

    #[test]
    fn debug_never_shows_a_value() {
        let shown = format!("{:?}", Secret::new("K", "do-not-print"));
        assert!(!shown.contains("do-not-print"), "{shown}");
    }
}

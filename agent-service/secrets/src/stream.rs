//! Redacting text that arrives in pieces (a model's streamed reply): a secret may straddle two
//! pieces, so the last characters are held back until what follows shows they are not part
//! of one.

use crate::Redactor;

/// Redacts a stream of text pieces: [`StreamRedactor::push`] returns what may be sent now,
/// [`StreamRedactor::finish`] the rest. What it returns, joined, is the whole text redacted
/// (a secret split by more whitespace than twice its length across two pieces is the one
/// thing it can miss; the stored message is redacted whole).
#[derive(Debug)]
pub struct StreamRedactor {
    redactor: Redactor,
    pending: String,
}

impl StreamRedactor {
    /// A stream redacted by `redactor`.
    pub fn new(redactor: Redactor) -> Self {
        Self {
            redactor,
            pending: String::new(),
        }
    }

    /// Adds `piece`; the redacted text that can no longer change, if any.
    pub fn push(&mut self, piece: &str) -> Option<String> {
        self.pending.push_str(piece);
        // Twice the longest secret: a secret split by one character of whitespace between
        // each of its own still fits.
        let hold = self.redactor.longest_secret_chars().saturating_mul(2);
        self.redactor.redact_in_place(&mut self.pending);
        let chars = self.pending.chars().count();
        if chars <= hold {
            return None;
        }
        let cut = self
            .pending
            .char_indices()
            .nth(chars - hold)
            .map_or(self.pending.len(), |(at, _)| at);
        let rest = self.pending.split_off(cut);
        let ready = std::mem::replace(&mut self.pending, rest);
        (!ready.is_empty()).then_some(ready)
    }

    /// The rest of the text, redacted.
    pub fn finish(&mut self) -> Option<String> {
        let mut rest = std::mem::take(&mut self.pending);
        self.redactor.redact_in_place(&mut rest);
        (!rest.is_empty()).then_some(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Secret;

    #[test]
    fn a_secret_across_pieces_never_leaves_in_part() {
        let key = "tok-0123456789abcdefghijkl";
        let r = Redactor::new();
        r.replace([Secret::new("AGENT_SERVICE_TOKENS", key)]);
        let text = format!(
            "The token is {key} and folded {} done. Plenty of text after it to flush.",
            {
                let (a, b) = key.split_at(11);
                format!("{a}\n{b}")
            }
        );
        // Every way of cutting the text into pieces of 1..7 characters.
        for size in 1..8 {
            let mut stream = StreamRedactor::new(r.clone());
            let mut sent = String::new();
            let chars: Vec<char> = text.chars().collect();
            for piece in chars.chunks(size) {
                let piece: String = piece.iter().collect();
                if let Some(ready) = stream.push(&piece) {
                    assert!(!ready.contains("0123456789"), "{ready:?}");
                    sent.push_str(&ready);
                }
            }
            sent.push_str(&stream.finish().unwrap_or_default());
            assert_eq!(
                sent,
                "The token is [redacted AGENT_SERVICE_TOKENS] and folded [redacted AGENT_SERVICE_TOKENS] done. Plenty of text after it to flush.",
                "pieces of {size}"
            );
        }
    }

    #[test]
    fn without_secrets_nothing_is_held_back() {
        let mut stream = StreamRedactor::new(Redactor::new());
        assert_eq!(stream.push("hello").as_deref(), Some("hello"));
        assert_eq!(stream.finish(), None);
    }
}

//! Whether a message fits one transcript line once stored: what is refused before it is
//! acknowledged, and what journal recovery sets aside instead of writing.

use crate::error::RuntimeError;

/// Room a transcript line keeps for the entry around the message text (ids, timestamps, keys).
const ENTRY_OVERHEAD: usize = 64 * 1024;

/// Bytes `text` takes as a JSON string body, counted by serde_json itself (the encoder the
/// transcript writes with) into a sink that keeps nothing.
fn json_escaped_len(text: &str) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a string into a counter cannot fail.
    let _ = serde_json::to_writer(&mut count, text);
    count.0.saturating_sub(2)
}

/// A message is refused before it is acknowledged when, escaped as it is stored, it would not
/// fit one transcript line: acknowledged, it could never be written, and would block its
/// session's journal for good.
pub(crate) fn check_stored_size(message: &str) -> Result<(), RuntimeError> {
    let limit = openclaw_transcript::DEFAULT_MAX_LINE_LEN - ENTRY_OVERHEAD;
    let stored = json_escaped_len(message);
    if stored > limit {
        return Err(RuntimeError::ResourceExhausted(format!(
            "message: {} bytes, {stored} once stored as JSON (control characters and quotes are \
             escaped), over the {limit} bytes a transcript line holds for a message",
            message.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn the_escaped_length_is_serde_jsons() {
        for text in [
            "plain",
            "quote \" and \\",
            "\u{1}\u{1f}\n\t\r\u{8}\u{c}",
            "é中🙂",
            "",
        ] {
            let encoded = serde_json::to_string(text).unwrap_or_default();
            assert_eq!(json_escaped_len(text) + 2, encoded.len(), "{text:?}");
        }
    }

    #[test]
    fn a_message_that_escapes_past_a_line_is_refused() {
        let control = "\u{1}".repeat(3 * 1024 * 1024);
        let err = check_stored_size(&control).unwrap_err();
        assert!(matches!(err, RuntimeError::ResourceExhausted(_)), "{err:?}");
        assert!(err.to_string().contains("transcript line"), "{err}");
        assert!(check_stored_size(&"a".repeat(3 * 1024 * 1024)).is_ok());
    }
}

//! What a refused call or a refused tool call says: its status code and the words its
//! message must hold, checked in one place so every test shows the whole text when it fails.

use tonic::{Code, Status};

/// Asserts `status` is `code` with a message holding each of `parts`.
pub fn assert_status(status: &Status, code: Code, parts: &[&str]) {
    assert_eq!(status.code(), code, "{status:?}");
    assert_holds(status.message(), parts);
}

/// Asserts `status` is `code` with a message that starts with `prefix` (the field it names).
pub fn assert_status_starts(status: &Status, code: Code, prefix: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    assert!(status.message().starts_with(prefix), "{}", status.message());
}

/// Asserts `text` holds each of `parts`.
pub fn assert_holds(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} is not in {text}");
    }
}

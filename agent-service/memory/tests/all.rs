//! Integration tests of the memory index: one binary, the cases in `suite/`.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

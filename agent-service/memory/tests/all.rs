//! Integration tests of the memory index: one binary, the cases in `suite/`.
#![expect(clippy::unwrap_used, reason = "shared test helpers fail loudly")]

mod suite;

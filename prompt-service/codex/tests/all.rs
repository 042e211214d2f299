//! prompt-codex integration tests: params against the real Codex schema,
//! the committed snapshots, and the snapshot tool.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed expectation is a test failure"
)]

mod suite;

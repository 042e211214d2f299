//! openclaw-cron: one integration binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    missing_docs,
    reason = "test code: a failed expectation is a test failure"
)]

mod suite;

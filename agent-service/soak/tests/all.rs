//! openclaw-soak: one integration binary (STYLE: tests/all.rs + tests/suite/).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed expectation is a test failure"
)]

mod suite;

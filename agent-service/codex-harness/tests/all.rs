//! The harness against the real pinned Codex binary: text turns and where
//! our instructions land, dynamic tools, approvals, steering, interrupts,
//! resume across processes, a killed child; plus the version check against
//! a scripted stand-in. See `suite/fixture.rs` for the setup.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed expectation is a test failure"
)]

mod suite;

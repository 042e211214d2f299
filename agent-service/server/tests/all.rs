//! gRPC integration tests: a real agent-service on 127.0.0.1:0.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed expectation is a test failure"
)]

mod suite;

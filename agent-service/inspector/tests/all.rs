//! The inspector over real sockets: agent-service and prompt-service in-process on 127.0.0.1:0,
//! a fake model server speaking the Anthropic wire format, the inspector's HTTP API, and a
//! headless Chromium driving the page.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed expectation is a test failure"
)]

mod suite;

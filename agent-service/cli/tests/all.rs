//! One integration binary for the crate (see STYLE.md): the services run
//! in-process on 127.0.0.1:0 with the demo config, and the CLI's own
//! functions drive them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed expectation is a test failure"
)]

mod suite;

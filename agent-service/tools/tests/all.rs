//! Integration tests for `openclaw-tools`: one binary, modules in `suite/`. Tests that run
//! processes use real time and real `sh`; nothing sleeps to wait for readiness, they poll for
//! the condition with a deadline.
#![expect(clippy::unwrap_used, reason = "shared test helpers fail loudly")]

mod suite;

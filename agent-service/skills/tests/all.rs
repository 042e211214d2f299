//! Integration tests for `openclaw-skills`: one binary, modules in `suite/`.
#![expect(clippy::unwrap_used, reason = "shared test helpers fail loudly")]

mod suite;

//! Integration tests for `openclaw-workspace`: one binary, modules in `suite/`.
#![expect(clippy::unwrap_used, reason = "shared test helpers fail loudly")]

mod suite;

//! Integration tests of the sandbox: real bubblewrap, installed by the tests.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod suite;

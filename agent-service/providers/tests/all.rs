//! Integration tests of `openclaw-providers`, one binary (see `suite/`): every provider against
//! the testkit's fake server for its wire format, over real sockets.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "shared test helpers and scenarios fail loudly"
)]

mod suite;

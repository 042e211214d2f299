//! Integration tests of `openclaw-blocks`, one binary (see `suite/`).

mod suite;

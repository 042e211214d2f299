//! The crate's one integration test binary; the cases live in `suite/`.

mod suite;

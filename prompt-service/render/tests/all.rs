//! Integration tests of the pure renderer (one binary; modules in suite/).

mod suite;

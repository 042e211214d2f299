//! Processes on this host as `/proc` shows them, for tests that check what a command left
//! running: whether a `sleep` of a given length runs, and a wait until such a check holds.

use std::time::{Duration, Instant};

/// Whether a `sleep <seconds>` process runs anywhere on the host (its command line exactly
/// that). Panics when `/proc` cannot be read: "none runs" would be no answer then.
pub fn sleeping(seconds: &str) -> bool {
    let wanted = format!("sleep\0{seconds}\0");
    let entries = std::fs::read_dir("/proc").unwrap_or_else(|e| panic!("/proc: {e}"));
    entries.into_iter().any(|entry| {
        entry
            .ok()
            .and_then(|e| std::fs::read(e.path().join("cmdline")).ok())
            .is_some_and(|cmdline| cmdline == wanted.as_bytes())
    })
}

/// Checks `done` every 20 ms until it holds; panics naming `what` when `patience` runs out
/// first.
pub async fn eventually(what: &str, patience: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + patience;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

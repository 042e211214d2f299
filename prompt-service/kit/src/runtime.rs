//! The async runtime both servers start on.

/// The variable tokio reads for its number of worker threads (one per core when unset).
const WORKER_THREADS: &str = "TOKIO_WORKER_THREADS";

/// Checks `TOKIO_WORKER_THREADS` before the runtime reads it: tokio panics on a value it
/// cannot use; here it is a one-line error naming the variable (a usage error, exit 64).
pub fn check_runtime_env() -> Result<(), String> {
    match std::env::var(WORKER_THREADS) {
        Err(std::env::VarError::NotPresent) => Ok(()),
        Ok(value) if value.trim().parse::<usize>().is_ok_and(|n| n > 0) => Ok(()),
        Ok(value) => Err(format!(
            "{WORKER_THREADS}: invalid value {value:?}: a number of worker threads, 1 or more"
        )),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{WORKER_THREADS}: not valid UTF-8")),
    }
}

/// A multi-threaded runtime with every driver; `max_blocking_threads` caps the blocking pool
/// (None: tokio's default). Call [`check_runtime_env`] first.
pub fn runtime(max_blocking_threads: Option<usize>) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(threads) = max_blocking_threads {
        builder.max_blocking_threads(threads);
    }
    builder.build()
}

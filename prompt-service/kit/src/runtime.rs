//! The async runtime both servers start on.

use std::process::ExitCode;

/// The variable tokio reads for its number of worker threads (one per core when unset).
const WORKER_THREADS: &str = "TOKIO_WORKER_THREADS";

/// Why the runtime did not start.
#[derive(Debug)]
pub enum RuntimeStartError {
    /// `TOKIO_WORKER_THREADS` holds a value tokio cannot use (tokio would panic on it).
    Usage(String),
    /// The runtime could not be built.
    Build(std::io::Error),
}

impl RuntimeStartError {
    /// The process exit status: 64 (a usage error) for a bad variable, 1 otherwise.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Self::Usage(_) => ExitCode::from(64),
            Self::Build(_) => ExitCode::FAILURE,
        }
    }
}

impl std::fmt::Display for RuntimeStartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Usage(problem) => f.write_str(problem),
            Self::Build(error) => write!(f, "cannot start the async runtime: {error}"),
        }
    }
}

impl std::error::Error for RuntimeStartError {}

/// Checks `TOKIO_WORKER_THREADS` before the runtime reads it: tokio panics on a value it
/// cannot use; here it is a one-line error naming the variable.
fn check_runtime_env() -> Result<(), RuntimeStartError> {
    let invalid = |problem: String| Err(RuntimeStartError::Usage(problem));
    match std::env::var(WORKER_THREADS) {
        Err(std::env::VarError::NotPresent) => Ok(()),
        Ok(value) if value.trim().parse::<usize>().is_ok_and(|n| n > 0) => Ok(()),
        Ok(value) => invalid(format!(
            "{WORKER_THREADS}: invalid value {value:?}: a number of worker threads, 1 or more"
        )),
        Err(std::env::VarError::NotUnicode(_)) => {
            invalid(format!("{WORKER_THREADS}: not valid UTF-8"))
        }
    }
}

/// A multi-threaded runtime with every driver, after checking `TOKIO_WORKER_THREADS`;
/// `max_blocking_threads` caps the blocking pool (None: tokio's default).
pub fn runtime(
    max_blocking_threads: Option<usize>,
) -> Result<tokio::runtime::Runtime, RuntimeStartError> {
    check_runtime_env()?;
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(threads) = max_blocking_threads {
        builder.max_blocking_threads(threads);
    }
    builder.build().map_err(RuntimeStartError::Build)
}

//! Signals and the bounded drain.

use std::{future::Future, time::Duration};

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut sig) => {
                sig.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!(signal = "SIGINT", "shutdown requested"),
        () = term => tracing::info!(signal = "SIGTERM", "shutdown requested"),
    }
}

/// Runs `server` until it finishes. Once `started` resolves (the shutdown
/// signal was seen and the server stopped accepting), in-flight requests get
/// `timeout` to finish; after that the server future is dropped.
pub async fn drain<S, E>(
    server: S,
    started: tokio::sync::oneshot::Receiver<()>,
    timeout: Duration,
) -> Result<(), E>
where
    S: Future<Output = Result<(), E>>,
{
    tokio::pin!(server);
    let deadline = async {
        if started.await.is_ok() {
            tokio::time::sleep(timeout).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = &mut server => result,
        () = deadline => {
            tracing::warn!(timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX), "drain timeout reached; dropping in-flight requests");
            Ok(())
        }
    }
}

//! Signals and the bounded drain.

use std::{future::Future, time::Duration};

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
///
/// The handlers are installed when this is called, not when the future is
/// first polled: a server that calls it before it serves cannot be killed by
/// the default action of a signal that arrives while it is starting (a
/// SIGTERM right after the first request would otherwise end the process
/// without its drain). Call it from within the Tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind: SignalKind, name: &'static str| {
            signal(kind)
                .inspect_err(|error| tracing::error!(%error, "cannot listen for {name}"))
                .ok()
        };
        let mut interrupt = listen(SignalKind::interrupt(), "SIGINT");
        let mut terminate = listen(SignalKind::terminate(), "SIGTERM");
        async move {
            let int = async {
                match interrupt.as_mut() {
                    Some(sig) => drop(sig.recv().await),
                    None => std::future::pending::<()>().await,
                }
            };
            let term = async {
                match terminate.as_mut() {
                    Some(sig) => drop(sig.recv().await),
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = int => tracing::info!(signal = "SIGINT", "shutdown requested"),
                () = term => tracing::info!(signal = "SIGTERM", "shutdown requested"),
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
        tracing::info!(signal = "Ctrl-C", "shutdown requested");
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::time::Duration;

    /// The handler is in place before the future is polled: a SIGTERM sent
    /// then is seen by the first poll, and the process is not ended by it.
    #[tokio::test]
    async fn a_signal_before_the_first_poll_is_not_lost() {
        let shutdown = super::shutdown_signal();
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGTERM).expect("raise");
        tokio::time::timeout(Duration::from_secs(5), shutdown)
            .await
            .expect("the SIGTERM raised before the first poll resolves the future");
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

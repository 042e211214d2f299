//! Sessions: keys and kinds, the live session (one type per session, with its transcript
//! writer), and the manager that holds them.

mod creations;
pub mod events;
pub mod journal;
pub mod key;
mod live;
mod manager;
pub mod numbers;
pub mod queue;
mod recover;
mod repairs;
mod session;
pub(crate) mod stored_size;
mod touches;
mod writer;

pub use events::{RecvError, SessionEvents};
pub use key::SessionKind;
pub use live::{LiveSession, SessionEvent};
pub use manager::{ListedRow, NewSession, SessionInfo, SessionManager, SessionTarget};
pub use repairs::{Repair, RepairKind};
pub(crate) use session::Session;
pub use touches::TurnDelta;
pub use writer::Snapshot;

/// Runs blocking filesystem work off the async workers.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, crate::error::RuntimeError>
where
    F: FnOnce() -> Result<T, crate::error::RuntimeError> + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| crate::error::RuntimeError::Internal(format!("blocking task failed: {e}")))?
}

//! Sessions: keys and kinds, the live session (one type per session, with its transcript
//! actor), and the manager that holds them.

mod actor;
pub mod journal;
pub mod key;
mod live;
mod manager;
pub mod queue;
mod recover;
mod session;
mod touches;

pub use actor::Snapshot;
pub use key::SessionKind;
pub use live::{LiveSession, SessionEvent, SessionEvents};
pub use manager::{NewSession, SessionInfo, SessionManager, SessionTarget};
pub(crate) use session::Session;
pub use touches::TurnDelta;

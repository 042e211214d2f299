//! Sessions: keys and kinds, the per-session actor, and the manager.

mod actor;
mod extras;
pub mod journal;
pub mod key;
mod manager;
pub mod queue;
mod recover;
mod session;
mod touches;

pub use actor::{SessionHandle, Snapshot};
pub use extras::{SessionEvent, SessionEvents, SessionExtras};
pub use key::SessionKind;
pub use manager::{NewSession, SessionInfo, SessionManager, SessionTarget};
pub(crate) use session::Session;
pub use touches::TurnDelta;

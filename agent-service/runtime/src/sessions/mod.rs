//! Sessions: keys and kinds, the per-session actor, and the manager.

mod actor;
mod extras;
pub mod journal;
pub mod key;
mod manager;
pub mod queue;
mod recover;
mod repairs;
mod session;
pub(crate) mod stored_size;
mod touches;

pub use actor::{SessionHandle, Snapshot};
pub use extras::{SessionEvent, SessionEvents, SessionExtras};
pub use key::SessionKind;
pub use manager::{NewSession, SessionInfo, SessionManager, SessionTarget};
pub use repairs::{Repair, RepairKind};
pub(crate) use session::Session;
pub use touches::TurnDelta;

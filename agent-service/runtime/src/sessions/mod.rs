//! Sessions: keys and kinds, the live session (one type per session, with its transcript
//! actor), and the manager that holds them.

mod actor;
mod creations;
pub mod journal;
pub mod key;
mod live;
mod manager;
pub mod queue;
mod recover;
mod repairs;
mod session;
pub(crate) mod stored_size;
mod touches;

pub use actor::Snapshot;
pub use key::SessionKind;
pub use live::{LiveSession, SessionEvent, SessionEvents};
pub use manager::{NewSession, SessionInfo, SessionManager, SessionTarget};
pub use repairs::{Repair, RepairKind};
pub(crate) use session::Session;
pub use touches::TurnDelta;

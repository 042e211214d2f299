//! One open session, as its runs see it: who and where it is, its transcript actor, its
//! live state (queue, events, background commands) and its message journal.

use std::{path::PathBuf, sync::Arc};

use openclaw_config::resolve::AgentView;
use openclaw_transcript::SessionKey;

use super::{SessionExtras, SessionHandle, SessionKind, journal::Journal};

/// An open session; see [`super::SessionManager::open`].
#[derive(Debug)]
pub(crate) struct Session {
    /// The agent it belongs to.
    pub agent: AgentView,
    /// Its key.
    pub key: SessionKey,
    /// Its current id.
    pub session_id: String,
    /// The kind its key names.
    pub kind: SessionKind,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its transcript actor (every write goes through it).
    pub handle: SessionHandle,
    /// Its live state, shared by every run of the session.
    pub extras: Arc<SessionExtras>,
    /// Messages accepted but not yet in the transcript (owned by the live state; see
    /// [`SessionExtras::journal`]).
    pub journal: Arc<Journal>,
}

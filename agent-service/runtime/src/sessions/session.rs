//! One open session, as its runs see it: who and where it is, and the live session (see
//! [`LiveSession`]) every run of it shares.

use std::{path::PathBuf, sync::Arc};

use openclaw_config::resolve::AgentView;
use openclaw_transcript::SessionKey;

use super::{LiveSession, SessionKind, journal::Journal};

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
    /// The live session: transcript writer, queue, events, background commands.
    pub live: Arc<LiveSession>,
    /// Messages accepted but not yet in the transcript (opened by the live session; see
    /// [`LiveSession::journal`]).
    pub journal: Arc<Journal>,
}

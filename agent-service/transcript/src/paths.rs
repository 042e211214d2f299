//! Validated names and the on-disk layout:
//! `<stateDir>/agents/<agentId>/sessions/{<sessionId>.jsonl, sessions.json}`.
//!
//! Every name is validated when it is constructed, so a path built from these types can never
//! leave the sessions directory.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

use crate::clock::file_stamp;
use crate::error::{Error, Result};

/// File name of the session index inside a sessions directory.
pub const INDEX_FILE: &str = "sessions.json";
/// Extension of live transcripts.
pub const TRANSCRIPT_EXT: &str = "jsonl";

const AGENT_ID_MAX: usize = 128;
const SESSION_KEY_MAX: usize = 1024;

fn validate(field: &'static str, value: &str, max: usize) -> Result<()> {
    let reason = if value.is_empty() {
        Some("must not be empty")
    } else if value.len() > max {
        Some("is too long")
    } else if value.contains(['/', '\\']) {
        Some("must not contain a path separator")
    } else if value.contains("..") {
        Some("must not contain `..`")
    } else if value == "." {
        Some("must not be `.`")
    } else if value.chars().any(char::is_control) {
        Some("must not contain control characters")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::InvalidName {
            field,
            value: value.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A configured agent's id, safe to use as one path component.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentId(String);

impl AgentId {
    /// Validates `value`: non-empty, at most 128 bytes, no `/`, `\`, `..` or control characters.
    pub fn new(value: impl Into<String>) -> Result<Self> {
        let value = value.into();
        validate("agent id", &value, AGENT_ID_MAX)?;
        Ok(Self(value))
    }

    /// The id as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A session key such as `agent:main:main` or `agent:main:telegram:group:42`.
///
/// Keys are index keys, not path components, but they are validated the same way so that no
/// caller is tempted to build a path from an unchecked one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionKey(String);

impl SessionKey {
    /// Validates `value`: non-empty, at most 1024 bytes, no `/`, `\`, `..` or control characters.
    pub fn new(value: impl Into<String>) -> Result<Self> {
        let value = value.into();
        validate("session key", &value, SESSION_KEY_MAX)?;
        Ok(Self(value))
    }

    /// The key as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for SessionKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SessionKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::new(String::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// A session id: a UUID, written in its lowercase hyphenated form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(Uuid);

impl SessionId {
    /// A fresh random (version 4) id, as the runtime chooses for `/new` and `/reset`.
    pub fn new_v4() -> Self {
        Self(Uuid::new_v4())
    }

    /// Parses the canonical lowercase hyphenated form only, so that the id and its file name
    /// have exactly one spelling.
    pub fn parse(value: &str) -> Result<Self> {
        let invalid = |reason| Error::InvalidName {
            field: "session id",
            value: value.to_owned(),
            reason,
        };
        let uuid = Uuid::try_parse(value).map_err(|_| invalid("is not a UUID"))?;
        if uuid.hyphenated().to_string() != value {
            return Err(invalid("is not a lowercase hyphenated UUID"));
        }
        Ok(Self(uuid))
    }

    /// The underlying UUID.
    pub fn uuid(&self) -> Uuid {
        self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl FromStr for SessionId {
    type Err = Error;

    fn from_str(value: &str) -> Result<Self> {
        Self::parse(value)
    }
}

impl Serialize for SessionId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = String::deserialize(deserializer)?;
        Self::parse(&value).map_err(serde::de::Error::custom)
    }
}

/// Why a transcript was moved aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveKind {
    /// `/reset` or `/new`: `<sessionId>.jsonl.reset.<timestamp>`.
    Reset,
    /// The session key was deleted: `<sessionId>.jsonl.deleted.<timestamp>`.
    Deleted,
}

impl ArchiveKind {
    fn suffix(self) -> &'static str {
        match self {
            Self::Reset => "reset",
            Self::Deleted => "deleted",
        }
    }
}

/// One agent's sessions directory and the names of the files in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionsDir {
    dir: PathBuf,
}

impl SessionsDir {
    /// `<state_dir>/agents/<agent>/sessions`.
    pub fn new(state_dir: impl AsRef<Path>, agent: &AgentId) -> Self {
        Self {
            dir: state_dir
                .as_ref()
                .join("agents")
                .join(agent.as_str())
                .join("sessions"),
        }
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// `<sessionId>.jsonl`.
    pub fn transcript(&self, id: &SessionId) -> PathBuf {
        self.dir.join(format!("{id}.{TRANSCRIPT_EXT}"))
    }

    /// `sessions.json`.
    pub fn index(&self) -> PathBuf {
        self.dir.join(INDEX_FILE)
    }

    /// `<sessionId>.jsonl.<reset|deleted>.<timestamp>`, the timestamp with `:` replaced by `-`
    /// so the name is portable.
    pub fn archive(&self, id: &SessionId, kind: ArchiveKind, at: jiff::Timestamp) -> PathBuf {
        self.dir.join(format!(
            "{id}.{TRANSCRIPT_EXT}.{}.{}",
            kind.suffix(),
            file_stamp(at)
        ))
    }
}

/// `<transcript>.quarantine`: where torn tails cut off by [`crate::TranscriptWriter::open`] go.
pub fn quarantine_path(transcript: &Path) -> PathBuf {
    with_suffix(transcript, ".quarantine")
}

/// `path` with `suffix` appended to its file name.
pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(suffix);
    PathBuf::from(name)
}

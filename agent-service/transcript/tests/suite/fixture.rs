//! Shared test inputs: a fixed clock, sample bodies, a fresh transcript.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jiff::Timestamp;
use openclaw_transcript::{
    ContentBlock, EntryBody, FixedClock, Message, SessionHeader, SessionId, SessionKey,
    TranscriptWriter, UserContent, UserMessage, WriterOptions,
};
use tempfile::TempDir;

pub const NOW: &str = "2026-07-05T12:00:00Z";

pub fn now() -> Timestamp {
    NOW.parse().unwrap()
}

pub fn clock() -> Arc<FixedClock> {
    Arc::new(FixedClock(now()))
}

pub fn key(value: &str) -> SessionKey {
    SessionKey::new(value).unwrap()
}

pub fn user(text: &str) -> EntryBody {
    EntryBody::Message {
        message: Message::User(UserMessage {
            content: UserContent::Blocks(vec![ContentBlock::text(text)]),
            timestamp: 1_751_716_800_000,
        }),
    }
}

/// A new transcript with a header, in its own temp dir.
pub struct Fresh {
    pub dir: TempDir,
    pub path: PathBuf,
    pub id: SessionId,
    pub writer: TranscriptWriter,
}

pub fn fresh() -> Fresh {
    let dir = tempfile::tempdir().unwrap();
    let id = SessionId::new_v4();
    let path = dir.path().join(format!("{id}.jsonl"));
    let header = SessionHeader::new(id, key("agent:main:main"), "/work/space", now());
    let writer =
        TranscriptWriter::create(&path, &header, clock(), WriterOptions::default()).unwrap();
    Fresh {
        dir,
        path,
        id,
        writer,
    }
}

pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Appends raw bytes to a file (to plant damage).
pub fn append_raw(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

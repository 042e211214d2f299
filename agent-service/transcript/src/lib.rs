//! The on-disk session format of the agent runtime: crash-safe JSONL transcripts at
//! `<stateDir>/agents/<agentId>/sessions/<sessionId>.jsonl` and the session index
//! `sessions.json` beside them.
//!
//! What it is for:
//! - the line format (pi's version 3: a session header, then typed entries forming a tree);
//! - one writer per transcript, excluded across processes by an OS lock, appending each entry
//!   with a single `write`, fsync at turn boundaries, torn tails repaired into a quarantine
//!   file before the first append ([`TranscriptWriter`]);
//! - streaming reads in bounded memory that report, never fail on, damaged lines
//!   ([`TranscriptReader`], [`for_each_entry`]), and reading the leaf or last entries from the
//!   end of the file ([`read_tail`]);
//! - the index, replaced atomically, kept parsed between reads, with reset, delete and rebuild
//!   ([`SessionStore`]).
//!
//! What it is not for: models, prompts, context assembly, tool-call pairing or gRPC. It is
//! synchronous `std::fs` code with short calls; the runtime keeps each session's writer
//! behind one lock and calls it between awaits.

mod clock;
mod durable;
mod entry;
mod error;
mod index;
mod index_cache;
mod index_log;
mod message;
mod paths;
mod reader;
mod repair;
mod store;
mod tail;
mod version;
mod writer;

pub use clock::{Clock, FixedClock, SystemClock, rfc3339, unix_millis};
pub use durable::write_atomic;
pub use entry::{CURRENT_VERSION, Entry, EntryBody, EntryId, SessionHeader};
pub use error::{Error, Result};
pub use index::{InvalidIndexEntry, SessionEntry, SessionIndex};
pub use message::{
    AssistantMessage, ContentBlock, ImageContent, Message, StopReason, TextContent,
    ThinkingContent, ToolCall, ToolResultMessage, Usage, UserContent, UserMessage,
};
pub use paths::{
    AgentId, ArchiveKind, INDEX_FILE, SessionId, SessionKey, SessionsDir, TRANSCRIPT_EXT,
    quarantine_path,
};
pub use reader::{
    BadLine, BadLineReason, DEFAULT_MAX_LINE_LEN, DEFAULT_MAX_REPORTED_BAD_LINES, LoadReport,
    ReadOptions, TornTail, TranscriptReader, for_each_entry,
};
pub use repair::TailRepair;
pub use store::{Deleted, RebuildReport, Reset, SessionStore};
pub use tail::{Tail, read_leaf, read_tail};
pub use writer::{DEFAULT_LOCK_WAIT, OpenedWriter, TranscriptWriter, WriterOptions};

//! Generates the large transcript the replay benchmarks read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use openclaw_transcript::{
    AssistantMessage, ContentBlock, EntryBody, Message, SessionHeader, SessionId, SessionKey,
    StopReason, SystemClock, TranscriptWriter, Usage, UserContent, UserMessage, WriterOptions,
};

/// Writes a transcript of about `total` bytes of ~1 KiB turns with one `big`-byte line in the
/// middle, through the real writer. Returns its path and the number of entries.
pub fn big_transcript(
    dir: &Path,
    total: u64,
    big: usize,
) -> Result<(PathBuf, u64), openclaw_transcript::Error> {
    let id = SessionId::new_v4();
    let path = dir.join(format!("{id}.jsonl"));
    let key = SessionKey::new("agent:main:main")?;
    let header = SessionHeader::new(id, key, "/work/space", jiff::Timestamp::now());
    let mut writer = TranscriptWriter::create(
        &path,
        &header,
        Arc::new(SystemClock),
        WriterOptions::default(),
    )?;
    let filler = "lorem ipsum dolor sit amet ".repeat(36);
    let mut entries = 0u64;
    let mut big_written = false;
    while writer.file_len() < total {
        let text = if !big_written && writer.file_len() >= total / 2 {
            big_written = true;
            "B".repeat(big)
        } else {
            filler.clone()
        };
        let body = if entries.is_multiple_of(2) {
            EntryBody::Message {
                message: Message::User(UserMessage {
                    content: UserContent::Text(text),
                    timestamp: 1_751_716_800_000,
                }),
            }
        } else {
            EntryBody::Message {
                message: Message::Assistant(AssistantMessage {
                    content: vec![ContentBlock::text(text)],
                    provider: "anthropic".into(),
                    model: "claude-opus-4".into(),
                    api: None,
                    usage: Some(Usage::default()),
                    stop_reason: StopReason::Stop,
                    error_message: None,
                    timestamp: 1_751_716_800_000,
                }),
            }
        };
        writer.append(body)?;
        entries += 1;
    }
    writer.sync()?;
    Ok((path, entries))
}

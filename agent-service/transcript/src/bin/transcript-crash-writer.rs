//! Test fixture for the crash loop (tests/suite/crash.rs), not a tool: opens an existing
//! transcript, appends entries as fast as it can and prints `ack <id>` after each write returns,
//! fsyncing every `sync_every` entries, until it is killed. Every `big_every`-th entry carries
//! 64 KiB of text so that a kill can land inside a large write.
//!
//! Usage: `transcript-crash-writer <transcript> <sync_every> <big_every>`

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use openclaw_transcript::{
    ContentBlock, EntryBody, Message, SystemClock, TranscriptWriter, UserContent, UserMessage,
    WriterOptions,
};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("transcript-crash-writer: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: transcript-crash-writer <transcript> <sync_every> <big_every>";
    let path = PathBuf::from(args.next().ok_or(usage)?);
    let sync_every: u64 = args.next().ok_or(usage)?.parse()?;
    let big_every: u64 = args.next().ok_or(usage)?.parse()?;
    let opened = TranscriptWriter::open(&path, Arc::new(SystemClock), WriterOptions::default())?;
    let mut writer = opened.writer;
    let mut out = std::io::stdout().lock();
    let repaired = opened.repair.map_or(0, |repair| repair.len);
    writeln!(out, "open {repaired}")?;
    let big = "x".repeat(64 * 1024);
    for n in 1..=1_000_000u64 {
        let text = if big_every > 0 && n % big_every == 0 {
            big.clone()
        } else {
            format!("entry {n}")
        };
        let body = EntryBody::Message {
            message: Message::User(UserMessage {
                content: UserContent::Blocks(vec![ContentBlock::text(text)]),
                timestamp: 0,
            }),
        };
        let entry = writer.append(body)?;
        if sync_every > 0 && n % sync_every == 0 {
            writer.sync()?;
        }
        writeln!(out, "ack {}", entry.id)?;
    }
    Ok(())
}

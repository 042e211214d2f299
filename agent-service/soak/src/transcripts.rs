//! Reading what the sessions hold, two ways: the state directory's files
//! directly (the transcript crate's reader, the session index, quarantine
//! files), and `GetTranscript` from a running agent-service. Both reduce a
//! transcript to the same [`TranscriptScan`]: how often each soak id occurs
//! in user messages, whether tool calls and results pair up, and what the
//! reader had to drop.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

use openclaw_proto::agent::v1::{self as pb, transcript_item::Item};
use openclaw_transcript::{
    AgentId, ContentBlock, Entry, EntryBody, Message, ReadOptions, SessionIndex, SessionsDir,
    TRANSCRIPT_EXT, TranscriptReader, UserContent,
};

use crate::{
    client::{AgentClient, session_ref},
    error::SoakError,
    ledger::ids_in,
};

/// The only agent the soak's config defines.
pub(crate) const AGENT: &str = "main";

/// One transcript, reduced to what the soak checks.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct TranscriptScan {
    /// Soak id → occurrences in user messages.
    pub ids: BTreeMap<String, u32>,
    /// Tool-call/result pairing.
    pub pairs: Pairs,
    /// A torn final line the reader dropped, described.
    pub torn_tail: Option<String>,
    /// Lines the reader skipped, described.
    pub bad_lines: Vec<String>,
}

/// Tool calls and their results within one transcript.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Pairs {
    /// Tool calls made.
    pub calls: u64,
    /// Calls with exactly one result after them.
    pub complete: u64,
    /// Calls without a result.
    pub open: Vec<OpenCall>,
    /// Results whose call is not before them, by call id.
    pub orphan_results: Vec<String>,
    /// Second results for one call, by call id.
    pub duplicate_results: Vec<String>,
}

/// A tool call that never got its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OpenCall {
    /// Call id.
    pub call_id: String,
    /// Timestamp of the assistant entry that made it.
    pub timestamp: String,
    /// True when a later assistant message exists: a model call was made
    /// without the pairing repaired first.
    pub model_called_after: bool,
}

/// Builds a [`TranscriptScan`] from entries in file order.
#[derive(Default)]
struct Scanner {
    scan: TranscriptScan,
    /// Open call id → (timestamp, number of the assistant message).
    open: BTreeMap<String, (String, u64)>,
    answered: BTreeSet<String>,
    assistants: u64,
}

impl Scanner {
    fn feed(&mut self, entry: &Entry) {
        let EntryBody::Message { message } = &entry.body else {
            return;
        };
        match message {
            Message::User(user) => match &user.content {
                UserContent::Text(text) => self.user_text(text),
                UserContent::Blocks(blocks) => {
                    for block in blocks {
                        if let ContentBlock::Text(text) = block {
                            self.user_text(&text.text);
                        }
                    }
                }
            },
            Message::Assistant(reply) => {
                self.assistants += 1;
                for block in &reply.content {
                    if let ContentBlock::ToolCall(call) = block {
                        self.scan.pairs.calls += 1;
                        self.open
                            .insert(call.id.clone(), (entry.timestamp.clone(), self.assistants));
                    }
                }
            }
            Message::ToolResult(result) => {
                let id = &result.tool_call_id;
                if self.open.remove(id).is_some() {
                    self.scan.pairs.complete += 1;
                    self.answered.insert(id.clone());
                } else if self.answered.contains(id) {
                    self.scan.pairs.duplicate_results.push(id.clone());
                } else {
                    self.scan.pairs.orphan_results.push(id.clone());
                }
            }
            Message::Other(_) => {}
        }
    }

    fn user_text(&mut self, text: &str) {
        for id in ids_in(text) {
            *self.scan.ids.entry(id.to_owned()).or_default() += 1;
        }
    }

    fn finish(mut self) -> TranscriptScan {
        for (call_id, (timestamp, made_by)) in self.open {
            self.scan.pairs.open.push(OpenCall {
                call_id,
                timestamp,
                model_called_after: self.assistants > made_by,
            });
        }
        self.scan
    }
}

/// The agent's sessions directory, read directly.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct DirScan {
    /// Session key → session id, from `sessions.json`.
    pub index: BTreeMap<String, String>,
    /// Session id → its transcript.
    pub transcripts: BTreeMap<String, TranscriptScan>,
    /// Quarantine files (torn tails cut off before an append), described,
    /// with the soak ids in the quarantined bytes.
    pub quarantined: Vec<(PathBuf, Vec<String>)>,
}

impl DirScan {
    /// Where `id` occurs: (session id, occurrences).
    pub(crate) fn occurrences(&self, id: &str) -> Vec<(&str, u32)> {
        self.transcripts
            .iter()
            .filter_map(|(session, scan)| scan.ids.get(id).map(|n| (session.as_str(), *n)))
            .collect()
    }
}

/// Reads every transcript of the agent's sessions directory. Only call it
/// while agent-service is stopped.
pub(crate) fn scan_dir(state_dir: &Path) -> Result<DirScan, SoakError> {
    let agent = AgentId::new(AGENT).map_err(|source| SoakError::Transcript {
        path: state_dir.to_path_buf(),
        source,
    })?;
    let dir = SessionsDir::new(state_dir, &agent);
    let index = SessionIndex::load(&dir.index()).map_err(|source| SoakError::Transcript {
        path: dir.index(),
        source,
    })?;
    let mut out = DirScan {
        index: index
            .iter()
            .map(|(key, entry)| (key.as_str().to_owned(), entry.session_id.to_string()))
            .collect(),
        ..DirScan::default()
    };
    let listing = match std::fs::read_dir(dir.path()) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(SoakError::io(format!("list {}", dir.path().display()))(e)),
    };
    let mut paths: Vec<PathBuf> = listing.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    let transcript_suffix = format!(".{TRANSCRIPT_EXT}");
    for path in paths {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(session) = name.strip_suffix(&transcript_suffix) {
            out.transcripts
                .insert(session.to_owned(), scan_file(&path)?);
        } else if name.ends_with(".quarantine") {
            let bytes =
                std::fs::read(&path).map_err(SoakError::io(format!("read {}", path.display())))?;
            let text = String::from_utf8_lossy(&bytes);
            let ids = ids_in(&text).into_iter().map(str::to_owned).collect();
            out.quarantined.push((path, ids));
        }
    }
    Ok(out)
}

fn scan_file(path: &Path) -> Result<TranscriptScan, SoakError> {
    let fail = |source| SoakError::Transcript {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = TranscriptReader::open(path, ReadOptions::default()).map_err(fail)?;
    let mut scanner = Scanner::default();
    for entry in reader.by_ref() {
        scanner.feed(&entry.map_err(fail)?);
    }
    let report = reader.finish();
    let mut scan = scanner.finish();
    if let Some(torn) = report.torn_tail {
        scan.torn_tail = Some(format!(
            "{}: torn final line of {} bytes at offset {}",
            path.display(),
            torn.len,
            torn.offset
        ));
    }
    scan.bad_lines = report
        .bad_lines
        .iter()
        .map(|bad| {
            format!(
                "{}: line {} (offset {}): {:?}",
                path.display(),
                bad.line_no,
                bad.offset,
                bad.reason
            )
        })
        .collect();
    Ok(scan)
}

/// A session's transcript as `GetTranscript` streams it.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct RpcScan {
    /// The session id `GetSession` names for the key.
    pub session_id: String,
    /// The transcript.
    pub scan: TranscriptScan,
}

/// `GetSession` and `GetTranscript` for one key.
pub(crate) async fn scan_rpc(agent: &mut AgentClient, key: &str) -> Result<RpcScan, SoakError> {
    let what = |call: &str| format!("{call} {key}");
    let session = agent
        .get_session(pb::GetSessionRequest {
            session: session_ref(key),
        })
        .await
        .map_err(SoakError::rpc(what("GetSession")))?
        .into_inner();
    let mut stream = agent
        .get_transcript(pb::GetTranscriptRequest {
            session: session_ref(key),
        })
        .await
        .map_err(SoakError::rpc(what("GetTranscript")))?
        .into_inner();
    let mut scanner = Scanner::default();
    let mut report = None;
    // An entry over 1 MiB arrives in parts (`json_continues`); its line is
    // their `json` joined.
    let mut partial: Option<pb::TranscriptEntry> = None;
    while let Some(item) = stream
        .message()
        .await
        .map_err(SoakError::rpc(what("GetTranscript stream")))?
    {
        let item = match (item.item, partial.take()) {
            (Some(Item::Entry(part)), Some(mut head)) if part.seq == head.seq => {
                head.json.push_str(&part.json);
                head.json_continues = part.json_continues;
                Some(Item::Entry(head))
            }
            (_, Some(cut)) => {
                return Err(SoakError::Invalid(format!(
                    "GetTranscript {key}: entry {} ended before its last part",
                    cut.seq
                )));
            }
            (item, None) => item,
        };
        match item {
            Some(Item::Entry(entry)) if entry.json_continues => partial = Some(entry),
            Some(Item::Entry(entry)) if entry.r#type != "session" => {
                let parsed: Entry = serde_json::from_str(&entry.json).map_err(|e| {
                    SoakError::Invalid(format!(
                        "GetTranscript {key}: entry {} is not a transcript entry: {e}",
                        entry.seq
                    ))
                })?;
                scanner.feed(&parsed);
            }
            Some(Item::Entry(_)) | None => {}
            Some(Item::Report(r)) => report = Some(r),
        }
    }
    if let Some(cut) = partial {
        return Err(SoakError::Invalid(format!(
            "GetTranscript {key}: entry {} ended before its last part",
            cut.seq
        )));
    }
    let mut scan = scanner.finish();
    match report {
        Some(report) => {
            if report.torn_tail_dropped {
                scan.torn_tail = Some(format!("GetTranscript {key}: torn final line dropped"));
            }
            scan.bad_lines = report
                .bad_lines
                .iter()
                .map(|b| format!("GetTranscript {key}: line {}: {}", b.line, b.reason))
                .collect();
        }
        None => scan.bad_lines.push(format!(
            "GetTranscript {key}: the stream ended without its load report"
        )),
    }
    Ok(RpcScan {
        session_id: session.session_id,
        scan,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u64, json: serde_json::Value) -> Entry {
        let mut line = json;
        line["id"] = format!("e{n}").into();
        line["parentId"] = serde_json::Value::Null;
        line["timestamp"] = format!("2026-01-01T00:00:{n:02}Z").into();
        serde_json::from_value(line).expect("an entry")
    }

    fn user(n: u64, text: &str) -> Entry {
        entry(
            n,
            serde_json::json!({"type": "message", "message": {"role": "user", "content": text, "timestamp": 0}}),
        )
    }

    fn assistant(n: u64, calls: &[&str]) -> Entry {
        let content: Vec<_> = calls
            .iter()
            .map(|id| serde_json::json!({"type": "toolCall", "id": id, "name": "read", "arguments": {}}))
            .collect();
        entry(
            n,
            serde_json::json!({"type": "message", "message": {"role": "assistant", "content": content,
                "provider": "fake", "model": "m", "stopReason": "toolUse", "timestamp": 0}}),
        )
    }

    fn result(n: u64, call: &str) -> Entry {
        entry(
            n,
            serde_json::json!({"type": "message", "message": {"role": "toolResult", "toolCallId": call,
                "toolName": "read", "content": [], "isError": false, "timestamp": 0}}),
        )
    }

    #[test]
    fn ids_are_counted_and_tool_pairs_judged() {
        let mut scanner = Scanner::default();
        for e in [
            user(1, "[soak:a] hi"),
            assistant(2, &["k1", "k2"]),
            result(3, "k1"),
            result(4, "k1"),
            result(5, "zz"),
            user(6, "[2 earlier messages:]\n- [soak:a] hi\n- [soak:b] yo"),
            assistant(7, &["k3"]),
            assistant(8, &["k4"]),
        ] {
            scanner.feed(&e);
        }
        let scan = scanner.finish();
        assert_eq!(
            scan.ids,
            BTreeMap::from([("a".to_owned(), 2), ("b".to_owned(), 1)])
        );
        assert_eq!(scan.pairs.calls, 4);
        assert_eq!(scan.pairs.complete, 1);
        assert_eq!(scan.pairs.duplicate_results, ["k1"]);
        assert_eq!(scan.pairs.orphan_results, ["zz"]);
        let open: Vec<(&str, bool)> = scan
            .pairs
            .open
            .iter()
            .map(|o| (o.call_id.as_str(), o.model_called_after))
            .collect();
        assert_eq!(open, [("k2", true), ("k3", true), ("k4", false)]);
    }
}

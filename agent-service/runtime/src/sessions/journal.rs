//! The accepted-message journal of a session (`<sessionId>.queue` beside the
//! transcript): what keeps a message that was acknowledged but not yet
//! written to the transcript from being lost when the process dies.
//!
//! A message is journaled (appended and fsynced) before its sender is told
//! it was accepted, and marked done once it is in the transcript. On the next
//! start, messages accepted but not done are written to the transcript as
//! unanswered user messages, the way a graceful shutdown saves its queue.
//!
//! A crash between the transcript append and the done mark would leave a
//! message both in the transcript and pending; recovery therefore skips a
//! pending message whose text already appears as a user message written at
//! or after its acceptance (each transcript message matches one pending
//! message at most).
//!
//! Lines are JSON: `{"accepted": {seq, text, at}}` or `{"done": [seq, ...]}`.
//! A torn last line (the crash happened mid-write, before the fsync that
//! acknowledges) is ignored, and ended with a newline before anything is appended
//! after it, so the next accepted line stays whole.
//!
//! A done mark applies to the acceptances above it, so a file holding the lines of an
//! earlier process (whose arrival numbers this one hands out again) reads right. The
//! file is not emptied after every run: emptying frees its block, and a file system
//! that discards freed blocks (`-o discard`, usual on cloud disks) waits on the disk for
//! that, once a run. It is emptied when nothing is pending and it has grown past
//! [`EMPTY_PAST`], and when its session is let go of or closed.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs::{File, OpenOptions},
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    sync::{Mutex, PoisonError},
};

use serde::{Deserialize, Serialize};

use crate::origin::Origin;

/// File extension of journals.
pub const JOURNAL_EXT: &str = "queue";

/// File extension of a journal's quarantine: acknowledged messages recovery could not write
/// into the transcript (`<sessionId>.queue.quarantined`, beside the journal).
pub const QUARANTINE_EXT: &str = "queue.quarantined";

/// One accepted message as journaled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accepted {
    /// Arrival number in the process that accepted it.
    pub seq: u64,
    /// The text.
    pub text: String,
    /// Acceptance time, ms since the epoch.
    pub at: i64,
    /// Who sent it (absent in the file for a user's message).
    #[serde(default, skip_serializing_if = "Origin::is_user")]
    pub origin: Origin,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Line {
    Accepted(Accepted),
    Done(Vec<u64>),
}

/// Past this size the file is emptied the next time nothing is pending (a few hundred runs).
pub const EMPTY_PAST: u64 = 64 << 10;

/// The journal of one session.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    file: Option<File>,
    /// Bytes in the file, as of its opening and what was appended since.
    len: u64,
    /// Accepted and not yet done, by seq.
    pending: BTreeSet<u64>,
}

impl State {
    /// The file, opened for appending if it is not yet (see [`open_append`]).
    fn open(&mut self, path: &Path) -> std::io::Result<&mut File> {
        if self.file.is_none() {
            let (file, len) = open_append(path)?;
            self.file = Some(file);
            self.len = len;
        }
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("journal file not open"))
    }

    /// Appends `bytes` (and fsyncs them when `sync`). A write cut short (a full disk) may
    /// leave part of them: the file is then opened again next time, which ends that line
    /// first.
    fn append(&mut self, path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
        let file = self.open(path)?;
        let written = file.write_all(bytes).and_then(|()| {
            if sync {
                let began = std::time::Instant::now();
                file.sync_data()?;
                crate::metrics::fsynced("journal", began.elapsed());
            }
            Ok(())
        });
        match written {
            Ok(()) => {
                self.len += bytes.len() as u64;
                Ok(())
            }
            Err(error) => {
                self.file = None;
                Err(error)
            }
        }
    }

    /// Empties the file.
    fn empty(&mut self, path: &Path) -> std::io::Result<()> {
        self.open(path)?.set_len(0)?;
        self.len = 0;
        Ok(())
    }
}

impl Journal {
    /// The journal beside `transcript` (not opened yet).
    pub fn for_transcript(transcript: &Path) -> Self {
        Self {
            path: transcript.with_extension(JOURNAL_EXT),
            state: Mutex::new(State::default()),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records an accepted message durably (blocking: append + fsync).
    pub fn accept(&self, message: &Accepted) -> std::io::Result<()> {
        let mut state = self.state();
        let line = serde_json::to_string(&Line::Accepted(message.clone()))?;
        state.append(&self.path, format!("{line}\n").as_bytes(), true)?;
        state.pending.insert(message.seq);
        Ok(())
    }

    /// Marks messages as written to the transcript (blocking, no fsync: a lost mark only makes
    /// recovery look for the message in the transcript). When nothing is pending any more and
    /// the file has grown past [`EMPTY_PAST`], the file is emptied instead.
    pub fn done(&self, seqs: &[u64]) -> std::io::Result<()> {
        let mut state = self.state();
        if seqs.iter().all(|s| !state.pending.contains(s)) {
            return Ok(());
        }
        for seq in seqs {
            state.pending.remove(seq);
        }
        if state.pending.is_empty() && state.len >= EMPTY_PAST {
            return state.empty(&self.path);
        }
        let line = serde_json::to_string(&Line::Done(seqs.to_vec()))?;
        state.append(&self.path, format!("{line}\n").as_bytes(), false)
    }

    /// Empties the file if this process opened it and nothing is pending (its session is let
    /// go of or closed): what it holds then is done marks nobody needs, and an empty file is
    /// one the next start does not read.
    pub fn empty_if_settled(&self) -> std::io::Result<()> {
        let mut state = self.state();
        if state.file.is_none() || !state.pending.is_empty() || state.len == 0 {
            return Ok(());
        }
        state.empty(&self.path)
    }

    /// Messages a previous process accepted but never wrote (blocking).
    /// Reading it does not change it; call [`Journal::clear`] once they are
    /// saved.
    pub fn leftovers(&self) -> std::io::Result<Vec<Accepted>> {
        let file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut accepted: BTreeMap<u64, Accepted> = BTreeMap::new();
        for line in BufReader::new(file).lines() {
            let Ok(line) = line else { break };
            // A torn or foreign line is skipped: only fsynced lines acknowledge.
            match serde_json::from_str::<Line>(&line) {
                Ok(Line::Accepted(a)) => {
                    accepted.insert(a.seq, a);
                }
                // Only what was accepted above it: a later process numbers from 1 again.
                Ok(Line::Done(seqs)) => {
                    for seq in seqs {
                        accepted.remove(&seq);
                    }
                }
                Err(_) => {}
            }
        }
        Ok(accepted.into_values().collect())
    }

    /// Where [`Journal::quarantine`] writes.
    pub fn quarantine_path(&self) -> PathBuf {
        self.path.with_extension(QUARANTINE_EXT)
    }

    /// Sets aside acknowledged messages that can never be written to the transcript, each with
    /// the reason, so that the journal can be emptied without losing them (blocking: append +
    /// fsync). An operator reads them back from the returned file; nothing in the service does.
    pub fn quarantine(&self, entries: &[(Accepted, String)]) -> std::io::Result<PathBuf> {
        let path = self.quarantine_path();
        let mut out = String::new();
        for (accepted, reason) in entries {
            out.push_str(&serde_json::to_string(&Quarantined { accepted, reason })?);
            out.push('\n');
        }
        let mut file = private_append(&mut OpenOptions::new()).open(&path)?;
        file.write_all(out.as_bytes())?;
        file.sync_all()?;
        // The file may be new: its name must survive a crash too.
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        Ok(path)
    }

    /// Empties the journal (after its leftovers were saved).
    pub fn clear(&self) -> std::io::Result<()> {
        let mut state = self.state();
        state.pending.clear();
        match std::fs::metadata(&self.path) {
            Ok(_) => {
                state.empty(&self.path)?;
                state.open(&self.path)?.sync_data()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// One line of a quarantine file.
#[derive(Serialize)]
struct Quarantined<'a> {
    accepted: &'a Accepted,
    reason: &'a str,
}

/// `options` set to create (0600) and append.
fn private_append(options: &mut OpenOptions) -> &mut OpenOptions {
    options.create(true).append(true);
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
    options
}

/// Opens the journal for appending, returning it and its length. A last line a crash tore
/// (no newline at the end) is ended first: a line appended straight after it would join it,
/// and the accepted message it holds would read as torn too, lost to recovery once
/// acknowledged.
///
/// The journal holds the texts of messages, so it is the owner's alone (0600) like the
/// transcript; a journal an older version created readable by others is made private here.
fn open_append(path: &Path) -> std::io::Result<(File, u64)> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut file = private_append(OpenOptions::new().read(true)).open(path)?;
    let meta = file.metadata()?;
    if meta.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    let mut len = meta.len();
    if !ends_a_line(&file, len)? {
        file.write_all(b"\n")?;
        len += 1;
    }
    Ok((file, len))
}

/// True when `file` (of `len` bytes) is empty or its last byte is a newline.
fn ends_a_line(file: &File, len: u64) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt as _;
    let Some(last) = len.checked_sub(1) else {
        return Ok(true);
    };
    let mut byte = [0u8];
    file.read_exact_at(&mut byte, last)?;
    Ok(byte[0] == b'\n')
}

/// Which leftovers are not in the transcript yet: `users` are the
/// transcript's user messages as (text, timestamp ms), in order. Each user
/// message accounts for at most one leftover.
pub fn still_missing(leftovers: Vec<Accepted>, users: &[(String, i64)]) -> Vec<Accepted> {
    let mut used = vec![false; users.len()];
    leftovers
        .into_iter()
        .filter(|a| {
            let found = users
                .iter()
                .enumerate()
                .find(|(i, (text, at))| !used[*i] && *text == a.text && *at >= a.at)
                .map(|(i, _)| i);
            match found {
                Some(i) => {
                    used[i] = true;
                    false
                }
                None => true,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(seq: u64, text: &str, at: i64) -> Accepted {
        Accepted {
            seq,
            text: text.into(),
            at,
            origin: Origin::User,
        }
    }

    #[test]
    fn a_system_events_origin_survives_the_journal() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let journal = Journal::for_transcript(&dir.path().join("s.jsonl"));
        let event = Accepted {
            origin: Origin::ExecExit {
                process_id: "proc-1".into(),
            },
            ..msg(1, "[Exec Finished] done", 10)
        };
        journal.accept(&event).unwrap_or_else(|e| panic!("{e}"));
        journal
            .accept(&msg(2, "a user", 11))
            .unwrap_or_else(|e| panic!("{e}"));
        let again = Journal::for_transcript(&dir.path().join("s.jsonl"));
        let left = again.leftovers().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(left, vec![event, msg(2, "a user", 11)]);
        // A user's line carries no origin, so files written before origins existed read the same.
        let text = std::fs::read_to_string(again.path()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(text.matches("origin").count(), 1, "{text}");
    }

    #[test]
    fn pending_messages_survive_and_done_ones_do_not() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let transcript = dir.path().join("s.jsonl");
        let journal = Journal::for_transcript(&transcript);
        for (seq, text) in [(1, "a"), (2, "b"), (3, "c")] {
            journal
                .accept(&msg(seq, text, 10))
                .unwrap_or_else(|e| panic!("{e}"));
        }
        journal.done(&[1, 3]).unwrap_or_else(|e| panic!("{e}"));
        // A crash mid-line leaves a torn tail: ignored.
        std::fs::OpenOptions::new()
            .append(true)
            .open(journal.path())
            .and_then(|mut f| f.write_all(b"{\"accepted\":{\"seq\":4,\"te"))
            .unwrap_or_else(|e| panic!("{e}"));
        let again = Journal::for_transcript(&transcript);
        let left = again.leftovers().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(left, [msg(2, "b", 10)]);
        again.clear().unwrap_or_else(|e| panic!("{e}"));
        assert!(
            again
                .leftovers()
                .unwrap_or_else(|e| panic!("{e}"))
                .is_empty()
        );
    }

    /// A crash mid-line, then a process that finds nothing to recover (the torn line was never
    /// acknowledged) and accepts a message: that message must not join the torn line.
    #[test]
    fn a_message_accepted_after_a_torn_line_is_recovered() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let transcript = dir.path().join("s.jsonl");
        let first = Journal::for_transcript(&transcript);
        settle(&first, 1, "a", 10);
        std::fs::OpenOptions::new()
            .append(true)
            .open(first.path())
            .and_then(|mut f| f.write_all(b"{\"accepted\":{\"seq\":2,\"te"))
            .unwrap_or_else(|e| panic!("{e}"));
        drop(first);
        let second = Journal::for_transcript(&transcript);
        // Nothing to recover, so recovery leaves the file as it is.
        assert!(
            second
                .leftovers()
                .unwrap_or_else(|e| panic!("{e}"))
                .is_empty()
        );
        accept(&second, 7, "after the tear", 20);
        assert_eq!(leftovers_at(&transcript), [msg(7, "after the tear", 20)]);
    }

    /// `journal` accepts message `seq` and marks it done, as a run that ends does.
    fn accept(journal: &Journal, seq: u64, text: &str, at: i64) {
        journal
            .accept(&msg(seq, text, at))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    fn settle(journal: &Journal, seq: u64, text: &str, at: i64) {
        accept(journal, seq, text, at);
        journal.done(&[seq]).unwrap_or_else(|e| panic!("{e}"));
    }

    /// What a journal opened afresh for `transcript` (a later process) finds left over.
    fn leftovers_at(transcript: &Path) -> Vec<Accepted> {
        Journal::for_transcript(transcript)
            .leftovers()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn len(path: &Path) -> u64 {
        std::fs::metadata(path).map(|m| m.len()).unwrap_or(u64::MAX)
    }

    /// Emptying the file after every run would free its block each time (a wait on the disk
    /// where freed blocks are discarded): done marks are appended until the file has grown
    /// past the limit, or its session closes.
    #[test]
    fn settled_lines_stay_until_the_file_grows_or_its_session_closes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let journal = Journal::for_transcript(&dir.path().join("s.jsonl"));
        settle(&journal, 1, "a", 1);
        assert!(len(journal.path()) > 0);
        assert!(
            journal
                .leftovers()
                .unwrap_or_else(|e| panic!("{e}"))
                .is_empty()
        );
        journal.empty_if_settled().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(len(journal.path()), 0, "emptied when its session closes");

        // While a message is pending, the file is never emptied, however large.
        let text = "x".repeat(1000);
        journal
            .accept(&msg(2, "waiting", 2))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut seq = 3;
        while len(journal.path()) < EMPTY_PAST + 2000 {
            settle(&journal, seq, &text, 3);
            seq += 1;
        }
        journal.empty_if_settled().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            journal.leftovers().unwrap_or_else(|e| panic!("{e}")),
            [msg(2, "waiting", 2)]
        );
        // Once nothing is pending, a file past the limit is emptied.
        journal.done(&[2]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(len(journal.path()), 0);
        // And the next acceptance reads back alone.
        journal
            .accept(&msg(seq, "next", 4))
            .unwrap_or_else(|e| panic!("{e}"));
        let again = Journal::for_transcript(&dir.path().join("s.jsonl"));
        assert_eq!(
            again.leftovers().unwrap_or_else(|e| panic!("{e}")),
            [msg(seq, "next", 4)]
        );
    }

    /// The journal holds message texts: only its owner reads it, also one an older version
    /// left readable by others.
    #[test]
    fn the_journal_is_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mode = |path: &Path| {
            std::fs::metadata(path)
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0)
        };
        let fresh = Journal::for_transcript(&dir.path().join("a.jsonl"));
        fresh
            .accept(&msg(1, "secret", 1))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(fresh.path()), 0o600);
        let old = dir.path().join("b.queue");
        std::fs::write(&old, "").unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644))
            .unwrap_or_else(|e| panic!("{e}"));
        let reopened = Journal::for_transcript(&old);
        reopened
            .accept(&msg(1, "secret", 1))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&old), 0o600);
    }

    /// A process numbers its messages from 1 again: a done mark an earlier process left
    /// does not settle a message of this one with the same number.
    #[test]
    fn a_later_process_numbering_again_is_not_taken_for_done() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let transcript = dir.path().join("s.jsonl");
        let earlier = Journal::for_transcript(&transcript);
        settle(&earlier, 5, "earlier", 1);
        drop(earlier);
        let later = Journal::for_transcript(&transcript);
        accept(&later, 5, "later", 2);
        assert_eq!(leftovers_at(&transcript), [msg(5, "later", 2)]);
    }

    #[test]
    fn recovery_skips_messages_already_in_the_transcript() {
        let left = vec![msg(1, "ok", 100), msg(2, "ok", 100), msg(3, "new", 100)];
        // One "ok" was written after acceptance, one "ok" predates it.
        let users = vec![("ok".to_owned(), 50), ("ok".to_owned(), 120)];
        let missing = still_missing(left, &users);
        assert_eq!(missing, [msg(2, "ok", 100), msg(3, "new", 100)]);
    }
}

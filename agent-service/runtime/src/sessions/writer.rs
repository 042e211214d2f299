//! The one writer of an open session's transcript. It owns the transcript writer (and with
//! it the cross-process file lock) and the session's conversation behind a fair lock: every
//! append, read and the close take it in arrival order and do their work on the caller's task
//! (the lines go to the kernel there, microseconds into the page cache). The first opening of
//! the file (which replays it) moves to a blocking thread with the lock, so a caller that stops
//! waiting leaves the session whole; an fsync does too, unless the runtime has a worker to spare
//! (`openclaw_tools::in_place`), when it runs to its end on the caller's thread. Nobody else writes the session's file (lesson L8), and
//! the lock is never held across a model or tool call.
//!
//! No task of its own: an append is not two hand-offs to another task and back, which on an
//! idle service each woke a sleeping worker thread.
//!
//! The conversation is replayed from the transcript once, when the writer
//! first opens it, and then kept up to date by the appends, so the cost of a
//! turn does not grow with the transcript's age (lesson L9).

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use openclaw_transcript::{
    Clock, Entry, EntryBody, EntryId, Message, ReadOptions, SessionHeader, SessionId, SessionKey,
    TranscriptWriter, WriterOptions,
};

use crate::{
    context::{Conversation, Tail},
    error::RuntimeError,
};

/// How to create the transcript if it does not exist yet.
#[derive(Debug, Clone)]
pub(crate) struct TranscriptSpec {
    pub path: PathBuf,
    pub id: SessionId,
    pub key: SessionKey,
    pub cwd: String,
}

/// The conversation with the transcript entry id of each message, for
/// choosing a compaction cut point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Entry ids and messages, in order (compactions applied), shared with the conversation.
    pub entries: Vec<(EntryId, Arc<Message>)>,
    /// The first message is the summary of an earlier compaction.
    pub starts_with_summary: bool,
    /// A memory flush ran since the last compaction.
    pub flushed_since_compaction: bool,
}

/// A handle on the one writer of a session's transcript; clones share it.
#[derive(Clone)]
pub(crate) struct SessionWriter {
    shared: Arc<Shared>,
    state: Arc<tokio::sync::Mutex<State>>,
}

impl std::fmt::Debug for SessionWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionWriter")
            .field("session_id", &self.shared.spec.id)
            .finish_non_exhaustive()
    }
}

/// What does not change while the writer lives, and whether it was closed.
struct Shared {
    spec: TranscriptSpec,
    clock: Arc<dyn Clock>,
    closed: AtomicBool,
}

/// What the lock guards: the file and conversation once opened.
#[derive(Default)]
struct State {
    open: Option<Open>,
}

type Guard = tokio::sync::OwnedMutexGuard<State>;

impl SessionWriter {
    async fn lock(&self) -> Result<Guard, RuntimeError> {
        let guard = Arc::clone(&self.state).lock_owned().await;
        // Set under the lock by `close`, so a caller queued behind it sees it.
        if self.is_closed() {
            return Err(stopped());
        }
        Ok(guard)
    }

    /// See [`super::LiveSession::append`].
    pub(crate) async fn append(
        &self,
        bodies: Vec<EntryBody>,
        sync: bool,
    ) -> Result<Vec<Entry>, RuntimeError> {
        let mut guard = self.lock().await?;
        if bodies.is_empty() && Open::idle_append(guard.open.as_ref(), sync) {
            return Ok(Vec::new());
        }
        let began = std::time::Instant::now();
        let result = match guard.open.as_mut() {
            Some(o) => match write_all(o, bodies) {
                Ok(written) if sync && o.unsynced => sync_open(guard).await.map(|()| written),
                other => other,
            },
            None => {
                blocking(guard, &self.shared, move |o| {
                    let written = write_all(o, bodies)?;
                    if sync && o.unsynced {
                        sync_now(o)?;
                    }
                    Ok(written)
                })
                .await
            }
        };
        crate::metrics::transcript_appended(began.elapsed(), sync);
        if let Err(error) = &result {
            tracing::error!(session_id = %self.shared.spec.id, %error, "transcript append failed");
        }
        result
    }

    async fn read<T: Send + 'static>(&self, read: fn(&Open) -> T) -> Result<T, RuntimeError> {
        let guard = self.lock().await?;
        match guard.open.as_ref() {
            Some(o) => Ok(read(o)),
            None => blocking(guard, &self.shared, move |o| Ok(read(o))).await,
        }
    }

    /// See [`super::LiveSession::messages`].
    pub(crate) async fn messages(&self) -> Result<Vec<Message>, RuntimeError> {
        self.read(|o| o.conversation.messages()).await
    }

    /// See [`super::LiveSession::shared_messages`].
    pub(crate) async fn shared_messages(&self) -> Result<Vec<Arc<Message>>, RuntimeError> {
        self.read(|o| o.conversation.shared_messages()).await
    }

    /// See [`super::LiveSession::tail`].
    pub(crate) async fn tail(&self) -> Result<Tail, RuntimeError> {
        self.read(|o| o.conversation.tail()).await
    }

    /// See [`super::LiveSession::snapshot`].
    pub(crate) async fn snapshot(&self) -> Result<Snapshot, RuntimeError> {
        self.read(snapshot).await
    }

    /// Flushes, releases the file lock and closes the writer: later calls fail.
    pub(crate) async fn close(&self) {
        let Ok(mut guard) = self.lock().await else {
            return;
        };
        self.shared.closed.store(true, Ordering::Release);
        if let Some(mut o) = guard.open.take().filter(|o| o.unsynced) {
            drop(guard);
            let session_id = self.shared.spec.id;
            let _ = tokio::task::spawn_blocking(move || {
                if let Err(error) = o.writer.sync() {
                    tracing::warn!(%session_id, %error, "final transcript sync failed");
                }
            })
            .await;
        }
    }

    /// True once the writer is closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }
}

/// The error of a request to a writer that was closed.
pub(crate) fn stopped() -> RuntimeError {
    RuntimeError::Internal("session transcript writer closed".into())
}

/// The writer of one session; the file is opened on first use.
pub(crate) fn new(spec: TranscriptSpec, clock: Arc<dyn Clock>) -> SessionWriter {
    SessionWriter {
        shared: Arc::new(Shared {
            spec,
            clock,
            closed: AtomicBool::new(false),
        }),
        state: Arc::new(tokio::sync::Mutex::new(State::default())),
    }
}

/// The writer and the conversation.
struct Open {
    writer: TranscriptWriter,
    conversation: Conversation,
    /// Something may be in the file that no fsync of ours covers yet: set by
    /// every append (and when the file is opened, since another process may
    /// have written its tail), cleared by a successful fsync.
    unsynced: bool,
}

impl Open {
    /// Whether an append of nothing (with `sync` or not) needs the file.
    fn idle_append(open: Option<&Self>, sync: bool) -> bool {
        open.is_some_and(|o| !sync || !o.unsynced)
    }
}

/// Runs `work` on the open session on a blocking thread (opening it first if needed). The
/// lock goes with it, so a caller that gives up waiting leaves the session whole.
async fn blocking<T, F>(mut guard: Guard, shared: &Arc<Shared>, work: F) -> Result<T, RuntimeError>
where
    F: FnOnce(&mut Open) -> Result<T, RuntimeError> + Send + 'static,
    T: Send + 'static,
{
    let shared = Arc::clone(shared);
    tokio::task::spawn_blocking(move || {
        if guard.open.is_none() {
            guard.open = Some(open_or_create(&shared.spec, Arc::clone(&shared.clock))?);
        }
        match guard.open.as_mut() {
            Some(open) => work(open),
            None => Err(stopped()),
        }
    })
    .await
    .map_err(|join| RuntimeError::Internal(format!("transcript task failed: {join}")))?
}

/// Fsyncs the open session's appends (a short piece of file work: in place when the runtime
/// has a worker to spare, see `openclaw_tools::in_place`), the lock going with it.
async fn sync_open(mut guard: Guard) -> Result<(), RuntimeError> {
    openclaw_tools::in_place::short_file_work(move || match guard.open.as_mut() {
        Some(open) => sync_now(open),
        None => Err(stopped()),
    })
    .await
    .map_err(|failed| RuntimeError::Internal(format!("transcript task failed: {failed}")))?
}

/// Appends `bodies` in order, one line each, and applies them to the conversation.
fn write_all(o: &mut Open, bodies: Vec<EntryBody>) -> Result<Vec<Entry>, RuntimeError> {
    let mut written = Vec::with_capacity(bodies.len());
    for body in bodies {
        o.unsynced = true;
        let entry = o.writer.append(body)?;
        o.conversation.apply(&entry);
        written.push(entry);
    }
    Ok(written)
}

/// Fsyncs what was appended (the caller checked there is something).
fn sync_now(o: &mut Open) -> Result<(), RuntimeError> {
    let began = std::time::Instant::now();
    o.writer.sync()?;
    o.unsynced = false;
    crate::metrics::fsynced("transcript", began.elapsed());
    Ok(())
}

fn snapshot(o: &Open) -> Snapshot {
    Snapshot {
        entries: o.conversation.entries().to_vec(),
        starts_with_summary: o.conversation.starts_with_summary(),
        flushed_since_compaction: o.conversation.flushed_since_compaction(),
    }
}

fn open_or_create(spec: &TranscriptSpec, clock: Arc<dyn Clock>) -> Result<Open, RuntimeError> {
    let mut conversation = Conversation::default();
    let writer = if spec.path.exists() {
        let mut opened = TranscriptWriter::open(&spec.path, clock, WriterOptions::default())?;
        if let Some(repair) = &opened.repair {
            tracing::warn!(?repair, path = %spec.path.display(), "repaired a torn transcript tail before appending");
        }
        let report = opened
            .writer
            .replay(ReadOptions::default(), |entry| conversation.apply(&entry))?;
        if !report.is_clean() {
            tracing::warn!(bad_lines = report.bad_line_count, torn_tail = report.torn_tail.is_some(), path = %spec.path.display(), "transcript had damaged lines; they were skipped");
        }
        opened.writer
    } else {
        let header = SessionHeader::new(spec.id, spec.key.clone(), spec.cwd.clone(), clock.now());
        TranscriptWriter::create(&spec.path, &header, clock, WriterOptions::default())?
    };
    Ok(Open {
        writer,
        conversation,
        unsynced: true,
    })
}

#[cfg(test)]
mod tests {
    use std::{future::Future, task::Poll};

    use openclaw_transcript::{SystemClock, UserContent, UserMessage};

    use super::*;

    fn user(text: &str) -> EntryBody {
        EntryBody::Message {
            message: Message::User(UserMessage {
                content: UserContent::Text(text.to_owned()),
                timestamp: 0,
            }),
        }
    }

    fn texts(messages: &[Message]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match m {
                Message::User(UserMessage {
                    content: UserContent::Text(text),
                    ..
                }) => text.clone(),
                other => panic!("not a user text: {other:?}"),
            })
            .collect()
    }

    fn writer_in(dir: &std::path::Path) -> SessionWriter {
        let id = SessionId::new_v4();
        new(
            TranscriptSpec {
                path: dir.join(format!("{id}.jsonl")),
                id,
                key: SessionKey::new("agent:main:main").expect("key"),
                cwd: dir.display().to_string(),
            },
            Arc::new(SystemClock),
        )
    }

    /// What the file holds, read by a fresh writer (as the next process would).
    async fn on_disk(writer: &SessionWriter) -> Vec<String> {
        let again = new(writer.shared.spec.clone(), Arc::new(SystemClock));
        texts(&again.messages().await.expect("read back"))
    }

    // On one thread the fsync always goes to the blocking pool (`openclaw_tools::in_place`), the
    // one way a caller can stop waiting half-way through it.
    #[tokio::test(flavor = "current_thread")]
    async fn a_caller_that_stops_waiting_for_the_fsync_leaves_the_session_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let writer = writer_in(dir.path());
        writer.append(vec![user("one")], true).await.expect("first");
        // Polled once: the line is written and the fsync handed to a blocking thread, then
        // the caller is gone.
        {
            let mut append = std::pin::pin!(writer.append(vec![user("two")], true));
            let first = std::future::poll_fn(|cx| Poll::Ready(append.as_mut().poll(cx))).await;
            assert!(
                first.is_pending(),
                "the sync append should wait for its fsync"
            );
        }
        // The writer is still open with both lines, and takes the next append after them.
        writer
            .append(vec![user("three")], true)
            .await
            .expect("next");
        assert_eq!(
            texts(&writer.messages().await.expect("messages")),
            ["one", "two", "three"]
        );
        writer.close().await;
        assert_eq!(on_disk(&writer).await, ["one", "two", "three"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn appends_from_many_tasks_each_land_whole_and_none_is_lost() {
        let dir = tempfile::tempdir().expect("tempdir");
        let writer = writer_in(dir.path());
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let writer = writer.clone();
                tokio::spawn(async move {
                    let written = writer
                        .append(
                            vec![user(&format!("{i}-a")), user(&format!("{i}-b"))],
                            i % 3 == 0,
                        )
                        .await
                        .expect("append");
                    written.len()
                })
            })
            .collect();
        for task in tasks {
            assert_eq!(task.await.expect("task"), 2);
        }
        let seen = texts(&writer.messages().await.expect("messages"));
        assert_eq!(seen.len(), 128);
        // Each append's two lines are next to each other: no append was split by another.
        for pair in seen.chunks(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert_eq!(a.strip_suffix("-a"), b.strip_suffix("-b"), "{seen:?}");
        }
        writer.close().await;
        assert_eq!(on_disk(&writer).await, seen);
    }

    #[tokio::test]
    async fn a_closed_writer_refuses_every_call_and_its_file_is_synced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let writer = writer_in(dir.path());
        writer
            .append(vec![user("kept")], false)
            .await
            .expect("append");
        assert!(!writer.is_closed());
        writer.close().await;
        assert!(writer.is_closed());
        let refused = writer.append(vec![user("late")], false).await;
        assert!(
            matches!(&refused, Err(e) if e.to_string().contains("closed")),
            "{refused:?}"
        );
        assert!(writer.messages().await.is_err());
        assert_eq!(on_disk(&writer).await, ["kept"]);
    }
}

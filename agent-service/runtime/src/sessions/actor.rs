//! One task per open session. It owns the transcript writer (and with it the
//! cross-process file lock) and the session's conversation, and applies
//! appends strictly in arrival order. Callers talk to it over a bounded
//! channel with a oneshot ack per command; nobody else writes the session's
//! file (lesson L8).
//!
//! The conversation is replayed from the transcript once, when the actor
//! first opens it, and then kept up to date by the appends, so the cost of a
//! turn does not grow with the transcript's age (lesson L9).

use std::{path::PathBuf, sync::Arc};

use openclaw_transcript::{
    Clock, Entry, EntryBody, EntryId, Message, ReadOptions, SessionHeader, SessionId, SessionKey,
    TranscriptWriter, WriterOptions,
};
use tokio::sync::{mpsc, oneshot};

use crate::{
    context::{Conversation, Tail},
    error::RuntimeError,
};

/// Commands an actor queues before senders wait.
const MAILBOX: usize = 64;

/// How to create the transcript if it does not exist yet.
#[derive(Debug, Clone)]
pub(crate) struct TranscriptSpec {
    pub path: PathBuf,
    pub id: SessionId,
    pub key: SessionKey,
    pub cwd: String,
}

enum Command {
    Append {
        bodies: Vec<EntryBody>,
        sync: bool,
        ack: oneshot::Sender<Result<Vec<Entry>, RuntimeError>>,
    },
    Messages {
        ack: oneshot::Sender<Result<Vec<Message>, RuntimeError>>,
    },
    Tail {
        ack: oneshot::Sender<Result<Tail, RuntimeError>>,
    },
    Snapshot {
        ack: oneshot::Sender<Result<Snapshot, RuntimeError>>,
    },
    Close {
        ack: oneshot::Sender<()>,
    },
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Append { bodies, sync, .. } => f
                .debug_struct("Append")
                .field("entries", &bodies.len())
                .field("sync", sync)
                .finish(),
            Self::Messages { .. } => f.write_str("Messages"),
            Self::Tail { .. } => f.write_str("Tail"),
            Self::Snapshot { .. } => f.write_str("Snapshot"),
            Self::Close { .. } => f.write_str("Close"),
        }
    }
}

/// The conversation with the transcript entry id of each message, for
/// choosing a compaction cut point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Entry ids and messages, in order (compactions applied).
    pub entries: Vec<(EntryId, Message)>,
    /// The first message is the summary of an earlier compaction.
    pub starts_with_summary: bool,
    /// A memory flush ran since the last compaction.
    pub flushed_since_compaction: bool,
}

/// The sending end of a transcript actor: how [`super::LiveSession`]
/// reaches the one task that writes the session's file.
#[derive(Debug, Clone)]
pub(crate) struct Mailbox {
    tx: mpsc::Sender<Command>,
}

impl Mailbox {
    async fn request<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, RuntimeError> {
        let (ack, done) = oneshot::channel();
        self.tx.send(make(ack)).await.map_err(|_| stopped())?;
        done.await
            .map_err(|_| RuntimeError::Internal("session actor dropped the request".into()))
    }

    /// See [`super::LiveSession::append`].
    pub(crate) async fn append(
        &self,
        bodies: Vec<EntryBody>,
        sync: bool,
    ) -> Result<Vec<Entry>, RuntimeError> {
        self.request(|ack| Command::Append { bodies, sync, ack })
            .await?
    }

    /// See [`super::LiveSession::messages`].
    pub(crate) async fn messages(&self) -> Result<Vec<Message>, RuntimeError> {
        self.request(|ack| Command::Messages { ack }).await?
    }

    /// See [`super::LiveSession::tail`].
    pub(crate) async fn tail(&self) -> Result<Tail, RuntimeError> {
        self.request(|ack| Command::Tail { ack }).await?
    }

    /// See [`super::LiveSession::snapshot`].
    pub(crate) async fn snapshot(&self) -> Result<Snapshot, RuntimeError> {
        self.request(|ack| Command::Snapshot { ack }).await?
    }

    /// Flushes, releases the file lock and stops the actor.
    pub(crate) async fn close(&self) {
        let _ = self.request(|ack| Command::Close { ack }).await;
    }

    /// True once the actor has stopped.
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// The error of a request to an actor that is not running.
pub(crate) fn stopped() -> RuntimeError {
    RuntimeError::Internal("session actor stopped".into())
}

/// Starts the actor for one session.
pub(crate) fn spawn(spec: TranscriptSpec, clock: Arc<dyn Clock>) -> Mailbox {
    let (tx, rx) = mpsc::channel(MAILBOX);
    tokio::spawn(run(spec, clock, rx));
    Mailbox { tx }
}

/// The writer and the conversation, moved together into blocking work.
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

#[tracing::instrument(skip_all, fields(session_id = %spec.id))]
async fn run(spec: TranscriptSpec, clock: Arc<dyn Clock>, mut rx: mpsc::Receiver<Command>) {
    let mut open: Option<Open> = None;
    while let Some(command) = rx.recv().await {
        match command {
            // Nothing to write and nothing unsynced (a turn boundary right
            // after a synced append): no blocking task, no fsync.
            Command::Append { bodies, sync, ack }
                if bodies.is_empty() && Open::idle_append(open.as_ref(), sync) =>
            {
                let _ = ack.send(Ok(Vec::new()));
            }
            Command::Append { bodies, sync, ack } => {
                let began = std::time::Instant::now();
                let result = match open.as_mut() {
                    // The file is open: the lines go to the kernel right here (one `write`
                    // each, microseconds into the page cache), and only an fsync, which waits
                    // for the disk, moves to a blocking thread. A turn's appends then cost no
                    // thread hand-off until its end.
                    Some(o) => match write_all(o, bodies) {
                        Ok(written) if sync && o.unsynced => {
                            sync_in_blocking(&mut open).await.map(|()| written)
                        }
                        other => other,
                    },
                    None => {
                        with_open(&mut open, &spec, &clock, move |o| {
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
                    tracing::error!(%error, "transcript append failed");
                }
                let _ = ack.send(result);
            }
            Command::Messages { ack } => {
                let _ =
                    ack.send(read(&mut open, &spec, &clock, |o| o.conversation.messages()).await);
            }
            Command::Tail { ack } => {
                let _ = ack.send(read(&mut open, &spec, &clock, |o| o.conversation.tail()).await);
            }
            Command::Snapshot { ack } => {
                let _ = ack.send(read(&mut open, &spec, &clock, snapshot).await);
            }
            Command::Close { ack } => {
                if let Some(mut o) = open.take().filter(|o| o.unsynced) {
                    let _ = tokio::task::spawn_blocking(move || {
                        if let Err(error) = o.writer.sync() {
                            tracing::warn!(%error, "final transcript sync failed");
                        }
                    })
                    .await;
                }
                let _ = ack.send(());
                break;
            }
        }
    }
    tracing::debug!("session actor stopped");
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

/// [`sync_now`] on a blocking thread: the state moves there and back.
async fn sync_in_blocking(open: &mut Option<Open>) -> Result<(), RuntimeError> {
    let Some(mut o) = open.take() else {
        return Err(stopped());
    };
    match tokio::task::spawn_blocking(move || {
        let result = sync_now(&mut o);
        (o, result)
    })
    .await
    {
        Ok((o, result)) => {
            *open = Some(o);
            result
        }
        Err(join) => Err(RuntimeError::Internal(format!(
            "transcript task failed: {join}"
        ))),
    }
}

fn snapshot(o: &Open) -> Snapshot {
    Snapshot {
        entries: o.conversation.entries().to_vec(),
        starts_with_summary: o.conversation.starts_with_summary(),
        flushed_since_compaction: o.conversation.flushed_since_compaction(),
    }
}

/// A read of the session: memory only, so answered here when it is open;
/// otherwise after opening it in a blocking task.
async fn read<T: Send + 'static>(
    open: &mut Option<Open>,
    spec: &TranscriptSpec,
    clock: &Arc<dyn Clock>,
    read: fn(&Open) -> T,
) -> Result<T, RuntimeError> {
    match open {
        Some(o) => Ok(read(o)),
        None => with_open(open, spec, clock, move |o| Ok(read(o))).await,
    }
}

/// Runs `work` on the open session in a blocking task (opening it first if
/// needed); the state moves into the task and back.
async fn with_open<T, F>(
    open: &mut Option<Open>,
    spec: &TranscriptSpec,
    clock: &Arc<dyn Clock>,
    work: F,
) -> Result<T, RuntimeError>
where
    F: FnOnce(&mut Open) -> Result<T, RuntimeError> + Send + 'static,
    T: Send + 'static,
{
    let taken = open.take();
    let spec = spec.clone();
    let clock = Arc::clone(clock);
    let outcome = tokio::task::spawn_blocking(move || {
        let mut state = match taken {
            Some(state) => state,
            None => match open_or_create(&spec, clock) {
                Ok(state) => state,
                Err(e) => return (None, Err(e)),
            },
        };
        let result = work(&mut state);
        (Some(state), result)
    })
    .await;
    match outcome {
        Ok((state, result)) => {
            *open = state;
            result
        }
        Err(join) => Err(RuntimeError::Internal(format!(
            "transcript task failed: {join}"
        ))),
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

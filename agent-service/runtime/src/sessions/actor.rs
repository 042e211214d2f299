//! One task per open session. It owns the transcript writer (and with it the
//! cross-process file lock) and applies appends strictly in arrival order.
//! Callers talk to it over a bounded channel and get a oneshot ack per
//! command; nobody else ever writes the session's file (lesson L8).

use std::{path::PathBuf, sync::Arc};

use openclaw_transcript::{
    Clock, Entry, EntryBody, SessionHeader, SessionId, SessionKey, TranscriptWriter, WriterOptions,
};
use tokio::sync::{mpsc, oneshot};

use crate::error::RuntimeError;

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
    Close {
        ack: oneshot::Sender<()>,
    },
}

/// A cheap, cloneable handle to a session's actor.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    tx: mpsc::Sender<Command>,
    id: SessionId,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Append { bodies, sync, .. } => f
                .debug_struct("Append")
                .field("entries", &bodies.len())
                .field("sync", sync)
                .finish(),
            Self::Close { .. } => f.write_str("Close"),
        }
    }
}

impl SessionHandle {
    /// The session id this actor writes.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Appends entries in order, one whole line each; with `sync` the file is
    /// fsynced before the ack (turn boundaries). Returns the written entries.
    pub async fn append(
        &self,
        bodies: Vec<EntryBody>,
        sync: bool,
    ) -> Result<Vec<Entry>, RuntimeError> {
        let (ack, done) = oneshot::channel();
        self.tx
            .send(Command::Append { bodies, sync, ack })
            .await
            .map_err(|_| RuntimeError::Internal("session actor stopped".into()))?;
        done.await
            .map_err(|_| RuntimeError::Internal("session actor dropped the append".into()))?
    }

    /// Flushes, releases the file lock and stops the actor.
    pub async fn close(&self) {
        let (ack, done) = oneshot::channel();
        if self.tx.send(Command::Close { ack }).await.is_ok() {
            let _ = done.await;
        }
    }

    /// True once the actor has stopped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Starts the actor for one session.
pub(crate) fn spawn(spec: TranscriptSpec, clock: Arc<dyn Clock>) -> SessionHandle {
    let (tx, rx) = mpsc::channel(MAILBOX);
    let id = spec.id;
    tokio::spawn(run(spec, clock, rx));
    SessionHandle { tx, id }
}

#[tracing::instrument(skip_all, fields(session_id = %spec.id))]
async fn run(spec: TranscriptSpec, clock: Arc<dyn Clock>, mut rx: mpsc::Receiver<Command>) {
    let mut writer: Option<TranscriptWriter> = None;
    while let Some(command) = rx.recv().await {
        match command {
            Command::Append { bodies, sync, ack } => {
                let spec = spec.clone();
                let clock = Arc::clone(&clock);
                let taken = writer.take();
                // Blocking file I/O runs off the async workers; the writer
                // moves into the closure and back.
                let outcome = tokio::task::spawn_blocking(move || {
                    let mut w = match taken {
                        Some(w) => w,
                        None => match open_or_create(&spec, clock) {
                            Ok(w) => w,
                            Err(e) => return (None, Err(e)),
                        },
                    };
                    let result = append_all(&mut w, bodies, sync);
                    (Some(w), result)
                })
                .await;
                let result = match outcome {
                    Ok((w, result)) => {
                        writer = w;
                        result
                    }
                    Err(join) => Err(RuntimeError::Internal(format!(
                        "transcript write task failed: {join}"
                    ))),
                };
                if let Err(error) = &result {
                    tracing::error!(%error, "transcript append failed");
                }
                let _ = ack.send(result);
            }
            Command::Close { ack } => {
                if let Some(mut w) = writer.take() {
                    let _ = tokio::task::spawn_blocking(move || {
                        if let Err(error) = w.sync() {
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

fn open_or_create(
    spec: &TranscriptSpec,
    clock: Arc<dyn Clock>,
) -> Result<TranscriptWriter, RuntimeError> {
    if spec.path.exists() {
        let opened = TranscriptWriter::open(&spec.path, clock, WriterOptions::default())?;
        if let Some(repair) = &opened.repair {
            tracing::warn!(?repair, path = %spec.path.display(), "repaired a torn transcript tail before appending");
        }
        Ok(opened.writer)
    } else {
        let header = SessionHeader::new(spec.id, spec.key.clone(), spec.cwd.clone(), clock.now());
        Ok(TranscriptWriter::create(
            &spec.path,
            &header,
            clock,
            WriterOptions::default(),
        )?)
    }
}

fn append_all(
    w: &mut TranscriptWriter,
    bodies: Vec<EntryBody>,
    sync: bool,
) -> Result<Vec<Entry>, RuntimeError> {
    let mut written = Vec::with_capacity(bodies.len());
    for body in bodies {
        written.push(w.append(body)?);
    }
    if sync {
        w.sync()?;
    }
    Ok(written)
}

//! One session while it lives in this process ([`LiveSession`]): its
//! transcript writer, message queue, run-event fan-out, message journal,
//! prompt fingerprint and background commands, in one value.

use std::{
    ops::{Deref, DerefMut},
    path::PathBuf,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
};

use openclaw_tools::ProcessRegistry;

use openclaw_transcript::{Clock, Entry, EntryBody, Message};

use super::{
    events::{EventHub, SessionEvents},
    journal::Journal,
    queue::{Counters, QueueState},
    writer::{self, SessionWriter, Snapshot, TranscriptSpec},
};
use crate::{error::RuntimeError, events::RunEvent, evidence::PromptFingerprint};

/// What outlives a session's release (see [`super::SessionManager::release_idle`]): its
/// numbers, so they never repeat, and its last prompt fingerprint, so a stable-prefix change
/// while it was released is still reported as a cache break.
#[derive(Debug, Clone, Default)]
pub(crate) struct Released {
    counters: Counters,
    fingerprint: Option<Arc<PromptFingerprint>>,
}

impl Released {
    /// A session first opened in this process, numbering on after `counters` (the floor
    /// the last process left, see `numbers`).
    pub(crate) fn numbered(counters: Counters) -> Self {
        Self {
            counters,
            fingerprint: None,
        }
    }

    /// The numbers handed out so far.
    pub(crate) fn counters(&self) -> Counters {
        self.counters
    }
}

/// A run event tagged with its run number.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEvent {
    /// Run number within the session.
    pub run: u64,
    /// The event.
    pub event: RunEvent,
}

/// One session as this process holds it, shared by every run, watcher and
/// reader of the session: the one type that describes a session while it is
/// live. [`super::SessionManager`] is the collection of them (one per agent
/// and session id, created on first use); the session's index entry and
/// transcript file are its storage, and the [`Journal`] the storage of
/// messages accepted but not yet in the transcript.
///
/// What it holds:
/// - the transcript writer, the only writer of the session's file (started by
///   the manager on first write or read, stopped on reset, delete and
///   shutdown): [`Self::append`], [`Self::messages`], [`Self::snapshot`];
/// - the message queue (which run handles what) and its millisecond clock:
///   [`Self::queue`], [`Self::now_ms`];
/// - the fan-out of run events: [`Self::subscribe`], [`Self::publish`];
/// - the accepted-message journal and the once-per-process recovery of it;
/// - the previous prompt fingerprint (cache-break diagnostics), the collect
///   timer claim, the background commands started by `exec` and the
///   untrusted-content fence.
#[derive(Debug)]
pub struct LiveSession {
    /// The transcript writer: `None` until it is started and after it is closed.
    transcript: Mutex<Option<SessionWriter>>,
    queue: Mutex<QueueState>,
    fingerprint: Mutex<Option<Arc<PromptFingerprint>>>,
    collect_timer: AtomicBool,
    events: EventHub,
    /// Origin of the queue's millisecond clock (tokio time, so tests can
    /// pause it).
    epoch: tokio::time::Instant,
    /// Background commands of this session.
    pub processes: Arc<ProcessRegistry>,
    /// Untrusted-content markers for this session's model requests (a random
    /// key per session, so nonces are unpredictable but stable across runs).
    pub fence: openclaw_tools::Fence,
    /// The history as the last model request of this session read it, fenced (see
    /// [`Self::model_history`]).
    fenced: Mutex<openclaw_tools::FencedHistory>,
    journal: std::sync::OnceLock<Arc<Journal>>,
    /// Journal seqs of messages in the transcript but not yet fsynced with it:
    /// marked done after the next fsync, so the journal keeps every
    /// acknowledged message until its transcript line is on disk.
    unsynced: Mutex<Vec<u64>>,
    recovered: tokio::sync::OnceCell<()>,
    /// Held from numbering a message to queueing it (see [`Self::admission`]).
    admission: tokio::sync::Mutex<()>,
    /// Since when the idle-release sweep has found the session releasable (`None`: in use
    /// when last looked at).
    idle_since: Mutex<Option<tokio::time::Instant>>,
    /// Where this session's numbers floor lives (`None`: kept nowhere, a session made by
    /// [`Default`]).
    numbers_path: Option<PathBuf>,
    /// The numbers floor this process last wrote ahead of the session's numbers (`None`:
    /// none yet), held across the write so two writes never cross (see `numbers`).
    numbers_floor: tokio::sync::Mutex<Option<Counters>>,
    /// Set once the session is deleted or reset: its floor is never written again.
    retired: AtomicBool,
}

impl Default for LiveSession {
    fn default() -> Self {
        Self::resumed(openclaw_tools::Fence::random(), Released::default(), None)
    }
}

impl LiveSession {
    /// A session opened (again) in this process with its untrusted-content fence, what
    /// the manager kept of it while it was released and where its numbers floor lives.
    pub(crate) fn resumed(
        fence: openclaw_tools::Fence,
        kept: Released,
        numbers_path: Option<PathBuf>,
    ) -> Self {
        let Released {
            counters,
            fingerprint,
        } = kept;
        Self {
            transcript: Mutex::new(None),
            queue: Mutex::new(QueueState::continuing(counters)),
            fingerprint: Mutex::new(fingerprint),
            collect_timer: AtomicBool::new(false),
            events: EventHub::default(),
            epoch: tokio::time::Instant::now(),
            processes: Arc::new(ProcessRegistry::new().numbered_after(counters.process)),
            fence,
            fenced: Mutex::default(),
            journal: std::sync::OnceLock::new(),
            unsynced: Mutex::default(),
            recovered: tokio::sync::OnceCell::new(),
            admission: tokio::sync::Mutex::new(()),
            idle_since: Mutex::new(None),
            numbers_path,
            numbers_floor: tokio::sync::Mutex::new(None),
            retired: AtomicBool::new(false),
        }
    }

    /// Before a number is handed out: the first time in this process, and again once the
    /// numbers come within half a block of the floor written, a floor a block ahead goes to
    /// disk (on the blocking pool, synced). A failure is logged: numbers may then repeat
    /// after a crash, never within this process.
    async fn floor_ahead(&self) {
        let Some(path) = &self.numbers_path else {
            return;
        };
        let mut written = self.numbers_floor.lock().await;
        if self.retired.load(Ordering::Acquire) {
            return;
        }
        let current = self.released().counters;
        if written.is_some_and(|floor| !super::numbers::near(current, floor)) {
            return;
        }
        let floor = super::numbers::ahead(current);
        let path = path.clone();
        match tokio::task::spawn_blocking(move || super::numbers::write(&path, floor)).await {
            Ok(Ok(())) => *written = Some(floor),
            Ok(Err(error)) => tracing::error!(%error, "session numbers not written"),
            Err(error) => tracing::error!(%error, "session numbers task failed"),
        }
    }

    /// Marks the session deleted or reset: once this returns, no floor write is under way
    /// and none will start, so its numbers file can be removed for good.
    pub(crate) async fn retire(&self) {
        let _written = self.numbers_floor.lock().await;
        self.retired.store(true, Ordering::Release);
    }

    /// What the manager keeps of the session while it is released: the numbers handed out
    /// so far (runs, messages, background commands) and the last prompt fingerprint.
    pub(crate) fn released(&self) -> Released {
        Released {
            counters: Counters {
                process: self.processes.last_number(),
                ..self.queue().counters()
            },
            fingerprint: self
                .fingerprint
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// True when nothing but the manager could notice the session going away: no run
    /// active, queued or collecting, no watcher, no background command running, and no
    /// one else holding the session (the caller checks that) or its command registry.
    fn releasable(&self) -> bool {
        self.is_idle()
            && self.events.receiver_count() == 0
            && Arc::strong_count(&self.processes) == 1
            && !self.processes.any_running()
            && !self.collect_timer.load(Ordering::Acquire)
    }

    /// One look of the idle-release sweep at `now`: true when the session has been
    /// releasable for at least `idle_for` (counted from the first look that found it so).
    pub(crate) fn idle_for(
        &self,
        now: tokio::time::Instant,
        idle_for: std::time::Duration,
    ) -> bool {
        let mut since = self
            .idle_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !self.releasable() {
            *since = None;
            return false;
        }
        let first = *since.get_or_insert(now);
        now.saturating_duration_since(first) >= idle_for
    }

    /// Marks the session as in use (it was just handed out).
    pub(crate) fn touch(&self) {
        *self
            .idle_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }
}

impl LiveSession {
    /// Starts the transcript writer unless it is open already.
    pub(crate) fn start_transcript(
        &self,
        spec: impl FnOnce() -> TranscriptSpec,
        clock: Arc<dyn Clock>,
    ) {
        let mut slot = self
            .transcript
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|m| !m.is_closed()) {
            return;
        }
        *slot = Some(writer::new(spec(), clock));
    }

    /// The open transcript writer (this lock is released before any await).
    fn writer(&self) -> Result<SessionWriter, RuntimeError> {
        self.transcript
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(writer::stopped)
    }

    /// Appends entries to the transcript in order, one whole line each; with
    /// `sync` the file is fsynced before the ack (the end of a run, a
    /// compaction, a Codex turn), and the messages [`Self::written`] reported
    /// are then marked done in the journal. Returns the written entries.
    pub async fn append(
        &self,
        bodies: Vec<EntryBody>,
        sync: bool,
    ) -> Result<Vec<Entry>, RuntimeError> {
        let written = self.writer()?.append(bodies, sync).await?;
        if sync {
            self.journal_synced().await;
        }
        Ok(written)
    }

    /// Reports journaled messages (by seq) as appended to the transcript: the
    /// journal lets go of them once the transcript is fsynced after this.
    pub fn written(&self, seqs: impl IntoIterator<Item = u64>) {
        self.unsynced
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(seqs);
    }

    /// Marks done in the journal what [`Self::written`] reported before the
    /// transcript's last fsync. A failure is logged: the messages stay in the
    /// journal, and recovery finds them in the transcript and skips them.
    async fn journal_synced(&self) {
        let seqs =
            std::mem::take(&mut *self.unsynced.lock().unwrap_or_else(PoisonError::into_inner));
        let Some(journal) = self.opened_journal().filter(|_| !seqs.is_empty()) else {
            return;
        };
        // No fsync here (a lost done mark only makes recovery look for the message in the
        // transcript), so the small write or truncation runs in place, not on a blocking
        // thread.
        if let Err(error) = journal.done(&seqs) {
            tracing::warn!(%error, "could not mark messages done in the journal");
        }
    }

    /// `history` as this session's next model request sends it: fenced by the session's
    /// fence, each message once (the messages the previous request sent are reused).
    pub fn model_history(
        &self,
        history: &[Arc<Message>],
        origin: openclaw_tools::UserOrigin<'_>,
    ) -> std::sync::Arc<Vec<Message>> {
        let mut memo = self.fenced.lock().unwrap_or_else(PoisonError::into_inner);
        self.fence.model_messages_memo(&mut memo, history, origin)
    }

    /// The conversation so far (compactions applied).
    pub async fn messages(&self) -> Result<Vec<Message>, RuntimeError> {
        self.writer()?.messages().await
    }

    /// The conversation so far, shared with the session rather than copied: what a run
    /// starts from (see [`crate::context::Conversation::shared_messages`]).
    pub async fn shared_messages(&self) -> Result<Vec<Arc<Message>>, RuntimeError> {
        self.writer()?.shared_messages().await
    }

    /// The end of the conversation (see [`crate::context::Conversation::tail`]):
    /// for a turn that needs not the whole history.
    pub async fn tail(&self) -> Result<crate::context::Tail, RuntimeError> {
        self.writer()?.tail().await
    }

    /// A handle that reads the conversation later (the transcript writer), for work that
    /// may or may not need it.
    pub(crate) fn reader(&self) -> Result<super::writer::SessionWriter, RuntimeError> {
        self.writer()
    }

    /// The conversation with entry ids (see [`Snapshot`]).
    pub async fn snapshot(&self) -> Result<Snapshot, RuntimeError> {
        self.writer()?.snapshot().await
    }

    /// Closes the transcript writer, if open: flushes and releases the
    /// file lock. Later writes fail until it is started again.
    pub(crate) async fn close_transcript(&self) {
        let writer = self
            .transcript
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(writer) = writer {
            // Closing fsyncs the file.
            writer.close().await;
            self.journal_synced().await;
            if let Some(journal) = self.opened_journal()
                && let Err(error) = journal.empty_if_settled()
            {
                tracing::warn!(%error, "could not empty the settled message journal");
            }
        }
    }

    /// One message at a time from taking its arrival number to entering the queue (the
    /// journal write between the two is awaited): messages and system events arriving at
    /// once are queued in the order of their numbers, so the numbers, the journal's replay
    /// order and the transcript agree. The floor of the session's numbers is on disk ahead
    /// of them before the guard is handed out.
    pub(crate) async fn admission(&self) -> tokio::sync::MutexGuard<'_, ()> {
        let admission = self.admission.lock().await;
        self.floor_ahead().await;
        admission
    }

    /// The queue, locked for a short update (never held across an await).
    /// When the lock is released the queue-depth gauge follows the change.
    pub fn queue(&self) -> QueueLock<'_> {
        let state = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let before = state.queued();
        QueueLock { state, before }
    }

    /// True while a run is active.
    pub fn is_running(&self) -> bool {
        self.queue().is_running()
    }

    /// The number of the active run, if one is active (a watcher that arrives mid-run).
    pub fn active_run(&self) -> Option<u64> {
        self.queue().active_run()
    }

    /// True when nothing runs, waits or collects.
    pub fn is_idle(&self) -> bool {
        self.queue().is_idle()
    }

    /// Milliseconds on the queue's clock.
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The instant `ms` on the queue's clock.
    pub fn instant_at(&self, ms: u64) -> tokio::time::Instant {
        self.epoch + std::time::Duration::from_millis(ms)
    }

    /// The session's accepted-message journal, opened beside `transcript`
    /// on first use.
    pub fn journal(&self, transcript: &std::path::Path) -> Arc<Journal> {
        Arc::clone(
            self.journal
                .get_or_init(|| Arc::new(Journal::for_transcript(transcript))),
        )
    }

    /// The journal, if it was opened.
    pub fn opened_journal(&self) -> Option<Arc<Journal>> {
        self.journal.get().cloned()
    }

    /// Runs `recover` once per process for this session (later callers wait
    /// for the first). A failure is returned and retried next time.
    pub async fn recover_once<F, Fut, E>(&self, recover: F) -> Result<(), E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<(), E>>,
    {
        self.recovered.get_or_try_init(recover).await.map(|_| ())
    }

    /// Subscribes to the session's run events from now on.
    pub fn subscribe(&self) -> SessionEvents {
        self.events.subscribe()
    }

    /// How many receivers follow the session's events now (Run streams, watchers, the
    /// runtime's own followers).
    pub fn followers(&self) -> usize {
        self.events.receiver_count()
    }

    /// Publishes a run event (no subscribers is fine).
    pub fn publish(&self, run: u64, event: RunEvent) {
        self.events.send(SessionEvent { run, event });
    }

    /// Stores this call's fingerprint (see [`PromptFingerprint::shared`]: one copy for the
    /// sessions whose stable prefix is the same) and returns the previous one.
    pub fn swap_fingerprint(&self, next: Arc<PromptFingerprint>) -> Option<Arc<PromptFingerprint>> {
        self.fingerprint
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .replace(next)
    }

    /// Claims the collect timer; false when one is already waiting.
    pub fn claim_collect_timer(&self) -> bool {
        self.collect_timer
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Releases the collect timer.
    pub fn release_collect_timer(&self) {
        self.collect_timer.store(false, Ordering::Release);
    }
}

/// The locked queue of a session; see [`LiveSession::queue`].
#[derive(Debug)]
pub struct QueueLock<'a> {
    state: MutexGuard<'a, QueueState>,
    before: usize,
}

impl Deref for QueueLock<'_> {
    type Target = QueueState;

    fn deref(&self) -> &QueueState {
        &self.state
    }
}

impl DerefMut for QueueLock<'_> {
    fn deref_mut(&mut self) -> &mut QueueState {
        &mut self.state
    }
}

impl Drop for QueueLock<'_> {
    fn drop(&mut self) {
        let after = self.state.queued();
        if after != self.before {
            #[allow(clippy::cast_precision_loss, reason = "queue lengths are small")]
            let delta = after as f64 - self.before as f64;
            metrics_queue_depth(delta);
        }
    }
}

fn metrics_queue_depth(delta: f64) {
    crate::metrics::queue_depth_changed(delta);
}

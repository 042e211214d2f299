//! Short blocking file work done in place when that costs nobody anything (design rule L18).
//!
//! Handing a few microseconds of file work (an fsync of a small append, reading a bounded
//! file) to the blocking pool is two thread hand-offs: a pool thread is woken to do it, and
//! the waiting task's worker is woken back when it is done. On a quiet service both threads
//! were asleep, and the wake-ups cost more CPU than the work. [`short_file_work`] therefore
//! runs the work on the calling worker thread, under two conditions that keep the runtime
//! responsive:
//!
//! - the runtime is multi-threaded with at least two workers, and
//! - no other worker is doing such work in place right now (one slot for the process).
//!
//! So at most one worker is ever blocked this way and another is always free for the async
//! work; everything else goes to the blocking pool as before, where concurrent fsyncs still
//! run side by side. The work cannot be abandoned half-way in either case: in place it ends
//! within the poll that started it, on the pool it runs to its end even when the caller stops
//! waiting. A panic in the work is returned as an error in both cases.
//!
//! Only for work with a small bound: never a network call, a child process or a read of
//! unbounded size.

use std::{
    panic::AssertUnwindSafe,
    sync::atomic::{AtomicBool, Ordering},
};

/// Held by the one worker doing file work in place.
static SLOT: AtomicBool = AtomicBool::new(false);

/// Frees the slot, also when the work panics.
struct Held;

impl Drop for Held {
    fn drop(&mut self) {
        SLOT.store(false, Ordering::Release);
    }
}

/// The work panicked (in place or on the blocking pool); the message says what it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkFailed(pub String);

impl std::fmt::Display for WorkFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkFailed {}

/// Runs `work` in place when the module's conditions allow, else on the blocking pool.
pub async fn short_file_work<T, F>(work: F) -> Result<T, WorkFailed>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    match take_slot() {
        Some(held) => {
            let done = std::panic::catch_unwind(AssertUnwindSafe(work));
            drop(held);
            done.map_err(|panic| WorkFailed(panic_message(panic.as_ref())))
        }
        None => tokio::task::spawn_blocking(work)
            .await
            .map_err(|join| WorkFailed(join.to_string())),
    }
}

/// Whether work done now would run in place (for tests).
pub fn would_run_in_place() -> bool {
    runtime_has_spare_worker() && !SLOT.load(Ordering::Acquire)
}

fn take_slot() -> Option<Held> {
    if !runtime_has_spare_worker() {
        return None;
    }
    SLOT.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
        .ok()
        .map(|_| Held)
}

fn runtime_has_spare_worker() -> bool {
    tokio::runtime::Handle::try_current().is_ok_and(|handle| {
        handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
            && handle.metrics().num_workers() >= 2
    })
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    format!("file work panicked: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slot is the process's: these tests take turns with it.
    static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn quiet_work_runs_on_the_calling_thread() {
        let _turn = TURN.lock().await;
        let caller = std::thread::current().id();
        let ran_on = short_file_work(|| std::thread::current().id()).await;
        assert_eq!(ran_on, Ok(caller));
        assert!(would_run_in_place(), "the slot is free again");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_while_the_slot_is_held_goes_to_the_pool() {
        let _turn = TURN.lock().await;
        let (held_tx, held_rx) = std::sync::mpsc::channel::<std::thread::ThreadId>();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let holder = tokio::spawn(short_file_work(move || {
            let _ = held_tx.send(std::thread::current().id());
            let _ = release_rx.recv();
        }));
        let holder_thread = tokio::task::spawn_blocking(move || held_rx.recv())
            .await
            .ok()
            .and_then(Result::ok);
        assert!(holder_thread.is_some(), "the first work started");
        assert!(!would_run_in_place(), "the slot is held");

        // A second piece of work may not block a second worker.
        let caller = std::thread::current().id();
        let second = short_file_work(|| std::thread::current().id()).await;
        assert!(second.is_ok());
        assert_ne!(second, Ok(caller), "the second ran on a pool thread");
        assert_ne!(second.ok(), holder_thread);

        let _ = release_tx.send(());
        assert!(matches!(holder.await, Ok(Ok(()))));
        assert!(would_run_in_place(), "the slot is free again");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_single_threaded_runtime_always_uses_the_pool() {
        assert!(!would_run_in_place());
        let caller = std::thread::current().id();
        let ran_on = short_file_work(|| std::thread::current().id()).await;
        assert!(ran_on.is_ok());
        assert_ne!(ran_on, Ok(caller));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panic_is_an_error_and_frees_the_slot() {
        let _turn = TURN.lock().await;
        let failed = short_file_work(|| -> u32 { panic!("disk on fire") }).await;
        let message = failed.err().map(|e| e.0).unwrap_or_default();
        assert!(message.contains("disk on fire"), "{message}");
        assert!(would_run_in_place());
        assert_eq!(short_file_work(|| 7).await, Ok(7));
    }
}

//! Short blocking file work done in place when that costs nobody anything (design rule L18).
//!
//! Handing a few microseconds of file work (an fsync of a small append, reading a bounded
//! file) to the blocking pool is two thread hand-offs: a pool thread is woken to do it, and
//! the waiting task's worker is woken back when it is done. On a quiet service both threads
//! were asleep, and the wake-ups cost more CPU than the work. [`short_file_work`] therefore
//! runs the work on the calling worker thread, under conditions that keep the runtime
//! responsive:
//!
//! - the runtime is multi-threaded, and
//! - with two workers or more, every other worker is idle (parked, as the runtime's metrics
//!   report it); with one worker (`TOKIO_WORKER_THREADS=1`), the work done in place lately
//!   has taken less than [`SLOW`] on average, and
//! - no other worker is doing such work in place right now (one slot for the process).
//!
//! So at most one worker is ever blocked this way. With several, only while the others had
//! nothing to do, and they stay free to take whatever arrives meanwhile. With one, everything
//! else waits for the work, so it runs in place only while the disk answers fast. The average
//! is a running mean of the durations (each new one weighs an eighth), so one hiccup of a few
//! milliseconds is tolerated; when the mean goes over [`SLOW`] the work goes to the pool for
//! the next [`SLOW_PAUSE`], after which the mean starts afresh. A slow disk therefore costs
//! the runtime a few stalls per pause at most. A current-thread runtime (tests, command-line
//! tools) always uses the pool. A busy service (another worker
//! running tasks) hands the work to the blocking pool as before, where it overlaps with the
//! async work and concurrent fsyncs run side by side; blocking a worker there would cost
//! throughput. The work cannot be abandoned half-way in either case: in place it ends
//! within the poll that started it, on the pool it runs to its end even when the caller stops
//! waiting. A panic in the work is returned as an error in both cases.
//!
//! Only for work with a small bound: never a network call, a child process or a read of
//! unbounded size.

use std::{
    panic::AssertUnwindSafe,
    sync::{
        OnceLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

/// Held by the one worker doing file work in place.
static SLOT: AtomicBool = AtomicBool::new(false);

/// A running mean of in-place work above this is slow: the disk is not answering fast.
pub const SLOW: Duration = Duration::from_millis(1);

/// How long a single-worker runtime sends the work to the pool once in-place work is slow.
pub const SLOW_PAUSE: Duration = Duration::from_secs(10);

/// The pace of the work done in place lately: a running mean of its durations, and until
/// when a single-worker runtime uses the pool because that mean went over [`SLOW`].
struct Pace {
    /// Until when (milliseconds after [`epoch`]) a single-worker runtime uses the pool.
    slow_until: AtomicU64,
    /// The running mean, in microseconds (updated by the slot's holder only).
    mean_micros: AtomicU64,
}

/// The process's pace, shared like the slot.
static PACE: Pace = Pace::new();

impl Pace {
    const fn new() -> Self {
        Pace {
            slow_until: AtomicU64::new(0),
            mean_micros: AtomicU64::new(0),
        }
    }

    /// Adds one in-place duration to the running mean; a mean over [`SLOW`] starts a pause
    /// of [`SLOW_PAUSE`] from `now`, after which the mean starts afresh.
    fn record(&self, took: Duration, now: Instant) {
        let sample = micros(took);
        let old = self.mean_micros.load(Ordering::Acquire);
        // An eighth of the new sample, seven eighths of the old mean.
        let mean = (old.saturating_mul(7) / 8).saturating_add(sample / 8);
        if mean > micros(SLOW) {
            self.slow_until
                .store(millis(now + SLOW_PAUSE), Ordering::Release);
            self.mean_micros.store(0, Ordering::Release);
        } else {
            self.mean_micros.store(mean, Ordering::Release);
        }
    }

    /// Whether a pause is on at `now`.
    fn paused(&self, now: Instant) -> bool {
        self.slow_until.load(Ordering::Acquire) > millis(now)
    }
}

fn micros(took: Duration) -> u64 {
    u64::try_from(took.as_micros()).unwrap_or(u64::MAX)
}

/// The instant [`Pace`] counts from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Milliseconds from [`epoch`] to `at`.
fn millis(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch()).as_millis()).unwrap_or(u64::MAX)
}

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
            let began = Instant::now();
            let done = std::panic::catch_unwind(AssertUnwindSafe(work));
            let ended = Instant::now();
            PACE.record(ended.saturating_duration_since(began), ended);
            drop(held);
            done.map_err(|panic| WorkFailed(panic_message(panic.as_ref())))
        }
        None => tokio::task::spawn_blocking(work)
            .await
            .map_err(|join| WorkFailed(join.to_string())),
    }
}

/// Whether work done now would run in place.
#[cfg(test)]
fn would_run_in_place() -> bool {
    others_idle() && !SLOT.load(Ordering::Acquire)
}

/// A multi-threaded runtime with two workers or more, of which at most one (the caller's,
/// when called on a worker) is running tasks: the others are parked. A worker's park/unpark
/// count is odd while it is parked (tokio publishes it as the worker parks and right after it
/// wakes). Or a multi-threaded runtime of one worker, while the disk has been fast.
fn others_idle() -> bool {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return false;
    };
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return false;
    }
    let metrics = handle.metrics();
    let workers = metrics.num_workers();
    if workers == 1 {
        return !PACE.paused(Instant::now());
    }
    let active = (0..workers)
        .filter(|&worker| metrics.worker_park_unpark_count(worker) % 2 == 0)
        .count();
    workers >= 2 && active <= 1
}

fn take_slot() -> Option<Held> {
    if !others_idle() {
        return None;
    }
    SLOT.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
        .ok()
        .map(|_| Held)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    format!("file work panicked: {}", panic_text(panic))
}

/// What a caught panic said, when it said it as text (`panic!` with a literal or a format).
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message")
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// The slot is the process's: these tests take turns with it.
    static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    /// Waits (a few seconds at most) until the runtime's workers have parked, as they do when
    /// nothing is scheduled.
    async fn workers_parked() {
        let give_up = Instant::now() + Duration::from_secs(10);
        while !would_run_in_place() {
            assert!(Instant::now() < give_up, "the workers never parked");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    fn this_thread() -> std::thread::ThreadId {
        std::thread::current().id()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn quiet_work_runs_on_the_calling_thread() {
        let _turn = TURN.lock().await;
        workers_parked().await;
        let ran_on = short_file_work(this_thread).await;
        assert_eq!(ran_on, Ok(this_thread()));
        assert!(!SLOT.load(Ordering::Acquire), "the slot is free again");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_while_the_slot_is_held_goes_to_the_pool() {
        let _turn = TURN.lock().await;
        workers_parked().await;
        let handle = tokio::runtime::Handle::current();
        let caller = this_thread();
        // In place on this thread, the first work starts a second from another thread while
        // it holds the slot.
        let (first, second) = short_file_work(move || {
            let second = std::thread::spawn(move || {
                let asking = this_thread();
                (asking, handle.block_on(short_file_work(this_thread)))
            })
            .join();
            (this_thread(), second)
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first, caller, "the first ran in place");
        let (asking, second) = second.unwrap_or_else(|_| panic!("the second thread panicked"));
        let second = second.unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(second, asking, "the second ran on a pool thread");
        assert_ne!(second, caller);
        assert!(!SLOT.load(Ordering::Acquire), "the slot is free again");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_while_another_worker_is_busy_goes_to_the_pool() {
        let _turn = TURN.lock().await;
        workers_parked().await;
        let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        // A task that keeps its worker busy (it never yields) until told to stop.
        let busy = tokio::spawn(async move {
            let _ = started_tx.send(());
            let _ = stop_rx.recv();
        });
        tokio::task::spawn_blocking(move || started_rx.recv())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("the busy task never started"));
        // Asked from a task on the other worker, as the service always asks.
        let asked = tokio::spawn(async {
            let in_place = would_run_in_place();
            (in_place, this_thread(), short_file_work(this_thread).await)
        })
        .await;
        let _ = stop_tx.send(());
        let (in_place, caller, ran_on) = asked.unwrap_or_else(|e| panic!("{e}"));
        assert!(!in_place, "the other worker is busy");
        assert!(ran_on.is_ok());
        assert_ne!(ran_on, Ok(caller), "handed to the pool");
        assert!(busy.await.is_ok());
    }

    #[test]
    fn one_hiccup_is_tolerated_and_a_slow_mean_starts_a_pause() {
        let pace = Pace::new();
        let now = Instant::now();
        pace.record(SLOW * 4, now);
        assert!(!pace.paused(now), "one hiccup tolerated");
        assert_eq!(
            pace.mean_micros.load(Ordering::Acquire),
            micros(SLOW * 4) / 8
        );
        // Fast work brings the mean down again.
        for _ in 0..40 {
            pace.record(Duration::from_micros(20), now);
        }
        assert!(pace.mean_micros.load(Ordering::Acquire) < micros(SLOW) / 10);
        // Slow work that keeps coming: the mean goes over within a few, never on the first.
        let mut slow_ones = 0;
        while !pace.paused(now) {
            pace.record(SLOW * 4, now);
            slow_ones += 1;
            assert!(slow_ones < 10, "the mean never went over");
        }
        assert!(slow_ones >= 2, "{slow_ones}");
        assert_eq!(
            pace.mean_micros.load(Ordering::Acquire),
            0,
            "the mean starts afresh"
        );
        assert!(pace.paused(now + SLOW_PAUSE - Duration::from_millis(5)));
        assert!(
            !pace.paused(now + SLOW_PAUSE + Duration::from_millis(5)),
            "the pause ends"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn one_worker_works_in_place_unless_paused() {
        let _turn = TURN.lock().await;
        PACE.slow_until.store(0, Ordering::Release);
        let caller = this_thread();
        assert_eq!(short_file_work(this_thread).await, Ok(caller), "in place");
        // Work done in place counts towards the pace: a sleep of SLOW * 9 alone is over.
        PACE.mean_micros.store(0, Ordering::Release);
        let slow = short_file_work(move || {
            std::thread::sleep(SLOW * 9);
            this_thread()
        })
        .await;
        assert_eq!(slow, Ok(caller), "slow work still ends in place");
        assert!(PACE.paused(Instant::now()), "the slow work was counted");
        let after = short_file_work(this_thread).await;
        assert!(after.is_ok());
        assert_ne!(after, Ok(caller), "on the pool while paused");
        // Once the pause is over, in place again.
        PACE.slow_until
            .store(millis(Instant::now()), Ordering::Release);
        assert_eq!(short_file_work(this_thread).await, Ok(caller));
        assert!(!SLOT.load(Ordering::Acquire), "the slot is free again");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_single_threaded_runtime_always_uses_the_pool() {
        assert!(!would_run_in_place());
        let caller = this_thread();
        let ran_on = short_file_work(this_thread).await;
        assert!(ran_on.is_ok());
        assert_ne!(ran_on, Ok(caller));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panic_is_an_error_and_frees_the_slot() {
        let _turn = TURN.lock().await;
        workers_parked().await;
        let failed = short_file_work(|| -> u32 { panic!("disk on fire") }).await;
        let message = failed.err().map(|e| e.0).unwrap_or_default();
        assert!(message.contains("disk on fire"), "{message}");
        assert!(!SLOT.load(Ordering::Acquire), "the slot is free again");
        assert_eq!(short_file_work(|| 7).await, Ok(7));
    }
}

//! [`BootstrapCache`]: the bootstrap files of a workspace, kept between loads and checked again
//! on every load, so a prompt rendered for every model call reads the files only when they
//! changed.
//!
//! Each load first takes a snapshot of the workspace (see [`crate::bootstrap_stamp`]: the
//! root's identity and one `fstatat` per name, about a dozen system calls). A kept entry whose
//! snapshot equals it is returned as is; anything else is a fresh [`load_bootstrap_files`],
//! with every confinement check it makes, and the fresh result is kept only when the snapshot
//! may stand for it. So a load through the cache returns what a fresh load would return now.
//!
//! The caller may keep one value derived from the files with them (the runtime keeps its
//! privacy judgement). It must depend only on the files and on what the snapshot covers: the
//! bootstrap names and the `extra_names` given to [`BootstrapCache::new`]. Anything a caller
//! changes afterwards (a hook rewriting the files) is the caller's and is never kept here.
//!
//! Memory is bounded by [`CacheLimits`]: entries and bytes, least recently used out first, and
//! entries unused for [`CacheLimits::idle`] dropped at the next load, so the workspaces of
//! sessions that ended (a sandboxed session has its own) leave on their own. A load that fails
//! or finds the workspace uncacheable drops the workspace's entry.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use lru::LruCache;

use crate::bootstrap_files::{BootstrapFile, load_bootstrap_files};
use crate::bootstrap_stamp::Snapshot;
use crate::error::Result;

/// How much a [`BootstrapCache`] may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    /// Workspaces kept at most (0 keeps nothing).
    pub entries: usize,
    /// Bytes kept at most, summed over entries (file text, paths and bookkeeping). A single
    /// workspace over a quarter of this is loaded every time and not kept.
    pub bytes: usize,
    /// An entry unused for this long is dropped.
    pub idle: Duration,
}

impl Default for CacheLimits {
    /// 1,024 workspaces, 32 MiB, 10 minutes: the seeded files of a workspace are about 10 KB,
    /// so the byte bound holds thousands of them, and a busy agent's sessions share one entry.
    fn default() -> Self {
        Self {
            entries: 1024,
            bytes: 32 * 1024 * 1024,
            idle: Duration::from_secs(10 * 60),
        }
    }
}

/// One load: the files, and the value the caller derived from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded<T> {
    /// As [`load_bootstrap_files`] returns them.
    pub files: Vec<BootstrapFile>,
    /// What the caller's `derive` made of `files`.
    pub derived: T,
}

/// Counters of a [`BootstrapCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Loads answered from a kept entry.
    pub hits: u64,
    /// Loads that read the files.
    pub misses: u64,
    /// Entries held now.
    pub entries: usize,
    /// Bytes held now, as counted against [`CacheLimits::bytes`].
    pub bytes: usize,
}

/// Bootstrap loads kept per workspace path (as given), checked on every load.
pub struct BootstrapCache<T> {
    limits: CacheLimits,
    extra_names: &'static [&'static str],
    inner: Mutex<Inner<T>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

struct Inner<T> {
    lru: LruCache<PathBuf, Slot<T>>,
    bytes: usize,
}

struct Slot<T> {
    snapshot: Snapshot,
    loaded: Arc<Loaded<T>>,
    weight: usize,
    used: SystemTime,
}

impl<T> std::fmt::Debug for BootstrapCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BootstrapCache")
            .field("limits", &self.limits)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl<T> BootstrapCache<T> {
    /// An empty cache. `extra_names` are names in the workspace root, besides the bootstrap
    /// files, that the derived value depends on (their identity, type and times are checked
    /// like the bootstrap files').
    pub fn new(limits: CacheLimits, extra_names: &'static [&'static str]) -> Self {
        Self {
            limits,
            extra_names,
            inner: Mutex::new(Inner {
                lru: LruCache::unbounded(),
                bytes: 0,
            }),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The bootstrap files of `workspace` and the value `derive` makes of them: kept ones if
    /// nothing they depend on changed, else loaded now. Blocking (a dozen `fstatat` calls when
    /// kept; a full load otherwise).
    ///
    /// `now` is the wall clock read just before the call; file times are compared with it, so
    /// it must be the clock the filesystem stamps files with.
    ///
    /// Errors: as [`load_bootstrap_files`].
    pub fn load(
        &self,
        workspace: &Path,
        now: SystemTime,
        derive: impl FnOnce(&[BootstrapFile]) -> T,
    ) -> Result<Arc<Loaded<T>>> {
        let before = Snapshot::take(workspace, self.extra_names);
        if let Some(kept) = self.find(workspace, before.as_ref(), now) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(kept);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let files = load_bootstrap_files(workspace)?;
        let derived = derive(&files);
        let loaded = Arc::new(Loaded { files, derived });
        if let Some(before) = before
            && before.settled_before(now)
            && before.agrees_with(&loaded.files)
            && Snapshot::take(workspace, self.extra_names).as_ref() == Some(&before)
        {
            self.insert(workspace, before, Arc::clone(&loaded), now);
        }
        Ok(loaded)
    }

    /// What is kept for `workspace`, when nothing it depends on changed: [`Self::load`]'s
    /// answer on a hit, from the same stamps, without ever reading a file. `None` means
    /// [`Self::load`] has to read. Cheap enough for an async task: the root is opened and a
    /// dozen names are `fstatat`ed, nothing more.
    pub fn kept(&self, workspace: &Path, now: SystemTime) -> Option<Arc<Loaded<T>>> {
        let snapshot = Snapshot::take(workspace, self.extra_names);
        let kept = self.find(workspace, snapshot.as_ref(), now)?;
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(kept)
    }

    /// Drops what is kept for `workspace` (a workspace removed with its session).
    pub fn forget(&self, workspace: &Path) {
        let mut inner = self.lock();
        if let Some(slot) = inner.lru.pop(workspace) {
            inner.bytes -= slot.weight;
        }
    }

    /// The counters, and what is held now.
    pub fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries: inner.lru.len(),
            bytes: inner.bytes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        // A poisoned lock means a panic elsewhere mid-update; slots are always whole.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The kept load of `workspace` if its snapshot is `current`; a kept load that is not
    /// (or a workspace that cannot be cached now) is dropped.
    fn find(
        &self,
        workspace: &Path,
        current: Option<&Snapshot>,
        now: SystemTime,
    ) -> Option<Arc<Loaded<T>>> {
        let mut inner = self.lock();
        inner.expire_idle(now, self.limits.idle);
        match (inner.lru.get_mut(workspace), current) {
            (Some(slot), Some(current)) if slot.snapshot == *current => {
                slot.used = now;
                return Some(Arc::clone(&slot.loaded));
            }
            (None, _) => return None,
            (Some(_), _) => {}
        }
        if let Some(slot) = inner.lru.pop(workspace) {
            inner.bytes -= slot.weight;
        }
        None
    }

    fn insert(
        &self,
        workspace: &Path,
        snapshot: Snapshot,
        loaded: Arc<Loaded<T>>,
        now: SystemTime,
    ) {
        let weight = weight_of(workspace, &loaded.files, &snapshot);
        if self.limits.entries == 0 || weight > self.limits.bytes / 4 {
            return;
        }
        let mut inner = self.lock();
        if let Some(slot) = inner.lru.pop(workspace) {
            inner.bytes -= slot.weight;
        }
        while inner.lru.len() >= self.limits.entries || inner.bytes + weight > self.limits.bytes {
            let Some((_, evicted)) = inner.lru.pop_lru() else {
                break;
            };
            inner.bytes -= evicted.weight;
        }
        inner.bytes += weight;
        inner.lru.put(
            workspace.to_path_buf(),
            Slot {
                snapshot,
                loaded,
                weight,
                used: now,
            },
        );
    }
}

impl<T> Inner<T> {
    /// Drops entries unused for longer than `idle`, oldest first (recency order is use order).
    fn expire_idle(&mut self, now: SystemTime, idle: Duration) {
        while let Some((_, slot)) = self.lru.peek_lru()
            && now
                .duration_since(slot.used)
                .is_ok_and(|unused| unused > idle)
        {
            if let Some((_, slot)) = self.lru.pop_lru() {
                self.bytes -= slot.weight;
            }
        }
    }
}

/// What an entry counts against [`CacheLimits::bytes`]: the text and paths it holds, plus its
/// bookkeeping.
fn weight_of(workspace: &Path, files: &[BootstrapFile], snapshot: &Snapshot) -> usize {
    let files: usize = files
        .iter()
        .map(|f| f.content.len() + f.path.as_os_str().len() + size_of::<BootstrapFile>())
        .sum();
    files + workspace.as_os_str().len() + snapshot.approx_bytes() + 256
}

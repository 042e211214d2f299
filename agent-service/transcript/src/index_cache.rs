//! The parsed `sessions.json`, kept between reads.
//!
//! Parsing the index costs 7 to 10 µs a session (about a second at 100,000 sessions), so a
//! store parses it once and answers later reads from memory. Before each read it checks with
//! one `stat` that the file at the path is still the version it parsed, and parses again if
//! not. Its own writes replace the cached version with the one just written, so a process
//! that is the only writer never parses the index after its first read.
//!
//! Why the check is sound: the index is only ever replaced by rename (see
//! [`crate::write_atomic`]), and the cache keeps the parsed version's file open, so that inode
//! cannot be freed and reused while it is cached: a replacement always has another inode
//! number. Size, modification and change times catch an editor that rewrites the file in
//! place, except one that keeps its size within one timestamp tick of the kernel.

use std::fs::{self, File, Metadata};
use std::io::{self, Read};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Result, io_at};
use crate::index::SessionIndex;

/// What identifies one version of the index file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stamp {
    /// No file at the path: the index is empty.
    Missing,
    /// The file whose metadata this is.
    File {
        dev: u64,
        ino: u64,
        len: u64,
        modified: (i64, i64),
        changed: (i64, i64),
    },
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self::File {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    #[cfg(not(unix))]
    fn of(meta: &Metadata) -> Self {
        let nanos = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Self::File {
            dev: 0,
            ino: 0,
            len: meta.len(),
            modified: (
                (nanos / 1_000_000_000) as i64,
                (nanos % 1_000_000_000) as i64,
            ),
            changed: (0, 0),
        }
    }

    /// The version now at `path`.
    fn at(path: &Path) -> Result<Self> {
        match fs::metadata(path) {
            Ok(meta) => Ok(Self::of(&meta)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Self::Missing),
            Err(e) => Err(io_at(path)(e)),
        }
    }
}

struct Cached {
    stamp: Stamp,
    /// The parsed version's file, held open so its inode is not reused (see the module docs).
    _file: Option<File>,
    index: Arc<SessionIndex>,
}

/// The last version of one index file this process read or wrote. Shared by the clones of a
/// [`crate::SessionStore`].
#[derive(Default)]
pub(crate) struct IndexCache {
    cached: Mutex<Option<Cached>>,
}

impl IndexCache {
    /// The index now at `path`: the cached version if the file is unchanged, otherwise parsed
    /// (and cached). A corrupt file is [`crate::Error::CorruptIndex`] and is not cached.
    pub(crate) fn current(&self, path: &Path) -> Result<Arc<SessionIndex>> {
        let now = Stamp::at(path)?;
        // Held while parsing: a concurrent reader would only parse the same file again.
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(hit) = cached.as_ref().filter(|c| c.stamp == now) {
            return Ok(Arc::clone(&hit.index));
        }
        let fresh = load(path)?;
        let index = Arc::clone(&fresh.index);
        *cached = Some(fresh);
        Ok(index)
    }

    /// The cached version if the file at `path` is still that version; `None` when it would
    /// have to be read (changed, never read, or being read by another thread right now). Costs
    /// one `stat` and never waits: for callers that must not block on a parse.
    pub(crate) fn current_if_cached(&self, path: &Path) -> Result<Option<Arc<SessionIndex>>> {
        let now = Stamp::at(path)?;
        let Ok(cached) = self.cached.try_lock() else {
            return Ok(None);
        };
        Ok(cached
            .as_ref()
            .filter(|c| c.stamp == now)
            .map(|hit| Arc::clone(&hit.index)))
    }

    /// Records `index` as the version just written to `path` through `file`. Call it with the
    /// index lock held, so no other writer can have replaced the file since.
    pub(crate) fn wrote(&self, path: &Path, file: File, index: SessionIndex) -> Result<()> {
        let stamp = Stamp::of(&file.metadata().map_err(io_at(path))?);
        *self.cached.lock().unwrap_or_else(PoisonError::into_inner) = Some(Cached {
            stamp,
            _file: Some(file),
            index: Arc::new(index),
        });
        Ok(())
    }

    /// Drops the cached version (after the file was moved away or replaced by other means).
    pub(crate) fn forget(&self) {
        *self.cached.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// Reads and parses the file at `path` through one handle, so the stamp and the bytes belong
/// to the same version even if the file is replaced meanwhile.
fn load(path: &Path) -> Result<Cached> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Cached {
                stamp: Stamp::Missing,
                _file: None,
                index: Arc::default(),
            });
        }
        Err(e) => return Err(io_at(path)(e)),
    };
    let meta = file.metadata().map_err(io_at(path))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(io_at(path))?;
    let index = SessionIndex::parse(&bytes, path)?;
    Ok(Cached {
        stamp: Stamp::of(&meta),
        _file: Some(file),
        index: Arc::new(index),
    })
}

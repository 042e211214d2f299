//! What a session may see of the agent's private memory (lesson L5, P-31, P-35).
//!
//! MEMORY.md and the files under `memory/` hold what the agent remembers about its user. They
//! reach only the agent's private main session (`agent:<id>:main`, heartbeat turns included):
//! direct chats on a channel, groups, channels, cron jobs and subagents get neither the file in
//! their Project Context nor the memory tools. The policy fails closed: a session kind not
//! listed as private sees nothing private.
//!
//! A file counts as private by name (`MEMORY.md` / `memory.md` in any directory, anything under
//! `memory/`) or by identity: a bootstrap file whose real path lies under `memory/`, or that is
//! the same inode as MEMORY.md (USER.md as a link to MEMORY.md, say), is private too. The
//! filter is the last step before rendering: anything that changes the injected files (the
//! bootstrap hooks of P-36, [`crate::hooks`]) runs before it, and the identities are judged on
//! the files as the hooks left them, so nothing can put MEMORY.md back.
//!
//! The files as read and their judgement are kept between renders ([`TurnFileCache`]) and
//! made again whenever a bootstrap file, `memory.md` or the workspace root changes; what a
//! hook leaves is judged on every render and never kept.

use std::{
    collections::BTreeSet,
    os::unix::fs::MetadataExt,
    path::{Path, PathBuf},
    sync::Arc,
};

use openclaw_tools::{MemoryGetTool, MemorySearchTool, Tool};
use openclaw_workspace::BootstrapFile;
use prompt_render as render;

use crate::{error::RuntimeError, sessions::SessionKind};

/// One file of a turn's Project Context, before the privacy filter: a bootstrap file as
/// loaded, or as a hook left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFile {
    /// The name the prompt shows (`SOUL.md`, `NOTES.md`).
    pub name: String,
    /// Where the content was read from (the privacy filter judges this path too).
    pub path: PathBuf,
    /// The text; empty when missing.
    pub content: String,
    /// Whether the file is missing (the prompt says so instead of showing content).
    pub missing: bool,
}

impl From<BootstrapFile> for InjectedFile {
    fn from(file: BootstrapFile) -> Self {
        Self {
            name: file.name.file_name().to_owned(),
            missing: file.is_missing(),
            path: file.path,
            content: file.content,
        }
    }
}

/// The names in the workspace root whose identity makes another file private: a file that is
/// the same inode as one of them is private whatever its name.
const MEMORY_FILE_NAMES: [&str; 2] = ["MEMORY.md", "memory.md"];

/// The raw bootstrap load of each workspace with the privacy judgement of the files as read,
/// kept between renders (see [`openclaw_workspace::BootstrapCache`]). The judgement depends on
/// the bootstrap files and on the identity of [`MEMORY_FILE_NAMES`], which the cache watches.
pub(crate) type TurnFileCache = openclaw_workspace::BootstrapCache<PrivateFiles>;

/// An empty [`TurnFileCache`] with the default bounds.
pub(crate) fn turn_file_cache() -> TurnFileCache {
    openclaw_workspace::BootstrapCache::new(
        openclaw_workspace::CacheLimits::default(),
        &MEMORY_FILE_NAMES,
    )
}

/// Which loaded bootstrap files are private by identity (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrivateFiles {
    /// Context-file paths, as rendered (`USER.md`), that are private by identity.
    by_identity: BTreeSet<String>,
}

impl PrivateFiles {
    /// Judges the files of the workspace `root` as the hooks left them (blocking: a few `stat`
    /// calls). A file a hook filled from under `memory/` is private whatever its name.
    pub fn scan(root: &Path, loaded: &[InjectedFile]) -> Self {
        let memory_ids: BTreeSet<(u64, u64)> = MEMORY_FILE_NAMES
            .iter()
            .filter_map(|name| std::fs::metadata(root.join(name)).ok())
            .map(|m| (m.dev(), m.ino()))
            .collect();
        let real_root = std::fs::canonicalize(root).ok();
        let by_identity = loaded
            .iter()
            .filter(|f| !f.missing)
            .filter(|f| {
                let same_inode = std::fs::metadata(&f.path)
                    .is_ok_and(|m| memory_ids.contains(&(m.dev(), m.ino())));
                let real_under_memory = std::fs::canonicalize(&f.path)
                    .ok()
                    .zip(real_root.as_ref())
                    .and_then(|(real, root)| real.strip_prefix(root).ok().map(Path::to_path_buf))
                    .is_some_and(|rel| is_private_path(&rel.to_string_lossy()));
                same_inode || real_under_memory
            })
            .map(|f| f.name.clone())
            .collect();
        Self { by_identity }
    }

    /// Whether the context file at `path` (as rendered) is private.
    pub fn is_private(&self, path: &str) -> bool {
        is_private_path(path) || self.by_identity.contains(path)
    }
}

/// Whether a workspace-relative path names private memory by its name: `MEMORY.md` in any
/// case and directory, or anything under a top-level `memory/`.
pub fn is_private_path(path: &str) -> bool {
    let path = path.replace('\\', "/");
    let path = path.trim_start_matches("./");
    let base = path.rsplit('/').next().unwrap_or(path);
    base.eq_ignore_ascii_case("memory.md")
        || path
            .split_once('/')
            .is_some_and(|(first, _)| first.eq_ignore_ascii_case("memory"))
}

/// The context files a session of `kind` may see: private files only in the private main
/// session. Run this last, after anything that changes the file list.
pub fn visible_files(
    files: Vec<render::ContextFile>,
    kind: SessionKind,
    private: &PrivateFiles,
) -> Vec<render::ContextFile> {
    if kind.is_private() {
        return files;
    }
    files
        .into_iter()
        .filter(|f| !private.is_private(&f.path))
        .collect()
}

/// The memory tools a run in a session of `kind` is offered (before tool policy): both in the
/// private main session, none elsewhere, since they read the same private files.
/// `memory_search` needs the agent's index (`None` when `memorySearch.enabled` is false).
pub fn memory_tools(
    kind: SessionKind,
    index: Option<Arc<openclaw_memory::AgentMemory>>,
) -> Vec<Arc<dyn Tool>> {
    if !kind.is_private() {
        return Vec::new();
    }
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    if let Some(index) = index {
        tools.push(Arc::new(MemorySearchTool::new(index)));
    }
    tools.push(Arc::new(MemoryGetTool));
    tools
}

/// Loads the bootstrap files of `cwd`, off the async workers.
pub(crate) async fn load_turn_files(cwd: &Path) -> Result<Vec<InjectedFile>, RuntimeError> {
    let cwd: PathBuf = cwd.to_path_buf();
    tokio::task::spawn_blocking(move || read_turn_files(&cwd))
        .await
        .map_err(|e| RuntimeError::Internal(format!("file task failed: {e}")))?
}

fn read_turn_files(cwd: &Path) -> Result<Vec<InjectedFile>, RuntimeError> {
    let files = openclaw_workspace::load_bootstrap_files(cwd)
        .map_err(crate::workspaces::workspace_error)?;
    Ok(injected(&files))
}

/// The bootstrap files of `cwd` as read, and which of them are private: kept ones when nothing
/// they depend on changed (checked on this task), else read now on the blocking pool. A turn
/// with a bootstrap hook takes the files from here but judges privacy again on what the hook
/// leaves (see the module docs); the hook's output is never kept.
pub(crate) async fn cached_turn_files(
    cache: &Arc<TurnFileCache>,
    cwd: &Path,
) -> Result<(Vec<InjectedFile>, PrivateFiles), RuntimeError> {
    // The wall clock, not the services' clock: file times come from it, and the cache keeps a
    // load only when every file is older than it by a margin.
    // A kept load is answered here (a dozen `fstatat` calls, like the index's one `stat`); only
    // a read goes to the blocking pool.
    if let Some(kept) = cache.kept(cwd, std::time::SystemTime::now()) {
        return Ok((injected(&kept.files), kept.derived.clone()));
    }
    let cache = Arc::clone(cache);
    let cwd: PathBuf = cwd.to_path_buf();
    tokio::task::spawn_blocking(move || turn_files_at(&cache, &cwd, std::time::SystemTime::now()))
        .await
        .map_err(|e| RuntimeError::Internal(format!("file task failed: {e}")))?
}

/// [`cached_turn_files`] with the wall clock read at `now` (blocking).
pub(crate) fn turn_files_at(
    cache: &TurnFileCache,
    cwd: &Path,
    now: std::time::SystemTime,
) -> Result<(Vec<InjectedFile>, PrivateFiles), RuntimeError> {
    let loaded = cache
        .load(cwd, now, |files| PrivateFiles::scan(cwd, &injected(files)))
        .map_err(crate::workspaces::workspace_error)?;
    Ok((injected(&loaded.files), loaded.derived.clone()))
}

fn injected(files: &[BootstrapFile]) -> Vec<InjectedFile> {
    files.iter().cloned().map(InjectedFile::from).collect()
}

/// Judges which of the files (after every hook) are private, off the async workers.
pub(crate) async fn scan_turn_files(
    cwd: &Path,
    files: &[InjectedFile],
) -> Result<PrivateFiles, RuntimeError> {
    let cwd: PathBuf = cwd.to_path_buf();
    let files = files.to_vec();
    tokio::task::spawn_blocking(move || PrivateFiles::scan(&cwd, &files))
        .await
        .map_err(|e| RuntimeError::Internal(format!("file task failed: {e}")))
}

#[cfg(test)]
mod cache_tests;

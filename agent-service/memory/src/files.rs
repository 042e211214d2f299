//! Which files are memory, finding them in a workspace and reading them, always through the
//! workspace's confinement (a link that leads outside is refused and named in a note).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use openclaw_workspace::{Confined, Error as WorkspaceError};

/// Memory files indexed at most (the rest are named in a note).
pub const MAX_FILES: usize = 500;
/// Directory levels below `memory/` that are searched.
const MAX_DEPTH: usize = 8;
/// Bytes of one memory file that are indexed or excerpted.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Whether `path` (relative, `/`-separated) names a memory file: `MEMORY.md` / `memory.md` in
/// the root, or a `.md` file under `memory/`. Paths with `.`/`..` components never do.
pub fn is_memory_path(path: &str) -> bool {
    let path = path.strip_prefix("./").unwrap_or(path);
    if path.starts_with('/') {
        return false;
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return false;
    }
    match parts.as_slice() {
        [name] => name.eq_ignore_ascii_case("memory.md"),
        ["memory", .., name] => has_md_extension(name),
        _ => false,
    }
}

fn has_md_extension(name: &str) -> bool {
    name.len() > 3 && name.to_ascii_lowercase().ends_with(".md")
}

/// A memory file, opened and stat'ed but not read yet.
#[derive(Debug)]
pub struct MemoryFile {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Size in bytes.
    pub size: u64,
    file: File,
    real: PathBuf,
}

impl MemoryFile {
    /// At most [`MAX_FILE_BYTES`] of the file as text (invalid UTF-8 replaced), and whether
    /// it was cut.
    pub fn read(self) -> Result<(String, bool), WorkspaceError> {
        read_open(self.file, self.real)
    }
}

/// The memory files of a workspace, with notes about files that were left out.
#[derive(Debug, Default)]
pub struct Found {
    /// `MEMORY.md` first, then `memory/**.md` in path order.
    pub files: Vec<MemoryFile>,
    /// Why some files were not searched, one sentence each.
    pub notes: Vec<String>,
}

/// Finds and opens the memory files (blocking).
pub fn discover(workspace: &Confined) -> Found {
    let mut candidates = vec!["MEMORY.md".to_owned(), "memory.md".to_owned()];
    let mut notes = Vec::new();
    match workspace.resolve_read("memory") {
        Ok(real) if real.is_dir() => walk(&real, "memory", 0, &mut candidates, &mut notes),
        Ok(_) | Err(WorkspaceError::NotFound { .. }) => {}
        Err(error) => notes.push(format!("memory/ was not searched: {error}")),
    }
    if candidates.len() > MAX_FILES + 2 {
        notes.push(format!(
            "only the first {MAX_FILES} memory files were searched; {} more were left out",
            candidates.len() - MAX_FILES - 2
        ));
        candidates.truncate(MAX_FILES + 2);
    }
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut files = Vec::new();
    for path in candidates {
        let opened = workspace.open_read(&path).and_then(|(file, real)| {
            let meta = file.metadata().map_err(|source| WorkspaceError::Io {
                path: real.clone(),
                source,
            })?;
            Ok((file, real, meta))
        });
        match opened {
            Ok((file, real, meta)) => {
                // MEMORY.md and memory.md are one file on a case-insensitive filesystem.
                if !seen.insert(real.clone()) {
                    continue;
                }
                files.push(MemoryFile {
                    path,
                    mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
                    size: meta.size(),
                    file,
                    real,
                });
            }
            Err(WorkspaceError::NotFound { .. } | WorkspaceError::NotAFile { .. }) => {}
            Err(error) => notes.push(format!("{path} was not searched: {error}")),
        }
    }
    Found { files, notes }
}

/// Collects `*.md` below `dir` (whose workspace-relative path is `rel`) in name order.
/// Symbolic links to directories are not followed (no loops); linked files are, through the
/// confinement check when they are opened.
fn walk(dir: &Path, rel: &str, depth: usize, out: &mut Vec<String>, notes: &mut Vec<String>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            notes.push(format!("{rel}/ could not be listed: {error}"));
            return;
        }
    };
    let mut entries: Vec<(String, std::fs::FileType)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some((name, e.file_type().ok()?))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in entries {
        let path = format!("{rel}/{name}");
        if kind.is_dir() {
            if depth + 1 < MAX_DEPTH {
                walk(&dir.join(&name), &path, depth + 1, out, notes);
            }
        } else if has_md_extension(&name) {
            out.push(path);
        }
    }
}

/// At most [`MAX_FILE_BYTES`] of a workspace file: its text, real path, and whether it was cut.
pub fn read_capped(
    workspace: &Confined,
    path: &str,
) -> Result<(String, PathBuf, bool), WorkspaceError> {
    let (file, real) = workspace.open_read(path)?;
    let (text, cut) = read_open(file, real.clone())?;
    Ok((text, real, cut))
}

fn read_open(file: File, real: PathBuf) -> Result<(String, bool), WorkspaceError> {
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| WorkspaceError::Io { path: real, source })?;
    let cut = bytes.len() as u64 > MAX_FILE_BYTES;
    if cut {
        bytes.truncate(usize::try_from(MAX_FILE_BYTES).unwrap_or(usize::MAX));
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_paths() {
        for ok in [
            "MEMORY.md",
            "memory.md",
            "./MEMORY.md",
            "memory/2026-03-03.md",
            "memory/work/a.MD",
        ] {
            assert!(is_memory_path(ok), "{ok}");
        }
        for bad in [
            "AGENTS.md",
            "memory/../AGENTS.md",
            "memory/notes.txt",
            "/etc/MEMORY.md",
            "sub/MEMORY.md",
            "memory/.md",
            "memory//a.md",
            "",
        ] {
            assert!(!is_memory_path(bad), "{bad}");
        }
    }
}

//! Finding the skills inside one root.
//!
//! A root that itself holds SKILL.md is one skill. Otherwise its subdirectories are examined
//! in name order, depth first: a directory with SKILL.md is a skill (never searched further,
//! so its `references/` or `scripts/` are not mistaken for skills); one without is a grouping
//! folder, searched down to the root's depth limit. Hidden directories and `node_modules` are
//! not candidates. Every directory and SKILL.md must resolve inside the root's real path or an
//! allowed symlink target. Limits bound the directories examined, the skills loaded and the
//! bytes read; whatever they cut off is reported.

use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::consulted::Consulted;
use crate::frontmatter::{self, Frontmatter};
use crate::report::{SkipReason, Skipped};
use crate::roots::Root;

/// The discovery limits that apply while scanning.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanLimits {
    pub max_candidates: u64,
    pub max_skills: u64,
    pub max_file_bytes: u64,
}

/// A skill read from disk, before merging and gating.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub root: Root,
    /// Absolute path of SKILL.md as reached through the root.
    pub file: PathBuf,
    /// Its real path.
    pub real_file: PathBuf,
    pub name: String,
    pub description: String,
    pub content: Vec<u8>,
    pub frontmatter: Frontmatter,
}

const SKILL_FILE: &str = "SKILL.md";

/// Scans one root, appending what it loads and what it skips, and stamping in `consulted`
/// every path it reads just before reading it.
pub(crate) fn scan_root(
    root: &Root,
    allowed_targets: &[PathBuf],
    limits: ScanLimits,
    loaded: &mut Vec<Loaded>,
    skipped: &mut Vec<Skipped>,
    consulted: &mut Consulted,
) {
    consulted.record(&root.dir);
    let real_root = match real_dir(root) {
        Ok(real) => real,
        Err(None) => return,
        Err(Some(reason)) => {
            return skipped.push(Skipped {
                path: root.dir.clone(),
                name: None,
                root: Some(root.clone()),
                reason,
            });
        }
    };
    let mut scan = Scan {
        root,
        visited: BTreeSet::from([real_root.clone()]),
        real_root,
        allowed_targets,
        limits,
        candidates: 0,
        skills: 0,
        loaded,
        skipped,
        consulted,
    };
    let root_file = root.dir.join(SKILL_FILE);
    match fs::symlink_metadata(&root_file) {
        Ok(_) => scan.load(&root.dir, &root_file),
        Err(error) if error.kind() == io::ErrorKind::NotFound => scan.walk(&root.dir, 0),
        Err(error) => scan.skip(&root_file, unreadable(&error)),
    }
}

/// The root's real path. `Err(None)` is an absent default root, which is not a problem:
/// most agents have no `.agents/skills`.
fn real_dir(root: &Root) -> Result<PathBuf, Option<SkipReason>> {
    match fs::metadata(&root.dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(Some(SkipReason::NotAFileOrDirectory)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Err(root.kind.is_configured().then_some(SkipReason::RootMissing));
        }
        Err(error) => return Err(Some(unreadable(&error))),
    }
    fs::canonicalize(&root.dir).map_err(|error| Some(unreadable(&error)))
}

struct Scan<'a> {
    root: &'a Root,
    real_root: PathBuf,
    allowed_targets: &'a [PathBuf],
    limits: ScanLimits,
    candidates: u64,
    skills: u64,
    visited: BTreeSet<PathBuf>,
    loaded: &'a mut Vec<Loaded>,
    skipped: &'a mut Vec<Skipped>,
    consulted: &'a mut Consulted,
}

impl Scan<'_> {
    fn skip(&mut self, path: &Path, reason: SkipReason) {
        self.skip_named(path, None, reason);
    }

    fn skip_named(&mut self, path: &Path, name: Option<String>, reason: SkipReason) {
        self.skipped.push(Skipped {
            path: path.to_path_buf(),
            name,
            root: Some(self.root.clone()),
            reason,
        });
    }

    fn contained(&self, real: &Path) -> bool {
        real.starts_with(&self.real_root)
            || self.allowed_targets.iter().any(|t| real.starts_with(t))
    }

    /// Examines the subdirectories of `dir`, which sits `depth` levels below the root.
    fn walk(&mut self, dir: &Path, depth: usize) {
        let children = match self.child_dirs(dir) {
            Ok(children) => children,
            Err(error) => return self.skip(dir, unreadable(&error)),
        };
        for (index, child) in children.iter().enumerate() {
            if self.candidates >= self.limits.max_candidates {
                let limit = self.limits.max_candidates;
                for rest in &children[index..] {
                    self.skip(rest, SkipReason::CandidateLimit { limit });
                }
                return;
            }
            self.candidates += 1;
            self.visit(child, depth + 1);
        }
    }

    fn visit(&mut self, dir: &Path, depth: usize) {
        // Not stamped here: its parent's listing was (an entry added, removed or renamed),
        // a link among its entries was, and so is what is read below (its SKILL.md, or its
        // own listing).
        let real = match fs::canonicalize(dir) {
            Ok(real) => real,
            Err(error) => return self.skip(dir, unreadable(&error)),
        };
        if !self.contained(&real) {
            return self.skip(dir, SkipReason::SymlinkEscape { target: real });
        }
        if !self.visited.insert(real.clone()) {
            return self.skip(dir, SkipReason::AlreadyScanned { target: real });
        }
        let file = dir.join(SKILL_FILE);
        match fs::symlink_metadata(&file) {
            Ok(_) => return self.load(dir, &file),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return self.skip(&file, unreadable(&error)),
        }
        let max_depth = self.root.kind.max_depth();
        if depth < max_depth {
            return self.walk(dir, depth);
        }
        // A grouping folder at the last level: say so if it hides anything.
        match self.child_dirs(dir) {
            Ok(children) if children.is_empty() => {}
            Ok(_) => self.skip(dir, SkipReason::DepthLimit { max_depth }),
            Err(error) => self.skip(dir, unreadable(&error)),
        }
    }

    /// Subdirectories that may hold skills, sorted by name. Broken symlinks are reported.
    fn child_dirs(&mut self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        self.consulted.record(dir);
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let text = name.to_string_lossy();
            if text.starts_with('.') || text == "node_modules" {
                continue;
            }
            let path = entry.path();
            let file_type = entry.file_type()?;
            if file_type.is_dir() {
                out.push(path);
            } else if file_type.is_symlink() {
                self.consulted.record(&path);
                match fs::metadata(&path) {
                    Ok(meta) if meta.is_dir() => out.push(path),
                    Ok(_) => {}
                    Err(error) => self.skip(&path, unreadable(&error)),
                }
            }
        }
        out.sort();
        Ok(out)
    }

    fn load(&mut self, dir: &Path, file: &Path) {
        if self.skills >= self.limits.max_skills {
            let limit = self.limits.max_skills;
            return self.skip(file, SkipReason::SkillLimit { limit });
        }
        self.consulted.record(file);
        let real_file = match fs::canonicalize(file) {
            Ok(real) => real,
            Err(error) => return self.skip(file, unreadable(&error)),
        };
        if !self.contained(&real_file) {
            return self.skip(file, SkipReason::SymlinkEscape { target: real_file });
        }
        let content = match read_bounded(&real_file, self.limits.max_file_bytes) {
            Ok(Ok(content)) => content,
            Ok(Err(reason)) => return self.skip(file, reason),
            Err(error) => return self.skip(file, unreadable(&error)),
        };
        let parsed = std::str::from_utf8(&content)
            .map_err(|e| format!("SKILL.md is not UTF-8: {e}"))
            .and_then(frontmatter::parse);
        let frontmatter = match parsed {
            Ok(frontmatter) => frontmatter,
            Err(message) => {
                return self.skip(file, SkipReason::MalformedFrontmatter { message });
            }
        };
        let fallback = dir
            .file_name()
            .map(|n| n.to_string_lossy().trim().to_owned())
            .unwrap_or_default();
        let name = frontmatter.name.clone().unwrap_or(fallback);
        if name.is_empty() {
            let message = "no name and no directory name to fall back on".to_owned();
            return self.skip(file, SkipReason::MalformedFrontmatter { message });
        }
        let Some(description) = frontmatter.description.clone() else {
            return self.skip_named(file, Some(name), SkipReason::MissingDescription);
        };
        self.skills += 1;
        self.loaded.push(Loaded {
            root: self.root.clone(),
            file: file.to_path_buf(),
            real_file,
            name,
            description,
            content,
            frontmatter,
        });
    }
}

/// Reads at most `limit` bytes; a larger file (by its size, or by what it yields while being
/// read) is refused without reading the rest. Opened non-blocking, so a FIFO or device under
/// the name (anyone who can write a skill folder can make one) is opened at once and refused
/// as not a regular file instead of making discovery wait for a writer.
fn read_bounded(path: &Path, limit: u64) -> io::Result<Result<Vec<u8>, SkipReason>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Err(SkipReason::NotAFileOrDirectory));
    }
    if meta.len() > limit {
        return Ok(Err(SkipReason::FileTooLarge {
            size: meta.len(),
            limit,
        }));
    }
    let mut content = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut content)?;
    let read = u64::try_from(content.len()).unwrap_or(u64::MAX);
    if read > limit {
        return Ok(Err(SkipReason::FileTooLarge { size: read, limit }));
    }
    Ok(Ok(content))
}

fn unreadable(error: &io::Error) -> SkipReason {
    SkipReason::Unreadable {
        error: error.to_string(),
    }
}

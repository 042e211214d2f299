//! Allowlist entries: globs over the *resolved executable path* of each program a command
//! runs, and how a program name is resolved.
//!
//! A bare name is looked up on the `PATH` the command runs with (an input, so judgements do
//! not depend on where the service was started): the first executable file of that name.
//! Relative `PATH` entries are skipped (the exec tool drops them too). A name with a `/` is
//! taken relative to the working directory. Either way the file is then canonicalized, so a
//! link is judged as the file it points to and `/bin/ls` matches an entry for `/usr/bin/ls`
//! on a merged-`/usr` system. A program that cannot be resolved is never covered.
//!
//! Patterns use `globset` syntax: `*` and `?` stay inside one path component, `**` crosses
//! them, `{a,b}` alternates, `[...]` is a class. Matching is case-sensitive (Linux paths are)
//! and `~` is not expanded: a pattern that is not absolute matches nothing.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// Compiled allowlist patterns.
#[derive(Debug, Clone)]
pub struct Allowlist {
    patterns: Vec<String>,
    set: GlobSet,
    invalid: Vec<String>,
}

impl Default for Allowlist {
    fn default() -> Self {
        Self::new(Vec::<String>::new())
    }
}

impl PartialEq for Allowlist {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl Eq for Allowlist {}

impl Allowlist {
    /// Compiles `patterns`; a pattern that is not absolute or is not a valid glob is kept out
    /// and reported by [`Self::warnings`].
    pub fn new<I, S>(patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut kept: Vec<String> = Vec::new();
        let mut invalid = Vec::new();
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            let pattern: String = pattern.into();
            let pattern = pattern.trim().to_owned();
            if kept.contains(&pattern) || pattern.is_empty() {
                continue;
            }
            if !pattern.starts_with('/') {
                invalid.push(format!(
                    "allowlist entry {pattern:?} is ignored: entries match resolved absolute \
                     paths (\"/usr/bin/git\"); names and ~ are not expanded"
                ));
                continue;
            }
            match glob(&pattern) {
                Ok(glob) => {
                    builder.add(glob);
                    kept.push(pattern);
                }
                Err(e) => invalid.push(format!("allowlist entry {pattern:?} is ignored: {e}")),
            }
        }
        let set = match builder.build() {
            Ok(set) => set,
            Err(e) => {
                // Fail closed: no entry applies, and the operator is told.
                invalid.push(format!(
                    "the allowlist could not be compiled, so no entry applies: {e}"
                ));
                GlobSet::empty()
            }
        };
        Self {
            patterns: kept,
            set,
            invalid,
        }
    }

    /// The same list with `more` patterns added.
    pub fn extended<I, S>(&self, more: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let all: Vec<String> = self
            .patterns
            .iter()
            .cloned()
            .chain(more.into_iter().map(Into::into))
            .collect();
        let mut out = Self::new(all);
        out.invalid.splice(0..0, self.invalid.iter().cloned());
        out
    }

    /// The patterns in use, in order.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether a resolved path matches an entry.
    pub fn covers(&self, resolved: &Path) -> bool {
        self.set.is_match(resolved)
    }

    /// One warning per pattern that was kept out.
    pub fn warnings(&self) -> &[String] {
        &self.invalid
    }
}

fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

/// `PATH` as the exec tool passes it on: this process's `PATH` without empty or relative
/// entries.
pub fn process_search_path() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|p| p.is_absolute())
        .collect();
    std::env::join_paths(kept).unwrap_or_default()
}

/// The canonical file `program` runs: a name with a `/` relative to `cwd` (absolute ones as
/// they are), a bare name through `search_path`. `None` when it cannot be known.
pub fn resolve(program: &str, search_path: &OsStr, cwd: Option<&Path>) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let path = Path::new(program);
        let full = if path.is_absolute() {
            path.to_path_buf()
        } else {
            cwd?.join(path)
        };
        return executable(&full)
            .then(|| full.canonicalize().ok())
            .flatten();
    }
    std::env::split_paths(search_path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| executable(candidate))
        .and_then(|found| found.canonicalize().ok())
}

/// A regular file (after links) with an execute bit.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Directories a safe bin must resolve into (after canonicalization).
pub const SYSTEM_DIRS: [&str; 6] = [
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/sbin",
];

/// Whether a resolved file sits directly in a system directory.
pub fn in_system_dir(resolved: &Path) -> bool {
    resolved
        .parent()
        .is_some_and(|dir| SYSTEM_DIRS.iter().any(|s| dir == Path::new(s)))
}

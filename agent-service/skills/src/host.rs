//! What the gates ask of the machine: platform, environment variables, programs on PATH.
//!
//! Behind a trait so discovery stays a function of its inputs: tests pass a fake, the service
//! passes [`ProcessHost`], and a remote node could answer for its own machine.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The platforms skill frontmatter names in `metadata.openclaw.os` (Node's `process.platform`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Platform {
    /// macOS.
    Darwin,
    /// Linux.
    Linux,
    /// Windows.
    Win32,
    /// Anything else; matches no `os` entry.
    Other,
}

impl Platform {
    /// The platform this binary was built for.
    pub fn current() -> Self {
        if cfg!(target_os = "macos") {
            Self::Darwin
        } else if cfg!(target_os = "linux") {
            Self::Linux
        } else if cfg!(windows) {
            Self::Win32
        } else {
            Self::Other
        }
    }

    /// The spelling used in frontmatter.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Darwin => "darwin",
            Self::Linux => "linux",
            Self::Win32 => "win32",
            Self::Other => "other",
        }
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The machine facts the gates need.
pub trait Host {
    /// The platform skills run on.
    fn platform(&self) -> Platform;
    /// Whether the environment variable is set to a non-empty value.
    fn env_is_set(&self, name: &str) -> bool;
    /// Whether an executable of this name is on PATH.
    fn has_bin(&self, name: &str) -> bool;
    /// The files [`Host::has_bin`] looks at for `name`, so a caller can stamp them and tell
    /// when its answer may change; empty when the answer does not come from files.
    fn bin_candidates(&self, _name: &str) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// Directories OpenClaw also searches on Unix, because services often start with a minimal
/// PATH that misses Homebrew and `/usr/local`.
const UNIX_DEFAULT_BIN_DIRS: [&str; 7] = [
    "/opt/homebrew/bin",
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// The real process: its environment and a PATH captured at construction.
#[derive(Debug, Clone)]
pub struct ProcessHost {
    dirs: Vec<PathBuf>,
    extensions: Vec<OsString>,
}

impl ProcessHost {
    /// Captures `PATH` (plus OpenClaw's default Unix directories) and, on Windows, `PATHEXT`.
    pub fn from_process() -> Self {
        let mut host = Self::with_path(&std::env::var_os("PATH").unwrap_or_default());
        if cfg!(unix) {
            host.dirs
                .extend(UNIX_DEFAULT_BIN_DIRS.iter().map(PathBuf::from));
        }
        if cfg!(windows) {
            let pathext = std::env::var_os("PATHEXT")
                .unwrap_or_else(|| OsString::from(".EXE;.CMD;.BAT;.COM"));
            host.extensions.extend(
                pathext
                    .to_string_lossy()
                    .split(';')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .map(OsString::from),
            );
        }
        host
    }

    /// Searches exactly the directories of this PATH-style list (no defaults added).
    pub fn with_path(path: &std::ffi::OsStr) -> Self {
        Self {
            dirs: std::env::split_paths(path)
                .filter(|d| !d.as_os_str().is_empty())
                .collect(),
            extensions: vec![OsString::new()],
        }
    }
}

impl Host for ProcessHost {
    fn platform(&self) -> Platform {
        Platform::current()
    }

    fn env_is_set(&self, name: &str) -> bool {
        !name.is_empty() && std::env::var_os(name).is_some_and(|v| !v.is_empty())
    }

    fn has_bin(&self, name: &str) -> bool {
        self.bin_candidates(name)
            .iter()
            .any(|file| is_executable(file))
    }

    fn bin_candidates(&self, name: &str) -> Vec<PathBuf> {
        // A requirement names a program, never a path to probe.
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Vec::new();
        }
        self.dirs
            .iter()
            .flat_map(|dir| {
                self.extensions.iter().map(move |ext| {
                    let mut file = OsString::from(name);
                    file.push(ext);
                    dir.join(file)
                })
            })
            .collect()
    }
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

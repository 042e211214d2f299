//! Installing the pinned `@openai/codex` npm package into `.tools/` and
//! finding its native binary.
//!
//! The install is cached: a second run finds the binary, checks its version
//! and returns at once. Parallel test threads and processes are serialized
//! by an exclusive lock on `.tools/codex-<version>.lock`, and npm installs
//! into a staging folder that is renamed into place only once the binary has
//! been verified, so an interrupted install is never mistaken for a good one.

use std::{
    fs::{self, File},
    path::{Path, PathBuf},
    process::{Command, Output},
};

use crate::error::PeerError;

/// The npm package that ships the Codex CLI.
pub const CODEX_NPM_PACKAGE: &str = "@openai/codex";
/// The pinned Codex version, whose app-server protocol the mapping and the harness follow.
pub const CODEX_VERSION: &str = "0.169.0";

/// How much of a failing command's stderr goes into an error message.
const STDERR_TAIL_CHARS: usize = 4_000;

/// An installed, version-checked Codex binary.
#[derive(Debug, Clone)]
pub struct CodexInstall {
    root: PathBuf,
    binary: PathBuf,
    version: String,
}

/// `<workspace root>/.tools`, the folder `.gitignore` keeps out of git.
pub fn default_tools_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The workspace root is the nearest ancestor holding Cargo.lock; fall
    // back to the layout (prompt-service/codex-peer) if there is none yet.
    let root = manifest
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .or_else(|| manifest.ancestors().nth(2))
        .unwrap_or(manifest);
    root.join(".tools")
}

impl CodexInstall {
    /// Installs the pinned Codex into [`default_tools_dir`] unless it is
    /// already there, and returns it.
    pub fn ensure() -> Result<Self, PeerError> {
        Self::ensure_in(&default_tools_dir())
    }

    /// Installs the pinned Codex into `tools_dir/codex-<version>` unless it
    /// is already there, and returns it. Blocks while another thread or
    /// process holds the install lock.
    pub fn ensure_in(tools_dir: &Path) -> Result<Self, PeerError> {
        fs::create_dir_all(tools_dir).map_err(|e| PeerError::io("create", tools_dir, e))?;
        let lock_path = tools_dir.join(format!("codex-{CODEX_VERSION}.lock"));
        let lock = File::create(&lock_path).map_err(|e| PeerError::io("open", &lock_path, e))?;
        // Held until `lock` is dropped at the end of this function.
        lock.lock()
            .map_err(|e| PeerError::io("lock", &lock_path, e))?;

        let root = tools_dir.join(format!("codex-{CODEX_VERSION}"));
        if let Ok(found) = Self::verify(&root) {
            return Ok(found);
        }
        let staging = tools_dir.join(format!("codex-{CODEX_VERSION}.partial"));
        for stale in [&root, &staging] {
            if stale.exists() {
                fs::remove_dir_all(stale).map_err(|e| PeerError::io("remove", stale, e))?;
            }
        }
        npm_install(&staging)?;
        Self::verify(&staging)?;
        fs::rename(&staging, &root).map_err(|e| PeerError::io("rename into", &root, e))?;
        Self::verify(&root)
    }

    /// The native Codex binary (it needs no Node.js at run time).
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The install folder (`.tools/codex-<version>`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What `codex --version` printed, for example `codex-cli 0.169.0`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Runs `codex app-server generate-json-schema --out <out> --experimental`.
    /// Experimental, because `dynamicTools` and `collaborationMode` are
    /// experimental fields.
    pub fn generate_json_schema(&self, out: &Path) -> Result<(), PeerError> {
        let home = private_home()?;
        let mut command = Command::new(&self.binary);
        command
            .args([
                "app-server",
                "generate-json-schema",
                "--experimental",
                "--out",
            ])
            .arg(out)
            .env("CODEX_HOME", home.path());
        let output = command
            .output()
            .map_err(|e| PeerError::io("run", &self.binary, e))?;
        check_codex(&output, "app-server generate-json-schema --experimental")
    }

    fn verify(root: &Path) -> Result<Self, PeerError> {
        let binary = locate_binary(root)?;
        let home = private_home()?;
        let output = Command::new(&binary)
            .arg("--version")
            .env("CODEX_HOME", home.path())
            .output()
            .map_err(|e| PeerError::io("run", &binary, e))?;
        check_codex(&output, "--version")?;
        let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if version != format!("codex-cli {CODEX_VERSION}") {
            return Err(PeerError::VersionMismatch {
                binary,
                expected: CODEX_VERSION,
                found: version,
            });
        }
        Ok(Self {
            root: root.to_owned(),
            binary,
            version,
        })
    }
}

/// A throwaway CODEX_HOME: even `codex --version` writes helper files under
/// its home, and tests must not read or write the user's `~/.codex`.
fn private_home() -> Result<tempfile::TempDir, PeerError> {
    tempfile::tempdir().map_err(|e| PeerError::io("create", "a temp dir", e))
}

fn package_spec() -> String {
    format!("{CODEX_NPM_PACKAGE}@{CODEX_VERSION}")
}

fn npm_install(dir: &Path) -> Result<(), PeerError> {
    fs::create_dir_all(dir).map_err(|e| PeerError::io("create", dir, e))?;
    let manifest = dir.join("package.json");
    fs::write(
        &manifest,
        "{\n  \"name\": \"openclaw-codex-peer\",\n  \"private\": true\n}\n",
    )
    .map_err(|e| PeerError::io("write", &manifest, e))?;
    let spec = package_spec();
    let output = Command::new("npm")
        .arg("install")
        .arg(&spec)
        .args([
            "--save-exact",
            // The native binary is an optional dependency chosen by platform;
            // a user config that omits optional dependencies would drop it.
            "--include=optional",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .current_dir(dir)
        .output()
        .map_err(PeerError::NpmMissing)?;
    if output.status.success() {
        Ok(())
    } else {
        Err(PeerError::NpmFailed {
            package: spec,
            status: output.status.to_string(),
            stderr: tail(&output.stderr),
        })
    }
}

/// npm's platform package and Rust target triple for this machine.
fn platform() -> Option<(&'static str, &'static str)> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some(("linux-x64", "x86_64-unknown-linux-musl")),
        ("linux", "aarch64") => Some(("linux-arm64", "aarch64-unknown-linux-musl")),
        ("macos", "x86_64") => Some(("darwin-x64", "x86_64-apple-darwin")),
        ("macos", "aarch64") => Some(("darwin-arm64", "aarch64-apple-darwin")),
        ("windows", "x86_64") => Some(("win32-x64", "x86_64-pc-windows-msvc")),
        ("windows", "aarch64") => Some(("win32-arm64", "aarch64-pc-windows-msvc")),
        _ => None,
    }
}

fn binary_name() -> &'static str {
    if cfg!(windows) { "codex.exe" } else { "codex" }
}

/// The expected path first (`@openai/codex-<platform>/vendor/<triple>/bin/codex`);
/// failing that, any `@openai/*/vendor/*/bin/codex` in name order, which
/// also covers releases that bundled the vendor folder in the main package.
fn locate_binary(root: &Path) -> Result<PathBuf, PeerError> {
    let scope = root.join("node_modules").join("@openai");
    if let Some((package, triple)) = platform() {
        let expected = scope
            .join(format!("codex-{package}"))
            .join("vendor")
            .join(triple)
            .join("bin")
            .join(binary_name());
        if expected.is_file() {
            return Ok(expected);
        }
    }
    let mut found = Vec::new();
    for package in sorted_dirs(&scope) {
        for target in sorted_dirs(&package.join("vendor")) {
            let candidate = target.join("bin").join(binary_name());
            if candidate.is_file() {
                found.push(candidate);
            }
        }
    }
    found
        .into_iter()
        .next()
        .ok_or_else(|| PeerError::BinaryNotFound {
            searched: scope,
            package: package_spec(),
        })
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn check_codex(output: &Output, command: &str) -> Result<(), PeerError> {
    if output.status.success() {
        Ok(())
    } else {
        Err(PeerError::CodexFailed {
            command: command.to_owned(),
            status: output.status.to_string(),
            stderr: tail(&output.stderr),
        })
    }
}

fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    let skip = text.chars().count().saturating_sub(STDERR_TAIL_CHARS);
    text.chars().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_dir_is_the_ignored_folder_at_the_workspace_root() {
        let dir = default_tools_dir();
        assert!(dir.ends_with(".tools"), "{}", dir.display());
        let root = dir.parent().expect("root");
        assert!(root.join("Cargo.lock").is_file(), "{}", root.display());
        let ignore = fs::read_to_string(root.join(".gitignore")).expect(".gitignore");
        assert!(
            ignore
                .lines()
                .any(|l| l.trim() == "/.tools" || l.trim() == ".tools/"),
            ".tools must stay ignored: {ignore}"
        );
    }

    #[test]
    fn a_folder_without_a_binary_is_reported_with_the_place_searched() {
        let empty = tempfile::tempdir().expect("tempdir");
        let error = locate_binary(empty.path()).expect_err("nothing installed");
        assert!(matches!(error, PeerError::BinaryNotFound { .. }), "{error}");
        assert!(error.to_string().contains("@openai"), "{error}");
    }

    #[test]
    fn stderr_tails_are_bounded() {
        let long = "x".repeat(STDERR_TAIL_CHARS * 2);
        assert_eq!(tail(long.as_bytes()).chars().count(), STDERR_TAIL_CHARS);
    }
}

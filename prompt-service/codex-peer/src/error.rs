//! The crate's one error type.

use std::path::PathBuf;

/// Why the pinned Codex peer could not be installed or used. Every message
/// says what to do, because these errors surface as test failures in CI.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// A filesystem operation failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// `npm` could not be started.
    #[error(
        "could not run `npm` ({0}); the Codex schema tests install @openai/codex from the npm registry, so Node.js and npm must be on PATH"
    )]
    NpmMissing(std::io::Error),
    /// `npm install` exited with an error.
    #[error(
        "`npm install {package}` failed ({status}); check network access to the npm registry. npm said:\n{stderr}"
    )]
    NpmFailed {
        /// The package spec that was installed.
        package: String,
        /// Exit status.
        status: String,
        /// The end of npm's stderr.
        stderr: String,
    },
    /// The npm install finished but no Codex binary for this platform was found.
    #[error("no Codex binary found under {searched} after installing {package}")]
    BinaryNotFound {
        /// Where the search started.
        searched: PathBuf,
        /// The package spec that was installed.
        package: String,
    },
    /// The installed binary reports another version than the pinned one.
    #[error("{binary} reports {found:?}, expected \"codex-cli {expected}\"")]
    VersionMismatch {
        /// The binary.
        binary: PathBuf,
        /// The pinned version.
        expected: &'static str,
        /// What `codex --version` printed.
        found: String,
    },
    /// A Codex subcommand failed.
    #[error("`codex {command}` failed ({status}): {stderr}")]
    CodexFailed {
        /// The subcommand line.
        command: String,
        /// Exit status.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// The generated schema folder lacks a schema we need.
    #[error("schema {name} not found in {dir} (neither v2/{name}.json nor the bundled v2 schema)")]
    SchemaMissing {
        /// Definition name, for example `ThreadStartParams`.
        name: &'static str,
        /// The generated folder.
        dir: PathBuf,
    },
    /// A generated schema file is not valid JSON or not a usable schema.
    #[error("schema {name}: {reason}")]
    SchemaUnusable {
        /// Definition name.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Params violate the schema of their method.
    #[error("{method} params violate the Codex {version} schema:\n  {}", violations.join("\n  "))]
    Violation {
        /// The app-server method, for example `thread/start`.
        method: &'static str,
        /// `codex --version` of the binary that generated the schema.
        version: String,
        /// One line per violation, each starting with the JSON pointer of the value.
        violations: Vec<String>,
    },
}

impl PeerError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

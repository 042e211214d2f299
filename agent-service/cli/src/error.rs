//! What can go wrong in a command, and the exit code each failure gets.
//!
//! Exit codes follow BSD `sysexits.h` so scripts can tell "the server said
//! no" from "there is no server" from "the model run failed"; the table is
//! [`EXIT_CODES_HELP`], shown by `openclaw --help`.

use std::path::PathBuf;

use tonic::Code;

/// The exit-code table, for `--help`.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0   success
  1   the message was rejected (or a run failed with no code below)
  2   bad command line
  64  invalid flags or configuration (listen address, openclaw.json)
  65  the server refused an argument (INVALID_ARGUMENT)
  66  unknown agent or session (NOT_FOUND)
  69  the server is unreachable (UNAVAILABLE)
  70  internal error or unexpected status
  73  cannot bind a listen address or write the state dir
  74  reading stdin or writing stdout failed
  75  try again later (RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, ABORTED, or no
      answer within --call-timeout / --idle-timeout)
  77  permission denied (PERMISSION_DENIED, UNAUTHENTICATED: check --token)
  78  failed precondition (FAILED_PRECONDITION, e.g. a vanished workspace)
  130 interrupted (Ctrl-C, SIGINT)
  143 terminated (SIGTERM)
A failed run exits with the code of its error's gRPC code, as an RPC would.
Output into a pipe that closes early (`openclaw ... | head`) ends the command
quietly with 0.";

/// A failed command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The server answered an RPC with an error status.
    #[error("{}", status_text(.0))]
    Status(#[from] tonic::Status),
    /// A run started but ended with an error event.
    #[error("{message} ({code})")]
    Run {
        /// The gRPC code name the runtime chose, e.g. "UNAVAILABLE".
        code: String,
        /// What went wrong.
        message: String,
    },
    /// No connection to the server.
    #[error("cannot connect to {server}: {detail}")]
    Connect {
        /// The server address tried.
        server: String,
        /// The transport's reason.
        detail: String,
    },
    /// A bad flag value or an unusable configuration.
    #[error("{0}")]
    Config(String),
    /// A listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// A state file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The state dir cannot be created or written (the error names it).
    #[error("{0}")]
    StateDir(std::io::Error),
    /// A service did not come up.
    #[error("{0}")]
    Startup(String),
    /// A service did not stop cleanly.
    #[error("{0}")]
    Shutdown(String),
    /// A bug or an unexpected answer.
    #[error("internal error: {0}")]
    Internal(String),
    /// No answer in time: a call past --call-timeout, a stream silent past --idle-timeout.
    #[error("{0}")]
    Timeout(String),
    /// Terminal input or output failed.
    #[error("terminal i/o: {0}")]
    Io(#[from] std::io::Error),
}

impl CliError {
    /// The process exit code for this failure (see the module docs).
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Status(status) if is_call_timeout(status) => 75,
            Self::Status(status) => code_exit(status.code()),
            Self::Run { code, .. } => code_name(code).map_or(1, code_exit),
            Self::Connect { .. } => 69,
            Self::Config(_) => 64,
            Self::Bind { .. } | Self::Write { .. } | Self::StateDir(_) => 73,
            Self::Startup(_) | Self::Shutdown(_) | Self::Internal(_) => 70,
            Self::Timeout(_) => 75,
            Self::Io(_) => 74,
        }
    }

    /// True when stdout (or stderr) is a pipe whose reader has gone (`openclaw ... | head`):
    /// the reader has what it wanted, so the command ends quietly.
    pub fn is_closed_pipe(&self) -> bool {
        matches!(self, Self::Io(error) if error.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

/// The status tonic's client makes of a call that outlived the deadline this command set
/// on it (`--call-timeout`): CANCELLED with tonic's own words, which say nothing useful.
fn is_call_timeout(status: &tonic::Status) -> bool {
    status.code() == Code::Cancelled && status.message() == "Timeout expired"
}

/// What a status says to a user: the server's message, or for a call this command
/// gave up on, which flag bounds it.
fn status_text(status: &tonic::Status) -> String {
    if is_call_timeout(status) {
        "agent-service did not answer in time (--call-timeout)".to_owned()
    } else {
        status.message().to_owned()
    }
}

/// Exit code for a gRPC status code.
fn code_exit(code: Code) -> u8 {
    match code {
        Code::InvalidArgument | Code::OutOfRange => 65,
        Code::NotFound => 66,
        Code::Unavailable => 69,
        Code::ResourceExhausted | Code::DeadlineExceeded | Code::Aborted => 75,
        Code::PermissionDenied | Code::Unauthenticated => 77,
        Code::FailedPrecondition | Code::AlreadyExists => 78,
        // A cancelled or unknown outcome is not the caller's fault: report it as software.
        Code::Ok
        | Code::Cancelled
        | Code::Unknown
        | Code::Unimplemented
        | Code::Internal
        | Code::DataLoss => 70,
    }
}

/// The status code a run error names (`RunError.code` is the code's name).
fn code_name(name: &str) -> Option<Code> {
    Some(match name {
        "INVALID_ARGUMENT" => Code::InvalidArgument,
        "OUT_OF_RANGE" => Code::OutOfRange,
        "NOT_FOUND" => Code::NotFound,
        "UNAVAILABLE" => Code::Unavailable,
        "RESOURCE_EXHAUSTED" => Code::ResourceExhausted,
        "DEADLINE_EXCEEDED" => Code::DeadlineExceeded,
        "ABORTED" => Code::Aborted,
        "PERMISSION_DENIED" => Code::PermissionDenied,
        "UNAUTHENTICATED" => Code::Unauthenticated,
        "FAILED_PRECONDITION" => Code::FailedPrecondition,
        "ALREADY_EXISTS" => Code::AlreadyExists,
        "INTERNAL" => Code::Internal,
        "DATA_LOSS" => Code::DataLoss,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_distinct_per_kind() {
        assert_eq!(
            CliError::Status(tonic::Status::not_found("x")).exit_code(),
            66
        );
        assert_eq!(
            CliError::Run {
                code: "UNAVAILABLE".into(),
                message: "down".into()
            }
            .exit_code(),
            69
        );
        assert_eq!(
            CliError::Run {
                code: "ERROR".into(),
                message: "model failed".into()
            }
            .exit_code(),
            1
        );
        assert_eq!(CliError::Config("bad".into()).exit_code(), 64);
    }

    #[test]
    fn status_errors_print_the_status_message_only() {
        let error = CliError::Status(tonic::Status::not_found("agent_id: no agent \"x\""));
        assert_eq!(error.to_string(), "agent_id: no agent \"x\"");
    }
}

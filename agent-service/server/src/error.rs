//! The one mapping from runtime errors to gRPC status codes.

use agent_runtime::RuntimeError;
use tonic::Status;

/// Maps every runtime error to its status. Internal details are logged, and
/// the client gets a plain message.
pub fn status_of(error: RuntimeError) -> Status {
    let message = error.to_string();
    match error {
        RuntimeError::InvalidArgument { .. } => Status::invalid_argument(message),
        RuntimeError::UnknownAgent(_) | RuntimeError::SessionNotFound(_) => {
            Status::not_found(message)
        }
        RuntimeError::PermissionDenied(_) => Status::permission_denied(message),
        RuntimeError::FailedPrecondition(_) => Status::failed_precondition(message),
        RuntimeError::ResourceExhausted(_) | RuntimeError::ContextOverflow(_) => {
            Status::resource_exhausted(message)
        }
        RuntimeError::Unavailable(_) => Status::unavailable(message),
        RuntimeError::Aborted(_) => Status::aborted(message),
        RuntimeError::Internal(detail) => {
            tracing::error!(%detail, "internal error");
            Status::internal("internal error; see the agent-service log")
        }
    }
}

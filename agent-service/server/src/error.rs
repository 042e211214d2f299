//! Runtime errors as gRPC statuses. The code comes from the runtime's one
//! code table ([`RuntimeError::code`]), which the error events of a run's
//! stream use too.

use agent_runtime::{ErrorCode, RuntimeError};
use tonic::{Code, Status};

/// Maps every runtime error to its status. Internal details are logged, and
/// the client gets a plain message.
pub fn status_of(error: RuntimeError) -> Status {
    let code = grpc_code(error.code());
    match error {
        RuntimeError::Internal(detail) => {
            tracing::error!(%detail, "internal error");
            Status::new(code, "internal error; see the agent-service log")
        }
        other => Status::new(code, other.to_string()),
    }
}

/// The tonic code of a runtime error code (they share gRPC's numbering).
pub fn grpc_code(code: ErrorCode) -> Code {
    Code::from_i32(code.number())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_code_is_the_grpc_code_of_the_same_name() {
        for code in ErrorCode::ALL {
            let grpc = format!("{:?}", grpc_code(code)).to_ascii_lowercase();
            assert_eq!(grpc, code.as_str().replace('_', "").to_ascii_lowercase());
        }
    }

    #[test]
    fn statuses_carry_the_code_of_their_error() {
        let cases = [
            (
                RuntimeError::invalid("message", "empty"),
                Code::InvalidArgument,
            ),
            (RuntimeError::UnknownAgent("x".into()), Code::NotFound),
            (
                RuntimeError::ContextOverflow("long".into()),
                Code::ResourceExhausted,
            ),
            (
                RuntimeError::ProviderRefused("refused".into()),
                Code::FailedPrecondition,
            ),
            (
                RuntimeError::Internal("secret detail".into()),
                Code::Internal,
            ),
        ];
        for (error, want) in cases {
            let internal = matches!(error, RuntimeError::Internal(_));
            let status = status_of(error);
            assert_eq!(status.code(), want);
            if internal {
                assert!(!status.message().contains("secret detail"));
            }
        }
    }
}

//! Statuses that an HTTP gateway (a router, a load balancer) made instead of the service:
//! its own 502/503/504 answer is not gRPC, and tonic reports it as INTERNAL or UNKNOWN (an
//! HTML page read as a gRPC frame: "invalid compression flag: 60 ... 503 Service
//! Unavailable"). Such an answer means the service was not reached, which gRPC calls
//! UNAVAILABLE (the gRPC HTTP-to-status mapping does the same for 502, 503 and 504), so
//! clients retry it like any other unreachable service.

use tonic::{Code, Status};

/// The HTTP statuses a gateway answers for a service it could not reach or that did not
/// answer in time.
const GATEWAY_STATUSES: [u16; 3] = [502, 503, 504];

/// `status`, or UNAVAILABLE when it is tonic's report of a gateway's own non-gRPC 502, 503 or
/// 504 answer (the message keeps tonic's words, naming the HTTP status).
pub fn gateway_unavailable(status: Status) -> Status {
    if !matches!(status.code(), Code::Internal | Code::Unknown) {
        return status;
    }
    let message = status.message();
    let from_gateway = message
        .split_once("response with status: ")
        .and_then(|(_, rest)| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .is_some_and(|code| GATEWAY_STATUSES.contains(&code));
    if from_gateway {
        Status::unavailable(format!(
            "a gateway answered for the service, which it could not reach: {message}"
        ))
    } else {
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateways_own_error_page_is_unavailable() {
        // tonic's words for an HTML 503 page, a body it cannot decompress and a 504.
        for message in [
            "protocol error: received message with invalid compression flag: 60 (valid flags \
             are 0 and 1) while receiving response with status: 503 Service Unavailable",
            "Error decompressing: corrupt deflate stream, while receiving response with \
             status: 502 Bad Gateway",
            "protocol error: received message with invalid compression flag: 60 (valid flags \
             are 0 and 1) while receiving response with status: 504 Gateway Timeout",
        ] {
            let mapped = gateway_unavailable(Status::internal(message));
            assert_eq!(mapped.code(), Code::Unavailable, "{message}");
            assert!(mapped.message().contains(message), "{mapped:?}");
        }
    }

    #[test]
    fn other_statuses_are_left_alone() {
        for status in [
            // The service's own INTERNAL, a 500 page, a client-side decode error.
            Status::internal("internal error; see the agent-service log"),
            Status::internal(
                "protocol error: received message with invalid compression flag: 60 (valid \
                 flags are 0 and 1) while receiving response with status: 500 Internal Server Error",
            ),
            Status::internal(
                "protocol error: received message with invalid compression flag: 60 (valid \
                 flags are 0 and 1), while sending request",
            ),
            // Not INTERNAL or UNKNOWN: already a code the caller acts on.
            Status::invalid_argument("while receiving response with status: 503"),
        ] {
            let code = status.code();
            assert_eq!(gateway_unavailable(status).code(), code);
        }
    }
}

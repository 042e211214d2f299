//! One RPC to the service under test, answered or refused, without the client set-up and
//! unwrapping around every call; and what its health service says.

use tonic::transport::Channel;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

/// The answer to `$method($request)` on `$service` (anything with an async `client()`),
/// which must succeed.
macro_rules! call {
    ($service:expr, $method:ident, $request:expr) => {
        $service
            .client()
            .await
            .$method($request)
            .await
            .unwrap_or_else(|status| panic!("{}: {status:?}", stringify!($method)))
            .into_inner()
    };
}
pub(crate) use call;

/// The status `$method($request)` on `$service` is refused with.
macro_rules! refusal {
    ($service:expr, $method:ident, $request:expr) => {
        match $service.client().await.$method($request).await {
            Ok(_) => panic!("{} was answered, not refused", stringify!($method)),
            Err(status) => status,
        }
    };
}
pub(crate) use refusal;

/// The status a streaming `$method($request)` on `$service` is refused with: at once, or as
/// the stream's first message.
macro_rules! stream_refusal {
    ($service:expr, $method:ident, $request:expr) => {
        match $service.client().await.$method($request).await {
            Err(status) => status,
            Ok(response) => match response.into_inner().message().await {
                Err(status) => status,
                Ok(first) => panic!(
                    "{} was answered, not refused: {first:?}",
                    stringify!($method)
                ),
            },
        }
    };
}
pub(crate) use stream_refusal;

/// The health service's name for the agent service.
pub const AGENT_SERVICE: &str = "openclaw.agent.v1.AgentService";

/// The status the health service on `channel` reports for `service` (empty: the server as a
/// whole).
pub async fn health_of(channel: &Channel, service: &str) -> ServingStatus {
    HealthClient::new(channel.clone())
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .expect("health")
        .into_inner()
        .status()
}

/// Asserts what the health service on `channel` says of the server as a whole and of the
/// agent service.
pub async fn assert_health(channel: &Channel, server: ServingStatus, agent: ServingStatus) {
    assert_eq!(health_of(channel, "").await, server, "the server");
    assert_eq!(
        health_of(channel, AGENT_SERVICE).await,
        agent,
        "the agent service"
    );
}

//! grpc.health.v1 and server reflection, plus the health probe client.

use std::time::Duration;

use tonic::{codec::CompressionEncoding, service::Routes};

use crate::tls::ClientTls;
use tonic_health::{
    pb::{HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient},
    server::HealthReporter,
};

/// Health and reflection, as routes to add to a server.
pub struct HealthServices {
    /// Flip serving status here (NOT_SERVING on shutdown).
    pub reporter: HealthReporter,
    /// grpc.health.v1.Health plus grpc.reflection v1 and v1alpha (grpcurl
    /// 1.8 speaks only v1alpha).
    pub routes: Routes,
}

/// Builds health and reflection over our descriptor set plus the health
/// service's own. Compression is set per service in tonic, so health
/// accepts gzip like our services do and gzips its answers only when
/// `compress_responses` says so (`--compress-responses`), as they do.
///
/// `served` names the services the server adds next to these (for example
/// `openclaw.agent.v1.AgentService`): reflection lists exactly those, health
/// and reflection itself, so `grpcurl list` never offers a service that
/// would answer UNIMPLEMENTED. Every descriptor stays resolvable (a served
/// service's messages may come from another package's file).
pub fn health_services(
    served: &[&str],
    compress_responses: bool,
) -> Result<HealthServices, tonic_reflection::server::Error> {
    let (reporter, health) = tonic_health::server::health_reporter();
    let health = health.accept_compressed(CompressionEncoding::Gzip);
    let health = if compress_responses {
        health.send_compressed(CompressionEncoding::Gzip)
    } else {
        health
    };
    // Both reflection versions are served, so each lists (and describes) both.
    let listed = || {
        let mut builder = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(openclaw_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(
                tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
            );
        for name in served.iter().copied().chain([
            tonic_health::pb::health_server::SERVICE_NAME,
            tonic_reflection::pb::v1::server_reflection_server::SERVICE_NAME,
            tonic_reflection::pb::v1alpha::server_reflection_server::SERVICE_NAME,
        ]) {
            builder = builder.with_service_name(name);
        }
        builder
    };
    let reflection_v1 = listed().build_v1()?;
    let reflection_v1alpha = listed().build_v1alpha()?;
    let routes = Routes::new(health)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);
    Ok(HealthServices { reporter, routes })
}

/// What a server's reflection lists, per protocol version, each sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedServices {
    /// `grpc.reflection.v1`.
    pub v1: Vec<String>,
    /// `grpc.reflection.v1alpha` (what grpcurl 1.8 asks).
    pub v1alpha: Vec<String>,
}

/// Asks a server's reflection which services it serves (`grpcurl list`),
/// over both protocol versions.
pub async fn listed_services(
    channel: tonic::transport::Channel,
) -> Result<ListedServices, tonic::Status> {
    use tonic_reflection::pb::{v1, v1alpha};
    let unexpected = |reply: &dyn std::fmt::Debug| {
        tonic::Status::internal(format!("reflection answered {reply:?} to ListServices"))
    };
    let request = v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(
            String::new(),
        )),
    };
    let reply = v1::server_reflection_client::ServerReflectionClient::new(channel.clone())
        .server_reflection_info(tokio_stream::iter([request]))
        .await?
        .into_inner()
        .message()
        .await?;
    let mut listed_v1 = match reply.and_then(|r| r.message_response) {
        Some(v1::server_reflection_response::MessageResponse::ListServicesResponse(list)) => {
            list.service.into_iter().map(|s| s.name).collect::<Vec<_>>()
        }
        other => return Err(unexpected(&other)),
    };
    let request = v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            v1alpha::server_reflection_request::MessageRequest::ListServices(String::new()),
        ),
    };
    let reply = v1alpha::server_reflection_client::ServerReflectionClient::new(channel)
        .server_reflection_info(tokio_stream::iter([request]))
        .await?
        .into_inner()
        .message()
        .await?;
    let mut listed_v1alpha = match reply.and_then(|r| r.message_response) {
        Some(v1alpha::server_reflection_response::MessageResponse::ListServicesResponse(list)) => {
            list.service.into_iter().map(|s| s.name).collect::<Vec<_>>()
        }
        other => return Err(unexpected(&other)),
    };
    listed_v1.sort();
    listed_v1alpha.sort();
    Ok(ListedServices {
        v1: listed_v1,
        v1alpha: listed_v1alpha,
    })
}

/// Asks a server's health service about `service` ("" for the whole
/// server). Ok(true) when SERVING. Used by the `healthcheck` subcommands.
pub async fn probe(endpoint: &str, service: &str, timeout: Duration) -> Result<bool, String> {
    probe_with(endpoint, service, timeout, None).await
}

/// [`probe`] over TLS when `tls` is given (an `https://` endpoint). Health
/// is open, so no credentials are sent.
pub async fn probe_with(
    endpoint: &str,
    service: &str,
    timeout: Duration,
    tls: Option<&ClientTls>,
) -> Result<bool, String> {
    let mut endpoint_config = tonic::transport::Endpoint::from_shared(endpoint.to_owned())
        .map_err(|e| format!("invalid endpoint {endpoint:?}: {e}"))?;
    if let Some(tls) = tls {
        endpoint_config = endpoint_config
            .tls_config(tls.client_config())
            .map_err(|e| format!("TLS settings for {endpoint}: {e}"))?;
    }
    let channel = endpoint_config
        .connect_timeout(timeout)
        .timeout(timeout)
        .connect()
        .await
        .map_err(|e| format!("cannot connect to {endpoint}: {}", error_chain(&e)))?;
    let reply = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: service.to_owned(),
        })
        .await
        .map_err(|s| format!("health check failed: {} {}", s.code(), s.message()))?;
    Ok(reply.into_inner().status() == ServingStatus::Serving)
}

/// An error and its sources on one line: tonic's "transport error" alone
/// does not say that a certificate was refused.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

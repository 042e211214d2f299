//! Optional OTLP trace export.
//!
//! Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces-only
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set. Then every span, including
//! the per-request `grpc` span with its method, session key and session id,
//! is exported over OTLP/HTTP with protobuf bodies (the collector's port 4318;
//! the exporter appends `/v1/traces` to the generic endpoint). Spans are
//! batched on the exporter's own thread, so a slow or absent collector never
//! holds up a request; what cannot be sent is dropped and counted by the SDK.
//! `OTEL_SERVICE_NAME` names the service (default: the binary's name) and
//! the other standard `OTEL_EXPORTER_OTLP_*` variables (headers, timeout)
//! apply as the OpenTelemetry SDK reads them.

use std::sync::OnceLock;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::{Resource, trace::SdkTracerProvider};
use tracing_subscriber::registry::LookupSpan;

static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// The configured collector endpoint, if export is on.
pub(crate) fn endpoint() -> Option<String> {
    [
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ]
    .iter()
    .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
}

/// The tracing layer that exports spans, when export is on. Failing to build
/// the exporter (a malformed endpoint) is reported on stderr and leaves
/// export off: tracing must never stop a service from starting.
pub(crate) fn layer<S>()
-> Option<tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>>
where
    S: tracing::Subscriber + for<'span> LookupSpan<'span>,
{
    let endpoint = endpoint()?;
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
    {
        Ok(exporter) => exporter,
        Err(error) => {
            eprintln!("OTLP trace export is off: the exporter for {endpoint:?} failed: {error}");
            return None;
        }
    };
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(service_name())
                .build(),
        )
        .build();
    let tracer = provider.tracer("openclaw");
    // A second init (tests) keeps the first provider, as it keeps the first subscriber.
    if PROVIDER.set(provider).is_err() {
        return None;
    }
    Some(tracing_opentelemetry::layer().with_tracer(tracer))
}

fn service_name() -> String {
    std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::current_exe()
                .ok()?
                .file_stem()?
                .to_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "openclaw".to_owned())
}

/// Sends the spans still buffered and stops the exporter. Call once at the
/// end of `main`, after the server stopped; without export it does nothing.
pub fn flush_traces() {
    if let Some(provider) = PROVIDER.get()
        && let Err(error) = provider.shutdown()
    {
        eprintln!("OTLP trace export: the last spans were not all sent: {error}");
    }
}

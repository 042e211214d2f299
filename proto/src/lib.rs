//! Generated protobuf and gRPC code for OpenClaw's two services.
//!
//! This crate holds generated code only: no logic, no conversions. The .proto
//! files next to it are the API's source of truth; `build.rs` compiles them with
//! protox so no system `protoc` is needed.

/// `openclaw.prompt.v1`: the stateless prompt renderer.
pub mod prompt {
    /// Version 1 of the prompt API.
    #[allow(
        missing_docs,
        reason = "generated code; the .proto comments document the API"
    )]
    #[allow(clippy::all, reason = "generated code: lints do not apply to it")]
    pub mod v1 {
        tonic::include_proto!("openclaw.prompt.v1");
    }
}

/// `openclaw.agent.v1`: the stateful agent service.
pub mod agent {
    /// Version 1 of the agent API.
    #[allow(
        missing_docs,
        reason = "generated code; the .proto comments document the API"
    )]
    #[allow(clippy::all, reason = "generated code: lints do not apply to it")]
    pub mod v1 {
        tonic::include_proto!("openclaw.agent.v1");
    }
}

/// `openclaw.bench.v1`: the echo baseline of the load generator.
pub mod bench {
    /// Version 1 of the bench API.
    #[allow(
        missing_docs,
        reason = "generated code; the .proto comments document the API"
    )]
    #[allow(clippy::all, reason = "generated code: lints do not apply to it")]
    pub mod v1 {
        tonic::include_proto!("openclaw.bench.v1");
    }
}

/// Encoded `FileDescriptorSet` of every OpenClaw .proto file, for server
/// reflection and for JSON conversion with `prost-reflect`.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("openclaw_descriptor");

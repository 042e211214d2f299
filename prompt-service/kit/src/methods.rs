//! The gRPC methods both servers serve, read from the compiled-in
//! descriptor sets: our protos, gRPC health and reflection. Layers that
//! treat methods differently (metrics labels, stream pools, request
//! decoding) take them from here, so a new RPC is covered without a list to
//! keep up to date.

use prost::Message as _;

/// One served method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Method {
    /// `/package.Service/Method`, the HTTP/2 path.
    pub(crate) path: String,
    /// Full name of the request message (`openclaw.agent.v1.RunRequest`).
    pub(crate) input_type: String,
    /// The client sends a stream of messages.
    pub(crate) client_streaming: bool,
    /// The server answers with a stream of messages.
    pub(crate) server_streaming: bool,
}

/// Every method of every service in our descriptor sets.
pub(crate) fn served_methods() -> Vec<Method> {
    let mut methods = Vec::new();
    for set in [
        openclaw_proto::FILE_DESCRIPTOR_SET,
        tonic_health::pb::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
    ] {
        match prost_types::FileDescriptorSet::decode(set) {
            Ok(set) => methods.extend(methods_of(&set)),
            // Compiled-in bytes; a failure is a bug, and each user says
            // what it costs.
            Err(error) => tracing::error!(%error, "cannot decode a descriptor set"),
        }
    }
    methods
}

fn methods_of(set: &prost_types::FileDescriptorSet) -> Vec<Method> {
    let mut methods = Vec::new();
    for file in &set.file {
        for service in &file.service {
            for method in &service.method {
                methods.push(Method {
                    path: format!("/{}.{}/{}", file.package(), service.name(), method.name()),
                    input_type: method.input_type().trim_start_matches('.').to_owned(),
                    client_streaming: method.client_streaming(),
                    server_streaming: method.server_streaming(),
                });
            }
        }
    }
    methods
}

//! How both servers read request messages and write response messages, for the methods a
//! service encodes itself (beside its generated server, which takes the same settings).

use tonic::{
    codec::{Codec, CompressionEncoding},
    server::Grpc,
};

/// Request size limit and response compression, as `--max-request-bytes` and
/// `--compress-responses` set them.
#[derive(Debug, Clone, Copy)]
pub struct MessageSettings {
    /// Largest request message accepted, in bytes, after decompression.
    pub max_request_bytes: usize,
    /// Gzip responses for clients that accept gzip.
    pub compress_responses: bool,
}

impl MessageSettings {
    /// A server-side gRPC method handler over `codec` with these settings: gzipped requests
    /// accepted, responses gzipped only when asked for.
    pub fn grpc<C: Codec>(&self, codec: C) -> Grpc<C> {
        let grpc = Grpc::new(codec)
            .max_decoding_message_size(self.max_request_bytes)
            .accept_compressed(CompressionEncoding::Gzip);
        if self.compress_responses {
            grpc.send_compressed(CompressionEncoding::Gzip)
        } else {
            grpc
        }
    }
}

//! The command/export preview (P-3): a request written as JSON5 in the
//! canonical protobuf JSON mapping goes through exactly the code path of the
//! RPC, and the response is printed as text or as canonical JSON.

use openclaw_proto::prompt::v1 as pb;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};

use crate::{error::ServerError, service::render_request};

const REQUEST: &str = "openclaw.prompt.v1.RenderSystemPromptRequest";
const RESPONSE: &str = "openclaw.prompt.v1.RenderSystemPromptResponse";

/// What to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PreviewFormat {
    /// The prompt text, exactly as the RPC returns it in `text`.
    Text,
    /// The stable prefix only.
    Stable,
    /// The dynamic suffix only.
    Dynamic,
    /// The whole response as canonical protobuf JSON.
    Json,
}

/// Errors of the preview command.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// The JSON5 text does not parse.
    #[error("request file is not valid JSON5: {0}")]
    Syntax(String),
    /// The JSON does not match RenderSystemPromptRequest.
    #[error("request does not match {REQUEST}: {0}")]
    Shape(String),
    /// The service refused the request.
    #[error(transparent)]
    Refused(#[from] ServerError),
    /// The descriptor set is unusable (a build problem).
    #[error("internal: {0}")]
    Internal(String),
}

fn pool() -> Result<DescriptorPool, PreviewError> {
    DescriptorPool::decode(openclaw_proto::FILE_DESCRIPTOR_SET)
        .map_err(|e| PreviewError::Internal(e.to_string()))
}

/// Parses a JSON5 request in the canonical protobuf JSON mapping (field
/// names in lowerCamelCase or as in the .proto, enums by name).
pub fn parse_request(json5_text: &str) -> Result<pb::RenderSystemPromptRequest, PreviewError> {
    let value: serde_json::Value =
        json5::from_str(json5_text).map_err(|e| PreviewError::Syntax(e.to_string()))?;
    let pool = pool()?;
    let desc = pool.get_message_by_name(REQUEST).ok_or_else(|| {
        PreviewError::Internal(format!("{REQUEST} missing from the descriptor set"))
    })?;
    let dynamic =
        DynamicMessage::deserialize(desc, value).map_err(|e| PreviewError::Shape(e.to_string()))?;
    pb::RenderSystemPromptRequest::decode(dynamic.encode_to_vec().as_slice())
        .map_err(|e| PreviewError::Internal(e.to_string()))
}

/// Renders a JSON5 request file's text and formats the response.
pub fn preview(json5_text: &str, format: PreviewFormat) -> Result<String, PreviewError> {
    let response = render_request(&prompt_render::Renderer::new(0), parse_request(json5_text)?)?;
    match format {
        PreviewFormat::Text => Ok(response.text),
        PreviewFormat::Stable => Ok(response.stable_prefix),
        PreviewFormat::Dynamic => Ok(response.dynamic_suffix),
        PreviewFormat::Json => response_json(&response),
    }
}

/// Canonical protobuf JSON of a response, pretty-printed.
pub fn response_json(response: &pb::RenderSystemPromptResponse) -> Result<String, PreviewError> {
    let pool = pool()?;
    let desc = pool.get_message_by_name(RESPONSE).ok_or_else(|| {
        PreviewError::Internal(format!("{RESPONSE} missing from the descriptor set"))
    })?;
    let dynamic = DynamicMessage::decode(desc, response.encode_to_vec().as_slice())
        .map_err(|e| PreviewError::Internal(e.to_string()))?;
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::pretty(&mut out);
    dynamic
        .serialize_with_options(
            &mut serializer,
            &SerializeOptions::new().skip_default_fields(false),
        )
        .map_err(|e| PreviewError::Internal(e.to_string()))?;
    String::from_utf8(out).map_err(|e| PreviewError::Internal(e.to_string()))
}

//! Secrets out of prompts and out of what the model says: every string field of a render
//! request (config knobs, workspace files, channel context, runtime facts) has its secret
//! values replaced before the request leaves, so neither the model nor a preview ever shows
//! one; and a model reply (text, thinking, tool-call arguments, error text) is redacted
//! before it is stored or delivered, so a key the model repeats (from a file, from a command's
//! output in pieces) goes no further.
//!
//! The common case costs one scan: the encoded request is searched for any secret at once,
//! and only a request that holds one is walked field by field (through the descriptor, so a
//! field added to the proto later is covered without a change here).

use openclaw_proto::prompt::v1 as pb;
use openclaw_secrets::Redactor;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, ReflectMessage, Value};

/// Replaces secret values in every string of `request`.
pub(crate) fn redact_request(redactor: &Redactor, request: &mut pb::RenderSystemPromptRequest) {
    if redactor.is_empty() {
        return;
    }
    let bytes = request.encode_to_vec();
    if !redactor.contains_secret(&bytes) {
        return;
    }
    let Some(redacted) = redact_message(redactor, &bytes) else {
        tracing::error!(
            "a render request holding a secret could not be redacted; its strings are cleared"
        );
        *request = pb::RenderSystemPromptRequest::default();
        return;
    };
    *request = redacted;
}

fn redact_message(redactor: &Redactor, bytes: &[u8]) -> Option<pb::RenderSystemPromptRequest> {
    let pool = DescriptorPool::decode(openclaw_proto::FILE_DESCRIPTOR_SET).ok()?;
    let descriptor = pool.get_message_by_name("openclaw.prompt.v1.RenderSystemPromptRequest")?;
    let mut message = DynamicMessage::decode(descriptor, bytes).ok()?;
    redact_dynamic(redactor, &mut message);
    message.transcode_to().ok()
}

fn redact_dynamic(redactor: &Redactor, message: &mut DynamicMessage) {
    let fields: Vec<_> = message.descriptor().fields().collect();
    for field in fields {
        if !message.has_field(&field) {
            continue;
        }
        redact_value(redactor, message.get_field_mut(&field));
    }
}

fn redact_value(redactor: &Redactor, value: &mut Value) {
    match value {
        Value::String(text) => redactor.redact_in_place(text),
        Value::Message(inner) => redact_dynamic(redactor, inner),
        Value::List(items) => items.iter_mut().for_each(|v| redact_value(redactor, v)),
        Value::Map(entries) => entries.values_mut().for_each(|v| redact_value(redactor, v)),
        Value::Bool(_)
        | Value::I32(_)
        | Value::I64(_)
        | Value::U32(_)
        | Value::U64(_)
        | Value::F32(_)
        | Value::F64(_)
        | Value::Bytes(_)
        | Value::EnumNumber(_) => {}
    }
}

/// Replaces secret values in every text of a model reply: text and thinking blocks, every
/// string inside tool-call arguments, the provider's error text.
pub(crate) fn redact_reply(redactor: &Redactor, reply: &mut openclaw_transcript::AssistantMessage) {
    use openclaw_transcript::ContentBlock;
    if redactor.is_empty() {
        return;
    }
    for block in &mut reply.content {
        match block {
            ContentBlock::Text(text) => redactor.redact_in_place(&mut text.text),
            ContentBlock::Thinking(thinking) => redactor.redact_in_place(&mut thinking.thinking),
            ContentBlock::ToolCall(call) => redact_json(redactor, &mut call.arguments),
            ContentBlock::Image(_) | ContentBlock::Other(_) => {}
        }
    }
    if let Some(error) = &mut reply.error_message {
        redactor.redact_in_place(error);
    }
}

fn redact_json(redactor: &Redactor, value: &mut serde_json::Value) {
    use serde_json::Value as J;
    match value {
        J::String(text) => redactor.redact_in_place(text),
        J::Array(items) => items.iter_mut().for_each(|v| redact_json(redactor, v)),
        J::Object(map) => map.values_mut().for_each(|v| redact_json(redactor, v)),
        J::Null | J::Bool(_) | J::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openclaw_secrets::Secret;

    #[test]
    fn every_string_field_is_redacted_and_the_rest_kept() {
        let redactor = Redactor::new();
        redactor.replace([Secret::new("ANTHROPIC_API_KEY", "sk-ant-secret-42")]);
        let mut request = pb::RenderSystemPromptRequest {
            workspace_dir: "/ws".into(),
            user_time: Some(pb::UserTime {
                timezone: "sk-ant-secret-42".into(),
                ..Default::default()
            }),
            context_files: vec![pb::ContextFile {
                path: "MEMORY.md".into(),
                content: "the key is sk-ant-secret-42.".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        redact_request(&redactor, &mut request);
        assert_eq!(request.workspace_dir, "/ws");
        assert_eq!(
            request.user_time.as_ref().map(|t| t.timezone.as_str()),
            Some("[redacted ANTHROPIC_API_KEY]")
        );
        assert_eq!(
            request.context_files[0].content,
            "the key is [redacted ANTHROPIC_API_KEY]."
        );
        assert_eq!(request.context_files[0].path, "MEMORY.md");
    }

    #[test]
    fn a_request_without_secrets_is_left_byte_identical() {
        let redactor = Redactor::new();
        redactor.replace([Secret::new("K", "sk-not-present")]);
        let mut request = pb::RenderSystemPromptRequest {
            workspace_dir: "/ws".into(),
            ..Default::default()
        };
        let before = request.encode_to_vec();
        redact_request(&redactor, &mut request);
        assert_eq!(request.encode_to_vec(), before);
    }
}

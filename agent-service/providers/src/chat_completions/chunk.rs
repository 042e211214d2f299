//! One stream chunk as the decoder reads it ([`Chunk`]): its usage and, of its first choice,
//! the reasoning, the text, the tool call fragments and the finish reason.
//!
//! Chunks arrive by the dozen per reply, so they are parsed into typed fields that borrow the
//! event's text, every other field skipped unread ([`Chunk::typed`]). A chunk those types do
//! not fit (an `error` chunk, a field of another JSON type than the API's, a key given twice) is
//! read through a [`Value`] instead, each field taken only when it has the expected type
//! ([`Chunk::lenient`], the servers' leniencies). Where the typed reading succeeds the two
//! agree; a test holds them to it.

use std::borrow::Cow;

use openclaw_transcript::Usage;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::usage::openai_usage;

/// What the decoder reads of one chunk.
#[derive(Debug, PartialEq)]
pub(super) struct Chunk<'a> {
    /// The reply's usage, when this chunk reports it.
    pub(super) usage: Option<Usage>,
    /// The first choice; the others are never asked for.
    pub(super) choice: Option<Choice<'a>>,
}

/// The first choice of a chunk.
#[derive(Debug, PartialEq)]
pub(super) struct Choice<'a> {
    /// `reasoning_content`, or when that is absent `reasoning`.
    pub(super) reasoning: Option<Cow<'a, str>>,
    pub(super) content: Option<Cow<'a, str>>,
    pub(super) calls: Vec<CallFragment<'a>>,
    pub(super) finish_reason: Option<Cow<'a, str>>,
}

/// A piece of a tool call.
#[derive(Debug, PartialEq)]
pub(super) struct CallFragment<'a> {
    /// The call's `index`, or its position in this chunk.
    pub(super) index: u64,
    pub(super) id: Option<Cow<'a, str>>,
    pub(super) name: Option<Cow<'a, str>>,
    /// Argument text; arguments sent as JSON (an object, say) as that JSON's compact text.
    pub(super) arguments: Option<Cow<'a, str>>,
}

impl<'a> Chunk<'a> {
    /// `data` read into typed fields; `None` when they do not fit it, or when it is an `error`
    /// chunk (the caller reads those through [`Value`]).
    pub(super) fn typed(data: &'a str) -> Option<Self> {
        // A top-level array would fill a struct's fields by position.
        if !data.starts_with('{') {
            return None;
        }
        let chunk: WireChunk<'a> = serde_json::from_str(data).ok()?;
        if chunk.error.is_some() {
            return None;
        }
        let usage = match chunk.usage {
            None => None,
            Some(raw) => {
                let usage: Value = serde_json::from_str(raw.get()).ok()?;
                usage.is_object().then(|| chat_usage(&usage))
            }
        };
        let choice = match chunk.choices.and_then(|choices| choices.into_iter().next()) {
            None => None,
            Some(choice) => Some(choice.read()?),
        };
        Some(Self { usage, choice })
    }

    /// `chunk` read field by field, each field taken only when it has the expected type.
    pub(super) fn lenient(chunk: &'a Value) -> Self {
        let usage = chunk
            .get("usage")
            .filter(|usage| usage.is_object())
            .map(chat_usage);
        let choice = chunk.pointer("/choices/0").map(|choice| {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            let text = |value: Option<&'a Value>| value.and_then(Value::as_str).map(Cow::Borrowed);
            let calls = delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(position, call)| {
                    let function = call.get("function").unwrap_or(&Value::Null);
                    CallFragment {
                        index: call
                            .get("index")
                            .and_then(Value::as_u64)
                            .unwrap_or(position as u64),
                        id: text(call.get("id")),
                        name: text(function.get("name")),
                        arguments: match function.get("arguments") {
                            Some(Value::String(text)) => Some(Cow::Borrowed(text.as_str())),
                            Some(Value::Null) | None => None,
                            Some(json) => Some(Cow::Owned(json.to_string())),
                        },
                    }
                })
                .collect();
            Choice {
                reasoning: text(
                    delta
                        .get("reasoning_content")
                        .or_else(|| delta.get("reasoning")),
                ),
                content: text(delta.get("content")),
                calls,
                finish_reason: text(choice.get("finish_reason")),
            }
        });
        Self { usage, choice }
    }
}

fn chat_usage(usage: &Value) -> Usage {
    openai_usage(usage, "prompt_tokens", "prompt_tokens_details")
}

#[derive(Deserialize)]
struct WireChunk<'a> {
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
    #[serde(default, borrow)]
    usage: Option<&'a RawValue>,
    #[serde(default, borrow)]
    choices: Option<Vec<WireChoice<'a>>>,
}

#[derive(Deserialize)]
struct WireChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<WireDelta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Text<'a>,
}

impl<'a> WireChoice<'a> {
    /// The choice as the decoder reads it; `None` when a call's arguments do not read back.
    fn read(self) -> Option<Choice<'a>> {
        let delta = self.delta.unwrap_or_default();
        let reasoning = match delta.reasoning_content {
            // Present, even as `null`, it is the one field read.
            Text::Absent => delta.reasoning,
            present => present,
        };
        let calls = delta
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(position, call)| {
                let function = call.function.unwrap_or_default();
                Some(CallFragment {
                    index: call.index.unwrap_or(position as u64),
                    id: call.id.into_text(),
                    name: function.name.into_text(),
                    arguments: arguments(function.arguments)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Choice {
            reasoning: reasoning.into_text(),
            content: delta.content.into_text(),
            calls,
            finish_reason: self.finish_reason.into_text(),
        })
    }
}

/// Argument text from the raw `arguments`: a string's text, or the compact JSON of anything
/// else. The outer `None` means the raw text did not read back.
fn arguments(raw: Option<&RawValue>) -> Option<Option<Cow<'_, str>>> {
    let Some(raw) = raw else {
        return Some(None);
    };
    if raw.get().starts_with('"') {
        let text: Text<'_> = serde_json::from_str(raw.get()).ok()?;
        return Some(text.into_text());
    }
    let json: Value = serde_json::from_str(raw.get()).ok()?;
    Some(Some(Cow::Owned(json.to_string())))
}

#[derive(Default, Deserialize)]
struct WireDelta<'a> {
    #[serde(default, borrow)]
    reasoning_content: Text<'a>,
    #[serde(default, borrow)]
    reasoning: Text<'a>,
    #[serde(default, borrow)]
    content: Text<'a>,
    #[serde(default, borrow)]
    tool_calls: Option<Vec<WireCall<'a>>>,
}

#[derive(Deserialize)]
struct WireCall<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default, borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    function: Option<WireFunction<'a>>,
}

#[derive(Default, Deserialize)]
struct WireFunction<'a> {
    #[serde(default, borrow)]
    name: Text<'a>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
}

/// A string field: absent, `null`, or text, borrowed from the event when it holds no escapes.
/// Any other JSON type fails the typed reading.
#[derive(Debug, Default, PartialEq)]
enum Text<'a> {
    #[default]
    Absent,
    Null,
    Present(Cow<'a, str>),
}

impl<'a> Text<'a> {
    fn into_text(self) -> Option<Cow<'a, str>> {
        match self {
            Self::Present(text) => Some(text),
            Self::Absent | Self::Null => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or null")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text::Present(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text::Present(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text::Present(Cow::Owned(text)))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Text::Null)
            }

            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Text::Null)
            }
        }

        deserializer.deserialize_any(TextVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks the typed reading takes: it must read them exactly as the lenient one does.
    const FITTING: &[&str] = &[
        r#"{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"choices":[{"delta":{"content":"line\n\"quoted\" \u00e9 \ud83d\ude00"}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_content":"think"}}]}"#,
        r#"{"choices":[{"delta":{"reasoning":"ing"}}]}"#,
        // `reasoning_content: null` is the field read, so `reasoning` is not.
        r#"{"choices":[{"delta":{"reasoning_content":null,"reasoning":"hidden"}}]}"#,
        r#"{"choices":[{"delta":{"reasoning_content":"a","reasoning":"b","content":"c"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"pa"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"read","arguments":{ "path" : "a", "n": [1, 2.5e3] }}},{"function":{"arguments":7}},{"function":{"arguments":null}},{"function":null},{"id":null}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[{"delta":null,"finish_reason":"stop"},{"delta":{"content":"second choice"}}]}"#,
        r#"{"choices":[{"finish_reason":"length"}]}"#,
        r#"{"id":"c1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":4}}}"#,
        r#"{"choices":null,"usage":null}"#,
        r#"{"usage":7}"#,
        r#"{"error":null,"choices":[{"delta":{"content":"ok"}}]}"#,
        r#"{"unknown":{"nested":[1,{"a":"b"}]},"choices":[{"delta":{"content":"x","extra":[null]}}]}"#,
        r#"{}"#,
    ];

    /// Chunks the typed reading declines, for the lenient one.
    const NOT_FITTING: &[&str] = &[
        r#"{"error":{"message":"This model's maximum context length is 4096 tokens","code":400}}"#,
        r#"[null,{"prompt_tokens":1}]"#,
        r#"{"choices":[{"delta":{"content":5}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1.0,"function":{"name":"a"}}]}}]}"#,
        r#"{"choices":{"0":{"delta":{"content":"x"}}}}"#,
        r#"{"choices":[null]}"#,
        r#"{"choices":[{"delta":"text"}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":{"index":0}}}]}"#,
        r#"{"choices":[{"delta":{"content":"a","content":"b"}}]}"#,
        r#"{"choices":[{"finish_reason":3}]}"#,
        "\"just a string\"",
    ];

    #[test]
    fn the_typed_reading_agrees_with_the_lenient_one_wherever_it_fits() {
        for data in FITTING {
            let value: Value = serde_json::from_str(data).unwrap();
            let typed = Chunk::typed(data);
            assert_eq!(typed, Some(Chunk::lenient(&value)), "{data}");
        }
        for data in NOT_FITTING {
            assert_eq!(Chunk::typed(data), None, "{data}");
        }
    }

    #[test]
    fn text_without_escapes_is_borrowed_from_the_event() {
        let data = r#"{"choices":[{"delta":{"content":"plain","tool_calls":[{"id":"c","function":{"name":"read","arguments":"{}"}}]}}]}"#;
        let choice = Chunk::typed(data).unwrap().choice.unwrap();
        assert!(matches!(choice.content, Some(Cow::Borrowed("plain"))));
        let call = &choice.calls[0];
        assert!(matches!(call.id, Some(Cow::Borrowed("c"))));
        assert!(matches!(call.arguments, Some(Cow::Borrowed(_))));
    }
}

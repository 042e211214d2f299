//! How the usage objects of the OpenAI formats (and of the servers and gateways that speak
//! them) map onto [`Usage`]. Anthropic's, reported in parts, is read by its decoder.

use openclaw_transcript::Usage;
use serde_json::Value;

use crate::reply::count;

/// Usage from an API that counts cached tokens inside its input total (OpenAI and the servers
/// and gateways that speak its formats), read from the usage object `usage` whose input total
/// is `input_field` and whose breakdown is `details_field` (`prompt_tokens` and
/// `prompt_tokens_details` for Chat Completions, `input_tokens` and `input_tokens_details` for
/// Responses). `input` becomes the part neither read from nor written to the cache.
///
/// OpenAI reports only cache reads (`cached_tokens` in the breakdown). Gateways in front of
/// models with explicit caching report writes too, each in its own field, and count them in the
/// input total: OpenRouter as `cache_write_tokens` in the breakdown, proxies that translate
/// Anthropic's API under Anthropic's names at the top (`cache_creation_input_tokens`, with
/// `cache_read_input_tokens`), DeepSeek its reads as `prompt_cache_hit_tokens`. The first field
/// present wins, so a count given twice is counted once.
pub(crate) fn openai_usage(usage: &Value, input_field: &str, details_field: &str) -> Usage {
    let first = |fields: &[&str]| {
        fields
            .iter()
            .find_map(|field| usage.pointer(field).and_then(Value::as_u64))
            .unwrap_or(0)
    };
    let details = |name: &str| format!("/{details_field}/{name}");
    let prompt = count(usage.get(input_field));
    let read = first(&[
        &details("cached_tokens"),
        "/cache_read_input_tokens",
        "/prompt_cache_hit_tokens",
    ]);
    let written = first(&[
        &details("cache_write_tokens"),
        &details("cache_creation_tokens"),
        "/cache_creation_input_tokens",
        "/cache_write_tokens",
    ]);
    let output = count(
        usage
            .get("completion_tokens")
            .or_else(|| usage.get("output_tokens")),
    );
    Usage {
        input: prompt.saturating_sub(read).saturating_sub(written),
        output,
        cache_read: read,
        cache_write: written,
        total_tokens: usage
            .get("total_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(prompt + output),
        cost: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_style_usage_keeps_each_gateways_cache_counts() {
        let usage = |value: Value| {
            let u = openai_usage(&value, "prompt_tokens", "prompt_tokens_details");
            (
                u.input,
                u.cache_read,
                u.cache_write,
                u.output,
                u.total_tokens,
            )
        };
        // OpenAI: reads only, inside the prompt total.
        assert_eq!(
            usage(
                json!({"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020,
                         "prompt_tokens_details": {"cached_tokens": 900}})
            ),
            (100, 900, 0, 20, 1020)
        );
        // OpenRouter: writes next to reads in the details.
        assert_eq!(
            usage(json!({"prompt_tokens": 1050, "completion_tokens": 20,
                         "prompt_tokens_details": {"cached_tokens": 900, "cache_write_tokens": 50}})),
            (100, 900, 50, 20, 1070)
        );
        // A proxy of Anthropic's API: Anthropic's names, the read also in the details.
        assert_eq!(
            usage(json!({"prompt_tokens": 1050, "completion_tokens": 20,
                         "cache_creation_input_tokens": 50, "cache_read_input_tokens": 900,
                         "prompt_tokens_details": {"cached_tokens": 900}})),
            (100, 900, 50, 20, 1070)
        );
        // DeepSeek's read count.
        assert_eq!(
            usage(json!({"prompt_tokens": 1000, "completion_tokens": 20,
                         "prompt_cache_hit_tokens": 600, "prompt_cache_miss_tokens": 400})),
            (400, 600, 0, 20, 1020)
        );
        // The Responses API's names.
        let responses = openai_usage(
            &json!({"input_tokens": 1050, "output_tokens": 20,
                    "input_tokens_details": {"cached_tokens": 900, "cache_write_tokens": 50}}),
            "input_tokens",
            "input_tokens_details",
        );
        assert_eq!((responses.input, responses.cache_write), (100, 50));
    }
}

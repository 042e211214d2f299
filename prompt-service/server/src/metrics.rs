//! prompt-service's own metrics: names, HELP text, buckets and the
//! recording functions the service calls. The endpoint that serves them is
//! service-kit's ([`CATALOG`] is what this service adds to it).

use service_kit::metrics::Catalog;

/// Characters of rendered system prompts (histogram; `part` = `total` or
/// `stable_prefix`).
pub const PROMPT_RENDER_CHARS: &str = "prompt_render_chars";
/// RenderSystemPrompt requests by how their stable inputs were obtained
/// (counter; `source` = `remembered`: recognised by their bytes, only the
/// turn fields decoded; `prepared`: decoded and prepared, then remembered;
/// `decoded`: decoded whole, not remembered).
pub const PROMPT_STABLE_INPUTS: &str = "prompt_render_stable_inputs_total";
/// RenderSystemPrompt requests by the adapter that asked (counter;
/// `surface`: `embedded_run`, `cli`, `preview`, `compaction`, `unspecified`).
pub const PROMPT_SURFACES: &str = "prompt_render_surfaces_total";

/// Prompt size buckets (characters): a `none`-mode identity line up to the
/// bootstrap budgets' worth of injected files.
const CHARS_BUCKETS: &[f64] = &[
    1_000.0, 2_000.0, 4_000.0, 8_000.0, 16_000.0, 32_000.0, 64_000.0, 128_000.0, 256_000.0,
];

/// What prompt-service adds to the metrics endpoint.
pub const CATALOG: Catalog = Catalog {
    describe,
    buckets: &[(PROMPT_RENDER_CHARS, CHARS_BUCKETS)],
};

fn describe() {
    use ::metrics::{describe_counter, describe_histogram};
    describe_histogram!(
        PROMPT_RENDER_CHARS,
        "Characters of rendered system prompts (whole prompt and stable prefix)."
    );
    describe_counter!(
        PROMPT_STABLE_INPUTS,
        "RenderSystemPrompt requests by how their stable inputs were obtained (remembered, prepared, decoded)."
    );
    describe_counter!(
        PROMPT_SURFACES,
        "RenderSystemPrompt requests by the adapter that asked (embedded_run, cli, preview, compaction, unspecified)."
    );
}

/// Records one rendered system prompt.
pub(crate) fn prompt_rendered(total_chars: u32, stable_prefix_chars: u32) {
    ::metrics::histogram!(PROMPT_RENDER_CHARS, "part" => "total").record(f64::from(total_chars));
    ::metrics::histogram!(PROMPT_RENDER_CHARS, "part" => "stable_prefix")
        .record(f64::from(stable_prefix_chars));
}

/// How a RenderSystemPrompt request's stable inputs were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StableInputs {
    /// Recognised by their bytes; only the turn fields were decoded.
    Remembered,
    /// Decoded, validated and prepared, then remembered.
    Prepared,
    /// Decoded whole and not remembered (not split, or refused).
    Decoded,
}

/// Counts one RenderSystemPrompt request by how its stable inputs were
/// obtained. A low share of `remembered` means clients change their stable
/// inputs (or their encoding) between turns.
pub(crate) fn prompt_stable_inputs(source: StableInputs) {
    let source = match source {
        StableInputs::Remembered => "remembered",
        StableInputs::Prepared => "prepared",
        StableInputs::Decoded => "decoded",
    };
    ::metrics::counter!(PROMPT_STABLE_INPUTS, "source" => source).increment(1);
}

/// Counts one rendered prompt by the adapter that asked for it (the
/// request's `prompt_surface`, as its lowercase name).
pub(crate) fn prompt_surface(surface: &'static str) {
    ::metrics::counter!(PROMPT_SURFACES, "surface" => surface).increment(1);
}

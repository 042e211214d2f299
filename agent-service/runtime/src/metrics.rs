//! agent-service's own metrics: names, HELP text and the recording functions
//! the runtime calls. The endpoint that serves them is service-kit's
//! ([`CATALOG`] is what this service adds to it); until a process installs
//! the recorder every recording is a cheap no-op.
//!
//! Labels stay bounded: agent id, provider, model and small fixed
//! vocabularies. Session ids never become labels (one time series per
//! session would grow without bound).

use std::time::Duration;

use service_kit::metrics::{Catalog, GaugeGuard};

/// Model calls whose stable prefix hash differed from the session's previous
/// call (counter; `agent`).
pub const STABLE_PREFIX_CHANGES: &str = "agent_stable_prefix_changes_total";
/// Workspace files found cut on several renders in a row with the same sizes, once per
/// file, session and size (counter; `agent`, `file`; P-49).
pub const BOOTSTRAP_REPEATED_CUTS: &str = "agent_bootstrap_repeated_cuts_total";
/// Model calls (counter; `provider`, `model`, `outcome`).
pub const MODEL_CALLS: &str = "agent_model_calls_total";
/// Model-call latency in seconds, request to last streamed event (histogram;
/// `provider`, `model`, `outcome`).
pub const MODEL_CALL_SECONDS: &str = "agent_model_call_seconds";
/// Tokens reported by providers (counter; `provider`, `model`, `kind` =
/// `input`, `output`, `cache_read` or `cache_write`).
pub const MODEL_TOKENS: &str = "agent_model_tokens_total";
/// Runs in progress, however started (gauge).
pub const RUNS_ACTIVE: &str = "agent_runs_active";
/// Messages waiting in session queues (gauge).
pub const QUEUE_DEPTH: &str = "agent_queue_depth";
/// Transcript append latency in seconds, including the fsync when one is
/// asked for (histogram; `sync` = `true` or `false`).
pub const TRANSCRIPT_APPEND_SECONDS: &str = "agent_transcript_append_seconds";
/// fsync (fdatasync) latency in seconds on a session's files (histogram;
/// `file` = `journal` for a message accepted, `transcript` for the end of a
/// run, a compaction and the other synced appends): its count is the number
/// of fsyncs, what durability costs per run.
pub const FSYNC_SECONDS: &str = "agent_fsync_seconds";

/// What agent-service adds to the metrics endpoint: HELP lines only (every
/// agent histogram is in seconds, so the kit's latency buckets apply).
pub const CATALOG: Catalog = Catalog {
    describe,
    buckets: &[],
};

fn describe() {
    use ::metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(
        STABLE_PREFIX_CHANGES,
        "Model calls whose stable prompt prefix changed since the session's previous call."
    );
    describe_counter!(
        BOOTSTRAP_REPEATED_CUTS,
        "Workspace files cut to fit the prompt on several renders in a row, by agent and file."
    );
    describe_counter!(MODEL_CALLS, "Model calls, by provider, model and outcome.");
    describe_histogram!(
        MODEL_CALL_SECONDS,
        Unit::Seconds,
        "Model call latency, request to last streamed event."
    );
    describe_counter!(MODEL_TOKENS, "Tokens reported by model providers, by kind.");
    describe_gauge!(RUNS_ACTIVE, "Agent runs in progress.");
    describe_gauge!(QUEUE_DEPTH, "Messages waiting in session queues.");
    describe_histogram!(
        TRANSCRIPT_APPEND_SECONDS,
        Unit::Seconds,
        "Transcript append latency, including the fsync when one is asked for."
    );
    describe_histogram!(
        FSYNC_SECONDS,
        Unit::Seconds,
        "fsync latency on session files, by file (journal, transcript)."
    );
}

/// Records that a model call's stable prefix hash differed from the session's
/// previous call. Called where `ModelCall.prefix_changed` is computed.
pub(crate) fn stable_prefix_changed(agent_id: &str) {
    ::metrics::counter!(STABLE_PREFIX_CHANGES, "agent" => agent_id.to_owned()).increment(1);
}

/// Records that a workspace file was cut on several renders in a row (`file` is a bootstrap
/// file name, a small set).
pub(crate) fn repeated_cut(agent_id: &str, file: &str) {
    ::metrics::counter!(BOOTSTRAP_REPEATED_CUTS, "agent" => agent_id.to_owned(), "file" => file.to_owned())
        .increment(1);
}

/// Token counts of one model call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tokens {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the provider's prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
}

/// Records one finished model call. `outcome` is a small fixed vocabulary
/// (`ok`, `error`, `aborted`), never an error message.
pub(crate) fn model_call(
    provider: &str,
    model: &str,
    outcome: &'static str,
    latency: Duration,
    tokens: Tokens,
) {
    let (provider, model) = (provider.to_owned(), model.to_owned());
    ::metrics::counter!(MODEL_CALLS, "provider" => provider.clone(), "model" => model.clone(), "outcome" => outcome)
        .increment(1);
    ::metrics::histogram!(MODEL_CALL_SECONDS, "provider" => provider.clone(), "model" => model.clone(), "outcome" => outcome)
        .record(latency.as_secs_f64());
    for (kind, count) in [
        ("input", tokens.input),
        ("output", tokens.output),
        ("cache_read", tokens.cache_read),
        ("cache_write", tokens.cache_write),
    ] {
        ::metrics::counter!(MODEL_TOKENS, "provider" => provider.clone(), "model" => model.clone(), "kind" => kind)
            .increment(count);
    }
}

/// Records one fsync of a session file (`journal` or `transcript`).
pub(crate) fn fsynced(file: &'static str, latency: Duration) {
    ::metrics::histogram!(FSYNC_SECONDS, "file" => file).record(latency.as_secs_f64());
}

/// Records one transcript append (`synced`: fsynced before the ack).
pub(crate) fn transcript_appended(latency: Duration, synced: bool) {
    ::metrics::histogram!(TRANSCRIPT_APPEND_SECONDS, "sync" => if synced { "true" } else { "false" })
        .record(latency.as_secs_f64());
}

/// Counts one run as active until the guard is dropped (however the run
/// ends: finished, failed, cancelled, panicked).
#[must_use = "the run counts as active only while the guard lives"]
pub(crate) fn run_active() -> GaugeGuard {
    GaugeGuard::new(RUNS_ACTIVE)
}

/// Moves the queue-depth gauge by `delta` messages (each change of a
/// session's queue, reported as the queue's lock is released).
pub(crate) fn queue_depth_changed(delta: f64) {
    let gauge = ::metrics::gauge!(QUEUE_DEPTH);
    if delta >= 0.0 {
        gauge.increment(delta);
    } else {
        gauge.decrement(-delta);
    }
}

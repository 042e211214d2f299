//! OpenClaw's documented defaults (July 2026), in one place so tests can pin them.

use std::time::Duration;

/// The agent id used when `agents.list` is empty.
pub const AGENT_ID: &str = "main";
/// Per-file bootstrap budget, in characters.
pub const BOOTSTRAP_MAX_CHARS: u64 = 20_000;
/// Total bootstrap budget, in characters (raised to the per-file budget when that is larger).
pub const BOOTSTRAP_TOTAL_MAX_CHARS: u64 = 60_000;
/// Heartbeat interval.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(30 * 60);
/// Skill directories examined per root.
pub const SKILLS_MAX_CANDIDATES_PER_ROOT: u64 = 300;
/// Skills loaded per source.
pub const SKILLS_MAX_LOADED_PER_SOURCE: u64 = 200;
/// Skills listed in the prompt.
pub const SKILLS_MAX_IN_PROMPT: u64 = 150;
/// Characters of the prompt's skills list.
pub const SKILLS_MAX_PROMPT_CHARS: u64 = 18_000;
/// Largest SKILL.md read, in bytes.
pub const SKILLS_MAX_FILE_BYTES: u64 = 256_000;
/// Quiet window before queued messages are delivered, in milliseconds.
pub const QUEUE_DEBOUNCE_MS: u64 = 500;
/// Most messages queued per session.
pub const QUEUE_CAP: u64 = 20;
/// Smallest streamed chunk, in characters.
pub const CHUNK_MIN_CHARS: u64 = 800;
/// Largest streamed chunk, in characters.
pub const CHUNK_MAX_CHARS: u64 = 1_200;
/// Idle time before coalesced chunks are flushed, in milliseconds.
pub const COALESCE_IDLE_MS: u64 = 1_000;
/// Pause range of the "natural" human delay, in milliseconds.
pub const NATURAL_DELAY_MS: (u64, u64) = (800, 2_500);
/// The Codex executable.
pub const CODEX_COMMAND: &str = "codex";
/// Sandbox workspaces directory, under the state directory.
pub const SANDBOXES_DIR: &str = "sandboxes";
/// Providers whose plugin config may set the GPT-5 personality (besides no provider at all).
pub const GPT5_PERSONALITY_PROVIDERS: [&str; 6] = [
    "codex",
    "codex-cli",
    "openai",
    "azure-openai",
    "azure-openai-responses",
    "openai-codex",
];

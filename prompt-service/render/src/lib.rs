//! Renders OpenClaw agent system prompts from explicit inputs.
//!
//! This crate is the pure core of prompt-service: a [`RenderInput`] goes in,
//! a [`Rendered`] prompt comes out, with the cache-boundary split, a SHA-256
//! per section and the context, skills and tools reports. It reads no config,
//! files, environment or clock, and holds no state, so the same input always
//! gives byte-identical output (P-1, lesson L1).
//!
//! It is not the place for config parsing, gRPC conversions or filesystem
//! access: those live in the server and in agent-service, which gather the
//! live facts and pass them in.

mod bootstrap;
mod boundary;
mod channels;
mod digest;
mod error;
pub mod fixtures;
mod gpt5;
mod hash_memo;
mod input;
mod mode;
mod owners;
mod paths;
mod prepare;
mod prepared;
mod project_scope;
mod render;
mod sanitize;
mod sections;
mod shared;
mod skills;
mod text;
mod tools;
mod truncate;
mod voice;

pub use bootstrap::{
    Bootstrap, DEFAULT_MAX_CHARS_PER_FILE, DEFAULT_TOTAL_MAX_CHARS, FileReport, FileStatus,
    Injected, TruncationCause, WORKSPACE_FILES, allowed as bootstrap_file_allowed,
    prepare_stable as budget_bootstrap_files,
};
pub use boundary::{
    CACHE_BOUNDARY_MARKER, RELOCATABLE_MARKER, split as split_at_boundary, strip as strip_boundary,
};
pub use channels::{
    display_name as channel_display_name, native_approvals as channel_has_native_approvals,
};
pub use error::RenderError;
pub use gpt5::{
    HEARTBEAT_GUIDANCE as GPT5_HEARTBEAT_GUIDANCE, Personality as Gpt5Personality,
    applies as gpt5_applies, contribution as gpt5_contribution, is_gpt5_model,
};
pub use input::{
    BootstrapLimits, ChannelInfo, ChatType, CitationsMode, ContextFile, Contribution,
    DelegationMode, Elevated, ElevatedLevel, FullAccessBlock, HeartbeatInfo, ModelAlias,
    OwnerDisplay, PromptMode, PromptSurface, ReactionLevel, ReasoningLevel, RenderInput,
    ReplyDelivery, RuntimeInfo, RuntimeVersion, SandboxInfo, SessionKind, Skill,
    SkillVersionSource, SkillsLimits, ThinkLevel, Tool, TurnInputs, TurnKind, WorkspaceAccess,
};
pub use mode::{Layer, Row as SectionRow, SECTIONS, SectionKind};
pub use owners::hash_token as owner_hash_token;
pub use paths::{normalize_absolute, relative_in_workspace};
pub use prepared::Prepared;
pub use project_scope::normalize_key as normalize_project_key;
pub use render::{
    ContextReport, Rendered, SectionReport, SkillEntry, SkillsReport, ToolEntry, ToolsReport,
    render, validate,
};
pub use sanitize::heartbeat_is_empty;
pub use sections::{HEARTBEAT_OK, NO_REPLY};
pub use shared::{PromptText, Sections, SharedStr};
pub use skills::{
    DEFAULT_MAX_CHARS as DEFAULT_MAX_SKILLS_CHARS, DEFAULT_MAX_SKILLS, Listing as SkillsListing,
    PreparedSkill, listing as skills_listing, prepare as prepare_skills,
    version_tag as skill_version,
};
pub use text::{chars_u32, normalize_block, one_line, sha256_hex};
pub use tools::{TOOL_TABLE, tool_order};
pub use voice::{DEFAULT_HEARTBEAT_PROMPT, TtsMode, tts_hint};

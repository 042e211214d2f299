//! The section table: every section in its fixed output order, the side of
//! the cache boundary it sits on, and whether each prompt mode carries it
//! (P-7 to P-28). One table decides membership; builders only decide
//! whether their data is present.

use crate::input::PromptMode;

/// Which side of the cache boundary a section sits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// Above the boundary; a pure function of stable inputs.
    Stable,
    /// Below the boundary; rebuilt every turn.
    Dynamic,
}

impl Layer {
    /// Lowercase name for reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stable => "stable",
            Self::Dynamic => "dynamic",
        }
    }
}

/// Every kind of section, declared in output order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SectionKind {
    /// The base identity line (no heading).
    Identity,
    /// `## Tooling`.
    Tooling,
    /// `## Sub-Agent Delegation`.
    Delegation,
    /// Provider `interaction_style` override.
    InteractionStyle,
    /// `## Heartbeat Initiative`, the GPT-5 overlay's heartbeat guidance.
    Gpt5Heartbeat,
    /// `## Tool Call Style` (built-in text).
    ToolCallStyle,
    /// Provider `tool_call_style` override.
    ProviderToolCallStyle,
    /// `## Execution Bias` (built-in text).
    ExecutionBias,
    /// Provider `execution_bias` override.
    ProviderExecutionBias,
    /// `## Promised Work`.
    PromisedWork,
    /// `## Runtime Context`.
    RuntimeContext,
    /// Provider stable prefix.
    ProviderStablePrefix,
    /// `## Safety`.
    Safety,
    /// `## OpenClaw Control`.
    Control,
    /// `## Skills`.
    Skills,
    /// `## Memory Recall`.
    Memory,
    /// `## OpenClaw Self-Update`.
    SelfUpdate,
    /// `## Model Aliases`.
    ModelAliases,
    /// `## Workspace`.
    Workspace,
    /// `## Documentation`.
    Documentation,
    /// `## Sandbox`.
    Sandbox,
    /// `## Authorized Senders`.
    AuthorizedSenders,
    /// `## Current Date & Time`.
    DateTime,
    /// `## Bootstrap Context Notice`.
    BootstrapNotice,
    /// `## Workspace Files (injected)`.
    WorkspaceFiles,
    /// `## Reasoning Format`.
    ReasoningFormat,
    /// `# Project Context` and one section per stable file.
    ProjectContext,
    /// `# Dynamic Project Context` and one section per dynamic file.
    DynamicProjectContext,
    /// `## Bootstrap Pending`: per turn, because only a user's turn works
    /// through the first-run setup.
    BootstrapPending,
    /// `## Control UI Embed`.
    ControlUiEmbed,
    /// `## Messaging`.
    Messaging,
    /// `## Assistant Output Directives`.
    OutputDirectives,
    /// `## Silent Replies`.
    SilentReplies,
    /// `## Voice (TTS)`.
    Voice,
    /// `## Group Chat Context` / `## Subagent Context`.
    ExtraContext,
    /// `## Reactions`.
    Reactions,
    /// `## Approvals`.
    Approvals,
    /// Provider dynamic suffix.
    ProviderDynamicSuffix,
    /// `## Heartbeats`.
    Heartbeats,
    /// `## Current Date`.
    CurrentDate,
    /// `## Runtime`.
    Runtime,
}

/// One row of the section table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The section.
    pub kind: SectionKind,
    /// Stable machine id used in reports.
    pub id: &'static str,
    /// Side of the boundary.
    pub layer: Layer,
    /// Carried in full mode.
    pub full: bool,
    /// Carried in minimal mode.
    pub minimal: bool,
    /// Carried in none mode.
    pub none: bool,
    /// Part of the relocatable block: the trailing per-turn sections a
    /// caller may move after the conversation (dynamic rows only).
    pub relocatable: bool,
}

impl Row {
    /// Whether `mode` carries this section.
    pub fn in_mode(&self, mode: PromptMode) -> bool {
        match mode {
            PromptMode::Full => self.full,
            PromptMode::Minimal => self.minimal,
            PromptMode::None => self.none,
        }
    }
}

const fn row(
    kind: SectionKind,
    id: &'static str,
    layer: Layer,
    full: bool,
    minimal: bool,
    none: bool,
) -> Row {
    Row {
        kind,
        id,
        layer,
        full,
        minimal,
        none,
        relocatable: false,
    }
}

/// A row of the relocatable block.
const fn trailing(row: Row) -> Row {
    Row {
        relocatable: true,
        ..row
    }
}

use Layer::{Dynamic as D, Stable as S};
use SectionKind as K;

/// The section table, in output order. Minimal mode (subagents, cron) drops
/// delegation, the GPT-5 heartbeat guidance, the built-in execution bias, memory recall, self-update, model
/// aliases, documentation, authorized senders, output directives, voice, the
/// Control UI embed and heartbeats (P-26); it keeps a short Messaging section
/// (where its reply goes) and the silent-reply rule, which the runtime honours
/// in every session.
/// `none` keeps only the identity line (P-27). The two trailing rows
/// form the relocatable block: the per-turn facts that change most often,
/// which a caller may move after the conversation.
pub const SECTIONS: &[Row] = &[
    //   kind                          id                          layer full   min    none
    row(K::Identity, "identity", S, true, true, true),
    row(K::Tooling, "tooling", S, true, true, false),
    row(K::Delegation, "delegation", S, true, false, false),
    row(
        K::InteractionStyle,
        "provider:interaction_style",
        S,
        true,
        true,
        false,
    ),
    row(K::Gpt5Heartbeat, "gpt5_heartbeat", S, true, false, false),
    row(K::ToolCallStyle, "tool_call_style", S, true, true, false),
    row(
        K::ProviderToolCallStyle,
        "provider:tool_call_style",
        S,
        true,
        true,
        false,
    ),
    row(K::ExecutionBias, "execution_bias", S, true, false, false),
    row(
        K::ProviderExecutionBias,
        "provider:execution_bias",
        S,
        true,
        true,
        false,
    ),
    row(K::PromisedWork, "promised_work", S, true, true, false),
    row(K::RuntimeContext, "runtime_context", S, true, true, false),
    row(
        K::ProviderStablePrefix,
        "provider:stable_prefix",
        S,
        true,
        true,
        false,
    ),
    row(K::Safety, "safety", S, true, true, false),
    row(K::Control, "control", S, true, true, false),
    row(K::Skills, "skills", S, true, true, false),
    row(K::Memory, "memory", S, true, false, false),
    row(K::SelfUpdate, "self_update", S, true, false, false),
    row(K::ModelAliases, "model_aliases", S, true, false, false),
    row(K::Workspace, "workspace", S, true, true, false),
    row(K::Documentation, "documentation", S, true, false, false),
    row(K::Sandbox, "sandbox", S, true, true, false),
    row(
        K::AuthorizedSenders,
        "authorized_senders",
        S,
        true,
        false,
        false,
    ),
    row(K::DateTime, "date_time", S, true, true, false),
    row(K::BootstrapNotice, "bootstrap_notice", S, true, true, false),
    row(K::WorkspaceFiles, "workspace_files", S, true, true, false),
    row(K::ReasoningFormat, "reasoning_format", S, true, true, false),
    row(K::ProjectContext, "project_context", S, true, true, false),
    row(
        K::DynamicProjectContext,
        "dynamic_project_context",
        D,
        true,
        true,
        false,
    ),
    row(
        K::BootstrapPending,
        "bootstrap_pending",
        D,
        true,
        true,
        false,
    ),
    row(K::ControlUiEmbed, "control_ui_embed", D, true, false, false),
    row(K::Messaging, "messaging", D, true, true, false),
    row(
        K::OutputDirectives,
        "output_directives",
        D,
        true,
        false,
        false,
    ),
    row(K::SilentReplies, "silent_replies", D, true, true, false),
    row(K::Voice, "voice", D, true, false, false),
    row(K::ExtraContext, "extra_context", D, true, true, false),
    row(K::Reactions, "reactions", D, true, true, false),
    row(K::Approvals, "approvals", D, true, true, false),
    row(
        K::ProviderDynamicSuffix,
        "provider:dynamic_suffix",
        D,
        true,
        true,
        false,
    ),
    row(K::Heartbeats, "heartbeats", D, true, false, false),
    trailing(row(K::CurrentDate, "current_date", D, true, true, false)),
    trailing(row(K::Runtime, "runtime", D, true, true, false)),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order_and_stable_rows_come_first() {
        for pair in SECTIONS.windows(2) {
            assert!(
                pair[0].kind < pair[1].kind,
                "{:?} out of order",
                pair[1].kind
            );
            assert!(
                !(pair[0].layer == Layer::Dynamic && pair[1].layer == Layer::Stable),
                "stable section {:?} after a dynamic one",
                pair[1].kind
            );
        }
    }

    #[test]
    fn ids_are_unique() {
        let mut ids: Vec<_> = SECTIONS.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), SECTIONS.len());
    }

    /// P-25 to P-27, row by row: (id, full, minimal, none).
    #[test]
    fn membership_per_mode_row_by_row() {
        let expected: &[(&str, bool, bool, bool)] = &[
            ("identity", true, true, true),
            ("tooling", true, true, false),
            ("delegation", true, false, false),
            ("provider:interaction_style", true, true, false),
            ("gpt5_heartbeat", true, false, false),
            ("tool_call_style", true, true, false),
            ("provider:tool_call_style", true, true, false),
            ("execution_bias", true, false, false),
            ("provider:execution_bias", true, true, false),
            ("promised_work", true, true, false),
            ("runtime_context", true, true, false),
            ("provider:stable_prefix", true, true, false),
            ("safety", true, true, false),
            ("control", true, true, false),
            ("skills", true, true, false),
            ("memory", true, false, false),
            ("self_update", true, false, false),
            ("model_aliases", true, false, false),
            ("workspace", true, true, false),
            ("documentation", true, false, false),
            ("sandbox", true, true, false),
            ("authorized_senders", true, false, false),
            ("date_time", true, true, false),
            ("bootstrap_notice", true, true, false),
            ("workspace_files", true, true, false),
            ("reasoning_format", true, true, false),
            ("project_context", true, true, false),
            ("dynamic_project_context", true, true, false),
            ("bootstrap_pending", true, true, false),
            ("control_ui_embed", true, false, false),
            ("messaging", true, true, false),
            ("output_directives", true, false, false),
            ("silent_replies", true, true, false),
            ("voice", true, false, false),
            ("extra_context", true, true, false),
            ("reactions", true, true, false),
            ("approvals", true, true, false),
            ("provider:dynamic_suffix", true, true, false),
            ("heartbeats", true, false, false),
            ("current_date", true, true, false),
            ("runtime", true, true, false),
        ];
        assert_eq!(expected.len(), SECTIONS.len());
        for (row, (id, full, minimal, none)) in SECTIONS.iter().zip(expected) {
            assert_eq!(row.id, *id);
            assert_eq!(row.in_mode(PromptMode::Full), *full, "{id} full");
            assert_eq!(row.in_mode(PromptMode::Minimal), *minimal, "{id} minimal");
            assert_eq!(row.in_mode(PromptMode::None), *none, "{id} none");
        }
    }

    /// The relocatable block is the table's dynamic tail: date, then runtime.
    #[test]
    fn the_relocatable_rows_close_the_table() {
        let ids: Vec<&str> = SECTIONS
            .iter()
            .skip_while(|r| !r.relocatable)
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, ["current_date", "runtime"]);
        assert!(
            SECTIONS
                .iter()
                .filter(|r| r.relocatable)
                .all(|r| r.layer == Layer::Dynamic)
        );
    }

    /// P-24: the per-turn sections sit below the boundary.
    #[test]
    fn per_turn_sections_are_dynamic() {
        for id in [
            "control_ui_embed",
            "messaging",
            "voice",
            "extra_context",
            "reactions",
            "heartbeats",
            "current_date",
            "runtime",
        ] {
            let row = SECTIONS.iter().find(|r| r.id == id);
            assert_eq!(row.map(|r| r.layer), Some(Layer::Dynamic), "{id}");
        }
    }
}

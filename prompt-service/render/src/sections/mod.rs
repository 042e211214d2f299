//! Section builders. Each builder turns the prepared render context into the
//! text of one section, or nothing when its data is absent. Whether a mode
//! carries a section at all is decided by the table in [`crate::mode`].

mod knowledge;
mod policy;
mod sandbox;
mod turn;
mod workspace;

pub use turn::{HEARTBEAT_OK, NO_REPLY};

use std::{
    borrow::Cow,
    fmt::{self, Write as _},
};

use crate::{
    bootstrap::{Bootstrap, DynamicFiles},
    input::{
        ChannelInfo, CitationsMode, Contribution, DelegationMode, HeartbeatInfo, ModelAlias,
        OwnerDisplay, PromptMode, ReactionLevel, ReasoningLevel, RuntimeInfo, SandboxInfo,
        SessionKind, ThinkLevel, TurnKind,
    },
    mode::SectionKind,
    skills::Listing,
    tools::ToolSet,
};

/// What the stable sections read: validated, normalised and sorted inputs
/// that do not change from turn to turn. The per-turn sections read it too
/// (tool names, mode, workspace).
#[derive(Debug, Clone)]
pub struct StableCtx {
    pub(crate) mode: PromptMode,
    pub(crate) agent_name: String,
    pub(crate) workspace: String,
    pub(crate) workspace_notes: Vec<String>,
    pub(crate) fs_workspace_only: bool,
    pub(crate) tools: ToolSet,
    pub(crate) skills: Listing,
    pub(crate) bootstrap: Bootstrap,
    pub(crate) sandbox: SandboxInfo,
    pub(crate) timezone: String,
    pub(crate) reasoning_tag_hint: bool,
    pub(crate) owners: Vec<String>,
    pub(crate) owner_display: OwnerDisplay,
    pub(crate) aliases: Vec<ModelAlias>,
    pub(crate) delegation: DelegationMode,
    pub(crate) docs_path: String,
    pub(crate) source_path: String,
    pub(crate) memory_include: bool,
    pub(crate) citations: CitationsMode,
    pub(crate) contribution: Contribution,
    pub(crate) truncation_notice: bool,
    pub(crate) include_safety: bool,
    pub(crate) session_kind: SessionKind,
    pub(crate) acp_enabled: bool,
    pub(crate) exec_exit_wakeups: bool,
    pub(crate) exec_approvals_never_ask: bool,
    pub(crate) gpt5_heartbeat_guidance: bool,
    /// The gateway tool's actions, when its schema lists them (`action`'s
    /// `enum`); `None` when it does not restrict them.
    pub(crate) gateway_actions: Option<Vec<String>>,
}

impl StableCtx {
    /// Whether the gateway tool offers this action (any action when its
    /// schema does not list them).
    pub(crate) fn gateway_can(&self, action: &str) -> bool {
        self.tools.has("gateway")
            && self
                .gateway_actions
                .as_ref()
                .is_none_or(|actions| actions.iter().any(|a| a == action))
    }
}

/// What only the per-turn sections read.
#[derive(Debug, Clone)]
pub struct TurnCtx {
    pub(crate) agent_id: String,
    pub(crate) channel: ChannelInfo,
    pub(crate) extra_system_prompt: String,
    pub(crate) heartbeat: HeartbeatInfo,
    pub(crate) runtime: RuntimeInfo,
    pub(crate) think_level: ThinkLevel,
    pub(crate) reasoning_level: ReasoningLevel,
    pub(crate) tts_hint: String,
    pub(crate) reaction_level: ReactionLevel,
    pub(crate) dynamic_suffix: String,
    pub(crate) date: Option<jiff::civil::Date>,
    /// What started the turn, resolved against the session kind.
    pub(crate) turn_kind: TurnKind,
}

impl TurnCtx {
    /// Whether the channel shows native approval UI (resolved in prepare).
    pub(crate) fn native_approvals(&self) -> bool {
        self.channel.native_approvals.unwrap_or(false)
    }
}

/// One rendered piece: a section, or one file of a Project Context section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// Stable id: a table id, or one made for a Project Context file.
    pub id: Cow<'static, str>,
    /// Text, no trailing newline.
    pub text: String,
}

impl Piece {
    pub(crate) fn new(id: impl Into<Cow<'static, str>>, text: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            text: text.into(),
        }
    }
}

/// Joins the lines of a section.
pub(crate) fn lines<S: AsRef<str>>(items: &[S]) -> String {
    let len = items.iter().map(|s| s.as_ref().len() + 1).sum::<usize>();
    let mut out = String::with_capacity(len.saturating_sub(1));
    for (i, line) in items.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line.as_ref());
    }
    out
}

/// A section's text built in one buffer: its heading, then one line at a
/// time. For the per-turn sections, which are rebuilt on every render.
pub(crate) struct SectionText(String);

impl SectionText {
    /// Room for any per-turn section but a long list of hints.
    const CAPACITY: usize = 1024;

    /// Starts a section with its heading line.
    pub(crate) fn new(heading: &str) -> Self {
        let mut text = String::with_capacity(Self::CAPACITY);
        text.push_str(heading);
        Self(text)
    }

    /// Adds a line.
    pub(crate) fn line(&mut self, line: &str) {
        self.0.push('\n');
        self.0.push_str(line);
    }

    /// Adds a formatted line (`format_args!`).
    pub(crate) fn line_fmt(&mut self, line: fmt::Arguments<'_>) {
        self.0.push('\n');
        // Writing to a `String` cannot fail.
        let _ = self.0.write_fmt(line);
    }

    /// The finished text.
    pub(crate) fn finish(self) -> String {
        self.0
    }
}

/// Displays `items` separated by `sep`: `items.join(sep)`, written in place.
pub(crate) struct Joined<'a>(pub(crate) &'a [String], pub(crate) &'a str);

impl fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(self.1)?;
            }
            f.write_str(item)?;
        }
        Ok(())
    }
}

fn one(id: &'static str, text: Option<String>) -> Vec<Piece> {
    text.filter(|t| !t.is_empty())
        .map(|t| Piece::new(id, t))
        .into_iter()
        .collect()
}

/// Builds the pieces of one stable section kind (`id` is the table's id).
/// Dynamic kinds yield nothing here.
pub(crate) fn build_stable(kind: SectionKind, id: &'static str, ctx: &StableCtx) -> Vec<Piece> {
    use SectionKind as K;
    let c = &ctx.contribution;
    let provided = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    match kind {
        K::Identity => one(id, Some(policy::identity(ctx))),
        K::Tooling => one(id, Some(policy::tooling(ctx))),
        K::Delegation => one(id, policy::delegation(ctx)),
        K::InteractionStyle => one(id, provided(&c.interaction_style)),
        K::Gpt5Heartbeat => one(id, knowledge::gpt5_heartbeat(ctx)),
        K::ToolCallStyle => one(id, policy::tool_call_style(ctx)),
        K::ProviderToolCallStyle => one(id, provided(&c.tool_call_style)),
        K::ExecutionBias => one(
            id,
            c.execution_bias
                .is_empty()
                .then(|| policy::execution_bias(ctx)),
        ),
        K::ProviderExecutionBias => one(id, provided(&c.execution_bias)),
        K::PromisedWork => one(id, Some(policy::promised_work(ctx))),
        K::RuntimeContext => one(id, Some(policy::runtime_context(ctx))),
        K::ProviderStablePrefix => one(id, provided(&c.stable_prefix)),
        K::Safety => one(id, policy::safety(ctx)),
        K::Control => one(id, Some(policy::control(ctx))),
        K::Skills => one(id, knowledge::skills(ctx)),
        K::Memory => one(id, knowledge::memory(ctx)),
        K::SelfUpdate => one(id, knowledge::self_update(ctx)),
        K::ModelAliases => one(id, knowledge::model_aliases(ctx)),
        K::Workspace => one(id, Some(workspace::workspace(ctx))),
        K::Documentation => one(id, Some(workspace::documentation(ctx))),
        K::Sandbox => one(id, sandbox::sandbox(ctx)),
        K::AuthorizedSenders => one(id, workspace::authorized_senders(ctx)),
        K::DateTime => one(id, workspace::date_time(ctx)),
        K::BootstrapNotice => one(id, workspace::bootstrap_notice(ctx)),
        K::WorkspaceFiles => one(id, workspace::workspace_files(ctx)),
        K::ReasoningFormat => one(id, workspace::reasoning_format(ctx)),
        K::ProjectContext => workspace::project_context(ctx),
        _ => Vec::new(),
    }
}

/// The pieces of the Dynamic Project Context section for these per-turn files.
pub(crate) fn dynamic_files(ctx: &StableCtx, files: &DynamicFiles) -> Vec<Piece> {
    turn::dynamic_project_context(ctx, files)
}

/// Builds the pieces of one per-turn section kind. Stable kinds yield nothing.
pub(crate) fn build_dynamic(
    kind: SectionKind,
    id: &'static str,
    ctx: &StableCtx,
    turn: &TurnCtx,
) -> Vec<Piece> {
    use SectionKind as K;
    match kind {
        // Built with the stable block (see [`dynamic_files`]): it reads one
        // fact of the turn only.
        K::DynamicProjectContext => Vec::new(),
        K::BootstrapPending => one(id, turn::bootstrap_pending(ctx, turn)),
        K::ControlUiEmbed => one(id, turn::control_ui_embed(turn)),
        K::Messaging => one(id, Some(turn::messaging(ctx, turn))),
        K::OutputDirectives => one(id, Some(turn::output_directives(ctx, turn))),
        K::CurrentDate => one(id, turn::current_date(ctx, turn)),
        K::SilentReplies => one(id, turn::silent_replies(turn)),
        K::Voice => one(id, turn::voice(turn)),
        K::ExtraContext => one(id, turn::extra_context(ctx, turn)),
        K::Reactions => one(id, turn::reactions(turn)),
        K::Approvals => one(id, turn::approvals(ctx, turn)),
        K::ProviderDynamicSuffix => one(
            id,
            (!turn.dynamic_suffix.is_empty()).then(|| turn.dynamic_suffix.clone()),
        ),
        K::Heartbeats => one(id, turn::heartbeats(ctx, turn)),
        K::Runtime => one(id, Some(turn::runtime(turn))),
        _ => Vec::new(),
    }
}

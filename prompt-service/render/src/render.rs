//! The facade: validate and normalise the input, build the sections in table
//! order, join them around the cache boundary, and report on the result.

use std::sync::Arc;

use crate::{
    bootstrap::{self, FileReport},
    boundary::RELOCATABLE_MARKER,
    boundary::{CACHE_BOUNDARY_MARKER, SECTION_SEPARATOR},
    channels,
    error::RenderError,
    input::{
        ChannelInfo, Contribution, HeartbeatInfo, ModelAlias, PromptMode, PromptSurface,
        ReactionLevel, ReasoningLevel, RenderInput, RuntimeInfo, RuntimeVersion, ThinkLevel,
        TurnInputs,
    },
    mode::{Layer, SECTIONS},
    owners, paths,
    sections::{self, StableCtx, TurnCtx},
    shared::{Sections, SharedStr},
    skills,
    text::{self, normalize_block, one_line},
    tools::ToolSet,
};

/// One section of the output, as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionReport {
    /// Stable id.
    pub id: String,
    /// Heading line (empty for headless sections).
    pub heading: String,
    /// Side of the boundary.
    pub layer: Layer,
    /// Unicode scalar values.
    pub chars: u32,
    /// Lowercase hex SHA-256 of the section text.
    pub sha256: String,
}

/// Injected files (`/context list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextReport {
    /// Effective per-file limit.
    pub max_chars_per_file: u32,
    /// Effective total limit.
    pub total_max_chars: u32,
    /// One entry per requested file.
    pub files: Vec<FileReport>,
    /// Characters of the Project Context sections.
    pub project_context_chars: u32,
    /// The truncation notice was rendered.
    pub truncation_notice_shown: bool,
}

/// One listed skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillEntry {
    /// Name.
    pub name: String,
    /// `sha256:` + 16 hex.
    pub version: String,
    /// Characters of its block.
    pub block_chars: u32,
}

/// The skills listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillsReport {
    /// Skills offered.
    pub offered: u32,
    /// Skills listed.
    pub listed: u32,
    /// Names left out.
    pub omitted: Vec<String>,
    /// Characters of the listing.
    pub chars: u32,
    /// Descriptions dropped.
    pub compact: bool,
    /// Listed skills.
    pub entries: Vec<SkillEntry>,
}

/// Sizes for one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    /// Name.
    pub name: String,
    /// Characters of its Tooling line.
    pub summary_chars: u32,
    /// Characters of its schema.
    pub schema_chars: u32,
    /// Top-level schema properties.
    pub properties_count: u32,
}

/// Tool list and schema sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsReport {
    /// Characters of all tool lines.
    pub list_chars: u32,
    /// Characters of all schemas.
    pub schema_chars: u32,
    /// Per tool, in listing order.
    pub entries: Vec<ToolEntry>,
}

/// A rendered prompt and its diagnostics.
///
/// Everything that depends only on the stable inputs (the prefix, its hash,
/// the stable sections, the skills and tools reports) is shared with the
/// memoised stable block rather than copied on every turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// Stable prefix, marker line, dynamic suffix. In `none` mode, which has
    /// no dynamic part, the stable prefix alone (no marker).
    pub text: String,
    /// Everything above the marker.
    pub stable_prefix: SharedStr,
    /// Everything below the marker.
    pub dynamic_suffix: String,
    /// Byte offset of the marker in `text` (`text.len()` when there is none).
    pub boundary_offset: usize,
    /// Byte offset in `text` of the relocatable block: the trailing per-turn
    /// sections (date, runtime) a caller may move after the conversation.
    /// `text.len()` when there is none.
    pub relocatable_offset: usize,
    /// The adapter that asked (echoed from the input, never rendered).
    pub prompt_surface: PromptSurface,
    /// Hex SHA-256 of `stable_prefix`.
    pub stable_prefix_sha256: SharedStr,
    /// Characters of `stable_prefix`.
    pub stable_prefix_chars: u32,
    /// Mode used.
    pub mode: PromptMode,
    /// Sections in output order.
    pub sections: Sections,
    /// Injected files.
    pub context: ContextReport,
    /// Skills listing.
    pub skills: Arc<SkillsReport>,
    /// Tools.
    pub tools: Arc<ToolsReport>,
    /// Characters of `text`.
    pub chars: u32,
    /// `chars / 4`, rounded up.
    pub approx_tokens: u32,
}

/// Renders the system prompt for `input`.
///
/// Pure: the same input always yields byte-identical output, and inputs that
/// only feed sections below the boundary never change the stable prefix.
/// [`crate::Renderer`] gives the same output with the stable block memoised.
pub fn render(input: &RenderInput) -> Result<Rendered, RenderError> {
    finish(input, TurnRef::of_input(input), &stable_block(input)?)
}

/// The turn inputs of one render, borrowed from a [`RenderInput`] or from
/// separate [`TurnInputs`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct TurnRef<'a> {
    channel: &'a ChannelInfo,
    extra_system_prompt: &'a str,
    heartbeat: &'a HeartbeatInfo,
    runtime: &'a RuntimeInfo,
    think_level: ThinkLevel,
    reasoning_level: ReasoningLevel,
    tts_hint: &'a str,
    reaction_level: ReactionLevel,
    current_date: &'a str,
    prompt_surface: PromptSurface,
    mark_relocatable: bool,
}

impl<'a> TurnRef<'a> {
    /// The turn inputs of a whole input.
    pub(crate) fn of_input(input: &'a RenderInput) -> Self {
        Self {
            channel: &input.channel,
            extra_system_prompt: &input.extra_system_prompt,
            heartbeat: &input.heartbeat,
            runtime: &input.runtime,
            think_level: input.think_level,
            reasoning_level: input.reasoning_level,
            tts_hint: &input.tts_hint,
            reaction_level: input.reaction_level,
            current_date: &input.current_date,
            prompt_surface: input.prompt_surface,
            mark_relocatable: input.mark_relocatable,
        }
    }

    /// Separate turn inputs (destructured, so a new field is noticed here).
    pub(crate) fn of_turn(turn: &'a TurnInputs) -> Self {
        let TurnInputs {
            channel,
            extra_system_prompt,
            heartbeat,
            runtime,
            think_level,
            reasoning_level,
            tts_hint,
            reaction_level,
            current_date,
            prompt_surface,
            mark_relocatable,
        } = turn;
        Self {
            channel,
            extra_system_prompt,
            heartbeat,
            runtime,
            think_level: *think_level,
            reasoning_level: *reasoning_level,
            tts_hint,
            reaction_level: *reaction_level,
            current_date,
            prompt_surface: *prompt_surface,
            mark_relocatable: *mark_relocatable,
        }
    }
}

/// Everything above the boundary, rendered and measured. A pure function of
/// the stable inputs, so it can be reused across turns.
#[derive(Debug, Clone)]
pub(crate) struct StableBlock {
    ctx: StableCtx,
    prefix: SharedStr,
    prefix_sha256: SharedStr,
    prefix_chars: u32,
    sections: Arc<[SectionReport]>,
    /// Characters of the stable Project Context sections.
    project_context_chars: u32,
    skills: Arc<SkillsReport>,
    tools: Arc<ToolsReport>,
}

impl StableBlock {
    pub(crate) fn prefix_len(&self) -> usize {
        self.prefix.len()
    }

    pub(crate) fn sections(&self) -> &Arc<[SectionReport]> {
        &self.sections
    }

    pub(crate) fn skills(&self) -> &Arc<SkillsReport> {
        &self.skills
    }

    pub(crate) fn tools(&self) -> &Arc<ToolsReport> {
        &self.tools
    }
}

/// Renders the stable block.
pub(crate) fn stable_block(input: &RenderInput) -> Result<StableBlock, RenderError> {
    let ctx = prepare_stable(input)?;
    let pieces: Vec<sections::Piece> = SECTIONS
        .iter()
        .filter(|r| r.layer == Layer::Stable && r.in_mode(ctx.mode))
        .flat_map(|row| sections::build_stable(row.kind, row.id, &ctx))
        .collect();
    let prefix = join(&pieces);
    let sections: Arc<[SectionReport]> = pieces
        .iter()
        .map(|p| section_report(p, Layer::Stable))
        .collect();
    Ok(StableBlock {
        prefix_sha256: text::sha256_hex(prefix.as_bytes()).into(),
        prefix_chars: text::chars_u32(&prefix),
        project_context_chars: project_context_chars(&sections),
        sections,
        skills: Arc::new(skills_report(&ctx)),
        tools: Arc::new(tools_report(&ctx.tools)),
        prefix: prefix.into(),
        ctx,
    })
}

/// Adds the per-turn sections to a stable block. `base` is the input the
/// block was built from (or an equal one); it supplies the agent id, the
/// dynamic context files and the provider's dynamic suffix, `turn` the rest.
pub(crate) fn finish(
    base: &RenderInput,
    turn: TurnRef<'_>,
    block: &StableBlock,
) -> Result<Rendered, RenderError> {
    let ctx = &block.ctx;
    let prompt_surface = turn.prompt_surface;
    let mark_relocatable = turn.mark_relocatable;
    let turn = prepare_turn(base, turn, ctx)?;
    let mut pieces: Vec<sections::Piece> = Vec::new();
    let mut relocatable: Vec<sections::Piece> = Vec::new();
    for row in SECTIONS
        .iter()
        .filter(|r| r.layer == Layer::Dynamic && r.in_mode(ctx.mode))
    {
        let built = sections::build_dynamic(row.kind, row.id, ctx, &turn);
        if row.relocatable {
            relocatable.extend(built);
        } else {
            pieces.extend(built);
        }
    }
    // The trailing block, optionally behind its own marker line.
    let marker_piece = (mark_relocatable && !relocatable.is_empty())
        .then(|| sections::Piece::new("relocatable_marker", RELOCATABLE_MARKER));
    let leading = join(&pieces);
    let trailing = join(&relocatable);
    let mut dynamic_suffix = leading;
    let mut relocatable_at = None;
    for part in [
        marker_piece.as_ref().map(|p| p.text.as_str()),
        Some(trailing.as_str()),
    ]
    .into_iter()
    .flatten()
    .filter(|t| !t.is_empty())
    {
        if !dynamic_suffix.is_empty() {
            dynamic_suffix.push_str(SECTION_SEPARATOR);
        }
        dynamic_suffix.push_str(part);
    }
    if !trailing.is_empty() {
        relocatable_at = Some(dynamic_suffix.len() - trailing.len());
    }
    let prefix = block.prefix.as_str();
    // `none` mode has no dynamic part, so no boundary either: the prompt is
    // the identity line alone.
    let with_marker = ctx.mode != PromptMode::None;
    // Built in one exact-size buffer: the stable prefix is ~35 KB, so a
    // second copy or a regrowth is most of a per-turn render's cost.
    let mut text = String::with_capacity(
        prefix.len()
            + 2 * SECTION_SEPARATOR.len()
            + CACHE_BOUNDARY_MARKER.len()
            + dynamic_suffix.len(),
    );
    text.push_str(prefix);
    if with_marker {
        text.push_str(SECTION_SEPARATOR);
        text.push_str(CACHE_BOUNDARY_MARKER);
    }
    let boundary_offset = if with_marker {
        prefix.len() + SECTION_SEPARATOR.len()
    } else {
        text.len()
    };
    if !dynamic_suffix.is_empty() {
        text.push_str(SECTION_SEPARATOR);
    }
    let suffix_at = text.len();
    text.push_str(&dynamic_suffix);
    let relocatable_offset = relocatable_at.map_or(text.len(), |at| suffix_at + at);
    let dynamic_sections: Vec<SectionReport> = pieces
        .iter()
        .chain(&relocatable)
        .map(|p| section_report(p, Layer::Dynamic))
        .collect();
    let sections = Sections::new(Arc::clone(&block.sections), dynamic_sections);
    let project_context_chars =
        block.project_context_chars + project_context_chars(sections.dynamic());
    // Counted from the parts: the stable prefix was measured once per block.
    let separators = u32::from(with_marker) + u32::from(!dynamic_suffix.is_empty());
    let marker_chars = if with_marker {
        text::chars_u32(CACHE_BOUNDARY_MARKER)
    } else {
        0
    };
    let chars = block.prefix_chars
        + marker_chars
        + separators * text::chars_u32(SECTION_SEPARATOR)
        + text::chars_u32(&dynamic_suffix);
    Ok(Rendered {
        stable_prefix_sha256: block.prefix_sha256.clone(),
        stable_prefix_chars: block.prefix_chars,
        context: ContextReport {
            max_chars_per_file: u32::try_from(ctx.bootstrap.max_chars_per_file).unwrap_or(u32::MAX),
            total_max_chars: u32::try_from(ctx.bootstrap.total_max_chars).unwrap_or(u32::MAX),
            files: bootstrap::merged_report(&ctx.bootstrap, &turn.files),
            project_context_chars,
            truncation_notice_shown: sections.iter().any(|s| s.id == "bootstrap_notice"),
        },
        skills: Arc::clone(&block.skills),
        tools: Arc::clone(&block.tools),
        sections,
        mode: ctx.mode,
        boundary_offset,
        relocatable_offset,
        prompt_surface,
        stable_prefix: block.prefix.clone(),
        dynamic_suffix,
        chars,
        approx_tokens: chars.div_ceil(4),
        text,
    })
}

/// Characters of the Project Context sections among `sections`.
fn project_context_chars(sections: &[SectionReport]) -> u32 {
    sections
        .iter()
        .filter(|s| {
            s.id.starts_with("project_context") || s.id.starts_with("dynamic_project_context")
        })
        .map(|s| s.chars)
        .sum()
}

/// The pieces' texts, separated by [`SECTION_SEPARATOR`].
fn join(pieces: &[sections::Piece]) -> String {
    let len = pieces
        .iter()
        .map(|p| SECTION_SEPARATOR.len() + p.text.len())
        .sum::<usize>();
    let mut out = String::with_capacity(len.saturating_sub(SECTION_SEPARATOR.len()));
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            out.push_str(SECTION_SEPARATOR);
        }
        out.push_str(&piece.text);
    }
    out
}

fn section_report(piece: &sections::Piece, layer: Layer) -> SectionReport {
    SectionReport {
        id: piece.id.clone().into_owned(),
        heading: heading_of(&piece.text),
        layer,
        chars: text::chars_u32(&piece.text),
        sha256: text::sha256_hex(piece.text.as_bytes()),
    }
}

fn heading_of(section: &str) -> String {
    let first = section.lines().next().unwrap_or("");
    if first.starts_with('#') {
        first.to_owned()
    } else {
        String::new()
    }
}

fn skills_report(ctx: &StableCtx) -> SkillsReport {
    let l = &ctx.skills;
    SkillsReport {
        offered: u32::try_from(l.offered).unwrap_or(u32::MAX),
        listed: u32::try_from(l.entries.len()).unwrap_or(u32::MAX),
        omitted: l.omitted.clone(),
        chars: text::chars_u32(&l.block),
        compact: l.compact,
        entries: l
            .entries
            .iter()
            .map(|(name, version, block_chars)| SkillEntry {
                name: name.clone(),
                version: version.clone(),
                block_chars: *block_chars,
            })
            .collect(),
    }
}

fn tools_report(tools: &ToolSet) -> ToolsReport {
    let entries: Vec<ToolEntry> = tools
        .tools
        .iter()
        .map(|t| ToolEntry {
            name: t.name.clone(),
            summary_chars: text::chars_u32(&t.line),
            schema_chars: t.schema_chars,
            properties_count: t.properties_count,
        })
        .collect();
    ToolsReport {
        // Tool lines are joined by newlines in the Tooling section.
        list_chars: entries
            .iter()
            .map(|e| e.summary_chars)
            .sum::<u32>()
            .saturating_add(u32::try_from(entries.len().saturating_sub(1)).unwrap_or(0)),
        schema_chars: entries.iter().map(|e| e.schema_chars).sum(),
        entries,
    }
}

/// Validates the stable inputs and normalises them.
fn prepare_stable(input: &RenderInput) -> Result<StableCtx, RenderError> {
    let workspace = paths::normalize_absolute(input.workspace_dir.trim())
        .map_err(|reason| RenderError::invalid("workspace_dir", reason))?;
    let timezone = input.user_timezone.trim().to_owned();
    if !timezone.is_empty() && jiff::tz::db().get(&timezone).is_err() {
        return Err(RenderError::invalid(
            "user_time.timezone",
            format!("{timezone:?} is not a valid IANA time zone"),
        ));
    }
    let mut sandbox = input.sandbox.clone();
    sandbox.container_workspace_dir = one_line(&sandbox.container_workspace_dir);
    sandbox.agent_workspace_mount = one_line(&sandbox.agent_workspace_mount);
    sandbox.engine = one_line(&sandbox.engine);
    sandbox.browser_bridge_url = one_line(&sandbox.browser_bridge_url);
    if !sandbox.browser_bridge_url.is_empty()
        && !(sandbox.browser_bridge_url.starts_with("http://")
            || sandbox.browser_bridge_url.starts_with("https://")
            || sandbox.browser_bridge_url.starts_with("ws://")
            || sandbox.browser_bridge_url.starts_with("wss://"))
    {
        return Err(RenderError::invalid(
            "sandbox.browser_bridge_url",
            format!(
                "{:?} is not an http(s) or ws(s) URL",
                sandbox.browser_bridge_url
            ),
        ));
    }
    let project_keys = normalize_project_keys(&input.active_project_keys)?;
    let tools = ToolSet::prepare(&input.tools)?;
    let skills = skills::listing(&skills::prepare(&input.skills)?, input.skills_limits);
    let mut bootstrap = bootstrap::prepare_stable(
        &workspace,
        &input.context_files,
        input.bootstrap_limits,
        input.session_kind,
        &project_keys,
    )?;
    if input.resolved_mode() == PromptMode::None {
        // Validated all the same, but nothing of them is in the prompt.
        bootstrap.leave_out_all();
    }
    let mut contribution = normalize_contribution(&input.contribution);
    // The dynamic suffix is per-turn; it lives in the turn context.
    contribution.dynamic_suffix.clear();
    Ok(StableCtx {
        mode: input.resolved_mode(),
        agent_name: one_line(&input.agent_name),
        workspace,
        workspace_notes: non_empty_lines(&input.workspace_notes),
        fs_workspace_only: input.fs_workspace_only,
        tools,
        skills,
        bootstrap,
        sandbox,
        timezone,
        reasoning_tag_hint: input.reasoning_tag_hint,
        owners: owners::display_tokens(
            &input.owner_ids,
            input.owner_display,
            &input.owner_display_secret,
        ),
        owner_display: input.owner_display,
        aliases: normalize_aliases(&input.model_aliases)?,
        delegation: input.delegation_mode,
        docs_path: one_line(&input.docs_path),
        source_path: one_line(&input.source_path),
        memory_include: input.memory_include_section,
        citations: input.memory_citations,
        contribution,
        truncation_notice: input.truncation_notice,
        include_safety: input.include_safety,
        session_kind: input.session_kind,
        acp_enabled: input.acp_enabled,
        gpt5_heartbeat_guidance: input.gpt5_heartbeat_guidance,
    })
}

/// Trimmed, normalised (see [`crate::project_scope::normalize_key`]),
/// deduplicated and sorted; a key that cannot be a project key is refused.
fn normalize_project_keys(keys: &[String]) -> Result<Vec<String>, RenderError> {
    let mut out = Vec::with_capacity(keys.len());
    for (i, raw) in keys.iter().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let key = crate::project_scope::normalize_key(raw).ok_or_else(|| {
            RenderError::invalid(
                format!("active_project_keys[{i}]"),
                format!("{raw:?} must not contain '<', '>' or a line break"),
            )
        })?;
        out.push(key);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Validates the per-turn inputs and normalises them.
fn prepare_turn(
    base: &RenderInput,
    turn: TurnRef<'_>,
    stable: &StableCtx,
) -> Result<TurnCtx, RenderError> {
    // Built field by field (destructured, so a new field is noticed here)
    // rather than cloned and then overwritten: this runs on every turn.
    let ChannelInfo {
        name,
        chat_type,
        capabilities,
        native_approvals,
        reply_delivery,
        message_tool_hints,
        display_name,
        known_channels,
    } = turn.channel;
    let name = text::one_line_cow(name).to_lowercase();
    // The request's facts win; the channel table fills the rest.
    let native_approvals = native_approvals.unwrap_or_else(|| channels::native_approvals(&name));
    let display_name = match text::one_line_cow(display_name) {
        given if !given.is_empty() => given.into_owned(),
        _ => channels::display_name(&name).map_or_else(|| name.clone(), str::to_owned),
    };
    let channel = ChannelInfo {
        name,
        chat_type: *chat_type,
        capabilities: normalize_capabilities(capabilities),
        native_approvals: Some(native_approvals),
        reply_delivery: *reply_delivery,
        message_tool_hints: non_empty_lines(message_tool_hints),
        display_name,
        known_channels: normalize_capabilities(known_channels),
    };
    let HeartbeatInfo {
        enabled,
        prompt,
        include_system_prompt_section,
    } = turn.heartbeat;
    let heartbeat = HeartbeatInfo {
        enabled: *enabled,
        prompt: normalize_block(prompt),
        include_system_prompt_section: *include_system_prompt_section,
    };
    let RuntimeInfo {
        host,
        os,
        arch,
        runtime_version,
        model,
        default_model,
        shell,
        repo_root,
        active_processes,
        session_key,
        versions,
    } = turn.runtime;
    let runtime = RuntimeInfo {
        host: one_line(host),
        os: one_line(os),
        arch: one_line(arch),
        runtime_version: one_line(runtime_version),
        model: one_line(model),
        default_model: one_line(default_model),
        shell: one_line(shell),
        repo_root: one_line(repo_root),
        active_processes: non_empty_lines(active_processes),
        session_key: one_line(session_key),
        versions: normalize_versions(versions)?,
    };
    let current_date = turn.current_date.trim();
    let date = if current_date.is_empty() {
        None
    } else {
        Some(current_date.parse::<jiff::civil::Date>().map_err(|e| {
            RenderError::invalid(
                "current_date",
                format!("{current_date:?} is not a date of the form YYYY-MM-DD: {e}"),
            )
        })?)
    };
    let mut files = bootstrap::prepare_dynamic(
        &stable.bootstrap,
        &stable.workspace,
        &base.context_files,
        base.session_kind,
        &heartbeat,
    )?;
    if stable.mode == PromptMode::None {
        files.leave_out_all();
    }
    Ok(TurnCtx {
        agent_id: one_line(&base.agent_id),
        channel,
        extra_system_prompt: normalize_block(turn.extra_system_prompt),
        heartbeat,
        runtime,
        think_level: turn.think_level,
        reasoning_level: turn.reasoning_level,
        tts_hint: normalize_block(turn.tts_hint),
        reaction_level: turn.reaction_level,
        dynamic_suffix: normalize_block(&base.contribution.dynamic_suffix),
        files,
        date,
    })
}

/// Keys checked (`[a-z][a-z0-9_]*`, unique, not a built-in key of the
/// Runtime line), values flattened to one line; empty entries dropped.
fn normalize_versions(versions: &[RuntimeVersion]) -> Result<Vec<RuntimeVersion>, RenderError> {
    const BUILT_IN: &[&str] = &[
        "agent",
        "session",
        "host",
        "repo",
        "os",
        "arch",
        "runtime",
        "model",
        "default_model",
        "shell",
        "channel",
        "capabilities",
        "thinking",
    ];
    let mut out: Vec<RuntimeVersion> = Vec::with_capacity(versions.len());
    for (i, v) in versions.iter().enumerate() {
        let key = v.key.trim();
        let value = one_line(&v.value);
        if key.is_empty() && value.is_empty() {
            continue;
        }
        let field = || format!("runtime.versions[{i}].key");
        let mut chars = key.chars();
        let well_formed = chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !well_formed {
            return Err(RenderError::invalid(
                field(),
                format!(
                    "{key:?} must be lowercase letters, digits and '_', starting with a letter"
                ),
            ));
        }
        if BUILT_IN.contains(&key) {
            return Err(RenderError::invalid(
                field(),
                format!("{key:?} is a built-in key of the Runtime line"),
            ));
        }
        if out.iter().any(|o| o.key == key) {
            return Err(RenderError::invalid(
                field(),
                format!("duplicate key {key:?}"),
            ));
        }
        if value.is_empty() {
            return Err(RenderError::invalid(
                format!("runtime.versions[{i}].value"),
                "must not be empty",
            ));
        }
        out.push(RuntimeVersion {
            key: key.to_owned(),
            value,
        });
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(out)
}

fn non_empty_lines(items: &[String]) -> Vec<String> {
    items
        .iter()
        .map(|s| one_line(s))
        .filter(|s| !s.is_empty())
        .collect()
}

/// Trimmed, lowercased, deduplicated and sorted.
fn normalize_capabilities(caps: &[String]) -> Vec<String> {
    let mut out: Vec<String> = caps
        .iter()
        .map(|c| text::one_line_cow(c).to_lowercase())
        .filter(|c| !c.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn normalize_aliases(aliases: &[ModelAlias]) -> Result<Vec<ModelAlias>, RenderError> {
    let mut out: Vec<ModelAlias> = Vec::with_capacity(aliases.len());
    for (i, a) in aliases.iter().enumerate() {
        let alias = one_line(&a.alias);
        let model = one_line(&a.model);
        match (alias.is_empty(), model.is_empty()) {
            (true, true) => continue,
            (true, false) => {
                return Err(RenderError::invalid(
                    format!("model_aliases[{i}].alias"),
                    "must not be empty",
                ));
            }
            (false, true) => {
                return Err(RenderError::invalid(
                    format!("model_aliases[{i}].model"),
                    "must not be empty",
                ));
            }
            (false, false) => {}
        }
        if out.iter().any(|o| o.alias.eq_ignore_ascii_case(&alias)) {
            return Err(RenderError::invalid(
                format!("model_aliases[{i}].alias"),
                format!("duplicate alias {alias:?}"),
            ));
        }
        out.push(ModelAlias { alias, model });
    }
    out.sort_by(|a, b| {
        a.alias
            .to_lowercase()
            .cmp(&b.alias.to_lowercase())
            .then_with(|| a.alias.cmp(&b.alias))
    });
    Ok(out)
}

fn normalize_contribution(c: &Contribution) -> Contribution {
    Contribution {
        stable_prefix: normalize_block(&c.stable_prefix),
        dynamic_suffix: normalize_block(&c.dynamic_suffix),
        interaction_style: normalize_block(&c.interaction_style),
        tool_call_style: normalize_block(&c.tool_call_style),
        execution_bias: normalize_block(&c.execution_bias),
    }
}

//! The facade: validate and normalise the input, build the sections in table
//! order, join them around the cache boundary, and report on the result.

use std::sync::Arc;

use crate::{
    bootstrap::{self, FileReport},
    boundary::{CACHE_BOUNDARY_MARKER, SECTION_SEPARATOR},
    error::RenderError,
    input::{
        ChannelInfo, Contribution, HeartbeatInfo, ModelAlias, PromptMode, ReactionLevel,
        ReasoningLevel, RenderInput, RuntimeInfo, ThinkLevel, TurnInputs,
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
    /// Stable prefix, marker line, dynamic suffix.
    pub text: String,
    /// Everything above the marker.
    pub stable_prefix: SharedStr,
    /// Everything below the marker.
    pub dynamic_suffix: String,
    /// Byte offset of the marker in `text`.
    pub boundary_offset: usize,
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
    let turn = prepare_turn(base, turn, ctx)?;
    let pieces: Vec<sections::Piece> = SECTIONS
        .iter()
        .filter(|r| r.layer == Layer::Dynamic && r.in_mode(ctx.mode))
        .flat_map(|row| sections::build_dynamic(row.kind, row.id, ctx, &turn))
        .collect();
    let dynamic_suffix = join(&pieces);
    let prefix = block.prefix.as_str();
    // Built in one exact-size buffer: the stable prefix is ~35 KB, so a
    // second copy or a regrowth is most of a per-turn render's cost.
    let mut text = String::with_capacity(
        prefix.len()
            + 2 * SECTION_SEPARATOR.len()
            + CACHE_BOUNDARY_MARKER.len()
            + dynamic_suffix.len(),
    );
    text.push_str(prefix);
    text.push_str(SECTION_SEPARATOR);
    text.push_str(CACHE_BOUNDARY_MARKER);
    if !dynamic_suffix.is_empty() {
        text.push_str(SECTION_SEPARATOR);
        text.push_str(&dynamic_suffix);
    }
    let boundary_offset = prefix.len() + SECTION_SEPARATOR.len();
    let dynamic_sections: Vec<SectionReport> = pieces
        .iter()
        .map(|p| section_report(p, Layer::Dynamic))
        .collect();
    let sections = Sections::new(Arc::clone(&block.sections), dynamic_sections);
    let project_context_chars =
        block.project_context_chars + project_context_chars(sections.dynamic());
    // Counted from the parts: the stable prefix was measured once per block.
    let separators = if dynamic_suffix.is_empty() { 1 } else { 2 };
    let chars = block.prefix_chars
        + text::chars_u32(CACHE_BOUNDARY_MARKER)
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
    let tools = ToolSet::prepare(&input.tools)?;
    let skills = skills::listing(&skills::prepare(&input.skills)?, input.skills_limits);
    let bootstrap = bootstrap::prepare_stable(
        &workspace,
        &input.context_files,
        input.bootstrap_limits,
        input.session_kind,
    )?;
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
    })
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
    } = turn.channel;
    let channel = ChannelInfo {
        name: text::one_line_cow(name).to_lowercase(),
        chat_type: *chat_type,
        capabilities: normalize_capabilities(capabilities),
        native_approvals: *native_approvals,
        reply_delivery: *reply_delivery,
        message_tool_hints: non_empty_lines(message_tool_hints),
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
    };
    let files = bootstrap::prepare_dynamic(
        &stable.bootstrap,
        &stable.workspace,
        &base.context_files,
        base.session_kind,
        &heartbeat,
    )?;
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
    })
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

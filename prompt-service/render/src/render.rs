//! The facade: validate and normalise the input ([`crate::prepare`]), build
//! the sections in table order, join them around the cache boundary, and
//! report on the result.

use std::{borrow::Cow, sync::Arc};

use crate::{
    bootstrap::{self, FileReport},
    boundary::{CACHE_BOUNDARY_MARKER, RELOCATABLE_MARKER, SECTION_SEPARATOR},
    error::RenderError,
    hash_memo::HashMemo,
    input::{
        ChannelInfo, HeartbeatInfo, PromptMode, PromptSurface, ReactionLevel, ReasoningLevel,
        RenderInput, RuntimeInfo, ThinkLevel, TurnInputs, TurnKind,
    },
    mode::{Layer, SECTIONS, SectionKind},
    sections::{self, StableCtx},
    shared::{PromptText, Sections, SharedStr},
    text,
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
    pub text: PromptText,
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
/// [`crate::Prepared`] gives the same output from a stable block built once.
pub fn render(input: &RenderInput) -> Result<Rendered, RenderError> {
    finish(TurnRef::of_input(input), &stable_block(input)?)
}

/// Checks `input` as [`render`] does, without writing the prompt: the same
/// error for the same input, and `Ok` exactly when `render` succeeds. For a
/// caller that maps the input onto another surface (the Codex mapping) and
/// needs it valid, not rendered.
pub fn validate(input: &RenderInput) -> Result<(), RenderError> {
    let ctx = crate::prepare::prepare_stable(input)?;
    for heartbeat_section_on in [false, true] {
        TurnFiles::dynamic(input, &ctx, heartbeat_section_on)?;
    }
    crate::prepare::prepare_turn(
        TurnRef::of_input(input),
        input.session_kind,
        &text::one_line(&input.agent_id),
        &text::normalize_block(&input.contribution.dynamic_suffix),
    )?;
    Ok(())
}

/// The turn inputs of one render, borrowed from a [`RenderInput`] or from
/// separate [`TurnInputs`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct TurnRef<'a> {
    pub(crate) channel: &'a ChannelInfo,
    pub(crate) extra_system_prompt: &'a str,
    pub(crate) heartbeat: &'a HeartbeatInfo,
    pub(crate) runtime: &'a RuntimeInfo,
    pub(crate) think_level: ThinkLevel,
    pub(crate) reasoning_level: ReasoningLevel,
    pub(crate) tts_hint: &'a str,
    pub(crate) reaction_level: ReactionLevel,
    pub(crate) current_date: &'a str,
    pub(crate) prompt_surface: PromptSurface,
    pub(crate) mark_relocatable: bool,
    pub(crate) turn_kind: TurnKind,
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
            turn_kind: input.turn_kind,
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
            turn_kind,
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
            turn_kind: *turn_kind,
        }
    }
}

/// Everything above the boundary, rendered and measured. A pure function of
/// the stable inputs, so it can be reused across turns.
#[derive(Debug)]
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
    /// A `bootstrap_notice` section is among the stable ones.
    notice_shown: bool,
    /// The agent id as the per-turn sections show it.
    agent_id: String,
    /// The provider's dynamic suffix, normalised.
    dynamic_suffix: String,
    /// The per-turn files for a turn without (`[0]`) and with (`[1]`) the
    /// heartbeat section on ([`bootstrap::heartbeat_section_on`]), the one
    /// fact of a turn they depend on.
    turn_files: [TurnFiles; 2],
    /// Hashes of per-turn section texts seen with this block.
    hashes: HashMemo,
}

/// The per-turn files of one kind of turn, rendered and measured with the
/// stable block.
#[derive(Debug, Clone)]
struct TurnFiles {
    /// The Dynamic Project Context pieces, with their reports.
    pieces: Vec<(sections::Piece, SectionReport)>,
    /// Characters of those pieces.
    project_context_chars: u32,
    /// Every file's report, stable and per-turn, in canonical order.
    report: Vec<FileReport>,
}

impl TurnFiles {
    /// The per-turn files of `input`, with the heartbeat section on or off.
    fn dynamic(
        input: &RenderInput,
        ctx: &StableCtx,
        heartbeat_section_on: bool,
    ) -> Result<bootstrap::DynamicFiles, RenderError> {
        let heartbeat = HeartbeatInfo {
            enabled: heartbeat_section_on,
            include_system_prompt_section: heartbeat_section_on,
            ..HeartbeatInfo::default()
        };
        bootstrap::prepare_dynamic(
            &ctx.bootstrap,
            &ctx.workspace,
            &input.context_files,
            input.session_kind,
            &heartbeat,
        )
    }

    fn new(
        input: &RenderInput,
        ctx: &StableCtx,
        heartbeat_section_on: bool,
    ) -> Result<Self, RenderError> {
        let mut files = Self::dynamic(input, ctx, heartbeat_section_on)?;
        if ctx.mode == PromptMode::None {
            files.leave_out_all();
        }
        let in_mode = SECTIONS
            .iter()
            .any(|r| r.kind == SectionKind::DynamicProjectContext && r.in_mode(ctx.mode));
        let pieces: Vec<(sections::Piece, SectionReport)> = if in_mode {
            sections::dynamic_files(ctx, &files)
                .into_iter()
                .map(|p| {
                    let report = section_report(&p, Layer::Dynamic);
                    (p, report)
                })
                .collect()
        } else {
            Vec::new()
        };
        let reports: Vec<SectionReport> = pieces.iter().map(|(_, r)| r.clone()).collect();
        Ok(Self {
            project_context_chars: project_context_chars(&reports),
            pieces,
            report: bootstrap::merged_report(&ctx.bootstrap, &files),
        })
    }
}

impl StableBlock {
    pub(crate) fn prefix_len(&self) -> usize {
        self.prefix.len()
    }

    pub(crate) fn memo_bytes(&self) -> usize {
        self.hashes.approx_bytes()
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
    let ctx = crate::prepare::prepare_stable(input)?;
    let pieces: Vec<sections::Piece> = SECTIONS
        .iter()
        .filter(|r| r.layer == Layer::Stable && r.in_mode(ctx.mode))
        .flat_map(|row| sections::build_stable(row.kind, row.id, &ctx))
        .collect();
    let prefix = join(pieces.iter().map(|p| p.text.as_str()));
    let sections: Arc<[SectionReport]> = pieces
        .iter()
        .map(|p| section_report(p, Layer::Stable))
        .collect();
    Ok(StableBlock {
        notice_shown: sections.iter().any(|s| s.id == "bootstrap_notice"),
        agent_id: text::one_line(&input.agent_id),
        dynamic_suffix: text::normalize_block(&input.contribution.dynamic_suffix),
        turn_files: [
            TurnFiles::new(input, &ctx, false)?,
            TurnFiles::new(input, &ctx, true)?,
        ],
        hashes: HashMemo::new(),
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

/// Adds the per-turn sections of `turn` to a stable block.
pub(crate) fn finish(turn: TurnRef<'_>, block: &StableBlock) -> Result<Rendered, RenderError> {
    let ctx = &block.ctx;
    let prompt_surface = turn.prompt_surface;
    let mark_relocatable = turn.mark_relocatable;
    let heartbeat_files = bootstrap::heartbeat_files_on(
        ctx.session_kind,
        turn.turn_kind,
        turn.heartbeat,
        turn.channel.chat_type,
    );
    let files = &block.turn_files[usize::from(heartbeat_files)];
    let turn = crate::prepare::prepare_turn(
        turn,
        ctx.session_kind,
        &block.agent_id,
        &block.dynamic_suffix,
    )?;
    // Each section's text and report, leading ones and the relocatable block.
    let mut pieces: Vec<(Cow<'_, str>, SectionReport)> = Vec::new();
    let mut relocatable: Vec<(Cow<'_, str>, SectionReport)> = Vec::new();
    for (at, row) in SECTIONS
        .iter()
        .enumerate()
        .filter(|(_, r)| r.layer == Layer::Dynamic && r.in_mode(ctx.mode))
    {
        let out = if row.relocatable {
            &mut relocatable
        } else {
            &mut pieces
        };
        if row.kind == SectionKind::DynamicProjectContext {
            out.extend(
                files
                    .pieces
                    .iter()
                    .map(|(p, report)| (Cow::Borrowed(p.text.as_str()), report.clone())),
            );
            continue;
        }
        out.extend(
            sections::build_dynamic(row.kind, row.id, ctx, &turn)
                .into_iter()
                .map(|p| {
                    let sha256 = block.hashes.sha256_hex(at, &p.text);
                    let report = report_with(&p, Layer::Dynamic, sha256);
                    (Cow::Owned(p.text), report)
                }),
        );
    }
    // The trailing block, optionally behind its own marker line.
    let marker = (mark_relocatable && !relocatable.is_empty()).then_some(RELOCATABLE_MARKER);
    let leading = join(pieces.iter().map(|(text, _)| &**text));
    let trailing = join(relocatable.iter().map(|(text, _)| &**text));
    let mut dynamic_suffix = leading;
    let mut relocatable_at = None;
    for part in [marker, Some(trailing.as_str())]
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
    // What follows the shared prefix; the whole text is joined only if a
    // caller reads it as one string (see `PromptText`).
    let mut rest = String::with_capacity(
        2 * SECTION_SEPARATOR.len() + CACHE_BOUNDARY_MARKER.len() + dynamic_suffix.len(),
    );
    if with_marker {
        rest.push_str(SECTION_SEPARATOR);
        rest.push_str(CACHE_BOUNDARY_MARKER);
    }
    let boundary_offset = if with_marker {
        prefix.len() + SECTION_SEPARATOR.len()
    } else {
        prefix.len()
    };
    if !dynamic_suffix.is_empty() {
        rest.push_str(SECTION_SEPARATOR);
    }
    let suffix_at = prefix.len() + rest.len();
    rest.push_str(&dynamic_suffix);
    let text_len = prefix.len() + rest.len();
    let relocatable_offset = relocatable_at.map_or(text_len, |at| suffix_at + at);
    let dynamic_sections: Vec<SectionReport> = pieces
        .into_iter()
        .chain(relocatable)
        .map(|(_, report)| report)
        .collect();
    let truncation_notice_shown =
        block.notice_shown || dynamic_sections.iter().any(|s| s.id == "bootstrap_notice");
    let sections = Sections::new(Arc::clone(&block.sections), dynamic_sections);
    let project_context_chars = block.project_context_chars + files.project_context_chars;
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
            files: files.report.clone(),
            project_context_chars,
            truncation_notice_shown,
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
        text: PromptText::new(block.prefix.clone(), rest),
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

/// The texts, separated by [`SECTION_SEPARATOR`].
fn join<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> String {
    let len = texts
        .clone()
        .map(|t| SECTION_SEPARATOR.len() + t.len())
        .sum::<usize>();
    let mut out = String::with_capacity(len.saturating_sub(SECTION_SEPARATOR.len()));
    for (i, text) in texts.enumerate() {
        if i > 0 {
            out.push_str(SECTION_SEPARATOR);
        }
        out.push_str(text);
    }
    out
}

fn section_report(piece: &sections::Piece, layer: Layer) -> SectionReport {
    report_with(piece, layer, text::sha256_hex(piece.text.as_bytes()))
}

/// The report of `piece`, whose text hashes to `sha256`.
fn report_with(piece: &sections::Piece, layer: Layer, sha256: String) -> SectionReport {
    SectionReport {
        id: piece.id.clone().into_owned(),
        heading: heading_of(&piece.text),
        layer,
        chars: text::chars_u32(&piece.text),
        sha256,
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

//! Conversions between `openclaw.prompt.v1` messages and the renderer's
//! types. Requests are destructured field by field, so adding a proto field
//! breaks the build here until it is handled.

use openclaw_proto::prompt::v1 as pb;
use prompt_render as render;

use crate::error::ServerError;

/// Decodes a proto enum value, naming the field when it is out of range.
pub(crate) fn enum_value<E: TryFrom<i32>>(field: &str, value: i32) -> Result<E, ServerError> {
    E::try_from(value)
        .map_err(|_| ServerError::invalid(field, format!("unknown enum value {value}")))
}

/// Converts a request into the renderer's input, validating every enum and
/// naming the field of any bad value. (A function rather than `TryFrom`:
/// both types live in other crates.)
pub fn input_from_request(
    req: pb::RenderSystemPromptRequest,
) -> Result<render::RenderInput, ServerError> {
    {
        let pb::RenderSystemPromptRequest {
            prompt_mode,
            session_kind,
            identity,
            workspace_dir,
            workspace_notes,
            fs_workspace_only,
            tools,
            skills,
            skills_limits,
            context_files,
            bootstrap_limits,
            sandbox,
            user_time,
            channel,
            extra_system_prompt,
            heartbeat,
            runtime,
            think_level,
            reasoning_level,
            reasoning_tag_hint,
            owner_ids,
            owner_display,
            owner_display_secret,
            model_aliases,
            delegation_mode,
            tts_hint,
            docs,
            memory,
            provider_contribution,
            reaction_level,
            bootstrap_truncation_notice,
            include_safety_section,
            active_project_keys,
            acp_enabled,
            exec_exit_wakeups,
            exec_approvals_never_ask,
            gpt5_heartbeat_guidance,
            current_date,
            prompt_surface,
            mark_relocatable_block,
            turn_kind,
        } = req;

        if workspace_dir.trim().is_empty() {
            return Err(ServerError::invalid("workspace_dir", "is required"));
        }
        let identity = identity.unwrap_or_default();
        let user_time = user_time.unwrap_or_default();
        // The clock format is accepted for completeness but never rendered
        // (P-17); validate it all the same.
        let _: pb::TimeFormat = enum_value("user_time.time_format", user_time.time_format)?;
        let heartbeat = heartbeat.unwrap_or_default();
        let memory = memory.unwrap_or_default();
        let docs = docs.unwrap_or_default();
        let skills_limits = skills_limits.unwrap_or_default();
        let bootstrap_limits = bootstrap_limits.unwrap_or_default();

        Ok(render::RenderInput {
            prompt_mode: prompt_mode_of(enum_value("prompt_mode", prompt_mode)?),
            session_kind: session_kind_of(enum_value("session_kind", session_kind)?),
            agent_id: identity.agent_id,
            agent_name: identity.name,
            workspace_dir,
            workspace_notes,
            fs_workspace_only,
            tools: tools.into_iter().map(tool_of).collect(),
            skills: skills.into_iter().map(skill_of).collect(),
            skills_limits: render::SkillsLimits {
                max_skills: skills_limits.max_skills,
                max_chars: skills_limits.max_chars,
            },
            context_files: context_files.into_iter().map(context_file_of).collect(),
            bootstrap_limits: render::BootstrapLimits {
                max_chars_per_file: bootstrap_limits.max_chars_per_file,
                total_max_chars: bootstrap_limits.total_max_chars,
            },
            sandbox: sandbox_of(sandbox.unwrap_or_default())?,
            user_timezone: user_time.timezone,
            channel: channel_of(channel.unwrap_or_default())?,
            extra_system_prompt,
            heartbeat: heartbeat_of(heartbeat),
            runtime: runtime_of(runtime.unwrap_or_default()),
            think_level: think_level_of(enum_value("think_level", think_level)?),
            reasoning_level: reasoning_level_of(enum_value("reasoning_level", reasoning_level)?),
            reasoning_tag_hint,
            owner_ids,
            owner_display: owner_display_of(enum_value("owner_display", owner_display)?),
            owner_display_secret,
            model_aliases: model_aliases.into_iter().map(alias_of).collect(),
            delegation_mode: delegation_of(enum_value("delegation_mode", delegation_mode)?),
            tts_hint,
            docs_path: docs.docs_path,
            source_path: docs.source_path,
            memory_include_section: memory.include_section.unwrap_or(true),
            memory_citations: citations_of(enum_value(
                "memory.citations_mode",
                memory.citations_mode,
            )?),
            contribution: contribution_of(provider_contribution.unwrap_or_default()),
            reaction_level: reaction_of(enum_value("reaction_level", reaction_level)?),
            truncation_notice: bootstrap_truncation_notice.unwrap_or(true),
            include_safety: include_safety_section.unwrap_or(true),
            active_project_keys,
            acp_enabled,
            exec_exit_wakeups,
            exec_approvals_never_ask,
            gpt5_heartbeat_guidance,
            current_date,
            prompt_surface: surface_of(enum_value("prompt_surface", prompt_surface)?),
            mark_relocatable: mark_relocatable_block,
            turn_kind: turn_kind_of(enum_value("turn_kind", turn_kind)?),
        })
    }
}

/// Converts only the request's turn fields ([`crate::wire::TURN_FIELDS`])
/// into the renderer's [`render::TurnInputs`], validated exactly as
/// [`input_from_request`] validates them; every other field is ignored.
pub fn turn_from_request(
    req: pb::RenderSystemPromptRequest,
) -> Result<render::TurnInputs, ServerError> {
    let pb::RenderSystemPromptRequest {
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
        mark_relocatable_block,
        turn_kind,
        // Not turn fields.
        prompt_mode: _,
        session_kind: _,
        identity: _,
        workspace_dir: _,
        workspace_notes: _,
        fs_workspace_only: _,
        tools: _,
        skills: _,
        skills_limits: _,
        context_files: _,
        bootstrap_limits: _,
        sandbox: _,
        user_time: _,
        reasoning_tag_hint: _,
        owner_ids: _,
        owner_display: _,
        owner_display_secret: _,
        model_aliases: _,
        delegation_mode: _,
        docs: _,
        memory: _,
        provider_contribution: _,
        bootstrap_truncation_notice: _,
        include_safety_section: _,
        active_project_keys: _,
        acp_enabled: _,
        exec_exit_wakeups: _,
        exec_approvals_never_ask: _,
        gpt5_heartbeat_guidance: _,
    } = req;
    Ok(render::TurnInputs {
        channel: channel_of(channel.unwrap_or_default())?,
        extra_system_prompt,
        heartbeat: heartbeat_of(heartbeat.unwrap_or_default()),
        runtime: runtime_of(runtime.unwrap_or_default()),
        think_level: think_level_of(enum_value("think_level", think_level)?),
        reasoning_level: reasoning_level_of(enum_value("reasoning_level", reasoning_level)?),
        tts_hint,
        reaction_level: reaction_of(enum_value("reaction_level", reaction_level)?),
        current_date,
        prompt_surface: surface_of(enum_value("prompt_surface", prompt_surface)?),
        mark_relocatable: mark_relocatable_block,
        turn_kind: turn_kind_of(enum_value("turn_kind", turn_kind)?),
    })
}

pub(crate) fn surface_of(surface: pb::PromptSurface) -> render::PromptSurface {
    match surface {
        pb::PromptSurface::Unspecified => render::PromptSurface::Unspecified,
        pb::PromptSurface::EmbeddedRun => render::PromptSurface::EmbeddedRun,
        pb::PromptSurface::Cli => render::PromptSurface::Cli,
        pb::PromptSurface::Preview => render::PromptSurface::Preview,
        pb::PromptSurface::Compaction => render::PromptSurface::Compaction,
    }
}

/// The renderer's prompt surface to proto.
pub(crate) fn surface_to_pb(surface: render::PromptSurface) -> pb::PromptSurface {
    match surface {
        render::PromptSurface::Unspecified => pb::PromptSurface::Unspecified,
        render::PromptSurface::EmbeddedRun => pb::PromptSurface::EmbeddedRun,
        render::PromptSurface::Cli => pb::PromptSurface::Cli,
        render::PromptSurface::Preview => pb::PromptSurface::Preview,
        render::PromptSurface::Compaction => pb::PromptSurface::Compaction,
    }
}

fn heartbeat_of(heartbeat: pb::HeartbeatInfo) -> render::HeartbeatInfo {
    let pb::HeartbeatInfo {
        enabled,
        prompt,
        include_system_prompt_section,
        serves_session,
    } = heartbeat;
    render::HeartbeatInfo {
        enabled,
        prompt,
        include_system_prompt_section: include_system_prompt_section.unwrap_or(true),
        serves_session,
    }
}

pub(crate) fn turn_kind_of(kind: pb::TurnKind) -> render::TurnKind {
    match kind {
        pb::TurnKind::Unspecified => render::TurnKind::Unspecified,
        pb::TurnKind::User => render::TurnKind::User,
        pb::TurnKind::Heartbeat => render::TurnKind::Heartbeat,
        pb::TurnKind::WakeUp => render::TurnKind::WakeUp,
        pb::TurnKind::Cron => render::TurnKind::Cron,
        pb::TurnKind::Subagent => render::TurnKind::Subagent,
    }
}

/// The renderer's turn kind to proto.
pub(crate) fn turn_kind_to_pb(kind: render::TurnKind) -> pb::TurnKind {
    match kind {
        render::TurnKind::Unspecified => pb::TurnKind::Unspecified,
        render::TurnKind::User => pb::TurnKind::User,
        render::TurnKind::Heartbeat => pb::TurnKind::Heartbeat,
        render::TurnKind::WakeUp => pb::TurnKind::WakeUp,
        render::TurnKind::Cron => pb::TurnKind::Cron,
        render::TurnKind::Subagent => pb::TurnKind::Subagent,
    }
}

fn prompt_mode_of(mode: pb::PromptMode) -> Option<render::PromptMode> {
    match mode {
        pb::PromptMode::Unspecified => None,
        pb::PromptMode::Full => Some(render::PromptMode::Full),
        pb::PromptMode::Minimal => Some(render::PromptMode::Minimal),
        pb::PromptMode::None => Some(render::PromptMode::None),
    }
}

fn session_kind_of(kind: pb::SessionKind) -> render::SessionKind {
    match kind {
        pb::SessionKind::Unspecified | pb::SessionKind::Main => render::SessionKind::Main,
        pb::SessionKind::Subagent => render::SessionKind::Subagent,
        pb::SessionKind::Cron => render::SessionKind::Cron,
        pb::SessionKind::Heartbeat => render::SessionKind::Heartbeat,
    }
}

fn tool_of(tool: pb::Tool) -> render::Tool {
    let pb::Tool {
        name,
        summary,
        json_schema,
    } = tool;
    render::Tool {
        name,
        summary,
        json_schema,
    }
}

fn skill_of(skill: pb::Skill) -> render::Skill {
    let pb::Skill {
        name,
        description,
        location,
        content,
        content_sha256,
    } = skill;
    render::Skill {
        name,
        description,
        location,
        version_source: if content_sha256.trim().is_empty() {
            render::SkillVersionSource::Content(content)
        } else {
            render::SkillVersionSource::Sha256(content_sha256.trim().to_owned())
        },
    }
}

fn context_file_of(file: pb::ContextFile) -> render::ContextFile {
    let pb::ContextFile {
        path,
        content,
        missing,
    } = file;
    render::ContextFile {
        path,
        content,
        missing,
    }
}

fn sandbox_of(sandbox: pb::SandboxInfo) -> Result<render::SandboxInfo, ServerError> {
    let pb::SandboxInfo {
        enabled,
        container_workspace_dir,
        workspace_access,
        agent_workspace_mount,
        elevated_available,
        engine,
        network,
        browser_bridge_url,
        host_browser_allowed,
        elevated,
    } = sandbox;
    let pb::ElevatedInfo {
        default_level,
        full_access_available,
        full_access_blocked_reason,
    } = elevated.unwrap_or_default();
    let default_level =
        match enum_value::<pb::ElevatedLevel>("sandbox.elevated.default_level", default_level)? {
            pb::ElevatedLevel::Unspecified => render::ElevatedLevel::Unspecified,
            pb::ElevatedLevel::Off => render::ElevatedLevel::Off,
            pb::ElevatedLevel::On => render::ElevatedLevel::On,
            pb::ElevatedLevel::Ask => render::ElevatedLevel::Ask,
            pb::ElevatedLevel::Full => render::ElevatedLevel::Full,
        };
    let full_access_blocked = match enum_value::<pb::FullAccessBlockReason>(
        "sandbox.elevated.full_access_blocked_reason",
        full_access_blocked_reason,
    )? {
        pb::FullAccessBlockReason::Unspecified => render::FullAccessBlock::Unspecified,
        pb::FullAccessBlockReason::HostPolicy => render::FullAccessBlock::HostPolicy,
        pb::FullAccessBlockReason::Channel => render::FullAccessBlock::Channel,
        pb::FullAccessBlockReason::Sandbox => render::FullAccessBlock::Sandbox,
        pb::FullAccessBlockReason::Runtime => render::FullAccessBlock::Runtime,
    };
    let access =
        match enum_value::<pb::WorkspaceAccess>("sandbox.workspace_access", workspace_access)? {
            pb::WorkspaceAccess::Unspecified | pb::WorkspaceAccess::None => {
                render::WorkspaceAccess::None
            }
            pb::WorkspaceAccess::ReadOnly => render::WorkspaceAccess::ReadOnly,
            pb::WorkspaceAccess::ReadWrite => render::WorkspaceAccess::ReadWrite,
        };
    Ok(render::SandboxInfo {
        enabled,
        container_workspace_dir,
        workspace_access: access,
        agent_workspace_mount,
        elevated_available,
        engine,
        network,
        browser_bridge_url,
        host_browser_allowed,
        elevated: render::Elevated {
            default_level,
            full_access_available,
            full_access_blocked,
        },
    })
}

fn channel_of(channel: pb::ChannelInfo) -> Result<render::ChannelInfo, ServerError> {
    let pb::ChannelInfo {
        name,
        chat_type,
        capabilities,
        native_approvals,
        reply_delivery_mode,
        message_tool_hints,
        display_name,
        known_channels,
    } = channel;
    let chat_type = match enum_value::<pb::ChatType>("channel.chat_type", chat_type)? {
        pb::ChatType::Unspecified => render::ChatType::Unspecified,
        pb::ChatType::Direct => render::ChatType::Direct,
        pb::ChatType::Group => render::ChatType::Group,
        pb::ChatType::Channel => render::ChatType::Channel,
    };
    let reply_delivery = match enum_value::<pb::ReplyDeliveryMode>(
        "channel.reply_delivery_mode",
        reply_delivery_mode,
    )? {
        pb::ReplyDeliveryMode::Unspecified | pb::ReplyDeliveryMode::Automatic => {
            render::ReplyDelivery::Automatic
        }
        pb::ReplyDeliveryMode::MessageToolOnly => render::ReplyDelivery::MessageToolOnly,
    };
    Ok(render::ChannelInfo {
        name,
        chat_type,
        capabilities,
        native_approvals,
        reply_delivery,
        message_tool_hints,
        display_name,
        known_channels,
    })
}

fn runtime_of(runtime: pb::RuntimeInfo) -> render::RuntimeInfo {
    let pb::RuntimeInfo {
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
    } = runtime;
    render::RuntimeInfo {
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
        versions: versions
            .into_iter()
            .map(|v| {
                let pb::RuntimeVersion { key, value } = v;
                render::RuntimeVersion { key, value }
            })
            .collect(),
    }
}

fn think_level_of(level: pb::ThinkLevel) -> render::ThinkLevel {
    match level {
        pb::ThinkLevel::Unspecified | pb::ThinkLevel::Off => render::ThinkLevel::Off,
        pb::ThinkLevel::Minimal => render::ThinkLevel::Minimal,
        pb::ThinkLevel::Low => render::ThinkLevel::Low,
        pb::ThinkLevel::Medium => render::ThinkLevel::Medium,
        pb::ThinkLevel::High => render::ThinkLevel::High,
        pb::ThinkLevel::Xhigh => render::ThinkLevel::XHigh,
    }
}

fn reasoning_level_of(level: pb::ReasoningLevel) -> render::ReasoningLevel {
    match level {
        pb::ReasoningLevel::Unspecified | pb::ReasoningLevel::Off => render::ReasoningLevel::Off,
        pb::ReasoningLevel::On => render::ReasoningLevel::On,
        pb::ReasoningLevel::Stream => render::ReasoningLevel::Stream,
    }
}

/// Proto owner display to the renderer's.
pub fn owner_display_of(display: pb::OwnerDisplay) -> render::OwnerDisplay {
    match display {
        pb::OwnerDisplay::Unspecified | pb::OwnerDisplay::Raw => render::OwnerDisplay::Raw,
        pb::OwnerDisplay::Hash => render::OwnerDisplay::Hash,
    }
}

fn alias_of(alias: pb::ModelAlias) -> render::ModelAlias {
    let pb::ModelAlias { alias, model } = alias;
    render::ModelAlias { alias, model }
}

fn delegation_of(mode: pb::DelegationMode) -> render::DelegationMode {
    match mode {
        pb::DelegationMode::Unspecified | pb::DelegationMode::Suggest => {
            render::DelegationMode::Suggest
        }
        pb::DelegationMode::Prefer => render::DelegationMode::Prefer,
    }
}

fn citations_of(mode: pb::MemoryCitationsMode) -> render::CitationsMode {
    match mode {
        pb::MemoryCitationsMode::Unspecified | pb::MemoryCitationsMode::Auto => {
            render::CitationsMode::Auto
        }
        pb::MemoryCitationsMode::On => render::CitationsMode::On,
        pb::MemoryCitationsMode::Off => render::CitationsMode::Off,
    }
}

fn reaction_of(level: pb::ReactionLevel) -> render::ReactionLevel {
    match level {
        pb::ReactionLevel::Unspecified => render::ReactionLevel::Unspecified,
        pb::ReactionLevel::Minimal => render::ReactionLevel::Minimal,
        pb::ReactionLevel::Extensive => render::ReactionLevel::Extensive,
    }
}

/// Proto contribution to the renderer's.
pub fn contribution_of(c: pb::ProviderContribution) -> render::Contribution {
    let pb::ProviderContribution {
        stable_prefix,
        dynamic_suffix,
        section_overrides,
    } = c;
    let pb::SectionOverrides {
        interaction_style,
        tool_call_style,
        execution_bias,
    } = section_overrides.unwrap_or_default();
    render::Contribution {
        stable_prefix,
        dynamic_suffix,
        interaction_style,
        tool_call_style,
        execution_bias,
    }
}

/// The renderer's contribution to proto.
pub fn contribution_to_pb(c: render::Contribution) -> pb::ProviderContribution {
    let render::Contribution {
        stable_prefix,
        dynamic_suffix,
        interaction_style,
        tool_call_style,
        execution_bias,
    } = c;
    pb::ProviderContribution {
        stable_prefix,
        dynamic_suffix,
        section_overrides: Some(pb::SectionOverrides {
            interaction_style,
            tool_call_style,
            execution_bias,
        }),
    }
}

fn layer_to_pb(layer: render::Layer) -> pb::Layer {
    match layer {
        render::Layer::Stable => pb::Layer::Stable,
        render::Layer::Dynamic => pb::Layer::Dynamic,
    }
}

pub(crate) fn mode_to_pb(mode: render::PromptMode) -> pb::PromptMode {
    match mode {
        render::PromptMode::Full => pb::PromptMode::Full,
        render::PromptMode::Minimal => pb::PromptMode::Minimal,
        render::PromptMode::None => pb::PromptMode::None,
    }
}

/// The renderer's file status to proto.
pub(crate) fn status_to_pb(status: render::FileStatus) -> pb::FileStatus {
    match status {
        render::FileStatus::Injected => pb::FileStatus::Injected,
        render::FileStatus::Truncated => pb::FileStatus::Truncated,
        render::FileStatus::Missing => pb::FileStatus::Missing,
        render::FileStatus::Empty => pb::FileStatus::Empty,
        render::FileStatus::Omitted => pb::FileStatus::Omitted,
        render::FileStatus::Filtered => pb::FileStatus::Filtered,
        render::FileStatus::OutOfScope => pb::FileStatus::OutOfScope,
    }
}

fn cause_to_pb(cause: render::TruncationCause) -> pb::TruncationCause {
    match cause {
        render::TruncationCause::None => pb::TruncationCause::None,
        render::TruncationCause::PerFileLimit => pb::TruncationCause::PerFileLimit,
        render::TruncationCause::TotalLimit => pb::TruncationCause::TotalLimit,
    }
}

/// Converts a rendered prompt into the RPC response.
pub fn response_from_rendered(r: render::Rendered) -> pb::RenderSystemPromptResponse {
    {
        let render::Rendered {
            text,
            stable_prefix,
            dynamic_suffix,
            boundary_offset,
            relocatable_offset,
            prompt_surface,
            stable_prefix_sha256,
            stable_prefix_chars: _,
            mode,
            sections,
            context,
            skills,
            tools,
            chars,
            approx_tokens,
        } = r;
        pb::RenderSystemPromptResponse {
            text: text.into_string(),
            stable_prefix: stable_prefix.into(),
            dynamic_suffix,
            boundary_offset: u32::try_from(boundary_offset).unwrap_or(u32::MAX),
            boundary_marker: render::CACHE_BOUNDARY_MARKER.to_owned(),
            stable_prefix_sha256: stable_prefix_sha256.into(),
            resolved_mode: mode_to_pb(mode) as i32,
            sections: sections.iter().map(section_to_pb).collect(),
            context: Some(context_to_pb(context)),
            skills: Some(skills_to_pb(&skills)),
            tools: Some(tools_to_pb(&tools)),
            chars,
            approx_tokens,
            relocatable_offset: u32::try_from(relocatable_offset).unwrap_or(u32::MAX),
            relocatable_marker: render::RELOCATABLE_MARKER.to_owned(),
            prompt_surface: surface_to_pb(prompt_surface) as i32,
        }
    }
}

pub(crate) fn section_to_pb(s: &render::SectionReport) -> pb::RenderedSection {
    section_into_pb(s.clone())
}

/// [`section_to_pb`] for an owned report (no copies of its strings).
pub(crate) fn section_into_pb(s: render::SectionReport) -> pb::RenderedSection {
    let render::SectionReport {
        id,
        heading,
        layer,
        chars,
        sha256,
    } = s;
    pb::RenderedSection {
        id,
        heading,
        layer: layer_to_pb(layer) as i32,
        chars,
        sha256,
    }
}

pub(crate) fn context_to_pb(context: render::ContextReport) -> pb::ContextReport {
    let render::ContextReport {
        max_chars_per_file,
        total_max_chars,
        files,
        project_context_chars,
        truncation_notice_shown,
    } = context;
    pb::ContextReport {
        max_chars_per_file,
        total_max_chars,
        files: files
            .into_iter()
            .map(|f| {
                let render::FileReport {
                    path,
                    status,
                    raw_chars,
                    injected_chars,
                    cause,
                    layer,
                    legacy_heartbeat_chars,
                    out_of_scope_entries,
                    out_of_scope_chars,
                } = f;
                pb::InjectedFile {
                    path,
                    status: status_to_pb(status) as i32,
                    raw_chars,
                    injected_chars,
                    cause: cause_to_pb(cause) as i32,
                    layer: layer_to_pb(layer) as i32,
                    legacy_heartbeat_chars,
                    out_of_scope_entries,
                    out_of_scope_chars,
                }
            })
            .collect(),
        project_context_chars,
        truncation_notice_shown,
    }
}

pub(crate) fn skills_to_pb(skills: &render::SkillsReport) -> pb::SkillsReport {
    let render::SkillsReport {
        offered,
        listed,
        omitted,
        chars,
        compact,
        entries,
    } = skills;
    pb::SkillsReport {
        offered: *offered,
        listed: *listed,
        omitted: omitted.clone(),
        chars: *chars,
        compact: *compact,
        entries: entries
            .iter()
            .map(|e| pb::SkillEntry {
                name: e.name.clone(),
                version: e.version.clone(),
                block_chars: e.block_chars,
            })
            .collect(),
    }
}

pub(crate) fn tools_to_pb(tools: &render::ToolsReport) -> pb::ToolsReport {
    let render::ToolsReport {
        list_chars,
        schema_chars,
        entries,
    } = tools;
    pb::ToolsReport {
        list_chars: *list_chars,
        schema_chars: *schema_chars,
        entries: entries
            .iter()
            .map(|e| pb::ToolEntry {
                name: e.name.clone(),
                summary_chars: e.summary_chars,
                schema_chars: e.schema_chars,
                properties_count: e.properties_count,
            })
            .collect(),
    }
}

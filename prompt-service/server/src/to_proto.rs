//! The reverse conversion: renderer input to a `RenderSystemPromptRequest`.
//! agent-service gathers its live facts as a [`RenderInput`] and either
//! renders in-process or sends this request; both give the same bytes.

use openclaw_proto::prompt::v1 as pb;
use prompt_render as render;

use crate::convert::contribution_to_pb;

/// Builds the request that renders `input` over gRPC.
pub fn request_from_input(input: &render::RenderInput) -> pb::RenderSystemPromptRequest {
    let render::RenderInput {
        prompt_mode,
        session_kind,
        agent_id,
        agent_name,
        workspace_dir,
        workspace_notes,
        fs_workspace_only,
        tools,
        skills,
        skills_limits,
        context_files,
        bootstrap_limits,
        sandbox,
        user_timezone,
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
        docs_path,
        source_path,
        memory_include_section,
        memory_citations,
        contribution,
        reaction_level,
        truncation_notice,
        include_safety,
        active_project_keys,
        acp_enabled,
        exec_exit_wakeups,
        exec_approvals_never_ask,
        gpt5_heartbeat_guidance,
        current_date,
        prompt_surface,
        mark_relocatable,
        turn_kind,
    } = input.clone();
    pb::RenderSystemPromptRequest {
        prompt_mode: match prompt_mode {
            None => pb::PromptMode::Unspecified,
            Some(render::PromptMode::Full) => pb::PromptMode::Full,
            Some(render::PromptMode::Minimal) => pb::PromptMode::Minimal,
            Some(render::PromptMode::None) => pb::PromptMode::None,
        } as i32,
        session_kind: match session_kind {
            render::SessionKind::Main => pb::SessionKind::Main,
            render::SessionKind::Subagent => pb::SessionKind::Subagent,
            render::SessionKind::Cron => pb::SessionKind::Cron,
            render::SessionKind::Heartbeat => pb::SessionKind::Heartbeat,
        } as i32,
        identity: Some(pb::AgentIdentity {
            agent_id,
            name: agent_name,
        }),
        workspace_dir,
        workspace_notes,
        fs_workspace_only,
        tools: tools
            .into_iter()
            .map(|t| pb::Tool {
                name: t.name,
                summary: t.summary,
                json_schema: t.json_schema,
            })
            .collect(),
        skills: skills
            .into_iter()
            .map(|s| {
                let (content, content_sha256) = match s.version_source {
                    render::SkillVersionSource::Content(bytes) => (bytes, String::new()),
                    render::SkillVersionSource::Sha256(hex) => (Vec::new(), hex),
                };
                pb::Skill {
                    name: s.name,
                    description: s.description,
                    location: s.location,
                    content,
                    content_sha256,
                }
            })
            .collect(),
        skills_limits: Some(pb::SkillsLimits {
            max_skills: skills_limits.max_skills,
            max_chars: skills_limits.max_chars,
        }),
        context_files: context_files
            .into_iter()
            .map(|f| pb::ContextFile {
                path: f.path,
                content: f.content,
                missing: f.missing,
            })
            .collect(),
        bootstrap_limits: Some(pb::BootstrapLimits {
            max_chars_per_file: bootstrap_limits.max_chars_per_file,
            total_max_chars: bootstrap_limits.total_max_chars,
        }),
        sandbox: Some(pb::SandboxInfo {
            enabled: sandbox.enabled,
            container_workspace_dir: sandbox.container_workspace_dir,
            workspace_access: match sandbox.workspace_access {
                render::WorkspaceAccess::None => pb::WorkspaceAccess::None,
                render::WorkspaceAccess::ReadOnly => pb::WorkspaceAccess::ReadOnly,
                render::WorkspaceAccess::ReadWrite => pb::WorkspaceAccess::ReadWrite,
            } as i32,
            agent_workspace_mount: sandbox.agent_workspace_mount,
            elevated_available: sandbox.elevated_available,
            engine: sandbox.engine,
            network: sandbox.network,
            browser_bridge_url: sandbox.browser_bridge_url,
            host_browser_allowed: sandbox.host_browser_allowed,
            elevated: Some(pb::ElevatedInfo {
                default_level: match sandbox.elevated.default_level {
                    render::ElevatedLevel::Unspecified => pb::ElevatedLevel::Unspecified,
                    render::ElevatedLevel::Off => pb::ElevatedLevel::Off,
                    render::ElevatedLevel::On => pb::ElevatedLevel::On,
                    render::ElevatedLevel::Ask => pb::ElevatedLevel::Ask,
                    render::ElevatedLevel::Full => pb::ElevatedLevel::Full,
                } as i32,
                full_access_available: sandbox.elevated.full_access_available,
                full_access_blocked_reason: match sandbox.elevated.full_access_blocked {
                    render::FullAccessBlock::Unspecified => pb::FullAccessBlockReason::Unspecified,
                    render::FullAccessBlock::HostPolicy => pb::FullAccessBlockReason::HostPolicy,
                    render::FullAccessBlock::Channel => pb::FullAccessBlockReason::Channel,
                    render::FullAccessBlock::Sandbox => pb::FullAccessBlockReason::Sandbox,
                    render::FullAccessBlock::Runtime => pb::FullAccessBlockReason::Runtime,
                } as i32,
            }),
        }),
        user_time: Some(pb::UserTime {
            timezone: user_timezone,
            time_format: pb::TimeFormat::Unspecified as i32,
        }),
        channel: Some(pb::ChannelInfo {
            name: channel.name,
            chat_type: match channel.chat_type {
                render::ChatType::Unspecified => pb::ChatType::Unspecified,
                render::ChatType::Direct => pb::ChatType::Direct,
                render::ChatType::Group => pb::ChatType::Group,
                render::ChatType::Channel => pb::ChatType::Channel,
            } as i32,
            capabilities: channel.capabilities,
            native_approvals: channel.native_approvals,
            reply_delivery_mode: match channel.reply_delivery {
                render::ReplyDelivery::Automatic => pb::ReplyDeliveryMode::Automatic,
                render::ReplyDelivery::MessageToolOnly => pb::ReplyDeliveryMode::MessageToolOnly,
            } as i32,
            message_tool_hints: channel.message_tool_hints,
            display_name: channel.display_name,
            known_channels: channel.known_channels,
        }),
        extra_system_prompt,
        heartbeat: Some(pb::HeartbeatInfo {
            enabled: heartbeat.enabled,
            prompt: heartbeat.prompt,
            include_system_prompt_section: Some(heartbeat.include_system_prompt_section),
            serves_session: heartbeat.serves_session,
        }),
        runtime: Some(pb::RuntimeInfo {
            host: runtime.host,
            os: runtime.os,
            arch: runtime.arch,
            runtime_version: runtime.runtime_version,
            model: runtime.model,
            default_model: runtime.default_model,
            shell: runtime.shell,
            repo_root: runtime.repo_root,
            active_processes: runtime.active_processes,
            session_key: runtime.session_key,
            versions: runtime
                .versions
                .into_iter()
                .map(|v| pb::RuntimeVersion {
                    key: v.key,
                    value: v.value,
                })
                .collect(),
        }),
        think_level: match think_level {
            render::ThinkLevel::Off => pb::ThinkLevel::Off,
            render::ThinkLevel::Minimal => pb::ThinkLevel::Minimal,
            render::ThinkLevel::Low => pb::ThinkLevel::Low,
            render::ThinkLevel::Medium => pb::ThinkLevel::Medium,
            render::ThinkLevel::High => pb::ThinkLevel::High,
            render::ThinkLevel::XHigh => pb::ThinkLevel::Xhigh,
        } as i32,
        reasoning_level: match reasoning_level {
            render::ReasoningLevel::Off => pb::ReasoningLevel::Off,
            render::ReasoningLevel::On => pb::ReasoningLevel::On,
            render::ReasoningLevel::Stream => pb::ReasoningLevel::Stream,
        } as i32,
        reasoning_tag_hint,
        owner_ids,
        owner_display: match owner_display {
            render::OwnerDisplay::Raw => pb::OwnerDisplay::Raw,
            render::OwnerDisplay::Hash => pb::OwnerDisplay::Hash,
        } as i32,
        owner_display_secret,
        model_aliases: model_aliases
            .into_iter()
            .map(|a| pb::ModelAlias {
                alias: a.alias,
                model: a.model,
            })
            .collect(),
        delegation_mode: match delegation_mode {
            render::DelegationMode::Suggest => pb::DelegationMode::Suggest,
            render::DelegationMode::Prefer => pb::DelegationMode::Prefer,
        } as i32,
        tts_hint,
        docs: Some(pb::DocsInfo {
            docs_path,
            source_path,
        }),
        memory: Some(pb::MemoryInfo {
            include_section: Some(memory_include_section),
            citations_mode: match memory_citations {
                render::CitationsMode::Auto => pb::MemoryCitationsMode::Auto,
                render::CitationsMode::On => pb::MemoryCitationsMode::On,
                render::CitationsMode::Off => pb::MemoryCitationsMode::Off,
            } as i32,
        }),
        provider_contribution: Some(contribution_to_pb(contribution)),
        reaction_level: match reaction_level {
            render::ReactionLevel::Unspecified => pb::ReactionLevel::Unspecified,
            render::ReactionLevel::Minimal => pb::ReactionLevel::Minimal,
            render::ReactionLevel::Extensive => pb::ReactionLevel::Extensive,
        } as i32,
        bootstrap_truncation_notice: Some(truncation_notice),
        include_safety_section: Some(include_safety),
        active_project_keys,
        acp_enabled,
        exec_exit_wakeups,
        exec_approvals_never_ask,
        gpt5_heartbeat_guidance,
        current_date,
        prompt_surface: crate::convert::surface_to_pb(prompt_surface) as i32,
        mark_relocatable_block: mark_relocatable,
        turn_kind: crate::convert::turn_kind_to_pb(turn_kind) as i32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round trip: input -> request -> input is the identity, so the gRPC
    /// and in-process paths render the same bytes.
    #[test]
    fn round_trip_is_lossless() {
        let mut input = render::fixtures::realistic();
        input.prompt_mode = Some(render::PromptMode::Minimal);
        input.sandbox.enabled = true;
        input.sandbox.workspace_access = render::WorkspaceAccess::ReadWrite;
        input.contribution.execution_bias = "## Execution Bias\nX".into();
        input.skills[0].version_source = render::SkillVersionSource::Sha256("ab".repeat(32));
        // Every field added for the newer prompt topics survives too.
        input.active_project_keys = vec!["github.com/acme/app".into()];
        input.acp_enabled = true;
        input.exec_exit_wakeups = true;
        input.exec_approvals_never_ask = true;
        input.gpt5_heartbeat_guidance = true;
        input.current_date = "2026-12-01".into();
        input.prompt_surface = render::PromptSurface::Preview;
        input.mark_relocatable = true;
        input.turn_kind = render::TurnKind::WakeUp;
        input.heartbeat.serves_session = Some(false);
        input.sandbox.engine = "bubblewrap".into();
        input.sandbox.network = true;
        input.sandbox.browser_bridge_url = "http://127.0.0.1:9222".into();
        input.sandbox.host_browser_allowed = true;
        input.sandbox.elevated = render::Elevated {
            default_level: render::ElevatedLevel::Ask,
            full_access_available: false,
            full_access_blocked: render::FullAccessBlock::Runtime,
        };
        input.channel.native_approvals = None;
        input.channel.display_name = "Telegram".into();
        input.channel.known_channels = vec!["discord".into(), "telegram".into()];
        input.runtime.versions = vec![render::RuntimeVersion {
            key: "agent_service".into(),
            value: "0.1.0".into(),
        }];
        let back = crate::convert::input_from_request(request_from_input(&input));
        assert_eq!(back.ok(), Some(input));
    }
}

//! ResolvePromptConfig: one agent's config-derived prompt knobs (P-2).

use std::collections::HashMap;

use openclaw_config::{
    ConfigError, LoadOptions, Loader, UnresolvedVars,
    raw::{DelegationMode, Gpt5Personality, MemoryCitations, OwnerDisplay, TimeFormat, TtsAuto},
    resolve::Dirs,
};
use openclaw_proto::prompt::v1 as pb;

use crate::error::ServerError;

/// Resolves the knobs for the requested (or default) agent.
pub fn resolve(
    loader: &Loader,
    req: pb::ResolvePromptConfigRequest,
) -> Result<pb::ResolvePromptConfigResponse, ServerError> {
    let pb::ResolvePromptConfigRequest {
        config_json5,
        agent_id,
        env,
    } = req;
    // The service never reads its own environment: only the values sent
    // with the request are substituted; other `${VAR}`s are left as written.
    let env: HashMap<String, String> = env;
    let options = LoadOptions {
        unresolved_vars: UnresolvedVars::Keep,
    };
    let config = loader.load(&config_json5, &env, &options)?;
    let wanted = agent_id.trim();
    let id = if wanted.is_empty() {
        config.default_agent_id()
    } else {
        wanted
    }
    .to_owned();
    // Paths are not part of the knobs; any directories will do.
    let dirs = Dirs {
        state_dir: "/".into(),
        home_dir: "/".into(),
    };
    let agent = config.agent(&id, &dirs).map_err(|e| match e {
        ConfigError::UnknownAgent(name) => ServerError::UnknownAgent(name),
        other => ServerError::Config(other),
    })?;
    let settings = config.prompt_settings(&agent.id);
    let tts_mode = match settings.tts.auto {
        TtsAuto::Off => None,
        TtsAuto::Always => Some(prompt_render::TtsMode::Always),
        TtsAuto::Inbound => Some(prompt_render::TtsMode::Inbound),
        TtsAuto::Tagged => Some(prompt_render::TtsMode::Tagged),
    };
    let tts_hint = tts_mode
        .map(|mode| {
            prompt_render::tts_hint(mode, settings.tts.max_text_length, settings.tts.summarize)
        })
        .unwrap_or_default();
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let heartbeat = &agent.heartbeat;
    Ok(pb::ResolvePromptConfigResponse {
        agent_id: agent.id.clone(),
        owner_display: match settings.owner_display {
            OwnerDisplay::Raw => pb::OwnerDisplay::Raw,
            OwnerDisplay::Hash => pb::OwnerDisplay::Hash,
        } as i32,
        owner_display_secret: settings.owner_display_secret.unwrap_or_default(),
        tts_hint,
        model_aliases: settings
            .model_aliases
            .into_iter()
            .map(|a| pb::ModelAlias {
                alias: a.alias,
                model: a.target,
            })
            .collect(),
        memory_citations_mode: match settings.memory_citations {
            None => pb::MemoryCitationsMode::Unspecified,
            Some(MemoryCitations::Auto) => pb::MemoryCitationsMode::Auto,
            Some(MemoryCitations::On) => pb::MemoryCitationsMode::On,
            Some(MemoryCitations::Off) => pb::MemoryCitationsMode::Off,
        } as i32,
        delegation_mode: match agent.delegation_mode {
            DelegationMode::Suggest => pb::DelegationMode::Suggest,
            DelegationMode::Prefer => pb::DelegationMode::Prefer,
        } as i32,
        bootstrap_limits: Some(pb::BootstrapLimits {
            max_chars_per_file: clamp(agent.bootstrap.max_chars),
            total_max_chars: clamp(agent.bootstrap.total_max_chars),
        }),
        user_time: Some(pb::UserTime {
            timezone: settings.user_timezone.unwrap_or_default(),
            time_format: match settings.time_format {
                TimeFormat::Auto => pb::TimeFormat::Auto,
                TimeFormat::H12 => pb::TimeFormat::TimeFormat12,
                TimeFormat::H24 => pb::TimeFormat::TimeFormat24,
            } as i32,
        }),
        gpt5_personality: match config.gpt5_personality(None) {
            Gpt5Personality::Off => pb::Gpt5Personality::Off,
            Gpt5Personality::Friendly | Gpt5Personality::On => pb::Gpt5Personality::Friendly,
        } as i32,
        skills_limits: Some(pb::SkillsLimits {
            max_skills: clamp(agent.skills_limits.max_skills_in_prompt),
            max_chars: clamp(agent.skills_limits.max_skills_prompt_chars),
        }),
        fs_workspace_only: settings.fs_workspace_only,
        heartbeat: Some(pb::HeartbeatInfo {
            enabled: heartbeat.enabled,
            prompt: heartbeat
                .prompt
                .clone()
                .unwrap_or_else(|| prompt_render::DEFAULT_HEARTBEAT_PROMPT.to_owned()),
            include_system_prompt_section: Some(heartbeat.include_system_prompt_section),
            // Config alone cannot say which session a request is for.
            serves_session: None,
        }),
        identity: Some(pb::AgentIdentity {
            agent_id: agent.id.clone(),
            name: agent
                .identity
                .as_ref()
                .and_then(|i| i.name.clone())
                .or(agent.name.clone())
                .unwrap_or_default(),
        }),
    })
}

//! Validation and normalisation of the inputs: the stable ones into the
//! context the stable sections read, the per-turn ones into the context of
//! the sections below the boundary. Every refusal names its field.

use crate::{
    bootstrap, channels,
    error::RenderError,
    input::{
        ChannelInfo, Contribution, HeartbeatInfo, ModelAlias, PromptMode, RenderInput, RuntimeInfo,
        RuntimeVersion, SessionKind, TurnKind,
    },
    owners, paths,
    render::TurnRef,
    sections::{StableCtx, TurnCtx},
    skills,
    text::{self, normalize_block, one_line},
    tools::ToolSet,
};

/// Validates the stable inputs and normalises them.
pub(crate) fn prepare_stable(input: &RenderInput) -> Result<StableCtx, RenderError> {
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
    let url = sandbox.browser_bridge_url.as_str();
    let web_url = ["http://", "https://", "ws://", "wss://"]
        .iter()
        .any(|scheme| url.starts_with(scheme));
    if !url.is_empty() && !web_url {
        return Err(RenderError::invalid(
            "sandbox.browser_bridge_url",
            format!("{url:?} is not an http(s) or ws(s) URL"),
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
        exec_exit_wakeups: input.exec_exit_wakeups,
        exec_approvals_never_ask: input.exec_approvals_never_ask,
        gpt5_heartbeat_guidance: input.gpt5_heartbeat_guidance,
        gateway_actions: gateway_actions(&input.tools),
    })
}

/// The actions the gateway tool's schema allows (`properties.action.enum`),
/// sorted; `None` when it has no such list. The schema was validated as a
/// JSON object with the tools.
fn gateway_actions(tools: &[crate::input::Tool]) -> Option<Vec<String>> {
    let tool = tools
        .iter()
        .find(|t| t.name.trim().eq_ignore_ascii_case("gateway"))?;
    let schema: serde_json::Value = serde_json::from_str(&tool.json_schema).ok()?;
    let list = schema.pointer("/properties/action/enum")?.as_array()?;
    let mut actions: Vec<String> = list
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    actions.sort();
    Some(actions)
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

/// Validates the per-turn inputs and normalises them. `agent_id` and
/// `dynamic_suffix` come from the stable inputs, normalised with the block.
pub(crate) fn prepare_turn(
    turn: TurnRef<'_>,
    session: SessionKind,
    agent_id: &str,
    dynamic_suffix: &str,
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
    let turn_kind = turn.turn_kind.resolve(session);
    let HeartbeatInfo {
        enabled,
        prompt,
        include_system_prompt_section,
        serves_session: _,
    } = turn.heartbeat;
    let heartbeat = HeartbeatInfo {
        enabled: *enabled,
        prompt: normalize_block(prompt),
        include_system_prompt_section: *include_system_prompt_section,
        // Resolved here once: a heartbeat turn is served by definition.
        serves_session: Some(
            turn_kind == TurnKind::Heartbeat
                || session == SessionKind::Heartbeat
                || turn.heartbeat.serves(*chat_type),
        ),
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
    Ok(TurnCtx {
        agent_id: agent_id.to_owned(),
        channel,
        extra_system_prompt: normalize_block(turn.extra_system_prompt),
        heartbeat,
        runtime,
        think_level: turn.think_level,
        reasoning_level: turn.reasoning_level,
        tts_hint: normalize_block(turn.tts_hint),
        reaction_level: turn.reaction_level,
        dynamic_suffix: dynamic_suffix.to_owned(),
        date,
        turn_kind,
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

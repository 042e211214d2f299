//! A turn's system prompt: the render request built from the turn's facts and the workspace
//! files (read again only when they changed), sent to the prompt source; the provider
//! contribution; the preview of the next call.

use super::*;

/// Renders one turn's system prompt: the workspace files are as on disk
/// now (kept between renders while unchanged), the config knobs applied,
/// and the request sent to the prompt source.
/// Runs and previews both come through here, so a preview is
/// byte-identical to what a run sends (P-3).
pub(crate) async fn render_turn(
    services: &Services,
    t: &TurnPrompt<'_>,
    deadline: Instant,
) -> Result<pb::RenderSystemPromptResponse, RuntimeError> {
    let request = render_request(services, t).await?;
    let response = render_prompt(services, request, deadline).await?;
    record_cuts(services, t, &response);
    Ok(response)
}

/// P-49: a turn's render (not a preview) counts towards a file's run of cuts.
fn record_cuts(services: &Services, t: &TurnPrompt<'_>, response: &pb::RenderSystemPromptResponse) {
    if t.surface != prompt_render::PromptSurface::Preview {
        services
            .cuts()
            .record(&t.agent.id, t.session_key, response.context.as_ref());
    }
}

/// The last render of a run: the request sent and the prompt it was answered with.
#[derive(Default)]
pub(crate) struct RunRender {
    kept: Option<(pb::RenderSystemPromptRequest, RunPrompt)>,
}

/// A render as the model calls of a run use it. What each call takes from it is derived once
/// per render, not once per call: the system text a model request carries (shared, never
/// copied) and the stable prefix's fingerprint (shared with the sessions of the same prefix).
pub(crate) struct RunPrompt {
    /// What prompt-service answered.
    pub(crate) response: pb::RenderSystemPromptResponse,
    /// The prompt split at the cache boundary, as a model request carries it.
    pub(crate) system: openclaw_providers::SystemPrompt,
    /// The fingerprint of the stable prefix and its sections.
    pub(crate) fingerprint: Arc<crate::evidence::PromptFingerprint>,
}

impl RunPrompt {
    fn new(response: pb::RenderSystemPromptResponse) -> Self {
        Self {
            system: openclaw_providers::SystemPrompt {
                stable: response.stable_prefix.as_str().into(),
                dynamic: response.dynamic_suffix.as_str().into(),
            },
            fingerprint: crate::evidence::PromptFingerprint::of(&response).shared(),
            response,
        }
    }
}

impl RunRender {
    /// The prompt of a run's next model call. Its facts are gathered again (the workspace
    /// files as on disk now, the config as loaded now, the hooks' additions) into a render
    /// request; one equal to the request the run last sent is answered with that request's
    /// prompt instead of being sent again. The renderer is a pure function of its request
    /// (P-1), so the answer is the one prompt-service would give; a run's tool loop usually
    /// changes nothing the prompt says, and this saves a round trip per model call after the
    /// first (L17).
    pub(crate) async fn next(
        &mut self,
        services: &Services,
        t: &TurnPrompt<'_>,
        deadline: Instant,
    ) -> Result<&RunPrompt, RuntimeError> {
        let request = render_request(services, t).await?;
        let kept = match self.kept.take() {
            Some((sent, prompt)) if sent == request => self.kept.insert((sent, prompt)),
            // What was kept is dropped first: a failed render keeps nothing.
            _ => {
                let response = render_prompt(services, request.clone(), deadline).await?;
                self.kept.insert((request, RunPrompt::new(response)))
            }
        };
        record_cuts(services, t, &kept.1.response);
        Ok(&kept.1)
    }
}

/// Sends one render request to the prompt source.
pub(crate) async fn render_prompt(
    services: &Services,
    request: pb::RenderSystemPromptRequest,
    deadline: Instant,
) -> Result<pb::RenderSystemPromptResponse, RuntimeError> {
    services
        .prompt()
        .render(request, deadline)
        .await
        .map_err(RuntimeError::from)
}

/// The render request of one turn. Codex turns send it as the `base` of
/// `RenderCodexTurn`, so both runtimes render from the same inputs.
pub(crate) async fn render_request(
    services: &Services,
    t: &TurnPrompt<'_>,
) -> Result<pb::RenderSystemPromptRequest, RuntimeError> {
    let loaded = services.loaded_config()?;
    let hooks = loaded.config.hooks(&t.agent.id);
    // Judging hook programs costs a few path lookups: only turns that run a command pay.
    let launch = if hooks.has_commands() {
        services.hook_launch(&loaded.agents)
    } else {
        crate::hooks::HookLaunch::default()
    };
    let facts = crate::hooks::HookFacts::new(
        &t.agent.id,
        t.session_key,
        t.kind,
        t.heartbeat_turn,
        t.cwd,
        &launch,
    );
    // Privacy is judged on the files as the hooks left them (L5); with
    // no bootstrap hook that is as read, kept with the files between
    // renders. A hook gets the files as read; what it returns is judged
    // again and never kept, since it may rewrite them.
    let cache = services.turn_files();
    let (files, private) = if hooks.bootstrap.is_empty() {
        crate::visibility::cached_turn_files(cache, t.cwd).await?
    } else {
        let (files, _as_read) = crate::visibility::cached_turn_files(cache, t.cwd).await?;
        let files = crate::hooks::apply_bootstrap(&hooks.bootstrap, &facts, files).await?;
        let private = crate::visibility::scan_turn_files(t.cwd, &files).await?;
        (files, private)
    };
    let additions = crate::hooks::prompt_additions(&hooks.before_prompt_build, &facts).await?;
    let docs = services.docs_dir(&loaded.config);
    let sources = TurnSources {
        config: &loaded.config,
        files: &files,
        private: &private,
        docs: docs.as_deref(),
    };
    let mut input = prompt_input::render_input(t, &sources);
    additions.apply(&mut input.contribution);
    let mut request = prompt_client::request_from_input(&input);
    // No secret reaches a prompt (or a preview), whatever config field or file it sits in.
    crate::redaction::redact_request(services.redactor(), &mut request);
    Ok(request)
}

/// The prompt the next model call of a session would send, without
/// writing anything (the session need not exist).
pub(crate) async fn preview(
    services: &Arc<Services>,
    agent_id: &str,
    session_key: &str,
    channel: &TurnChannel,
) -> Result<Preview, RuntimeError> {
    let loaded = services.loaded_config()?;
    let agent = services.usable_agent(agent_id)?;
    if let AgentRuntime::Codex(_) = agent.runtime {
        // A Codex turn sends no system prompt of ours: Codex keeps its own
        // model instructions and ours travel as developer instructions,
        // turn instructions and turn input (RenderCodexTurn's layers).
        // Showing the embedded prompt here would not be what a run sends.
        return Err(RuntimeError::FailedPrecondition(format!(
            "agent {:?} runs on the Codex runtime, which sends no OpenClaw system prompt; \
             call prompt-service's RenderCodexTurn for the layers a Codex turn sends",
            agent.id
        )));
    }
    let key = key::normalize(&agent.id, session_key)?;
    let cwd = services.session_workspace(&agent, &key).await?;
    let existing = services.index_entry(&agent.id, &key).await?;
    let model = choose_model(
        services,
        &loaded,
        &agent,
        None,
        existing.as_ref().and_then(|e| e.model_override.as_deref()),
    )?;
    let model_name = format!("{}/{}", model.reference.provider, model.reference.model);
    let tools = tools_for(&loaded, &agent, &model, kind_of(&key));
    let descriptors = descriptors(&tools);
    let continuation = match &existing {
        Some(entry) => {
            let info = crate::sessions::SessionInfo {
                agent_id: agent.id.clone(),
                key: key.clone(),
                entry: entry.clone(),
            };
            let messages = services
                .sessions()
                .writable(&agent, &info, &cwd)?
                .messages()
                .await?;
            messages
                .iter()
                .any(|m| matches!(m, openclaw_transcript::Message::Assistant(_)))
        }
        None => false,
    };
    let deadline = Instant::now() + services.run_timeout();
    // As a run's setup does: both waits at once.
    let (skills, contribution) = tokio::join!(
        services.list_skills(&agent.id),
        contribution(services, &model, deadline)
    );
    let skills = skills.ok();
    let default_model = agent.model.clone().unwrap_or_default();
    let sandbox = services.session_isolation(&agent, &key, &cwd)?;
    // The session's `/think` level, as its next run will use it.
    let agent = openclaw_config::resolve::AgentView {
        thinking_default: crate::prompt_input::thinking_of(
            existing.as_ref().and_then(|e| e.thinking_level.as_deref()),
        )
        .or(agent.thinking_default),
        ..agent
    };
    let prompt = render_turn(
        services,
        &TurnPrompt {
            agent: &agent,
            kind: kind_of(&key),
            heartbeat_turn: false,
            wake_up: false,
            cwd: &cwd,
            sandbox: sandbox.as_ref(),
            channel,
            tools: &descriptors,
            skills: skills.as_deref(),
            continuation,
            model: &model_name,
            default_model: &default_model,
            contribution: contribution.as_ref(),
            session_key: key.as_str(),
            reasoning: crate::prompt_input::reasoning_of(
                existing.as_ref().and_then(|e| e.reasoning_level.as_deref()),
            ),
            surface: prompt_render::PromptSurface::Preview,
            lightweight: false,
        },
        deadline,
    )
    .await?;
    Ok(Preview {
        prompt,
        model: model_name,
        tools: descriptors.into_iter().map(|d| d.name).collect(),
        workspace: cwd,
    })
}

/// The provider contribution for a model, cached per provider/model.
pub(crate) async fn contribution(
    services: &Services,
    model: &ResolvedModel,
    deadline: Instant,
) -> Option<pb::ProviderContribution> {
    let personality = services
        .loaded_config()
        .ok()
        .map(|l| l.config.gpt5_personality(Some(&model.reference.provider)));
    let request = pb::ResolveProviderContributionRequest {
        provider_id: model.reference.provider.clone(),
        model_id: model.reference.model.clone(),
        config_json5: String::new(),
        personality: match personality {
            Some(openclaw_config::raw::Gpt5Personality::Off) => pb::Gpt5Personality::Off,
            _ => pb::Gpt5Personality::Friendly,
        } as i32,
    };
    match services.prompt().contribution(request, deadline).await {
        Ok(response) => response.contribution,
        Err(error) => {
            tracing::warn!(%error, "provider contribution unavailable; rendering without it");
            None
        }
    }
}

/// What the next model call of a session would send.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The rendered prompt with its reports.
    pub prompt: pb::RenderSystemPromptResponse,
    /// provider/model.
    pub model: String,
    /// Tool names after policy.
    pub tools: Vec<String>,
    /// The session's working directory.
    pub workspace: std::path::PathBuf,
}

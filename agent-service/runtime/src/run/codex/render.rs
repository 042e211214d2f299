//! The prompt side of a Codex turn: `RenderCodexTurn` from the same inputs as an embedded turn,
//! and the prompt evidence each turn publishes.

use super::*;

/// A lightweight cron run (its first message says so, in a cron session): the Codex mapping
/// then passes the scheduled prompt byte for byte and adds none of our instructions (P-38).
pub(super) fn lightweight_cron(kind: SessionKind, start: &RunStart) -> bool {
    kind == SessionKind::Cron && start.first().is_some_and(|m| m.options.lightweight)
}

impl CodexRun<'_> {
    /// `RenderCodexTurn` for this turn, with the embedded path's inputs.
    pub(super) async fn render(
        &self,
        messages: &[Inbound],
        input_text: &str,
        replied: bool,
        thread_id: Option<&str>,
        held: &BTreeMap<String, String>,
    ) -> Result<pb::RenderCodexTurnResponse, RuntimeError> {
        let s = self.s;
        let descriptors = descriptors(&self.run.tools);
        let heartbeat = messages.iter().any(|m| m.options.heartbeat);
        let lightweight = lightweight_cron(s.kind, self.start);
        let base = super::super::prepare::render_request(
            self.services,
            &TurnPrompt {
                agent: &s.agent,
                kind: s.kind,
                heartbeat_turn: heartbeat,
                wake_up: !heartbeat && messages.iter().all(|m| !m.origin.is_user()),
                cwd: &s.cwd,
                sandbox: None,
                channel: self.channel,
                tools: &descriptors,
                skills: self.skills.as_deref(),
                continuation: replied,
                model: &self.run.name,
                default_model: &self.run.default_model,
                contribution: None,
                session_key: s.key.as_str(),
                reasoning: self.reasoning,
                surface: prompt_render::PromptSurface::EmbeddedRun,
                lightweight,
            },
        )
        .await?;
        let tools = &self.run.tools;
        let request = pb::RenderCodexTurnRequest {
            base: Some(base),
            trigger: match s.kind {
                _ if heartbeat => pb::CodexTrigger::Heartbeat,
                SessionKind::Cron => pb::CodexTrigger::Cron,
                SessionKind::Main
                | SessionKind::Direct
                | SessionKind::Group
                | SessionKind::Channel
                | SessionKind::Subagent => pb::CodexTrigger::User,
            } as i32,
            lightweight_cron: lightweight,
            memory_tools_available: tools.get("memory_search").is_some()
                && tools.get("memory_get").is_some(),
            memory_workspace_is_active: s.cwd == s.agent.workspace,
            thread_id: thread_id.unwrap_or_default().to_owned(),
            resume: thread_id.is_some(),
            model: self.run.model.wire_model.clone(),
            effort: String::new(),
            approval_policy: approval_policy(self.codex) as i32,
            sandbox: sandbox(self.codex) as i32,
            dynamic_tools: dynamic_tool_specs(tools)
                .into_iter()
                .map(|spec| pb::CodexDynamicTool {
                    name: spec.name,
                    description: spec.description,
                    json_schema: spec.input_schema.to_string(),
                    defer_loading: false,
                    namespace: String::new(),
                })
                .collect(),
            input_text: input_text.to_owned(),
            cwd: s.cwd.display().to_string(),
            thread_context: held
                .iter()
                .map(|(path, sha256)| pb::CodexContextDigest {
                    path: path.clone(),
                    sha256: sha256.clone(),
                })
                .collect(),
        };
        self.services
            .prompt()
            .render_codex(request, self.deadline)
            .await
            .map_err(RuntimeError::from)
    }

    /// Prompt evidence for the turn: the thread-scoped layers (developer
    /// instructions, dynamic tools) are Codex's stable prefix, frozen when
    /// the thread starts; a change there reaches only a new thread.
    pub(super) fn evidence(
        &self,
        step: u32,
        response: &pb::RenderCodexTurnResponse,
        messages: usize,
    ) {
        let ours = || response.layers.iter().filter(|l| !l.codex_owned);
        let stable: Vec<&pb::CodexPromptLayer> = ours()
            .filter(|l| l.carrier.starts_with("thread/"))
            .collect();
        let fingerprint = PromptFingerprint {
            stable_sha256: prompt_render::sha256_hex(
                stable
                    .iter()
                    .map(|l| l.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
                    .as_bytes(),
            ),
            sections: stable
                .iter()
                .map(|l| {
                    (
                        l.carrier.clone(),
                        prompt_render::sha256_hex(l.text.as_bytes()),
                    )
                })
                .collect(),
        };
        let previous = self.s.live.swap_fingerprint(fingerprint.clone().shared());
        let (prefix_changed, changed_sections) = match &previous {
            Some(prev) if prev.stable_sha256 != fingerprint.stable_sha256 => {
                (true, fingerprint.changed_since(prev))
            }
            _ => (false, Vec::new()),
        };
        self.out.emit(RunEvent::ModelCall {
            step,
            model: self.run.name.clone(),
            stable_prefix_sha256: fingerprint.stable_sha256,
            prefix_changed,
            changed_sections,
            prompt_chars: ours().map(|l| l.chars).sum(),
            messages: u32::try_from(messages).unwrap_or(u32::MAX),
        });
    }
}

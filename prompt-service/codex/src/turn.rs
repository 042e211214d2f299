//! The facade: validate, route, write our texts, assemble the params.

use prompt_render::{
    Injected, SkillsListing, normalize_absolute, normalize_block, one_line, prepare_skills,
    skills_listing, validate,
};
use serde_json::Value;

use crate::{
    context::{self, ContextDigest},
    error::CodexError,
    input::CodexTurnInput,
    instructions::{self, ThreadFacts, TurnFacts},
    layers::{self, CodexOwnedText, Layer},
    params::{self, Parts},
    routing::{self, FileRoute},
    tools::{self, ToolCatalog},
};

/// One turn mapped onto Codex app-server params.
#[derive(Debug, Clone, PartialEq)]
pub struct CodexTurn {
    /// `thread/start` params (a new thread, or the fallback when a stored
    /// thread cannot be resumed).
    pub thread_start: Value,
    /// `thread/resume` params (`threadId` is empty when the request had none).
    pub thread_resume: Value,
    /// `turn/start` params (`threadId` is empty when the request had none:
    /// take it from the `thread/start` result).
    pub turn_start: Value,
    /// `turn/start` params for a thread that holds none of the per-turn
    /// context; `None` when nothing was left out (then `turn_start` is it).
    pub new_thread_turn_start: Option<Value>,
    /// This turn's per-turn context, pasted or held: what a thread that ran
    /// this turn holds.
    pub turn_context: Vec<ContextDigest>,
    /// The context files the thread already holds, not pasted again.
    pub held_context: Vec<Injected>,
    /// Our thread developer instructions (`None` on lightweight cron turns).
    pub thread_instructions: Option<String>,
    /// Our turn-scoped collaboration instructions (`None` on lightweight cron turns).
    pub turn_instructions: Option<String>,
    /// `input[0].text`.
    pub input_text: String,
    /// The dynamic tool catalog.
    pub tools: ToolCatalog,
    /// What happened to each workspace file.
    pub files: Vec<FileRoute>,
    /// The skills listing placed in the turn instructions (empty when none).
    pub skills: SkillsListing,
}

impl CodexTurn {
    /// The model-bound layer stack; `codex` supplies the texts Codex writes
    /// itself (leave it default when they are unknown).
    /// Read from the params this turn sends ([`layers::from_params`]): the
    /// `thread/start` params and the `turn/start` params of the thread the
    /// request names (a new thread when it names none).
    pub fn layers(&self, codex: &CodexOwnedText) -> Vec<Layer> {
        let held = self
            .held_context
            .iter()
            .map(instructions::context_block)
            .collect::<Vec<_>>()
            .join("\n\n");
        layers::from_params(&self.thread_start, &self.turn_start, &held, codex)
    }
}

/// Checks a single-token value (model slug, effort, thread id).
fn token(field: &str, value: &str) -> Result<String, CodexError> {
    let value = one_line(value);
    if value.chars().any(char::is_whitespace) {
        return Err(CodexError::invalid(
            field,
            format!("{value:?} must not contain whitespace"),
        ));
    }
    Ok(value)
}

/// Maps one turn. Pure: the same input always gives byte-identical params.
///
/// `base` is validated exactly as `RenderSystemPrompt` validates it (errors
/// name `base.<field>`); then the Codex fields.
pub fn render_codex_turn(input: &CodexTurnInput) -> Result<CodexTurn, CodexError> {
    validate(&input.base)?;
    let workspace = normalize_absolute(input.base.workspace_dir.trim())
        .map_err(|reason| CodexError::invalid("base.workspace_dir", reason))?;
    let model = token("model", &input.model)?;
    if model.is_empty() {
        return Err(CodexError::invalid("model", "is required"));
    }
    let effort = token("effort", &input.effort)?;
    let thread_id = token("thread_id", &input.thread_id)?;
    if input.resume && thread_id.is_empty() {
        return Err(CodexError::invalid(
            "thread_id",
            "is required when resume is set",
        ));
    }
    let cwd = match input.cwd.trim() {
        "" => workspace.clone(),
        cwd => normalize_absolute(cwd).map_err(|reason| CodexError::invalid("cwd", reason))?,
    };
    let catalog = tools::catalog(&input.dynamic_tools)?;
    let mut routed = routing::route_files(input, &workspace)?;
    let lightweight = input.is_lightweight_cron();

    let skills = if lightweight {
        SkillsListing::default()
    } else {
        skills_listing(
            &prepare_skills(&input.base.skills)?,
            input.base.skills_limits,
        )
    };
    let held = context::split(&routed.turn_input, &input.thread_context);
    for file in &mut routed.files {
        file.held_by_thread = !lightweight && held.held.iter().any(|h| h.path == file.path);
    }
    let (thread_instructions, turn_instructions, input_text, new_thread_text) = if lightweight {
        // P-38: the scheduled prompt goes through byte for byte.
        (None, None, input.input_text.clone(), None)
    } else {
        let base = &input.base;
        let thread = instructions::thread_instructions(&ThreadFacts {
            agent_name: &one_line(&base.agent_name),
            agent_id: &one_line(&base.agent_id),
            workspace: &workspace,
            timezone: input.base.user_timezone.trim(),
            files: &routed.thread,
        });
        let channel = one_line(&base.channel.name).to_lowercase();
        let mut capabilities: Vec<String> = base
            .channel
            .capabilities
            .iter()
            .map(|c| one_line(c).to_lowercase())
            .filter(|c| !c.is_empty())
            .collect();
        capabilities.sort();
        capabilities.dedup();
        let memory_note = routed.memory_note.clone();
        let heartbeat_file = routed
            .heartbeat_file
            .as_ref()
            .map(|rel| format!("{}/{rel}", workspace.trim_end_matches('/')));
        let turn = instructions::turn_instructions(&TurnFacts {
            trigger: input.trigger,
            kind: input.trigger.session_kind(base.session_kind),
            soul: &routed.turn_instructions,
            skills: &skills.block,
            memory_note: memory_note.as_deref(),
            memory_tools: (
                catalog.spelled("memory_search").unwrap_or("memory_search"),
                catalog.spelled("memory_get").unwrap_or("memory_get"),
            ),
            channel: &channel,
            chat_type: base.channel.chat_type,
            capabilities: &capabilities,
            native_approvals: base
                .channel
                .native_approvals
                .unwrap_or_else(|| prompt_render::channel_has_native_approvals(&channel)),
            reply_delivery: base.channel.reply_delivery,
            message_tool: catalog.spelled("message").unwrap_or("message"),
            extra_context: &normalize_block(&base.extra_system_prompt),
            heartbeat_file: heartbeat_file.as_deref(),
        });
        let text = instructions::turn_input(&held.new, &input.input_text);
        let new_thread_text = (!held.held.is_empty())
            .then(|| instructions::turn_input(&routed.turn_input, &input.input_text));
        (Some(thread), Some(turn), text, new_thread_text)
    };

    let parts = Parts {
        input,
        model: &model,
        effort: &effort,
        thread_id: &thread_id,
        cwd: &cwd,
        workspace: &workspace,
        thread_instructions: thread_instructions.as_deref(),
        turn_instructions: turn_instructions.as_deref(),
        input_text: &input_text,
        dynamic_tools: &catalog.specs,
    };
    let new_thread_turn_start = new_thread_text.as_deref().map(|text| {
        params::turn_start(&Parts {
            input_text: text,
            ..parts
        })
    });
    let (turn_context, held_context) = if lightweight {
        (Vec::new(), Vec::new())
    } else {
        (held.digests, held.held)
    };
    Ok(CodexTurn {
        thread_start: params::thread_start(&parts),
        thread_resume: params::thread_resume(&parts),
        turn_start: params::turn_start(&parts),
        new_thread_turn_start,
        turn_context,
        held_context,
        thread_instructions,
        turn_instructions,
        input_text,
        tools: catalog,
        files: routed.files,
        skills,
    })
}

#[cfg(test)]
mod tests {
    use prompt_render::RenderInput;
    use serde_json::json;

    use super::*;
    use crate::input::{ApprovalPolicy, SandboxMode};

    fn input() -> CodexTurnInput {
        let mut input = CodexTurnInput::new(RenderInput::new("/ws"), "gpt-5.5");
        input.input_text = "hi".to_owned();
        input
    }

    fn field(input: &CodexTurnInput) -> Option<String> {
        render_codex_turn(input).err().map(|e| e.field())
    }

    #[test]
    fn bad_values_name_their_field() {
        let mut resume = input();
        resume.resume = true;
        assert_eq!(field(&resume).as_deref(), Some("thread_id"));
        let mut no_model = input();
        no_model.model = " ".to_owned();
        assert_eq!(field(&no_model).as_deref(), Some("model"));
        let mut effort = input();
        effort.effort = "very high".to_owned();
        assert_eq!(field(&effort).as_deref(), Some("effort"));
        let mut cwd = input();
        cwd.cwd = "relative/dir".to_owned();
        assert_eq!(field(&cwd).as_deref(), Some("cwd"));
        let mut base = input();
        base.base.workspace_dir = "not/absolute".to_owned();
        assert_eq!(field(&base).as_deref(), Some("base.workspace_dir"));
        let mut file = input();
        file.base.context_files.push(prompt_render::ContextFile {
            path: "../outside.md".to_owned(),
            ..prompt_render::ContextFile::default()
        });
        assert_eq!(field(&file).as_deref(), Some("base.context_files[0].path"));
        let mut timezone = input();
        timezone.base.user_timezone = "Mars/Base".to_owned();
        assert_eq!(field(&timezone).as_deref(), Some("base.user_time.timezone"));
    }

    #[test]
    fn params_use_codex_names_and_spellings() {
        let mut i = input();
        i.effort = "high".to_owned();
        i.approval_policy = ApprovalPolicy::OnRequest;
        i.sandbox = SandboxMode::WorkspaceWrite;
        i.thread_id = "t-1".to_owned();
        i.resume = true;
        let turn = render_codex_turn(&i).expect("maps");
        let start = &turn.thread_start;
        assert_eq!(start["approvalPolicy"], "on-request");
        assert_eq!(start["sandbox"], "workspace-write");
        assert_eq!(start["personality"], "none");
        assert_eq!(start["serviceName"], "OpenClaw");
        assert_eq!(start["ephemeral"], false);
        assert!(start.get("baseInstructions").is_none());
        assert!(start["developerInstructions"].is_string());
        assert_eq!(turn.thread_resume["threadId"], "t-1");
        assert!(turn.thread_resume.get("dynamicTools").is_none());
        let t = &turn.turn_start;
        assert_eq!(t["threadId"], "t-1");
        assert_eq!(t["effort"], "high");
        assert_eq!(
            t["input"],
            json!([{"type": "text", "text": "hi", "text_elements": []}])
        );
        assert_eq!(
            t["sandboxPolicy"],
            json!({"type": "workspaceWrite", "networkAccess": false, "writableRoots": []})
        );
        assert_eq!(t["collaborationMode"]["mode"], "default");
        assert_eq!(t["collaborationMode"]["settings"]["model"], "gpt-5.5");
        assert_eq!(
            t["collaborationMode"]["settings"]["reasoning_effort"],
            "high"
        );
        // Keys come out sorted, so the bytes depend on content alone.
        let keys: Vec<&String> = t.as_object().expect("object").keys().collect();
        let mut sorted_keys = keys.clone();
        sorted_keys.sort();
        assert_eq!(keys, sorted_keys);
    }

    #[test]
    fn effort_and_cwd_are_optional() {
        let mut i = input();
        i.cwd = "/repo/./sub/".to_owned();
        i.sandbox = SandboxMode::WorkspaceWrite;
        let turn = render_codex_turn(&i).expect("maps");
        let t = &turn.turn_start;
        assert!(t.get("effort").is_none());
        assert_eq!(
            t["collaborationMode"]["settings"]["reasoning_effort"],
            json!(null)
        );
        assert_eq!(t["cwd"], "/repo/sub");
        assert_eq!(turn.thread_start["cwd"], "/repo/sub");
        // The workspace stays writable when commands start elsewhere.
        assert_eq!(t["sandboxPolicy"]["writableRoots"], json!(["/ws"]));
        for (mode, policy) in [
            (
                SandboxMode::ReadOnly,
                json!({"type": "readOnly", "networkAccess": false}),
            ),
            (
                SandboxMode::DangerFullAccess,
                json!({"type": "dangerFullAccess"}),
            ),
        ] {
            i.sandbox = mode;
            let turn = render_codex_turn(&i).expect("maps");
            assert_eq!(turn.turn_start["sandboxPolicy"], policy);
        }
    }

    #[test]
    fn the_user_time_zone_is_thread_text() {
        let plain = render_codex_turn(&input()).expect("maps");
        let thread = plain.thread_instructions.expect("thread text");
        assert!(!thread.contains("time zone"), "{thread}");
        let mut zoned = input();
        zoned.base.user_timezone = " Europe/Berlin ".to_owned();
        let turn = render_codex_turn(&zoned).expect("maps");
        let thread = turn.thread_instructions.as_deref().expect("thread text");
        assert!(
            thread.contains("The user's time zone is Europe/Berlin."),
            "{thread}"
        );
        assert_eq!(
            turn.thread_start["developerInstructions"].as_str(),
            Some(thread)
        );
        let turn_text = turn.turn_instructions.as_deref().unwrap_or_default();
        assert!(!turn_text.contains("Europe/Berlin"), "{turn_text}");
        assert!(!turn.input_text.contains("Europe/Berlin"));
    }

    #[test]
    fn context_the_thread_holds_is_not_pasted_again_and_the_stack_shows_it() {
        let mut first = input();
        first.base.context_files.push(prompt_render::ContextFile {
            path: "BOOTSTRAP.md".to_owned(),
            content: "Ask for a name.".to_owned(),
            ..prompt_render::ContextFile::default()
        });
        let one = render_codex_turn(&first).expect("maps");
        assert!(one.input_text.contains("Ask for a name."));
        assert!(one.new_thread_turn_start.is_none() && one.held_context.is_empty());
        assert_eq!(one.turn_context.len(), 1);

        let mut next = first.clone();
        next.thread_id = "t-1".to_owned();
        next.thread_context = one.turn_context.clone();
        let two = render_codex_turn(&next).expect("maps");
        assert_eq!(two.input_text, "hi");
        assert_eq!(two.turn_context, one.turn_context);
        let fresh = two
            .new_thread_turn_start
            .as_ref()
            .expect("for a new thread");
        assert_eq!(fresh["input"][0]["text"], one.input_text.as_str());
        assert_eq!(fresh["threadId"], "t-1");
        let boot = two
            .files
            .iter()
            .find(|f| f.path == "BOOTSTRAP.md")
            .expect("reported");
        assert!(boot.held_by_thread && boot.injected_chars > 0, "{boot:?}");
        let layers = two.layers(&CodexOwnedText::default());
        let held = layers
            .iter()
            .position(|l| l.carrier == crate::layers::CARRIER_HELD)
            .expect("a held layer");
        assert!(layers[held].text.contains("Ask for a name."));
        let project_docs = layers
            .iter()
            .position(|l| l.carrier == crate::layers::CARRIER_PROJECT_DOCS)
            .expect("project docs");
        assert_eq!(held, project_docs + 1, "where the history begins");
        assert!(
            !one.layers(&CodexOwnedText::default())
                .iter()
                .any(|l| l.carrier == crate::layers::CARRIER_HELD)
        );
    }

    #[test]
    fn the_layer_stack_follows_codex_order() {
        let mut i = input();
        i.dynamic_tools = vec![crate::DynamicTool {
            name: "message".to_owned(),
            ..crate::DynamicTool::default()
        }];
        let turn = render_codex_turn(&i).expect("maps");
        let layers = turn.layers(&CodexOwnedText::default());
        let carriers: Vec<&str> = layers.iter().map(|l| l.carrier.as_str()).collect();
        assert_eq!(
            carriers,
            [
                "codex:model-instructions",
                "thread/start.developerInstructions",
                "codex:permissions-instructions",
                "turn/start.collaborationMode.settings.developer_instructions",
                "codex:project-docs-and-environment",
                "turn/start.input[0].text",
                "thread/start.dynamicTools",
            ]
        );
        let input_layer = &layers[5];
        assert_eq!(
            (
                input_layer.text.as_str(),
                input_layer.chars,
                input_layer.approx_tokens
            ),
            ("hi", 2, 1)
        );
        assert!(
            layers
                .iter()
                .filter(|l| l.codex_owned)
                .all(|l| l.text.is_empty())
        );
    }
}

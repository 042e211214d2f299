//! The agent loop (SPEC, P-3, P-24): a user message into a
//! session, then model calls and tool calls until the model stops or the
//! step limit is hit. Every model call renders its prompt through the
//! prompt source (prompt-service), every entry is written through the
//! session's actor, and events stream as they happen.

pub mod controls;
pub mod evidence;
mod prepare;

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use openclaw_config::resolve::AgentView;
use openclaw_providers::{
    ModelRequest, ProviderError, ResolvedModel, RetryPolicy, StreamEvent, SystemPrompt, ToolSpec,
    complete_with_retry,
};
use openclaw_tools::{ToolOutcome, ToolRegistry};
use openclaw_transcript::{
    AssistantMessage, ContentBlock, EntryBody, Message, SessionKey, StopReason, ToolResultMessage,
    Usage, UserContent, UserMessage, unix_millis,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use prepare::{Preview, TurnPrompt};

use crate::{
    context::{self, tool_call_ids},
    error::RuntimeError,
    prompt_input::{ToolDescriptor, TurnChannel},
    runtime::Runtime,
    sessions::{SessionHandle, SessionKind, key},
};
use evidence::PromptFingerprint;

/// Model calls a run makes unless told otherwise.
pub const DEFAULT_MAX_STEPS: u32 = 24;
/// Default limit on a whole run (`agents.defaults.timeoutSeconds`).
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(600);
/// Events buffered before the run waits for a slow client.
const EVENT_BUFFER: usize = 256;
/// Tool output shown in a stream event (the model gets all of it).
const EVENT_OUTPUT_CHARS: usize = 4096;

/// A user message for a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSpec {
    /// Agent id ("" for the default).
    pub agent_id: String,
    /// Session key ("" for the main session); created if new.
    pub session_key: String,
    /// The message text.
    pub message: String,
    /// Where it came from.
    pub channel: TurnChannel,
    /// Sender id, checked against the channel's allowlist.
    pub sender_id: String,
    /// One-run model override, provider/model.
    pub model: Option<String>,
    /// Most model calls (0 for the default).
    pub max_steps: u32,
}

/// One event of a run, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// The run began.
    Started {
        /// Run id.
        run_id: String,
        /// Agent id.
        agent_id: String,
        /// Session key.
        session_key: String,
        /// Session id.
        session_id: String,
        /// provider/model.
        model: String,
    },
    /// Assistant text.
    TextDelta(String),
    /// Assistant thinking.
    ThinkingDelta(String),
    /// A model call is about to be made, with its prompt evidence.
    ModelCall {
        /// 1-based call number.
        step: u32,
        /// provider/model.
        model: String,
        /// SHA-256 of the stable prefix.
        stable_prefix_sha256: String,
        /// Differs from the session's previous call.
        prefix_changed: bool,
        /// Stable sections that changed.
        changed_sections: Vec<String>,
        /// Prompt size.
        prompt_chars: u32,
        /// Messages sent.
        messages: u32,
    },
    /// A tool call starts.
    ToolStarted {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// One-line summary.
        summary: String,
    },
    /// A tool call ended.
    ToolFinished {
        /// Call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// Error result.
        is_error: bool,
        /// Result text (shortened for the stream).
        output: String,
        /// Wall time in ms.
        duration_ms: u64,
    },
    /// Usage of one model call.
    Usage(Usage),
    /// A model turn ended.
    TurnEnd {
        /// Call number.
        step: u32,
        /// Stop reason.
        stop_reason: String,
    },
    /// The run finished.
    Final {
        /// Final assistant text.
        text: String,
        /// Last stop reason.
        stop_reason: String,
        /// Model calls made.
        steps: u32,
        /// Summed usage.
        usage: Usage,
    },
    /// The run failed; every entry written is whole.
    Error {
        /// gRPC code name.
        code: &'static str,
        /// What went wrong.
        message: String,
    },
}

/// Everything a started run needs, decided before its task starts.
pub(crate) struct Prepared {
    pub agent: AgentView,
    pub key: SessionKey,
    pub session_id: String,
    pub kind: SessionKind,
    pub cwd: PathBuf,
    pub handle: SessionHandle,
    pub model: ResolvedModel,
    pub default_model: String,
    pub tools: Arc<ToolRegistry>,
    pub extras: Arc<crate::sessions::SessionExtras>,
}

/// Starts a run and returns its event stream. Refusals (unknown agent,
/// refused sender, a run already active, no model) come back as errors
/// before anything is written.
pub async fn start(
    runtime: &Arc<Runtime>,
    spec: RunSpec,
) -> Result<mpsc::Receiver<RunEvent>, RuntimeError> {
    let prepared = runtime.prepare_run(&spec).await?;
    let (tx, rx) = mpsc::channel(EVENT_BUFFER);
    let runtime = Arc::clone(runtime);
    tokio::spawn(async move {
        let extras = Arc::clone(&prepared.extras);
        let outcome = run_loop(&runtime, &spec, &prepared, &tx).await;
        if let Err(error) = outcome {
            tracing::warn!(%error, session = %prepared.key.as_str(), "run failed");
            let _ = tx
                .send(RunEvent::Error {
                    code: error_code(&error),
                    message: error.to_string(),
                })
                .await;
        }
        extras.end_run();
    });
    Ok(rx)
}

/// The gRPC code name that fits a runtime error.
pub fn error_code(error: &RuntimeError) -> &'static str {
    match error {
        RuntimeError::InvalidArgument { .. } => "INVALID_ARGUMENT",
        RuntimeError::UnknownAgent(_) | RuntimeError::SessionNotFound(_) => "NOT_FOUND",
        RuntimeError::PermissionDenied(_) => "PERMISSION_DENIED",
        RuntimeError::FailedPrecondition(_) => "FAILED_PRECONDITION",
        RuntimeError::ResourceExhausted(_) => "RESOURCE_EXHAUSTED",
        RuntimeError::Unavailable(_) => "UNAVAILABLE",
        RuntimeError::Internal(_) => "INTERNAL",
    }
}

#[tracing::instrument(skip_all, fields(session_id = %p.session_id, agent = %p.agent.id))]
async fn run_loop(
    runtime: &Arc<Runtime>,
    spec: &RunSpec,
    p: &Prepared,
    events: &mpsc::Sender<RunEvent>,
) -> Result<(), RuntimeError> {
    let started = Instant::now();
    let deadline = started + runtime.run_timeout();
    let model_name = format!("{}/{}", p.model.reference.provider, p.model.reference.model);
    let run_id = format!("run-{}", p.extras.next_run_number());
    emit(
        events,
        RunEvent::Started {
            run_id,
            agent_id: p.agent.id.clone(),
            session_key: p.key.as_str().to_owned(),
            session_id: p.session_id.clone(),
            model: model_name.clone(),
        },
    )
    .await;

    let now = runtime.now_ms();
    let user = Message::User(UserMessage {
        content: UserContent::Text(spec.message.clone()),
        timestamp: now,
    });
    p.handle
        .append(vec![EntryBody::Message { message: user }], false)
        .await?;
    let mut history = p.handle.messages().await?;
    let continuation = history.iter().any(|m| matches!(m, Message::Assistant(_)));
    let skills = runtime.list_skills(&p.agent.id).await.ok();
    let tool_descriptors: Vec<ToolDescriptor> = prepare::descriptors(&p.tools);
    let contribution = runtime.contribution(&p.model, deadline).await;
    let ctx = runtime.tool_context(p, &model_name)?;
    let max_steps = if spec.max_steps == 0 {
        DEFAULT_MAX_STEPS
    } else {
        spec.max_steps
    };
    let mut total = Usage::default();

    for step in 1..=max_steps {
        // One choke point before every model request (lesson L10).
        let repair = context::repair_pairing(&mut history, runtime.now_ms());
        if !repair.is_clean() {
            tracing::warn!(orphans = ?repair.orphans_dropped, filled = repair.filled.len(), "repaired tool call pairing before a model call");
            let bodies = repair
                .filled
                .into_iter()
                .map(|r| EntryBody::Message {
                    message: Message::ToolResult(r),
                })
                .collect();
            p.handle.append(bodies, true).await?;
        }

        let prompt = runtime
            .render_turn(
                &TurnPrompt {
                    agent: &p.agent,
                    kind: p.kind,
                    heartbeat_turn: false,
                    cwd: &p.cwd,
                    channel: &spec.channel,
                    tools: &tool_descriptors,
                    skills: skills.as_ref(),
                    continuation,
                    model: &model_name,
                    default_model: &p.default_model,
                    contribution: contribution.as_ref(),
                },
                deadline,
            )
            .await?;
        let fingerprint = PromptFingerprint::of(&prompt);
        let previous = p.extras.swap_fingerprint(fingerprint.clone());
        let (prefix_changed, changed_sections) = match &previous {
            Some(prev) if prev.stable_sha256 != fingerprint.stable_sha256 => {
                (true, fingerprint.changed_since(prev))
            }
            Some(_) => (false, Vec::new()),
            None => (false, Vec::new()),
        };
        if prefix_changed {
            tracing::info!(changed = ?changed_sections, "stable prompt prefix changed since the previous model call");
        }
        emit(
            events,
            RunEvent::ModelCall {
                step,
                model: model_name.clone(),
                stable_prefix_sha256: prompt.stable_prefix_sha256.clone(),
                prefix_changed,
                changed_sections,
                prompt_chars: prompt.chars,
                messages: u32::try_from(history.len()).unwrap_or(u32::MAX),
            },
        )
        .await;

        let request = ModelRequest {
            model: p.model.wire_model.clone(),
            system: SystemPrompt {
                stable: prompt.stable_prefix,
                dynamic: prompt.dynamic_suffix,
            },
            messages: history.clone(),
            tools: tool_descriptors
                .iter()
                .map(|t| ToolSpec {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    parameters: t.parameters.clone(),
                })
                .collect(),
            max_output_tokens: None,
            reasoning_effort: None,
        };
        let reply = call_model(&p.model, request, events, &ctx.cancel, deadline).await?;
        let reply_message = Message::Assistant(reply.clone());
        p.handle
            .append(
                vec![EntryBody::Message {
                    message: reply_message.clone(),
                }],
                false,
            )
            .await?;
        history.push(reply_message.clone());
        if let Some(usage) = &reply.usage {
            add_usage(&mut total, usage);
            emit(events, RunEvent::Usage(usage.clone())).await;
        }
        let last_stop = reply.stop_reason.as_str().to_owned();
        let final_text = assistant_text(&reply);

        let calls = tool_call_ids(&reply_message);
        if reply.stop_reason == StopReason::Error {
            emit(
                events,
                RunEvent::TurnEnd {
                    step,
                    stop_reason: last_stop.clone(),
                },
            )
            .await;
            return finish_failed(
                runtime,
                p,
                &total,
                RuntimeError::Unavailable(
                    reply
                        .error_message
                        .unwrap_or_else(|| "the model call failed".to_owned()),
                ),
            )
            .await;
        }
        if calls.is_empty() {
            emit(
                events,
                RunEvent::TurnEnd {
                    step,
                    stop_reason: last_stop.clone(),
                },
            )
            .await;
            finish(runtime, p, &total).await?;
            emit(
                events,
                RunEvent::Final {
                    text: final_text,
                    stop_reason: last_stop,
                    steps: step,
                    usage: total,
                },
            )
            .await;
            return Ok(());
        }
        // The whole tool batch runs; no call is skipped. A tool that ends the
        // turn still lets the others finish, so every call gets a result.
        let mut end_turn: Option<String> = None;
        for block in &reply.content {
            let ContentBlock::ToolCall(call) = block else {
                continue;
            };
            emit(
                events,
                RunEvent::ToolStarted {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    summary: summarize_call(&call.name, &call.arguments),
                },
            )
            .await;
            let began = Instant::now();
            let outcome = p.tools.call(&ctx, &call.name, call.arguments.clone()).await;
            let (text, is_error, details) = match outcome {
                ToolOutcome::Ok { text, details } => (text, false, details),
                ToolOutcome::Error { text } => (text, true, None),
                ToolOutcome::EndTurn { text } => {
                    end_turn = Some(text.clone());
                    (text, true, None)
                }
            };
            let result = ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: vec![ContentBlock::text(text.clone())],
                details,
                is_error,
                timestamp: runtime.now_ms(),
            };
            p.handle
                .append(
                    vec![EntryBody::Message {
                        message: Message::ToolResult(result.clone()),
                    }],
                    false,
                )
                .await?;
            history.push(Message::ToolResult(result));
            emit(
                events,
                RunEvent::ToolFinished {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    is_error,
                    output: shorten(&text, EVENT_OUTPUT_CHARS),
                    duration_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
                },
            )
            .await;
        }
        emit(
            events,
            RunEvent::TurnEnd {
                step,
                stop_reason: last_stop.clone(),
            },
        )
        .await;
        if let Some(reason) = end_turn {
            return finish_failed(
                runtime,
                p,
                &total,
                RuntimeError::FailedPrecondition(format!("a tool ended the turn: {reason}")),
            )
            .await;
        }
        if Instant::now() >= deadline {
            return finish_failed(
                runtime,
                p,
                &total,
                RuntimeError::ResourceExhausted(format!(
                    "the run exceeded its time limit of {} s",
                    runtime.run_timeout().as_secs()
                )),
            )
            .await;
        }
    }
    finish_failed(runtime, p, &total, RuntimeError::ResourceExhausted(format!(
        "the run stopped after {max_steps} model calls (max_steps); the tool results so far are saved"
    )))
    .await
}

/// Calls the model, forwarding text and thinking as they stream.
async fn call_model(
    model: &ResolvedModel,
    request: ModelRequest,
    events: &mpsc::Sender<RunEvent>,
    cancel: &CancellationToken,
    deadline: Instant,
) -> Result<AssistantMessage, RuntimeError> {
    let (ptx, mut prx) = mpsc::channel::<StreamEvent>(EVENT_BUFFER);
    let policy = RetryPolicy {
        deadline: deadline.saturating_duration_since(Instant::now()),
        ..RetryPolicy::default()
    };
    let call = complete_with_retry(
        model.provider.as_ref(),
        request,
        ptx,
        cancel.clone(),
        &policy,
    );
    let forward = async {
        while let Some(event) = prx.recv().await {
            match event {
                StreamEvent::TextDelta(t) => emit(events, RunEvent::TextDelta(t)).await,
                StreamEvent::ThinkingDelta(t) => emit(events, RunEvent::ThinkingDelta(t)).await,
                StreamEvent::ToolCallStarted { .. }
                | StreamEvent::ToolCallFinished(_)
                | StreamEvent::Usage(_) => {}
            }
        }
    };
    let (result, ()) = tokio::join!(call, forward);
    result.map_err(provider_error)
}

fn provider_error(error: ProviderError) -> RuntimeError {
    let message = format!("model provider: {error}");
    match error {
        ProviderError::RateLimited { .. } => RuntimeError::ResourceExhausted(message),
        ProviderError::ContextOverflow { .. } => RuntimeError::ResourceExhausted(message),
        ProviderError::Config { .. } | ProviderError::Client { .. } => {
            RuntimeError::FailedPrecondition(message)
        }
        ProviderError::Cancelled => RuntimeError::FailedPrecondition(message),
        ProviderError::Server { .. }
        | ProviderError::Malformed { .. }
        | ProviderError::Connection { .. } => RuntimeError::Unavailable(message),
    }
}

/// Turn boundary: fsync and record usage in the index.
async fn finish(runtime: &Runtime, p: &Prepared, usage: &Usage) -> Result<(), RuntimeError> {
    p.handle.append(Vec::new(), true).await?;
    runtime.record_turn(&p.agent, &p.key, usage).await
}

async fn finish_failed(
    runtime: &Runtime,
    p: &Prepared,
    usage: &Usage,
    error: RuntimeError,
) -> Result<(), RuntimeError> {
    finish(runtime, p, usage).await?;
    Err(error)
}

async fn emit(events: &mpsc::Sender<RunEvent>, event: RunEvent) {
    // A client that went away does not stop the run: the session is written
    // either way.
    let _ = events.send(event).await;
}

fn add_usage(total: &mut Usage, usage: &Usage) {
    total.input += usage.input;
    total.output += usage.output;
    total.cache_read += usage.cache_read;
    total.cache_write += usage.cache_write;
    total.total_tokens += usage.total_tokens;
}

fn assistant_text(reply: &AssistantMessage) -> String {
    reply
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

/// A one-line description of a tool call for the stream (R-12: tool
/// summaries go out at tool start).
pub fn summarize_call(name: &str, arguments: &serde_json::Value) -> String {
    let first = ["command", "path", "query", "url", "action", "model", "task"]
        .iter()
        .find_map(|k| arguments.get(*k).and_then(serde_json::Value::as_str));
    match first {
        Some(value) => format!("{name}: {}", shorten(&value.replace('\n', " "), 120)),
        None => name.to_owned(),
    }
}

fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max_chars).collect();
    format!("{cut}…")
}

/// True when `key` may be used by `sender` on `channel`: a configured
/// `channels.<channel>.allowFrom` refuses everyone else (SPEC R-14).
pub fn sender_allowed(config: &openclaw_config::Config, channel: &str, sender: &str) -> bool {
    let Some(channels) = config.raw().channels.as_ref() else {
        return true;
    };
    let Some(entry) = channels.get(channel) else {
        return true;
    };
    match &entry.allow_from {
        None => true,
        Some(list) => list
            .iter()
            .any(|id| id.as_str() == "*" || id.as_str() == sender),
    }
}

/// The session kind a key names.
pub(crate) fn kind_of(key: &SessionKey) -> SessionKind {
    key::kind_of(key)
}

/// Milliseconds for a timestamp.
pub(crate) fn millis(at: jiff::Timestamp) -> i64 {
    unix_millis(at)
}

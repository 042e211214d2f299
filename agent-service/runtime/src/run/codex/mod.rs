//! Runs of agents whose `runtime` is Codex (P-32, P-38, R-11;
//! lesson L13): each turn is rendered by PromptService's `RenderCodexTurn`
//! and run on the agent's Codex app-server through the codex harness.
//!
//! The harness writes nothing; this module persists what it reports: the
//! thread id into the session index (as soon as the thread is ready, and
//! again from the outcome), the turn's entries into the transcript, usage
//! into the index. Steered messages are drained from the session's queue
//! while the turn runs and handed to `CodexRunner::steer`; those that miss
//! the turn go back to the queue. An interrupt cancels the run's token,
//! which the harness turns into `turn/interrupt`.

use std::{
    collections::BTreeMap,
    sync::Arc,
    time::{Duration, Instant},
};

use crate::metrics::Tokens;
use openclaw_codex_harness::{
    ApprovalRules, CodexParams, CodexRunner, HarnessError, HarnessEvent, HarnessSettings, History,
    ThreadBinding, TurnInput, TurnOutcome, TurnStatus, dynamic_tool_specs,
};
use openclaw_config::{
    Config,
    raw::{CodexApprovalPolicy, CodexSandbox, ExecSecurity},
    resolve::{AgentRuntime, CodexSettings},
};
use openclaw_proto::prompt::v1 as pb;
use openclaw_providers::ResolvedModel;
use openclaw_tools::ToolRegistry;
use openclaw_transcript::{EntryBody, Message, SessionEntry, Usage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    Emitter, RunEvent,
    blocks::{self, BlockSink},
    evidence::PromptFingerprint,
    models::CODEX_PROVIDER,
    reply::DirectiveCheck,
    run_context::{Finished, RunContext, RunModel, add_usage, append_user, descriptors, mark_done},
};
use crate::{
    error::RuntimeError,
    prompt_input::TurnPrompt,
    services::Services,
    sessions::Session,
    sessions::{
        SessionKind,
        queue::{Inbound, RunStart},
    },
};

mod delivery;
mod render;

mod settings;

use settings::{
    approval_policy, check_patch_policy, harness_error, harness_settings, patch_allowed, sandbox,
    turn_failure,
};

/// How often steered messages are taken from the queue while a turn runs.
const STEER_POLL: Duration = Duration::from_millis(100);
/// Harness events buffered between the turn and this run.
const EVENT_BUFFER: usize = 256;

/// Runs an admitted run on the agent's Codex app-server: one Codex turn for the
/// run's messages, then one more for each batch of steered messages that
/// arrived too late for the turn before.
pub(crate) async fn run_codex_once(rc: &RunContext) -> Result<Finished, RuntimeError> {
    let (services, s, start, out) = (&rc.services, &*rc.session, &rc.start, &rc.out);
    let (first, loaded, run, deadline) = (&rc.first, &rc.loaded, &rc.model, rc.deadline);
    let (codex, runner, approvals) = agent_runner(services, s, loaded, run)?;
    // A child of the run's token: an interrupt cancels both, the run's time
    // limit only this one; either becomes `turn/interrupt`.
    let cancel = start.cancel.child_token();
    let turn = CodexRun {
        services,
        s,
        start,
        out,
        runner,
        tool_ctx: {
            let mut ctx = rc.tools.clone();
            ctx.cancel = cancel.clone();
            ctx
        },
        approvals,
        skills: services.list_skills(&s.agent.id).await.ok(),
        codex,
        run,
        reasoning: rc.reasoning,
        channel: &first.channel,
        cancel,
        deadline,
    };
    let check = DirectiveCheck::new(&s.cwd);
    let mut sink = BlockSink::new(
        blocks::settings_for(&loaded.config, &first.channel.channel),
        check.clone(),
        out.clone(),
    );
    let mut messages = start.messages.clone();
    let mut total = Usage::default();
    let mut step = 0u32;
    loop {
        step += 1;
        // Interrupted (or out of time) between turns: no new Codex turn.
        if turn.cancel.is_cancelled() {
            let error = turn.failure(&TurnStatus::Interrupted);
            return finish(&turn, &total, Err(error)).await;
        }
        let outcome = match turn.one(step, &messages, &mut sink).await {
            Ok(outcome) => outcome,
            Err(error) => return finish(&turn, &total, Err(error)).await,
        };
        add_usage(&mut total, &outcome.usage);
        let ended = match &outcome.status {
            TurnStatus::Completed => None,
            TurnStatus::Interrupted
            | TurnStatus::ProcessExited { .. }
            | TurnStatus::Unresponsive { .. }
            | TurnStatus::Failed { .. } => Some(turn.failure(&outcome.status)),
        };
        if let Some(error) = ended {
            return finish(&turn, &total, Err(error)).await;
        }
        // A steer that arrived after the turn took its last one gets a turn
        // of its own instead of being dropped.
        let more = s.live.queue().finish_or_continue(start.run);
        let Some(steer) = more else {
            let done = Finished::of(
                outcome.final_text,
                outcome.status.stop_reason().to_owned(),
                step,
                total.clone(),
                sink.as_ref(),
                &check,
            );
            return finish(&turn, &total, Ok(done)).await;
        };
        if let Err(error) = append_user(services, s, &steer).await {
            s.live.queue().requeue_steer(start.run, steer);
            return finish(&turn, &total, Err(error)).await;
        }
        messages = steer;
    }
}

/// Starts the agent's Codex app-server, or finds it running, and checks its version: called
/// before a run reports `started`, so a Codex the harness cannot drive refuses the run
/// before it begins.
pub(crate) async fn ready(
    services: &Arc<Services>,
    s: &Session,
    loaded: &crate::config_state::Loaded,
    run: &RunModel,
) -> Result<(), RuntimeError> {
    let (_, runner, _) = agent_runner(services, s, loaded, run)?;
    let version = runner.start().await.map_err(harness_error)?;
    tracing::debug!(%version, "the Codex app-server is ready");
    Ok(())
}

/// The agent's Codex settings, its runner for this run's tools and policy, and the
/// approval rules the run answers Codex with.
fn agent_runner<'s>(
    services: &Arc<Services>,
    s: &'s Session,
    loaded: &crate::config_state::Loaded,
    run: &RunModel,
) -> Result<(&'s CodexSettings, Arc<CodexRunner>, ApprovalRules), RuntimeError> {
    let AgentRuntime::Codex(codex) = &s.agent.runtime else {
        return Err(RuntimeError::Internal(format!(
            "agent {:?} is not a Codex agent",
            s.agent.id
        )));
    };
    let mut approvals = ApprovalRules::from_config(&loaded.config, &s.agent.id, &run.tools);
    approvals.apply_patch = patch_allowed(&loaded.config, &s.agent, &run.model);
    approvals.policy = std::mem::take(&mut approvals.policy)
        .with_allowlist(services.exec_approvals().patterns(&s.agent.id));
    approvals.trusted_login_shell = login_shell_trusted(services, &s.cwd);
    check_patch_policy(&s.agent.id, codex, &approvals)?;
    let settings = harness_settings(codex, &run.tools, &approvals);
    let runner = services.codex_runners().runner(&s.agent.id, settings);
    Ok((codex, runner, approvals))
}

/// What every Codex turn of one run shares.
struct CodexRun<'a> {
    services: &'a Arc<Services>,
    s: &'a Session,
    start: &'a RunStart,
    out: &'a Emitter,
    runner: Arc<CodexRunner>,
    tool_ctx: openclaw_tools::ToolContext,
    approvals: ApprovalRules,
    skills: Option<Arc<openclaw_skills::Discovery>>,
    codex: &'a CodexSettings,
    run: &'a RunModel,
    /// The session's `/reasoning` level when the run was admitted.
    reasoning: Option<prompt_render::ReasoningLevel>,
    channel: &'a crate::prompt_input::TurnChannel,
    cancel: CancellationToken,
    deadline: Instant,
}

impl CodexRun<'_> {
    /// One Codex turn for `messages` (already in the transcript): render,
    /// run, persist. A turn that ran comes back whatever its status.
    async fn one(
        &self,
        step: u32,
        messages: &[Inbound],
        sink: &mut Option<BlockSink>,
    ) -> Result<TurnOutcome, RuntimeError> {
        // The end of the transcript only: a long session's turn copies none
        // of its history unless a new thread needs it projected.
        let (tail, stored) = tokio::join!(self.s.live.tail(), self.stored_thread());
        let (tail, stored) = (tail?, stored?);
        let thread_id = stored.as_ref().map(|(id, _)| id.clone());
        let held = stored.map(|(_, held)| held).unwrap_or_default();
        // User messages after the thread's last reply never reached it (saved
        // by crash recovery or at shutdown, or their run failed before its
        // turn started): they lead this turn's input, in order. Without a
        // thread the projection of the history carries them instead. A lightweight cron
        // turn sends its scheduled prompt alone (P-38), so it leads with none.
        // `tail.users` ends with this turn's messages, just appended.
        let earlier_users = tail.users.len().saturating_sub(messages.len());
        let mut unsent = match thread_id {
            Some(_) if !render::lightweight_cron(self.s.kind, self.start) => earlier_users,
            _ => 0,
        };
        if let (Some(thread), true) = (&thread_id, unsent > 0) {
            // Exactly once: a turn in flight when agent-service died may have delivered them.
            let candidates = &tail.users[earlier_users - unsent..earlier_users];
            let delivered = self.delivered(thread, candidates).await?;
            if delivered > 0 {
                tracing::info!(
                    messages = delivered,
                    "the Codex thread already holds user messages of a turn cut short; not sent again"
                );
                unsent -= delivered;
            }
        }
        let history_len = tail.len.saturating_sub(messages.len()) - unsent;
        // What the model reads of them is what an embedded model would: chat participants'
        // words and a background command's output fenced as untrusted data.
        let text = super::prepare::user_turn_text(
            &self.tool_ctx.fence,
            self.channel,
            &tail.users[earlier_users - unsent..],
        );
        if unsent > 0 {
            tracing::info!(
                messages = unsent,
                "user messages the Codex thread never saw lead the turn's input"
            );
        }
        let response = self
            .render(messages, &text, tail.replied, thread_id.as_deref(), &held)
            .await?;
        self.evidence(step, &response, tail.len);
        let params = CodexParams::from_json(
            &response.thread_start_params_json,
            &response.thread_resume_params_json,
            &response.turn_start_params_json,
        )
        .and_then(|p| p.with_new_thread_turn(&response.new_thread_turn_start_params_json))
        .map_err(harness_error)?;
        let reader = self.s.live.reader()?;
        // A new thread's projection of the history is fenced as an embedded model's history is.
        let (fence, channel) = (self.tool_ctx.fence.clone(), self.channel.clone());
        let history = History::lazy(move || {
            let (reader, fence, channel) = (reader.clone(), fence.clone(), channel.clone());
            async move {
                let mut all = reader.messages().await.map_err(|e| e.to_string())?;
                all.truncate(history_len);
                Ok(super::prepare::model_messages(&fence, &channel, &all))
            }
        });
        let input = TurnInput {
            thread_id,
            params,
            history,
            tools: Arc::clone(&self.run.tools),
            tool_ctx: self.tool_ctx.clone(),
            approvals: self.approvals.clone(),
        };
        let began = Instant::now();
        let (outcome, steered) = self.drive(input, sink).await;
        let tokens = outcome
            .as_ref()
            .map_or_else(|_| Tokens::default(), |o| tokens_of(&o.usage));
        let label = match &outcome {
            Ok(o) if o.status == TurnStatus::Completed => "ok",
            Ok(o) if o.status.is_interrupted() => "aborted",
            Ok(_) | Err(_) => "error",
        };
        crate::metrics::model_call(
            CODEX_PROVIDER,
            &self.run.model.wire_model,
            label,
            began.elapsed(),
            tokens,
        );
        let mut outcome = outcome?;
        delivery::raw_steers(&mut outcome.entries, &steered);
        if let Some(sink) = sink.as_mut() {
            sink.message_end();
        }
        // What Codex's model said is redacted before it is stored, as an embedded reply is.
        let bodies = outcome
            .entries
            .iter()
            .cloned()
            .map(|mut message| {
                if let Message::Assistant(reply) = &mut message {
                    crate::redaction::redact_reply(self.services.redactor(), reply);
                }
                EntryBody::Message { message }
            })
            .collect();
        self.s.live.append(bodies, true).await?;
        // The steered messages are in the transcript now (the turn's entries
        // hold them): the journal lets go of them at the next fsync.
        mark_done(self.s, &steered);
        // The turn's input is in the thread's history now: what it pasted
        // is held from here on (a new thread holds only this turn's).
        let mut context = match outcome.binding {
            ThreadBinding::Started | ThreadBinding::Replaced { .. } => BTreeMap::new(),
            ThreadBinding::Loaded | ThreadBinding::Resumed => held,
        };
        context.extend(
            response
                .turn_context
                .iter()
                .map(|d| (d.path.clone(), d.sha256.clone())),
        );
        self.store_thread(&outcome.thread_id, Some(context)).await?;
        self.out.emit(RunEvent::TurnEnd {
            step,
            stop_reason: outcome.status.stop_reason().to_owned(),
        });
        tracing::info!(thread_id = %outcome.thread_id, binding = ?outcome.binding, status = ?outcome.status, entries = outcome.entries.len(), "Codex turn ended");
        Ok(outcome)
    }

    /// Runs the turn on its own task, forwarding its events, steering in
    /// queued messages, and enforcing the run's time limit. Also returns
    /// the steered messages the turn took (its entries carry them).
    async fn drive(
        &self,
        input: TurnInput,
        sink: &mut Option<BlockSink>,
    ) -> (Result<TurnOutcome, RuntimeError>, Vec<Inbound>) {
        let (tx, mut rx) = mpsc::channel(EVENT_BUFFER);
        let runner = Arc::clone(&self.runner);
        let task = tokio::spawn(async move { runner.run_turn(input, tx).await });
        let mut steer = Steering::default();
        let mut tick = tokio::time::interval(STEER_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let limit = tokio::time::Instant::from_std(self.deadline);
        let mut text_open = false;
        loop {
            let idle = sink.as_ref().and_then(BlockSink::deadline);
            tokio::select! {
                event = rx.recv() => match event {
                    Some(event) => self.on_event(event, &mut steer, sink, &mut text_open).await,
                    None => break,
                },
                _ = tick.tick(), if steer.thread.is_some() => self.steer(&mut steer).await,
                () = tokio::time::sleep_until(limit), if !self.cancel.is_cancelled() => {
                    tracing::warn!("the Codex turn hit the run's time limit; interrupting it");
                    self.cancel.cancel();
                }
                () = tokio::time::sleep_until(idle.unwrap_or(limit)), if idle.is_some() => {
                    if let Some(sink) = sink.as_mut() {
                        sink.poll();
                    }
                }
            }
        }
        let result = match task.await {
            Ok(result) => result.map_err(harness_error),
            Err(e) => Err(RuntimeError::Internal(format!(
                "the Codex turn task failed: {e}"
            ))),
        };
        // Without an outcome no turn ran: every steer goes back.
        let undelivered = result
            .as_ref()
            .map_or(usize::MAX, |o| o.undelivered_steers.len());
        let (taken, back) = steer.split(undelivered);
        if !back.is_empty() {
            tracing::info!(
                messages = back.len(),
                "steered messages missed the Codex turn; they go back to the queue"
            );
            self.s.live.queue().requeue_steer(self.start.run, back);
        }
        (result, taken)
    }

    async fn on_event(
        &self,
        event: HarnessEvent,
        steer: &mut Steering,
        sink: &mut Option<BlockSink>,
        text_open: &mut bool,
    ) {
        match event {
            HarnessEvent::ThreadReady { thread_id, binding } => {
                tracing::info!(%thread_id, ?binding, "Codex thread ready");
                // Stored now: a crash later in the turn must not lose it.
                if let Err(error) = self.store_thread(&thread_id, None).await {
                    tracing::warn!(%error, "could not store the Codex thread id yet");
                }
            }
            HarnessEvent::TurnStarted { thread_id, turn_id } => {
                tracing::debug!(%thread_id, %turn_id, "Codex turn started");
                steer.thread = Some(thread_id);
            }
            HarnessEvent::TextDelta(text) => {
                // Each delta on its own: the stored reply is redacted whole.
                let text = self.services.redact(&text).into_owned();
                if let Some(sink) = sink.as_mut() {
                    sink.text(&text);
                }
                *text_open = true;
                self.out.emit(RunEvent::TextDelta(text));
            }
            HarnessEvent::ThinkingDelta(text) => {
                if let Some(sink) = sink.as_mut() {
                    sink.text_end();
                }
                let text = self.services.redact(&text).into_owned();
                self.out.emit(RunEvent::ThinkingDelta(text));
            }
            HarnessEvent::ToolStarted {
                call_id,
                name,
                summary,
            } => {
                // The reply's text ends where its tool calls begin.
                if std::mem::take(text_open)
                    && let Some(sink) = sink.as_mut()
                {
                    sink.message_end();
                }
                self.out.emit(RunEvent::ToolStarted {
                    call_id,
                    name,
                    summary,
                });
            }
            HarnessEvent::ToolFinished {
                call_id,
                name,
                is_error,
                output,
                duration_ms,
            } => self.out.emit(RunEvent::ToolFinished {
                call_id,
                name,
                is_error,
                // A Codex command's output, as an embedded tool result, without secrets.
                output: self.services.redact(&output).into_owned(),
                duration_ms,
            }),
            HarnessEvent::Usage(usage) => self.out.emit(RunEvent::Usage(usage)),
            HarnessEvent::Approval(record) => {
                tracing::info!(kind = ?record.kind, decision = record.decision.as_str(), reason = %record.reason, "Codex approval answered");
            }
            HarnessEvent::Steered { messages } => {
                tracing::debug!(
                    messages = messages.len(),
                    "steered messages reached the Codex turn"
                );
            }
            HarnessEvent::Warning(message) => tracing::warn!(%message, "Codex warning"),
        }
    }

    /// Hands queued steer messages to the running turn, in order; after a
    /// refusal the rest are kept back too.
    async fn steer(&self, steer: &mut Steering) {
        let Some(thread) = steer.thread.clone() else {
            return;
        };
        let drained = self.s.live.queue().drain_steer(self.start.run);
        for message in drained {
            if !steer.refused.is_empty() {
                steer.refused.push(message);
                continue;
            }
            let sent = super::prepare::user_turn_text(
                &self.tool_ctx.fence,
                self.channel,
                &[Message::User(openclaw_transcript::UserMessage {
                    content: openclaw_transcript::UserContent::Text(message.text.clone()),
                    timestamp: self.services.now_ms(),
                })],
            );
            match self.runner.steer(&thread, sent).await {
                Ok(()) => steer.sent.push(message),
                Err(error) => {
                    tracing::info!(%error, "the Codex turn took no more steer messages");
                    steer.refused.push(message);
                }
            }
        }
    }

    /// The session's stored Codex thread and the per-turn context it holds,
    /// if the index entry is still this session's (a reset gives the key a
    /// new session and no thread).
    async fn stored_thread(
        &self,
    ) -> Result<Option<(String, BTreeMap<String, String>)>, RuntimeError> {
        let entry = self
            .services
            .index_entry(&self.s.agent.id, &self.s.key)
            .await?;
        Ok(entry
            .filter(|e| e.session_id.to_string() == self.s.session_id)
            .and_then(|e| Some((e.codex_thread_id.clone()?, e.codex_thread_context.clone()))))
    }

    /// Stores the session's thread; `context` replaces what it holds. A
    /// different thread holds nothing of the old one's context. When the
    /// index already says exactly that (every steady-state turn: the same
    /// thread, nothing new pasted) it is not rewritten: an atomic rewrite
    /// with its fsyncs costs milliseconds, and the one after the turn is on
    /// the way to `final`.
    async fn store_thread(
        &self,
        thread_id: &str,
        context: Option<BTreeMap<String, String>>,
    ) -> Result<(), RuntimeError> {
        let current = self
            .services
            .index_entry(&self.s.agent.id, &self.s.key)
            .await?;
        if current.is_some_and(|entry| {
            stored_already(&entry, &self.s.session_id, thread_id, context.as_ref())
        }) {
            return Ok(());
        }
        let (thread_id, session_id) = (thread_id.to_owned(), self.s.session_id.clone());
        self.services
            .sessions()
            .update_entry(&self.s.agent, &self.s.key, move |entry| {
                if entry.session_id.to_string() != session_id {
                    return;
                }
                if entry.codex_thread_id.as_deref() != Some(thread_id.as_str()) {
                    entry.codex_thread_context.clear();
                }
                entry.codex_thread_id = Some(thread_id);
                if let Some(context) = context {
                    entry.codex_thread_context = context;
                }
            })
            .await
    }

    /// The error a turn that did not complete ends the run with.
    fn failure(&self, status: &TurnStatus) -> RuntimeError {
        let run = self.start.run;
        match status {
            // Whatever asked the turn to stop, a hung app-server is what ended it.
            TurnStatus::Unresponsive { detail } => RuntimeError::Unavailable(format!(
                "run {run}: the Codex turn was cut short because {detail}"
            )),
            _ if self.start.cancel.is_cancelled() => super::reply::cut_short(self.services, run),
            _ if self.cancel.is_cancelled() => RuntimeError::ResourceExhausted(format!(
                "the run exceeded its time limit of {} s",
                self.services.run_timeout().as_secs()
            )),
            TurnStatus::Interrupted => {
                RuntimeError::Aborted(format!("run {run}: Codex interrupted the turn"))
            }
            TurnStatus::ProcessExited { detail } => RuntimeError::Unavailable(format!(
                "the Codex app-server exited mid-turn (the turn is marked interrupted; \
                 the next turn restarts it and resumes the thread): {detail}"
            )),
            TurnStatus::Failed {
                message,
                kind,
                http_status,
            } => turn_failure(message, kind, *http_status),
            TurnStatus::Completed => RuntimeError::Internal("a completed turn failed".to_owned()),
        }
    }
}

/// Steer messages of one turn: those handed to the runner, in order, and
/// those it refused (the turn had ended).
#[derive(Default)]
struct Steering {
    thread: Option<String>,
    sent: Vec<Inbound>,
    refused: Vec<Inbound>,
}

impl Steering {
    /// What the turn took, and what goes back to the queue: the last
    /// `undelivered` sent messages (the harness reports a suffix of what it
    /// was given), then the refused.
    fn split(self, undelivered: usize) -> (Vec<Inbound>, Vec<Inbound>) {
        let Self {
            mut sent, refused, ..
        } = self;
        let keep = sent.len().saturating_sub(undelivered);
        let mut back = sent.split_off(keep);
        back.extend(refused);
        (sent, back)
    }
}

/// Whether `entry` already binds session `session_id` to `thread_id`
/// holding `context` (`None`: whatever it holds).
fn stored_already(
    entry: &SessionEntry,
    session_id: &str,
    thread_id: &str,
    context: Option<&BTreeMap<String, String>>,
) -> bool {
    entry.session_id.to_string() == session_id
        && entry.codex_thread_id.as_deref() == Some(thread_id)
        && context.is_none_or(|context| *context == entry.codex_thread_context)
}

/// Turn boundary: fsync, usage into the index; then the run's result.
async fn finish(
    turn: &CodexRun<'_>,
    usage: &Usage,
    result: Result<Finished, RuntimeError>,
) -> Result<Finished, RuntimeError> {
    turn.s.live.append(Vec::new(), true).await?;
    turn.services.record_turn(&turn.s.agent, &turn.s.key, usage);
    result
}

fn tokens_of(usage: &Usage) -> Tokens {
    Tokens {
        input: usage.input,
        output: usage.output,
        cache_read: usage.cache_read,
        cache_write: usage.cache_write,
    }
}

/// Whether the startup files Codex's login shell reads (`/etc/profile`, and the profile files
/// of the service's home) are out of the agent's reach: the home is set, absolute, and
/// neither inside the session's working directory nor inside the state directory, which
/// holds every workspace by default. A home that cannot be judged is not trusted.
fn login_shell_trusted(services: &Services, cwd: &std::path::Path) -> bool {
    let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from) else {
        return false;
    };
    if !home.is_absolute() {
        return false;
    }
    let home = std::fs::canonicalize(&home).unwrap_or(home);
    let state = &services.settings().state_dir;
    let state = std::fs::canonicalize(state).unwrap_or_else(|_| state.clone());
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    !(home.starts_with(&cwd) || home.starts_with(&state))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inbound(seq: u64, text: &str) -> Inbound {
        Inbound {
            seq,
            text: text.to_owned(),
            channel: crate::prompt_input::TurnChannel::default(),
            options: crate::sessions::queue::RunOptions::default(),
            folded: Vec::new(),
            origin: Default::default(),
        }
    }

    #[test]
    fn undelivered_steers_go_back_in_arrival_order() {
        let steering = Steering {
            thread: Some("t".to_owned()),
            sent: vec![inbound(2, "a"), inbound(3, "b"), inbound(4, "c")],
            refused: vec![inbound(5, "d")],
        };
        let (taken, back) = steering.split(2);
        let seqs = |m: &[Inbound]| m.iter().map(|m| m.seq).collect::<Vec<_>>();
        assert_eq!(seqs(&taken), [2]);
        assert_eq!(seqs(&back), [3, 4, 5]);
        let (taken, back) = Steering::default().split(3);
        assert!(taken.is_empty() && back.is_empty());
        let everything = Steering {
            thread: None,
            sent: vec![inbound(6, "e")],
            refused: Vec::new(),
        };
        let (taken, back) = everything.split(usize::MAX);
        assert_eq!((seqs(&taken), seqs(&back)), (vec![], vec![6]));
    }

    #[test]
    fn an_index_entry_that_already_holds_the_thread_is_not_stored_again() {
        let id = openclaw_transcript::SessionId::new_v4();
        let mut entry = SessionEntry::new(id, 0);
        let held = BTreeMap::from([("BOOTSTRAP.md".to_owned(), "ab12".to_owned())]);
        let session = id.to_string();
        assert!(
            !stored_already(&entry, &session, "t1", None),
            "no thread yet"
        );
        entry.codex_thread_id = Some("t1".to_owned());
        entry.codex_thread_context = held.clone();
        assert!(stored_already(&entry, &session, "t1", None));
        assert!(stored_already(&entry, &session, "t1", Some(&held)));
        assert!(
            !stored_already(&entry, &session, "t2", None),
            "another thread"
        );
        let changed = BTreeMap::from([("BOOTSTRAP.md".to_owned(), "cd34".to_owned())]);
        assert!(!stored_already(&entry, &session, "t1", Some(&changed)));
        assert!(!stored_already(
            &entry,
            &session,
            "t1",
            Some(&BTreeMap::new())
        ));
        let other = openclaw_transcript::SessionId::new_v4().to_string();
        assert!(
            !stored_already(&entry, &other, "t1", None),
            "a reset session"
        );
    }
}

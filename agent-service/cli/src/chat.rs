//! `openclaw chat`: one turn with `-m`, or a conversation read line by line
//! from stdin. Assistant text streams to stdout as it arrives; tool calls,
//! thinking and usage are dimmed notes on stderr.
//!
//! When a run asks for an exec approval, the person at the keyboard decides
//! inline: one line of the conversation's own input (`o`nce, `a`lways,
//! `d`eny, or empty to leave it pending) becomes a ResolveApproval call.
//! The input is any [`AsyncBufRead`], so the same code runs on a terminal
//! and on scripted input in tests.

use std::collections::VecDeque;

use openclaw_proto::agent::v1::{self as pb, disposition::Outcome, run_event::Event};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, Lines};

use crate::{
    approvals::{self, when},
    client::{self, Client, Target},
    error::CliError,
    inspect,
    term::{Term, visible},
};

/// What the interactive mode understands besides plain messages.
const HELP: &str = "\
/new             start a new session for this key (the old transcript is archived)
/context         what the next prompt holds (/context detail: top skills and tools)
/preview         the exact system prompt the next turn would send
/help            this list
/quit            leave (also /exit or end of input)
Anything else goes to the agent-service; it answers /queue, /reasoning and /context list
itself (e.g. /queue followup, /reasoning on) and hands every other message to the model.";

/// How a successful turn ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnOutcome {
    /// The session key the run used.
    pub session_key: String,
    /// The final assistant text.
    pub text: String,
    /// Model calls made.
    pub steps: u32,
    /// Usage summed over the run.
    pub usage: pb::Usage,
    /// Tool calls, by name, in the order they started.
    pub tools: Vec<String>,
}

/// Who answers the approvals a run asks for, and where the answer is read.
#[derive(Debug)]
pub struct Approver<'a, R> {
    /// The person's input (`None`: nobody here answers; print how to decide).
    input: Option<&'a mut Lines<R>>,
    /// Recorded as `decided_by`.
    decided_by: String,
}

impl Approver<'static, tokio::io::Empty> {
    /// Nobody answers here: an approval request prints how to decide with
    /// `openclaw approvals` and the run keeps waiting.
    pub fn hint_only() -> Self {
        Self {
            input: None,
            decided_by: String::new(),
        }
    }
}

impl<'a, R: AsyncBufRead + Unpin> Approver<'a, R> {
    /// Reads each answer as one line of `input`, deciding as `decided_by`.
    pub fn reading(input: &'a mut Lines<R>, decided_by: impl Into<String>) -> Self {
        Self {
            input: Some(input),
            decided_by: decided_by.into(),
        }
    }
}

/// What one line of input says about a pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Leave it pending (an empty line).
    Pending,
    /// A decision.
    Decide(pb::ApprovalDecision),
}

impl Answer {
    /// `o`/`once`, `a`/`always`, `d`/`deny` (any case), or empty; `None`
    /// for anything else.
    pub fn parse(line: &str) -> Option<Self> {
        Some(match line.trim().to_ascii_lowercase().as_str() {
            "" => Self::Pending,
            "o" | "once" => Self::Decide(pb::ApprovalDecision::AllowOnce),
            "a" | "always" => Self::Decide(pb::ApprovalDecision::AllowAlways),
            "d" | "deny" => Self::Decide(pb::ApprovalDecision::Deny),
            _ => return None,
        })
    }
}

/// The question asked for an approval.
const APPROVAL_QUESTION: &str = "[o]nce, [a]lways, [d]eny, Enter leaves it pending: ";

/// Sends one message and renders the run as it streams; an approval the run
/// asks for is only announced, with how to decide from another terminal. A
/// run that ends with an error event is returned as [`CliError::Run`].
pub async fn run_turn(
    client: &mut Client,
    target: &Target,
    message: &str,
    verbose: bool,
    term: &mut Term<'_>,
) -> Result<TurnOutcome, CliError> {
    run_turn_with(
        client,
        target,
        message,
        verbose,
        &mut Approver::hint_only(),
        term,
    )
    .await
}

/// [`run_turn`], with approvals decided by `approver`: each request is shown
/// (command, reason, id, expiry) and one line of its input decides it while
/// the run keeps streaming; an approval that ends elsewhere (another client,
/// the timeout) stops the question.
pub async fn run_turn_with<R: AsyncBufRead + Unpin>(
    client: &mut Client,
    target: &Target,
    message: &str,
    verbose: bool,
    approver: &mut Approver<'_, R>,
    term: &mut Term<'_>,
) -> Result<TurnOutcome, CliError> {
    let request = client
        .for_session(target, |session| pb::RunRequest {
            session,
            message: message.to_owned(),
            ..Default::default()
        })
        .await?;
    let mut call = client.clone();
    let mut stream = client.open(call.run(request)).await?;
    let idle = client.idle_timeout();
    let mut outcome = TurnOutcome::default();
    let mut streamed_text = false;
    let mut thinking = false;
    // Arrival number of this message in the session (from `accepted`).
    let mut our_seq = 0;
    // A long final answer's beginning (`final_part` events before `final`).
    let mut final_head = String::new();
    // Approvals asked for and not yet answered here, oldest first; the first is
    // the one the input answers.
    let mut asking: VecDeque<pb::Approval> = VecDeque::new();
    loop {
        let next = match (asking.front(), approver.input.as_deref_mut()) {
            (Some(front), Some(input)) => {
                let front = front.clone();
                // Both futures are cancel safe: a line or a message that loses
                // the race stays buffered for the next round.
                tokio::select! {
                    line = input.next_line() => {
                        let line = line?;
                        if answer_line(client, target, &front, line, &approver.decided_by, term).await? {
                            asking.pop_front();
                            if let Some(next) = asking.front() {
                                ask(next, term)?;
                            }
                        }
                        continue;
                    }
                    message = client::next_within(idle, &mut stream) => message?,
                }
            }
            _ => client::next_within(idle, &mut stream).await?,
        };
        let Some(event) = next else { break };
        let Some(event) = event.event else { continue };
        if thinking && !matches!(event, Event::ThinkingDelta(_)) {
            term.end_err_line()?;
            thinking = false;
        }
        match event {
            Event::Started(started) => {
                outcome.session_key.clone_from(&started.session_key);
                if verbose {
                    term.note(&format!(
                        "· {} · session {} · {}",
                        started.session_key, started.session_id, started.model
                    ))?;
                }
            }
            Event::TextDelta(delta) => {
                streamed_text = true;
                term.text(&delta)?;
            }
            Event::ThinkingDelta(delta) => {
                if !thinking {
                    term.note_fragment("· thinking: ")?;
                    thinking = true;
                }
                term.note_fragment(&delta)?;
            }
            Event::ModelCall(call) => {
                if verbose {
                    term.note(&model_call_note(&call))?;
                }
            }
            Event::ToolStarted(tool) => {
                let summary = if tool.summary.is_empty() {
                    tool.name.clone()
                } else {
                    tool.summary.clone()
                };
                // A summary quotes the model's arguments (a command): shown escaped.
                term.note(&format!("· {}", visible(&summary)))?;
                outcome.tools.push(tool.name);
            }
            Event::ToolFinished(tool) => term.note(&tool_finished_note(&tool))?,
            Event::Accepted(accepted) => {
                our_seq = accepted.seq;
                match accepted.outcome() {
                    Outcome::Rejected => return Err(rejected_error(&accepted.reason)),
                    // A `/queue` command: the reply is the answer; no run follows.
                    Outcome::Command => {
                        term.line(&accepted.reason)?;
                        return Ok(TurnOutcome {
                            session_key: accepted.session_key,
                            text: accepted.reason,
                            ..TurnOutcome::default()
                        });
                    }
                    Outcome::Started
                    | Outcome::Unspecified
                    | Outcome::Steered
                    | Outcome::Followup
                    | Outcome::Collected
                    | Outcome::Interrupted => {
                        if let Some(note) = disposition_note(&accepted, verbose) {
                            term.note(&note)?;
                        }
                    }
                }
            }
            Event::ApprovalRequested(approval) => {
                term.note(&requested_note(&approval))?;
                if approver.input.is_some() {
                    if asking.is_empty() {
                        ask(&approval, term)?;
                    }
                    asking.push_back(approval);
                } else {
                    term.note(&how_to_decide(&approval.id))?;
                }
            }
            Event::ApprovalResolved(approval) => {
                let asked_first = asking.front().is_some_and(|a| a.id == approval.id);
                asking.retain(|a| a.id != approval.id);
                term.note(&resolved_note(&approval))?;
                if asked_first && let Some(next) = asking.front() {
                    ask(next, term)?;
                }
            }
            // Only a WatchSession carries these; a Run stream never does.
            Event::SystemEvent(_) => {}
            Event::Handoff(handoff) => term.note(&format!(
                "· {} steered message(s) continue in run {}",
                handoff.messages, handoff.next_run
            ))?,
            Event::MessageRejected(rejected) if rejected.seq == our_seq => {
                term.end_out_line()?;
                return Err(rejected_error(&rejected.reason));
            }
            Event::MessageRejected(rejected) => {
                term.note(&format!(
                    "· a queued message was dropped: {}",
                    rejected.reason
                ))?;
            }
            Event::Lagged(missed) => {
                term.note(&format!(
                    "· this stream fell behind and missed {missed} events"
                ))?;
            }
            Event::Compaction(compaction) => {
                if let Some(note) = compaction_note(&compaction) {
                    term.note(&note)?;
                }
            }
            // Blocks carry the same text as the deltas, cut for chat channels;
            // a terminal shows the deltas.
            Event::Block(_) | Event::Usage(_) | Event::TurnEnd(_) => {}
            Event::FinalPart(part) => final_head.push_str(&part.text),
            Event::Final(mut last) => {
                final_head.push_str(&last.text);
                last.text = final_head;
                if !streamed_text {
                    term.text(&last.text)?;
                }
                term.end_out_line()?;
                let usage = last.usage.unwrap_or_default();
                term.note(&usage_note(last.steps, &usage))?;
                outcome.text = last.text;
                outcome.steps = last.steps;
                outcome.usage = usage;
                return Ok(outcome);
            }
            Event::Error(error) => {
                term.end_out_line()?;
                return Err(CliError::Run {
                    code: error.code,
                    message: error.message,
                });
            }
        }
    }
    term.end_out_line()?;
    Err(CliError::Run {
        code: "UNAVAILABLE".to_owned(),
        message: "the run stream ended before the run finished".to_owned(),
    })
}

/// Answers `approval` with one line of input (`None`: the input ended).
/// True when nothing more is to be asked about it: decided here, left
/// pending, refused by the server, or no more input; false to ask again.
async fn answer_line(
    client: &mut Client,
    target: &Target,
    approval: &pb::Approval,
    line: Option<String>,
    decided_by: &str,
    term: &mut Term<'_>,
) -> Result<bool, CliError> {
    let Some(line) = line else {
        term.note(&format!("· end of input; {}", how_to_decide(&approval.id)))?;
        return Ok(true);
    };
    let decision = match Answer::parse(&line) {
        None => {
            term.note(&format!("· {:?} is not an answer", line.trim()))?;
            ask(approval, term)?;
            return Ok(false);
        }
        Some(Answer::Pending) => {
            term.note(&format!("· left pending; {}", how_to_decide(&approval.id)))?;
            return Ok(true);
        }
        Some(Answer::Decide(decision)) => decision,
    };
    // The approval's own agent and session route the call.
    let route = Target {
        agent: approval.agent_id.clone(),
        session: if approval.session_key.is_empty() {
            target.session.clone()
        } else {
            approval.session_key.clone()
        },
    };
    if let Err(error) = approvals::resolve(client, &route, &approval.id, decision, decided_by).await
    {
        match error {
            CliError::Io(error) => return Err(CliError::Io(error)),
            error => term.message(&format!("error: approval {}: {error}", approval.id))?,
        }
    }
    Ok(true)
}

/// Asks the person about `approval` (the answer's Enter ends the line).
fn ask(approval: &pb::Approval, term: &mut Term<'_>) -> Result<(), CliError> {
    term.prompt(&format!(
        "  allow {}? {APPROVAL_QUESTION}",
        visible(&approval.id)
    ))?;
    Ok(())
}

/// An approval request: the command, why, its id and when it expires.
fn requested_note(approval: &pb::Approval) -> String {
    format!(
        "· approval {} needed to run: {}\n  why: {}\n  expires: {}",
        visible(&approval.id),
        visible(&approval.command),
        visible(&approval.reason),
        when(approval.expires_at.as_ref())
    )
}

/// How to decide from another terminal.
fn how_to_decide(id: &str) -> String {
    format!(
        "decide with `openclaw approvals approve {id} [--always]` or `openclaw approvals deny {id}`"
    )
}

/// How an approval ended, and who decided.
fn resolved_note(approval: &pb::Approval) -> String {
    let mut note = format!(
        "· approval {}: {}",
        visible(&approval.id),
        approval_state_word(approval.state())
    );
    if !approval.decided_by.is_empty() {
        note.push_str(&format!(" by {}", visible(&approval.decided_by)));
    }
    note
}

/// How an approval ended, in words.
pub(crate) fn approval_state_word(state: pb::ApprovalState) -> &'static str {
    match state {
        pb::ApprovalState::Unspecified => "unknown",
        pb::ApprovalState::Pending => "pending",
        pb::ApprovalState::AllowedOnce => "allowed once",
        pb::ApprovalState::AllowedAlways => "allowed always",
        pb::ApprovalState::Denied => "denied",
        pb::ApprovalState::Expired => "expired (askFallback decided)",
        pb::ApprovalState::Cancelled => "cancelled",
    }
}

/// A conversation: every line of `input` is a message or a `/command`,
/// until `/quit` or the end of input. Errors are printed and the
/// conversation goes on; only a broken terminal ends it early.
///
/// An approval a run asks for is answered by the next line of `input`,
/// decided as `decided_by`.
pub async fn interactive<R: AsyncBufRead + Unpin>(
    client: &mut Client,
    target: &Target,
    input: R,
    show_prompt: bool,
    verbose: bool,
    decided_by: &str,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let session = if target.session.is_empty() {
        "the main session"
    } else {
        target.session.as_str()
    };
    term.note(&format!(
        "· chatting in {session}; /help lists commands, /quit leaves"
    ))?;
    let mut lines = input.lines();
    loop {
        if show_prompt {
            term.prompt("> ")?;
        }
        let Some(line) = lines.next_line().await? else {
            term.end_out_line()?;
            break;
        };
        let line = line.trim();
        let result = match line {
            "" => continue,
            "/quit" | "/exit" => break,
            "/help" => term.line(HELP).map_err(CliError::from),
            "/new" | "/reset" => new_session(client, target, term).await,
            "/context" => inspect::context(client, target, false, term).await,
            "/context detail" => inspect::context(client, target, true, term).await,
            "/preview" => {
                inspect::preview(client, target, prompt_server::PreviewFormat::Text, term).await
            }
            message => {
                let mut approver = Approver::reading(&mut lines, decided_by);
                run_turn_with(client, target, message, verbose, &mut approver, term)
                    .await
                    .map(drop)
            }
        };
        match result {
            Ok(()) => {}
            Err(CliError::Io(error)) => return Err(CliError::Io(error)),
            Err(error) => term.message(&format!("error: {error}"))?,
        }
    }
    Ok(())
}

/// `/new`: archives the transcript and gives the key a new session id.
async fn new_session(
    client: &mut Client,
    target: &Target,
    term: &mut Term<'_>,
) -> Result<(), CliError> {
    let session = crate::sessions::new_session_id(client, target).await?;
    term.note(&format!(
        "· new session {} for {}",
        session.session_id, session.session_key
    ))?;
    Ok(())
}

/// What became of the message, when it is worth a note: it did not simply
/// start a run of its own.
fn disposition_note(accepted: &pb::Disposition, verbose: bool) -> Option<String> {
    match accepted.outcome() {
        Outcome::Started | Outcome::Unspecified => {
            verbose.then(|| format!("· run {}", accepted.run))
        }
        Outcome::Steered => Some(format!("· steered into the running run {}", accepted.run)),
        Outcome::Followup => Some(format!(
            "· queued as run {} ({} run(s) ahead)",
            accepted.run, accepted.ahead
        )),
        Outcome::Collected => Some(format!("· collected into run {}", accepted.run)),
        Outcome::Interrupted => Some(format!(
            "· interrupted run {}; run {} takes this message",
            accepted.interrupted_run, accepted.run
        )),
        // These end the turn before any note (see `run_turn`).
        Outcome::Rejected | Outcome::Command => None,
    }
}

/// A message the session refused or dropped ends the turn as a failed run.
fn rejected_error(reason: &str) -> CliError {
    CliError::Run {
        code: "REJECTED".to_owned(),
        message: format!("message rejected: {reason}"),
    }
}

/// One stderr line per compaction phase that ends something.
fn compaction_note(c: &pb::Compaction) -> Option<String> {
    use pb::CompactionPhase as Phase;
    let detail = if c.detail.is_empty() {
        String::new()
    } else {
        format!(" ({})", c.detail)
    };
    match Phase::try_from(c.phase).ok()? {
        Phase::Unspecified => None,
        Phase::Started => Some(format!(
            "· compacting: about {} tokens, threshold {} of a {}-token window ({})",
            c.tokens_before, c.threshold, c.context_window, c.trigger
        )),
        Phase::MemoryFlushed => Some(format!("· memory flush{detail}")),
        Phase::Finished => Some(format!(
            "· compacted: {} older messages summarised, {} kept; about {} tokens now{detail}",
            c.summarized_messages, c.kept_messages, c.tokens_after
        )),
        Phase::Skipped => Some(format!("· compaction skipped{detail}")),
        Phase::Failed => Some(format!("· compaction failed{detail}")),
    }
}

fn tool_finished_note(tool: &pb::ToolFinished) -> String {
    if tool.is_error {
        let first = tool.output.lines().next().unwrap_or_default();
        format!(
            "· {} ✗ ({} ms): {}",
            visible(&tool.name),
            tool.duration_ms,
            visible(first)
        )
    } else {
        format!("· {} ✓ ({} ms)", visible(&tool.name), tool.duration_ms)
    }
}

fn usage_note(steps: u32, usage: &pb::Usage) -> String {
    let calls = if steps == 1 { "call" } else { "calls" };
    let mut note = format!(
        "· {steps} model {calls} · tokens: {} in, {} out",
        usage.input, usage.output
    );
    if usage.cache_read > 0 || usage.cache_write > 0 {
        note.push_str(&format!(
            ", cache {} read / {} written",
            usage.cache_read, usage.cache_write
        ));
    }
    note
}

fn model_call_note(call: &pb::ModelCall) -> String {
    let prefix: String = call.stable_prefix_sha256.chars().take(12).collect();
    let mut note = format!(
        "· model call {} · {} · prompt {} chars · {} messages · stable prefix {prefix}",
        call.step, call.model, call.prompt_chars, call.messages
    );
    if call.prefix_changed {
        note.push_str(&format!(
            " (changed: {})",
            if call.changed_sections.is_empty() {
                "?".to_owned()
            } else {
                call.changed_sections.join(", ")
            }
        ));
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_notes_are_short() {
        let ok = pb::ToolFinished {
            name: "read".into(),
            duration_ms: 12,
            output: "lots\nof text".into(),
            ..Default::default()
        };
        assert_eq!(tool_finished_note(&ok), "· read ✓ (12 ms)");
        let failed = pb::ToolFinished {
            is_error: true,
            ..ok
        };
        assert_eq!(tool_finished_note(&failed), "· read ✗ (12 ms): lots");
    }

    #[test]
    fn compaction_notes_say_what_happened() {
        let finished = pb::Compaction {
            phase: pb::CompactionPhase::Finished as i32,
            trigger: "threshold".into(),
            tokens_before: 31_000,
            tokens_after: 9_000,
            summarized_messages: 4,
            kept_messages: 1,
            ..Default::default()
        };
        assert_eq!(
            compaction_note(&finished).as_deref(),
            Some("· compacted: 4 older messages summarised, 1 kept; about 9000 tokens now")
        );
        let failed = pb::Compaction {
            phase: pb::CompactionPhase::Failed as i32,
            detail: "timed out".into(),
            ..Default::default()
        };
        assert_eq!(
            compaction_note(&failed).as_deref(),
            Some("· compaction failed (timed out)")
        );
        assert_eq!(compaction_note(&pb::Compaction::default()), None);
    }

    #[test]
    fn usage_mentions_the_cache_only_when_used() {
        let usage = pb::Usage {
            input: 10,
            output: 2,
            ..Default::default()
        };
        assert_eq!(
            usage_note(1, &usage),
            "· 1 model call · tokens: 10 in, 2 out"
        );
        let cached = pb::Usage {
            cache_read: 8,
            ..usage
        };
        assert_eq!(
            usage_note(2, &cached),
            "· 2 model calls · tokens: 10 in, 2 out, cache 8 read / 0 written"
        );
    }
}

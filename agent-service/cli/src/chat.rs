//! `openclaw chat`: one turn with `-m`, or a conversation read line by line
//! from stdin. Assistant text streams to stdout as it arrives; tool calls,
//! thinking and usage are dimmed notes on stderr.

use openclaw_proto::agent::v1::{self as pb, disposition::Outcome, run_event::Event};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::{
    client::{Client, Target},
    error::CliError,
    inspect,
    term::Term,
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

/// Sends one message and renders the run as it streams. A run that ends with
/// an error event is returned as [`CliError::Run`].
pub async fn run_turn(
    client: &mut Client,
    target: &Target,
    message: &str,
    verbose: bool,
    term: &mut Term<'_>,
) -> Result<TurnOutcome, CliError> {
    let request = pb::RunRequest {
        session: Some(target.session_ref()),
        message: message.to_owned(),
        ..Default::default()
    };
    let mut stream = client.run(request).await?.into_inner();
    let mut outcome = TurnOutcome::default();
    let mut streamed_text = false;
    let mut thinking = false;
    // Arrival number of this message in the session (from `accepted`).
    let mut our_seq = 0;
    // A long final answer's beginning (`final_part` events before `final`).
    let mut final_head = String::new();
    while let Some(event) = stream.message().await? {
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
                term.note(&format!("· {summary}"))?;
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
            Event::ApprovalRequested(approval) => term.note(&format!(
                "· approval {} needed to run: {} ({}); decide with `openclaw approvals approve {} [--always]` or `openclaw approvals deny {}`",
                approval.id, approval.command, approval.reason, approval.id, approval.id
            ))?,
            Event::ApprovalResolved(approval) => term.note(&format!(
                "· approval {}: {}",
                approval.id,
                approval_state_word(approval.state())
            ))?,
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
pub async fn interactive<R: AsyncBufRead + Unpin>(
    client: &mut Client,
    target: &Target,
    input: R,
    show_prompt: bool,
    verbose: bool,
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
            message => run_turn(client, target, message, verbose, term)
                .await
                .map(drop),
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
    let session = client
        .reset_session(pb::ResetSessionRequest {
            session: Some(target.session_ref()),
        })
        .await?
        .into_inner();
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
        format!("· {} ✗ ({} ms): {first}", tool.name, tool.duration_ms)
    } else {
        format!("· {} ✓ ({} ms)", tool.name, tool.duration_ms)
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

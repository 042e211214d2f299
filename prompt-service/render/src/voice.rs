//! Config-derived prompt wording: the Voice (TTS) hint and the default
//! heartbeat prompt. The config resolver picks the values; the words live
//! here with the rest of the prompt text.

/// When replies are spoken (`messages.tts.auto`, minus `off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtsMode {
    /// Every reply.
    Always,
    /// Replies to voice messages.
    Inbound,
    /// Replies tagged for speech.
    Tagged,
}

/// The heartbeat prompt used when `heartbeat.prompt` is not configured.
pub const DEFAULT_HEARTBEAT_PROMPT: &str = "Heartbeat check: read HEARTBEAT.md if it exists and work through its checklist. If nothing needs attention, reply HEARTBEAT_OK.";

/// The Voice (TTS) section body for a TTS configuration.
pub fn tts_hint(mode: TtsMode, max_chars: Option<u64>, summarize: bool) -> String {
    let mut lines = vec![
        match mode {
            TtsMode::Always => "Your replies are also delivered as spoken audio.",
            TtsMode::Inbound => {
                "When the user sends a voice message, your reply is also delivered as spoken audio."
            }
            TtsMode::Tagged => {
                "Replies are spoken aloud only when you mark them with a [[tts]] directive."
            }
        }
        .to_owned(),
    ];
    lines.push(
        "Write spoken replies as natural sentences: no tables, code blocks or long lists."
            .to_owned(),
    );
    if let Some(max) = max_chars {
        let over = if summarize {
            "longer replies are summarised before speaking"
        } else {
            "longer replies are cut"
        };
        lines.push(format!("Speech covers at most {max} characters; {over}."));
    }
    lines.push("Use [[tts:off]] to keep a particular reply text-only.".to_owned());
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_mentions_mode_limit_and_directive() {
        let hint = tts_hint(TtsMode::Inbound, Some(1500), true);
        assert!(hint.contains("voice message"));
        assert!(hint.contains("at most 1500 characters; longer replies are summarised"));
        assert!(hint.contains("[[tts:off]]"));
        assert!(!tts_hint(TtsMode::Always, None, false).contains("at most"));
    }
}

//! The GPT-5 overlay, a provider contribution (P-5): a behaviour
//! contract above the cache boundary plus an optional friendlier
//! `interaction_style`. The OpenAI and Codex provider plugins apply it to
//! every `gpt-5*` model they route.
//!
//! With the friendly personality the contract opens with a persona part and
//! the interaction style is added. The overlay's heartbeat guidance is not
//! part of the contribution: the renderer adds it as its own section when
//! the request asks (`gpt5_heartbeat_guidance`), so that a minimal prompt
//! never carries it unasked.

use crate::input::Contribution;

/// Overlay personality (`agents.defaults.promptOverlays.gpt5.personality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Personality {
    /// Behaviour contract plus the friendly interaction style ("friendly"/"on").
    #[default]
    Friendly,
    /// Behaviour contract only ("off").
    Off,
}

impl Personality {
    /// Parses a configured value; `None` for anything unrecognised, which
    /// callers treat as "not set".
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "friendly" | "on" => Some(Self::Friendly),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

/// Provider ids whose plugins carry the overlay.
const PROVIDERS: &[&str] = &[
    "openai",
    "openai-codex",
    "codex",
    "codex-cli",
    "azure-openai",
    "azure-openai-responses",
];

/// True when `model_id` names a GPT-5 family model: `gpt-5` as a whole
/// segment at the start or after `/` or `:`, followed by `.`, `-` or the end
/// (case-insensitive). `gpt-5.5` and `openai/gpt-5-mini` match; `gpt-50` does not.
pub fn is_gpt5_model(model_id: &str) -> bool {
    let lower = model_id.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    lower.match_indices("gpt-5").any(|(i, m)| {
        let starts_segment = i == 0 || matches!(bytes[i - 1], b'/' | b':');
        let end = i + m.len();
        let ends_ok = end == bytes.len() || matches!(bytes[end], b'.' | b'-');
        starts_segment && ends_ok
    })
}

/// True when the overlay applies to this provider/model pair. An empty
/// provider id is taken from a `provider/` prefix of the model id.
pub fn applies(provider_id: &str, model_id: &str) -> bool {
    let provider = if provider_id.trim().is_empty() {
        model_id.split_once('/').map_or("", |(p, _)| p)
    } else {
        provider_id
    };
    let provider = provider.trim().to_ascii_lowercase();
    PROVIDERS.contains(&provider.as_str()) && is_gpt5_model(model_id)
}

/// The persona part of the contract (friendly personality only).
const PERSONA: &str = "\
<persona>
Keep one persona for the whole session: the one SOUL.md and IDENTITY.md describe, or a warm, capable teammate when they say nothing. Long tasks and tool output do not change how you sound.
</persona>
";

const BEHAVIOUR_CONTRACT: &str = "\
<execution_policy>
Carry a request through to its resolution. When a step can be done with the tools you have, do it rather than proposing it. Ask a question only when a missing fact blocks progress and no tool can find it.
</execution_policy>
<tool_discipline>
Prefer one well-aimed tool call to several guesses. Read before you edit, and look again after a change that matters. Never invent tool output, file contents or command results.
</tool_discipline>
<output_contract>
Lead with the answer or the outcome. Keep replies short and plain; reach for lists, tables or code blocks only when they make the reply easier to use.
</output_contract>
<completion_contract>
Before calling a task done, confirm the change exists and works. If anything is left undone, say exactly what and why.
</completion_contract>";

const FRIENDLY_STYLE: &str = "\
## Interaction Style
Sound like a capable teammate: warm, direct and unhurried. Match the user's register, skip filler and stock phrases, and let some personality show when it fits the moment. Where SOUL.md sets your tone, it comes first.";

/// The overlay's heartbeat guidance, rendered as its own section when the
/// request sets `gpt5_heartbeat_guidance`.
pub const HEARTBEAT_GUIDANCE: &str = "\
## Heartbeat Initiative
On a heartbeat turn, look for one thing genuinely worth doing or telling the user, such as a follow-up you promised or an item on the heartbeat checklist. When nothing qualifies, acknowledge as the heartbeat instructions say instead of inventing work.";

/// The overlay's contribution for a personality.
pub fn contribution(personality: Personality) -> Contribution {
    match personality {
        Personality::Friendly => Contribution {
            stable_prefix: format!("{PERSONA}{BEHAVIOUR_CONTRACT}"),
            interaction_style: FRIENDLY_STYLE.to_owned(),
            ..Contribution::default()
        },
        Personality::Off => Contribution {
            stable_prefix: BEHAVIOUR_CONTRACT.to_owned(),
            ..Contribution::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_pattern() {
        for yes in [
            "gpt-5",
            "GPT-5",
            "gpt-5.5",
            "gpt-5-mini",
            "openai/gpt-5-mini",
            "azure:gpt-5",
            "x/gpt-5.1-codex",
        ] {
            assert!(is_gpt5_model(yes), "{yes}");
        }
        for no in ["gpt-50", "gpt-4o", "my-gpt-5", "gpt-5x", "gpt5", ""] {
            assert!(!is_gpt5_model(no), "{no}");
        }
    }

    #[test]
    fn providers_gate_the_overlay() {
        assert!(applies("openai", "gpt-5.5"));
        assert!(applies("Codex", "gpt-5"));
        assert!(applies("", "openai/gpt-5-mini"));
        assert!(!applies("anthropic", "gpt-5"));
        assert!(!applies("openai", "gpt-4.1"));
    }

    /// P-5: "off" keeps the behaviour contract without its persona
    /// part and drops the interaction style.
    #[test]
    fn personality_controls_the_persona_and_the_interaction_style() {
        let friendly = contribution(Personality::Friendly);
        let off = contribution(Personality::Off);
        assert_eq!(
            friendly.stable_prefix,
            format!("{PERSONA}{}", off.stable_prefix)
        );
        assert!(off.stable_prefix.starts_with("<execution_policy>"));
        assert!(!friendly.interaction_style.contains("Heartbeat"));
        assert!(
            friendly
                .interaction_style
                .starts_with("## Interaction Style")
        );
        assert!(off.interaction_style.is_empty());
        assert_eq!(Personality::parse("ON"), Some(Personality::Friendly));
        assert_eq!(Personality::parse("off"), Some(Personality::Off));
        assert_eq!(Personality::parse("loud"), None);
    }
}

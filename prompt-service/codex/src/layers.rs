//! The reconstructed model-bound prompt layer stack (P-29): every
//! layer in the order Codex 0.169 puts it in front of the model, which
//! parameter (or which part of Codex) carries it, and its size.
//!
//! Order of a real first turn of Codex 0.169 (recorded: the
//! `codex_turn_layers` test of agent-server compares it with the model
//! request): Codex's model instructions; one developer message holding our
//! thread instructions, Codex's permission (and skills) text and our
//! collaboration-mode text, in that order; a user message with the AGENTS.md
//! files and environment context Codex gathers itself; the turn's user input.
//! The dynamic tools travel as function tools next to Codex's own. On later
//! turns the collaboration-mode text is not sent again until it changes (then
//! as a developer message of its own, right before the user input), and
//! per-turn context pasted earlier sits in the history between the project
//! docs and this turn's input.
//!
//! [`from_params`] builds the stack from the `thread/start` and `turn/start`
//! params themselves, so the RPC's layers, the committed snapshots and a
//! check against a recorded real turn all read the same bytes Codex gets.

use serde_json::Value;

use prompt_render::chars_u32;

/// Whose message a layer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Model instructions (Codex 0.169 sends them as the first developer item).
    System,
    /// A developer message.
    Developer,
    /// A user message.
    User,
    /// Tool specs.
    Tools,
}

impl Role {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::Developer => "developer",
            Self::User => "user",
            Self::Tools => "tools",
        }
    }

    /// Capitalised name for headings.
    pub fn title(self) -> &'static str {
        match self {
            Self::System => "System",
            Self::Developer => "Developer",
            Self::User => "User",
            Self::Tools => "Tools",
        }
    }
}

/// One model-bound layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// Message role.
    pub role: Role,
    /// The parameter that carries it (`thread/start.developerInstructions`),
    /// or `codex:<part>` for text Codex adds itself.
    pub carrier: String,
    /// Short title.
    pub title: String,
    /// The text (for Codex-owned layers: what the caller supplied, else empty).
    pub text: String,
    /// Unicode scalar values of `text`.
    pub chars: u32,
    /// `chars / 4`, rounded up.
    pub approx_tokens: u32,
    /// Codex writes this layer; its text here is a fixture or a placeholder.
    pub codex_owned: bool,
}

impl Layer {
    fn new(role: Role, carrier: &str, title: &str, text: String, codex_owned: bool) -> Self {
        let chars = chars_u32(&text);
        Self {
            role,
            carrier: carrier.to_owned(),
            title: title.to_owned(),
            text,
            chars,
            approx_tokens: chars.div_ceil(4),
            codex_owned,
        }
    }
}

/// Texts of the layers Codex writes itself. PromptService cannot know them;
/// the snapshot tool fills them from the pinned model-prompt fixture and
/// with placeholders. Empty means unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodexOwnedText {
    /// The model's instructions from Codex's model catalog.
    pub model_instructions: String,
    /// Codex's sandbox and approval text.
    pub permissions: String,
    /// AGENTS.md files and the environment context Codex gathers.
    pub project_docs_and_environment: String,
}

/// Carrier of Codex's model instructions.
pub const CARRIER_MODEL: &str = "codex:model-instructions";
/// Carrier of our thread instructions.
pub const CARRIER_THREAD: &str = "thread/start.developerInstructions";
/// Carrier of Codex's permission text.
pub const CARRIER_PERMISSIONS: &str = "codex:permissions-instructions";
/// Carrier of Codex's project docs and environment context.
pub const CARRIER_PROJECT_DOCS: &str = "codex:project-docs-and-environment";
/// Carrier of per-turn context an earlier turn's input pasted, which the
/// thread's history still holds.
pub const CARRIER_HELD: &str = "history:turn/start.input[0].text";
/// Carrier of our turn instructions.
pub const CARRIER_TURN: &str = "turn/start.collaborationMode.settings.developer_instructions";
/// Carrier of the turn input.
pub const CARRIER_INPUT: &str = "turn/start.input[0].text";
/// Carrier of the dynamic tools.
pub const CARRIER_TOOLS: &str = "thread/start.dynamicTools";

/// Our parts of the stack.
#[derive(Debug, Clone, Copy)]
pub struct OwnParts<'a> {
    /// Thread developer instructions, if any.
    pub thread_instructions: Option<&'a str>,
    /// Per-turn context pasted on an earlier turn and still in the thread's
    /// history (empty: none).
    pub held_context: &'a str,
    /// Turn instructions, if any.
    pub turn_instructions: Option<&'a str>,
    /// The turn input text.
    pub input_text: &'a str,
    /// The model-visible dynamic tool specs as JSON text (empty: none).
    pub visible_tools_json: &'a str,
}

/// The whole stack in model order. Layers we do not send this turn are left
/// out; Codex-owned layers are always listed.
pub fn stack(own: &OwnParts<'_>, codex: &CodexOwnedText) -> Vec<Layer> {
    /// Text sent only when there is some.
    fn sent(text: &str) -> Option<&str> {
        (!text.is_empty()).then_some(text)
    }
    // Role, carrier, title, the text (None: not sent this turn), and whether Codex owns it.
    let rows: [(Role, &str, &str, Option<&str>, bool); 8] = [
        (
            Role::System,
            CARRIER_MODEL,
            "Codex Model Instructions",
            Some(&codex.model_instructions),
            true,
        ),
        (
            Role::Developer,
            CARRIER_THREAD,
            "OpenClaw Runtime Instructions",
            own.thread_instructions,
            false,
        ),
        (
            Role::Developer,
            CARRIER_PERMISSIONS,
            "Codex Permission Instructions",
            Some(&codex.permissions),
            true,
        ),
        (
            Role::Developer,
            CARRIER_TURN,
            "OpenClaw Turn Instructions",
            own.turn_instructions,
            false,
        ),
        (
            Role::User,
            CARRIER_PROJECT_DOCS,
            "Codex Project Docs and Environment Context",
            Some(&codex.project_docs_and_environment),
            true,
        ),
        (
            Role::User,
            CARRIER_HELD,
            "Project Context Held by the Thread",
            sent(own.held_context),
            false,
        ),
        (
            Role::User,
            CARRIER_INPUT,
            "Turn Input Text",
            Some(own.input_text),
            false,
        ),
        (
            Role::Tools,
            CARRIER_TOOLS,
            "Dynamic Tool Catalog",
            sent(own.visible_tools_json),
            false,
        ),
    ];
    rows.into_iter()
        .filter_map(|(role, carrier, title, text, codex_owned)| {
            Some(Layer::new(
                role,
                carrier,
                title,
                text?.to_owned(),
                codex_owned,
            ))
        })
        .collect()
}

/// The stack of a turn from the params Codex is sent: our thread
/// instructions from `thread_start.developerInstructions`, the turn's from
/// `turn_start.collaborationMode.settings.developer_instructions`, the input
/// from `turn_start.input[0].text` and the model-visible tools from
/// `thread_start.dynamicTools` (deferred ones left out). `held_context` is
/// the per-turn context an earlier turn's input pasted (empty: none).
pub fn from_params(
    thread_start: &Value,
    turn_start: &Value,
    held_context: &str,
    codex: &CodexOwnedText,
) -> Vec<Layer> {
    let visible = visible_tools(thread_start.get("dynamicTools"));
    let visible_json = if visible.is_empty() {
        String::new()
    } else {
        serde_json::to_string_pretty(&visible).unwrap_or_default()
    };
    stack(
        &OwnParts {
            thread_instructions: text(thread_start, "/developerInstructions"),
            held_context,
            turn_instructions: text(
                turn_start,
                "/collaborationMode/settings/developer_instructions",
            ),
            input_text: text(turn_start, "/input/0/text").unwrap_or_default(),
            visible_tools_json: &visible_json,
        },
        codex,
    )
}

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// The `dynamicTools` entries the model sees: functions without
/// `deferLoading`, and namespaces cut down to such members (dropped when
/// none is left).
fn visible_tools(specs: Option<&Value>) -> Vec<Value> {
    let deferred = |spec: &Value| spec.get("deferLoading").and_then(Value::as_bool) == Some(true);
    let mut out = Vec::new();
    for spec in specs.and_then(Value::as_array).into_iter().flatten() {
        match spec.get("tools").and_then(Value::as_array) {
            Some(members) => {
                let shown: Vec<Value> = members.iter().filter(|m| !deferred(m)).cloned().collect();
                if !shown.is_empty() {
                    let mut namespace = spec.clone();
                    namespace["tools"] = Value::Array(shown);
                    out.push(namespace);
                }
            }
            None if !deferred(spec) => out.push(spec.clone()),
            None => {}
        }
    }
    out
}

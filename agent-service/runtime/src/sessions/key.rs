//! Session keys and the typed session kind derived from them.
//!
//! Keys look like `agent:<agentId>:main`, `agent:<agentId>:<channel>:group:<id>`
//! or `<parent key>:subagent:<child>`. The kind is decided here, once, so
//! no adapter string-matches keys on its own (lesson L3).

use openclaw_transcript::SessionKey;

use crate::error::RuntimeError;

/// The main session's key suffix.
pub const MAIN_KEY: &str = "main";

/// What kind of session a key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionKind {
    /// The agent's private main session (`agent:<id>:main`).
    Main,
    /// A one-to-one chat on a channel.
    Direct,
    /// A group chat.
    Group,
    /// A channel or room.
    Channel,
    /// A subagent child session.
    Subagent,
    /// A cron job's session.
    Cron,
}

impl SessionKind {
    /// True for sessions that may see private files such as MEMORY.md and
    /// the memory tools (lesson L5: fail closed). Only the agent's own main
    /// session is private: a direct chat on a channel may be with anyone.
    pub fn is_private(self) -> bool {
        matches!(self, Self::Main)
    }
}

/// The full key for `key` within `agent_id`: empty means the main session;
/// a key without the `agent:<id>:` prefix gets it.
pub fn normalize(agent_id: &str, key: &str) -> Result<SessionKey, RuntimeError> {
    let key = key.trim();
    let prefix = format!("agent:{agent_id}:");
    let full = if key.is_empty() {
        format!("{prefix}{MAIN_KEY}")
    } else if let Some(rest) = key.strip_prefix("agent:") {
        let (owner, tail) = rest.split_once(':').unwrap_or((rest, ""));
        if !owner.eq_ignore_ascii_case(agent_id) {
            return Err(RuntimeError::invalid(
                "session_key",
                format!("{key:?} belongs to agent {owner:?}, not {agent_id:?}"),
            ));
        }
        if tail.is_empty() {
            return Err(RuntimeError::invalid(
                "session_key",
                format!("{key:?} has nothing after the agent id"),
            ));
        }
        format!("{prefix}{tail}")
    } else {
        format!("{prefix}{key}")
    };
    SessionKey::new(full).map_err(|e| RuntimeError::invalid("session_key", e.to_string()))
}

/// The kind of session a normalised key names.
pub fn kind_of(key: &SessionKey) -> SessionKind {
    let parts: Vec<&str> = key.as_str().split(':').collect();
    // parts[0] = "agent", parts[1] = agent id, then the rest.
    let rest = parts.get(2..).unwrap_or(&[]);
    // A `subagent` part after the agent id makes a subagent session, whatever its parent
    // (`<parent key>:subagent:<child>`; older children were `agent:<id>:subagent:<child>`).
    if rest.contains(&"subagent") {
        return SessionKind::Subagent;
    }
    match rest {
        [MAIN_KEY] => SessionKind::Main,
        ["cron", ..] => SessionKind::Cron,
        [.., "group", _] | ["group", ..] => SessionKind::Group,
        [.., "channel", _] | [.., "room", _] => SessionKind::Channel,
        _ => SessionKind::Direct,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(agent: &str, key: &str) -> String {
        normalize(agent, key)
            .map(|k| k.as_str().to_owned())
            .unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn normalisation() {
        assert_eq!(norm("main", ""), "agent:main:main");
        assert_eq!(
            norm("main", "telegram:direct:42"),
            "agent:main:telegram:direct:42"
        );
        assert_eq!(norm("main", "agent:main:main"), "agent:main:main");
        assert!(norm("main", "agent:work:main").starts_with("ERR session_key:"));
        assert!(norm("main", "agent:main").starts_with("ERR session_key:"));
        assert!(norm("main", "../../etc").starts_with("ERR session_key:"));
    }

    #[test]
    fn kinds() {
        let kind = |k: &str| normalize("main", k).map(|k| kind_of(&k));
        assert_eq!(kind("").ok(), Some(SessionKind::Main));
        assert_eq!(kind("telegram:direct:42").ok(), Some(SessionKind::Direct));
        assert_eq!(kind("discord:group:7").ok(), Some(SessionKind::Group));
        assert_eq!(kind("slack:channel:c1").ok(), Some(SessionKind::Channel));
        assert_eq!(kind("subagent:abc").ok(), Some(SessionKind::Subagent));
        // A child names its parent, of any kind: it is a subagent session all the same.
        for child in [
            "main:subagent:abc",
            "cron:daily:subagent:a",
            "discord:group:7:subagent:b",
        ] {
            assert_eq!(kind(child).ok(), Some(SessionKind::Subagent), "{child}");
        }
        assert_eq!(kind("cron:daily").ok(), Some(SessionKind::Cron));
        assert!(SessionKind::Main.is_private() && !SessionKind::Group.is_private());
        assert!(!SessionKind::Direct.is_private());
    }
}

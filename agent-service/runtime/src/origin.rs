//! Where a message in a session's queue came from: a user (through Run or Send) or the
//! runtime itself. A message the runtime queues is a system event: a heartbeat, a cron job
//! that is due, a background command that ended, a subagent's result (see
//! `run::system`). The origin travels with the message through the queue and the journal
//! and into the run events that report it.

use serde::{Deserialize, Serialize};

/// Where a queued message came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Origin {
    /// A user, through Run or Send (or a command-line chat).
    #[default]
    User,
    /// The agent's heartbeat.
    Heartbeat,
    /// A cron job that is due.
    #[serde(rename_all = "camelCase")]
    Cron {
        /// The job's id.
        job_id: String,
    },
    /// A background command that ended on its own.
    #[serde(rename_all = "camelCase")]
    ExecExit {
        /// The process id the model knows it by (`proc-N`).
        process_id: String,
    },
    /// A subagent's result, pushed to the session that started it.
    #[serde(rename_all = "camelCase")]
    Subagent {
        /// The subagent's session key.
        child_key: String,
    },
}

impl Origin {
    /// True for a user's message.
    pub fn is_user(&self) -> bool {
        matches!(self, Self::User)
    }

    /// Which job, process or subagent sent it ("" for a user or a heartbeat).
    pub fn source(&self) -> &str {
        match self {
            Self::User | Self::Heartbeat => "",
            Self::Cron { job_id } => job_id,
            Self::ExecExit { process_id } => process_id,
            Self::Subagent { child_key } => child_key,
        }
    }

    /// A short name for logs: `user`, `heartbeat`, `cron`, `exec-exit`, `subagent`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Heartbeat => "heartbeat",
            Self::Cron { .. } => "cron",
            Self::ExecExit { .. } => "exec-exit",
            Self::Subagent { .. } => "subagent",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_round_trip_through_the_journal_spelling() {
        for origin in [
            Origin::User,
            Origin::Heartbeat,
            Origin::Cron {
                job_id: "job-1".into(),
            },
            Origin::ExecExit {
                process_id: "proc-2".into(),
            },
            Origin::Subagent {
                child_key: "agent:main:subagent:x".into(),
            },
        ] {
            let text = serde_json::to_string(&origin).unwrap_or_else(|e| panic!("{e}"));
            let back: Origin = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back, origin, "{text}");
        }
        assert_eq!(
            serde_json::to_string(&Origin::ExecExit {
                process_id: "proc-2".into()
            })
            .unwrap_or_default(),
            r#"{"kind":"execExit","processId":"proc-2"}"#
        );
    }
}

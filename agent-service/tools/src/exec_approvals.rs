//! The approvals file, `<state dir>/exec-approvals.json`: allowlist entries per agent, which
//! "allow-always" adds to.
//!
//! ```json
//! {"version": 1, "agents": {"main": {"allowlist": [
//!   {"pattern": "/usr/bin/git", "addedBy": "telegram:42", "addedAtMs": 1765000000000}
//! ]}}}
//! ```
//!
//! Entries under the agent id `*` apply to every agent. A missing file is an empty one. A file
//! that cannot be read as this version (corrupt, or written by a newer release) is moved aside
//! to `exec-approvals.json.corrupt-<ms>` and the store starts empty; [`Opened::set_aside`]
//! says so for the caller to log. Every change is written durably (temp file, fsync, rename,
//! fsync of the directory): a crash leaves the old file or the new one, never a torn one.
//!
//! One store is shared by the whole runtime: it holds the document behind a mutex and writes
//! under it, so concurrent `add`s and `remove`s from several threads all land.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::error::ToolError;

/// The file name in the state directory.
pub const FILE_NAME: &str = "exec-approvals.json";
/// The version this release reads and writes.
pub const VERSION: u32 = 1;
/// The agent id whose entries apply to every agent.
pub const ALL_AGENTS: &str = "*";

/// One allowlist entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowlistEntry {
    /// A glob over resolved executable paths (`/usr/bin/git`).
    pub pattern: String,
    /// Who added it (a sender, or "config").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_by: Option<String>,
    /// When, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_at_ms: Option<i64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AgentApprovals {
    #[serde(default)]
    allowlist: Vec<AllowlistEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Document {
    version: u32,
    #[serde(default)]
    agents: BTreeMap<String, AgentApprovals>,
}

impl Default for Document {
    fn default() -> Self {
        Self {
            version: VERSION,
            agents: BTreeMap::new(),
        }
    }
}

/// The approvals file of one state directory.
#[derive(Debug)]
pub struct ExecApprovals {
    path: PathBuf,
    document: Mutex<Document>,
}

/// A store just opened, and what happened to an unreadable file.
#[derive(Debug)]
pub struct Opened {
    /// The store.
    pub store: ExecApprovals,
    /// Where an unreadable file was moved, and why it was unreadable.
    pub set_aside: Option<SetAside>,
}

/// A file that could not be read, moved out of the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// Its new name.
    pub moved_to: PathBuf,
    /// Why it was not read.
    pub reason: String,
}

impl ExecApprovals {
    /// Opens `<state_dir>/exec-approvals.json`; `now_ms` names a file set aside.
    pub fn open(state_dir: &Path, now_ms: i64) -> Result<Opened, ToolError> {
        let path = state_dir.join(FILE_NAME);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(&path, &e)),
        };
        let (document, set_aside) = match bytes.map(|b| parse(&b)) {
            None => (Document::default(), None),
            Some(Ok(document)) => (document, None),
            Some(Err(reason)) => {
                let moved_to = state_dir.join(format!("{FILE_NAME}.corrupt-{now_ms}"));
                std::fs::rename(&path, &moved_to).map_err(|e| io_error(&path, &e))?;
                (Document::default(), Some(SetAside { moved_to, reason }))
            }
        };
        Ok(Opened {
            store: Self {
                path,
                document: Mutex::new(document),
            },
            set_aside,
        })
    }

    /// The file this store writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entries that apply to `agent_id`: its own, then those for every agent (`*`).
    pub fn allowlist(&self, agent_id: &str) -> Vec<AllowlistEntry> {
        let document = self.lock();
        let mut out: Vec<AllowlistEntry> = Vec::new();
        for id in [agent_id, ALL_AGENTS] {
            for entry in document
                .agents
                .get(id)
                .map(|a| a.allowlist.as_slice())
                .unwrap_or(&[])
            {
                if !out.iter().any(|e| e.pattern == entry.pattern) {
                    out.push(entry.clone());
                }
            }
        }
        out
    }

    /// The patterns that apply to `agent_id` (for [`crate::ExecPolicy::with_allowlist`]).
    pub fn patterns(&self, agent_id: &str) -> Vec<String> {
        self.allowlist(agent_id)
            .into_iter()
            .map(|e| e.pattern)
            .collect()
    }

    /// Adds `pattern` for `agent_id` and writes the file; `false` (and no write) when the
    /// agent already has it.
    pub fn add(
        &self,
        agent_id: &str,
        pattern: &str,
        added_by: &str,
        added_at_ms: i64,
    ) -> Result<bool, ToolError> {
        let pattern = pattern.trim();
        if !pattern.starts_with('/') {
            return Err(ToolError::InvalidArguments {
                tool: "exec approvals",
                detail: format!(
                    "pattern {pattern:?}: allowlist entries are absolute path globs \
                     (\"/usr/bin/git\")"
                ),
            });
        }
        let mut document = self.lock();
        let present = document
            .agents
            .get(agent_id)
            .is_some_and(|a| a.allowlist.iter().any(|e| e.pattern == pattern));
        if present {
            return Ok(false);
        }
        let mut next = document.clone();
        next.agents
            .entry(agent_id.to_owned())
            .or_default()
            .allowlist
            .push(AllowlistEntry {
                pattern: pattern.to_owned(),
                added_by: Some(added_by.to_owned()),
                added_at_ms: Some(added_at_ms),
            });
        self.write(&next)?;
        *document = next;
        Ok(true)
    }

    /// Removes `pattern` from `agent_id`'s entries and writes the file; `false` (and no
    /// write) when it was not there.
    pub fn remove(&self, agent_id: &str, pattern: &str) -> Result<bool, ToolError> {
        let mut document = self.lock();
        let mut next = document.clone();
        let Some(agent) = next.agents.get_mut(agent_id) else {
            return Ok(false);
        };
        let before = agent.allowlist.len();
        agent.allowlist.retain(|e| e.pattern != pattern.trim());
        if agent.allowlist.len() == before {
            return Ok(false);
        }
        if agent.allowlist.is_empty() {
            next.agents.remove(agent_id);
        }
        self.write(&next)?;
        *document = next;
        Ok(true)
    }

    fn write(&self, document: &Document) -> Result<(), ToolError> {
        let mut bytes = serde_json::to_vec_pretty(document)
            .map_err(|e| ToolError::Internal(format!("exec approvals: {e}")))?;
        bytes.push(b'\n');
        openclaw_transcript::write_atomic(&self.path, &bytes)
            .map_err(|e| ToolError::Internal(format!("writing exec approvals: {e}")))
    }

    /// The document; a thread that panicked while holding the lock changed nothing on disk
    /// that the document does not hold (it is replaced only after a write), so the data is
    /// still good.
    fn lock(&self) -> MutexGuard<'_, Document> {
        self.document
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn parse(bytes: &[u8]) -> Result<Document, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "version {v}, and this release reads version {VERSION}"
            ));
        }
        None => return Err("no version".to_owned()),
    }
    serde_json::from_value(value).map_err(|e| format!("not an approvals file: {e}"))
}

fn io_error(path: &Path, error: &std::io::Error) -> ToolError {
    ToolError::Internal(format!("exec approvals {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(dir: &Path) -> Opened {
        ExecApprovals::open(dir, 77).unwrap()
    }

    #[test]
    fn a_missing_file_is_empty_and_adds_are_kept_in_order_and_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let opened = open(dir.path());
        assert!(opened.set_aside.is_none());
        let store = opened.store;
        assert!(store.allowlist("main").is_empty());
        assert!(
            !dir.path().join(FILE_NAME).exists(),
            "opening writes nothing"
        );
        assert!(store.add("main", "/usr/bin/git", "telegram:1", 5).unwrap());
        assert!(store.add("main", "/usr/bin/rg", "telegram:1", 6).unwrap());
        assert!(!store.add("main", "/usr/bin/git", "someone", 7).unwrap());
        assert!(
            store
                .add(ALL_AGENTS, "/usr/bin/uname", "config", 8)
                .unwrap()
        );
        assert_eq!(
            store.patterns("main"),
            ["/usr/bin/git", "/usr/bin/rg", "/usr/bin/uname"]
        );
        assert_eq!(store.patterns("other"), ["/usr/bin/uname"]);
        let reopened = open(dir.path()).store;
        assert_eq!(reopened.allowlist("main"), store.allowlist("main"));
        let text = std::fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["version"], 1);
        assert_eq!(
            value["agents"]["main"]["allowlist"][0],
            serde_json::json!({"pattern": "/usr/bin/git", "addedBy": "telegram:1", "addedAtMs": 5})
        );
    }

    #[test]
    fn remove_says_whether_it_removed_and_relative_patterns_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path()).store;
        store.add("main", "/usr/bin/git", "a", 1).unwrap();
        assert!(!store.remove("main", "/usr/bin/rg").unwrap());
        assert!(!store.remove("nobody", "/usr/bin/git").unwrap());
        assert!(store.remove("main", "/usr/bin/git").unwrap());
        assert!(open(dir.path()).store.allowlist("main").is_empty());
        let err = store.add("main", "git", "a", 1).unwrap_err().to_string();
        assert!(err.contains("absolute path globs"), "{err}");
        let err = store
            .add("main", "~/bin/x", "a", 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"~/bin/x\""), "{err}");
    }

    #[test]
    fn a_corrupt_or_newer_file_is_set_aside_and_the_store_starts_empty() {
        for (text, why) in [
            (
                "{\"version\": 1, \"agents\": {\"main\": {\"allowlist\": [",
                "not JSON",
            ),
            ("{\"version\": 2, \"agents\": {}}", "version 2"),
            ("{\"agents\": {}}", "no version"),
            (
                "{\"version\": 1, \"agents\": {\"main\": {\"allowlist\": [{\"pat\": 1}]}}}",
                "not an approvals file",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(FILE_NAME), text).unwrap();
            let opened = open(dir.path());
            let aside = opened.set_aside.expect("set aside");
            assert!(aside.reason.contains(why), "{text}: {}", aside.reason);
            assert_eq!(
                aside.moved_to,
                dir.path().join(format!("{FILE_NAME}.corrupt-77"))
            );
            assert_eq!(std::fs::read_to_string(&aside.moved_to).unwrap(), text);
            assert!(!dir.path().join(FILE_NAME).exists());
            assert!(opened.store.allowlist("main").is_empty());
        }
    }

    #[test]
    fn a_rewrite_replaces_the_file_whole_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path()).store;
        store.add("main", "/usr/bin/git", "a", 1).unwrap();
        let path = dir.path().join(FILE_NAME);
        // A reader holding the old file keeps the old bytes: the file is replaced by rename,
        // never truncated in place.
        let before = std::fs::File::open(&path).unwrap();
        let old_len = before.metadata().unwrap().len();
        store.add("main", "/usr/bin/rg", "a", 2).unwrap();
        assert_eq!(before.metadata().unwrap().len(), old_len);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [FILE_NAME]);
        // A write that cannot happen (the directory is gone) changes nothing in memory.
        drop(dir);
        assert!(store.add("main", "/usr/bin/jq", "a", 3).is_err());
        assert_eq!(store.patterns("main"), ["/usr/bin/git", "/usr/bin/rg"]);
    }

    #[test]
    fn adds_from_many_threads_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(open(dir.path()).store);
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let store = store.clone();
                std::thread::spawn(move || {
                    for j in 0..5 {
                        store
                            .add("main", &format!("/opt/t{i}/bin{j}"), "t", 0)
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(store.allowlist("main").len(), 40);
        assert_eq!(open(dir.path()).store.allowlist("main").len(), 40);
    }
}

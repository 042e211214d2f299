//! Requirement 1: the layout, and validation before any path is built.

use std::path::Path;

use openclaw_transcript::{
    AgentId, ArchiveKind, Error, SessionId, SessionKey, SessionsDir, quarantine_path,
};

use super::fixture::now;

#[test]
fn layout_matches_the_documented_paths() {
    let id = SessionId::parse("0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f").unwrap();
    let dir = SessionsDir::new("/state", &AgentId::new("main").unwrap());
    assert_eq!(dir.path(), Path::new("/state/agents/main/sessions"));
    assert_eq!(
        dir.transcript(&id),
        Path::new("/state/agents/main/sessions/0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f.jsonl")
    );
    assert_eq!(
        dir.index(),
        Path::new("/state/agents/main/sessions/sessions.json")
    );
    assert_eq!(
        dir.archive(&id, ArchiveKind::Reset, now()),
        Path::new(
            "/state/agents/main/sessions/0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f.jsonl.reset.2026-07-05T12-00-00.000Z"
        )
    );
    assert_eq!(
        dir.archive(&id, ArchiveKind::Deleted, now()),
        Path::new(
            "/state/agents/main/sessions/0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f.jsonl.deleted.2026-07-05T12-00-00.000Z"
        )
    );
    assert_eq!(
        quarantine_path(&dir.transcript(&id)),
        Path::new(
            "/state/agents/main/sessions/0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f.jsonl.quarantine"
        )
    );
}

#[test]
fn agent_ids_and_session_keys_reject_path_tricks() {
    let cases = [
        ("", "must not be empty"),
        ("a/b", "must not contain a path separator"),
        ("a\\b", "must not contain a path separator"),
        ("..", "must not contain `..`"),
        ("a..b", "must not contain `..`"),
        (".", "must not be `.`"),
        ("a\0b", "must not contain control characters"),
        ("a\nb", "must not contain control characters"),
    ];
    for (value, expected) in cases {
        match AgentId::new(value) {
            Err(Error::InvalidName {
                field: "agent id",
                reason,
                ..
            }) => assert_eq!(reason, expected, "{value:?}"),
            other => panic!("agent id {value:?}: {other:?}"),
        }
        match SessionKey::new(value) {
            Err(Error::InvalidName {
                field: "session key",
                reason,
                ..
            }) => assert_eq!(reason, expected, "{value:?}"),
            other => panic!("session key {value:?}: {other:?}"),
        }
    }
    assert!(matches!(
        AgentId::new("a".repeat(129)),
        Err(Error::InvalidName {
            reason: "is too long",
            ..
        })
    ));
    for ok in ["main", "ops_bot-2", "Work.Agent"] {
        assert_eq!(AgentId::new(ok).unwrap().as_str(), ok);
    }
    for ok in [
        "agent:main:main",
        "agent:main:telegram:group:-100123",
        "cron:job-1",
        "hook:x",
    ] {
        assert_eq!(SessionKey::new(ok).unwrap().as_str(), ok);
    }
}

#[test]
fn session_ids_are_v4_and_have_one_spelling() {
    let id = SessionId::new_v4();
    assert_eq!(id.uuid().get_version_num(), 4);
    assert_eq!(SessionId::parse(&id.to_string()).unwrap(), id);
    let canonical = "0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f";
    assert_eq!(SessionId::parse(canonical).unwrap().to_string(), canonical);
    for bad in [
        "0B6F8C2E-5D1A-4C3B-9E7F-1A2B3C4D5E6F",
        "{0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f}",
        "0b6f8c2e5d1a4c3b9e7f1a2b3c4d5e6f",
        "../0b6f8c2e-5d1a-4c3b-9e7f-1a2b3c4d5e6f",
        "main",
    ] {
        assert!(
            matches!(
                SessionId::parse(bad),
                Err(Error::InvalidName {
                    field: "session id",
                    ..
                })
            ),
            "{bad}"
        );
    }
}

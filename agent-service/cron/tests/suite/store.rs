//! The jobs file: round trips, atomic replacement, and damaged files moved aside.

use std::os::unix::fs::PermissionsExt;

use openclaw_cron::{Delivery, JobPatch, JobSpec, JobStore, Schedule, Target, plan};

use super::{ts, zone};

fn spec(prompt: &str) -> JobSpec {
    JobSpec {
        name: String::new(),
        schedule: Schedule::Cron {
            expr: "0 9 * * *".into(),
            tz: Some("Europe/Berlin".into()),
        },
        prompt: prompt.into(),
        target: Target::Isolated,
        lightweight: true,
        delivery: Delivery::Session { session_key: None },
        delete_after_run: None,
        enabled: true,
    }
}

#[test]
fn jobs_survive_a_save_and_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cron/jobs.json");
    let now = ts("2026-12-01T10:00:00Z");
    let utc = zone("UTC");
    let mut store = JobStore::open(&path, now).unwrap().store;
    assert!(store.is_empty());
    let a = store
        .add("main", spec("Morning brief"), &utc, now)
        .unwrap()
        .id
        .clone();
    let b = store
        .add("work", spec("Standup notes"), &utc, now)
        .unwrap()
        .id
        .clone();
    assert_ne!(a, b);
    plan::claim(store.get_mut(&a).unwrap(), ts("2026-12-02T08:00:00Z"), now);
    store.save().unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(
        mode & 0o777,
        0o600,
        "the jobs file holds prompts: owner only"
    );

    let opened = JobStore::open(&path, now).unwrap();
    assert!(opened.moved_aside.is_none());
    let again = opened.store;
    assert_eq!(again.len(), 2);
    assert_eq!(again.get(&a), store.get(&a));
    assert_eq!(again.get(&b), store.get(&b));
    assert!(
        again.get(&a).unwrap().state.running.is_some(),
        "a claim is durable"
    );
    assert_eq!(again.list(Some("work")).len(), 1);
    assert_eq!(again.list(None).len(), 2);
}

#[test]
fn update_and_remove() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let now = ts("2026-12-01T10:00:00Z");
    let utc = zone("UTC");
    let mut store = JobStore::open(&path, now).unwrap().store;
    let id = store
        .add("main", spec("Morning brief"), &utc, now)
        .unwrap()
        .id
        .clone();
    let patched = store
        .update(
            &id,
            JobPatch {
                schedule: Some("every 30m".parse().unwrap()),
                ..JobPatch::default()
            },
            &utc,
            ts("2026-12-01T10:05:00Z"),
        )
        .unwrap()
        .unwrap();
    assert_eq!(patched.state.next_run_at, Some(ts("2026-12-01T10:30:00Z")));
    assert!(
        store
            .update("nope", JobPatch::default(), &utc, now)
            .unwrap()
            .is_none()
    );
    assert!(store.remove(&id).is_some());
    assert!(store.remove(&id).is_none());
    store.save().unwrap();
    assert!(JobStore::open(&path, now).unwrap().store.is_empty());
}

#[test]
fn a_damaged_file_is_moved_aside_and_reported() {
    let now = ts("2026-12-01T10:00:00Z");
    let cases: [(&str, &[u8]); 7] = [
        ("empty", b""),
        ("truncated", b"{\"version\":1,\"jobs\":[{\"id\":\"a\""),
        ("array", b"[]"),
        ("random bytes", b"\x00\xff\x13garbage\x80"),
        ("unknown version", b"{\"version\":7,\"jobs\":[]}"),
        ("unknown key", b"{\"version\":1,\"jobs\":[],\"extra\":1}"),
        ("not a job", b"{\"version\":1,\"jobs\":[{\"id\":\"a\"}]}"),
    ];
    for (what, bytes) in cases {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jobs.json");
        std::fs::write(&path, bytes).unwrap();
        let opened = JobStore::open(&path, now).unwrap();
        let (aside, reason) = opened
            .moved_aside
            .unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(opened.store.is_empty(), "{what}");
        assert!(!path.exists(), "{what}: the damaged file stays in place");
        assert_eq!(std::fs::read(&aside).unwrap(), bytes, "{what}: bytes kept");
        assert!(
            aside
                .to_string_lossy()
                .ends_with(&format!(".corrupt-{}", now.as_millisecond())),
            "{what}: {}",
            aside.display()
        );
        assert!(!reason.is_empty(), "{what}");
        // The next save starts a fresh file beside the one moved aside.
        opened.store.save().unwrap();
        assert!(
            JobStore::open(&path, now).unwrap().moved_aside.is_none(),
            "{what}"
        );
    }
}

#[test]
fn a_job_listed_twice_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let now = ts("2026-12-01T10:00:00Z");
    let mut store = JobStore::open(&path, now).unwrap().store;
    store
        .add("main", spec("Morning brief"), &zone("UTC"), now)
        .unwrap();
    store.save().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let job = doc["jobs"][0].clone();
    doc["jobs"].as_array_mut().unwrap().push(job);
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let opened = JobStore::open(&path, now).unwrap();
    assert!(opened.moved_aside.unwrap().1.contains("appears twice"));
}

#[test]
fn a_leftover_temp_file_from_a_crash_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let now = ts("2026-12-01T10:00:00Z");
    let mut store = JobStore::open(&path, now).unwrap().store;
    let id = store
        .add("main", spec("Morning brief"), &zone("UTC"), now)
        .unwrap()
        .id
        .clone();
    store.save().unwrap();
    // A crash during the next save leaves a half-written temp file beside the real one.
    std::fs::write(dir.path().join("jobs.json.tmp"), b"{\"version\":1,\"jo").unwrap();
    let opened = JobStore::open(&path, now).unwrap();
    assert!(opened.moved_aside.is_none());
    assert!(opened.store.get(&id).is_some());
    opened.store.save().unwrap();
    assert!(JobStore::open(&path, now).unwrap().store.get(&id).is_some());
}

#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be: reading fails with something other than
    // "not found", which is not damage to move aside but an error to report.
    let path = dir.path().join("jobs.json");
    std::fs::create_dir(&path).unwrap();
    let err = JobStore::open(&path, ts("2026-12-01T10:00:00Z")).unwrap_err();
    assert!(err.to_string().contains("jobs.json"), "{err}");
}

/// A version 1 file, which did not record creators, opens with every job at the lesser
/// privilege and is saved as version 2; a job added now is the operator's.
#[test]
fn an_older_file_is_migrated_to_the_lesser_privilege() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let now = ts("2026-12-01T10:00:00Z");
    std::fs::write(
        &path,
        r#"{"version":1,"jobs":[{"id":"old","agentId":"main","name":"n",
            "schedule":{"kind":"every","everyMs":3600000},"prompt":"p","target":"main",
            "createdAt":"2026-11-30T10:00:00Z","updatedAt":"2026-11-30T10:00:00Z",
            "state":{}}]}"#,
    )
    .unwrap();
    let opened = JobStore::open(&path, now).unwrap();
    assert!(opened.moved_aside.is_none(), "{:?}", opened.moved_aside);
    let mut store = opened.store;
    assert_eq!(
        store.get("old").map(|j| j.privilege),
        Some(openclaw_cron::Privilege::Sandboxed)
    );
    let new = store
        .add("main", spec("New"), &zone("UTC"), now)
        .unwrap()
        .id
        .clone();
    store.save().unwrap();
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(saved["version"], 2);
    let privilege_of = |id: &str| {
        saved["jobs"]
            .as_array()
            .and_then(|jobs| jobs.iter().find(|j| j["id"] == id))
            .map(|j| j["privilege"].clone())
    };
    assert_eq!(privilege_of("old"), Some("sandboxed".into()));
    assert_eq!(privilege_of(&new), Some("host".into()));
}

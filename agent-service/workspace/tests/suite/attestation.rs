//! The workspace proof marker and the refusal to seed over a vanished workspace.

use std::fs::{self, File};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use openclaw_workspace::{
    ATTESTATION_HEADER, BootstrapName, Error, SetupOptions, VanishedCondition, attestation_path,
    full_reset, recent_attestation, template,
};
use sha2::{Digest, Sha256};

use super::{Home, hours, listing, now};

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn vanished_condition(error: &Error) -> VanishedCondition {
    match error {
        Error::WorkspaceVanished { condition, .. } => *condition,
        other => panic!("expected WorkspaceVanished, got {other:?}"),
    }
}

#[test]
fn the_marker_lists_every_file_still_equal_to_its_template() {
    let home = Home::new();
    let ensured = home.ensure(SetupOptions::default()).unwrap();

    let key = sha256_hex(home.workspace.as_os_str().as_encoded_bytes());
    assert_eq!(
        ensured.marker,
        home.state_dir
            .join("workspace-attestations")
            .join(format!("{key}.attested"))
    );
    let mut expected = format!("{ATTESTATION_HEADER}\n2026-05-28T20:26:40.000Z\n");
    let mut names: Vec<BootstrapName> = BootstrapName::LOAD_ORDER
        .into_iter()
        .filter(|n| *n != BootstrapName::Memory)
        .collect();
    names.sort_by_key(|n| n.file_name());
    for name in names {
        let hash = sha256_hex(template(name).unwrap().as_bytes());
        expected.push_str(&format!("generated:{}:{hash}\n", name.file_name()));
    }
    let text = fs::read_to_string(&ensured.marker).unwrap();
    assert_eq!(text, expected);
    assert!(text.len() <= 2048);

    let meta = fs::symlink_metadata(&ensured.marker).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.modified().unwrap(), now());
    assert_eq!(listing(ensured.marker.parent().unwrap()).len(), 1);
}

#[test]
fn a_customised_file_drops_off_the_marker_on_refresh() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    home.write("SOUL.md", "# Soul\nDry humour.\n");

    let ensured = home
        .ensure_at(SetupOptions::default(), now() + hours(1))
        .unwrap();

    let proof = recent_attestation(&home.state_dir, &home.workspace, now() + hours(1))
        .unwrap()
        .unwrap();
    assert_eq!(proof.path, ensured.marker);
    assert_eq!(proof.written_at, "2026-05-28T21:26:40.000Z");
    assert!(!proof.generated.contains_key("SOUL.md"));
    assert!(proof.generated.contains_key("AGENTS.md"));
    assert_eq!(proof.generated.len(), 6);
}

#[test]
fn every_spelling_of_a_workspace_shares_one_marker_before_and_after_it_exists() {
    let home = Home::new();
    let link = home.base.join("ws-link");
    symlink(&home.workspace, &link).unwrap();
    let dotted = home.base.join("state/../workspace");

    let before = attestation_path(&home.state_dir, &home.workspace).unwrap();
    assert_eq!(attestation_path(&home.state_dir, &link).unwrap(), before);
    assert_eq!(attestation_path(&home.state_dir, &dotted).unwrap(), before);

    // A workspace configured as a link to a directory that does not exist is not created
    // through the link (the target may be an unmounted disk).
    let error = openclaw_workspace::ensure_workspace(
        &link,
        &home.state_dir,
        SetupOptions::default(),
        now(),
    )
    .unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert!(!home.workspace.exists());

    fs::create_dir(&home.workspace).unwrap();
    let ensured = openclaw_workspace::ensure_workspace(
        &link,
        &home.state_dir,
        SetupOptions::default(),
        now(),
    )
    .unwrap();
    assert_eq!(ensured.root, home.workspace);
    assert_eq!(ensured.marker, before);
    assert_eq!(
        attestation_path(&home.state_dir, &home.workspace).unwrap(),
        before
    );
}

#[test]
fn recency_is_24_hours_from_the_last_refresh() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    let recent = |at| {
        recent_attestation(&home.state_dir, &home.workspace, at)
            .unwrap()
            .is_some()
    };
    assert!(recent(now()));
    assert!(recent(now() + hours(24)));
    assert!(!recent(
        now() + hours(24) + std::time::Duration::from_millis(1)
    ));
    // A marker from the future (clock skew) still counts.
    assert!(recent(now() - hours(5)));
}

#[test]
fn only_a_small_regular_file_with_the_header_counts_as_proof() {
    let home = Home::new();
    let ensured = home.ensure(SetupOptions::default()).unwrap();
    let marker = ensured.marker;
    let proven = || {
        recent_attestation(&home.state_dir, &home.workspace, now())
            .unwrap()
            .is_some()
    };
    let rewrite = |text: &str| {
        fs::write(&marker, text).unwrap();
        File::options()
            .write(true)
            .open(&marker)
            .unwrap()
            .set_modified(now())
            .unwrap();
    };

    rewrite("not-a-marker\n2026-05-28T20:26:40.000Z\n");
    assert!(!proven());

    rewrite(&format!("{ATTESTATION_HEADER}\n{}", "x".repeat(2048)));
    assert!(!proven());

    rewrite(&format!("{ATTESTATION_HEADER}\n2026-05-28T20:26:40.000Z\n"));
    assert!(proven());

    let real = home.base.join("real-marker");
    fs::rename(&marker, &real).unwrap();
    symlink(&real, &marker).unwrap();
    assert!(!proven(), "a symlinked marker is not proof");

    fs::remove_file(&marker).unwrap();
    assert!(!proven());
}

#[test]
fn refreshing_replaces_a_planted_symlink_instead_of_writing_through_it() {
    let home = Home::new();
    let ensured = home.ensure(SetupOptions::default()).unwrap();
    let victim = home.base.join("victim.txt");
    fs::write(&victim, "keep me\n").unwrap();
    fs::remove_file(&ensured.marker).unwrap();
    symlink(&victim, &ensured.marker).unwrap();

    home.ensure(SetupOptions::default()).unwrap();

    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(
        fs::symlink_metadata(&ensured.marker)
            .unwrap()
            .file_type()
            .is_file()
    );
}

#[test]
fn a_vanished_workspace_is_refused_and_nothing_is_recreated() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    fs::remove_dir_all(&home.workspace).unwrap();

    let error = home
        .ensure_at(SetupOptions::default(), now() + hours(3))
        .unwrap_err();

    assert_eq!(vanished_condition(&error), VanishedCondition::Missing);
    assert!(!home.workspace.exists(), "nothing may be seeded");
    let message = error.to_string();
    assert!(message.contains("it no longer exists"), "{message}");
    assert!(message.contains("Restore the workspace"), "{message}");
    assert!(message.contains("full reset"), "{message}");
}

#[test]
fn an_emptied_workspace_is_refused() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    fs::remove_dir_all(&home.workspace).unwrap();
    fs::create_dir(&home.workspace).unwrap();

    let error = home.ensure(SetupOptions::default()).unwrap_err();

    assert_eq!(vanished_condition(&error), VanishedCondition::Empty);
    assert!(listing(&home.workspace).is_empty());
}

#[test]
fn a_workspace_wiped_of_its_files_but_not_its_dot_dirs_is_refused() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    home.write("SOUL.md", "# Soul\ncustomised\n");
    for name in listing(&home.workspace) {
        if name.ends_with(".md") {
            fs::remove_file(home.file(&name)).unwrap();
        }
    }

    let error = home.ensure(SetupOptions::default()).unwrap_err();

    assert_eq!(vanished_condition(&error), VanishedCondition::NoUserContent);
    assert!(!home.file("BOOTSTRAP.md").exists());
}

/// Puts one piece of evidence back into a wiped workspace.
type Keep = fn(&Home);

#[test]
fn any_evidence_of_the_workspace_lets_setup_continue() {
    let cases: [(&str, Keep); 5] = [
        ("a pending BOOTSTRAP.md", |home| {
            home.write("BOOTSTRAP.md", "# first run\n");
        }),
        ("a customised file", |home| {
            home.write("USER.md", "# User\nAda\n")
        }),
        ("an intact generated file", |home| {
            home.write("TOOLS.md", template(BootstrapName::Tools).unwrap());
        }),
        ("MEMORY.md", |home| home.write("MEMORY.md", "likes tea\n")),
        ("memory/", |home| {
            fs::create_dir(home.file("memory")).unwrap()
        }),
    ];
    for (label, keep) in cases {
        let home = Home::new();
        home.ensure(SetupOptions::default()).unwrap();
        fs::remove_file(home.file("BOOTSTRAP.md")).unwrap();
        home.ensure(SetupOptions::default()).unwrap();
        for name in listing(&home.workspace) {
            if name.ends_with(".md") {
                fs::remove_file(home.file(&name)).unwrap();
            }
        }
        keep(&home);

        let ensured = home
            .ensure(SetupOptions::default())
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        if label != "a pending BOOTSTRAP.md" {
            assert!(!home.file("BOOTSTRAP.md").exists(), "{label}");
        }
        assert!(
            !ensured.seeded.contains(&BootstrapName::Bootstrap),
            "{label}"
        );
    }
}

#[test]
fn a_template_file_the_marker_never_recorded_is_not_evidence() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    home.write("SOUL.md", "# Soul\ncustomised\n");
    home.ensure(SetupOptions::default()).unwrap();
    for name in listing(&home.workspace) {
        if name.ends_with(".md") {
            fs::remove_file(home.file(&name)).unwrap();
        }
    }
    // A fresh copy of the template where the user's SOUL.md was.
    home.write("SOUL.md", template(BootstrapName::Soul).unwrap());

    let error = home.ensure(SetupOptions::default()).unwrap_err();
    assert_eq!(vanished_condition(&error), VanishedCondition::NoUserContent);
}

/// a full reset clears the workspace and its proof marker together; the old workspace is
/// moved aside (never deleted) and the next ensure seeds a brand-new one.
#[test]
fn full_reset_clears_marker_and_state_so_the_next_ensure_starts_fresh() {
    let home = Home::new();
    let first = home.ensure(SetupOptions::default()).unwrap();
    fs::remove_file(home.file("BOOTSTRAP.md")).unwrap();
    fs::write(home.file("notes.txt"), "keep me").unwrap();
    home.ensure(SetupOptions::default()).unwrap();

    let changed = full_reset(&home.workspace, &home.state_dir).unwrap();

    let aside = home.workspace.with_file_name("workspace.reset-1");
    assert_eq!(changed, vec![first.marker.clone(), aside.clone()]);
    assert!(!first.marker.exists());
    assert!(!home.workspace.exists(), "the workspace is cleared");
    assert_eq!(
        fs::read_to_string(aside.join("notes.txt")).unwrap(),
        "keep me",
        "the user's files are moved aside, not deleted"
    );
    let ensured = home.ensure(SetupOptions::default()).unwrap();
    assert!(ensured.seeded.contains(&BootstrapName::Bootstrap));
    assert!(home.file("BOOTSTRAP.md").is_file());
    assert!(!home.file("notes.txt").exists());

    // A second reset picks the next free name.
    let again = full_reset(&home.workspace, &home.state_dir).unwrap();
    assert_eq!(
        again.last(),
        Some(&home.workspace.with_file_name("workspace.reset-2"))
    );
}

#[test]
fn full_reset_of_a_vanished_workspace_removes_the_marker() {
    let home = Home::new();
    let first = home.ensure(SetupOptions::default()).unwrap();
    fs::remove_dir_all(&home.workspace).unwrap();

    assert_eq!(
        full_reset(&home.workspace, &home.state_dir).unwrap(),
        vec![first.marker]
    );
    assert!(
        full_reset(&home.workspace, &home.state_dir)
            .unwrap()
            .is_empty()
    );
    let ensured = home.ensure(SetupOptions::default()).unwrap();
    assert!(ensured.created_dir);
    assert!(ensured.seeded.contains(&BootstrapName::Bootstrap));
}

#[test]
fn an_expired_marker_no_longer_blocks_setup() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    fs::remove_dir_all(&home.workspace).unwrap();

    let ensured = home
        .ensure_at(SetupOptions::default(), now() + hours(25))
        .unwrap();
    assert!(ensured.seeded.contains(&BootstrapName::Bootstrap));
}

#[test]
fn skip_bootstrap_is_not_refused_because_it_seeds_nothing() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    fs::remove_dir_all(&home.workspace).unwrap();
    let options = SetupOptions {
        skip_bootstrap: true,
        ..SetupOptions::default()
    };

    let ensured = home.ensure(options).unwrap();

    assert!(ensured.created_dir);
    assert!(listing(&home.workspace).is_empty());
}

#[test]
fn attestation_paths_need_an_absolute_workspace() {
    let error = attestation_path(Path::new("/state"), Path::new("ws")).unwrap_err();
    assert!(matches!(error, Error::RelativeWorkspace { .. }));
}

#[test]
fn a_fifo_under_a_bootstrap_name_neither_blocks_setup_nor_counts_as_a_template() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(home.file("HEARTBEAT.md"))
        .status()
        .unwrap();
    assert!(made.success());

    home.ensure(SetupOptions::default()).unwrap();
    let proof = recent_attestation(&home.state_dir, &home.workspace, now())
        .unwrap()
        .unwrap();
    assert!(!proof.generated.contains_key("HEARTBEAT.md"));

    // After a wipe that spares only the FIFO, it still shows the workspace is the user's.
    for name in listing(&home.workspace) {
        if name.ends_with(".md") && name != "HEARTBEAT.md" {
            fs::remove_file(home.file(&name)).unwrap();
        }
    }
    home.ensure(SetupOptions::default()).unwrap();
}

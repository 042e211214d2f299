//! Setup: seeding templates, BOOTSTRAP.md's lifecycle, setup state, skip switches (R-2, R-5, R-7).

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};

use openclaw_workspace::{
    BootstrapName, DenyReason, Error, STATE_DIR_NAME, STATE_FILE_NAME, SetupOptions,
    WorkspaceState, read_workspace_state, template,
};
use serde_json::json;

use super::{Home, hours, listing, now};

const STAMP: &str = "2026-05-28T20:26:40.000Z";

fn state_json(home: &Home) -> serde_json::Value {
    let path = home.workspace.join(STATE_DIR_NAME).join(STATE_FILE_NAME);
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_new_workspace_gets_every_template_and_bootstrap_md() {
    let home = Home::new();
    let ensured = home.ensure(SetupOptions::default()).unwrap();

    assert_eq!(ensured.root, home.workspace);
    assert!(ensured.created_dir);
    assert_eq!(
        ensured.seeded,
        vec![
            BootstrapName::Agents,
            BootstrapName::Soul,
            BootstrapName::Tools,
            BootstrapName::Identity,
            BootstrapName::User,
            BootstrapName::Heartbeat,
            BootstrapName::Bootstrap,
        ]
    );
    assert_eq!(
        ensured.state,
        Some(WorkspaceState {
            version: 1,
            bootstrap_seeded_at: Some(STAMP.to_owned()),
            setup_completed_at: None,
        })
    );
    // No temporary files left behind anywhere.
    assert_eq!(
        listing(&home.workspace),
        [
            ".openclaw",
            "AGENTS.md",
            "BOOTSTRAP.md",
            "HEARTBEAT.md",
            "IDENTITY.md",
            "SOUL.md",
            "TOOLS.md",
            "USER.md"
        ]
    );
    assert_eq!(
        listing(&home.workspace.join(".openclaw")),
        [STATE_FILE_NAME]
    );
    for name in &ensured.seeded {
        assert_eq!(home.read(name.file_name()), template(*name).unwrap());
    }
    assert_eq!(
        state_json(&home),
        json!({"version": 1, "bootstrapSeededAt": STAMP})
    );
}

#[test]
fn a_second_ensure_changes_nothing() {
    let home = Home::new();
    let first = home.ensure(SetupOptions::default()).unwrap();
    let state_before = fs::read(home.workspace.join(".openclaw/workspace-state.json")).unwrap();

    let second = home
        .ensure_at(SetupOptions::default(), now() + hours(1))
        .unwrap();

    assert!(!second.created_dir);
    assert!(second.seeded.is_empty());
    assert_eq!(second.state, first.state);
    assert_eq!(
        fs::read(home.workspace.join(".openclaw/workspace-state.json")).unwrap(),
        state_before
    );
}

#[test]
fn existing_files_are_never_overwritten_and_missing_ones_come_back() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    home.write("SOUL.md", "# Soul\nA calm lighthouse keeper.\n");
    fs::remove_file(home.file("USER.md")).unwrap();

    let ensured = home.ensure(SetupOptions::default()).unwrap();

    assert_eq!(ensured.seeded, vec![BootstrapName::User]);
    assert_eq!(home.read("SOUL.md"), "# Soul\nA calm lighthouse keeper.\n");
    assert_eq!(home.read("USER.md"), template(BootstrapName::User).unwrap());
}

#[test]
fn a_symlink_under_a_template_name_is_left_alone_even_when_dangling() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    let outside = home.base.join("outside-target.md");
    symlink(&outside, home.file("TOOLS.md")).unwrap();

    let ensured = home.ensure(SetupOptions::default()).unwrap();

    assert!(!ensured.seeded.contains(&BootstrapName::Tools));
    assert!(
        !outside.exists(),
        "the template must not be written through the link"
    );
    assert!(
        fs::symlink_metadata(home.file("TOOLS.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn skip_optional_bootstrap_files_seeds_only_the_required_ones() {
    let home = Home::new();
    let options = SetupOptions {
        skip_optional_bootstrap_files: true,
        ..SetupOptions::default()
    };
    let ensured = home.ensure(options).unwrap();

    assert_eq!(
        ensured.seeded,
        vec![
            BootstrapName::Agents,
            BootstrapName::Tools,
            BootstrapName::Bootstrap
        ]
    );
    assert_eq!(
        listing(&home.workspace),
        [".openclaw", "AGENTS.md", "BOOTSTRAP.md", "TOOLS.md"]
    );
}

#[test]
fn skip_bootstrap_creates_only_the_directory_and_the_marker() {
    let home = Home::new();
    let options = SetupOptions {
        skip_bootstrap: true,
        ..SetupOptions::default()
    };
    let ensured = home.ensure(options).unwrap();

    assert!(ensured.created_dir);
    assert!(ensured.seeded.is_empty());
    assert_eq!(ensured.state, None);
    assert!(listing(&home.workspace).is_empty());
    assert!(ensured.marker.is_file());
    assert!(
        ensured
            .marker
            .starts_with(home.state_dir.join("workspace-attestations"))
    );
}

#[test]
fn deleting_bootstrap_md_completes_setup_and_it_never_comes_back() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    fs::remove_file(home.file("BOOTSTRAP.md")).unwrap();

    let later = now() + hours(2);
    let ensured = home.ensure_at(SetupOptions::default(), later).unwrap();
    assert!(ensured.seeded.is_empty());
    assert_eq!(
        state_json(&home),
        json!({
            "version": 1,
            "bootstrapSeededAt": STAMP,
            "setupCompletedAt": "2026-05-28T22:26:40.000Z",
        })
    );
    assert!(!home.file("BOOTSTRAP.md").exists());

    // Even with every other file gone (and the marker long expired), setup stays complete.
    for name in BootstrapName::SEEDED {
        fs::remove_file(home.file(name.file_name())).unwrap();
    }
    let much_later = later + hours(48);
    let ensured = home.ensure_at(SetupOptions::default(), much_later).unwrap();
    assert!(!ensured.seeded.contains(&BootstrapName::Bootstrap));
    assert!(!home.file("BOOTSTRAP.md").exists());
}

#[test]
fn an_existing_workspace_without_state_is_treated_as_already_set_up() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    home.write("AGENTS.md", "# My own rules\n");

    let ensured = home.ensure(SetupOptions::default()).unwrap();

    assert!(!ensured.seeded.contains(&BootstrapName::Bootstrap));
    assert!(!ensured.seeded.contains(&BootstrapName::Agents));
    assert_eq!(
        ensured.state.unwrap().setup_completed_at.as_deref(),
        Some(STAMP)
    );
    assert_eq!(home.read("AGENTS.md"), "# My own rules\n");
}

#[test]
fn a_memory_directory_alone_means_the_workspace_is_not_new() {
    let home = Home::new();
    fs::create_dir_all(home.workspace.join("memory")).unwrap();

    let ensured = home.ensure(SetupOptions::default()).unwrap();

    assert!(!ensured.seeded.contains(&BootstrapName::Bootstrap));
    assert!(ensured.state.unwrap().setup_completed());
}

#[test]
fn a_bootstrap_md_found_without_state_is_recorded_as_seeded_and_kept() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    home.write("BOOTSTRAP.md", "# my own first-run notes\n");

    let ensured = home.ensure(SetupOptions::default()).unwrap();

    assert!(!ensured.seeded.contains(&BootstrapName::Bootstrap));
    assert_eq!(
        ensured.state.unwrap().bootstrap_seeded_at.as_deref(),
        Some(STAMP)
    );
    assert_eq!(home.read("BOOTSTRAP.md"), "# my own first-run notes\n");
}

#[test]
fn the_legacy_onboarding_key_counts_as_completed() {
    let home = Home::new();
    fs::create_dir_all(home.workspace.join(".openclaw")).unwrap();
    home.write(
        ".openclaw/workspace-state.json",
        r#"{"version":1,"onboardingCompletedAt":"2026-01-01T00:00:00.000Z","extra":true}"#,
    );

    let ensured = home.ensure(SetupOptions::default()).unwrap();

    assert!(!ensured.seeded.contains(&BootstrapName::Bootstrap));
    assert_eq!(
        read_workspace_state(&home.workspace).unwrap(),
        Some(WorkspaceState {
            version: 1,
            bootstrap_seeded_at: None,
            setup_completed_at: Some("2026-01-01T00:00:00.000Z".to_owned()),
        })
    );
}

#[test]
fn the_legacy_state_file_is_read_when_the_current_one_is_absent() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    home.write(
        "openclaw-workspace-state.json",
        r#"{"version":1,"setupCompletedAt":"2026-01-01T00:00:00.000Z"}"#,
    );

    let ensured = home.ensure(SetupOptions::default()).unwrap();

    assert!(!ensured.seeded.contains(&BootstrapName::Bootstrap));
}

#[test]
fn a_corrupt_state_file_is_an_error_naming_it() {
    let home = Home::new();
    fs::create_dir_all(home.workspace.join(".openclaw")).unwrap();
    home.write(".openclaw/workspace-state.json", "{not json");

    let error = home.ensure(SetupOptions::default()).unwrap_err();

    let Error::StateFile { path, .. } = &error else {
        panic!("expected a state file error, got {error:?}");
    };
    assert_eq!(path, &home.workspace.join(".openclaw/workspace-state.json"));
    assert!(
        error
            .to_string()
            .starts_with("cannot read workspace setup state ")
    );
}

#[test]
fn a_planted_state_dir_link_cannot_redirect_the_state_write() {
    let home = Home::new();
    let elsewhere = home.base.join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::create_dir_all(&home.workspace).unwrap();
    symlink(&elsewhere, home.workspace.join(".openclaw")).unwrap();

    let error = home.ensure(SetupOptions::default()).unwrap_err();

    assert!(
        matches!(
            error,
            Error::PathDenied {
                reason: DenyReason::SymlinkEscape,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(listing(&elsewhere).is_empty());
}

#[test]
fn a_relative_workspace_is_refused() {
    let home = Home::new();
    let error = openclaw_workspace::ensure_workspace(
        "workspace".as_ref(),
        &home.state_dir,
        SetupOptions::default(),
        now(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "workspace path workspace must be absolute"
    );
}

#[test]
fn state_and_templates_get_sensible_modes() {
    let home = Home::new();
    home.ensure(SetupOptions::default()).unwrap();
    let mode = |path: &std::path::Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;

    assert_eq!(
        mode(&home.workspace.join(".openclaw/workspace-state.json")),
        0o600
    );
    // The umask may remove group/other bits, never the owner's.
    assert_eq!(mode(&home.file("AGENTS.md")) & 0o700, 0o600);
    assert_eq!(mode(&home.file("AGENTS.md")) & 0o022, 0);
}

#[test]
fn templates_are_short_and_ask_for_nothing_dangerous() {
    for name in BootstrapName::LOAD_ORDER {
        let Some(text) = template(name) else {
            assert_eq!(name, BootstrapName::Memory);
            continue;
        };
        assert!(
            text.len() < 2_000,
            "{name} template is {} bytes",
            text.len()
        );
        assert!(
            text.starts_with(&format!("# {}", name.file_name())),
            "{name}"
        );
        assert!(text.ends_with('\n'), "{name}");
        let lower = text.to_lowercase();
        for forbidden in [
            "http://",
            "https://",
            "curl ",
            "wget ",
            "| sh",
            "api_key=",
            "sk-",
            "token:",
            "password:",
            "exfil",
            "base64",
        ] {
            assert!(
                !lower.contains(forbidden),
                "{name} template contains {forbidden:?}"
            );
        }
    }
}

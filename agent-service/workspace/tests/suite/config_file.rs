//! The starter `openclaw.json`: created once, never overwritten, and valid for openclaw-config.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use openclaw_config::{LoadOptions, NoEnv, UnresolvedVars, load};
use openclaw_workspace::{CONFIG_FILE_NAME, ConfigFile, default_config_text, ensure_config_file};

use super::{Home, listing};

fn options() -> LoadOptions {
    LoadOptions {
        unresolved_vars: UnresolvedVars::Error,
    }
}

#[test]
fn the_config_is_created_once_and_loads_cleanly() {
    let home = Home::new();

    let created = ensure_config_file(
        &home.state_dir.join(CONFIG_FILE_NAME),
        "~/.openclaw/workspace",
    )
    .unwrap();

    assert_eq!(
        created,
        ConfigFile {
            path: home.state_dir.join("openclaw.json"),
            created: true,
        }
    );
    assert_eq!(listing(&home.state_dir), ["openclaw.json"]);
    let text = fs::read_to_string(&created.path).unwrap();
    let config = load(&text, &NoEnv, &options()).unwrap();
    let defaults = config
        .raw()
        .agents
        .as_ref()
        .unwrap()
        .defaults
        .as_ref()
        .unwrap();
    assert_eq!(defaults.workspace.as_deref(), Some("~/.openclaw/workspace"));
    assert!(config.raw().channels.is_none());
    assert_eq!(config.default_agent_id(), "main");

    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&created.path), 0o600);
    assert_eq!(mode(&home.state_dir), 0o700);
}

#[test]
fn an_existing_config_is_never_touched() {
    let home = Home::new();
    fs::create_dir_all(&home.state_dir).unwrap();
    let path = home.state_dir.join("openclaw.json");
    fs::write(&path, "{ /* mine */ }\n").unwrap();

    let outcome = ensure_config_file(&home.state_dir.join(CONFIG_FILE_NAME), "/ws").unwrap();

    assert!(!outcome.created);
    assert_eq!(fs::read_to_string(&path).unwrap(), "{ /* mine */ }\n");
    assert_eq!(listing(&home.state_dir), ["openclaw.json"]);
}

/// A deployment mounts the config read-only (a compose bind mount, a Kubernetes ConfigMap whose
/// file is a symlink): an existing config means no write at all in its directory, not even a
/// temporary file. Root ignores the directory's mode, so the test also checks that the
/// directory's mtime, which any create or delete in it would move, stays where it was put.
#[test]
fn an_existing_config_in_a_read_only_directory_is_left_without_a_write() {
    let home = Home::new();
    let dir = home.state_dir.join("etc");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("real.json"), "{}\n").unwrap();
    std::os::unix::fs::symlink("real.json", dir.join("openclaw.json")).unwrap();
    std::os::unix::fs::symlink("nowhere.json", dir.join("dangling.json")).unwrap();
    let epoch = std::time::SystemTime::UNIX_EPOCH;
    fs::File::open(&dir).unwrap().set_modified(epoch).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();

    for name in ["openclaw.json", "dangling.json"] {
        let outcome = ensure_config_file(&dir.join(name), "/ws").unwrap();
        assert_eq!(
            outcome,
            ConfigFile {
                path: dir.join(name),
                created: false,
            }
        );
    }

    assert_eq!(fs::metadata(&dir).unwrap().modified().unwrap(), epoch);
    assert_eq!(
        listing(&dir),
        ["dangling.json", "openclaw.json", "real.json"]
    );
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_commented_out_allowlist_example_is_valid_once_uncommented() {
    let text = default_config_text("/srv/ws");
    assert!(text.contains("// channels: {"));
    // Uncomment the block from `// channels: {` to the end of its commented lines.
    let mut in_block = false;
    let uncommented: String = text
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            in_block |= trimmed.starts_with("// channels: {");
            in_block &= trimmed.starts_with("//");
            if in_block { &trimmed[3..] } else { line }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(uncommented.contains("\nchannels: {"));

    let config = load(&uncommented, &NoEnv, &options()).unwrap();

    let whatsapp = &config.raw().channels.as_ref().unwrap()["whatsapp"];
    let allow: Vec<&str> = whatsapp
        .allow_from
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(allow, ["+15555550123"]);
}

#[test]
fn any_workspace_text_stays_one_string() {
    for workspace in [
        r#"C:\ws "quoted""#,
        "line\nbreak",
        "/ws/${NOT_A_VAR_HERE}",
        "'single'",
    ] {
        let text = default_config_text(workspace);
        let config = load(
            &text,
            &NoEnv,
            &LoadOptions {
                unresolved_vars: UnresolvedVars::Keep,
            },
        )
        .unwrap();
        let defaults = config
            .raw()
            .agents
            .as_ref()
            .unwrap()
            .defaults
            .as_ref()
            .unwrap();
        assert_eq!(
            defaults.workspace.as_deref(),
            Some(workspace),
            "{workspace:?}"
        );
    }
}

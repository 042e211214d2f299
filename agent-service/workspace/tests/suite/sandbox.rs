//! Per-scope sandbox workspaces.

use std::fs;
use std::os::unix::fs::symlink;

use openclaw_workspace::{
    BootstrapName, DenyReason, Error, SandboxWorkspace, ensure_sandbox_workspace, sandbox_slug,
    sandbox_workspace_dir, template,
};
use proptest::prelude::*;

use super::{Home, listing};

#[test]
fn slugs_match_openclaws_rule() {
    // Expected values computed independently (Python: hashlib + the same regular expressions).
    let table = [
        (
            "agent:main:telegram:direct:123456",
            "agent-main-telegram-direct-12345-c954b7e8",
        ),
        ("shared", "shared-a4d26868"),
        ("agent:work", "agent-work-0944bd8d"),
        ("", "session-3f3af1ec"),
        ("   ", "session-3f3af1ec"),
        ("a-!b", "a--b-8d301984"),
        (
            "Agent:Main:Discord:Group:ÉtéChat",
            "agent-main-discord-group-t-chat-825209e8",
        ),
        ("!!!", "session-e84c538e"),
        (
            "agent:main:subagent:0f9c2a1e-5b7d-4c1e-9a34-2d7e8f6b1c90",
            "agent-main-subagent-0f9c2a1e-5b7-dae924f2",
        ),
        ("  Padded Key  ", "padded-key-618d5bb1"),
        ("..", "..-5ec1f7e7"),
    ];
    for (key, slug) in table {
        assert_eq!(sandbox_slug(key), slug, "{key:?}");
    }
    assert_eq!(
        sandbox_workspace_dir("/sandboxes".as_ref(), "shared"),
        std::path::PathBuf::from("/sandboxes/shared-a4d26868")
    );
}

proptest! {
    #[test]
    fn a_slug_is_always_one_safe_component(key in any::<String>()) {
        let slug = sandbox_slug(&key);
        prop_assert!(slug.len() <= 32 + 1 + 8);
        prop_assert!(slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".-_".contains(c)));
        prop_assert!(slug != "." && slug != "..");
        prop_assert_eq!(sandbox_slug(&key), slug);
    }
}

#[test]
fn a_sandbox_copies_agents_and_tools_from_the_agent_workspace() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    home.write("AGENTS.md", "# team rules\n");
    home.write("SOUL.md", "# not for sandboxes\n");
    let root = home.base.join("sandboxes");

    let sandbox =
        ensure_sandbox_workspace(&root, "agent:main:telegram:direct:1", &home.workspace).unwrap();

    assert_eq!(
        sandbox,
        SandboxWorkspace {
            dir: sandbox_workspace_dir(&root, "agent:main:telegram:direct:1"),
            copied: vec![BootstrapName::Agents],
            templated: vec![BootstrapName::Tools],
        }
    );
    assert_eq!(listing(&sandbox.dir), ["AGENTS.md", "TOOLS.md"]);
    assert_eq!(
        fs::read_to_string(sandbox.dir.join("AGENTS.md")).unwrap(),
        "# team rules\n"
    );
    assert_eq!(
        fs::read_to_string(sandbox.dir.join("TOOLS.md")).unwrap(),
        template(BootstrapName::Tools).unwrap()
    );
}

#[test]
fn a_sandbox_never_overwrites_and_never_gets_bootstrap_md() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    home.write("AGENTS.md", "# v1\n");
    home.write("BOOTSTRAP.md", "# first run\n");
    let root = home.base.join("sandboxes");
    let first = ensure_sandbox_workspace(&root, "shared", &home.workspace).unwrap();
    fs::write(first.dir.join("AGENTS.md"), "# edited in the sandbox\n").unwrap();
    home.write("AGENTS.md", "# v2\n");

    let second = ensure_sandbox_workspace(&root, "shared", &home.workspace).unwrap();

    assert!(second.copied.is_empty() && second.templated.is_empty());
    assert_eq!(
        fs::read_to_string(second.dir.join("AGENTS.md")).unwrap(),
        "# edited in the sandbox\n"
    );
    assert!(!second.dir.join("BOOTSTRAP.md").exists());
}

#[test]
fn a_link_out_of_the_agent_workspace_is_not_copied() {
    let home = Home::new();
    fs::create_dir_all(&home.workspace).unwrap();
    let secret = home.base.join("secret.txt");
    fs::write(&secret, "TOP SECRET\n").unwrap();
    symlink(&secret, home.file("AGENTS.md")).unwrap();

    let sandbox =
        ensure_sandbox_workspace(&home.base.join("sandboxes"), "shared", &home.workspace).unwrap();

    assert_eq!(
        fs::read_to_string(sandbox.dir.join("AGENTS.md")).unwrap(),
        template(BootstrapName::Agents).unwrap()
    );
}

#[test]
fn a_missing_agent_workspace_gets_templates() {
    let home = Home::new();
    let sandbox =
        ensure_sandbox_workspace(&home.base.join("sandboxes"), "shared", &home.workspace).unwrap();
    assert_eq!(
        sandbox.templated,
        vec![BootstrapName::Agents, BootstrapName::Tools]
    );
}

#[test]
fn a_planted_symlink_for_the_sandbox_dir_is_refused() {
    let home = Home::new();
    let root = home.base.join("sandboxes");
    let elsewhere = home.base.join("elsewhere");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&elsewhere).unwrap();
    symlink(&elsewhere, sandbox_workspace_dir(&root, "shared")).unwrap();

    let error = ensure_sandbox_workspace(&root, "shared", &home.workspace).unwrap_err();

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

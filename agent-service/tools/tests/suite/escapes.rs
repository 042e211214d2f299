//! Regression tests for workspace escapes through the file tools (lesson L15 c), built from
//! the public bypass reports: `..` and `~user/..` climbs, symlinked parents (chains of them),
//! dangling links whose target would be created outside (goclaw#1201, thClaws#219), and
//! writes through a final-file symlink (openclaw#85818). Every attempt is "permission
//! denied" and leaves the outside untouched; links that stay inside keep working.

use std::os::unix::fs::symlink;

use openclaw_config::resolve::ApplyPatchSettings;
use openclaw_tools::{ApplyPatchTool, EditTool, ExecTool, ReadTool, Tool, WriteTool};
use serde_json::{Value, json};

use super::{Fixture, error_text, exists, ok_text};

fn apply_patch() -> ApplyPatchTool {
    ApplyPatchTool::new(ApplyPatchSettings {
        enabled: true,
        workspace_only: true,
        allow_models: Vec::new(),
    })
}

/// Every file tool tries `path`: all are refused, nothing outside changes or appears.
async fn all_refused(f: &Fixture, path: &str) {
    let patch = apply_patch();
    let calls: [(&dyn Tool, Value); 5] = [
        (&ReadTool, json!({ "path": path })),
        (&WriteTool, json!({ "path": path, "content": "pwned\n" })),
        (
            &EditTool,
            json!({ "path": path, "old_text": "secret", "new_text": "pwned" }),
        ),
        (
            &patch,
            json!({ "input": format!("*** Begin Patch\n*** Add File: {path}\n+pwned\n*** End Patch") }),
        ),
        (
            &patch,
            json!({ "input": format!("*** Begin Patch\n*** Update File: {path}\n@@\n-secret\n+pwned\n*** End Patch") }),
        ),
    ];
    for (tool, arguments) in calls {
        let outcome = f.call(tool, arguments).await;
        let text = error_text(&outcome);
        assert!(
            text.starts_with("permission denied"),
            "{} {path:?}: {text}",
            tool.name()
        );
        assert!(!text.contains("secret\n"), "{text}");
    }
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "secret\n",
        "{path}"
    );
    let outside: Vec<_> = std::fs::read_dir(&f.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(outside, ["secret.txt"], "nothing new outside after {path}");
}

#[tokio::test]
async fn dot_dot_and_tilde_climbs_are_refused() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.path("sub/deeper")).unwrap();
    for path in [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "sub/deeper/../../../outside/secret.txt",
        "./../outside/secret.txt",
        "sub/./../.././outside/secret.txt",
        // `~` and `~user` expand to home directories, never to the workspace.
        "~/secret.txt",
        "~root/secret.txt",
        "~nobody/../outside/secret.txt",
        "~/../../outside/secret.txt",
    ] {
        all_refused(&f, path).await;
    }
    // Absolute paths to the outside, also spelled with `..` from inside the workspace.
    let absolute = f.outside.join("secret.txt").display().to_string();
    all_refused(&f, &absolute).await;
    let via_root = format!("{}/../outside/secret.txt", f.root.display());
    all_refused(&f, &via_root).await;
    // A file literally named `~x` inside the workspace is reachable as `./~x`.
    f.write("~x", "tilde\n");
    assert_eq!(
        ok_text(&f.call(&ReadTool, json!({ "path": "./~x" })).await),
        "tilde\n"
    );
}

#[tokio::test]
async fn symlinked_parents_are_resolved_to_the_real_target() {
    let f = Fixture::new();
    // A chain: a -> b -> outside, and a link to the workspace's parent.
    symlink(&f.outside, f.path("b")).unwrap();
    symlink(f.path("b"), f.path("a")).unwrap();
    symlink(f.root.parent().unwrap(), f.path("up")).unwrap();
    std::fs::create_dir_all(f.path("sub")).unwrap();
    symlink("../../outside", f.path("sub/relative")).unwrap();
    for path in [
        "a/secret.txt",
        "b/secret.txt",
        "up/outside/secret.txt",
        "sub/relative/secret.txt",
        "a/new.txt",
        "up/outside/new.txt",
        // `..` applied after the link, as the kernel does: up/.. is the workspace's
        // grandparent, not the workspace.
        "up/workspace/../outside/secret.txt",
    ] {
        all_refused(&f, path).await;
    }
    // A parent link that stays inside the workspace works, and writes land in its target.
    std::fs::create_dir_all(f.path("real/dir")).unwrap();
    symlink(f.path("real"), f.path("alias")).unwrap();
    let written = f
        .call(
            &WriteTool,
            json!({ "path": "alias/dir/note.md", "content": "in\n" }),
        )
        .await;
    ok_text(&written);
    assert_eq!(f.read("real/dir/note.md"), "in\n");
}

#[tokio::test]
async fn dangling_links_cannot_create_their_target() {
    let f = Fixture::new();
    // The target does not exist yet: a write through the link would create it outside.
    symlink(f.outside.join("created.txt"), f.path("dangling")).unwrap();
    symlink(f.outside.join("nodir/created.txt"), f.path("dangling2")).unwrap();
    std::fs::create_dir_all(f.path("output")).unwrap();
    symlink("../../outside/created.txt", f.path("output/relative")).unwrap();
    // A dangling parent: the directory it names would be created outside.
    symlink(f.outside.join("newdir"), f.path("ghostdir")).unwrap();
    for path in [
        "dangling",
        "dangling2",
        "output/relative",
        "ghostdir/file.txt",
    ] {
        all_refused(&f, path).await;
    }
    assert!(!exists(&f.outside.join("created.txt")));
    assert!(!exists(&f.outside.join("newdir")));
    // Even a dangling link pointing inside the workspace is refused for writes: creating
    // the file would create the link's target, wherever it is.
    symlink(f.path("later.txt"), f.path("inside-dangling")).unwrap();
    let outcome = f
        .call(
            &WriteTool,
            json!({ "path": "inside-dangling", "content": "x" }),
        )
        .await;
    assert!(error_text(&outcome).starts_with("permission denied"));
}

#[tokio::test]
async fn writes_through_a_final_file_symlink_never_reach_outside() {
    let f = Fixture::new();
    symlink(f.outside.join("secret.txt"), f.path("innocent.md")).unwrap();
    symlink(f.outside.join("secret.txt"), f.path("AGENTS.md")).unwrap();
    all_refused(&f, "innocent.md").await;
    all_refused(&f, "AGENTS.md").await;
    // The link itself is left as it was.
    assert!(
        std::fs::symlink_metadata(f.path("innocent.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[tokio::test]
async fn exec_workdir_cannot_leave_the_workspace() {
    let f = Fixture::new();
    symlink(&f.outside, f.path("linkdir")).unwrap();
    for workdir in [
        "../outside",
        "linkdir",
        "~",
        "~root",
        "/",
        "sub/../../outside",
    ] {
        let outcome = f
            .call(&ExecTool, json!({ "command": "pwd", "workdir": workdir }))
            .await;
        assert!(
            error_text(&outcome).starts_with("permission denied"),
            "{workdir}: {}",
            error_text(&outcome)
        );
    }
}

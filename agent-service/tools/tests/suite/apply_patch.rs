//! apply_patch: add, update, move, delete; context mismatches; parse errors; escapes.

use std::os::unix::fs::symlink;

use openclaw_config::resolve::ApplyPatchSettings;
use openclaw_tools::ApplyPatchTool;
use serde_json::json;

use super::{Fixture, error_text, exists, ok_text};

fn tool() -> ApplyPatchTool {
    ApplyPatchTool::new(ApplyPatchSettings {
        enabled: true,
        workspace_only: true,
        allow_models: Vec::new(),
    })
}

async fn patch(f: &Fixture, text: &str) -> openclaw_tools::ToolOutcome {
    f.call(&tool(), json!({ "input": text })).await
}

#[tokio::test]
async fn adds_updates_moves_and_deletes_in_one_patch() {
    let f = Fixture::new();
    f.write("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    f.write("old/name.txt", "a\nb\nc\n");
    f.write("obsolete.txt", "bye\n");
    let outcome = patch(
        &f,
        "*** Begin Patch
*** Add File: docs/new.md
+# New
+
+text
*** Update File: src/main.rs
@@ fn main() {
-    println!(\"hi\");
+    println!(\"hello\");
 }
*** Update File: old/name.txt
*** Move to: new/name.txt
@@
 a
-b
+B
 c
*** Delete File: obsolete.txt
*** End Patch
",
    )
    .await;
    assert_eq!(
        ok_text(&outcome),
        "Success. Updated the following files:\nA docs/new.md\nM src/main.rs\nM new/name.txt (moved from old/name.txt)\nD obsolete.txt"
    );
    assert_eq!(f.read("docs/new.md"), "# New\n\ntext\n");
    assert_eq!(
        f.read("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
    assert_eq!(f.read("new/name.txt"), "a\nB\nc\n");
    assert!(!exists(&f.path("old/name.txt")));
    assert!(!exists(&f.path("obsolete.txt")));
}

#[tokio::test]
async fn several_hunks_and_end_of_file() {
    let f = Fixture::new();
    f.write("list.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    let outcome = patch(
        &f,
        "*** Begin Patch
*** Update File: list.txt
@@
 1
-2
+two
 3
@@
 8
-9
+nine
+ten
*** End of File
*** End Patch",
    )
    .await;
    ok_text(&outcome);
    assert_eq!(f.read("list.txt"), "1\ntwo\n3\n4\n5\n6\n7\n8\nnine\nten\n");
}

#[tokio::test]
async fn a_context_mismatch_changes_nothing() {
    let f = Fixture::new();
    f.write("a.txt", "alpha\nbeta\n");
    let outcome = patch(
        &f,
        "*** Begin Patch
*** Add File: created.txt
+should not appear
*** Delete File: a.txt
*** Update File: a.txt
@@
-gamma
+delta
*** End Patch",
    )
    .await;
    let text = error_text(&outcome);
    assert!(
        text.contains("an earlier operation of this patch deletes it"),
        "{text}"
    );

    let mismatch = patch(
        &f,
        "*** Begin Patch
*** Add File: created.txt
+should not appear
*** Update File: a.txt
@@
 alpha
-gamma
+delta
*** End Patch",
    )
    .await;
    let text = error_text(&mismatch);
    assert_eq!(
        text,
        "apply_patch failed: hunk 1 (patch line 5) does not match a.txt: these lines were not \
         found:\n  alpha\n  gamma. No files were changed; read the file again and resend the patch."
    );
    assert!(!exists(&f.path("created.txt")));
    assert_eq!(f.read("a.txt"), "alpha\nbeta\n");
}

#[tokio::test]
async fn a_missing_anchor_is_a_mismatch() {
    let f = Fixture::new();
    f.write("a.rs", "fn a() {}\n");
    let outcome = patch(
        &f,
        "*** Begin Patch\n*** Update File: a.rs\n@@ fn nope() {\n-fn a() {}\n+fn b() {}\n*** End Patch",
    )
    .await;
    assert!(error_text(&outcome).contains("the @@ line \"fn nope() {\" was not found"));
}

#[tokio::test]
async fn malformed_patches_name_the_line() {
    let f = Fixture::new();
    f.write("a.txt", "x\n");
    let cases = [
        (
            "*** Update File: a.txt\n*** End Patch",
            "invalid patch (line 1): the patch must start with '*** Begin Patch'",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y",
            "invalid patch (line 5): the patch must end with '*** End Patch'",
        ),
        (
            "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch",
            "invalid patch (line 2): expected '*** Add File: <path>'",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n?y\n*** End Patch",
            "invalid patch (line 5): hunk lines must start with ' ', '+' or '-', found \"?y\"",
        ),
        (
            "*** Begin Patch\n*** Update File: a.txt\n*** End Patch",
            "invalid patch (line 2): '*** Update File: a.txt' has no hunks",
        ),
        (
            "*** Begin Patch\n*** End Patch",
            "invalid patch (line 1): the patch contains no file operations",
        ),
        (
            "*** Begin Patch\n*** Add File:   \n*** End Patch",
            "invalid patch (line 2): the file path is missing",
        ),
    ];
    for (text, expected) in cases {
        let outcome = patch(&f, text).await;
        let message = error_text(&outcome);
        assert!(message.starts_with(expected), "{text:?}: {message}");
    }
    assert_eq!(f.read("a.txt"), "x\n");
}

#[tokio::test]
async fn lenient_forms_are_accepted() {
    let f = Fixture::new();
    f.write("a.txt", "one\n\ntwo\n");
    // A heredoc wrapper, CRLF line ends, a missing first @@, and a blank context line
    // written without its leading space.
    let text = "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: a.txt\r\n one\r\n\r\n-two\r\n+three\r\n*** End Patch\r\nEOF\r\n";
    ok_text(&patch(&f, text).await);
    assert_eq!(f.read("a.txt"), "one\n\nthree\n");
    let aliased = f
        .call(
            &tool(),
            json!({ "patch": "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch" }),
        )
        .await;
    ok_text(&aliased);
    assert_eq!(f.read("b.txt"), "b\n");
}

#[tokio::test]
async fn add_then_update_in_the_same_patch_sees_the_added_content() {
    let f = Fixture::new();
    let outcome = patch(
        &f,
        "*** Begin Patch\n*** Add File: n.txt\n+a\n+b\n*** Update File: n.txt\n@@\n-b\n+c\n*** End Patch",
    )
    .await;
    ok_text(&outcome);
    assert_eq!(f.read("n.txt"), "a\nc\n");
}

#[tokio::test]
async fn escapes_are_denied_and_nothing_is_written() {
    let f = Fixture::new();
    f.write("inside.txt", "keep\n");
    symlink(&f.outside, f.path("linkdir")).unwrap();
    let absolute = f.outside.join("secret.txt").display().to_string();
    let patches = [
        "*** Begin Patch\n*** Add File: ../outside/new.txt\n+x\n*** End Patch".to_owned(),
        "*** Begin Patch\n*** Update File: linkdir/secret.txt\n@@\n-secret\n+pwned\n*** End Patch".to_owned(),
        format!("*** Begin Patch\n*** Delete File: {absolute}\n*** End Patch"),
        "*** Begin Patch\n*** Update File: inside.txt\n*** Move to: ../outside/moved.txt\n@@\n-keep\n+moved\n*** End Patch".to_owned(),
        "*** Begin Patch\n*** Add File: ok.txt\n+fine\n*** Add File: linkdir/new.txt\n+x\n*** End Patch".to_owned(),
    ];
    for text in &patches {
        let outcome = patch(&f, text).await;
        let message = error_text(&outcome);
        assert!(
            message.starts_with("permission denied"),
            "{text}: {message}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "secret\n"
    );
    assert!(!exists(&f.outside.join("new.txt")));
    assert!(!exists(&f.outside.join("moved.txt")));
    assert_eq!(f.read("inside.txt"), "keep\n");
    assert!(!exists(&f.path("ok.txt")));
}

#[tokio::test]
async fn workspace_only_false_lets_paths_outside_through() {
    let f = Fixture::new();
    let open = ApplyPatchTool::new(ApplyPatchSettings {
        enabled: true,
        workspace_only: false,
        allow_models: Vec::new(),
    });
    let outcome = f
        .call(
            &open,
            json!({ "input": "*** Begin Patch\n*** Add File: ../outside/new.txt\n+x\n*** Add File: here.txt\n+y\n*** End Patch" }),
        )
        .await;
    ok_text(&outcome);
    assert_eq!(
        std::fs::read_to_string(f.outside.join("new.txt")).unwrap(),
        "x\n"
    );
    assert_eq!(f.read("here.txt"), "y\n");
}

#[tokio::test]
async fn the_model_must_be_allowed() {
    let mut f = Fixture::new();
    let restricted = ApplyPatchTool::new(ApplyPatchSettings {
        enabled: true,
        workspace_only: true,
        allow_models: vec!["gpt-5.4".into()],
    });
    let text = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch";
    f.ctx.model = "openai/gpt-4o".into();
    let refused = f.call(&restricted, json!({ "input": text })).await;
    assert_eq!(
        error_text(&refused),
        "apply_patch is not enabled for the model openai/gpt-4o; use edit or write instead"
    );
    f.ctx.model = "openai/gpt-5.4".into();
    ok_text(&f.call(&restricted, json!({ "input": text })).await);
}

//! read, write, edit: happy paths, budgets, errors, and workspace escapes.

use std::os::unix::fs::{PermissionsExt, symlink};

use openclaw_tools::{EditTool, ReadTool, Tool, WriteTool};
use serde_json::json;

use super::{Fixture, error_text, exists, ok_text};

#[tokio::test]
async fn read_returns_the_file_as_is() {
    let f = Fixture::new();
    f.write("notes/a.txt", "one\ntwo\nthree\n");
    let outcome = f.call(&ReadTool, json!({ "path": "notes/a.txt" })).await;
    assert_eq!(ok_text(&outcome), "one\ntwo\nthree\n");
    assert_eq!(outcome.details().unwrap()["total_lines"], 3);
    assert_eq!(outcome.details().unwrap()["truncated"], false);
}

#[tokio::test]
async fn read_pages_with_offset_and_limit() {
    let f = Fixture::new();
    f.write("a.txt", "one\ntwo\nthree\n");
    let outcome = f
        .call(
            &ReadTool,
            json!({ "path": "a.txt", "offset": 2, "limit": 1 }),
        )
        .await;
    assert_eq!(
        ok_text(&outcome),
        "two\n[Showing lines 2-2 of 3. Continue with offset=3.]"
    );
    let rest = f
        .call(&ReadTool, json!({ "path": "a.txt", "offset": 3 }))
        .await;
    assert_eq!(ok_text(&rest), "three\n");
}

#[tokio::test]
async fn read_stops_at_the_excerpt_budget_and_says_so() {
    let mut f = Fixture::new();
    f.ctx.limits.excerpt_chars = 10;
    f.write("a.txt", "12345\n67890\nabcde\n");
    let outcome = f.call(&ReadTool, json!({ "path": "a.txt" })).await;
    assert_eq!(
        ok_text(&outcome),
        "12345\n[Output cut at the 10-character budget: showing lines 1-1 of 3. Continue with offset=2.]"
    );
    assert_eq!(outcome.details().unwrap()["truncated"], true);
}

#[tokio::test]
async fn read_shows_the_start_of_a_line_longer_than_the_budget() {
    let mut f = Fixture::new();
    f.ctx.limits.excerpt_chars = 10;
    f.write("min.js", &format!("{}\nnext\n", "x".repeat(50)));
    let text = f.call(&ReadTool, json!({ "path": "min.js" })).await;
    let text = ok_text(&text);
    assert!(
        text.starts_with("xxxxxxxxxx\n[Line 1 alone is longer"),
        "{text}"
    );
    assert!(text.contains("continue with offset=2"), "{text}");
}

/// On a multi-threaded runtime a small file is read in place and a large one on the blocking
/// pool (`openclaw_tools::in_place`): both give what the file holds, and a refused path is
/// refused the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_gives_the_same_answers_in_place_and_on_the_pool() {
    let f = Fixture::new();
    f.write("small.txt", "one\ntwo\n");
    let line = format!("{}\n", "y".repeat(99));
    let large = line.repeat(3_000); // 300,000 bytes: past what is read in place
    f.write("large.txt", &large);

    let small = f.call(&ReadTool, json!({ "path": "small.txt" })).await;
    assert_eq!(ok_text(&small), "one\ntwo\n");

    let tail = f
        .call(&ReadTool, json!({ "path": "large.txt", "offset": 2_999 }))
        .await;
    assert_eq!(ok_text(&tail), line.repeat(2));
    assert_eq!(tail.details().unwrap()["total_lines"], 3_000);
    assert_eq!(tail.details().unwrap()["first_line"], 2_999);

    let outside = f.call(&ReadTool, json!({ "path": "../etc/passwd" })).await;
    assert!(
        error_text(&outside).contains("permission denied"),
        "{}",
        error_text(&outside)
    );
    let missing = f.call(&ReadTool, json!({ "path": "nope.txt" })).await;
    assert!(error_text(&missing).contains("nope.txt not found"));
}

/// A sparse file of a gibibyte without a newline (one `truncate -s` makes it): read answers
/// from a bounded scan and never holds the line in memory; a line longer than anything that
/// can be shown is cut and the lines after it still counted.
#[tokio::test]
async fn read_of_an_endless_line_is_bounded() {
    let mut f = Fixture::new();
    let sparse = std::fs::File::create(f.path("sparse.bin")).unwrap();
    sparse.set_len(1 << 30).unwrap();
    drop(sparse);
    let whole = f.call(&ReadTool, json!({ "path": "sparse.bin" })).await;
    assert!(
        error_text(&whole).contains("looks like a binary file"),
        "{}",
        error_text(&whole)
    );
    let further = f
        .call(&ReadTool, json!({ "path": "sparse.bin", "offset": 2 }))
        .await;
    assert!(
        error_text(&further).contains("offset 2 is further into sparse.bin than read goes"),
        "{}",
        error_text(&further)
    );

    f.ctx.limits.excerpt_chars = 10;
    f.write("long.txt", &format!("{}\nnext\n", "é".repeat(3 << 20)));
    let long = f.call(&ReadTool, json!({ "path": "long.txt" })).await;
    let text = ok_text(&long);
    assert!(text.starts_with("éééééééééé\n[Line 1 alone"), "{text}");
    assert!(text.contains("The file has 2 lines"), "{text}");
}

#[tokio::test]
async fn read_errors_are_told_to_the_model() {
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    f.write("empty.txt", "");
    std::fs::write(f.path("bin"), b"ab\0cd").unwrap();
    std::fs::create_dir(f.path("dir")).unwrap();
    let cases = [
        (
            json!({ "path": "a.txt", "offset": 5 }),
            "offset 5 is past the end of a.txt, which has 1 lines",
        ),
        (json!({ "path": "missing.txt" }), "missing.txt not found"),
        (json!({ "path": "dir" }), "dir is not a regular file"),
        (json!({ "path": "bin" }), "bin looks like a binary file"),
        (
            json!({ "path": "a.txt", "offset": 0 }),
            "offset and limit start at 1",
        ),
    ];
    for (arguments, expected) in cases {
        let outcome = f.call(&ReadTool, arguments.clone()).await;
        let text = error_text(&outcome);
        assert!(text.contains(expected), "{arguments}: {text}");
    }
    let empty = f.call(&ReadTool, json!({ "path": "empty.txt" })).await;
    assert_eq!(ok_text(&empty), "[empty.txt is empty]");
}

#[tokio::test]
async fn bad_arguments_name_the_field() {
    let f = Fixture::new();
    let cases: [(&dyn Tool, serde_json::Value, &str); 6] = [
        (
            &ReadTool,
            json!({ "path": 5 }),
            "invalid arguments for read: path: invalid type: integer `5`, expected a string",
        ),
        (
            &ReadTool,
            json!({}),
            "invalid arguments for read: missing field `path`",
        ),
        (
            &ReadTool,
            json!({ "path": "a", "lines": 3 }),
            "invalid arguments for read: lines: unknown field `lines`, expected one of `path`, `offset`, `limit`",
        ),
        (
            &ReadTool,
            json!([1]),
            "invalid arguments for read: expected a JSON object, got an array",
        ),
        (
            &EditTool,
            json!({ "path": "a", "old_text": "x" }),
            "invalid arguments for edit: missing field `new_text`",
        ),
        (
            &WriteTool,
            json!({ "path": " ", "content": "" }),
            "invalid arguments for write: path: must not be empty",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let outcome = f.call(tool, arguments.clone()).await;
        assert_eq!(error_text(&outcome), expected, "{arguments}");
    }
}

#[tokio::test]
async fn arguments_encoded_as_a_json_string_are_accepted() {
    let f = Fixture::new();
    f.write("a.txt", "hi\n");
    let outcome = f.call(&ReadTool, json!(r#"{"path":"a.txt"}"#)).await;
    assert_eq!(ok_text(&outcome), "hi\n");
}

#[tokio::test]
async fn write_creates_parents_and_replaces_keeping_permissions() {
    let f = Fixture::new();
    let created = f
        .call(
            &WriteTool,
            json!({ "path": "deep/er/new.txt", "content": "hello\n" }),
        )
        .await;
    assert_eq!(ok_text(&created), "Created deep/er/new.txt (6 bytes).");
    assert_eq!(f.read("deep/er/new.txt"), "hello\n");

    f.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(f.path("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let replaced = f
        .call(
            &WriteTool,
            json!({ "path": "run.sh", "content": "#!/bin/sh\necho hi\n" }),
        )
        .await;
    assert_eq!(ok_text(&replaced), "Replaced run.sh (18 bytes).");
    let mode = std::fs::metadata(f.path("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    // No temporary files are left behind.
    let names: Vec<String> = std::fs::read_dir(&f.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

#[tokio::test]
async fn write_refuses_to_replace_a_directory() {
    let f = Fixture::new();
    std::fs::create_dir(f.path("dir")).unwrap();
    let outcome = f
        .call(&WriteTool, json!({ "path": "dir", "content": "x" }))
        .await;
    assert_eq!(error_text(&outcome), "cannot write dir: it is a directory");
}

#[tokio::test]
async fn edit_replaces_exactly_one_occurrence() {
    let f = Fixture::new();
    f.write("src/lib.rs", "fn a() {}\nfn b() {}\n");
    let outcome = f
        .call(
            &EditTool,
            json!({ "path": "src/lib.rs", "old_text": "fn b() {}", "new_text": "fn b() { todo!() }" }),
        )
        .await;
    assert_eq!(
        ok_text(&outcome),
        "Edited src/lib.rs: replaced 1 occurrence (first at line 2)."
    );
    assert_eq!(f.read("src/lib.rs"), "fn a() {}\nfn b() { todo!() }\n");
}

#[tokio::test]
async fn edit_refuses_missing_and_ambiguous_text_leaving_the_file_alone() {
    let f = Fixture::new();
    let original = "x = 1\nx = 1\n";
    f.write("a.py", original);
    let cases = [
        (
            json!({ "path": "a.py", "old_text": "y = 1", "new_text": "y = 2" }),
            "old_text was not found in a.py",
        ),
        (
            json!({ "path": "a.py", "old_text": "x = 1", "new_text": "x = 2" }),
            "old_text occurs 2 times in a.py",
        ),
        (
            json!({ "path": "a.py", "old_text": "x = 1", "new_text": "x = 1" }),
            "old_text and new_text are identical",
        ),
        (
            json!({ "path": "a.py", "old_text": "", "new_text": "x" }),
            "old_text: must not be empty",
        ),
        (
            json!({ "path": "nope.py", "old_text": "a", "new_text": "b" }),
            "nope.py not found",
        ),
    ];
    for (arguments, expected) in cases {
        let outcome = f.call(&EditTool, arguments.clone()).await;
        let text = error_text(&outcome);
        assert!(text.contains(expected), "{arguments}: {text}");
        assert_eq!(f.read("a.py"), original);
    }
    let all = f
        .call(
            &EditTool,
            json!({ "path": "a.py", "old_text": "x = 1", "new_text": "x = 2", "replace_all": true }),
        )
        .await;
    assert_eq!(
        ok_text(&all),
        "Edited a.py: replaced 2 occurrences (first at line 1)."
    );
    assert_eq!(f.read("a.py"), "x = 2\nx = 2\n");
}

#[tokio::test]
async fn edit_hints_at_crlf_line_endings() {
    let f = Fixture::new();
    f.write("w.txt", "a\r\nb\r\n");
    let outcome = f
        .call(
            &EditTool,
            json!({ "path": "w.txt", "old_text": "a\nb", "new_text": "c" }),
        )
        .await;
    assert!(error_text(&outcome).contains("CRLF"));
}

#[tokio::test]
async fn edit_through_a_link_inside_the_workspace_changes_the_target() {
    let f = Fixture::new();
    f.write("real.txt", "old\n");
    symlink(f.path("real.txt"), f.path("alias.txt")).unwrap();
    let outcome = f
        .call(
            &EditTool,
            json!({ "path": "alias.txt", "old_text": "old", "new_text": "new" }),
        )
        .await;
    ok_text(&outcome);
    assert_eq!(f.read("real.txt"), "new\n");
    assert!(
        std::fs::symlink_metadata(f.path("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// Every file tool, every way out of the workspace: "permission denied", nothing touched.
#[tokio::test]
async fn escapes_are_denied_and_leave_the_target_untouched() {
    let f = Fixture::new();
    symlink(&f.outside, f.path("linkdir")).unwrap();
    symlink(f.outside.join("secret.txt"), f.path("linkfile")).unwrap();
    let absolute = f.outside.join("secret.txt").display().to_string();
    let escapes = [
        "../outside/secret.txt".to_owned(),
        absolute,
        "linkdir/secret.txt".to_owned(),
        "linkfile".to_owned(),
        "sub/../../outside/secret.txt".to_owned(),
    ];
    for path in &escapes {
        let calls: [(&dyn Tool, serde_json::Value); 3] = [
            (&ReadTool, json!({ "path": path })),
            (&WriteTool, json!({ "path": path, "content": "pwned\n" })),
            (
                &EditTool,
                json!({ "path": path, "old_text": "secret", "new_text": "pwned" }),
            ),
        ];
        for (tool, arguments) in calls {
            let outcome = f.call(tool, arguments).await;
            let text = error_text(&outcome);
            assert!(
                text.starts_with("permission denied"),
                "{} {path}: {text}",
                tool.name()
            );
            assert!(!text.contains("secret\n"), "{text}");
        }
        assert_eq!(
            std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
            "secret\n"
        );
    }
    // A new file outside is not created either, directly or through the linked directory.
    for path in ["../outside/new.txt", "linkdir/new.txt"] {
        let outcome = f
            .call(&WriteTool, json!({ "path": path, "content": "x" }))
            .await;
        assert!(error_text(&outcome).starts_with("permission denied"));
        assert!(!exists(&f.outside.join("new.txt")));
    }
}

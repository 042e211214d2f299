//! The API as a contract: `buf lint` over `proto/` is clean (each exception
//! is named and explained in `buf.yaml`), and `buf breaking` finds no change
//! against `proto/baseline.binpb`, the API as last released, while a
//! renumbered, retyped or removed field is caught. `buf` comes from the npm
//! package `@bufbuild/buf`, installed into `.tools/npm/` by the test itself.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

/// The pinned buf CLI.
const BUF_PACKAGE: &str = "@bufbuild/buf";
const BUF_VERSION: &str = "1.75.0";

fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|dir| dir.join("buf.yaml").is_file())
        .unwrap_or_else(|| panic!("no buf.yaml above {}", manifest.display()))
        .to_owned()
}

fn buf() -> PathBuf {
    let tools = deploy_check::install::default_tools_dir();
    deploy_check::npm::ensure_npm_program(&tools, BUF_PACKAGE, BUF_VERSION, "buf")
        .unwrap_or_else(|e| panic!("{e}"))
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(buf())
        .args(args)
        .current_dir(dir)
        // buf keeps a module cache; keep it out of the user's home.
        .env(
            "BUF_CACHE_DIR",
            deploy_check::install::default_tools_dir().join("buf-cache"),
        )
        .output()
        .unwrap_or_else(|e| panic!("cannot run buf: {e}"))
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn buf_lint_is_clean() {
    let output = run(&workspace_root(), &["lint"]);
    assert!(output.status.success(), "buf lint:\n{}", text(&output));
}

#[test]
fn the_proto_is_compatible_with_the_released_baseline() {
    let output = run(
        &workspace_root(),
        &["breaking", "--against", "proto/baseline.binpb"],
    );
    assert!(output.status.success(), "buf breaking:\n{}", text(&output));
}

/// A copy of the module (buf.yaml and proto/) with `edit` applied to one
/// file, checked against the committed baseline: the findings.
fn breaking_after(file: &str, edit: impl Fn(&str) -> String) -> String {
    let root = workspace_root();
    let copy = tempfile::tempdir().expect("tempdir");
    let Ok(config) = std::fs::read(root.join("buf.yaml")) else {
        panic!("buf.yaml reads");
    };
    std::fs::write(copy.path().join("buf.yaml"), config).expect("write buf.yaml");
    copy_protos(&root.join("proto"), &copy.path().join("proto"));
    let path = copy.path().join("proto").join(file);
    let source = std::fs::read_to_string(&path).expect("the proto file reads");
    let edited = edit(&source);
    assert_ne!(edited, source, "the edit changed {file}");
    std::fs::write(&path, edited).expect("write the edit");
    let baseline = root.join("proto/baseline.binpb");
    let Some(baseline) = baseline.to_str() else {
        panic!("a UTF-8 path");
    };
    let output = run(copy.path(), &["breaking", "--against", baseline]);
    assert!(
        !output.status.success(),
        "buf breaking passed an incompatible {file}:\n{}",
        text(&output)
    );
    text(&output)
}

fn copy_protos(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let path = entry.path();
        if path.is_dir() {
            copy_protos(&path, &to.join(entry.file_name()));
        } else if path.extension().is_some_and(|e| e == "proto") {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

#[test]
fn a_renumbered_retyped_or_removed_field_is_breaking() {
    const FILE: &str = "openclaw/prompt/v1/prompt.proto";
    const FIELD: &str = "  string workspace_dir = 4;";
    let source = std::fs::read_to_string(workspace_root().join("proto").join(FILE))
        .expect("the proto file reads");
    assert!(source.contains(FIELD), "{FIELD:?} is in {FILE}");
    let renumbered = breaking_after(FILE, |s| {
        s.replacen(FIELD, "  string workspace_dir = 94;", 1)
    });
    assert!(renumbered.contains("workspace_dir"), "{renumbered}");
    let retyped = breaking_after(FILE, |s| s.replacen(FIELD, "  bytes workspace_dir = 4;", 1));
    assert!(retyped.contains("workspace_dir"), "{retyped}");
    let removed = breaking_after(FILE, |s| s.replacen(FIELD, "  reserved 4;", 1));
    assert!(removed.contains("workspace_dir"), "{removed}");
}

//! The quick start (`cargo run -p openclaw-cli --bin openclaw`),
//! the image build (`-p prompt-server -p agent-server -p deploy-check`) and
//! `cargo build --workspace` resolve every shared dependency with the same
//! features, so each reuses what another compiled. A feature that only one
//! workspace member turns on (a test-support crate's, a bench's) would
//! change that dependency, and everything built on it, between them.

use std::{collections::BTreeMap, process::Command};

/// Each package of the build selected by `selection`, with its features.
fn features(selection: &[&str]) -> BTreeMap<String, String> {
    let output = Command::new(env!("CARGO"))
        .args(["tree", "--locked", "-e", "normal,build", "--prefix", "none"])
        .args(["--no-dedupe", "-f", "{p}|{f}"])
        .args(selection)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo tree: {e}"));
    assert!(
        output.status.success(),
        "cargo tree: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut packages = BTreeMap::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let line = line.trim_end_matches(" (*)");
        if let Some((package, features)) = line.split_once('|') {
            packages.insert(package.to_owned(), features.to_owned());
        }
    }
    packages
}

#[test]
fn single_binary_builds_resolve_features_as_the_workspace_build() {
    let workspace = features(&["--workspace"]);
    for selection in [
        &["-p", "openclaw-cli"][..],
        &[
            "-p",
            "prompt-server",
            "-p",
            "agent-server",
            "-p",
            "deploy-check",
        ],
    ] {
        let one = features(selection);
        assert!(one.len() > 100, "{selection:?}: {} packages", one.len());
        let differ: Vec<String> = one
            .iter()
            .filter(|(package, f)| workspace.get(*package) != Some(*f))
            .map(|(package, f)| {
                format!(
                    "{package}: [{f}] here, [{}] in the workspace build",
                    workspace.get(package).map_or("absent", String::as_str)
                )
            })
            .collect();
        assert!(differ.is_empty(), "{selection:?}:\n{}", differ.join("\n"));
    }
}

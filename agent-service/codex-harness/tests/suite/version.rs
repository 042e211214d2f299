//! The version check and the handshake's tolerance, against a scripted
//! stand-in for `codex app-server` (no real binary needed).

use std::path::Path;

use openclaw_codex_harness::{CodexRunner, HarnessError, HarnessSettings};
use tempfile::TempDir;

use super::fixture::{stand_in, start_script};

/// A shell script that answers `initialize` with `user_agent` after an
/// unknown notification (with `emittedAtMs`), puts unknown fields in the
/// result, and prints `codex-cli <cli_version>` for `--version`.
fn fake_codex(dir: &TempDir, user_agent: &str, cli_version: &str) -> HarnessSettings {
    let script = format!(
        r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "codex-cli {cli_version}"; exit 0; fi
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{{"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '%s\n' '{{"method":"brandNew/notification","params":{{"x":1}},"emittedAtMs":1765000000000}}'
      printf '{{"id":%s,"result":{{"userAgent":"{user_agent}","codexHome":"/x","platformFamily":"unix","platformOs":"linux","somethingNew":[1,2]}},"extra":true}}\n' "$id"
      ;;
  esac
done
"#
    );
    stand_in(dir.path(), &script, dir.path().to_owned())
}

/// The error a stand-in answering as `user_agent`, and `codex-cli <cli_version>`, is refused
/// with: an unsupported version, found to be `cli_version`.
async fn refused(user_agent: &str, cli_version: &str) -> HarnessError {
    let dir = tempfile::tempdir().expect("dir");
    let settings = fake_codex(&dir, user_agent, cli_version);
    let error = start_script(&settings)
        .await
        .expect_err("an unsupported version");
    assert!(
        matches!(&error, HarnessError::UnsupportedVersion { found, .. } if found == cli_version),
        "{error:?}"
    );
    error
}

#[tokio::test]
async fn a_supported_server_passes_despite_unknown_fields_and_notifications() {
    let dir = tempfile::tempdir().expect("dir");
    let settings = fake_codex(&dir, "openclaw/0.171.4 (Debian 12; x86_64) test", "0.171.4");
    let version = start_script(&settings).await.expect("supported");
    assert_eq!(version.to_string(), "0.171.4");
}

#[tokio::test]
async fn an_older_server_is_refused_with_the_supported_range() {
    let error = refused("openclaw/0.150.2 (Debian 12; x86_64) test", "0.150.2").await;
    let message = error.to_string();
    assert!(message.contains("0.169.x to 0.171.x"), "{message}");
    assert!(message.contains("is Codex 0.150.2"), "{message}");
}

#[tokio::test]
async fn without_a_version_in_the_user_agent_codex_version_decides() {
    refused("openclaw (unknown build)", "0.172.0").await;
}

#[tokio::test]
async fn a_missing_binary_names_the_setting() {
    let settings = HarnessSettings::new(Path::new("/nonexistent/codex"));
    let runner = CodexRunner::new(settings);
    let error = runner.start().await.expect_err("no binary");
    assert!(matches!(error, HarnessError::Spawn { .. }), "{error:?}");
    assert!(
        error.to_string().contains("runtime.codex.command"),
        "{error}"
    );
}

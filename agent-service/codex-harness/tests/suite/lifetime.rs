//! Nothing the app-server starts outlives it: the commands Codex runs, detached or not, end
//! with the app-server's pid namespace when it goes.

use std::time::Duration;

use agent_testkit::procs::{eventually, sleeping};
use openclaw_codex_harness::{CodexRunner, HarnessError, HarnessSettings};

use super::fixture::stand_in;

/// A stand-in for `codex app-server` that starts a detached and a background `sleep` (as the
/// commands of a turn would be) and then answers `initialize`.
fn codex_starting_commands(dir: &std::path::Path) -> HarnessSettings {
    let script = r#"#!/bin/sh
setsid -f sleep 3201
sleep 3202 &
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      printf '{"id":%s,"result":{"userAgent":"openclaw/0.171.4 (Debian 12; x86_64) test","codexHome":"/x","platformFamily":"unix","platformOs":"linux"}}\n' "$id"
      ;;
  esac
done
"#;
    stand_in(dir, script, dir.join("home"))
}

#[tokio::test]
async fn commands_the_app_server_started_end_with_it() {
    let dir = tempfile::tempdir().expect("dir");
    let settings = codex_starting_commands(dir.path());
    let mut started = None;
    for _ in 0..20 {
        let runner = CodexRunner::new(settings.clone());
        match runner.start().await {
            // ETXTBSY: another test thread's fork still holds the fresh script open.
            Err(HarnessError::Spawn { source, .. }) if source.raw_os_error() == Some(26) => {}
            Err(other) if other.to_string().contains("Text file busy") => {}
            Err(other) => panic!("{other}"),
            Ok(_) => {
                started = Some(runner);
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let runner = started.expect("the stand-in started");
    eventually("the commands to start", Duration::from_secs(15), || {
        sleeping("3201") && sleeping("3202")
    })
    .await;
    // The app-server exits on its own when its stdin closes; no group kill is needed.
    runner.shutdown().await;
    eventually(
        "the commands to end with the app-server",
        Duration::from_secs(15),
        || !sleeping("3201") && !sleeping("3202"),
    )
    .await;
}

//! The binary's `--inspector-listen`: the web inspector beside the gRPC API, behind the same
//! bearer tokens, and never on an address other hosts reach without them.

use std::path::Path;

use super::harness::binary;
use super::process::{free_port, refused, spawn_until};

const TOKEN: &str = "inspector-token-0123456789";

/// The binary's stderr when `--inspector-listen inspector` is refused at start.
async fn refused_with(state_dir: &Path, inspector: &str) -> String {
    refused(
        binary()
            .args(["--listen", "127.0.0.1:0", "--inspector-listen", inspector])
            .arg("--state-dir")
            .arg(state_dir),
    )
    .await
}

#[tokio::test]
async fn the_binary_refuses_an_open_inspector_on_other_hosts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stderr = refused_with(dir.path(), "0.0.0.0:0").await;
    assert!(
        stderr.contains(
            "error: refusing to serve the inspector on 0.0.0.0:0 without bearer tokens: anyone \
             who can reach it could read every transcript"
        ),
        "{stderr}"
    );
    let stderr = refused_with(dir.path(), "nowhere").await;
    assert!(stderr.contains("error: --inspector-listen: "), "{stderr}");
    assert!(
        std::fs::read_dir(dir.path()).expect("dir").next().is_none(),
        "nothing was started"
    );
}

#[tokio::test]
async fn the_binary_serves_the_inspector_behind_the_api_tokens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut child = spawn_until(
        binary()
            .args(["--listen", "127.0.0.1:0", "--inspector-listen"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--state-dir")
            .arg(dir.path())
            .env("HOME", dir.path())
            .env("AGENT_SERVICE_TOKENS", TOKEN),
        "inspector listening",
    )
    .await;
    let url = format!("http://127.0.0.1:{port}/api/agents");
    let client = reqwest::Client::new();
    let refused = client.get(&url).send().await.expect("GET");
    assert_eq!(refused.status(), 401);
    let agents: serde_json::Value = client
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    assert_eq!(agents["agents"][0]["id"], "main", "{agents}");
    child.kill().await.expect("kill");
}

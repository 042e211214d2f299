//! The binary's `--inspector-listen`: the web inspector beside the gRPC API, behind the same
//! bearer tokens, and never on an address other hosts reach without them.

use tokio::io::{AsyncBufReadExt, BufReader};

use super::harness::binary;

const TOKEN: &str = "inspector-token-0123456789";

#[tokio::test]
async fn the_binary_refuses_an_open_inspector_on_other_hosts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = binary()
        .args(["--listen", "127.0.0.1:0", "--inspector-listen", "0.0.0.0:0"])
        .arg("--state-dir")
        .arg(dir.path())
        .output()
        .await
        .expect("run agent-service");
    assert_eq!(output.status.code(), Some(64));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "error: refusing to serve the inspector on 0.0.0.0:0 without bearer tokens: anyone \
             who can reach it could read every transcript"
        ),
        "{stderr}"
    );
    let output = binary()
        .args(["--listen", "127.0.0.1:0", "--inspector-listen", "nowhere"])
        .arg("--state-dir")
        .arg(dir.path())
        .output()
        .await
        .expect("run agent-service");
    assert_eq!(output.status.code(), Some(64));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("error: --inspector-listen: "), "{stderr}");
    assert!(
        std::fs::read_dir(dir.path()).expect("dir").next().is_none(),
        "nothing was started"
    );
}

#[tokio::test]
async fn the_binary_serves_the_inspector_behind_the_api_tokens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        probe.local_addr().expect("addr").port()
    };
    let mut child = binary()
        .args(["--listen", "127.0.0.1:0", "--inspector-listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--state-dir")
        .arg(dir.path())
        .env("HOME", dir.path())
        .env("AGENT_SERVICE_TOKENS", TOKEN)
        .spawn()
        .expect("start agent-service");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen = String::new();
    while !seen.contains("inspector listening") {
        match lines.next_line().await.expect("stderr line") {
            Some(line) => {
                seen.push_str(&line);
                seen.push('\n');
            }
            None => panic!("agent-service ended before its inspector listened:\n{seen}"),
        }
    }
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

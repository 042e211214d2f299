//! agent-service as a process of its own: the binary over a state dir on a free loopback port,
//! told apart from the test by what it writes to stderr or by answering RPCs, a client of it,
//! and its refusals at start.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};
use tonic::transport::Channel;

/// How long a started binary may take to answer RPCs.
const PATIENCE: Duration = Duration::from_secs(30);

/// A port free on 127.0.0.1 (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port()
}

/// `command` serving `dir` on `listen`: state under `dir/state`, config `dir/openclaw.json`,
/// HOME at `dir`.
pub fn serving<'c>(command: &'c mut Command, dir: &Path, listen: &str) -> &'c mut Command {
    command
        .args(["--listen", listen, "--state-dir"])
        .arg(dir.join("state"))
        .arg("--config")
        .arg(dir.join("openclaw.json"))
        .env("HOME", dir)
}

/// Spawns `command` (its stderr piped) and reads its stderr until a line holds `needle`. The
/// rest of its stderr goes on being read, so the child never blocks on a full pipe.
pub async fn spawn_until(command: &mut Command, needle: &str) -> Child {
    let mut child = command.spawn().expect("start agent-service");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut seen = String::new();
    while !seen.contains(needle) {
        match lines.next_line().await.expect("stderr line") {
            Some(line) => {
                seen.push_str(&line);
                seen.push('\n');
            }
            None => panic!("agent-service ended before it said {needle:?}:\n{seen}"),
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}

/// A client of agent-service on 127.0.0.1:`port`.
pub async fn client_on(port: u16) -> AgentServiceClient<Channel> {
    let channel = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    AgentServiceClient::new(channel)
}

/// Polls `listen` until the agent-service there answers ListAgents; fails with `logs()` when
/// `child` exits first or it takes longer than 30 s.
pub async fn answering(
    listen: &str,
    child: &mut Child,
    logs: &dyn Fn() -> String,
) -> AgentServiceClient<Channel> {
    let began = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("agent-service exited with {status}: {}", logs());
        }
        if let Ok(channel) = Channel::from_shared(format!("http://{listen}"))
            .expect("endpoint")
            .connect()
            .await
        {
            let mut client = AgentServiceClient::new(channel);
            if client
                .list_agents(pb::ListAgentsRequest::default())
                .await
                .is_ok()
            {
                return client;
            }
        }
        assert!(began.elapsed() < PATIENCE, "never served: {}", logs());
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Every event of a Run of `request` on `client`, to its end.
pub async fn run_all(
    client: &mut AgentServiceClient<Channel>,
    request: impl tonic::IntoRequest<pb::RunRequest>,
) -> Vec<pb::RunEvent> {
    let mut stream = client.run(request).await.expect("run").into_inner();
    let mut events = Vec::new();
    while let Some(event) = stream.message().await.expect("event") {
        events.push(event);
    }
    events
}

/// `message` carrying `authorization: Bearer <token>`.
pub fn bearer<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    service_kit::BearerToken::new(token)
        .expect("token")
        .apply(&mut request);
    request
}

/// Runs `command` to its end, which must be exit code 64 (a configuration refused at start);
/// its stderr.
pub async fn refused(command: &mut Command) -> String {
    let output = command.output().await.expect("run agent-service");
    assert_eq!(output.status.code(), Some(64));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

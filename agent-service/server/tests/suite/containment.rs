//! The agent-service binary against commands that reach for what is not theirs: the service's
//! environment (where provider keys and tokens live) through `/proc`, from a sandbox and from
//! the host; and commands that try to outlive their session, their `process kill` or the
//! service itself (reset, delete, `setsid -f`, SIGKILL of the service), and hook commands that
//! leave processes behind.

use std::time::Duration;

use agent_testkit::{
    FakeReply, FakeServer, FakeServerHandle, WireFormat,
    procs::{eventually, sleeping},
};
use openclaw_proto::agent::v1 as pb;
use pb::agent_service_client::AgentServiceClient;
use serde_json::json;
use tokio::process::{Child, Command};
use tonic::transport::Channel;

use super::harness::launched;
use super::process::{answering, free_port, run_all, serving};
use super::run_events::{events_of, session_key};

/// How long any one wait may take.
const PATIENCE: Duration = Duration::from_secs(30);

/// The provider key in the service's environment (the config names the variable).
const PLANTED: &str = "sk-planted-3f9c2e1d";

/// Host sessions run commands as they are; non-main sessions in a sandbox of their own.
const CONFIG_EXTRA: &str = r#", sandbox: { mode: "non-main", scope: "session" }"#;
const TOP_EXTRA: &str = r#"tools: { exec: { security: "full", ask: "off" } },"#;

/// A non-main session: sandboxed.
const SANDBOXED: &str = "telegram:group:9";
/// The main session: commands on the host.
const HOST: &str = "main";

/// One agent-service process with a secret in its environment.
struct Service {
    root: tempfile::TempDir,
    fake: FakeServerHandle,
    child: Option<Child>,
    client: AgentServiceClient<Channel>,
}

impl Service {
    /// Starts the binary, as the user `uid` when given (the test then runs as root), and waits
    /// until it answers RPCs.
    async fn start(uid: Option<u32>) -> Self {
        Self::start_holding(uid, &[], &[]).await
    }

    /// [`Service::start`], the binary started with each of `inherited` open for reading on
    /// descriptors 7, 8, ... and not close-on-exec (as a careless parent leaves them), and
    /// with `env` added to its environment.
    async fn start_holding(
        uid: Option<u32>,
        inherited: &[&std::path::Path],
        env: &[(&str, &str)],
    ) -> Self {
        let (_, fake) = FakeServer::start(WireFormat::ChatCompletions)
            .await
            .expect("fake model server");
        let root = tempfile::tempdir().expect("root");
        // The provider key comes from the environment, as deployments pass it.
        let config = super::harness::config(
            fake.base_url(),
            WireFormat::ChatCompletions,
            CONFIG_EXTRA,
            TOP_EXTRA,
        )
        .replace(
            r#"apiKey: "test-key""#,
            r#"apiKey: "${OPENCLAW_TEST_PROVIDER_KEY}""#,
        );
        std::fs::write(root.path().join("openclaw.json"), config).expect("config");
        let listen = format!("127.0.0.1:{}", free_port());
        let bwrap = agent_testkit::packages::ensure_program("bwrap", "bubblewrap")
            .expect("bubblewrap is needed");
        let command = match uid {
            Some(uid) => {
                let status = std::process::Command::new("chown")
                    .args(["-R", &format!("{uid}:{uid}")])
                    .arg(root.path())
                    .status()
                    .expect("chown");
                assert!(status.success());
                let mut setpriv = Command::new("setpriv");
                setpriv
                    .arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={uid}"))
                    .args(["--clear-groups", "--"])
                    .arg(env!("CARGO_BIN_EXE_agent-service"));
                setpriv
            }
            None if !inherited.is_empty() => {
                let opens: String = (0..inherited.len())
                    .map(|i| format!("{}<\"${}\" ", 7 + i, i + 1))
                    .collect();
                let mut sh = Command::new("sh");
                sh.arg("-c")
                    .arg(format!(
                        "exec {opens}; shift {}; exec \"$@\"",
                        inherited.len()
                    ))
                    .arg("sh")
                    .args(inherited)
                    .arg(env!("CARGO_BIN_EXE_agent-service"));
                sh
            }
            None => Command::new(env!("CARGO_BIN_EXE_agent-service")),
        };
        let log = std::fs::File::create(root.path().join("agent-service.log")).expect("log");
        let mut child = serving(&mut launched(command), root.path(), &listen)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
            .env("OPENCLAW_TEST_PROVIDER_KEY", PLANTED)
            .env("AGENT_SERVICE_SANDBOX_BWRAP", bwrap)
            .envs(env.iter().copied())
            .stderr(log)
            .spawn()
            .expect("spawn agent-service");
        let log = root.path().join("agent-service.log");
        let logs = || std::fs::read_to_string(&log).unwrap_or_default();
        let client = answering(&listen, &mut child, &logs).await;
        Self {
            root,
            fake,
            child: Some(child),
            client,
        }
    }

    fn logs(&self) -> String {
        std::fs::read_to_string(self.root.path().join("agent-service.log")).unwrap_or_default()
    }

    /// The service's pid (setpriv execs it, so it is the child's).
    fn pid(&self) -> u32 {
        self.child.as_ref().and_then(Child::id).expect("running")
    }

    /// Runs `message` in `key`, the model calling exec once per command, then saying "Done.";
    /// the outputs of the calls.
    async fn exec(&mut self, key: &str, commands: &[serde_json::Value]) -> Vec<String> {
        self.fake.push_all(
            commands
                .iter()
                .enumerate()
                .map(|(i, args)| FakeReply::tool_call(format!("c{i}"), "exec", args.clone()))
                .chain([FakeReply::text("Done.")]),
        );
        let request = pb::RunRequest {
            session: session_key(key),
            message: "Go.".into(),
            ..Default::default()
        };
        let events = run_all(&mut self.client, request).await;
        let outputs: Vec<String> = events_of!(&events, ToolFinished)
            .into_iter()
            .map(|t| t.output)
            .collect();
        assert_eq!(outputs.len(), commands.len(), "{}", self.logs());
        outputs
    }

    /// SIGKILL: nothing runs on the way out.
    async fn kill(&mut self) {
        let mut child = self.child.take().expect("running");
        child.start_kill().expect("SIGKILL");
        child.wait().await.expect("wait");
    }
}

fn background(command: &str) -> serde_json::Value {
    json!({ "command": command, "background": true })
}

/// Every environment a command can read through `/proc`: pid 1's, each process's, and the
/// service's own by its pid.
fn environ_reader(service_pid: u32) -> serde_json::Value {
    json!({ "command": format!(
        "for f in /proc/1/environ /proc/[0-9]*/environ /proc/{service_pid}/environ; do \
           cat \"$f\" 2>&1 | tr '\\0' '\\n'; done; echo read-all"
    ) })
}

#[tokio::test]
async fn no_command_reads_the_services_environment() {
    let mut service = Service::start(None).await;
    let pid = service.pid();
    let sandboxed = service.exec(SANDBOXED, &[environ_reader(pid)]).await;
    assert!(sandboxed[0].contains("read-all"), "{}", sandboxed[0]);
    assert!(!sandboxed[0].contains(PLANTED), "{}", sandboxed[0]);
    assert!(
        !sandboxed[0].contains("OPENCLAW_TEST_PROVIDER_KEY"),
        "{}",
        sandboxed[0]
    );
    let host = service.exec(HOST, &[environ_reader(pid)]).await;
    assert!(host[0].contains("read-all"), "{}", host[0]);
    assert!(!host[0].contains(PLANTED), "{}", host[0]);
}

/// Descriptors the service inherited from whatever started it (a secret file, a directory of
/// the host) reach no command: a sandboxed one would read the host through a directory
/// descriptor, whatever the sandbox mounts.
#[tokio::test]
async fn no_command_inherits_the_services_descriptors() {
    let outside = tempfile::tempdir().expect("outside");
    let secret = outside.path().join("tokens");
    std::fs::write(&secret, format!("{PLANTED}\n")).expect("secret");
    std::fs::write(outside.path().join("host-only.txt"), "x").expect("host file");
    let mut service = Service::start_holding(None, &[&secret, outside.path()], &[]).await;
    let probe = json!({ "command":
        "echo fds: $(ls /proc/self/fd | sort -n | tr '\\n' ' '); \
         cat <&7; cat /proc/self/fd/7; ls /proc/self/fd/8/; echo probed"
    });
    for key in [SANDBOXED, HOST] {
        let out = service.exec(key, std::slice::from_ref(&probe)).await;
        let out = &out[0];
        assert!(out.contains("probed"), "{key}: {out}");
        // The shell's three streams, and the descriptor `ls` lists with.
        assert!(out.contains("fds: 0 1 2 3\n"), "{key}: {out}");
        assert!(!out.contains(PLANTED), "{key}: {out}");
        assert!(!out.contains("host-only.txt"), "{key}: {out}");
    }
}

/// Credentials in the service's environment that no config names (the key of a provider the
/// config does not use, a token meant for another program, a database URL with its password)
/// reach no host command either;
/// ordinary variables still do.
#[tokio::test]
async fn no_host_command_inherits_a_credential_the_config_does_not_name() {
    let unused = "sk-ant-unused-7c41d09b";
    let other = "ghp_other-program-5e2a";
    let database = "postgres://app:pw-3f9d1c@db.internal/main";
    let mut service = Service::start_holding(
        None,
        &[],
        &[
            ("ANTHROPIC_API_KEY", unused),
            ("GITHUB_TOKEN", other),
            // Named like any setting, holding a password in its value.
            ("DATABASE_URL", database),
            ("HOST_COMMAND_SEES_ME", "plain-value"),
            ("PLAIN_URL", "https://proxy.internal:3128"),
        ],
    )
    .await;
    let out = service
        .exec(HOST, &[json!({ "command": "env; echo listed" })])
        .await;
    let out = &out[0];
    assert!(out.contains("listed"), "{out}");
    assert!(out.contains("HOST_COMMAND_SEES_ME=plain-value"), "{out}");
    assert!(
        out.contains("PLAIN_URL=https://proxy.internal:3128"),
        "{out}"
    );
    for leaked in [
        unused,
        other,
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "pw-3f9d1c",
        PLANTED,
    ] {
        assert!(!out.contains(leaked), "{leaked}: {out}");
    }
}

#[tokio::test]
async fn a_process_of_the_services_user_cannot_read_its_environment() {
    // As the images run it: not root. A process of the same user (what an unsandboxed command
    // is, wherever it runs) is refused the service's environ and memory.
    let uid = 10_001;
    let service = Service::start(Some(uid)).await;
    let environ = format!("/proc/{}/environ", service.pid());
    let read = |path: &str| {
        std::process::Command::new("setpriv")
            .arg(format!("--reuid={uid}"))
            .arg(format!("--regid={uid}"))
            .args(["--clear-groups", "--", "cat", path])
            .output()
            .expect("setpriv cat")
    };
    let out = read(&environ);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{environ} was readable");
    assert!(said.contains("Permission denied"), "{said}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(PLANTED));
    // The same user reads its own processes' environ: the refusal is the service's doing.
    let out = read("/proc/self/environ");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn reset_and_delete_kill_a_sessions_background_commands() {
    let mut service = Service::start(None).await;
    for (key, a, b, delete) in [
        (HOST, "3101", "3102", false),
        (SANDBOXED, "3103", "3104", false),
        (HOST, "3105", "3106", true),
    ] {
        service
            .exec(
                key,
                &[background(&format!("setsid -f sleep {a}; sleep {b}"))],
            )
            .await;
        eventually("the commands to start", PATIENCE, || {
            sleeping(a) && sleeping(b)
        })
        .await;
        let session = session_key(key);
        if delete {
            let request = pb::DeleteSessionRequest { session };
            service
                .client
                .delete_session(request)
                .await
                .expect("delete");
        } else {
            let request = pb::ResetSessionRequest { session };
            service.client.reset_session(request).await.expect("reset");
        }
        let what = if delete { "the delete" } else { "the reset" };
        eventually(&format!("{what} to kill them"), PATIENCE, || {
            !sleeping(a) && !sleeping(b)
        })
        .await;
    }
}

#[tokio::test]
async fn nothing_a_session_started_outlives_a_sigkill_of_the_service() {
    let mut service = Service::start(None).await;
    let marker = service.root.path().join("side-effect");
    service
        .exec(
            HOST,
            &[background(&format!(
                "setsid -f sh -c 'sleep 3111; touch {0}'; nohup sleep 3112 >/dev/null 2>&1 &
                 sleep 3113",
                marker.display()
            ))],
        )
        .await;
    service
        .exec(SANDBOXED, &[background("setsid -f sleep 3114; sleep 3115")])
        .await;
    // A foreground command, in a run the kill interrupts.
    service.fake.push(FakeReply::tool_call(
        "f",
        "exec",
        json!({ "command": "setsid -f sleep 3116; sleep 3117" }),
    ));
    let mut client = service.client.clone();
    let foreground = tokio::spawn(async move {
        let _ = client
            .run(pb::RunRequest {
                session: session_key(HOST),
                message: "Go.".into(),
                ..Default::default()
            })
            .await;
    });
    let all = ["3111", "3112", "3113", "3114", "3115", "3116", "3117"];
    eventually("every command to start", PATIENCE, || {
        all.iter().all(|s| sleeping(s))
    })
    .await;
    service.kill().await;
    eventually("every command to die with the service", PATIENCE, || {
        !all.iter().any(|s| sleeping(s))
    })
    .await;
    foreground.abort();
    assert!(std::fs::symlink_metadata(&marker).is_err());
}

#[tokio::test]
async fn nothing_a_hook_command_started_outlives_it() {
    // A hook program lives outside every workspace and the state directory.
    let hooks = tempfile::tempdir().expect("hooks dir");
    let script = hooks.path().join("detach.sh");
    // A valid bootstrap hook (it answers with its request) that leaves two sleeps behind, one
    // of them outside its process group.
    std::fs::write(
        &script,
        "#!/bin/sh\nsetsid -f sleep 3301 >/dev/null 2>&1\n(sleep 3302 >/dev/null 2>&1 &)\nexec cat\n",
    )
    .expect("script");
    let executable = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
    std::fs::set_permissions(&script, executable).expect("chmod");
    let h = super::harness::Harness::start(
        WireFormat::ChatCompletions,
        "",
        &format!(
            r#"hooks: {{ bootstrap: [{{ command: [{}] }}] }},"#,
            serde_json::json!(script.display().to_string())
        ),
    )
    .await;
    h.service.preview(session_key(HOST), None).await;
    eventually("the hook's leftovers to die with it", PATIENCE, || {
        !sleeping("3301") && !sleeping("3302")
    })
    .await;
}

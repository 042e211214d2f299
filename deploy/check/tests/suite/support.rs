//! Paths, the built binaries, spawned services and Prometheus text.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use deploy_check::native::ProcessPlan;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Asserts that `status` has `code` and a message containing `needle`.
#[track_caller]
pub fn assert_status(status: &tonic::Status, code: tonic::Code, needle: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    assert!(status.message().contains(needle), "{status:?}");
}

/// `deploy/`.
pub fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("deploy/check has a parent")
        .to_path_buf()
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    deploy_dir()
        .parent()
        .expect("deploy has a parent")
        .to_path_buf()
}

/// `target/<profile>`, where cargo puts the servers' binaries. The test
/// binary runs from `target/<profile>/deps/`. `cargo test --workspace` builds
/// `prompt-service` and `agent-service` before running any test (their
/// packages have integration tests); with `-p deploy-check` alone, add
/// `-p prompt-server -p agent-server` so they are built too.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The variables of a committed env file.
pub fn example_vars() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(deploy_dir().join(".env.example")).expect(".env.example");
    deploy_check::compose::parse_env_file(&text)
}

/// A free loopback port (bound, then released for the service to bind).
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// A running service process and what it printed on stderr.
pub struct Running {
    pub plan: ProcessPlan,
    child: tokio::process::Child,
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Running {
    /// Spawns the plan with exactly its environment (and without
    /// capabilities when it drops them).
    pub fn spawn(plan: &ProcessPlan) -> Self {
        let (program, args) = plan.command().expect("command");
        let mut child = tokio::process::Command::new(&program)
            .args(&args)
            .env_clear()
            .envs(&plan.env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", plan.program.display()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let pipe = child.stderr.take().expect("piped stderr");
        let lines = Arc::clone(&stderr);
        tokio::spawn(async move {
            let mut reader = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                lines.lock().expect("stderr lines").push(line);
            }
        });
        Self {
            plan: plan.clone(),
            child,
            stderr,
        }
    }

    /// What it printed so far.
    pub fn log(&self) -> String {
        self.stderr.lock().expect("stderr lines").join("\n")
    }

    /// Runs the compose health check (the binary's `healthcheck`
    /// subcommand, with the service's environment) until it passes, with
    /// backoff, for at most the compose file's start period plus retries.
    pub async fn wait_healthy(&mut self) -> Result<Duration, String> {
        let started = Instant::now();
        let (program, args) = self.plan.healthcheck_command()?.ok_or("no healthcheck")?;
        let mut backoff = Duration::from_millis(25);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "{} exited with {status} before it was healthy",
                    self.plan.service
                ));
            }
            let status = tokio::process::Command::new(&program)
                .args(&args)
                .env_clear()
                .envs(&self.plan.env)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .await
                .map_err(|e| format!("healthcheck: {e}"))?;
            if status.success() {
                return Ok(started.elapsed());
            }
            if started.elapsed() > self.plan.health_deadline {
                return Err(format!(
                    "{} not healthy after {:?}",
                    self.plan.service, self.plan.health_deadline
                ));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(1));
        }
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<i32> {
        self.child.id().and_then(|p| i32::try_from(p).ok())
    }

    /// Waits at most the stop grace period for the process to exit by itself.
    pub async fn wait(&mut self) -> Result<std::process::ExitStatus, String> {
        tokio::time::timeout(self.plan.stop_grace, self.child.wait())
            .await
            .map_err(|_| {
                format!(
                    "{} still running after {:?}",
                    self.plan.service, self.plan.stop_grace
                )
            })?
            .map_err(|e| e.to_string())
    }

    /// Sends SIGTERM and waits at most the stop grace period for the exit.
    pub async fn terminate(&mut self) -> Result<std::process::ExitStatus, String> {
        let pid = self.child.id().ok_or("already exited")?;
        let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).map_err(|e| e.to_string())?);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM)
            .map_err(|e| format!("SIGTERM: {e}"))?;
        self.wait().await
    }
}

/// A temporary directory for [`deploy_check::native::Layout::root`]: the
/// plans leave parts of it read-only, so it is unlocked before it is
/// deleted (as a user without capabilities could not delete it otherwise).
pub struct Root(pub tempfile::TempDir);

impl Root {
    pub fn new() -> Self {
        Self(tempfile::tempdir().expect("tempdir"))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = deploy_check::native::unlock(self.0.path());
    }
}

/// GET `/metrics` on a loopback port.
pub async fn scrape(port: u16) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| panic!("connect to metrics port {port}: {e}"));
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .expect("send request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("read response");
    let (head, body) = response.split_once("\r\n\r\n").expect("HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    body.to_owned()
}

/// One sample of Prometheus text exposition.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// The samples of an exposition (comments skipped).
pub fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("name value");
            let (name, labels) = match series.split_once('{') {
                Some((name, rest)) => (name, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = labels
                .split("\",")
                .filter(|p| !p.is_empty())
                .map(|pair| {
                    let (k, v) = pair.split_once("=\"").expect("k=\"v\"");
                    (k.to_owned(), v.trim_end_matches('"').to_owned())
                })
                .collect();
            Sample {
                name: name.to_owned(),
                labels,
                value: value.parse().expect("sample value"),
            }
        })
        .collect()
}

/// The value of the one sample named `name` whose labels include `labels`.
pub fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let matching: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .collect();
    match matching.as_slice() {
        [one] => Some(one.value),
        [] => None,
        many => panic!(
            "{} samples of {name} match {labels:?}: {many:?}",
            many.len()
        ),
    }
}

//! One service binary as a child process on a fixed loopback port: started
//! and waited for until its gRPC health check says SERVING, stopped with
//! SIGTERM (and a grace period) or SIGKILL, started again on the same port so
//! clients and agent-service reconnect by themselves.

use std::{
    fs::{File, OpenOptions},
    io::{Read, Seek, SeekFrom, Write},
    path::PathBuf,
    process::Stdio,
    time::{Duration, Instant},
};

use nix::{sys::signal, unistd::Pid};

use crate::error::SoakError;

/// How long a start may take before the soak gives up.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of the log quoted when a start fails.
const LOG_TAIL: u64 = 2048;

/// How to stop a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// SIGTERM, then SIGKILL if it is still running after the grace.
    Term(Duration),
    /// SIGKILL at once.
    Kill,
}

/// How a stopped service exited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exit {
    /// The exit status, or why there is none.
    pub status: String,
    /// Exit code 0 within the grace (always false for SIGKILL).
    pub clean: bool,
    /// From the signal to the exit.
    pub took: Duration,
}

/// A service binary and how it is run.
pub(crate) struct Service {
    pub name: &'static str,
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    port: u16,
    log: PathBuf,
    child: Option<tokio::process::Child>,
}

impl Service {
    pub(crate) fn new(
        name: &'static str,
        program: PathBuf,
        args: Vec<String>,
        env: Vec<(String, String)>,
        port: u16,
        log: PathBuf,
    ) -> Self {
        Self {
            name,
            program,
            args,
            env,
            port,
            log,
            child: None,
        }
    }

    /// The running process's id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(tokio::process::Child::id)
    }

    /// `http://127.0.0.1:<port>`.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Spawns the binary and waits until it reports SERVING. A port taken
    /// by someone else in the meantime is retried a few times (the port is
    /// fixed: clients reconnect to it).
    pub(crate) async fn start(&mut self) -> Result<Duration, SoakError> {
        let began = Instant::now();
        let mut last = String::new();
        for _ in 0..5 {
            let mut child = self.spawn()?;
            match self.wait_serving(&mut child, began).await {
                Ok(()) => {
                    self.child = Some(child);
                    return Ok(began.elapsed());
                }
                Err(reason) => {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                    last = reason;
                    if !last.contains("Address already in use") {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
        Err(self.failed(last))
    }

    fn spawn(&self) -> Result<tokio::process::Child, SoakError> {
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(SoakError::io(format!("open {}", self.log.display())))?;
        writeln!(log, "=== openclaw-soak: starting {} ===", self.name)
            .map_err(SoakError::io(format!("write {}", self.log.display())))?;
        let stderr = log
            .try_clone()
            .map_err(SoakError::io(format!("clone {}", self.log.display())))?;
        tokio::process::Command::new(&self.program)
            .args(&self.args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(stderr))
            // Whatever happens to the soak, no service outlives it.
            .kill_on_drop(true)
            .spawn()
            .map_err(SoakError::io(format!("spawn {}", self.program.display())))
    }

    async fn wait_serving(
        &self,
        child: &mut tokio::process::Child,
        began: Instant,
    ) -> Result<(), String> {
        let endpoint = self.endpoint();
        let mut backoff = Duration::from_millis(20);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("exited with {status} before it was serving"));
            }
            if let Ok(true) = service_kit::probe(&endpoint, "", Duration::from_secs(2)).await {
                return Ok(());
            }
            if began.elapsed() > START_TIMEOUT {
                return Err(format!("not serving after {START_TIMEOUT:?}"));
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(250));
        }
    }

    /// Stops the running process; `None` when it was not running.
    pub(crate) async fn stop(&mut self, how: Stop) -> Result<Option<Exit>, SoakError> {
        let Some(mut child) = self.child.take() else {
            return Ok(None);
        };
        let began = Instant::now();
        let exit = match how {
            Stop::Kill => {
                child
                    .start_kill()
                    .map_err(SoakError::io(format!("SIGKILL {}", self.name)))?;
                let status = child
                    .wait()
                    .await
                    .map_err(SoakError::io(format!("wait for {}", self.name)))?;
                Exit {
                    status: status.to_string(),
                    clean: false,
                    took: began.elapsed(),
                }
            }
            Stop::Term(grace) => {
                let pid = child
                    .id()
                    .and_then(|id| i32::try_from(id).ok())
                    .map(Pid::from_raw);
                if let Some(pid) = pid {
                    signal::kill(pid, signal::Signal::SIGTERM)
                        .map_err(|e| self.failed(format!("SIGTERM failed: {e}")))?;
                }
                match tokio::time::timeout(grace, child.wait()).await {
                    Ok(status) => {
                        let status =
                            status.map_err(SoakError::io(format!("wait for {}", self.name)))?;
                        Exit {
                            status: status.to_string(),
                            clean: status.success(),
                            took: began.elapsed(),
                        }
                    }
                    Err(_) => {
                        let _ = child.start_kill();
                        let _ = child.wait().await;
                        Exit {
                            status: format!("still running {grace:?} after SIGTERM; killed"),
                            clean: false,
                            took: began.elapsed(),
                        }
                    }
                }
            }
        };
        Ok(Some(exit))
    }

    fn failed(&self, reason: String) -> SoakError {
        SoakError::Service {
            service: self.name,
            reason: format!(
                "{reason}\n--- last lines of {} ---\n{}",
                self.log.display(),
                log_tail(&self.log)
            ),
        }
    }
}

/// The end of a log file, for error messages.
fn log_tail(path: &std::path::Path) -> String {
    let mut text = String::new();
    if let Ok(mut file) = File::open(path) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL)));
        let mut bytes = Vec::new();
        let _ = file.read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    text
}

/// A loopback port that was free a moment ago.
pub(crate) fn free_port() -> Result<u16, SoakError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(SoakError::io("find a free loopback port"))
}

//! prompt-service and agent-service as the soak runs them: both binaries on
//! fixed loopback ports over one work directory, the faults applied to them,
//! and the log of agent-service incarnations (each start is a new one) that
//! lets the reconciliation say which process acknowledged a message and how
//! that process ended.

use std::{
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use crate::{
    damage,
    error::SoakError,
    faults::{FaultKind, FaultRecord},
    model::FakeModel,
    procs,
    report::CodexChildren,
    services::{Exit, Service, Stop, free_port},
};

/// How long the children of a stopped agent-service may take to exit by
/// themselves (a Codex app-server exits at the end of its stdin) before the
/// soak kills them as orphans.
const ORPHAN_WAIT: Duration = Duration::from_secs(5);
/// How long a Codex kill waits for a child of agent-service to appear (the
/// first turn after a start or a kill spawns the app-server).
const CHILD_WAIT: Duration = Duration::from_secs(10);
/// How long after a hung-model window a new model request must arrive: the provider's
/// timeouts and retries (see [`crate::model::PROVIDER_TIMEOUTS`]) end every hung call well
/// within it.
const RESUME_WAIT: Duration = Duration::from_secs(30);

/// The soak's time origin: offsets since the start, and wall-clock
/// timestamps (transcript entries carry those) mapped onto the same axis.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin: Instant,
    pub(crate) wall: jiff::Timestamp,
}

impl Clock {
    pub(crate) fn start() -> Self {
        Self {
            origin: Instant::now(),
            wall: jiff::Timestamp::now(),
        }
    }

    /// Time since the soak began.
    pub(crate) fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    /// A transcript timestamp (RFC 3339) as an offset since the soak began;
    /// `None` when it does not parse or lies before the start.
    pub(crate) fn offset_of(&self, rfc3339: &str) -> Option<Duration> {
        let at: jiff::Timestamp = rfc3339.parse().ok()?;
        let span = at.duration_since(self.wall);
        Duration::try_from(span).ok()
    }
}

/// How an agent-service process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Ending {
    /// A SIGTERM fault.
    Sigterm,
    /// A SIGKILL fault.
    Sigkill,
    /// The soak's own clean stop (SIGTERM) at the end.
    Shutdown,
}

impl Ending {
    /// How it is printed.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sigterm => "SIGTERM",
            Self::Sigkill => "SIGKILL",
            Self::Shutdown => "the final clean shutdown",
        }
    }
}

/// One agent-service process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incarnation {
    /// 1-based start number.
    pub number: u64,
    /// When it was started.
    pub started_at: Duration,
    /// When it was signalled to stop.
    pub ended_at: Option<Duration>,
    /// How.
    pub ended_by: Option<Ending>,
}

/// Where the services keep their files.
pub(crate) struct Layout {
    pub state_dir: PathBuf,
    pub config: PathBuf,
    pub home: PathBuf,
    pub logs: PathBuf,
}

impl Layout {
    pub(crate) fn under(work: &Path) -> Result<Self, SoakError> {
        let layout = Self {
            state_dir: work.join("state"),
            config: work.join("openclaw.json"),
            home: work.join("home"),
            logs: work.join("logs"),
        };
        for dir in [&layout.state_dir, &layout.home, &layout.logs] {
            std::fs::create_dir_all(dir)
                .map_err(SoakError::io(format!("create {}", dir.display())))?;
        }
        Ok(layout)
    }
}

/// How the services are launched.
pub(crate) struct Launch<'a> {
    pub prompt_bin: PathBuf,
    pub agent_bin: PathBuf,
    pub layout: &'a Layout,
    pub drain_secs: u64,
    pub extra_env: &'a [(String, String)],
    /// How long a prompt-service outage lasts.
    pub prompt_outage: Duration,
    /// How long a hung-model fault lasts.
    pub model_hang: Duration,
}

/// Both services and what happened to them.
pub(crate) struct Cluster {
    prompt: Service,
    agent: Service,
    clock: Clock,
    grace: Duration,
    current: Arc<AtomicU64>,
    pub incarnations: Vec<Incarnation>,
    /// The agent's sessions directory (the damage faults write there).
    sessions_dir: PathBuf,
    prompt_outage: Duration,
    model_hang: Duration,
    /// Damage faults so far (picks the next variant and victim).
    damage: u64,
    /// What became of agent-service's child processes.
    pub children: CodexChildren,
}

impl Cluster {
    pub(crate) fn new(launch: &Launch<'_>, clock: Clock) -> Result<Self, SoakError> {
        let (prompt_port, agent_port) = (free_port()?, free_port()?);
        let mut env = vec![
            (
                "PATH".to_owned(),
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned()),
            ),
            ("HOME".to_owned(), launch.layout.home.display().to_string()),
            (
                "RUST_LOG".to_owned(),
                std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_owned()),
            ),
        ];
        env.extend(launch.extra_env.iter().cloned());
        let drain = launch.drain_secs.to_string();
        let prompt = Service::new(
            "prompt-service",
            launch.prompt_bin.clone(),
            vec![
                "--listen".into(),
                format!("127.0.0.1:{prompt_port}"),
                "--drain-secs".into(),
                drain.clone(),
            ],
            env.clone(),
            prompt_port,
            launch.layout.logs.join("prompt-service.log"),
        );
        let agent = Service::new(
            "agent-service",
            launch.agent_bin.clone(),
            vec![
                "--listen".into(),
                format!("127.0.0.1:{agent_port}"),
                "--state-dir".into(),
                launch.layout.state_dir.display().to_string(),
                "--config".into(),
                launch.layout.config.display().to_string(),
                "--prompt-service".into(),
                prompt.endpoint(),
                "--drain-secs".into(),
                drain,
            ],
            env,
            agent_port,
            launch.layout.logs.join("agent-service.log"),
        );
        Ok(Self {
            prompt,
            agent,
            clock,
            // The drain, then the flush of every session, then a margin.
            grace: Duration::from_secs(launch.drain_secs + 15),
            current: Arc::new(AtomicU64::new(0)),
            incarnations: Vec::new(),
            sessions_dir: launch
                .layout
                .state_dir
                .join("agents")
                .join(crate::transcripts::AGENT)
                .join("sessions"),
            prompt_outage: launch.prompt_outage,
            model_hang: launch.model_hang,
            damage: 0,
            children: CodexChildren::default(),
        })
    }

    /// agent-service's endpoint.
    pub(crate) fn agent_endpoint(&self) -> String {
        self.agent.endpoint()
    }

    /// The number of the agent-service incarnation connections reach now.
    pub(crate) fn current(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.current)
    }

    /// Starts prompt-service, then agent-service.
    pub(crate) async fn start(&mut self) -> Result<(), SoakError> {
        self.prompt.start().await?;
        self.start_agent().await.map(drop)
    }

    async fn start_agent(&mut self) -> Result<Duration, SoakError> {
        let number = u64::try_from(self.incarnations.len()).unwrap_or(u64::MAX) + 1;
        // Set before the spawn: the old process is gone, so any connection
        // made from now on reaches the new one.
        self.current.store(number, Ordering::SeqCst);
        self.incarnations.push(Incarnation {
            number,
            started_at: self.clock.now(),
            ended_at: None,
            ended_by: None,
        });
        self.agent.start().await
    }

    /// Stops agent-service, then waits for its children (its Codex
    /// app-server) to exit by themselves, killing those that do not as
    /// orphans.
    async fn stop_agent(&mut self, how: Stop, ending: Ending) -> Result<Option<Exit>, SoakError> {
        let at = self.clock.now();
        let children = self.agent.pid().map(procs::descendants).unwrap_or_default();
        let names: Vec<String> = children.iter().map(|&pid| procs::name_of(pid)).collect();
        let exit = self.agent.stop(how).await?;
        let stayed = procs::wait_gone(&children, ORPHAN_WAIT).await;
        self.children.exited_with_agent += children.len() - stayed.len();
        procs::kill_all(&stayed);
        for (pid, name) in children.iter().zip(&names) {
            if stayed.contains(pid) {
                self.children.orphans_killed.push(format!(
                    "{pid} ({name}), still running {ORPHAN_WAIT:?} after agent-service was stopped by {}",
                    ending.name()
                ));
            }
        }
        if let Some(last) = self.incarnations.last_mut()
            && last.ended_by.is_none()
        {
            last.ended_at = Some(at);
            last.ended_by = Some(ending);
        }
        Ok(exit)
    }

    /// Stops both cleanly (agent-service first, so its runs can still
    /// render); returns the exits that were not clean.
    pub(crate) async fn stop(&mut self) -> Result<Vec<String>, SoakError> {
        let mut unclean = Vec::new();
        let agent = self
            .stop_agent(Stop::Term(self.grace), Ending::Shutdown)
            .await?;
        let prompt = self.prompt.stop(Stop::Term(self.grace)).await?;
        for (name, exit) in [("agent-service", agent), ("prompt-service", prompt)] {
            if let Some(exit) = exit.filter(|e| !e.clean) {
                unclean.push(format!("{name} at the final stop: {}", exit.status));
            }
        }
        Ok(unclean)
    }

    /// Applies one fault and brings the service back.
    pub(crate) async fn inject(
        &mut self,
        kind: FaultKind,
        model: &FakeModel,
    ) -> Result<FaultRecord, SoakError> {
        let at = self.clock.now();
        let began = Instant::now();
        let mut observed = None;
        let killed_before = self.children.killed_by_faults;
        let (exit, ended) = match kind {
            FaultKind::CorruptIndex | FaultKind::CorruptJournal => {
                let ended = self.current.load(Ordering::SeqCst);
                let exit = self.stop_agent(Stop::Kill, Ending::Sigkill).await?;
                self.damage += 1;
                let check = if kind == FaultKind::CorruptIndex {
                    damage::corrupt_index(&self.sessions_dir, self.damage)
                } else {
                    damage::poison_journal(&self.sessions_dir, self.damage)
                };
                self.start_agent().await?;
                observed = Some(check.and_then(|check| check.verify()));
                (exit, Some(ended))
            }
            FaultKind::PromptOutage => {
                let exit = self.prompt.stop(Stop::Term(self.grace)).await?;
                let down = Instant::now();
                let dropped = self.readiness_becomes(false, self.prompt_outage).await;
                let rest = self.prompt_outage.saturating_sub(down.elapsed());
                tokio::time::sleep(rest).await;
                self.prompt.start().await?;
                let returned = self.readiness_becomes(true, Duration::from_secs(30)).await;
                observed = Some(match (dropped, returned) {
                    (Some(dropped), Some(returned)) => Ok(format!(
                        "agent-service NOT_SERVING {:.2} s into a {:.0} s outage, SERVING {:.2} s after prompt-service returned",
                        dropped.as_secs_f64(),
                        self.prompt_outage.as_secs_f64(),
                        returned.as_secs_f64()
                    )),
                    (None, _) => Err(format!(
                        "agent-service stayed SERVING through a {:.0} s prompt-service outage",
                        self.prompt_outage.as_secs_f64()
                    )),
                    (_, None) => Err("agent-service did not become SERVING within 30 s of prompt-service's return".to_owned()),
                });
                (exit, None)
            }
            FaultKind::SigtermAgent | FaultKind::SigkillAgent => {
                let (how, ending) = if kind == FaultKind::SigkillAgent {
                    (Stop::Kill, Ending::Sigkill)
                } else {
                    (Stop::Term(self.grace), Ending::Sigterm)
                };
                let ended = self.current.load(Ordering::SeqCst);
                let exit = self.stop_agent(how, ending).await?;
                self.start_agent().await?;
                (exit, Some(ended))
            }
            FaultKind::RestartPrompt => {
                let exit = self.prompt.stop(Stop::Term(self.grace)).await?;
                self.prompt.start().await?;
                (exit, None)
            }
            FaultKind::HungModel => {
                let (exit, check) = self.hang_model(model).await;
                observed = Some(check);
                (Some(exit), None)
            }
            FaultKind::SigkillCodex => {
                let (exit, check) = self.kill_children().await;
                observed = Some(check);
                (Some(exit), None)
            }
        };
        let killed_children = if kind == FaultKind::SigkillCodex {
            self.children.killed_by_faults - killed_before
        } else {
            0
        };
        let exit = exit.unwrap_or(Exit {
            status: "was not running".to_owned(),
            clean: false,
            took: Duration::ZERO,
        });
        Ok(FaultRecord {
            kind,
            at,
            stop_took: exit.took,
            downtime: began.elapsed(),
            clean_exit: exit.clean
                || matches!(
                    kind,
                    FaultKind::SigkillAgent | FaultKind::CorruptIndex | FaultKind::CorruptJournal
                ),
            exit_status: exit.status,
            ended_incarnation: ended,
            killed_children,
            observed,
        })
    }

    /// SIGKILLs every descendant of agent-service, waiting first (bounded)
    /// for one to exist; agent-service keeps running. The exit is the count
    /// killed; the check fails when a killed process does not go away.
    async fn kill_children(&mut self) -> (Exit, Result<String, String>) {
        let began = Instant::now();
        let Some(agent) = self.agent.pid() else {
            let exit = Exit {
                status: "agent-service was not running".to_owned(),
                clean: false,
                took: Duration::ZERO,
            };
            return (exit, Err("agent-service was not running".to_owned()));
        };
        while procs::descendants(agent).is_empty() && began.elapsed() < CHILD_WAIT {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let signalled = Instant::now();
        let (killed, named): (Vec<u32>, Vec<String>) = procs::kill_descendants(agent)
            .into_iter()
            .map(|(pid, name)| (pid, format!("{pid} ({name})")))
            .unzip();
        let stayed = procs::wait_gone(&killed, ORPHAN_WAIT).await;
        let took = signalled.elapsed();
        self.children.killed_by_faults += killed.len();
        let exit = Exit {
            status: format!("{} process(es) SIGKILLed", killed.len()),
            clean: true,
            took,
        };
        let check = if killed.is_empty() {
            Ok(format!(
                "no child of agent-service ran within {CHILD_WAIT:?}; nothing was killed"
            ))
        } else if stayed.is_empty() {
            Ok(format!(
                "killed {} (agent-service kept serving)",
                named.join(", ")
            ))
        } else {
            Err(format!(
                "{stayed:?} still running {ORPHAN_WAIT:?} after SIGKILL"
            ))
        };
        (exit, check)
    }

    /// Hangs the fake model for the hang window, then checks that model requests resume:
    /// runs that met the hang must have given up on their hung calls (the provider's
    /// first-byte and idle timeouts, the retries, the run's deadline) instead of waiting on
    /// them. The exit is the count of requests hung.
    async fn hang_model(&mut self, model: &FakeModel) -> (Exit, Result<String, String>) {
        let began = Instant::now();
        let hung_before = model.hung();
        model.hang(true);
        tokio::time::sleep(self.model_hang).await;
        model.hang(false);
        let hung = model.hung() - hung_before;
        let after = model.requests();
        let resumed = Instant::now();
        while model.requests() == after && resumed.elapsed() < RESUME_WAIT {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let exit = Exit {
            status: format!("{hung} model request(s) hung"),
            clean: true,
            took: began.elapsed(),
        };
        let check = if model.requests() > after {
            Ok(format!(
                "{hung} model request(s) hung during the {:.0} s window (no answer, or a stream stopped after its first delta); requests resumed {:.2} s after it",
                self.model_hang.as_secs_f64(),
                resumed.elapsed().as_secs_f64()
            ))
        } else {
            Err(format!(
                "no model request within {RESUME_WAIT:?} after a {:.0} s hang ({hung} hung): runs are waiting on hung calls",
                self.model_hang.as_secs_f64()
            ))
        };
        (exit, check)
    }

    /// Waits until agent-service's readiness (the AgentService health status) is `serving`;
    /// how long that took, or `None` when it did not within `within`.
    async fn readiness_becomes(&self, serving: bool, within: Duration) -> Option<Duration> {
        let began = Instant::now();
        let endpoint = self.agent.endpoint();
        while began.elapsed() < within {
            let now = service_kit::probe(
                &endpoint,
                "openclaw.agent.v1.AgentService",
                Duration::from_secs(1),
            )
            .await;
            if now.ok() == Some(serving) {
                return Some(began.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_timestamps_map_onto_the_soak_clock() {
        let clock = Clock::start();
        let later = clock.wall + jiff::SignedDuration::from_millis(1500);
        let offset = clock.offset_of(&later.to_string()).expect("parses");
        assert_eq!(offset, Duration::from_millis(1500));
        let earlier = clock.wall - jiff::SignedDuration::from_secs(1);
        assert_eq!(clock.offset_of(&earlier.to_string()), None);
        assert_eq!(clock.offset_of("not a time"), None);
    }
}

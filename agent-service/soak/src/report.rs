//! What a soak measured and found, and how it is printed.

use std::{collections::BTreeMap, fmt, path::PathBuf, time::Duration};

use crate::{
    client::RunEnds,
    cluster::Incarnation,
    faults::{FaultKind, FaultRecord},
    reconcile::Reconciliation,
    soak::Runtime,
};

/// Examples printed per finding list.
const EXAMPLES: usize = 8;

/// What became of agent-service's child processes (its Codex app-servers
/// on the Codex runtime; tool commands in flight otherwise).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodexChildren {
    /// Processes the Codex-kill faults SIGKILLed.
    pub killed_by_faults: usize,
    /// Children of a stopped agent-service that exited by themselves (at
    /// the end of their stdin, or in agent-service's shutdown).
    pub exited_with_agent: usize,
    /// Children still running a while after their agent-service was
    /// stopped, which the soak killed: "pid (name), why".
    pub orphans_killed: Vec<String>,
    /// Processes carrying the soak's Codex home still running after the
    /// last agent-service stopped, which the soak killed: "pid (name)".
    pub left_at_end: Vec<String>,
}

/// The result of one soak.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The runtime the agent ran on.
    pub runtime: Runtime,
    /// How long the clients sent messages.
    pub load_time: Duration,
    /// Clients.
    pub clients: usize,
    /// Session keys used.
    pub sessions: usize,
    /// Attempts made (first tries and retries).
    pub attempts: u64,
    /// Acknowledged attempts by disposition.
    pub acked_by_outcome: BTreeMap<String, u64>,
    /// Acknowledged attempts by API.
    pub acked_by_api: BTreeMap<String, u64>,
    /// Unacknowledged attempts by gRPC code (or client-side reason).
    pub attempt_failures: BTreeMap<String, u64>,
    /// How the followed `Run` streams ended.
    pub runs: RunEnds,
    /// Requests the fake model served.
    pub model_requests: u64,
    /// Every fault, in order.
    pub faults: Vec<FaultRecord>,
    /// Every agent-service process.
    pub incarnations: Vec<Incarnation>,
    /// Stops that did not end in exit code 0 within the grace.
    pub unclean_exits: Vec<String>,
    /// The reconciliation.
    pub check: Reconciliation,
    /// Poison messages sent and what became of them.
    pub poison: crate::client::Poison,
    /// Sessions probed with one more message after the soak.
    pub probed: usize,
    /// Sessions that did not answer it (wedged), with why.
    pub wedged: Vec<String>,
    /// agent-service's child processes.
    pub codex: CodexChildren,
    /// The work directory, when it was kept.
    pub work_dir: Option<PathBuf>,
}

impl Report {
    /// Acknowledged messages per second of load.
    pub fn acked_per_second(&self) -> f64 {
        let seconds = self.load_time.as_secs_f64();
        if seconds > 0.0 {
            self.check.acknowledged as f64 / seconds
        } else {
            0.0
        }
    }

    /// Faults of one kind.
    pub fn faults_of(&self, kind: FaultKind) -> usize {
        self.faults.iter().filter(|f| f.kind == kind).count()
    }

    /// Why the soak failed; empty for a pass.
    pub fn failures(&self) -> Vec<String> {
        let c = &self.check;
        let mut out = Vec::new();
        let mut add = |count: usize, what: &str| {
            if count > 0 {
                out.push(format!("{count} {what}"));
            }
        };
        add(c.lost.len(), "acknowledged message(s) lost");
        add(c.duplicated.len(), "message(s) duplicated");
        add(c.misplaced.len(), "message(s) in the wrong session");
        add(
            c.key_moved.len(),
            "message(s) whose session key moved to another session",
        );
        add(
            c.rpc_mismatches.len(),
            "difference(s) between GetTranscript and the files",
        );
        add(c.torn_tails.len(), "torn tail(s) after a clean shutdown");
        add(c.bad_lines.len(), "skipped transcript line(s)");
        add(
            c.pairing_failures.len(),
            "tool call/result pairing failure(s)",
        );
        add(self.unclean_exits.len(), "unclean exit(s) after SIGTERM");
        add(
            self.poison.acknowledged.len(),
            "poison message(s) acknowledged",
        );
        add(self.wedged.len(), "wedged session(s)");
        add(
            self.codex.orphans_killed.len() + self.codex.left_at_end.len(),
            "child process(es) of agent-service that outlived it",
        );
        add(
            self.faults
                .iter()
                .filter(|f| matches!(f.observed, Some(Err(_))))
                .count(),
            "fault check(s) failed (readiness, index rebuild, quarantine)",
        );
        if c.acknowledged == 0 {
            out.push("no message was acknowledged".to_owned());
        }
        out
    }

    /// No failures.
    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }
}

fn secs(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64())
}

fn join(map: &BTreeMap<String, u64>) -> String {
    if map.is_empty() {
        return "none".to_owned();
    }
    map.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(f: &mut fmt::Formatter<'_>, title: &str, items: &[String]) -> fmt::Result {
    if items.is_empty() {
        return Ok(());
    }
    writeln!(f, "  {title} ({}):", items.len())?;
    for item in items.iter().take(EXAMPLES) {
        writeln!(f, "    - {item}")?;
    }
    if items.len() > EXAMPLES {
        writeln!(f, "    - ... {} more", items.len() - EXAMPLES)?;
    }
    Ok(())
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.check;
        writeln!(
            f,
            "openclaw-soak: {} s of load, {} clients, {} sessions, {} runtime",
            secs(self.load_time),
            self.clients,
            self.sessions,
            self.runtime.name()
        )?;
        writeln!(
            f,
            "load held: {:.1} messages/s acknowledged ({} acknowledged in {} attempts)",
            self.acked_per_second(),
            c.acknowledged,
            self.attempts
        )?;
        writeln!(f, "  acknowledged as: {}", join(&self.acked_by_outcome))?;
        writeln!(f, "  acknowledged through: {}", join(&self.acked_by_api))?;
        writeln!(f, "  not acknowledged: {}", join(&self.attempt_failures))?;
        writeln!(
            f,
            "  Run streams followed: {} final, {} error, {} cut; fake model requests: {}",
            self.runs.finished, self.runs.failed, self.runs.cut, self.model_requests
        )?;
        let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
        for kind in FaultKind::ALL {
            if kind.applies_to(self.runtime) {
                by_kind.insert(kind.name().to_owned(), self.faults_of(kind) as u64);
            }
        }
        writeln!(f, "faults injected: {}", join(&by_kind))?;
        for fault in &self.faults {
            writeln!(
                f,
                "  +{:>6} s  {:<32} stopped in {} s, serving again after {} s, exit: {}{}{}",
                secs(fault.at),
                fault.kind.name(),
                secs(fault.stop_took),
                secs(fault.downtime),
                fault.exit_status,
                fault
                    .ended_incarnation
                    .map(|n| format!(" (agent-service #{n})"))
                    .unwrap_or_default(),
                match &fault.observed {
                    None => String::new(),
                    Some(Ok(what)) => format!("; {what}"),
                    Some(Err(what)) => format!("; FAILED: {what}"),
                }
            )?;
        }
        list(f, "unclean exits", &self.unclean_exits)?;
        writeln!(
            f,
            "messages: acknowledged {}, found {}, duplicated {}, lost {}",
            c.acknowledged,
            c.found,
            c.duplicated.len(),
            c.lost.len()
        )?;
        let mut categories: BTreeMap<String, u64> = BTreeMap::new();
        for lost in &c.lost {
            *categories.entry(lost.category()).or_default() += 1;
        }
        for (category, count) in &categories {
            writeln!(f, "  lost {count}: {category}")?;
        }
        let lost: Vec<String> = c
            .lost
            .iter()
            .map(|l| {
                format!(
                    "{} in {} via {:?}: acknowledged at +{} s by agent-service #{}, which ended {} s later",
                    l.id,
                    l.session_key,
                    l.api,
                    secs(l.acked_at),
                    l.incarnation,
                    l.ended_after_ack.map_or("-".to_owned(), secs)
                )
            })
            .collect();
        list(f, "lost messages", &lost)?;
        let duplicated: Vec<String> = c
            .duplicated
            .iter()
            .map(|d| {
                format!(
                    "{}: {} copies ({}{})",
                    d.id,
                    d.copies,
                    if d.acknowledged {
                        "acknowledged"
                    } else {
                        "never acknowledged"
                    },
                    if d.retried {
                        ", sent again after an attempt failed ambiguously"
                    } else {
                        ", never retried"
                    }
                )
            })
            .collect();
        list(f, "duplicated messages", &duplicated)?;
        list(f, "in the wrong session", &c.misplaced)?;
        list(f, "session keys that moved", &c.key_moved)?;
        list(f, "GetTranscript differs from the files", &c.rpc_mismatches)?;
        writeln!(
            f,
            "  never acknowledged: {} (of which written anyway: {}); recovered only at the final restart: {}",
            c.unacknowledged,
            c.unacknowledged_written,
            c.recovered_late.len()
        )?;
        writeln!(
            f,
            "transcripts: torn tails {}, skipped lines {}, torn-tail quarantine files {}; tool calls {}, paired {}, open after a SIGKILL {}",
            c.torn_tails.len(),
            c.bad_lines.len(),
            c.quarantined.len(),
            c.tool_calls,
            c.tool_pairs,
            c.open_calls_explained.len()
        )?;
        list(f, "torn tails", &c.torn_tails)?;
        list(f, "skipped lines", &c.bad_lines)?;
        list(f, "torn-tail quarantine files", &c.quarantined)?;
        list(
            f,
            "open tool calls explained by a SIGKILL",
            &c.open_calls_explained,
        )?;
        list(f, "tool pairing failures", &c.pairing_failures)?;
        writeln!(
            f,
            "poison messages: sent {}, refused RESOURCE_EXHAUSTED {}, acknowledged {}, failed otherwise: {}",
            self.poison.sent,
            self.poison.refused,
            self.poison.acknowledged.len(),
            join(&self.poison.other)
        )?;
        list(f, "poison messages acknowledged", &self.poison.acknowledged)?;
        writeln!(
            f,
            "sessions probed after the soak: {}, wedged {}",
            self.probed,
            self.wedged.len()
        )?;
        list(f, "wedged sessions", &self.wedged)?;
        let children = &self.codex;
        if self.runtime == Runtime::Codex {
            writeln!(
                f,
                "codex processes: SIGKILLed by faults {}, exited with their agent-service {}, orphans killed {}, left at the end and killed {}",
                children.killed_by_faults,
                children.exited_with_agent,
                children.orphans_killed.len(),
                children.left_at_end.len()
            )?;
        }
        list(
            f,
            "orphaned children of agent-service",
            &children.orphans_killed,
        )?;
        list(f, "codex processes left at the end", &children.left_at_end)?;
        if let Some(dir) = &self.work_dir {
            writeln!(f, "work directory kept: {}", dir.display())?;
        }
        match self.failures().as_slice() {
            [] => write!(f, "RESULT: PASS (lost = 0, duplicated = 0, wedged = 0)"),
            failures => write!(f, "RESULT: FAIL: {}", failures.join("; ")),
        }
    }
}

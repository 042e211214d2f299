//! The faults the soak injects, their schedule, and what each one did.

use std::time::Duration;

use crate::{rng::Rng, soak::Runtime};

/// A fault the injector can cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum FaultKind {
    /// SIGTERM agent-service (it drains, saves queued messages, exits), then
    /// start it again.
    SigtermAgent,
    /// SIGKILL agent-service (no chance to save anything), then start it
    /// again.
    SigkillAgent,
    /// SIGTERM prompt-service and start it again; agent-service's renders
    /// fail or wait meanwhile.
    RestartPrompt,
    /// SIGTERM prompt-service and keep it down for the outage window: runs
    /// must fail fast with an error event and agent-service's readiness must
    /// drop, then come back when prompt-service does.
    PromptOutage,
    /// SIGKILL agent-service, damage an agent's `sessions.json` (truncated,
    /// emptied, an array, random bytes, in turn), start it again: the index
    /// must be rebuilt from the transcripts with nothing lost.
    CorruptIndex,
    /// SIGKILL agent-service, then add to one session's message journal an
    /// acknowledged message no transcript line can hold (as a process from
    /// before the size check could leave) and a torn line, start it again:
    /// the message must be set aside in the quarantine file and the session
    /// must keep working.
    CorruptJournal,
    /// SIGKILL every descendant of agent-service (its Codex app-server,
    /// whatever that started, and a tool command of agent-service's own in
    /// flight) and leave agent-service running: the turns in flight must
    /// end, and the next turn must start Codex again and resume its thread.
    /// Codex runtime only.
    SigkillCodex,
    /// The fake model accepts requests and never answers them (or stops a stream after its
    /// first delta) for the hang window: runs in flight must end within the provider's
    /// timeouts and retries with an error event, nothing lost or doubled, and model
    /// requests must resume after the window. Embedded runtime only (the soak's config gives
    /// our provider short timeouts; Codex has its own).
    HungModel,
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [Self; 8] = [
        Self::SigtermAgent,
        Self::SigkillAgent,
        Self::RestartPrompt,
        Self::PromptOutage,
        Self::CorruptIndex,
        Self::CorruptJournal,
        Self::SigkillCodex,
        Self::HungModel,
    ];

    /// The kinds injected when none are named: every kind that applies to
    /// `runtime`.
    pub fn defaults(runtime: Runtime) -> Vec<Self> {
        Self::ALL
            .into_iter()
            .filter(|kind| kind.applies_to(runtime))
            .collect()
    }

    /// Whether the fault means anything on `runtime` (there is no Codex
    /// process to kill on the embedded one).
    pub fn applies_to(self, runtime: Runtime) -> bool {
        match self {
            Self::SigkillCodex => runtime == Runtime::Codex,
            Self::HungModel => runtime == Runtime::Embedded,
            _ => true,
        }
    }

    /// How it is printed.
    pub fn name(self) -> &'static str {
        match self {
            Self::SigtermAgent => "SIGTERM agent-service + restart",
            Self::SigkillAgent => "SIGKILL agent-service + restart",
            Self::RestartPrompt => "restart prompt-service",
            Self::PromptOutage => "prompt-service outage",
            Self::CorruptIndex => "SIGKILL + corrupt sessions.json",
            Self::CorruptJournal => "SIGKILL + poison journal entry",
            Self::SigkillCodex => "SIGKILL codex app-server",
            Self::HungModel => "hung model server",
        }
    }
}

/// One injected fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRecord {
    /// The fault.
    pub kind: FaultKind,
    /// When it struck, since the soak began.
    pub at: Duration,
    /// From the signal to the process's exit.
    pub stop_took: Duration,
    /// From the signal until the service was SERVING again.
    pub downtime: Duration,
    /// The exit status (for SIGKILL, the signal).
    pub exit_status: String,
    /// False when a SIGTERM did not end in exit code 0 within the grace.
    pub clean_exit: bool,
    /// The agent-service incarnation it ended (agent-service faults).
    pub ended_incarnation: Option<u64>,
    /// Processes it SIGKILLed besides agent-service itself (its Codex
    /// children, for `SigkillCodex`).
    pub killed_children: usize,
    /// What the fault checked on its own (readiness during an outage, the
    /// damage done), in words; `Err` when that check failed.
    pub observed: Option<Result<String, String>>,
}

/// Picks the next fault and the pause before it: first every enabled kind
/// once in a random order (so even a short soak sees each), then kinds at
/// random.
pub(crate) struct Schedule {
    kinds: Vec<FaultKind>,
    first_round: Vec<FaultKind>,
    interval: (Duration, Duration),
    rng: Rng,
}

impl Schedule {
    pub(crate) fn new(kinds: &[FaultKind], interval: (Duration, Duration), rng: Rng) -> Self {
        let mut kinds = kinds.to_vec();
        kinds.sort();
        kinds.dedup();
        Self {
            first_round: kinds.clone(),
            kinds,
            interval,
            rng,
        }
    }

    /// The pause before the next fault and the fault; `None` when no kind
    /// is enabled.
    pub(crate) fn next(&mut self) -> Option<(Duration, FaultKind)> {
        let pool = if self.first_round.is_empty() {
            &self.kinds
        } else {
            &self.first_round
        };
        let len = u64::try_from(pool.len()).unwrap_or(0);
        let index = usize::try_from(self.rng.below(len)).unwrap_or(0);
        let kind = *pool.get(index)?;
        if !self.first_round.is_empty() {
            self.first_round.remove(index);
        }
        Some((self.rng.between(self.interval.0, self.interval.1), kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_comes_once_before_any_repeats() {
        for seed in 0..50 {
            let interval = (Duration::from_millis(10), Duration::from_millis(20));
            let mut schedule = Schedule::new(&FaultKind::ALL, interval, Rng::new(seed));
            let mut first: Vec<FaultKind> = (0..FaultKind::ALL.len())
                .map(|_| schedule.next().expect("a fault").1)
                .collect();
            first.sort();
            assert_eq!(first, FaultKind::ALL);
            let (pause, _) = schedule.next().expect("more faults");
            assert!(pause >= interval.0 && pause <= interval.1);
        }
        let mut none = Schedule::new(&[], (Duration::ZERO, Duration::ZERO), Rng::new(1));
        assert_eq!(none.next(), None);
    }

    #[test]
    fn the_codex_kill_and_the_hung_model_are_defaults_of_one_runtime_each() {
        let embedded = FaultKind::defaults(Runtime::Embedded);
        assert!(!embedded.contains(&FaultKind::SigkillCodex));
        assert!(embedded.contains(&FaultKind::HungModel));
        assert_eq!(embedded.len(), FaultKind::ALL.len() - 1);
        let codex = FaultKind::defaults(Runtime::Codex);
        assert!(codex.contains(&FaultKind::SigkillCodex));
        assert!(!codex.contains(&FaultKind::HungModel));
        assert_eq!(codex.len(), FaultKind::ALL.len() - 1);
    }
}

//! The faults the soak injects, their schedule, and what each one did.

use std::time::Duration;

use crate::rng::Rng;

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
}

impl FaultKind {
    /// Every kind.
    pub const ALL: [Self; 3] = [Self::SigtermAgent, Self::SigkillAgent, Self::RestartPrompt];

    /// How it is printed.
    pub fn name(self) -> &'static str {
        match self {
            Self::SigtermAgent => "SIGTERM agent-service + restart",
            Self::SigkillAgent => "SIGKILL agent-service + restart",
            Self::RestartPrompt => "restart prompt-service",
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
            let mut first: Vec<FaultKind> = (0..3)
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
}

//! A small seeded generator (SplitMix64). Given `--seed`, every choice the
//! soak makes (message texts, modes, APIs, model replies, fault order and
//! intervals) repeats; only the timing of the machine varies.

use std::time::Duration;

/// SplitMix64: tiny, fast and good enough to pick test inputs.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// True with probability `percent`/100.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// Uniform in `low..=high` at millisecond resolution.
    pub(crate) fn between(&mut self, low: Duration, high: Duration) -> Duration {
        let (low_ms, high_ms) = (millis(low), millis(high.max(low)));
        Duration::from_millis(low_ms + self.below(high_ms - low_ms + 1))
    }

    /// An index picked with the given weights (the last one when all are 0).
    pub(crate) fn weighted(&mut self, weights: &[u64]) -> usize {
        let mut roll = self.below(weights.iter().sum());
        for (index, weight) in weights.iter().enumerate() {
            if roll < *weight {
                return index;
            }
            roll -= weight;
        }
        weights.len().saturating_sub(1)
    }

    /// An independent generator for a sub-task.
    pub(crate) fn fork(&mut self) -> Self {
        Self(self.next_u64())
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_choices_and_bounds_hold() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            let d = a.between(Duration::from_millis(5), Duration::from_millis(9));
            assert_eq!(
                d,
                b.between(Duration::from_millis(5), Duration::from_millis(9))
            );
            assert!((5..=9).contains(&d.as_millis()));
            seen.insert(d.as_millis());
            let below = a.below(3);
            assert_eq!(below, b.below(3));
            assert!(below < 3);
            let picked = a.weighted(&[0, 2, 0, 1]);
            assert_eq!(picked, b.weighted(&[0, 2, 0, 1]));
            assert!(picked % 2 == 1, "a zero weight was picked: {picked}");
        }
        // Every value of the range comes up.
        assert_eq!(seen.len(), 5);
        assert_eq!(a.below(0), 0);
        // Different seeds differ.
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }
}

//! The time source. Every timestamp this crate writes comes from a [`Clock`] so tests are
//! deterministic.

use jiff::Timestamp;

/// Where "now" comes from.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that always returns the same instant.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Timestamp);

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}

/// RFC 3339 in UTC with millisecond precision (`2026-07-05T12:34:56.789Z`), the shape
/// JavaScript's `toISOString` produces, so our files and OpenClaw's look alike.
pub fn rfc3339(at: Timestamp) -> String {
    format!("{at:.3}")
}

/// [`rfc3339`] with `:` replaced by `-`, for file names.
pub(crate) fn file_stamp(at: Timestamp) -> String {
    rfc3339(at).replace(':', "-")
}

/// Milliseconds since the Unix epoch, the unit of message and index timestamps.
pub fn unix_millis(at: Timestamp) -> i64 {
    at.as_millisecond()
}

mod plan;
mod schedule;
mod store;

use jiff::{Timestamp, tz::TimeZone};

/// An instant from RFC 3339 text.
pub fn ts(text: &str) -> Timestamp {
    text.parse().expect(text)
}

/// A zone by name.
pub fn zone(name: &str) -> TimeZone {
    TimeZone::get(name).expect(name)
}

//! When a job runs: a cron expression in a time zone, one instant, or a fixed interval.

use std::str::FromStr;

use croner::{
    Cron,
    parser::{CronParser, Seconds},
};
use jiff::{Timestamp, tz::TimeZone};
use serde::{Deserialize, Serialize};

use crate::civil::Zoned;

/// A job's schedule, as the cron tool, the API and the jobs file spell it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum Schedule {
    /// A cron expression: five fields (minute hour day-of-month month day-of-week), or six
    /// with seconds first; names (`MON`, `JAN`), ranges, lists, steps, `L`, `#` and the
    /// `@daily`-style nicknames are accepted. Evaluated in `tz` (an IANA zone), or in the
    /// agent's time zone when unset (`agents.defaults.userTimezone`, else UTC).
    Cron {
        /// The expression.
        expr: String,
        /// IANA time zone; unset: the agent's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tz: Option<String>,
    },
    /// Once, at this instant (RFC 3339, for example `2026-12-24T18:00:00+01:00`).
    At {
        /// The instant.
        at: Timestamp,
    },
    /// Every `everyMs` milliseconds (at least one second), counted from `anchor` (default:
    /// when the job was created).
    #[serde(rename_all = "camelCase")]
    Every {
        /// The interval in milliseconds.
        every_ms: u64,
        /// The instant the intervals are counted from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        anchor: Option<Timestamp>,
    },
}

/// The shortest interval an `every` schedule may have.
pub const MIN_EVERY_MS: u64 = 1_000;

/// A schedule that cannot be used, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The cron expression does not parse.
    #[error("schedule.expr {expr:?} is not a cron expression: {reason}")]
    Expression {
        /// The expression.
        expr: String,
        /// croner's reason.
        reason: String,
    },
    /// The expression parses but names no time that exists (for example February 30).
    #[error("schedule.expr {0:?} never matches a time")]
    NeverMatches(String),
    /// The time zone is not in the time zone database.
    #[error("schedule.tz {0:?} is not an IANA time zone")]
    TimeZone(String),
    /// An `every` interval below [`MIN_EVERY_MS`].
    #[error("schedule.everyMs must be at least {MIN_EVERY_MS} (one second), not {0}")]
    Interval(u64),
}

impl Schedule {
    /// Checks the schedule and resolves its time zone (`default_tz` when it names none).
    pub fn compile(&self, default_tz: &TimeZone) -> Result<Compiled, ScheduleError> {
        Ok(match self {
            Schedule::Cron { expr, tz } => {
                let zone = match tz {
                    Some(name) => {
                        TimeZone::get(name).map_err(|_| ScheduleError::TimeZone(name.clone()))?
                    }
                    None => default_tz.clone(),
                };
                let cron = parse_cron(expr)?;
                Compiled::Cron {
                    expr: expr.clone(),
                    cron: Box::new(cron),
                    zone,
                }
            }
            Schedule::At { at } => Compiled::At(*at),
            Schedule::Every { every_ms, anchor } => {
                if *every_ms < MIN_EVERY_MS {
                    return Err(ScheduleError::Interval(*every_ms));
                }
                Compiled::Every {
                    every_ms: i64::try_from(*every_ms).unwrap_or(i64::MAX),
                    anchor: *anchor,
                }
            }
        })
    }

    /// A short text for listings (`cron "0 9 * * 1-5" Europe/Berlin`, `at ...`, `every 1h`).
    pub fn describe(&self) -> String {
        match self {
            Schedule::Cron { expr, tz } => match tz {
                Some(tz) => format!("cron {expr:?} {tz}"),
                None => format!("cron {expr:?}"),
            },
            Schedule::At { at } => format!("at {at}"),
            Schedule::Every { every_ms, .. } => every_text(*every_ms),
        }
    }
}

/// An interval in its largest whole unit (`every 90s`, `every 2h`), as the schedule grammar
/// reads it back: the one spelling of an interval in the tool, the API and the CLI.
pub fn every_text(ms: u64) -> String {
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
    ] {
        if ms >= size && ms.is_multiple_of(size) {
            return format!("every {}{unit}", ms / size);
        }
    }
    format!("every {ms}ms")
}

fn parse_cron(expr: &str) -> Result<Cron, ScheduleError> {
    let parser = CronParser::builder().seconds(Seconds::Optional).build();
    let cron = parser
        .parse(expr.trim())
        .map_err(|e| ScheduleError::Expression {
            expr: expr.to_owned(),
            reason: e.to_string(),
        })?;
    // Prove that it matches some time: from a fixed instant (no clock here), croner's bounded
    // search gives up on patterns such as `0 0 30 2 *`.
    let probe = Zoned(Timestamp::UNIX_EPOCH.to_zoned_datetime(TimeZone::UTC));
    if cron.find_next_occurrence(&probe, false).is_err() {
        return Err(ScheduleError::NeverMatches(expr.to_owned()));
    }
    Ok(cron)
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    /// A schedule from text: `at <RFC 3339>`, `every <n>(ms|s|m|h|d)`, or a cron expression.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if let Some(at) = text.strip_prefix("at ") {
            let at = at
                .trim()
                .parse::<Timestamp>()
                .map_err(|e| ScheduleError::Expression {
                    expr: text.to_owned(),
                    reason: format!("not an RFC 3339 instant: {e}"),
                })?;
            return Ok(Schedule::At { at });
        }
        if let Some(every) = text.strip_prefix("every ") {
            let every = every.trim();
            let split = every
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(every.len());
            let (digits, unit) = every.split_at(split);
            let n: u64 = digits.parse().map_err(|_| ScheduleError::Expression {
                expr: text.to_owned(),
                reason: "an interval is a number and a unit: 90s, 15m, 1h, 1d".into(),
            })?;
            let scale = match unit {
                "ms" => 1,
                "s" => 1_000,
                "m" => 60_000,
                "h" => 3_600_000,
                "d" => 86_400_000,
                _ => {
                    return Err(ScheduleError::Expression {
                        expr: text.to_owned(),
                        reason: "an interval's unit is ms, s, m, h or d".into(),
                    });
                }
            };
            return Ok(Schedule::Every {
                every_ms: n.saturating_mul(scale),
                anchor: None,
            });
        }
        Ok(Schedule::Cron {
            expr: text.to_owned(),
            tz: None,
        })
    }
}

/// A checked schedule, ready to answer [`Compiled::next_after`].
#[derive(Debug, Clone)]
pub enum Compiled {
    /// A cron expression in its zone.
    Cron {
        /// The expression as given.
        expr: String,
        /// The parsed pattern.
        cron: Box<Cron>,
        /// The zone it is evaluated in.
        zone: TimeZone,
    },
    /// One instant.
    At(Timestamp),
    /// An interval from an anchor (unset: the caller's `created`).
    Every {
        /// The interval in milliseconds.
        every_ms: i64,
        /// The anchor.
        anchor: Option<Timestamp>,
    },
}

impl Compiled {
    /// The first time the schedule fires strictly after `after`; `None` when it never fires
    /// again (a one-shot time that passed). `created` anchors an interval without one.
    pub fn next_after(&self, after: Timestamp, created: Timestamp) -> Option<Timestamp> {
        match self {
            Compiled::At(at) => (*at > after).then_some(*at),
            Compiled::Every { every_ms, anchor } => {
                let anchor = anchor.unwrap_or(created).as_millisecond();
                let after_ms = after.as_millisecond();
                let next = if after_ms < anchor {
                    anchor
                } else {
                    let periods = (after_ms - anchor) / every_ms + 1;
                    anchor.checked_add(periods.checked_mul(*every_ms)?)?
                };
                Timestamp::from_millisecond(next).ok()
            }
            Compiled::Cron { cron, zone, .. } => {
                // croner works in whole seconds: start from the second `after` lies in, so a
                // slot at that very second (already run) is not returned again.
                let start = Timestamp::from_second(after.as_second()).ok()?;
                let from = Zoned(start.to_zoned_datetime(zone.clone()));
                cron.find_next_occurrence(&from, false)
                    .ok()
                    .map(|z| z.0.timestamp())
            }
        }
    }
}

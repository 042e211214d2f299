//! croner searches on civil (wall clock) time through its `CronDateTime` trait; this connects
//! it to jiff's zoned date-times, so a pattern is evaluated in the job's time zone with jiff's
//! rules for daylight saving gaps and folds.

use std::cmp::Ordering;

use croner::{
    CivilDate, CivilDateTime, CivilTime, CronDateTime, Resolution, Weekday, errors::CronError,
};
use jiff::{SignedDuration, ZonedDateTime, civil::DateTime, tz::AmbiguousOffset};

/// A zoned date-time croner can search over.
#[derive(Debug, Clone)]
pub(crate) struct Zoned(pub(crate) ZonedDateTime);

fn to_civil(dt: DateTime) -> CivilDateTime {
    // jiff keeps every part in range, and croner's ranges contain jiff's.
    CivilDateTime::new(
        CivilDate::from_parts_unchecked(
            i32::from(dt.year()),
            u32::from(dt.month().unsigned_abs()),
            u32::from(dt.day().unsigned_abs()),
        ),
        CivilTime::from_parts_unchecked(
            u32::from(dt.hour().unsigned_abs()),
            u32::from(dt.minute().unsigned_abs()),
            u32::from(dt.second().unsigned_abs()),
        ),
    )
}

fn to_jiff(civil: CivilDateTime) -> Result<DateTime, CronError> {
    let part = |v: u32| i8::try_from(v).map_err(|_| CronError::InvalidDate);
    let year = i16::try_from(civil.year()).map_err(|_| CronError::InvalidDate)?;
    DateTime::new(
        year,
        part(civil.month())?,
        part(civil.day())?,
        part(civil.hour())?,
        part(civil.minute())?,
        part(civil.second())?,
        0,
    )
    .map_err(|_| CronError::InvalidDate)
}

impl CronDateTime for Zoned {
    fn to_civil(&self) -> CivilDateTime {
        to_civil(self.0.datetime())
    }

    fn civil_weekday(&self) -> Weekday {
        Weekday::from_days_from_sunday(u32::from(
            self.0.weekday().to_sunday_zero_offset().unsigned_abs(),
        ))
    }

    fn resolve_civil(&self, civil: CivilDateTime) -> Result<Resolution<Self>, CronError> {
        let dt = to_jiff(civil)?;
        let ambiguous = self.0.time_zone().to_ambiguous_zoned_datetime(dt);
        Ok(match ambiguous.offset() {
            AmbiguousOffset::Unambiguous { .. } => Resolution::Single(Zoned(
                ambiguous
                    .unambiguous()
                    .map_err(|_| CronError::InvalidTime)?,
            )),
            AmbiguousOffset::Fold { .. } => {
                let earlier = ambiguous
                    .clone()
                    .earlier()
                    .map_err(|_| CronError::InvalidTime)?;
                let later = ambiguous.later().map_err(|_| CronError::InvalidTime)?;
                Resolution::Ambiguous(Zoned(earlier), Zoned(later))
            }
            AmbiguousOffset::Gap { .. } => Resolution::Gap,
        })
    }

    fn checked_add_seconds(&self, seconds: i64) -> Option<Self> {
        self.0
            .checked_add(SignedDuration::from_secs(seconds))
            .ok()
            .map(Zoned)
    }

    fn cmp_instant(&self, other: &Self) -> Ordering {
        self.0.timestamp().cmp(&other.0.timestamp())
    }
}

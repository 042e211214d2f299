//! Schedules: cron expressions in a time zone (daylight saving included), one-shot times,
//! intervals, and the errors that name what is wrong.

use openclaw_cron::{Schedule, ScheduleError};
use proptest::prelude::*;

use super::{ts, zone};

fn cron(expr: &str, tz: Option<&str>) -> Schedule {
    Schedule::Cron {
        expr: expr.to_owned(),
        tz: tz.map(str::to_owned),
    }
}

fn next(s: &Schedule, after: &str) -> Option<String> {
    let utc = zone("UTC");
    s.compile(&utc)
        .unwrap()
        .next_after(ts(after), ts("2026-01-01T00:00:00Z"))
        .map(|t| t.to_string())
}

#[test]
fn weekday_mornings_in_the_jobs_time_zone() {
    // Friday 2026-12-04 10:00 in Berlin (09:00Z): the next weekday 09:00 is Monday's.
    let s = cron("0 9 * * 1-5", Some("Europe/Berlin"));
    assert_eq!(
        next(&s, "2026-12-04T09:00:00Z").as_deref(),
        Some("2026-12-07T08:00:00Z")
    );
    // Same expression in New York.
    let s = cron("0 9 * * 1-5", Some("America/New_York"));
    assert_eq!(
        next(&s, "2026-12-04T09:00:00Z").as_deref(),
        Some("2026-12-04T14:00:00Z")
    );
}

#[test]
fn an_expression_without_a_zone_uses_the_agents() {
    let s = cron("0 9 * * *", None);
    let berlin = s.compile(&zone("Europe/Berlin")).unwrap();
    let utc = s.compile(&zone("UTC")).unwrap();
    let after = ts("2026-12-01T00:00:00Z");
    let created = after;
    assert_eq!(
        berlin.next_after(after, created).unwrap().to_string(),
        "2026-12-01T08:00:00Z"
    );
    assert_eq!(
        utc.next_after(after, created).unwrap().to_string(),
        "2026-12-01T09:00:00Z"
    );
}

#[test]
fn a_slot_in_the_spring_forward_gap_runs_once_when_the_gap_ends() {
    // Europe/Berlin skips 02:00-03:00 on 2026-03-29: the 02:30 slot runs at 03:00 local
    // (01:00Z), the first instant after the gap, and only then.
    let s = cron("30 2 * * *", Some("Europe/Berlin"));
    let got = next(&s, "2026-03-28T02:00:00Z").unwrap();
    assert_eq!(got, "2026-03-29T01:00:00Z");
    // The day after runs at 02:30 local again (00:30Z in summer time).
    assert_eq!(next(&s, &got).as_deref(), Some("2026-03-30T00:30:00Z"));
}

#[test]
fn a_slot_in_the_fall_back_fold_runs_once() {
    // 02:30 happens twice in Berlin on 2026-10-25: at 00:30Z (summer) and 01:30Z (winter).
    let s = cron("30 2 * * *", Some("Europe/Berlin"));
    let first = next(&s, "2026-10-24T12:00:00Z").unwrap();
    assert_eq!(first, "2026-10-25T00:30:00Z");
    let second = next(&s, &first).unwrap();
    assert_eq!(
        second, "2026-10-26T01:30:00Z",
        "the repeated 02:30 must not run the job a second time"
    );
}

#[test]
fn seconds_and_nicknames() {
    let s = cron("*/15 * * * * *", None);
    assert_eq!(
        next(&s, "2026-12-01T10:00:07Z").as_deref(),
        Some("2026-12-01T10:00:15Z")
    );
    let s = cron("@daily", None);
    assert_eq!(
        next(&s, "2026-12-01T10:00:00Z").as_deref(),
        Some("2026-12-02T00:00:00Z")
    );
}

#[test]
fn one_shot_times_fire_once() {
    let s = Schedule::At {
        at: ts("2026-12-24T17:00:00Z"),
    };
    assert_eq!(
        next(&s, "2026-12-01T00:00:00Z").as_deref(),
        Some("2026-12-24T17:00:00Z")
    );
    assert_eq!(next(&s, "2026-12-24T17:00:00Z"), None);
    assert_eq!(next(&s, "2026-12-25T00:00:00Z"), None);
}

#[test]
fn intervals_count_from_their_anchor() {
    let s = Schedule::Every {
        every_ms: 3_600_000,
        anchor: Some(ts("2026-12-01T10:15:00Z")),
    };
    assert_eq!(
        next(&s, "2026-12-01T00:00:00Z").as_deref(),
        Some("2026-12-01T10:15:00Z")
    );
    assert_eq!(
        next(&s, "2026-12-01T10:15:00Z").as_deref(),
        Some("2026-12-01T11:15:00Z")
    );
    assert_eq!(
        next(&s, "2026-12-01T12:40:00Z").as_deref(),
        Some("2026-12-01T13:15:00Z")
    );
    // Without an anchor: from the job's creation.
    let s = Schedule::Every {
        every_ms: 60_000,
        anchor: None,
    };
    let c = s.compile(&zone("UTC")).unwrap();
    assert_eq!(
        c.next_after(ts("2026-12-01T10:00:30Z"), ts("2026-12-01T10:00:00Z"))
            .unwrap()
            .to_string(),
        "2026-12-01T10:01:00Z"
    );
}

#[test]
fn errors_name_what_is_wrong() {
    let utc = zone("UTC");
    let err = cron("61 * * * *", None).compile(&utc).unwrap_err();
    assert!(matches!(err, ScheduleError::Expression { .. }), "{err}");
    assert!(err.to_string().contains("\"61 * * * *\""), "{err}");
    let err = cron("0 0 30 2 *", None).compile(&utc).unwrap_err();
    assert_eq!(err, ScheduleError::NeverMatches("0 0 30 2 *".into()));
    let err = cron("0 9 * * *", Some("Mars/Olympus"))
        .compile(&utc)
        .unwrap_err();
    assert_eq!(err, ScheduleError::TimeZone("Mars/Olympus".into()));
    let err = Schedule::Every {
        every_ms: 500,
        anchor: None,
    }
    .compile(&utc)
    .unwrap_err();
    assert!(err.to_string().contains("at least 1000"), "{err}");
    assert!(cron("", None).compile(&utc).is_err());
}

#[test]
fn schedules_from_text() {
    assert_eq!(
        "every 15m".parse::<Schedule>().unwrap(),
        Schedule::Every {
            every_ms: 900_000,
            anchor: None
        }
    );
    assert_eq!(
        "at 2026-12-24T18:00:00+01:00".parse::<Schedule>().unwrap(),
        Schedule::At {
            at: ts("2026-12-24T17:00:00Z")
        }
    );
    assert_eq!(
        "0 9 * * *".parse::<Schedule>().unwrap(),
        cron("0 9 * * *", None)
    );
    assert!("every soon".parse::<Schedule>().is_err());
    assert!("every 5 weeks".parse::<Schedule>().is_err());
    assert!("at tomorrow".parse::<Schedule>().is_err());
}

#[test]
fn the_json_shapes_of_the_tool_and_the_jobs_file() {
    let s: Schedule =
        serde_json::from_str(r#"{"kind":"cron","expr":"0 9 * * *","tz":"Europe/Berlin"}"#).unwrap();
    assert_eq!(s, cron("0 9 * * *", Some("Europe/Berlin")));
    let s: Schedule = serde_json::from_str(r#"{"kind":"every","everyMs":60000}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&s).unwrap(),
        r#"{"kind":"every","everyMs":60000}"#
    );
    let s: Schedule = serde_json::from_str(r#"{"kind":"at","at":"2026-12-24T17:00:00Z"}"#).unwrap();
    assert_eq!(s.describe(), "at 2026-12-24T17:00:00Z");
    assert!(
        serde_json::from_str::<Schedule>(r#"{"kind":"cron","expr":"* * * * *","zone":"UTC"}"#)
            .is_err()
    );
    assert!(serde_json::from_str::<Schedule>(r#"{"kind":"weekly"}"#).is_err());
}

proptest! {
    #[test]
    fn an_interval_fires_strictly_later_on_its_grid(
        every_s in 1u64..100_000,
        anchor_s in 1_700_000_000i64..1_900_000_000,
        offset_s in -200_000i64..20_000_000,
    ) {
        let anchor = jiff::Timestamp::from_second(anchor_s).unwrap();
        let after = jiff::Timestamp::from_second(anchor_s + offset_s).unwrap();
        let s = Schedule::Every { every_ms: every_s * 1000, anchor: Some(anchor) };
        let next = s.compile(&zone("UTC")).unwrap().next_after(after, anchor).unwrap();
        prop_assert!(next > after);
        let since = next.as_second() - anchor_s;
        prop_assert!(since >= 0);
        prop_assert_eq!(since % i64::try_from(every_s).unwrap(), 0);
        if after < anchor {
            prop_assert_eq!(next, anchor);
        } else {
            prop_assert!(next.as_second() - after.as_second() <= i64::try_from(every_s).unwrap());
        }
    }

    #[test]
    fn a_cron_slot_is_the_first_matching_minute_after(
        after_s in 1_700_000_000i64..1_900_000_000,
        step in 2u32..30,
    ) {
        let expr = format!("*/{step} * * * *");
        let s = cron(&expr, Some("Europe/Berlin"));
        let after = jiff::Timestamp::from_second(after_s).unwrap();
        let next = s.compile(&zone("UTC")).unwrap().next_after(after, after).unwrap();
        prop_assert!(next > after);
        prop_assert_eq!(next.as_second() % 60, 0);
        let minute = next.to_zoned_datetime(zone("Europe/Berlin")).minute();
        prop_assert_eq!(i64::from(minute) % i64::from(step), 0);
        // No matching minute lies between.
        let mut t = (after.as_second() / 60 + 1) * 60;
        while t < next.as_second() {
            let m = jiff::Timestamp::from_second(t).unwrap().to_zoned_datetime(zone("Europe/Berlin")).minute();
            prop_assert!(i64::from(m) % i64::from(step) != 0, "skipped a match at {}", t);
            t += 60;
        }
    }
}

/// One spelling of an interval everywhere (the tool's listing, the API, the CLI): its largest
/// whole unit, which the grammar reads back as the same schedule.
#[test]
fn an_interval_is_described_in_its_largest_unit_and_reads_back() {
    for (ms, text) in [
        (3_600_000, "every 1h"),
        (90_000, "every 90s"),
        (1_800_000, "every 30m"),
        (172_800_000, "every 2d"),
        (1_500, "every 1500ms"),
    ] {
        assert_eq!(openclaw_cron::every_text(ms), text);
        let schedule: Schedule = text.parse().expect(text);
        assert_eq!(schedule.describe(), text);
        assert!(
            matches!(schedule, Schedule::Every { every_ms, .. } if every_ms == ms),
            "{text}"
        );
    }
}

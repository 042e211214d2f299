//! What 10,000 scheduled jobs cost the scheduler: resident memory of the jobs in a store,
//! the time of one scheduler tick over them (which jobs are due, when to wake next), and the
//! time to save the jobs file (temp file, fsync, rename) and to open it again. Not a criterion
//! bench: it prints medians of repeated runs (`cargo bench -p openclaw-cron --bench jobs_10k`).
#![expect(clippy::expect_used, reason = "benchmark setup fails loudly")]

use std::time::{Duration, Instant};

use jiff::{Timestamp, tz::TimeZone};
use openclaw_cron::{JobSpec, JobStore, Schedule, Target, plan};

const JOBS: usize = 10_000;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Job `n`: weekday cron expressions in a few zones, intervals, one-shots, as a mix.
fn spec(n: usize, now: Timestamp) -> JobSpec {
    let zones = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"];
    let schedule = match n % 4 {
        0 => Schedule::Cron {
            expr: format!("{} {} * * MON-FRI", n % 60, n % 24),
            tz: Some(zones[n % zones.len()].to_owned()),
        },
        1 => Schedule::Cron {
            expr: format!("*/{} * * * *", 5 + n % 20),
            tz: None,
        },
        2 => Schedule::Every {
            every_ms: 60_000 * (1 + (n as u64 % 120)),
            anchor: None,
        },
        _ => Schedule::At {
            at: now + jiff::SignedDuration::from_secs(3600 + n as i64),
        },
    };
    JobSpec {
        name: format!("job {n}"),
        schedule,
        prompt: format!("Scheduled check number {n}: look at the queue and report anything odd."),
        target: if n.is_multiple_of(3) {
            Target::Main
        } else {
            Target::Isolated
        },
        lightweight: false,
        delivery: openclaw_cron::Delivery::None,
        delete_after_run: None,
        enabled: true,
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cron/jobs.json");
    let now = Timestamp::now();
    let before = rss_kib();
    let mut store = JobStore::open(&path, now).expect("open").store;
    let built = Instant::now();
    for n in 0..JOBS {
        store
            .add("main", spec(n, now), &TimeZone::UTC, now)
            .expect("valid job");
    }
    let build_time = built.elapsed();
    let after = rss_kib();

    // One tick: the due jobs at an instant, then the next wake-up.
    let mut ticks = Vec::new();
    let mut due_seen = 0;
    for i in 0..200 {
        let at = now + jiff::SignedDuration::from_secs(60 * i);
        let started = Instant::now();
        let due = plan::due(store.jobs(), at);
        let next = plan::next_wake(store.jobs());
        ticks.push(started.elapsed());
        due_seen = due_seen.max(due.len());
        assert!(next.is_some());
    }

    let mut saves = Vec::new();
    for _ in 0..15 {
        let started = Instant::now();
        store.save().expect("save");
        saves.push(started.elapsed());
    }
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut opens = Vec::new();
    for _ in 0..15 {
        let started = Instant::now();
        let opened = JobStore::open(&path, now).expect("reopen");
        opens.push(started.elapsed());
        assert_eq!(opened.store.len(), JOBS);
    }

    println!(
        "{JOBS} jobs (a quarter each: weekday cron in four zones, */n cron, intervals, one-shots)"
    );
    println!(
        "  added in {:.1} ms (first slot computed for each)",
        build_time.as_secs_f64() * 1e3
    );
    println!(
        "  resident memory: +{:.1} MiB (VmRSS {} -> {} kB), about {:.0} bytes per job",
        after.saturating_sub(before) as f64 / 1024.0,
        before,
        after,
        after.saturating_sub(before) as f64 * 1024.0 / JOBS as f64
    );
    println!(
        "  scheduler tick (due jobs + next wake-up): median {:.0} us over 200 ticks (up to {due_seen} due at once)",
        median(ticks).as_secs_f64() * 1e6
    );
    println!(
        "  save jobs.json ({:.1} MB; temp file, fsync, rename, directory fsync): median {:.1} ms over 15",
        file_bytes as f64 / 1e6,
        median(saves).as_secs_f64() * 1e3
    );
    println!(
        "  open and parse it again: median {:.1} ms over 15",
        median(opens).as_secs_f64() * 1e3
    );
}

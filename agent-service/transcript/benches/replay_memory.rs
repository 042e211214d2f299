//! Peak memory growth while replaying a 100 MB transcript with one 1 MB line (L9; goal:
//! under 64 MB). Not a criterion bench: it reads VmHWM/VmRSS from /proc/self/status around one
//! replay, after resetting the high-water mark, and prints the figures.

use std::fs;

use openclaw_transcript::{ReadOptions, for_each_entry};

mod support;

fn status_kib(field: &str) -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (path, entries) = support::big_transcript(dir.path(), 100 << 20, 1 << 20)?;
    let bytes = fs::metadata(&path)?.len();
    // Reset the high-water mark so generation's own peak does not hide the replay's.
    fs::write("/proc/self/clear_refs", "5")?;
    let rss_before = status_kib("VmRSS:");
    let hwm_before = status_kib("VmHWM:");
    let mut seen = 0u64;
    let mut largest = 0usize;
    let report = for_each_entry(&path, ReadOptions::default(), |entry| {
        seen += 1;
        largest = largest.max(serde_json::to_string(&entry.body).map_or(0, |s| s.len()));
    })?;
    let hwm_after = status_kib("VmHWM:");
    let rss_after = status_kib("VmRSS:");
    println!(
        "replay of {bytes} bytes ({entries} entries written, {seen} read, largest body {largest} bytes, clean: {})",
        report.is_clean()
    );
    println!(
        "VmRSS before {rss_before} kB, after {rss_after} kB; VmHWM before {hwm_before} kB, after {hwm_after} kB"
    );
    let growth_mib = hwm_after.saturating_sub(rss_before) as f64 / 1024.0;
    println!(
        "peak growth {growth_mib:.1} MiB (goal < 64 MiB): {}",
        if growth_mib < 64.0 { "ok" } else { "OVER" }
    );
    Ok(())
}

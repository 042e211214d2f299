//! Requirement 7: a writer process SIGKILLed at random moments never loses an acknowledged
//! entry, the file always loads, and the next writer repairs and appends cleanly.

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, mpsc};
use std::thread;

use openclaw_transcript::{
    EntryId, Error, LoadReport, ReadOptions, SystemClock, TranscriptWriter, WriterOptions,
    for_each_entry, read_tail,
};

use super::fixture::{fresh, user};

const ITERATIONS: usize = 40;
/// The writer fsyncs every this many entries.
const SYNC_EVERY: &str = "8";
/// Every this many entries is 64 KiB (16 pages), so some kills land inside a large write.
const BIG_EVERY: &str = "16";

/// SplitMix64: a seeded source for kill points, reported on failure.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// A writer process whose stdout is drained by a thread, so the writer never blocks on a full
/// pipe and a kill lands wherever its loop happens to be.
struct Writer {
    child: Child,
    lines: mpsc::Receiver<String>,
    drain: thread::JoinHandle<()>,
}

fn spawn_writer(path: &Path) -> Writer {
    let mut child = Command::new(env!("CARGO_BIN_EXE_transcript-crash-writer"))
        .arg(path)
        .args([SYNC_EVERY, BIG_EVERY])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let (send, lines) = mpsc::channel();
    let drain = thread::spawn(move || {
        // Only complete lines count: a line cut by the kill is not an ack.
        let mut line = Vec::new();
        while matches!(out.read_until(b'\n', &mut line), Ok(n) if n > 0) && line.ends_with(b"\n") {
            line.pop();
            if send
                .send(String::from_utf8(std::mem::take(&mut line)).unwrap())
                .is_err()
            {
                break;
            }
        }
    });
    Writer {
        child,
        lines,
        drain,
    }
}

/// Loads the whole file and checks what must hold after any number of kills.
fn check(path: &Path, acked: &HashSet<String>, context: &str) -> (Vec<EntryId>, LoadReport) {
    let mut ids = Vec::new();
    let mut parent = None;
    let report = for_each_entry(path, ReadOptions::default(), |entry| {
        assert_eq!(
            entry.parent_id, parent,
            "{context}: chain broken at {}",
            entry.id
        );
        parent = Some(entry.id.clone());
        ids.push(entry.id);
    })
    .unwrap();
    assert_eq!(report.bad_line_count, 0, "{context}: {report:?}");
    let present: HashSet<&str> = ids.iter().map(EntryId::as_str).collect();
    assert_eq!(present.len(), ids.len(), "{context}: duplicate ids");
    let missing: Vec<&String> = acked
        .iter()
        .filter(|id| !present.contains(id.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "{context}: acknowledged but lost: {missing:?}"
    );
    (ids, report)
}

fn ack(line: &str) -> String {
    line.strip_prefix("ack ").unwrap().to_owned()
}

#[test]
fn a_killed_writer_never_loses_an_acknowledged_entry() {
    let t = fresh();
    drop(t.writer);
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut rng = Rng(seed);
    let mut acked = HashSet::new();
    let mut torn_tails = 0;
    let mut last_torn = 0;
    for iteration in 0..ITERATIONS {
        let context = format!("seed {seed} iteration {iteration}");
        let mut writer = spawn_writer(&t.path);
        // Readiness is the writer's first line, never a sleep.
        let opened = writer.lines.recv().expect("writer started");
        // The writer repaired exactly the torn tail the previous kill left.
        assert_eq!(opened, format!("open {last_torn}"), "{context}");
        for _ in 0..rng.below(200) {
            let line = writer
                .lines
                .recv()
                .unwrap_or_else(|_| panic!("{context}: writer exited early"));
            acked.insert(ack(&line));
        }
        writer.child.kill().unwrap();
        writer.child.wait().unwrap();
        // Acks written before the kill are still in the pipe.
        for line in writer.lines.iter() {
            acked.insert(ack(&line));
        }
        writer.drain.join().unwrap();
        let tail = read_tail(&t.path, 1, ReadOptions::default()).unwrap();
        last_torn = tail.torn_tail.map_or(0, |torn| torn.len);
        torn_tails += usize::from(last_torn > 0);
    }

    let (ids, report) = check(&t.path, &acked, &format!("seed {seed} after the kills"));
    assert_eq!(report.torn_tail.map_or(0, |torn| torn.len), last_torn);
    let opened =
        TranscriptWriter::open(&t.path, Arc::new(SystemClock), WriterOptions::default()).unwrap();
    assert_eq!(opened.repair.map_or(0, |repair| repair.len), last_torn);
    let mut writer = opened.writer;
    let last = writer.append_and_sync(user("after the storm")).unwrap();
    drop(writer);
    let (after, report) = check(&t.path, &acked, &format!("seed {seed} final"));
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(after.len(), ids.len() + 1);
    assert_eq!(after.last(), Some(&last.id));
    eprintln!(
        "crash loop: {ITERATIONS} kills, {} acknowledged entries, {} entries on disk, {torn_tails} torn tails repaired (seed {seed})",
        acked.len(),
        ids.len()
    );
}

#[test]
fn a_running_writer_process_locks_out_other_writers() {
    let t = fresh();
    drop(t.writer);
    let mut writer = spawn_writer(&t.path);
    assert_eq!(writer.lines.recv().as_deref(), Ok("open 0"));
    let result = TranscriptWriter::open(&t.path, Arc::new(SystemClock), WriterOptions::default());
    writer.child.kill().unwrap();
    writer.child.wait().unwrap();
    drop(writer.lines);
    writer.drain.join().unwrap();
    assert!(matches!(result, Err(Error::Locked { .. })), "{result:?}");
}

/// A process being spawned holds copies of the parent's open files until it execs, so a lock
/// just released can look held for a moment. The default `lock_wait` rides that out: a writer
/// dropped and reopened while another thread spawns processes is never refused.
#[test]
fn reopening_while_processes_are_spawned_is_not_refused() {
    let t = fresh();
    drop(t.writer);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spawner = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            let mut spawned = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // No arguments: the fixture prints its usage and exits at once.
                let status = Command::new(env!("CARGO_BIN_EXE_transcript-crash-writer"))
                    .stderr(Stdio::null())
                    .status()
                    .unwrap();
                assert!(!status.success());
                spawned += 1;
            }
            spawned
        })
    };
    for _ in 0..300 {
        let opened =
            TranscriptWriter::open(&t.path, Arc::new(SystemClock), WriterOptions::default());
        drop(opened.unwrap());
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(spawner.join().unwrap() > 0);
}

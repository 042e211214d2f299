//! Every client's ledger against the transcripts: each acknowledged message
//! must be in the session it was acknowledged into exactly once, the files
//! and `GetTranscript` must agree, nothing torn or skipped may be left after
//! a clean shutdown, and every tool call must have its one result.
//!
//! A lost message is described by what is known about it: the disposition
//! it got, which agent-service process acknowledged it and how that process
//! ended (and how soon after the acknowledgement), and whether a run was
//! seen starting with it. That separates "queued in memory when the process
//! was killed" from "written, then gone".

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use crate::{
    client::Started,
    cluster::{Clock, Ending, Incarnation},
    ledger::{Api, AttemptResult, MessageRecord, outcome_name},
    transcripts::{DirScan, RpcScan},
};

/// Slack when placing a transcript timestamp into a process's lifetime
/// (the clocks are the same; the slack covers rounding and the time between
/// the signal and the process's last write).
const SLACK: Duration = Duration::from_millis(1500);

/// What the reconciliation is given.
pub(crate) struct Evidence<'a> {
    pub records: &'a [MessageRecord],
    pub started: &'a BTreeSet<Started>,
    pub incarnations: &'a [Incarnation],
    /// The files right after the soak's clean stop.
    pub first: &'a DirScan,
    /// The files after the final restart (and its clean stop).
    pub last: &'a DirScan,
    /// `GetTranscript` per session key, from the final restart.
    pub rpc: &'a BTreeMap<String, RpcScan>,
    pub clock: Clock,
}

/// An acknowledged message that is in no transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// Its id.
    pub id: String,
    /// Its session key.
    pub session_key: String,
    /// The disposition it was acknowledged with.
    pub outcome: &'static str,
    /// The API that acknowledged it.
    pub api: Api,
    /// When the acknowledgement arrived, since the soak began.
    pub acked_at: Duration,
    /// The agent-service incarnation that acknowledged it.
    pub incarnation: u64,
    /// How that incarnation ended.
    pub ended_by: Option<Ending>,
    /// How long after the acknowledgement it ended.
    pub ended_after_ack: Option<Duration>,
    /// A run was seen starting with it (`RunStarted.message_seqs`).
    pub seen_starting: bool,
    /// Its bytes are in a quarantine file (a torn tail cut off).
    pub quarantined: bool,
}

impl Lost {
    /// The category it is counted under.
    pub fn category(&self) -> String {
        let ended = self.ended_by.map_or("still running", Ending::name);
        let started = if self.seen_starting {
            "a run was seen starting with it (so it had been written)"
        } else {
            "no run was seen starting with it"
        };
        format!(
            "acknowledged as {}, then its agent-service ended by {ended}; {started}{}",
            self.outcome,
            if self.quarantined {
                "; found only in a quarantined torn tail"
            } else {
                ""
            }
        )
    }
}

/// A message found more than once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// Its id.
    pub id: String,
    /// Copies found.
    pub copies: u32,
    /// It was acknowledged.
    pub acknowledged: bool,
    /// An earlier attempt failed ambiguously and it was sent again.
    pub retried: bool,
}

/// The verdicts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reconciliation {
    /// Acknowledged messages.
    pub acknowledged: u64,
    /// Acknowledged messages found exactly once, in their session.
    pub found: u64,
    /// Acknowledged messages found nowhere.
    pub lost: Vec<Lost>,
    /// Messages (acknowledged or not) found more than once.
    pub duplicated: Vec<Duplicate>,
    /// Acknowledged messages found once, but in another session.
    pub misplaced: Vec<String>,
    /// Acknowledged messages absent after the clean stop that appeared after
    /// the final restart (recovered at start-up).
    pub recovered_late: Vec<String>,
    /// Session keys that no longer name the session a message was
    /// acknowledged into.
    pub key_moved: Vec<String>,
    /// Differences between `GetTranscript` and the files.
    pub rpc_mismatches: Vec<String>,
    /// Never-acknowledged messages that are in a transcript anyway.
    pub unacknowledged_written: u64,
    /// Never-acknowledged messages.
    pub unacknowledged: u64,
    /// Torn final lines left after a clean shutdown.
    pub torn_tails: Vec<String>,
    /// Lines the reader skipped.
    pub bad_lines: Vec<String>,
    /// Quarantine files (torn tails repaired during the soak).
    pub quarantined: Vec<String>,
    /// Tool calls in the transcripts.
    pub tool_calls: u64,
    /// Tool calls with exactly one result.
    pub tool_pairs: u64,
    /// Calls without a result at a transcript's tail whose run was cut by a
    /// SIGKILL (the runtime fills the result before the next model call).
    pub open_calls_explained: Vec<String>,
    /// Orphan or duplicate results, and calls without a result that nothing
    /// explains.
    pub pairing_failures: Vec<String>,
}

/// Reconciles the ledger against the transcripts.
pub(crate) fn reconcile(e: &Evidence<'_>) -> Reconciliation {
    let mut r = Reconciliation::default();
    let quarantined: BTreeSet<&str> = e
        .last
        .quarantined
        .iter()
        .chain(&e.first.quarantined)
        .flat_map(|(_, ids)| ids.iter().map(String::as_str))
        .collect();
    for record in e.records {
        let places = e.last.occurrences(&record.id);
        let copies: u32 = places.iter().map(|(_, n)| n).sum();
        let acked = record.acked();
        if copies > 1 {
            r.duplicated.push(Duplicate {
                id: record.id.clone(),
                copies,
                acknowledged: acked.is_some(),
                retried: record.retried_after_ambiguous_failure(),
            });
        }
        let Some((attempt, ack)) = acked else {
            r.unacknowledged += 1;
            r.unacknowledged_written += u64::from(copies > 0);
            continue;
        };
        r.acknowledged += 1;
        if let Some(now) = e.last.index.get(&record.session_key)
            && *now != ack.session_id
        {
            r.key_moved.push(format!(
                "{}: {} now names session {now}, but it was acknowledged into {}",
                record.id, record.session_key, ack.session_id
            ));
        }
        if copies == 0 {
            let incarnation = attempt.incarnations.1;
            let process = e.incarnations.iter().find(|i| i.number == incarnation);
            let ended_at = process.and_then(|p| p.ended_at);
            r.lost.push(Lost {
                id: record.id.clone(),
                session_key: record.session_key.clone(),
                outcome: outcome_name(ack.outcome),
                api: attempt.api,
                acked_at: attempt.answered_at,
                incarnation,
                ended_by: process.and_then(|p| p.ended_by),
                ended_after_ack: ended_at.map(|at| at.saturating_sub(attempt.answered_at)),
                seen_starting: e.started.contains(&Started {
                    incarnation,
                    session_key: record.session_key.clone(),
                    seq: ack.seq,
                }),
                quarantined: quarantined.contains(record.id.as_str()),
            });
            continue;
        }
        if copies == 1 {
            if places.iter().any(|(session, _)| *session == ack.session_id) {
                r.found += 1;
            } else {
                r.misplaced.push(format!(
                    "{}: acknowledged into session {}, found in {}",
                    record.id, ack.session_id, places[0].0
                ));
            }
        }
        if e.first.occurrences(&record.id).is_empty() {
            r.recovered_late.push(record.id.clone());
        }
    }
    compare_rpc(e, &mut r);
    check_files(e, &mut r);
    r
}

/// `GetTranscript` against the files read after the same restart.
fn compare_rpc(e: &Evidence<'_>, r: &mut Reconciliation) {
    for (key, rpc) in e.rpc {
        if e.last.index.get(key) != Some(&rpc.session_id) {
            r.rpc_mismatches.push(format!(
                "{key}: GetSession names {}, the index {:?}",
                rpc.session_id,
                e.last.index.get(key)
            ));
        }
        let Some(file) = e.last.transcripts.get(&rpc.session_id) else {
            r.rpc_mismatches.push(format!(
                "{key}: no transcript file for session {}",
                rpc.session_id
            ));
            continue;
        };
        let ids: BTreeSet<&String> = file.ids.keys().chain(rpc.scan.ids.keys()).collect();
        for id in ids {
            let (in_file, via_rpc) = (file.ids.get(id), rpc.scan.ids.get(id));
            if in_file != via_rpc {
                r.rpc_mismatches.push(format!(
                    "{key}: {id} occurs {} time(s) in the file, {} via GetTranscript",
                    in_file.copied().unwrap_or(0),
                    via_rpc.copied().unwrap_or(0)
                ));
            }
        }
        if file.pairs != rpc.scan.pairs {
            r.rpc_mismatches.push(format!(
                "{key}: tool pairing differs between the file and GetTranscript"
            ));
        }
        r.torn_tails.extend(rpc.scan.torn_tail.clone());
        r.bad_lines.extend(rpc.scan.bad_lines.iter().cloned());
    }
}

/// Torn tails, skipped lines, quarantine files and tool pairing.
fn check_files(e: &Evidence<'_>, r: &mut Reconciliation) {
    for scan in [e.first, e.last] {
        for transcript in scan.transcripts.values() {
            r.torn_tails.extend(transcript.torn_tail.clone());
            r.bad_lines.extend(transcript.bad_lines.iter().cloned());
        }
    }
    r.torn_tails.sort();
    r.torn_tails.dedup();
    r.bad_lines.sort();
    r.bad_lines.dedup();
    r.quarantined = e
        .last
        .quarantined
        .iter()
        .map(|(path, ids)| format!("{} (soak ids inside: {ids:?})", path.display()))
        .collect();
    for (session, transcript) in &e.last.transcripts {
        let pairs = &transcript.pairs;
        r.tool_calls += pairs.calls;
        r.tool_pairs += pairs.complete;
        for id in &pairs.orphan_results {
            r.pairing_failures.push(format!(
                "session {session}: result for call {id} without the call"
            ));
        }
        for id in &pairs.duplicate_results {
            r.pairing_failures
                .push(format!("session {session}: second result for call {id}"));
        }
        for open in &pairs.open {
            let what = format!(
                "session {session}: call {} (made {}) has no result",
                open.call_id, open.timestamp
            );
            if open.model_called_after {
                r.pairing_failures
                    .push(format!("{what}, and a later model call was made anyway"));
                continue;
            }
            match killed_while(e, &open.timestamp) {
                Some(number) => r.open_calls_explained.push(format!(
                    "{what}: incarnation #{number} was SIGKILLed during that run"
                )),
                None => r.pairing_failures.push(format!(
                    "{what}, and no SIGKILL explains it (the process that wrote it stopped cleanly)"
                )),
            }
        }
    }
}

/// The SIGKILLed incarnation whose lifetime holds `timestamp`, if any.
fn killed_while(e: &Evidence<'_>, timestamp: &str) -> Option<u64> {
    let at = e.clock.offset_of(timestamp)?;
    e.incarnations
        .iter()
        .filter(|i| i.ended_by == Some(Ending::Sigkill))
        .find(|i| i.started_at <= at + SLACK && i.ended_at.is_some_and(|end| at <= end + SLACK))
        .map(|i| i.number)
}

/// Counts of acknowledged messages by disposition, and failures by code.
pub(crate) fn tallies(
    records: &[MessageRecord],
) -> (
    BTreeMap<String, u64>,
    BTreeMap<String, u64>,
    BTreeMap<String, u64>,
) {
    let (mut outcomes, mut apis, mut failures) =
        (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for attempt in records.iter().flat_map(|r| &r.attempts) {
        match &attempt.result {
            AttemptResult::Acked(ack) => {
                *outcomes
                    .entry(outcome_name(ack.outcome).to_owned())
                    .or_default() += 1;
                *apis.entry(format!("{:?}", attempt.api)).or_default() += 1;
            }
            AttemptResult::Rejected(_) => *failures.entry("REJECTED".to_owned()).or_default() += 1,
            AttemptResult::Failed { code, .. } => *failures.entry(code.clone()).or_default() += 1,
        }
    }
    (outcomes, apis, failures)
}

#[cfg(test)]
mod tests {
    use openclaw_proto::agent::v1::{self as pb, disposition::Outcome};

    use super::*;
    use crate::{
        ledger::{Ack, Attempt},
        transcripts::{OpenCall, Pairs, TranscriptScan},
    };

    const KEY: &str = "agent:main:soak-c0-s0-g0";

    fn attempt(at_ms: u64, incarnation: u64, result: AttemptResult) -> Attempt {
        Attempt {
            at: Duration::from_millis(at_ms),
            answered_at: Duration::from_millis(at_ms + 5),
            api: Api::Send,
            mode: pb::QueueMode::Followup,
            incarnations: (incarnation, incarnation),
            result,
        }
    }

    fn acked(seq: u64) -> AttemptResult {
        AttemptResult::Acked(Ack {
            outcome: Outcome::Followup,
            run: 2,
            seq,
            session_id: "s1".to_owned(),
        })
    }

    fn failed() -> AttemptResult {
        AttemptResult::Failed {
            code: "Unavailable".to_owned(),
            message: "restarting".to_owned(),
        }
    }

    fn record(id: &str, attempts: Vec<Attempt>) -> MessageRecord {
        MessageRecord {
            id: id.to_owned(),
            session_key: KEY.to_owned(),
            attempts,
        }
    }

    fn dir(ids: &[(&str, u32)], open: Vec<OpenCall>) -> DirScan {
        let scan = TranscriptScan {
            ids: ids.iter().map(|(id, n)| ((*id).to_owned(), *n)).collect(),
            pairs: Pairs {
                calls: 1 + open.len() as u64,
                complete: 1,
                open,
                ..Pairs::default()
            },
            ..TranscriptScan::default()
        };
        DirScan {
            index: BTreeMap::from([(KEY.to_owned(), "s1".to_owned())]),
            transcripts: BTreeMap::from([("s1".to_owned(), scan)]),
            quarantined: Vec::new(),
        }
    }

    #[test]
    fn lost_duplicated_and_found_messages_are_told_apart() {
        let clock = Clock::start();
        let records = [
            record("found", vec![attempt(10, 1, acked(1))]),
            record("lost", vec![attempt(20, 1, acked(2))]),
            record(
                "twice",
                vec![attempt(30, 1, failed()), attempt(900, 2, acked(1))],
            ),
            record("never", vec![attempt(40, 1, failed())]),
        ];
        let incarnations = [
            Incarnation {
                number: 1,
                started_at: Duration::ZERO,
                ended_at: Some(Duration::from_millis(500)),
                ended_by: Some(Ending::Sigkill),
            },
            Incarnation {
                number: 2,
                started_at: Duration::from_millis(600),
                ended_at: Some(Duration::from_secs(2)),
                ended_by: Some(Ending::Shutdown),
            },
        ];
        let killed_at = (clock.wall + jiff::SignedDuration::from_millis(200)).to_string();
        let open = vec![OpenCall {
            call_id: "k9".to_owned(),
            timestamp: killed_at,
            model_called_after: false,
        }];
        let files = dir(&[("found", 1), ("twice", 2), ("never", 1)], open);
        let rpc = BTreeMap::from([(
            KEY.to_owned(),
            RpcScan {
                session_id: "s1".to_owned(),
                scan: files.transcripts["s1"].clone(),
            },
        )]);
        let started = BTreeSet::new();
        let r = reconcile(&Evidence {
            records: &records,
            started: &started,
            incarnations: &incarnations,
            first: &files,
            last: &files,
            rpc: &rpc,
            clock,
        });
        assert_eq!((r.acknowledged, r.found), (3, 1));
        assert_eq!(r.lost.len(), 1);
        let lost = &r.lost[0];
        assert_eq!(
            (lost.id.as_str(), lost.outcome, lost.ended_by),
            ("lost", "followup", Some(Ending::Sigkill))
        );
        assert_eq!(lost.ended_after_ack, Some(Duration::from_millis(475)));
        assert!(lost.category().contains("SIGKILL"), "{}", lost.category());
        assert_eq!(
            r.duplicated,
            [Duplicate {
                id: "twice".to_owned(),
                copies: 2,
                acknowledged: true,
                retried: true,
            }]
        );
        assert_eq!((r.unacknowledged, r.unacknowledged_written), (1, 1));
        assert!(r.rpc_mismatches.is_empty(), "{:?}", r.rpc_mismatches);
        assert_eq!(r.open_calls_explained.len(), 1, "{r:?}");
        assert!(r.pairing_failures.is_empty(), "{:?}", r.pairing_failures);
    }

    #[test]
    fn rpc_differences_and_unexplained_open_calls_fail() {
        let clock = Clock::start();
        let records = [record("a", vec![attempt(10, 1, acked(1))])];
        let incarnations = [Incarnation {
            number: 1,
            started_at: Duration::ZERO,
            ended_at: Some(Duration::from_secs(5)),
            ended_by: Some(Ending::Shutdown),
        }];
        let open = vec![OpenCall {
            call_id: "k1".to_owned(),
            timestamp: (clock.wall + jiff::SignedDuration::from_millis(100)).to_string(),
            model_called_after: false,
        }];
        let files = dir(&[("a", 1)], open);
        let mut via_rpc = files.transcripts["s1"].clone();
        via_rpc.ids.clear();
        let rpc = BTreeMap::from([(
            KEY.to_owned(),
            RpcScan {
                session_id: "s1".to_owned(),
                scan: via_rpc,
            },
        )]);
        let started = BTreeSet::new();
        let r = reconcile(&Evidence {
            records: &records,
            started: &started,
            incarnations: &incarnations,
            first: &files,
            last: &files,
            rpc: &rpc,
            clock,
        });
        assert_eq!(r.found, 1);
        assert_eq!(
            r.rpc_mismatches,
            [format!(
                "{KEY}: a occurs 1 time(s) in the file, 0 via GetTranscript"
            )]
        );
        assert_eq!(r.pairing_failures.len(), 1, "{r:?}");
    }
}

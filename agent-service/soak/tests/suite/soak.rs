//! The short soaks, run side by side: the real binaries, 2 clients for 30 s.
//!
//! - On the embedded runtime, at least one of every fault (SIGTERM, SIGKILL,
//!   prompt-service restart and outage, a corrupt session index, a poison
//!   journal entry, a hung model server), with poison messages among the
//!   clients'.
//! - On the Codex runtime (the pinned `codex app-server`, installed into
//!   `.tools/` by npm on first use), SIGKILLs of agent-service and of its
//!   Codex app-server alone.
//!
//! Every acknowledged message must be found exactly once, every poison
//! message refused, and every session must still answer afterwards.
//!
//! It needs the `prompt-service` and `agent-service` binaries of the same
//! build: `cargo test --workspace` builds them; with `-p openclaw-soak` alone
//! add `-p prompt-server -p agent-server`.

use std::time::Duration;

use openclaw_soak::{Binaries, FaultKind, Options, Report};

fn binaries() -> Binaries {
    let exe = std::env::current_exe().expect("test executable");
    Binaries::near(&exe).expect("the servers' binaries (see the module comment)")
}

/// Nothing acknowledged lost or doubled, no session wedged, every fault's
/// own check held, at least one fault of each of `kinds`.
fn assert_clean(report: &Report, kinds: &[FaultKind]) {
    for &kind in kinds {
        assert!(
            report.faults_of(kind) >= 1,
            "no {} injected:\n{report}",
            kind.name()
        );
    }
    assert!(
        report.check.acknowledged >= 20,
        "too little load:\n{report}"
    );
    assert!(
        report.check.lost.is_empty(),
        "acknowledged messages were lost:\n{report}"
    );
    assert!(
        report.check.duplicated.is_empty(),
        "messages were duplicated:\n{report}"
    );
    assert!(report.probed >= 1 && report.wedged.is_empty(), "{report}");
    for fault in &report.faults {
        if let Some(Err(why)) = &fault.observed {
            panic!("{} failed its check: {why}\n{report}", fault.kind.name());
        }
    }
    assert!(report.passed(), "{report}");
    assert_eq!(report.check.found, report.check.acknowledged, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_soak_with_every_fault_loses_no_acknowledged_message() {
    let options = Options {
        duration: Duration::from_secs(30),
        fault_interval: (Duration::from_millis(1000), Duration::from_millis(2000)),
        poison_percent: 5,
        ..Options::short(binaries())
    };
    let kinds = options.faults.clone();
    let report = openclaw_soak::run(options).await.expect("the soak ran");
    println!("{report}");

    assert_clean(&report, &kinds);
    assert!(
        report.poison.sent >= 1 && report.poison.acknowledged.is_empty(),
        "{report}"
    );
    assert!(
        report.poison.refused >= 1,
        "no poison message was refused:\n{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_codex_soak_with_agent_and_codex_kills_loses_no_acknowledged_message() {
    let kinds = [FaultKind::SigkillAgent, FaultKind::SigkillCodex];
    let options = Options {
        duration: Duration::from_secs(30),
        faults: kinds.to_vec(),
        fault_interval: (Duration::from_millis(1500), Duration::from_millis(3000)),
        poison_percent: 0,
        ..Options::short_codex(binaries())
    };
    let report = openclaw_soak::run(options).await.expect("the soak ran");
    println!("{report}");

    assert_clean(&report, &kinds);
    let codex = &report.codex;
    assert!(
        codex.killed_by_faults >= 1,
        "no Codex process was killed:\n{report}"
    );
    assert!(
        codex.orphans_killed.is_empty() && codex.left_at_end.is_empty(),
        "Codex processes outlived their agent-service:\n{report}"
    );
}

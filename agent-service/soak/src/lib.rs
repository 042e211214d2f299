//! A bounded soak test with faults for the OpenClaw services.
//!
//! What it is for: starting the real `prompt-service` and `agent-service`
//! binaries on loopback over a fresh state directory, with an agent-testkit
//! fake model server (a real provider wire format, streamed replies with
//! delays and occasional tool calls) named in the `openclaw.json` it writes;
//! running N conversation clients that send uniquely numbered messages
//! through `Send` and `Run` in mixed queue modes while a fault injector
//! SIGTERMs, SIGKILLs and restarts agent-service, restarts prompt-service
//! and hangs the fake model (requests taken and never answered, or streams
//! stopped after their first delta: [`FaultKind::HungModel`]) at random
//! intervals; then stopping everything cleanly and reconciling
//! every acknowledged message (the rule is in [`ledger`]) against the
//! transcripts, read both from the files (the transcript crate's reader) and
//! through `GetTranscript` after a final restart. It stops by itself after
//! [`Options::duration`] and reports load held, faults, and messages
//! acknowledged, found, duplicated and lost ([`Report`]).
//!
//! With [`Runtime::Codex`] the agent runs on the Codex runtime instead:
//! agent-service drives a real `codex app-server` child (the pinned version)
//! against the fake model's Responses API, the Codex children can be
//! SIGKILLed on their own ([`FaultKind::SigkillCodex`]), and every Codex
//! process is accounted for: killed by a fault, gone with its agent-service,
//! or left over and killed at the end ([`CodexChildren`]).
//!
//! What it is not for: benchmarks (the model is fake, the machine shared),
//! anything beyond loopback, or judging replies. It changes nothing in the
//! services; it only drives them and reads what they wrote.

mod client;
mod cluster;
mod damage;
mod error;
mod faults;
pub mod ledger;
mod model;
mod procs;
mod reconcile;
mod report;
mod rng;
mod services;
mod soak;
mod transcripts;

pub use client::{Poison, RunEnds};
pub use cluster::{Ending, Incarnation};
pub use error::SoakError;
pub use faults::{FaultKind, FaultRecord};
pub use reconcile::{Duplicate, Lost, Reconciliation};
pub use report::{CodexChildren, Report};
pub use soak::{Binaries, Options, Runtime, run};

/// Re-exported so callers can pick the fake model's wire format.
pub use agent_testkit::WireFormat;

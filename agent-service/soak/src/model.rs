//! The fake model: an agent-testkit server speaking a real provider wire
//! format, kept supplied with scripted replies. Most replies stream a few
//! lines of text with delays between frames; some call a tool (`read` of
//! AGENTS.md, or `exec` of a short sleep) so runs have tool batches. The
//! delays keep runs active long enough that steered, follow-up, collected
//! and interrupting messages meet runs in flight.

use std::time::Duration;

use agent_testkit::{FakeReply, FakeServer, FakeServerHandle, WireFormat};
use serde_json::json;
use tokio::task::JoinHandle;

use crate::{error::SoakError, rng::Rng};

/// Replies queued ahead of the requests served.
const AHEAD: u64 = 256;
/// How often the queue is topped up.
const REFILL_EVERY: Duration = Duration::from_millis(20);
/// The provider's timeouts in the soak's config (connect, first byte, idle between chunks):
/// short, so a hung-model fault resolves in seconds (three attempts, 2 s each, with 1 s and
/// 2 s between them), and far above the fake's own delays (at most 0.4 s before the first
/// byte, 50 ms between frames).
pub(crate) const PROVIDER_TIMEOUTS: &str =
    "timeouts: { connectSeconds: 2, firstByteSeconds: 2, idleSeconds: 2 }";
/// The model id the config names.
pub(crate) const MODEL: &str = "soak-model";

/// A running fake model server and the task that keeps its queue full.
pub(crate) struct FakeModel {
    base_url: String,
    format: WireFormat,
    handle: FakeServerHandle,
    refill: JoinHandle<()>,
}

impl FakeModel {
    pub(crate) async fn start(format: WireFormat, mut rng: Rng) -> Result<Self, SoakError> {
        let (base_url, handle) = FakeServer::start(format)
            .await
            .map_err(SoakError::io("start the fake model server"))?;
        // A long soak makes tens of thousands of requests; their bodies are
        // not needed, only the count.
        handle.set_recording(false);
        let feeder = handle.clone();
        let refill = tokio::spawn(async move {
            let mut pushed = 0u64;
            let mut tick = tokio::time::interval(REFILL_EVERY);
            loop {
                tick.tick().await;
                while pushed < feeder.request_count() + AHEAD {
                    pushed += 1;
                    feeder.push(reply(&mut rng, pushed));
                }
            }
        });
        Ok(Self {
            base_url,
            format,
            handle,
            refill,
        })
    }

    /// Model requests served so far.
    pub(crate) fn requests(&self) -> u64 {
        self.handle.request_count()
    }

    /// Starts (`true`) or ends a hang: requests are taken and never answered, or answered
    /// with a stream that stops after its first delta (see agent-testkit's `set_hanging`).
    pub(crate) fn hang(&self, on: bool) {
        self.handle.set_hanging(on);
    }

    /// Model requests hung so far.
    pub(crate) fn hung(&self) -> u64 {
        self.handle.hung_count()
    }

    /// The server's base URL.
    pub(crate) fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The `models.providers.fake` entry pointing at this server.
    pub(crate) fn provider_json5(&self) -> String {
        format!(
            r#"fake: {{ baseUrl: "{}", api: "{}", apiKey: "soak-key", {PROVIDER_TIMEOUTS}, models: [{{ id: "{MODEL}" }}] }}"#,
            self.base_url,
            self.format.api()
        )
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.refill.abort();
    }
}

/// Reply number `n`: text in several delayed deltas, or (one in four) a tool
/// call; now and then a slow first byte.
fn reply(rng: &mut Rng, n: u64) -> FakeReply {
    let frame_delay = rng.between(Duration::from_millis(10), Duration::from_millis(50));
    let deltas = usize::try_from(2 + rng.below(6)).unwrap_or(4);
    let reply = if rng.chance(25) {
        let call = format!("soak-call-{n}");
        let tool = if rng.chance(50) {
            FakeReply::tool_call(call, "read", json!({ "path": "AGENTS.md" }))
        } else {
            FakeReply::tool_call(call, "exec", json!({ "command": "sleep 0.2" }))
        };
        tool.with_text(format!("Checking something first ({n})."))
            .argument_chunks(2)
    } else {
        let words = 8 + rng.below(40);
        let text: Vec<String> = (0..words).map(|w| format!("w{}", (n + w) % 97)).collect();
        FakeReply::text(format!("Reply {n}: {}.", text.join(" ")))
    };
    let reply = reply.deltas(deltas).frame_delay(frame_delay);
    if rng.chance(10) {
        reply.delay(rng.between(Duration::from_millis(100), Duration::from_millis(400)))
    } else {
        reply
    }
}

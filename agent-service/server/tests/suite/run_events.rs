//! Run requests and their event streams: the session and Telegram chat most tests speak from,
//! reading a stream up to an event, and picking the final or error event out of what was read.

use std::time::Duration;

use openclaw_proto::agent::v1::{self as pb, run_event::Event};

/// How long [`read_until`] waits for each event.
const EVENT_WAIT: Duration = Duration::from_secs(30);

/// The default agent's session `key`.
pub fn session_key(key: impl Into<String>) -> Option<pb::SessionRef> {
    Some(pb::SessionRef {
        agent_id: String::new(),
        target: Some(pb::session_ref::Target::SessionKey(key.into())),
    })
}

/// A Telegram chat of type `chat` with sender 42.
pub fn telegram_in(chat: pb::ChatType) -> Option<pb::ChannelContext> {
    Some(pb::ChannelContext {
        channel: "telegram".into(),
        chat_type: chat as i32,
        sender_id: "42".into(),
        ..Default::default()
    })
}

/// A direct Telegram chat with sender 42.
pub fn telegram() -> Option<pb::ChannelContext> {
    telegram_in(pb::ChatType::Direct)
}

/// Reads until `stop` matches (that event included) or the stream ends, each event within
/// 30 s.
pub async fn read_until(
    stream: &mut tonic::Streaming<pb::RunEvent>,
    stop: impl Fn(&pb::RunEvent) -> bool,
) -> Vec<pb::RunEvent> {
    read_until_within(stream, EVENT_WAIT, stop).await
}

/// [`read_until`], each event within `patience`.
pub async fn read_until_within(
    stream: &mut tonic::Streaming<pb::RunEvent>,
    patience: Duration,
    stop: impl Fn(&pb::RunEvent) -> bool,
) -> Vec<pb::RunEvent> {
    let mut events = Vec::new();
    loop {
        let next = tokio::time::timeout(patience, stream.message())
            .await
            .unwrap_or_else(|_| panic!("an event within {patience:?}"))
            .expect("stream");
        let Some(event) = next else { return events };
        let done = stop(&event);
        events.push(event);
        if done {
            return events;
        }
    }
}

/// Reads `stream` up to its Accepted event, which must say the message interrupted run
/// `interrupted` and starts run `run`.
pub async fn assert_interrupts(
    stream: &mut tonic::Streaming<pb::RunEvent>,
    run: u64,
    interrupted: u64,
) {
    let accepted = read_until(stream, |e| matches!(e.event, Some(Event::Accepted(_)))).await;
    let disposition = events_of!(&accepted, Accepted)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no Accepted event in {accepted:#?}"));
    assert_eq!(
        disposition.outcome(),
        pb::disposition::Outcome::Interrupted,
        "{disposition:?}"
    );
    assert_eq!(
        (disposition.run, disposition.interrupted_run),
        (run, interrupted)
    );
}

/// The final event of `events`, if there is one.
pub fn find_final(events: &[pb::RunEvent]) -> Option<pb::RunFinal> {
    events_of!(&events, Final).into_iter().next()
}

/// The final event of `events`; panics, showing them, when there is none.
pub fn final_of(events: &[pb::RunEvent]) -> pb::RunFinal {
    find_final(events).unwrap_or_else(|| panic!("no final event in {events:#?}"))
}

/// The error event of `events`, if there is one.
pub fn find_error(events: &[pb::RunEvent]) -> Option<pb::RunError> {
    events_of!(&events, Error).into_iter().next()
}

/// What [`events_of!`] reads an event out of: a streamed `RunEvent` or a bare event.
pub trait HasEvent {
    /// The event it carries.
    fn event(&self) -> Option<&Event>;
}

impl HasEvent for pb::RunEvent {
    fn event(&self) -> Option<&Event> {
        self.event.as_ref()
    }
}

impl HasEvent for Event {
    fn event(&self) -> Option<&Event> {
        Some(self)
    }
}

/// What `pick` takes out of each of `events`, in order.
pub fn picked<E: HasEvent, T>(events: &[E], pick: impl Fn(&Event) -> Option<T>) -> Vec<T> {
    events
        .iter()
        .filter_map(|e| e.event().and_then(&pick))
        .collect()
}

/// The payloads of the `Event::$variant` events of `$events` (RunEvents or bare events),
/// cloned, in order.
macro_rules! events_of {
    ($events:expr, $variant:ident) => {
        $crate::suite::run_events::picked($events, |e| match e {
            ::openclaw_proto::agent::v1::run_event::Event::$variant(x) => Some(x.clone()),
            _ => None,
        })
    };
}
pub(crate) use events_of;

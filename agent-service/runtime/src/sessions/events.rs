//! A session's run events, fanned out to every subscriber (Run streams, watchers, the
//! runtime's own followers).
//!
//! Each subscriber has its own queue, which holds what it has not read yet and nothing
//! more: an open session with no subscriber, or with subscribers that keep up, holds no
//! event buffer at all. (A broadcast ring allocated whole when the session opened cost
//! every open session 160 KB, most of an idle session's memory.) A subscriber that falls
//! [`LAG_LIMIT`] events behind loses the oldest ones and is told how many with
//! [`RecvError::Lagged`] before the next event it gets, so the newest events, among them a
//! run's terminal one, always arrive. Every subscriber sees the events in the order they were
//! published. When the session is dropped, each subscriber reads what is left and then
//! [`RecvError::Closed`].

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, PoisonError, Weak},
};

use futures_util::Stream;
use tokio::sync::Notify;

use super::live::SessionEvent;

/// Events a subscriber may fall behind before it loses the oldest.
pub const LAG_LIMIT: usize = 4096;

/// A queue emptied past this many slots gives its memory back.
const KEEP_SLOTS: usize = 32;

/// Why [`SessionEvents::recv`] returned no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvError {
    /// The subscriber fell behind and this many events were dropped (the oldest unread);
    /// the next call returns the oldest event still kept.
    Lagged(u64),
    /// The session is gone and every event was read.
    Closed,
}

/// The publishing side, owned by the session.
#[derive(Debug, Default)]
pub(crate) struct EventHub {
    subscribers: Mutex<Vec<Weak<Queue>>>,
}

#[derive(Debug, Default)]
struct Queue {
    state: Mutex<Pending>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct Pending {
    events: VecDeque<Arc<SessionEvent>>,
    missed: u64,
    closed: bool,
}

impl EventHub {
    /// A subscriber that gets every event published from now on.
    pub(crate) fn subscribe(&self) -> SessionEvents {
        let queue = Arc::new(Queue::default());
        let mut subscribers = self.lock();
        subscribers.retain(|s| s.strong_count() > 0);
        subscribers.push(Arc::downgrade(&queue));
        SessionEvents { queue }
    }

    /// Subscribers alive now.
    pub(crate) fn receiver_count(&self) -> usize {
        self.lock().iter().filter(|s| s.strong_count() > 0).count()
    }

    /// Gives `event` to every subscriber (none is fine).
    pub(crate) fn send(&self, event: SessionEvent) {
        // Under the lock, so concurrent publishers reach every subscriber in the same order.
        let mut subscribers = self.lock();
        if subscribers.is_empty() {
            return;
        }
        let event = Arc::new(event);
        subscribers.retain(|subscriber| {
            let Some(queue) = subscriber.upgrade() else {
                return false;
            };
            {
                let mut pending = queue.lock();
                if pending.events.len() >= LAG_LIMIT {
                    pending.events.pop_front();
                    pending.missed += 1;
                }
                pending.events.push_back(Arc::clone(&event));
            }
            queue.ready.notify_one();
            true
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Queue>>> {
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for EventHub {
    fn drop(&mut self) {
        for queue in self.lock().drain(..).filter_map(|s| s.upgrade()) {
            queue.lock().closed = true;
            queue.ready.notify_one();
        }
    }
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&self) -> Option<Result<Arc<SessionEvent>, RecvError>> {
        let mut pending = self.lock();
        if pending.missed > 0 {
            return Some(Err(RecvError::Lagged(std::mem::take(&mut pending.missed))));
        }
        if let Some(event) = pending.events.pop_front() {
            if pending.events.is_empty() && pending.events.capacity() > KEEP_SLOTS {
                pending.events = VecDeque::new();
            }
            return Some(Ok(event));
        }
        pending.closed.then_some(Err(RecvError::Closed))
    }
}

/// A subscription to a session's run events.
#[derive(Debug)]
pub struct SessionEvents {
    queue: Arc<Queue>,
}

impl SessionEvents {
    /// The next event; see [`RecvError`] for the other outcomes.
    pub async fn recv(&mut self) -> Result<Arc<SessionEvent>, RecvError> {
        loop {
            if let Some(next) = self.queue.take() {
                return next;
            }
            // One waiter per queue: a notification sent between `take` and here is kept as
            // a permit, so none is lost.
            self.queue.ready.notified().await;
        }
    }

    /// The next event if one is waiting, without waiting; `None` when nothing is.
    pub fn try_recv(&mut self) -> Option<Result<Arc<SessionEvent>, RecvError>> {
        self.queue.take()
    }

    /// The events as a stream, ending once the session is gone and every event was read;
    /// `Err(n)` where `n` events were dropped for falling behind.
    pub fn into_stream(self) -> impl Stream<Item = Result<Arc<SessionEvent>, u64>> + Send {
        futures_util::stream::unfold(self, |mut events| async move {
            match events.recv().await {
                Ok(event) => Some((Ok(event), events)),
                Err(RecvError::Lagged(missed)) => Some((Err(missed), events)),
                Err(RecvError::Closed) => None,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::StreamExt;

    use super::*;
    use crate::events::RunEvent;

    fn event(run: u64) -> SessionEvent {
        SessionEvent {
            run,
            event: RunEvent::Lagged(run),
        }
    }

    async fn next_run(events: &mut SessionEvents) -> Result<u64, RecvError> {
        tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .expect("an event or an error within 5 s")
            .map(|e| e.run)
    }

    #[tokio::test]
    async fn every_subscriber_gets_every_event_from_its_subscription_on() {
        let hub = EventHub::default();
        hub.send(event(1));
        let mut first = hub.subscribe();
        hub.send(event(2));
        let mut second = hub.subscribe();
        hub.send(event(3));
        assert_eq!(next_run(&mut first).await, Ok(2));
        assert_eq!(next_run(&mut first).await, Ok(3));
        assert_eq!(next_run(&mut second).await, Ok(3));
        assert_eq!(hub.receiver_count(), 2);
        drop(first);
        assert_eq!(hub.receiver_count(), 1);
    }

    #[tokio::test]
    async fn a_waiting_subscriber_is_woken() {
        let hub = Arc::new(EventHub::default());
        let mut events = hub.subscribe();
        let reader = tokio::spawn(async move { next_run(&mut events).await });
        tokio::task::yield_now().await;
        hub.send(event(7));
        assert_eq!(reader.await.expect("reader"), Ok(7));
    }

    #[tokio::test]
    async fn a_subscriber_behind_loses_the_oldest_and_is_told_how_many() {
        let hub = EventHub::default();
        let mut events = hub.subscribe();
        let sent = LAG_LIMIT as u64 + 5;
        for run in 1..=sent {
            hub.send(event(run));
        }
        assert_eq!(next_run(&mut events).await, Err(RecvError::Lagged(5)));
        // The oldest kept comes next, and the newest (a run's terminal event) is never lost.
        assert_eq!(next_run(&mut events).await, Ok(6));
        let mut last = 6;
        for _ in 7..=sent {
            last = next_run(&mut events).await.expect("an event");
        }
        assert_eq!(last, sent);
    }

    #[tokio::test]
    async fn a_queue_read_empty_gives_its_memory_back() {
        let hub = EventHub::default();
        let mut events = hub.subscribe();
        for run in 0..1000 {
            hub.send(event(run));
        }
        assert!(events.queue.lock().events.capacity() >= 1000);
        for _ in 0..1000 {
            next_run(&mut events).await.expect("an event");
        }
        assert_eq!(events.queue.lock().events.capacity(), 0);
    }

    #[tokio::test]
    async fn subscribers_read_what_is_left_then_closed_when_the_session_goes() {
        let hub = EventHub::default();
        let mut events = hub.subscribe();
        let stream = hub.subscribe().into_stream();
        hub.send(event(1));
        drop(hub);
        assert_eq!(next_run(&mut events).await, Ok(1));
        assert_eq!(next_run(&mut events).await, Err(RecvError::Closed));
        let runs: Vec<_> = stream.map(|e| e.map(|e| e.run)).collect().await;
        assert_eq!(runs, vec![Ok(1)]);
    }

    #[tokio::test]
    async fn concurrent_publishers_reach_every_subscriber_in_one_order() {
        let hub = Arc::new(EventHub::default());
        let mut a = hub.subscribe();
        let mut b = hub.subscribe();
        let publishers: Vec<_> = (0..4u64)
            .map(|p| {
                let hub = Arc::clone(&hub);
                std::thread::spawn(move || {
                    for i in 0..200 {
                        hub.send(event(p * 1000 + i));
                    }
                })
            })
            .collect();
        for publisher in publishers {
            publisher.join().expect("publisher");
        }
        let mut seen_a = Vec::new();
        let mut seen_b = Vec::new();
        for _ in 0..800 {
            seen_a.push(next_run(&mut a).await.expect("event"));
            seen_b.push(next_run(&mut b).await.expect("event"));
        }
        assert_eq!(seen_a, seen_b);
    }
}

//! Who hears a room's events, and the last events kept for a quick
//! catch-up, as the text that was stored and sent (never parsed back).

use std::collections::VecDeque;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::outbox::{ConnId, Frames, Outbox};

/// The most subscribers a room writes to directly (the two players and
/// a couple of watchers); see [`Subscribers::tell`].
const DIRECT_FANOUT: usize = 4;

pub struct Subscribers {
    outboxes: HashMap<ConnId, Outbox>,
    /// The last events' text, oldest first; a client further behind gets a
    /// snapshot, so a room's memory does not grow with its event log.
    recent: VecDeque<Arc<str>>,
    keep: usize,
}

impl Subscribers {
    /// Keeps the last `keep` events.
    pub fn new(keep: usize) -> Subscribers {
        Subscribers {
            outboxes: HashMap::new(),
            recent: VecDeque::new(),
            keep,
        }
    }

    pub fn contains(&self, conn: ConnId) -> bool {
        self.outboxes.contains_key(&conn)
    }

    pub fn insert(&mut self, outbox: Outbox) {
        self.outboxes.insert(outbox.conn, outbox);
    }

    pub fn remove(&mut self, conn: ConnId) -> Option<Outbox> {
        self.outboxes.remove(&conn)
    }

    pub fn outboxes(&self) -> impl Iterator<Item = &Outbox> {
        self.outboxes.values()
    }

    /// Keeps an event for a quick catch-up (the oldest kept one goes).
    pub fn remember(&mut self, event: Arc<str>) {
        if self.recent.len() >= self.keep {
            self.recent.pop_front();
        }
        if self.keep > 0 {
            self.recent.push_back(event);
        }
    }

    /// The events after `since` when the last is `last`: None when some are
    /// older than those kept, or when they come to more than `budget` bytes
    /// (then the client gets a snapshot).
    pub fn after(&self, since: u64, last: u64, budget: usize) -> Option<Vec<Arc<str>>> {
        let first_kept = last - self.recent.len() as u64;
        if since < first_kept {
            return None;
        }
        let wanted = self.recent.range((since - first_kept) as usize..);
        let bytes: usize = wanted.clone().map(|t| t.len()).sum();
        (bytes <= budget).then(|| wanted.cloned().collect())
    }

    /// Tells every subscriber `frames`, in order. `ack`: a command's sender
    /// and its `ack`, which goes first; when the sender subscribes, the ack
    /// and the first frame leave together (one write). A subscriber whose
    /// connection is gone is dropped. The frames go straight to the sockets
    /// (from the room's task) only in a room of at most [`DIRECT_FANOUT`]
    /// subscribers; in a larger one, to their queues, and each connection's
    /// task writes its own: many watchers cannot slow the players' moves.
    pub fn tell(&mut self, frames: Vec<Utf8Bytes>, ack: Option<(&Outbox, Utf8Bytes)>) {
        let direct = self.outboxes.len() <= DIRECT_FANOUT;
        let send = |o: &Outbox, frame: Utf8Bytes| {
            if direct {
                o.send_frame(frame)
            } else {
                o.queue_frame(frame)
            }
        };
        let mut frames = frames.into_iter();
        let mut first = frames.next();
        let mut acked = None;
        if let Some((outbox, ack)) = ack {
            match first.take() {
                Some(frame) if self.contains(outbox.conn) => {
                    if outbox.send_frames(Frames::Two(Box::new((ack, frame.clone())))) {
                        acked = Some(outbox.conn);
                    }
                    self.outboxes
                        .retain(|conn, o| Some(*conn) == acked || send(o, frame.clone()));
                }
                other => {
                    outbox.send_frame(ack);
                    first = other;
                }
            }
        }
        for frame in first.into_iter().chain(frames) {
            self.outboxes.retain(|_, o| send(o, frame.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many subscribers get a frame queued (not written directly) when
    /// a room of `count` tells them one.
    async fn queued_in_a_room_of(count: u64) -> usize {
        let mut subscribers = Subscribers::new(4);
        let mut ends = Vec::new();
        for conn in 0..count {
            let (tcp, client) = crate::wire::tests::pair().await;
            let (outbox, queue) = Outbox::new(conn, 8, usize::MAX);
            queue.attach(tcp.wire());
            subscribers.insert(outbox);
            ends.push((tcp, client, queue));
        }
        subscribers.tell(vec![Utf8Bytes::from("moved")], None);
        let mut queued = 0;
        for (_, _, queue) in &mut ends {
            queued += usize::from(queue.try_recv().is_some());
        }
        queued
    }

    #[tokio::test]
    async fn a_small_room_writes_to_the_sockets_and_a_crowded_one_queues() {
        assert_eq!(queued_in_a_room_of(DIRECT_FANOUT as u64).await, 0);
        let crowded = DIRECT_FANOUT as u64 + 1;
        assert_eq!(queued_in_a_room_of(crowded).await, crowded as usize);
    }
}

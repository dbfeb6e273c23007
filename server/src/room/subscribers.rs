//! Who hears a room's events, and the last events kept for a quick
//! catch-up, as the text that was stored and sent (never parsed back).

use std::collections::VecDeque;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};
use tokio_tungstenite::tungstenite::Utf8Bytes;

use crate::outbox::{ConnId, Frames, Outbox, MAX_FRAMES};

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

    /// Tells every subscriber `frames`, in order, in as few writes as can
    /// take them. `ack`: a command's sender and its `ack`, which goes first;
    /// when the sender subscribes, the ack and the frames leave together
    /// (one write for a move, its end included). A subscriber whose
    /// connection is gone is dropped. The frames go straight to the sockets
    /// (from the room's task) only in a room of at most [`DIRECT_FANOUT`]
    /// subscribers; in a larger one, to their queues, and each connection's
    /// task writes its own: many watchers cannot slow the players' moves.
    pub fn tell(&mut self, frames: Vec<Utf8Bytes>, ack: Option<(&Outbox, Utf8Bytes)>) {
        let direct = self.outboxes.len() <= DIRECT_FANOUT;
        // The requester, if it is here, and whether it still is once told.
        let mut requester = None;
        if let Some((outbox, ack)) = ack {
            if self.contains(outbox.conn) {
                requester = Some((outbox.conn, send_all(outbox, Some(ack), &frames, true)));
            } else {
                outbox.send_frame(ack);
            }
        }
        self.outboxes.retain(|conn, outbox| match requester {
            Some((requester, here)) if requester == *conn => here,
            _ => send_all(outbox, None, &frames, direct),
        });
    }
}

/// Sends `first` (an `ack`) and `frames` to `outbox`, each write taking as
/// many as one write can (a player hears a move's end with the move itself,
/// in one `sendmsg`); false once its connection is gone. With `direct`, to
/// the socket if nothing waits before them; otherwise through the
/// connection's queue.
fn send_all(
    outbox: &Outbox,
    mut first: Option<Utf8Bytes>,
    frames: &[Utf8Bytes],
    direct: bool,
) -> bool {
    let mut rest = frames;
    loop {
        let take = rest.len().min(MAX_FRAMES - usize::from(first.is_some()));
        let (now, later) = rest.split_at(take);
        let Some(write) = Frames::of(first.take(), now) else {
            return true;
        };
        let sent = if direct {
            outbox.send_frames(write)
        } else {
            outbox.queue_frames(write)
        };
        if !sent {
            return false;
        }
        rest = later;
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
            let (tcp, client) = crate::tcp::tests::pair().await;
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

    /// What each subscriber of a crowded room (whose frames are queued, so
    /// they can be looked at) gets in each write when the room tells it
    /// `events` after subscriber 0's request.
    async fn writes_in_a_crowded_room(events: usize) -> Vec<Vec<Vec<String>>> {
        let mut subscribers = Subscribers::new(4);
        let mut queues = Vec::new();
        let mut outboxes = Vec::new();
        for conn in 0..=DIRECT_FANOUT as u64 {
            let (outbox, queue) = Outbox::new(conn, 64, usize::MAX);
            subscribers.insert(outbox.clone());
            outboxes.push(outbox);
            queues.push(queue);
        }
        let frames = (1..=events)
            .map(|n| Utf8Bytes::from(format!("e{n}")))
            .collect();
        subscribers.tell(frames, Some((&outboxes[0], Utf8Bytes::from("ack"))));
        let mut writes = Vec::new();
        for queue in &mut queues {
            let mut of_one = Vec::new();
            while let Some(write) = queue.try_recv() {
                of_one.push(write.into_iter().map(|f| f.to_string()).collect());
            }
            writes.push(of_one);
        }
        writes
    }

    #[tokio::test]
    async fn a_decisions_frames_leave_in_as_few_writes_as_take_them() {
        let w = |texts: &[&str]| texts.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        // A move: the mover's ack and event in one write, the event alone to
        // the others.
        let writes = writes_in_a_crowded_room(1).await;
        assert_eq!(writes[0], vec![w(&["ack", "e1"])]);
        assert!(writes[1..].iter().all(|of_one| *of_one == vec![w(&["e1"])]));
        // A last move: its end goes with it.
        let writes = writes_in_a_crowded_room(2).await;
        assert_eq!(writes[0], vec![w(&["ack", "e1", "e2"])]);
        assert!(writes[1..]
            .iter()
            .all(|of_one| *of_one == vec![w(&["e1", "e2"])]));
        // More than a write takes: in order, over as many as needed.
        let writes = writes_in_a_crowded_room(6).await;
        assert_eq!(
            writes[0],
            vec![w(&["ack", "e1", "e2", "e3"]), w(&["e4", "e5", "e6"])]
        );
        assert!(writes[1..]
            .iter()
            .all(|of_one| *of_one == vec![w(&["e1", "e2", "e3", "e4"]), w(&["e5", "e6"])]));
        // Nothing to tell: the ack alone.
        let writes = writes_in_a_crowded_room(0).await;
        assert_eq!(writes[0], vec![w(&["ack"])]);
        assert!(writes[1..].iter().all(Vec::is_empty));
    }

    #[tokio::test]
    async fn a_subscriber_whose_queue_fills_half_way_is_dropped_and_told_nothing_twice() {
        let mut subscribers = Subscribers::new(4);
        let mut queues = Vec::new();
        let mut outboxes = Vec::new();
        for conn in 0..=DIRECT_FANOUT as u64 {
            // Subscriber 1 takes five frames: the first write of six, not
            // the second.
            let capacity = if conn == 1 { 5 } else { 64 };
            let (outbox, queue) = Outbox::new(conn, capacity, usize::MAX);
            subscribers.insert(outbox.clone());
            outboxes.push(outbox);
            queues.push(queue);
        }
        let frames = |n: usize| (1..=n).map(|n| Utf8Bytes::from(format!("e{n}"))).collect();
        subscribers.tell(frames(6), None);
        assert!(outboxes[1].kick.is_raised());
        assert!(!subscribers.contains(1));
        assert!(subscribers.contains(0) && subscribers.contains(2));
        subscribers.tell(frames(1), None);
        let mut got = Vec::new();
        while let Some(write) = queues[1].try_recv() {
            got.extend(write.into_iter().map(|f| f.to_string()));
        }
        assert_eq!(got, ["e1", "e2", "e3", "e4"]);
    }

    #[tokio::test]
    async fn a_small_room_writes_to_the_sockets_and_a_crowded_one_queues() {
        assert_eq!(queued_in_a_room_of(DIRECT_FANOUT as u64).await, 0);
        let crowded = DIRECT_FANOUT as u64 + 1;
        assert_eq!(queued_in_a_room_of(crowded).await, crowded as usize);
    }
}

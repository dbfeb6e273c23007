//! A connection's outbound queue. Rooms and the connection itself push
//! ready-serialised frames into it; one writer task per socket drains it. The
//! queue is bounded: a reader too slow to keep up is disconnected (it may come
//! back and resume) rather than allowed to stall a match or grow memory.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use grundy_protocol::wire::ServerMsg;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_util::sync::CancellationToken;

/// Identifies a connection inside this server process.
pub type ConnId = u64;

/// What the writer task takes off the queue: one frame, or two that belong
/// together (an `ack` and the event it announces), written with one flush.
#[derive(Debug)]
pub enum Frames {
    One(Utf8Bytes),
    /// Boxed: every slot of a connection's queue is as large as the largest
    /// variant, and idle connections should stay small.
    Two(Box<(Utf8Bytes, Utf8Bytes)>),
}

impl IntoIterator for Frames {
    type Item = Utf8Bytes;
    type IntoIter = std::iter::Flatten<std::array::IntoIter<Option<Utf8Bytes>, 2>>;

    fn into_iter(self) -> Self::IntoIter {
        match self {
            Frames::One(a) => [Some(a), None],
            Frames::Two(pair) => {
                let (a, b) = *pair;
                [Some(a), Some(b)]
            }
        }
        .into_iter()
        .flatten()
    }
}

#[derive(Clone, Debug)]
pub struct Outbox {
    pub conn: ConnId,
    tx: mpsc::Sender<Frames>,
    /// Cancelled to drop the connection (slow reader, shutdown, protocol abuse).
    pub kick: CancellationToken,
    /// The rooms with an unfinished match this connection plays or watches:
    /// rooms add themselves when they accept the connection and remove
    /// themselves when it leaves or the match ends.
    pub rooms: Memberships,
    /// The same for tournaments this connection plays in or follows (until
    /// they finish or refuse it).
    pub tournaments: Memberships,
}

/// The rooms (or tournaments) a connection is in. Shared by the connection
/// and the rooms, it backs the `seats_per_connection` limit and tells a
/// closing connection whom to tell.
#[derive(Clone, Debug, Default)]
pub struct Memberships(Arc<Mutex<HashSet<String>>>);

impl Memberships {
    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        // Each update is a single insert or remove: a poisoned set is still whole.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn enter(&self, id: &str) {
        self.set().insert(id.to_string());
    }

    pub fn exit(&self, id: &str) {
        self.set().remove(id);
    }

    pub fn contains(&self, id: &str) -> bool {
        self.set().contains(id)
    }

    pub fn count(&self) -> usize {
        self.set().len()
    }

    pub fn ids(&self) -> Vec<String> {
        self.set().iter().cloned().collect()
    }
}

impl Outbox {
    pub fn new(conn: ConnId, capacity: usize) -> (Outbox, mpsc::Receiver<Frames>) {
        let (tx, rx) = mpsc::channel(capacity);
        (
            Outbox {
                conn,
                tx,
                kick: CancellationToken::new(),
                rooms: Memberships::default(),
                tournaments: Memberships::default(),
            },
            rx,
        )
    }

    /// Queues a frame; false (and the connection is dropped) if the queue is full
    /// or the connection is gone.
    pub fn send_frame(&self, frame: Utf8Bytes) -> bool {
        self.send_frames(Frames::One(frame))
    }

    /// Queues frames to be written together.
    pub fn send_frames(&self, frames: Frames) -> bool {
        match self.tx.try_send(frames) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::info!(
                    conn = self.conn,
                    "outbound queue full: dropping a slow reader"
                );
                self.kick.cancel();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    pub fn send(&self, msg: &ServerMsg) -> bool {
        self.send_frame(encode(msg))
    }

    pub fn is_closed(&self) -> bool {
        self.tx.is_closed() || self.kick.is_cancelled()
    }
}

/// Serialises a message once, to be shared by every subscriber.
pub fn encode(msg: &ServerMsg) -> Utf8Bytes {
    // Serialising these plain data types cannot fail (no maps with non-string keys).
    Utf8Bytes::from(serde_json::to_string(msg).unwrap_or_else(|e| {
        format!(r#"{{"type":"error","code":"internal","message":"encoding failed: {e}"}}"#)
    }))
}

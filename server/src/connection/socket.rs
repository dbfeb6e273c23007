//! A connection's WebSocket, read and written by the connection's one task.
//!
//! Frames for the peer wait in the connection's [`Queue`] (rooms and the
//! connection itself put them there); whenever the task is polled, everything
//! queued is handed to the socket and flushed once, and then the socket is
//! read. One task instead of a reader and a writer: a move's frames cost no
//! second task's wake-up and no lock on a split stream, and an idle
//! connection holds no writer task and no channel of its own. While the
//! task has nothing in flight and the queue is empty, a room writes its
//! frames to the socket itself (`tcp.rs`) and the task is not woken at all.

use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::{Sink, Stream as _};
use tokio_tungstenite::tungstenite::error::Error as WsError;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

use crate::outbox::Queue;
use crate::stream::Stream;
use crate::tcp::Wire;

/// What reading and writing the socket came to.
pub enum Io {
    /// The next message from the peer (None: the stream ended).
    Read(Option<Result<Message, WsError>>),
    /// Writing failed: the transport is broken.
    WriteFailed,
}

pub struct Socket {
    ws: WebSocketStream<Stream>,
    queue: Queue,
    /// The socket under `ws`, which rooms may write to directly (plain TCP
    /// only).
    wire: Option<Arc<Wire>>,
    /// The queue knows the task has nothing in flight (`Queue::settle`).
    settled: bool,
    /// Pings go out before queued frames.
    control: VecDeque<Message>,
    /// Frames taken off the queue and not yet handed to the socket.
    pending: VecDeque<Utf8Bytes>,
    /// Frames handed to the socket since the last flush.
    unflushed: bool,
    /// A write failed (while a command was being handled).
    failed: bool,
}

impl Socket {
    pub fn new(ws: WebSocketStream<Stream>, queue: Queue) -> Socket {
        let wire = ws.get_ref().wire();
        if let Some(wire) = &wire {
            queue.attach(wire.clone());
        }
        Socket {
            ws,
            queue,
            wire,
            settled: true,
            control: VecDeque::new(),
            pending: VecDeque::new(),
            unflushed: false,
            failed: false,
        }
    }

    /// Sends a ping with the next write.
    pub fn ping(&mut self) {
        self.control.push_back(Message::Ping(Default::default()));
    }

    /// Writes what is queued, then waits for the peer's next message (or a
    /// write failure).
    pub async fn next(&mut self) -> Io {
        poll_fn(|cx| {
            if self.failed || self.poll_write(cx).is_err() {
                self.failed = true;
                return Poll::Ready(Io::WriteFailed);
            }
            Pin::new(&mut self.ws).poll_next(cx).map(Io::Read)
        })
        .await
    }

    /// Runs `work` (a command being handled) while what is queued keeps
    /// going out: a command that waits (for a room, the store, a password
    /// check) does not hold up the connection's other rooms. A write failure
    /// meanwhile is kept for the next [`Socket::next`].
    pub async fn meanwhile<T>(&mut self, work: impl Future<Output = T>) -> T {
        let mut work = pin!(work);
        poll_fn(|cx| {
            if let Poll::Ready(done) = work.as_mut().poll(cx) {
                return Poll::Ready(done);
            }
            if !self.failed && self.poll_write(cx).is_err() {
                self.failed = true;
            }
            Poll::Pending
        })
        .await
    }

    /// Hands everything queued to the socket, then flushes once.
    fn poll_write(&mut self, cx: &mut Context<'_>) -> Result<(), WsError> {
        loop {
            if self.control.is_empty() && self.pending.is_empty() {
                match self.queue.poll_recv(cx) {
                    Poll::Ready(Some(frames)) => {
                        self.settled = false;
                        self.pending.extend(frames);
                    }
                    Poll::Ready(None) | Poll::Pending => break,
                }
            }
            match Pin::new(&mut self.ws).poll_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => return Err(e),
                // Blocked on the peer: the socket wakes the task when it can
                // take more (and flushes what it holds then).
                Poll::Pending => return Ok(()),
            }
            let msg = match self.control.pop_front() {
                Some(control) => control,
                None => match self.pending.pop_front() {
                    Some(frame) => Message::Text(frame),
                    None => break,
                },
            };
            Pin::new(&mut self.ws).start_send(msg)?;
            self.unflushed = true;
        }
        // A room's direct write that went out in part left the rest to
        // this task: flushing writes it.
        if self.unflushed || self.wire.as_ref().is_some_and(|w| w.has_spill()) {
            match Pin::new(&mut self.ws).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.unflushed = false,
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => return Ok(()),
            }
        }
        if !self.settled && self.control.is_empty() && self.pending.is_empty() {
            // Everything taken is out: rooms may write directly again, unless
            // more came meanwhile (its push woke this task, which polls the
            // queue again).
            self.settled = self.queue.settle();
        }
        Ok(())
    }

    /// Writes what is still queued, then the close frame (if any), within
    /// `limit` (a peer that stopped reading cannot hold the task); returns
    /// the stream when all of it went out.
    pub async fn close(mut self, frame: Option<CloseFrame>, limit: Duration) -> Option<Stream> {
        // What comes now goes through the queue, and out before the close.
        self.queue.detach();
        let written = tokio::time::timeout(limit, async {
            if self.failed {
                return Err(());
            }
            while let Some(frames) = self.queue.try_recv() {
                self.pending.extend(frames);
            }
            let queued = std::mem::take(&mut self.pending);
            let mut ws = Pin::new(&mut self.ws);
            for frame in queued {
                futures_util::SinkExt::feed(&mut ws, Message::Text(frame))
                    .await
                    .map_err(|_| ())?;
            }
            if let Some(frame) = frame {
                futures_util::SinkExt::feed(&mut ws, Message::Close(Some(frame)))
                    .await
                    .map_err(|_| ())?;
            }
            futures_util::SinkExt::close(&mut ws).await.map_err(|_| ())
        })
        .await;
        matches!(written, Ok(Ok(()))).then(|| self.ws.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::{Frames, Outbox};
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::protocol::Role;

    #[tokio::test]
    async fn the_connections_task_writes_a_spill_with_nothing_queued() {
        let (tcp, mut client) = crate::tcp::tests::pair().await;
        let wire = tcp.wire();
        let ws = WebSocketStream::from_raw_socket(Stream::Plain(tcp), Role::Server, None).await;
        let (outbox, queue) = Outbox::new(1, 8, usize::MAX);
        let mut socket = Socket::new(ws, queue);
        // Larger than the socket's buffers: written in part, the rest spilled.
        let big = Utf8Bytes::from("x".repeat(300_000));
        assert!(outbox.send_frames(Frames::Many(Box::new([big.clone(), big]))));
        assert!(wire.has_spill(), "the direct write went out whole");
        // Nothing is queued: only the task's own look at the wire gets the
        // rest out while the client reads.
        let read = socket.meanwhile(async {
            for _ in 0..2 {
                let msg = client.next().await.unwrap().unwrap();
                assert_eq!(msg.into_text().unwrap().len(), 300_000);
            }
        });
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the spill went out");
        assert!(!wire.has_spill());
    }
}

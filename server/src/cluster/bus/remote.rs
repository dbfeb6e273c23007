//! The owner's side: commands other nodes forward here, each taken into a
//! remote connection that stands for its client (an outbox like any
//! connection's), whose frames go back to the client's node.

use super::*;

/// A remote connection ended: its rooms and tournaments hear it is gone,
/// as from a client that dropped. A full queue gets it as soon as it has
/// room (a lost `Gone` would leave a seat connected for good).
pub(super) fn leave_rooms(shared: &dyn Inbound, outbox: &Outbox) {
    let conn = outbox.conn;
    for tx in shared.lobby().senders(&outbox.rooms.leave()) {
        if let Err(TrySendError::Full(gone)) = tx.try_send(RoomCmd::Gone { conn }) {
            tokio::spawn(async move { tx.send(*gone).await });
        }
    }
    for tx in shared.tournaments().senders(&outbox.tournaments.leave()) {
        if let Err(TrySendError::Full(gone)) = tx.try_send(TournamentCmd::Gone { conn }) {
            tokio::spawn(async move { tx.send(gone).await });
        }
    }
    outbox.kick.raise();
}

impl Bus {
    /// Commands for this node: each is taken into its remote connection.
    /// Once the node stops taking commands (before its rooms stop), each is
    /// answered [`NOT_HERE`] (its sender looks for the room again) until
    /// the node has handed its rooms over and unsubscribes: after that, a
    /// sender hears at once that nobody serves the node.
    pub(super) async fn commands(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        let mut draining = false;
        loop {
            let message = tokio::select! {
                message = subscription.next() => message,
                _ = self.unsubscribe.cancelled(), if !draining => {
                    // The stream ends once what the bus sent before the
                    // unsubscribe has come (and been answered below).
                    draining = true;
                    if let Err(e) = subscription.drain().await {
                        tracing::warn!("bus: cannot stop taking commands: {e}");
                        return;
                    }
                    continue;
                }
            };
            let Some(message) = message else { return };
            let Some((from, command)) = self.open::<Command>(&message.payload, "command") else {
                if let Some(reply) = message.reply {
                    let _ = self
                        .client
                        .publish(reply, Bytes::from_static(b"refused"))
                        .await;
                }
                continue;
            };
            let answer = {
                let _taking = lock(&self.taking);
                if self.commands_stopped.is_cancelled() && command.what.is_some() {
                    NOT_HERE.to_owned()
                } else {
                    self.take(from, command)
                }
            };
            if let Some(reply) = message.reply {
                let _ = self.client.publish(reply, Bytes::from(answer)).await;
            }
        }
    }

    /// Takes one forwarded command into the remote connection of its client.
    pub(super) fn take(self: &Arc<Self>, from: String, command: Command) -> String {
        let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
            return "this node is not serving yet".into();
        };
        let key = (from.clone(), command.conn);
        let Some(request) = command.what else {
            // The client's connection closed.
            if let Some(remote) = lock(&self.remotes).remove(&key) {
                remote.stop.cancel();
                leave_rooms(&*shared, &remote.outbox);
            }
            return "ok".into();
        };
        if command
            .deadline
            .is_some_and(|deadline| unix_ms() > deadline)
        {
            // Its sender has answered it by now, or soon will: it must not
            // run after the client was told it may not have.
            tracing::info!(
                conn = command.conn,
                "bus: dropped a command that came after its deadline"
            );
            return LATE.into();
        }
        if !request.held_by(shared.lobby(), shared.tournaments()) {
            return NOT_HERE.into();
        }
        let outbox = {
            let mut remotes = lock(&self.remotes);
            match remotes.get(&key) {
                Some(remote) => remote.outbox.clone(),
                None => {
                    let remote = self.open_remote(&shared, from, command.conn);
                    let outbox = remote.outbox.clone();
                    remotes.insert(key, remote);
                    outbox
                }
            }
        };
        shared.deliver(&outbox, request, tokio::time::Instant::now());
        "ok".into()
    }

    /// A new remote connection for client connection `conn` of node `from`,
    /// and the task that sends what its outbox receives back there.
    pub(super) fn open_remote(
        self: &Arc<Self>,
        shared: &Arc<dyn Inbound>,
        from: String,
        conn: ConnId,
    ) -> Remote {
        let config = &shared.config();
        let id = shared.next_conn();
        let handover = Handover::default();
        let (outbox, mut queue) = Outbox::open(
            id,
            config.outbox_capacity,
            config.outbox_bytes,
            config.limits.max_message_bytes,
            Some(handover.clone()),
        );
        let tournaments = outbox.tournaments.clone();
        let stop = CancellationToken::new();
        let bus = self.clone();
        let kicked = outbox.kick.raised();
        let ended = stop.clone();
        let subject = format!("{}.out.{from}", self.prefix);
        let key = (from, conn);
        let task = tokio::spawn(async move {
            let mut seq = 0;
            tokio::pin!(kicked);
            loop {
                let next = tokio::select! {
                    biased;
                    _ = &mut kicked => Next::Kicked,
                    frames = queue.recv() => frames.map_or(Next::End, Next::Frames),
                    _ = handover.left() => Next::Moved,
                    _ = ended.cancelled() => Next::End,
                };
                let (frames, closed, moved) = match next {
                    Next::Frames(frames) => (Some(frames), false, None),
                    Next::Moved => {
                        let rooms = handover.take();
                        if rooms.is_empty() {
                            continue;
                        }
                        let nodes = Vec::new();
                        (None, false, Some(Moved { nodes, rooms }))
                    }
                    // A tournament it followed cannot be followed this way:
                    // the client then rejoins as after a drop.
                    Next::End => {
                        let clean = tournaments.count() == 0;
                        let moved = clean.then(|| Moved {
                            nodes: lock(&bus.serving).iter().cloned().collect(),
                            rooms: handover.take(),
                        });
                        (None, true, moved)
                    }
                    Next::Kicked => (None, true, None),
                };
                seq += 1;
                let out = Out {
                    node: Some(bus.node().to_string()),
                    conn,
                    seq,
                    frames: frames
                        .into_iter()
                        .flatten()
                        .map(|f| f.as_str().to_owned())
                        .collect(),
                    closed,
                    moved,
                };
                let sent = bus.client.publish(subject.clone(), bus.seal(&out)).await;
                let closed = match sent {
                    Ok(()) => closed,
                    Err(e) => {
                        // Too large for the bus, or the bus is gone: the
                        // client must not miss it unknowingly.
                        tracing::warn!(
                            conn,
                            "bus: cannot send a remote connection's messages: {e}"
                        );
                        let end = Out {
                            node: Some(bus.node().to_string()),
                            conn,
                            seq: seq + 1,
                            frames: Vec::new(),
                            closed: true,
                            moved: None,
                        };
                        let _ = bus.client.publish(subject.clone(), bus.seal(&end)).await;
                        true
                    }
                };
                if closed {
                    // Its rooms hear it is gone, and the entry goes.
                    let removed = lock(&bus.remotes).remove(&key);
                    let shared = bus.shared.get().and_then(Weak::upgrade);
                    if let (Some(remote), Some(shared)) = (removed, shared) {
                        leave_rooms(&*shared, &remote.outbox);
                    }
                    return;
                }
            }
        });
        Remote { outbox, stop, task }
    }

    /// Resigns seat `seat` of room `room` on the node that holds it, for a
    /// tournament of this node whose player withdrew. Nobody reads the
    /// room's answer; its result reaches the tournament through the store.
    pub(super) async fn resign_elsewhere(self: Arc<Self>, room: String, seat: u8) {
        let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
            return;
        };
        let conn = shared.next_conn();
        let (outbox, _unread) = Outbox::new(conn, 1, 1);
        let what = Request::unasked(RoomRequest::ResignSeat {
            room: room.clone(),
            seat,
        });
        if let Err(unsent) = shared.route(self.clone(), outbox.clone(), what).await {
            let why = unsent.answer(None, &room, false);
            tracing::warn!(%room, seat, "could not resign a withdrawn player's seat: {why:?}");
        }
        self.gone(conn).await;
    }
}

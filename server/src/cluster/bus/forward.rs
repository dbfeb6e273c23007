//! The client's side: commands this node forwards for its clients to the
//! nodes that hold their rooms, each waited for until its one answer comes
//! back; the answers and events that come back; following a room that
//! moved; and dropping a client whose answers cannot come.

use super::*;

impl Local {
    pub(super) fn of(outbox: &Outbox) -> Local {
        Local {
            outbox: outbox.clone(),
            nodes: HashSet::new(),
            next: HashMap::new(),
            waiting: Vec::new(),
            streams: HashMap::new(),
        }
    }

    /// For a move (resign, abort, leave) on its way to `node`, for the room
    /// whose id is `room`: the node its events came from, if another (which
    /// stopped, or a hand-over would have said so).
    pub(super) fn lost_stream(
        &self,
        what: &Request,
        room: &str,
        node: &Arc<str>,
    ) -> Option<Arc<str>> {
        if !what.acts_in_room() {
            return None;
        }
        match self.streams.get(room) {
            Some(Stream::From(from)) if from != node => Some(from.clone()),
            _ => None,
        }
    }

    /// Takes the answers among `frames` off the commands that wait; a
    /// room joined, resumed or watched sends its events from the node that
    /// answered. How many were answered.
    /// `from`: the node that sent them (None from a node that does not say).
    pub(super) fn answered(&mut self, frames: &[String], from: Option<&str>) -> usize {
        let before = self.waiting.len();
        for frame in frames {
            let Some((kind, id)) = answered_id(frame) else {
                continue;
            };
            let ours = |w: &Waiting| w.id == id && from.is_none_or(|node| *w.node == *node);
            let Some(i) = self.waiting.iter().position(ours) else {
                continue;
            };
            let waiting = self.waiting.remove(i);
            if kind == "seated" || kind == "watching" {
                if let Some(room) = answered_room(frame) {
                    if self.streams.len() >= MAX_STREAMS {
                        self.streams.clear();
                    }
                    self.streams.insert(room, Stream::From(waiting.node));
                }
            }
        }
        before - self.waiting.len()
    }
}

/// The kind of answer a frame is and the request id it answers, or None for
/// an event or a notice: every answer is written `{"type":KIND,"id":ID,...}`
/// (the wire types' field order), and nothing else has an `id` there.
pub(super) fn answered_id(frame: &str) -> Option<(&str, Option<RequestId>)> {
    let rest = frame.strip_prefix(r#"{"type":""#)?;
    let (kind, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(r#","id":"#)?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Option<RequestId>>();
    Some((kind, values.next()?.ok()?))
}

/// The room a `seated` or `watching` answer is for.
pub(super) fn answered_room(frame: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Answer {
        room: String,
    }
    serde_json::from_str::<Answer>(frame).ok().map(|a| a.room)
}

/// The answer a client gets for a forwarded command whose own answer will
/// not come, for `why` its connection is dropped.
pub(super) fn unanswered(id: Option<RequestId>, why: Kick, node: &str) -> ServerMsg {
    let what = match why {
        Kick::BusLost => "messages between the cluster's nodes were lost before it was answered".to_owned(),
        Kick::Overloaded => "the server's outbound queues were full (max_queued_bytes) and this connection was closed before it was answered".to_owned(),
        Kick::RoomMoved | Kick::TournamentMoved => format!(
            "the node that held its room ({node}) stopped before answering, and the room is moving to another node"
        ),
        Kick::NodeLost | Kick::SlowReader | Kick::PasswordChanged => format!(
            "the node that holds its room ({node}) did not answer within {} s: it may have stopped, and the room may be moving to another node",
            ANSWER_WAIT.as_secs()
        ),
    };
    ServerMsg::error(
        id,
        ErrorCode::Internal,
        format!("{what}; the command may or may not have been carried out: resume to see"),
    )
}

/// For a move (resign, abort, leave) of client connection `conn` on its
/// way to `node`: the node its room's events came from, if another that did
/// not hand the room over. The old node answers `not held here` as soon as
/// its room stops, while the hand-over its remote connection sends after
/// the room's last frames may still be on its way: it is given
/// [`HANDOVER_GRACE`].
pub(super) async fn lost_without_handover(
    locals: &Mutex<HashMap<ConnId, Local>>,
    conn: ConnId,
    what: &Request,
    room: &str,
    node: &Arc<str>,
) -> Option<Arc<str>> {
    let lost = || {
        lock(locals)
            .get(&conn)
            .and_then(|local| local.lost_stream(what, room, node))
    };
    lost()?;
    tokio::time::sleep(HANDOVER_GRACE).await;
    lost()
}

/// Hands a batch of frames from another node to a client's outbox.
pub(super) fn deliver(outbox: &Outbox, frames: Vec<String>) {
    let frames: Vec<Utf8Bytes> = frames.into_iter().map(Utf8Bytes::from).collect();
    for write in frames
        .chunks(MAX_FRAMES)
        .filter_map(|w| Frames::of(None, w))
    {
        if !outbox.send_frames(write) {
            return;
        }
    }
}

impl Bus {
    /// What the bus client says of its connection. Messages may have been
    /// lost while it was down (once it is back), or when a subscription
    /// overflowed; nothing else would tell, if no later message came.
    pub(super) async fn connection_events(
        self: Arc<Self>,
        mut events: tokio::sync::mpsc::UnboundedReceiver<async_nats::Event>,
    ) {
        let mut dropped = false;
        while let Some(event) = events.recv().await {
            match event {
                async_nats::Event::Disconnected => {
                    tracing::warn!("bus: the connection dropped");
                    dropped = true;
                }
                async_nats::Event::Connected if dropped => {
                    dropped = false;
                    self.lost("the connection is back, but messages may have been lost meanwhile");
                }
                async_nats::Event::SlowConsumer(_) => {
                    self.lost("a subscription overflowed, and messages were lost");
                }
                _ => {}
            }
        }
    }

    /// Messages between this node and the others may have been lost: every
    /// client of this node whose commands went to another node resumes, and
    /// every remote connection ends (its client's node is told, and its
    /// client resumes).
    pub(super) fn lost(&self, why: &str) {
        tracing::warn!("bus: {why}; the clients of rooms on other nodes resume");
        for local in lock(&self.locals).values_mut() {
            if !local.nodes.is_empty() || !local.waiting.is_empty() {
                self.abandon(local, Kick::BusLost);
            }
        }
        for remote in lock(&self.remotes).values() {
            remote.outbox.drop_for(Kick::BusLost);
        }
    }

    /// Drops client connection `local` for `why`, after answering each of
    /// its commands that still waits (their own answers, should they come,
    /// are not passed on: the connection is gone by then).
    pub(super) fn abandon(&self, local: &mut Local, why: Kick) {
        let answered = local.waiting.len();
        for waiting in local.waiting.drain(..) {
            local
                .outbox
                .send(&unanswered(waiting.id, why, &waiting.node));
        }
        self.waiting
            .fetch_sub(answered, std::sync::atomic::Ordering::Relaxed);
        local.outbox.drop_for(why);
    }

    /// Forwarded commands not answered within [`ANSWER_WAIT`] (their node
    /// died or is paused after it took them): answered here, and their
    /// connections dropped, to resume.
    pub(super) async fn late_answers(self: Arc<Self>) {
        let mut check = tokio::time::interval(ANSWER_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = check.tick() => {}
            }
            if self.waiting.load(std::sync::atomic::Ordering::Relaxed) == 0 {
                continue;
            }
            for (conn, local) in lock(&self.locals).iter_mut() {
                let late = local
                    .waiting
                    .iter()
                    .find(|w| w.sent.elapsed() >= ANSWER_WAIT);
                if let Some(late) = late {
                    tracing::warn!(conn, node = %late.node, "bus: a command was not answered in time; its connection must resume");
                    self.abandon(local, Kick::NodeLost);
                }
            }
        }
    }

    /// Stops waiting for command `n` of connection `conn`: false if it was
    /// answered meanwhile (or answered here, its connection dropped).
    pub(super) fn stop_waiting(&self, conn: ConnId, n: u64) -> bool {
        let mut locals = lock(&self.locals);
        let Some(local) = locals.get_mut(&conn) else {
            return false;
        };
        let Some(i) = local.waiting.iter().position(|w| w.n == n) else {
            return false;
        };
        local.waiting.remove(i);
        self.waiting
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        true
    }

    /// Whether `node`, which nobody serves any more, held rooms of client
    /// connection `conn` that it did not hand over: it died (or lost the
    /// bus), and their events will not come. (A draining node answers
    /// commands until its hand-over is out, but that may still be on its
    /// way to this node's answers task: it is given a moment.)
    pub(super) async fn stopped_holding(&self, node: &Arc<str>, conn: ConnId) -> bool {
        let holds = || {
            lock(&self.locals)
                .get(&conn)
                .is_some_and(|local| local.nodes.contains(node))
        };
        if !holds() {
            return false;
        }
        tokio::time::sleep(HANDOVER_GRACE).await;
        holds()
    }

    /// Sends `what`, a command of the client connection `outbox`, to the
    /// node that owns its room; Ok once that node took it.
    ///
    /// A client's command waits for its answer from then on (see
    /// [`ANSWER_WAIT`]). One the node may have taken but did not say so in
    /// time is answered here (Ok: nothing more to answer). A move (resign,
    /// abort, leave) for a room whose events came to this connection from
    /// another node that stopped without handing it over is not sent
    /// ([`Untaken::Stopped`], the connection dropped to resume): its ack
    /// would come without its event.
    ///
    /// `room`: the id of the room (or tournament) it is for, as far as known
    /// (else what the client named it by).
    pub async fn forward(
        &self,
        node: &Arc<str>,
        outbox: &Outbox,
        what: Request,
        room: &str,
    ) -> Result<(), Untaken> {
        let n = self
            .waiting_numbers
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if outbox.kick.is_raised() {
            // Its answer would never be passed on.
            return Err(Untaken::Why("this connection is being closed".into()));
        }
        let lost = lost_without_handover(&self.locals, outbox.conn, &what, room, node);
        if let Some(from) = lost.await {
            tracing::info!(conn = outbox.conn, %from, to = %node, "bus: a room moved without this connection; it must resume");
            if let Some(local) = lock(&self.locals).get_mut(&outbox.conn) {
                self.abandon(local, Kick::RoomMoved);
            }
            return Err(Untaken::Stopped(from));
        }
        let answers_to = what.answers_to().map(|id| id.cloned());
        let waits = answers_to.is_some();
        {
            // Known before the request: the owner's answers may come first.
            let mut locals = lock(&self.locals);
            let local = locals
                .entry(outbox.conn)
                .or_insert_with(|| Local::of(outbox));
            if let Some(id) = answers_to {
                local.waiting.push(Waiting {
                    n,
                    id,
                    node: node.clone(),
                    sent: Instant::now(),
                });
                self.waiting
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        let carried_on = match &what.ask {
            Ask::Room(RoomRequest::CarryOn(handoff)) => Some(handoff.room.clone()),
            _ => None,
        };
        let payload = self.seal(&Command {
            conn: outbox.conn,
            what: Some(what),
            deadline: Some(unix_ms() + TAKE_WITHIN.as_millis() as u64),
        });
        let subject = format!("{}.cmd.{node}", self.prefix);
        let (taken, maybe) = match self.client.request(subject, payload).await {
            Ok(reply) if reply.payload.as_ref() == b"ok" => (Ok(()), true),
            Ok(reply) if reply.payload.as_ref() == NOT_HERE.as_bytes() => {
                (Err(Untaken::NotHere), false)
            }
            Ok(reply) => (
                Err(Untaken::Why(
                    String::from_utf8_lossy(&reply.payload).into_owned(),
                )),
                false,
            ),
            // No reply in time: the owner may have taken it all the same.
            Err(e) if e.kind() == async_nats::RequestErrorKind::TimedOut => {
                (Err(Untaken::Why(e.to_string())), true)
            }
            // Nobody serves that node any more: it stopped. If it held
            // rooms of this connection, their events are lost with it.
            Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                if self.stopped_holding(node, outbox.conn).await {
                    if waits && !self.stop_waiting(outbox.conn, n) {
                        // Answered here meanwhile (its connection dropped).
                        return Ok(());
                    }
                    tracing::info!(conn = outbox.conn, %node, "bus: a node this connection used stopped; it must resume");
                    if let Some(local) = lock(&self.locals).get_mut(&outbox.conn) {
                        self.abandon(local, Kick::RoomMoved);
                    }
                    return Err(Untaken::Stopped(node.clone()));
                }
                (Err(Untaken::NotHere), false)
            }
            Err(e) => (Err(Untaken::Why(e.to_string())), false),
        };
        if taken.is_err() && !maybe && waits && !self.stop_waiting(outbox.conn, n) {
            // Answered meanwhile, or here with the connection dropped.
            return Ok(());
        }
        // Only a node that took (or may have taken) a command holds
        // something of the connection. Known again if it went meanwhile
        // (its `gone` went out before this node was recorded): whoever
        // ends it next tells this node too (`Bus::follow`).
        if maybe {
            let mut locals = lock(&self.locals);
            let local = locals
                .entry(outbox.conn)
                .or_insert_with(|| Local::of(outbox));
            if local.nodes.insert(node.clone()) {
                // A node not heard from yet (it started a moment ago) is
                // silent only once it has had time to say it is alive.
                lock(&self.heard)
                    .entry(node.to_string())
                    .or_insert_with(Instant::now);
            }
            if let (Some(room), Ok(())) = (carried_on, &taken) {
                local.streams.insert(room, Stream::From(node.clone()));
            }
        }
        if taken.is_err() && maybe {
            // Its answer may still come: the client is answered here and
            // resumes, and learns what happened from the room.
            tracing::warn!(conn = outbox.conn, %node, "bus: a node did not take a command in time; the connection must resume");
            if let Some(local) = lock(&self.locals).get_mut(&outbox.conn) {
                self.abandon(local, Kick::NodeLost);
            }
            return Ok(());
        }
        taken
    }

    /// The node whose events of room `room` (its id) this client connection
    /// had, if that node stopped without handing the room over (so that a
    /// move there would be acknowledged with no event to follow): the room
    /// is here now (`lobby.holds`), and the connection is not in it. The
    /// connection is then dropped, to resume.
    pub fn lost_here(&self, outbox: &Outbox, room: &str) -> Option<Arc<str>> {
        if outbox.rooms.contains(room) {
            return None;
        }
        let mut locals = lock(&self.locals);
        let local = locals.get_mut(&outbox.conn)?;
        let Some(Stream::From(from)) = local.streams.get(room) else {
            return None;
        };
        let from = from.clone();
        tracing::info!(conn = outbox.conn, %from, "bus: a room came here without this connection; it must resume");
        local.streams.remove(room);
        self.abandon(local, Kick::RoomMoved);
        Some(from)
    }

    /// The client connection `conn` closed: its remote connections end.
    pub async fn gone(&self, conn: ConnId) {
        let Some(local) = lock(&self.locals).remove(&conn) else {
            return;
        };
        // Answered before the connection's close goes out (its own answers
        // will not be passed on any more).
        self.waiting
            .fetch_sub(local.waiting.len(), std::sync::atomic::Ordering::Relaxed);
        let why = local.outbox.dropped_for();
        for waiting in &local.waiting {
            local
                .outbox
                .send(&unanswered(waiting.id.clone(), why, &waiting.node));
        }
        for node in local.nodes {
            let payload = self.seal(&Command {
                conn,
                what: None,
                deadline: None,
            });
            let subject = format!("{}.cmd.{node}", self.prefix);
            if let Err(e) = self.client.publish(subject, payload).await {
                tracing::warn!(conn, %node, "cannot tell a node a connection closed: {e}");
            }
        }
    }

    /// Answers and events for this node's clients, from the nodes that own
    /// their rooms.
    pub(super) async fn answers(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        while let Some(message) = subscription.next().await {
            let Some((from, out)) = self.open::<Out>(&message.payload, "answer") else {
                continue;
            };
            let mut locals = lock(&self.locals);
            let Some(local) = locals.get_mut(&out.conn) else {
                continue; // the connection has closed meanwhile
            };
            if local.outbox.kick.is_raised() {
                // Dropped, to resume: an answer given here already must not
                // come a second time.
                continue;
            }
            let expected = local.next.entry(from.clone()).or_insert(1);
            if out.seq != *expected {
                tracing::warn!(
                    conn = out.conn,
                    expected = *expected,
                    got = out.seq,
                    "bus: messages for a connection were lost; it must resume"
                );
                self.abandon(local, Kick::BusLost);
                continue;
            }
            *expected += 1;
            if !local.waiting.is_empty() {
                let answered = local.answered(&out.frames, out.node.as_deref());
                self.waiting
                    .fetch_sub(answered, std::sync::atomic::Ordering::Relaxed);
            }
            if out.closed && out.moved.is_none() {
                // Its last frames (an answer among them) go first.
                deliver(&local.outbox, out.frames);
                tracing::info!(
                    conn = out.conn,
                    "bus: a node this connection used ended its side; it must resume"
                );
                self.abandon(local, Kick::RoomMoved);
                continue;
            }
            deliver(&local.outbox, out.frames);
            let Some(moved) = out.moved else { continue };
            if out.closed {
                // Ended cleanly: that node holds nothing of it any more.
                local.next.remove(&from);
                local
                    .nodes
                    .retain(|node| !moved.nodes.iter().any(|n| **n == **node));
            }
            for handoff in &moved.rooms {
                local.streams.insert(handoff.room.clone(), Stream::Moving);
            }
            let outbox = local.outbox.clone();
            drop(locals);
            for handoff in moved.rooms {
                tokio::spawn(self.clone().carry_on(outbox.clone(), handoff));
            }
        }
    }

    /// A client of this node carries on in a room whose node stopped it,
    /// where the room is now; if it cannot, its connection ends and it
    /// resumes.
    pub(super) async fn carry_on(self: Arc<Self>, outbox: Outbox, handoff: Handoff) {
        let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
            return;
        };
        if outbox.rooms.left() {
            return; // the connection is closing: nothing to carry on for
        }
        let room = handoff.room.clone();
        let what = Request::unasked(RoomRequest::CarryOn(handoff));
        if let Err(unsent) = shared.route(self.clone(), outbox.clone(), what).await {
            let why = unsent.answer(None, &room, false);
            tracing::info!(conn = outbox.conn, %room, "a client could not carry on in its room: {why:?}");
            match lock(&self.locals).get_mut(&outbox.conn) {
                Some(local) => self.abandon(local, Kick::RoomMoved),
                None => outbox.drop_for(Kick::RoomMoved),
            }
        }
        // The connection closed while this looked for the room (up to
        // `BETWEEN_OWNERS`): its `gone` may have gone out before `forward`
        // made it known to the room's new node, which would then hold its
        // seat for good. It is told again (a second notice is harmless).
        if outbox.rooms.left() {
            self.gone(outbox.conn).await;
        }
    }
}

//! The writer thread both stores share: group commit (one transaction and
//! one fsync per batch), each [`WriteOp`] applied through `sql::Sql`, so
//! SQLite and PostgreSQL write alike.
//!
//! Writes go through one writer thread that batches them (group commit): it takes
//! one queued [`WriteOp`], drains whatever else is queued (up to [`MAX_BATCH`]),
//! applies them all in one transaction, commits, and only then resolves each op's
//! receiver. An op that fails on its own (an unknown room, a duplicate sequence
//! number) is rolled back alone and gets its own error; the others of its batch
//! still commit (such a batch is applied a second time, op by op in savepoints).
//! A failed commit fails every op of the batch.
//!
//! The writer thread runs under Linux's `SCHED_BATCH` policy: waking up (for a
//! new op, or when an fsync returns) it does not preempt the threads that
//! serve connections; it runs when a core is free. Under load its batches grow
//! (at 1,000 matches, ~16 → ~180 ops per commit), and the fsyncs, WAL pages
//! and context switches per move fall with them; with a core idle it runs at
//! once (docs/performance.md).

use super::*;

/// A write waiting for the writer thread, with where its outcome goes.
pub(super) type Done = oneshot::Sender<Result<(), StoreError>>;

pub(crate) enum Msg {
    Op(WriteOp, Done),
    /// Tests only: the writer waits until the sending half of this channel is
    /// dropped, so that tests can queue many ops before it drains them.
    #[cfg(test)]
    Hold(mpsc::Receiver<()>),
}

impl Msg {
    /// Answers a message that cannot be delivered.
    pub(super) fn reject(self) {
        match self {
            Msg::Op(_, done) => {
                let _ = done.send(Err(StoreError::Closed));
            }
            #[cfg(test)]
            Msg::Hold(_) => {}
        }
    }
}

/// A store's writer thread and the queue that feeds it (both stores have one).
pub(crate) struct Writer {
    pub(super) sender: Mutex<Option<mpsc::Sender<Msg>>>,
    pub(super) thread: Mutex<Option<JoinHandle<()>>>,
    pub(super) transactions: Arc<AtomicU64>,
}

impl Writer {
    /// Starts the thread `grundy-store-writer` running `run` over the queue
    /// (it counts its commits in the counter it is given).
    pub(crate) fn spawn(
        run: impl FnOnce(mpsc::Receiver<Msg>, &AtomicU64) + Send + 'static,
    ) -> std::io::Result<Writer> {
        let (sender, receiver) = mpsc::channel();
        let transactions = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&transactions);
        let thread = std::thread::Builder::new()
            .name("grundy-store-writer".into())
            .spawn(move || run(receiver, &counter))?;
        Ok(Writer {
            sender: Mutex::new(Some(sender)),
            thread: Mutex::new(Some(thread)),
            transactions,
        })
    }

    /// Queues a write; see [`MatchStore::write`].
    pub(crate) fn write(&self, op: WriteOp) -> oneshot::Receiver<Result<(), StoreError>> {
        let (done, receiver) = oneshot::channel();
        let msg = Msg::Op(op, done);
        match lock(&self.sender).as_ref() {
            Some(sender) => {
                if let Err(mpsc::SendError(msg)) = sender.send(msg) {
                    msg.reject();
                }
            }
            None => msg.reject(),
        }
        receiver
    }

    /// Lets the thread commit what is queued, then waits for it to end.
    /// Idempotent; a concurrent call also waits for the end.
    pub(crate) fn stop(&self) {
        let mut thread = lock(&self.thread);
        drop(lock(&self.sender).take());
        if let Some(handle) = thread.take() {
            if handle.join().is_err() {
                tracing::error!("the match store's writer thread panicked");
            }
        }
    }

    /// Write transactions committed so far (each holds up to [`MAX_BATCH`] ops).
    pub(crate) fn transactions(&self) -> u64 {
        self.transactions.load(Ordering::Relaxed)
    }

    /// Tests only: stops the thread until the returned sender is dropped.
    #[cfg(test)]
    pub(crate) fn hold(&self) -> mpsc::Sender<()> {
        let (release, wait) = mpsc::channel();
        if let Some(sender) = lock(&self.sender).as_ref() {
            let _ = sender.send(Msg::Hold(wait));
        }
        release
    }
}

/// The writer thread: group commit until every sender is gone and the queue is
/// empty. `conn` is SQLite's or PostgreSQL's; `reopen` is called before a
/// batch when the connection was lost (PostgreSQL), and fails the batch if it
/// cannot get it back.
pub(crate) fn writer_loop<C: Sql>(
    conn: &mut C,
    receiver: mpsc::Receiver<Msg>,
    transactions: &AtomicU64,
    mut reopen: impl FnMut(&mut C) -> Result<(), StoreError>,
) {
    batch_priority();
    let mut batch: Vec<(WriteOp, Done)> = Vec::with_capacity(MAX_BATCH);
    let mut nos = RoomNos::default();
    while let Ok(msg) = receiver.recv() {
        let mut hold = accept(msg, &mut batch);
        while hold.is_none() && batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(msg) => hold = accept(msg, &mut batch),
                Err(_) => break,
            }
        }
        if !batch.is_empty() {
            match reopen(conn) {
                Ok(()) => commit_batch(conn, &mut batch, &mut nos, transactions),
                Err(error) => fail_batch(&mut batch, &mut nos, error),
            }
        }
        if let Some(hold) = hold {
            let _ = hold.recv();
        }
    }
}

/// Puts the calling thread (the writer) under `SCHED_BATCH`: see the module
/// docs. Only a hint to the scheduler: if refused, the writer runs under the default policy.
pub(super) fn batch_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `sched_setscheduler` reads `param`, which lives across the
        // call; pid 0 is the calling thread.
        let refused = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) } != 0;
        if refused {
            tracing::debug!(
                "match store: SCHED_BATCH refused: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// Adds an op to the batch; returns a hold (tests only) instead.
pub(super) fn accept(msg: Msg, batch: &mut Vec<(WriteOp, Done)>) -> Option<mpsc::Receiver<()>> {
    match msg {
        Msg::Op(op, done) => {
            batch.push((op, done));
            None
        }
        #[cfg(test)]
        Msg::Hold(hold) => Some(hold),
    }
}

/// Writes the batch in one transaction, then resolves every op.
pub(super) fn commit_batch<C: Sql>(
    conn: &mut C,
    batch: &mut Vec<(WriteOp, Done)>,
    nos: &mut RoomNos,
    transactions: &AtomicU64,
) {
    let started = Instant::now();
    let applied = apply_batch(conn, batch, nos);
    METRICS
        .store_commit
        .observe(started.elapsed().as_secs_f64());
    match applied {
        Ok(outcomes) => {
            transactions.fetch_add(1, Ordering::Relaxed);
            for ((_, done), outcome) in batch.drain(..).zip(outcomes) {
                let _ = done.send(outcome);
            }
        }
        Err(error) => fail_batch(batch, nos, error),
    }
}

/// Every op of the batch gets the error: nothing of it was committed.
pub(super) fn fail_batch(batch: &mut Vec<(WriteOp, Done)>, nos: &mut RoomNos, error: StoreError) {
    nos.forget_all();
    tracing::error!(ops = batch.len(), %error, "match store: group commit failed");
    for (_, done) in batch.drain(..) {
        let _ = done.send(Err(error.clone()));
    }
}

/// Applies every op in one transaction. Almost every batch goes through at
/// once; if an op fails, the transaction is rolled back and the batch is
/// applied again with each op inside its own savepoint, so that the failing op
/// is rolled back alone. Err: the transaction itself failed (and was rolled
/// back).
pub(super) fn apply_batch<C: Sql>(
    conn: &mut C,
    batch: &[(WriteOp, Done)],
    nos: &mut RoomNos,
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    let outcome = try_batch(conn, batch, nos);
    if outcome.is_err() {
        // Whatever is left of the transaction goes (PostgreSQL may have
        // ended it already: then this only warns).
        let _ = conn.batch("ROLLBACK");
        nos.forget_all();
    }
    outcome
}

pub(super) fn try_batch<C: Sql>(
    conn: &mut C,
    batch: &[(WriteOp, Done)],
    nos: &mut RoomNos,
) -> Result<Vec<Result<(), StoreError>>, StoreError> {
    conn.begin_write()?;
    let mut events = Events::new(conn.dialect() == Dialect::Postgres);
    let applied = batch
        .iter()
        .all(|(op, _)| apply_op(conn, op, nos, &mut events).is_ok());
    if applied && events.flush(conn).is_ok() {
        conn.batch("COMMIT")?;
        return Ok(batch.iter().map(|_| Ok(())).collect());
    }
    // The whole batch goes back, rooms it created included.
    conn.batch("ROLLBACK")?;
    nos.forget_all();
    conn.begin_write()?;
    let mut outcomes = Vec::with_capacity(batch.len());
    for (op, _) in batch {
        conn.batch("SAVEPOINT op")?;
        // Deferred on PostgreSQL too, but written one by one: its events
        // carry their epoch only that way.
        let mut events = Events::new(conn.dialect() == Dialect::Postgres);
        events.eager = true;
        match apply_op(conn, op, nos, &mut events) {
            Ok(()) => {
                conn.batch("RELEASE op")?;
                outcomes.push(Ok(()));
            }
            Err(error) => {
                nos.forget_all();
                conn.batch("ROLLBACK TO op; RELEASE op")?;
                tracing::warn!(key = op.key(), %error, "match store: write refused");
                outcomes.push(Err(error));
            }
        }
    }
    conn.batch("COMMIT")?;
    Ok(outcomes)
}

/// The events of a batch's first pass, written together when `defer`
/// (PostgreSQL: one statement for all of them, where each would be a round
/// trip of its own). Written before any other kind of op, so the order of
/// writes that depend on each other stays the batch's.
pub(super) struct Events<'a> {
    pub(super) defer: bool,
    /// Each event written as it comes (still by the one insert that carries
    /// epochs): the op-by-op pass, whose errors name the event.
    pub(super) eager: bool,
    /// (room number, seq, at_ms, body, epoch or 0 when the write is not
    /// fenced, room id)
    pub(super) rows: Vec<(i64, i64, i64, &'a str, i64, &'a str)>,
    /// The lease of the `Fenced` op being applied, if any.
    pub(super) fence: Option<&'a Lease>,
}

impl<'a> Events<'a> {
    pub(super) fn new(defer: bool) -> Events<'a> {
        Events {
            defer,
            eager: false,
            rows: Vec::new(),
            fence: None,
        }
    }

    pub(super) fn flush<C: Sql>(&mut self, conn: &mut C) -> Result<(), StoreError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let nos: Vec<i64> = self.rows.iter().map(|r| r.0).collect();
        let seqs: Vec<i64> = self.rows.iter().map(|r| r.1).collect();
        let ats: Vec<i64> = self.rows.iter().map(|r| r.2).collect();
        let bodies: Vec<&str> = self.rows.iter().map(|r| r.3).collect();
        let epochs: Vec<i64> = self.rows.iter().map(|r| r.4).collect();
        // A duplicate or a fenced write fails the whole pass; the op-by-op
        // pass names it. The trigger `events_fence` checks each epoch.
        let single = match self.rows.as_slice() {
            [row] => Some((row.5, row.1)),
            _ => None,
        };
        conn.exec(
            "INSERT INTO events (room_no, seq, at_ms, body, epoch)
             SELECT n, s, a, b, NULLIF(e, 0)
             FROM UNNEST(?1::BIGINT[], ?2::BIGINT[], ?3::BIGINT[], ?4::TEXT[], ?5::BIGINT[])
                  AS t (n, s, a, b, e)",
            &[
                Arg::Ints(&nos),
                Arg::Ints(&seqs),
                Arg::Ints(&ats),
                Arg::Texts(&bodies),
                Arg::Ints(&epochs),
            ],
        )
        .map_err(|e| match (e.fault, single) {
            (Fault::Unique, Some((room, seq))) => StoreError::DuplicateEvent {
                room: room.to_owned(),
                seq: seq as u64,
            },
            _ => e.into(),
        })?;
        self.rows.clear();
        Ok(())
    }
}

pub(super) fn apply_op<'a, C: Sql>(
    conn: &mut C,
    op: &'a WriteOp,
    nos: &mut RoomNos,
    events: &mut Events<'a>,
) -> Result<(), StoreError> {
    if !matches!(
        op,
        WriteOp::Event { .. } | WriteOp::All(_) | WriteOp::Fenced { .. }
    ) {
        events.flush(conn)?;
    }
    match op {
        WriteOp::Fenced { lease, op } => {
            let room = op.key();
            if conn.dialect() != Dialect::Postgres {
                return Err(StoreError::LeaseLost(format!(
                    "room {room}: this store keeps no leases (a cluster needs PostgreSQL)"
                )));
            }
            let epoch = signed(room, "epoch", lease.epoch)?;
            // A new room or tournament has no owner to check (its creation
            // makes one); a room's events are checked row by row by the
            // trigger; anything else (seats, the result, a tournament's
            // events) asks the fence once, in this transaction.
            let creates = op.ops().any(|op| {
                matches!(
                    op,
                    WriteOp::CreateRoom { .. } | WriteOp::CreateTournament { .. }
                )
            });
            let only_events = op.ops().all(|op| matches!(op, WriteOp::Event { .. }));
            let tournament = op
                .ops()
                .all(|op| matches!(op, WriteOp::TournamentEvent { .. }));
            if tournament && !creates {
                conn.exec("SELECT grundy_fence_tournament(?1, ?2)", args![room, epoch])?;
            } else if !creates && !only_events {
                let no = nos.get(conn, room)?;
                conn.exec("SELECT grundy_fence(?1, ?2)", args![no, epoch])?;
            }
            let outer = events.fence.replace(lease);
            let applied = apply_op(conn, op, nos, events);
            events.fence = outer;
            applied?;
        }
        // Inside the batch's transaction or the op's savepoint: a failure
        // takes back the ops before it too.
        WriteOp::All(ops) => {
            for op in ops {
                apply_op(conn, op, nos, events)?;
            }
        }
        WriteOp::Probe { at_ms } => {
            conn.exec(
                "INSERT INTO health (id, at_ms) VALUES (1, ?1)
                 ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms",
                args![signed("", "at_ms", *at_ms)?],
            )?;
        }
        WriteOp::Account(op) => accounts::write(conn, op)?,
        WriteOp::CreateRoom {
            room,
            code,
            spec,
            clock,
            listed,
            bot,
            hints,
            rated,
            tournament,
            created_at_ms,
        } => {
            let spec = encode(room, "spec", spec)?;
            let clock = clock.map(|c| encode(room, "clock", &c)).transpose()?;
            let created_at_ms = signed(room, "created_at_ms", *created_at_ms)?;
            let no = conn
                .insert_no(
                    "INSERT INTO rooms (id, code, spec, clock, listed, bot, created_at_ms,
                                        tournament, hints, rated)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    args![
                        room,
                        code,
                        &spec,
                        clock.as_ref(),
                        *listed,
                        bot.as_ref(),
                        created_at_ms,
                        tournament.as_ref(),
                        *hints,
                        *rated
                    ],
                )
                .map_err(|e| match e.fault {
                    Fault::Unique => StoreError::DuplicateRoom {
                        room: room.clone(),
                        code: code.clone(),
                    },
                    _ => e.into(),
                })?;
            nos.insert(room, no);
            if let Some(lease) = events.fence {
                let epoch = signed(room, "epoch", lease.epoch)?;
                conn.exec(
                    "INSERT INTO room_owners (room_no, node, epoch) VALUES (?1, ?2, ?3)",
                    args![no, &*lease.node, epoch],
                )?;
            }
        }
        WriteOp::Seat {
            room,
            seat,
            player,
            token,
            house,
            player_token,
            tie,
        } => {
            if *seat > 1 {
                return Err(StoreError::BadSeat {
                    room: room.clone(),
                    seat: *seat,
                });
            }
            let kind = player.kind.map(kind_text);
            let account = player
                .account
                .map(|a| signed(room, "account", a))
                .transpose()?;
            let no = nos.get(conn, room)?;
            conn.exec(
                "INSERT INTO seats (room_no, seat, name, token, house, kind, account,
                                    player_token, account_token)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (room_no, seat)
                 DO UPDATE SET name = excluded.name, token = excluded.token,
                               house = excluded.house, kind = excluded.kind,
                               account = excluded.account,
                               player_token = excluded.player_token,
                               account_token = excluded.account_token",
                args![
                    no,
                    *seat,
                    player.name.as_ref(),
                    token,
                    *house,
                    kind,
                    account,
                    player_token.as_ref(),
                    tie.as_ref()
                ],
            )?;
        }
        WriteOp::Event {
            room,
            seq: number,
            json,
            at_ms,
        } => {
            let seq = signed(room, "seq", *number)?;
            let at_ms = signed(room, "at_ms", *at_ms)?;
            let no = nos.get(conn, room)?;
            if events.defer {
                let epoch = match events.fence {
                    Some(lease) => signed(room, "epoch", lease.epoch)?,
                    None => 0,
                };
                events.rows.push((no, seq, at_ms, json, epoch, room));
                if events.eager {
                    events.flush(conn)?;
                }
                return Ok(());
            }
            conn.exec(
                "INSERT INTO events (room_no, seq, at_ms, body) VALUES (?1, ?2, ?3, ?4)",
                args![no, seq, at_ms, &**json],
            )
            .map_err(|e| match e.fault {
                Fault::Unique => StoreError::DuplicateEvent {
                    room: room.clone(),
                    seq: *number,
                },
                _ => e.into(),
            })?;
        }
        WriteOp::Finish {
            room,
            result,
            finished_at_ms,
            ratings,
        } => {
            let json = encode(room, "result", result)?;
            let finished_at_ms = signed(room, "finished_at_ms", *finished_at_ms)?;
            // A finished room needs no owner: its last fenced write lets it go.
            if events.fence.is_some() {
                let no = nos.get(conn, room)?;
                conn.exec("DELETE FROM room_owners WHERE room_no = ?1", args![no])?;
            }
            let changed = conn.exec(
                "UPDATE rooms SET result = ?2, finished_at_ms = ?3
                 WHERE id = ?1 AND result IS NULL",
                args![room, &json, finished_at_ms],
            )?;
            // The ratings go with the first result only: a repeated finish
            // must not set ratings back to what this game made them.
            if changed > 0 {
                tournaments::put_ratings(conn, room, ratings)?;
            }
            if changed == 0 {
                let existing =
                    conn.query_one("SELECT result FROM rooms WHERE id = ?1", args![room])?;
                let Some(mut existing) = existing else {
                    return Err(StoreError::UnknownRoom(room.clone()));
                };
                let existing = existing.opt_text(0).map_err(|e| corrupt(room, None, e))?;
                if existing.as_deref() != Some(json.as_str()) {
                    tracing::warn!(
                        room,
                        kept = existing.as_deref().unwrap_or(""),
                        ignored = json,
                        "match store: room finished already; its first result is kept"
                    );
                }
            }
            nos.forget(room);
        }
        WriteOp::CreateTournament {
            tournament,
            code,
            settings,
            owner_token,
            created_at_ms,
        } => {
            tournaments::create(
                conn,
                tournament,
                code,
                settings,
                owner_token,
                *created_at_ms,
            )?;
            if let Some(lease) = events.fence {
                let epoch = signed(tournament, "epoch", lease.epoch)?;
                conn.exec(
                    "INSERT INTO tournament_owners (tournament, node, epoch) VALUES (?1, ?2, ?3)",
                    args![tournament, &*lease.node, epoch],
                )?;
            }
        }
        WriteOp::TournamentEvent {
            tournament,
            event,
            at_ms,
            player_token,
            player_account,
            ratings,
        } => {
            tournaments::event(
                conn,
                tournament,
                event,
                *at_ms,
                player_token,
                *player_account,
                ratings,
            )?;
            // Only unfinished tournaments have owners.
            if events.fence.is_some() && matches!(event.body, TournamentEventBody::Finished { .. })
            {
                conn.exec(
                    "DELETE FROM tournament_owners WHERE tournament = ?1",
                    args![tournament],
                )?;
            }
        }
    }
    Ok(())
}

/// A player kind as the `seats` table keeps it.
pub(super) fn kind_text(kind: PlayerKind) -> &'static str {
    match kind {
        PlayerKind::Person => "person",
        PlayerKind::Bot => "bot",
        PlayerKind::Guest => "guest",
    }
}

pub(super) fn kind_from_text(text: &str) -> Option<PlayerKind> {
    [PlayerKind::Person, PlayerKind::Bot, PlayerKind::Guest]
        .into_iter()
        .find(|&k| kind_text(k) == text)
}

/// The writer's map from a room's id to its row number, so that a move's
/// insert does not look the room up by its text id each time. Only the
/// writer changes `rooms`, so an entry stays true until a rollback (which may
/// take back the room that made it: everything is forgotten then) or the
/// room's end (its last write, as far as the move path goes).
/// (Its keys are room ids the server made: a fast hash needs no defence
/// against keys chosen to collide.)
#[derive(Default)]
pub(super) struct RoomNos(foldhash::HashMap<String, i64>);

impl RoomNos {
    /// Rooms known at once, at most: past this the map starts again.
    const MAX: usize = 1 << 16;

    pub(super) fn insert(&mut self, room: &str, no: i64) {
        if self.0.len() >= Self::MAX {
            self.0.clear();
        }
        self.0.insert(room.to_owned(), no);
    }

    /// The room's number, looked up (and kept) on a miss.
    pub(super) fn get<C: Sql>(&mut self, conn: &mut C, room: &str) -> Result<i64, StoreError> {
        if let Some(&no) = self.0.get(room) {
            return Ok(no);
        }
        let mut row = conn
            .query_one("SELECT no FROM rooms WHERE id = ?1", args![room])?
            .ok_or_else(|| StoreError::UnknownRoom(room.to_owned()))?;
        let no = row.int(0).map_err(|e| corrupt(room, None, e))?;
        self.insert(room, no);
        Ok(no)
    }

    pub(super) fn forget(&mut self, room: &str) {
        self.0.remove(room);
    }

    pub(super) fn forget_all(&mut self) {
        self.0.clear();
    }
}

pub(super) fn encode<T: serde::Serialize + ?Sized>(
    room: &str,
    what: &'static str,
    value: &T,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Encode {
        room: room.to_owned(),
        what,
        message: e.to_string(),
    })
}

pub(super) fn signed(room: &str, what: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::OutOfRange {
        room: room.to_owned(),
        what,
        value,
    })
}

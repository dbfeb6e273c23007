//! The store's tests, run on both backends where they can be
//! ([`on_both`]): writes, group commit, reads, records, and SQLite's files
//! of older schema versions.

use super::sqlite::*;
use super::*;
use grundy_protocol::wire::EndReason;
use serde_json::json;

fn temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("grundy.sqlite");
    (dir, path)
}

/// Where a test's store lives: a file in a temporary directory, or a
/// fresh database on the test run's PostgreSQL server.
pub(crate) enum Place {
    Sqlite {
        _dir: tempfile::TempDir,
        path: PathBuf,
    },
    Postgres(String),
}

/// What the tests need beyond the trait, on both backends.
pub(crate) trait TestStore: MatchStore {
    /// Stops the writer until the returned sender is dropped.
    fn hold(&self) -> mpsc::Sender<()>;
    fn transactions(&self) -> u64;
}

impl TestStore for SqliteStore {
    fn hold(&self) -> mpsc::Sender<()> {
        SqliteStore::hold(self)
    }
    fn transactions(&self) -> u64 {
        SqliteStore::transactions(self)
    }
}

impl TestStore for PgStore {
    fn hold(&self) -> mpsc::Sender<()> {
        PgStore::hold(self)
    }
    fn transactions(&self) -> u64 {
        PgStore::transactions(self)
    }
}

impl Place {
    pub(crate) fn sqlite() -> Place {
        let (_dir, path) = temp();
        Place::Sqlite { _dir, path }
    }

    /// None (the reason printed) when PostgreSQL cannot run here.
    pub(crate) fn postgres() -> Option<Place> {
        let server = grundy_testkit::postgres::or_skip()?;
        Some(Place::Postgres(server.fresh_database()))
    }

    pub(crate) fn open(&self) -> Result<Box<dyn TestStore>, StoreError> {
        Ok(match self {
            Place::Sqlite { path, .. } => Box::new(SqliteStore::open(path)?),
            Place::Postgres(url) => Box::new(PgStore::open(url)?),
        })
    }
}

/// A test run once on each backend: `mod NAME { fn sqlite(); fn postgres(); }`.
macro_rules! on_both {
    ($(#[$doc:meta])* $name:ident, |$place:ident| $body:block) => {
        $(#[$doc])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn sqlite() {
                let $place = Place::sqlite();
                $body
            }

            #[test]
            fn postgres() {
                let Some($place) = Place::postgres() else {
                    return;
                };
                $body
            }
        }
    };
}
pub(crate) use on_both;

/// Writes and waits for the outcome.
fn put(store: &dyn MatchStore, op: WriteOp) -> Result<(), StoreError> {
    store.write(op).blocking_recv().expect("the writer answers")
}

pub(crate) fn create(room: &str, created_at_ms: u64) -> WriteOp {
    WriteOp::CreateRoom {
        room: room.into(),
        code: format!("code-{room}"),
        spec: json!({"game": "nim", "heaps": [3, 4, 5]}),
        clock: Some(Clock {
            initial_ms: 60_000,
            increment_ms: 1_000,
        }),
        listed: true,
        bot: None,
        hints: false,
        rated: false,
        tournament: None,
        created_at_ms,
    }
}

/// A seat taken by account `seat + 1`, a person's, named `name`.
pub(crate) fn seat(room: &str, seat: u8, name: &str) -> WriteOp {
    WriteOp::Seat {
        room: room.into(),
        seat,
        player: Player {
            name: Some(name.into()),
            kind: Some(PlayerKind::Person),
            account: Some(u64::from(seat) + 1),
        },
        token: format!("token-{room}-{seat}"),
        house: false,
        player_token: None,
        tie: Some(format!("tie-{room}-{seat}")),
    }
}

pub(crate) fn event(room: &str, seq: u64, body: EventBody, at_ms: u64) -> WriteOp {
    WriteOp::event(room, &Event { seq, body }, at_ms).expect("encodes")
}

pub(crate) fn moved(seat: u8, heap: u64) -> EventBody {
    EventBody::Moved {
        seat,
        mv: json!({"heap": heap, "take": 1}),
        clocks_ms: [60_000, 59_000],
        position: json!({"heaps": [2, 4, 5]}),
    }
}

fn finish(room: &str, winner: u8, reason: EndReason) -> WriteOp {
    WriteOp::Finish {
        room: room.into(),
        result: MatchResult {
            winner: Some(winner),
            reason,
        },
        finished_at_ms: 9_999,
        ratings: Vec::new(),
    }
}

/// A whole match: two seats, a start, two moves, a presence change, the end.
fn play_match(store: &dyn MatchStore, room: &str) {
    let ops = [
        create(room, 100),
        seat(room, 0, "ada"),
        seat(room, 1, "bob"),
        event(
            room,
            1,
            EventBody::Seated {
                seat: 0,
                name: Some("ada".into()),
                player_kind: Some(PlayerKind::Person),
            },
            100,
        ),
        event(
            room,
            2,
            EventBody::Seated {
                seat: 1,
                name: Some("bob".into()),
                player_kind: Some(PlayerKind::Person),
            },
            900,
        ),
        event(room, 3, EventBody::Started, 1_000),
        event(room, 4, moved(0, 0), 1_500),
        event(
            room,
            5,
            EventBody::Presence {
                seat: 1,
                connected: false,
            },
            1_600,
        ),
        event(room, 6, moved(1, 2), 2_300),
    ];
    for op in ops {
        put(store, op).expect("write");
    }
}

on_both!(
    /// A room's short code finds its record for good: after a restart, in
    /// any case (codes are never reused).
    a_code_finds_its_match_after_a_restart_in_any_case, |place| {
    {
        let store = place.open().expect("open");
        let mut op = create("r-coded", 5);
        if let WriteOp::CreateRoom { code, .. } = &mut op {
            *code = "ABC234".into();
        }
        put(&store, op).expect("create");
        for op in [
            seat("r-coded", 0, "ada"),
            seat("r-coded", 1, "bob"),
            event("r-coded", 1, EventBody::Started, 1_000),
            event("r-coded", 2, moved(0, 0), 1_500),
            event("r-coded", 3, moved(1, 2), 2_300),
        ] {
            put(&store, op).expect("write");
        }
    }
    let store = place.open().expect("reopen");
    for key in ["ABC234", "abc234", "r-coded"] {
        let record = store.record(key).expect("record").expect("found");
        assert_eq!(record.room, "r-coded", "{key}");
        assert_eq!(record.moves.len(), 2, "{key}");
    }
    assert_eq!(store.record("ABC235").expect("record"), None);
    assert_eq!(store.record("").expect("record"), None);
});

on_both!(record_of_a_finished_match, |place| {
    let store = place.open().expect("open");
    play_match(&store, "r1");
    let result = MatchResult {
        winner: Some(1),
        reason: EndReason::Rules,
    };
    put(&store, event("r1", 7, EventBody::Ended { result }, 2_300)).expect("ended");
    put(&store, finish("r1", 1, EndReason::Rules)).expect("finish");
    // A second Finish is harmless and keeps the first result.
    put(&store, finish("r1", 0, EndReason::Resign)).expect("finish again");

    let record = store.record("r1").expect("record").expect("known room");
    assert_eq!(record.room, "r1");
    assert_eq!(record.spec, json!({"game": "nim", "heaps": [3, 4, 5]}));
    assert_eq!(record.players, [Some("ada".into()), Some("bob".into())]);
    assert_eq!(record.player_kinds, [Some(PlayerKind::Person); 2]);
    assert_eq!(
        record.clock,
        Some(Clock {
            initial_ms: 60_000,
            increment_ms: 1_000
        })
    );
    assert_eq!(
        record.moves,
        vec![
            RecordedMove {
                seat: 0,
                mv: json!({"heap": 0, "take": 1}),
                at_ms: 500
            },
            RecordedMove {
                seat: 1,
                mv: json!({"heap": 2, "take": 1}),
                at_ms: 1_300
            },
        ]
    );
    assert_eq!(record.result, Some(result));
    assert_eq!(store.record("nope").expect("record"), None);
    assert!(store.load_unfinished().expect("load").is_empty());
});

on_both!(
    /// A rated room's result carries the new ratings: written with its first
    /// result, and never again by a repeated finish (which would set a
    /// player's rating back to what this game made it).
    a_rated_finish_writes_its_ratings_with_the_first_result_only,
    |place| {
        let store = place.open().expect("open");
        for (id, name) in [(1, "ada"), (2, "bob")] {
            put(
                &store,
                WriteOp::Account(AccountWrite::Create(AccountRow {
                    id,
                    username: name.into(),
                    username_key: name.into(),
                    kind: grundy_protocol::wire::AccountKind::Person,
                    password_hash: "h".into(),
                    created_at_ms: 1,
                })),
            )
            .expect("account");
        }
        let mut rated = create("r1", 1);
        if let WriteOp::CreateRoom { rated, .. } = &mut rated {
            *rated = true;
        }
        put(&store, rated).expect("create");
        put(&store, create("r2", 2)).expect("create");
        let rows = |rating: f64| -> Vec<RatingRow> {
            [(1, "ada", rating), (2, "bob", 3000.0 - rating)]
                .into_iter()
                .map(|(account, name, rating)| RatingRow {
                    game: "nim".into(),
                    account: Some(account),
                    rating: grundy_protocol::wire::PlayerRating {
                        player: name.into(),
                        player_kind: Some(PlayerKind::Person),
                        unclaimed: false,
                        rating,
                        deviation: 290.0,
                        volatility: 0.06,
                        games: 1,
                    },
                })
                .collect()
        };
        let finish_with = |rating: f64| {
            let mut op = finish("r1", 0, EndReason::Rules);
            if let WriteOp::Finish { ratings, .. } = &mut op {
                *ratings = rows(rating);
            }
            op
        };
        put(&store, finish_with(1662.0)).expect("finish");
        put(&store, finish_with(1700.0)).expect("finish again");
        let mut stored = store.load_ratings().expect("ratings");
        stored.sort_by_key(|r| r.account);
        assert_eq!(stored, rows(1662.0));
        let unfinished = store.load_unfinished().expect("load");
        assert_eq!(unfinished.len(), 1);
        assert!(!unfinished[0].rated, "r2 is casual");
        drop(store);
        // And the flag is read back with the room.
        let store = place.open().expect("open again");
        put(&store, {
            let mut op = create("r3", 3);
            if let WriteOp::CreateRoom { rated, .. } = &mut op {
                *rated = true;
            }
            op
        })
        .expect("create");
        let rooms = store.load_unfinished().expect("load");
        let r3 = rooms.iter().find(|r| r.room == "r3").expect("r3");
        assert!(r3.rated);
    }
);

on_both!(
    moves_are_timed_from_the_first_move_without_a_start,
    |place| {
        let store = place.open().expect("open");
        put(&store, create("r", 0)).expect("create");
        put(&store, event("r", 1, moved(0, 0), 5_000)).expect("move");
        put(&store, event("r", 2, moved(1, 1), 7_000)).expect("move");
        let record = store.record("r").expect("record").expect("known");
        let times: Vec<u64> = record.moves.iter().map(|m| m.at_ms).collect();
        assert_eq!(times, [0, 2_000]);
        assert_eq!(record.players, [None, None]);
        assert_eq!(record.result, None);
    }
);

on_both!(
    load_unfinished_returns_running_rooms_with_ordered_logs,
    |place| {
        let store = place.open().expect("open");
        play_match(&store, "done");
        put(&store, finish("done", 0, EndReason::Resign)).expect("finish");

        put(&store, create("open", 200)).expect("create");
        put(&store, seat("open", 1, "cy")).expect("seat");
        // Written out of order: read back in sequence order.
        for seq in [3, 1, 2] {
            put(&store, event("open", seq, EventBody::Started, seq * 10)).expect("event");
        }
        let mut early = create("early", 50);
        if let WriteOp::CreateRoom { hints, .. } = &mut early {
            *hints = true;
        }
        put(&store, early).expect("create");

        let rooms = store.load_unfinished().expect("load");
        let ids: Vec<&str> = rooms.iter().map(|r| r.room.as_str()).collect();
        assert_eq!(ids, ["early", "open"]);
        assert!(rooms[0].hints, "a room that allows hints is read back so");
        let open = &rooms[1];
        assert!(!open.hints);
        assert_eq!(open.code, "code-open");
        assert!(open.listed);
        assert_eq!(open.created_at_ms, 200);
        assert_eq!(open.result, None);
        assert_eq!(
            open.seats,
            [
                None,
                Some(StoredSeat {
                    player: Player {
                        name: Some("cy".into()),
                        kind: Some(PlayerKind::Person),
                        account: Some(2),
                    },
                    token: "token-open-1".into(),
                    house: false,
                    player_token: None,
                    tie: Some("tie-open-1".into()),
                })
            ]
        );
        let seqs: Vec<(u64, u64)> = open.events.iter().map(|(e, at)| (e.seq, *at)).collect();
        assert_eq!(seqs, [(1, 10), (2, 20), (3, 30)]);
        assert!(rooms[0].events.is_empty());
    }
);

on_both!(data_survives_close_and_reopen, |place| {
    let store = place.open().expect("open");
    play_match(&store, "a");
    play_match(&store, "b");
    put(&store, finish("b", 1, EndReason::Flag)).expect("finish");
    let unfinished = store.load_unfinished().expect("load");
    let record = store.record("b").expect("record");
    store.close();
    drop(store);

    let store = place.open().expect("reopen");
    assert_eq!(store.load_unfinished().expect("load"), unfinished);
    assert_eq!(store.record("b").expect("record"), record);
    assert_eq!(unfinished.len(), 1);
    assert_eq!(unfinished[0].events.len(), 6);
});

on_both!(concurrent_writes_all_land, |place| {
    const THREADS: u64 = 8;
    const EVENTS: u64 = 250;
    let store = Arc::new(place.open().expect("open"));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let room = format!("room{t}");
                put(&**store, create(&room, t)).expect("create");
                let pending: Vec<_> = (1..=EVENTS)
                    .map(|seq| store.write(event(&room, seq, EventBody::Started, seq)))
                    .collect();
                for done in pending {
                    assert_eq!(done.blocking_recv().expect("answer"), Ok(()));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker");
    }
    let rooms = store.load_unfinished().expect("load");
    assert_eq!(rooms.len(), THREADS as usize);
    for room in &rooms {
        let seqs: Vec<u64> = room.events.iter().map(|(e, _)| e.seq).collect();
        assert_eq!(seqs, (1..=EVENTS).collect::<Vec<_>>());
    }
    let ops = THREADS * (EVENTS + 1);
    assert!(
        store.transactions() < ops,
        "{} transactions",
        store.transactions()
    );
});

on_both!(group_commit_batches_queued_ops, |place| {
    let store = place.open().expect("open");
    put(&store, create("g", 0)).expect("create");
    // Queues the events `seqs` while the writer is held; returns how many
    // transactions committed them.
    let held = |seqs: std::ops::RangeInclusive<u64>| {
        let before = store.transactions();
        let release = store.hold();
        let pending: Vec<_> = seqs
            .map(|seq| store.write(event("g", seq, EventBody::Started, seq)))
            .collect();
        drop(release);
        for done in pending {
            assert_eq!(done.blocking_recv().expect("answer"), Ok(()));
        }
        store.transactions() - before
    };
    assert_eq!(held(1..=1000), 1);
    // More than a batch holds: ceil(3000 / MAX_BATCH) transactions.
    assert_eq!(held(1001..=4000), 3000u64.div_ceil(MAX_BATCH as u64));
    let record = store.load_unfinished().expect("load");
    assert_eq!(record[0].events.len(), 4000);
});

on_both!(a_bad_op_fails_alone_in_its_batch, |place| {
    let store = place.open().expect("open");
    put(&store, create("x", 0)).expect("create");

    let release = store.hold();
    let ok1 = store.write(event("x", 1, EventBody::Started, 1));
    let dup = store.write(event("x", 1, EventBody::Started, 2));
    let unknown = store.write(event("ghost", 1, EventBody::Started, 1));
    let bad_seat = store.write(seat("x", 2, "eve"));
    let dup_room = store.write(create("x", 0));
    let unknown_finish = store.write(finish("ghost", 0, EndReason::Rules));
    let ok2 = store.write(event("x", 2, EventBody::Started, 3));
    drop(release);

    assert_eq!(ok1.blocking_recv().expect("answer"), Ok(()));
    assert_eq!(
        dup.blocking_recv().expect("answer"),
        Err(StoreError::DuplicateEvent {
            room: "x".into(),
            seq: 1
        })
    );
    assert_eq!(
        unknown.blocking_recv().expect("answer"),
        Err(StoreError::UnknownRoom("ghost".into()))
    );
    assert_eq!(
        bad_seat.blocking_recv().expect("answer"),
        Err(StoreError::BadSeat {
            room: "x".into(),
            seat: 2
        })
    );
    assert!(matches!(
        dup_room.blocking_recv().expect("answer"),
        Err(StoreError::DuplicateRoom { .. })
    ));
    assert_eq!(
        unknown_finish.blocking_recv().expect("answer"),
        Err(StoreError::UnknownRoom("ghost".into()))
    );
    assert_eq!(ok2.blocking_recv().expect("answer"), Ok(()));

    let rooms = store.load_unfinished().expect("load");
    let log: Vec<(u64, u64)> = rooms[0].events.iter().map(|(e, at)| (e.seq, *at)).collect();
    assert_eq!(log, [(1, 1), (2, 3)]);
});

on_both!(
    /// One batch that creates rooms, seats them, plays in them and ends one
    /// lands whole and in order (on PostgreSQL its events go in one insert,
    /// written before each op of another kind).
    a_batch_of_every_kind_of_op_lands_in_order, |place| {
    let store = place.open().expect("open");
    let release = store.hold();
    let pending: Vec<_> = [
        create("a", 1),
        seat("a", 0, "ada"),
        event("a", 1, EventBody::Started, 10),
        create("b", 2),
        event("b", 1, EventBody::Started, 11),
        event("a", 2, moved(0, 0), 12),
        WriteOp::All(vec![
            event("a", 3, moved(1, 1), 13),
            event(
                "a",
                4,
                EventBody::Ended {
                    result: MatchResult {
                        winner: Some(1),
                        reason: EndReason::Rules,
                    },
                },
                13,
            ),
            finish("a", 1, EndReason::Rules),
        ]),
        event("b", 2, moved(0, 1), 14),
    ]
    .into_iter()
    .map(|op| store.write(op))
    .collect();
    drop(release);
    for done in pending {
        assert_eq!(done.blocking_recv().expect("answer"), Ok(()));
    }
    assert_eq!(store.transactions(), 1, "one group commit");
    let unfinished = store.load_unfinished().expect("load");
    assert_eq!(unfinished.len(), 1);
    assert_eq!(unfinished[0].room, "b");
    let seqs: Vec<u64> = unfinished[0].events.iter().map(|(e, _)| e.seq).collect();
    assert_eq!(seqs, [1, 2]);
    let a = store.record("a").expect("record").expect("kept");
    assert_eq!(a.moves.len(), 2);
    assert_eq!(a.players[0].as_deref(), Some("ada"));
    assert_eq!(a.result.map(|r| r.winner), Some(Some(1)));
});

on_both!(ops_written_as_all_stand_or_fall_together, |place| {
    let store = place.open().expect("open");
    put(&store, create("x", 0)).expect("create");
    put(&store, event("x", 1, EventBody::Started, 1)).expect("event 1");
    // A batch in which one `All` fails (its second event is a duplicate)
    // beside one that succeeds: the failing one leaves nothing behind.
    let release = store.hold();
    let failing = store.write(WriteOp::All(vec![
        event("x", 2, moved(0, 0), 2),
        event("x", 1, EventBody::Started, 2),
        finish("x", 0, EndReason::Rules),
    ]));
    let fine = store.write(WriteOp::All(vec![
        event("x", 2, moved(0, 1), 3),
        event("x", 3, moved(1, 2), 3),
    ]));
    drop(release);
    assert_eq!(
        failing.blocking_recv().expect("answer"),
        Err(StoreError::DuplicateEvent {
            room: "x".into(),
            seq: 1
        })
    );
    assert_eq!(fine.blocking_recv().expect("answer"), Ok(()));
    let rooms = store.load_unfinished().expect("load: not finished");
    let log: Vec<(u64, u64)> = rooms[0].events.iter().map(|(e, at)| (e.seq, *at)).collect();
    assert_eq!(log, [(1, 1), (2, 3), (3, 3)]);
});

on_both!(
    /// The writer's room numbers (`RoomNos`) never outlive a rollback: a room
    /// whose creation was rolled back is unknown to later writes, and one
    /// created in a batch that had to be applied again op by op gets its
    /// events, under its own number.
    room_numbers_follow_rollbacks, |place| {
    let store = place.open().expect("open");
    put(&store, create("a", 0)).expect("create a");
    // "b" is created and written to in a batch with a failing op: the
    // batch is rolled back and applied again, op by op.
    let release = store.hold();
    let b = store.write(create("b", 1));
    let b1 = store.write(event("b", 1, EventBody::Started, 1));
    let bad = store.write(event("ghost", 1, EventBody::Started, 1));
    // A duplicate code: "c" is never created, in either pass.
    let mut dup = create("c", 2);
    if let WriteOp::CreateRoom { code, .. } = &mut dup {
        *code = "code-a".into();
    }
    let c = store.write(dup);
    let c1 = store.write(event("c", 1, EventBody::Started, 2));
    drop(release);
    assert_eq!(b.blocking_recv().expect("answer"), Ok(()));
    assert_eq!(b1.blocking_recv().expect("answer"), Ok(()));
    assert_eq!(
        bad.blocking_recv().expect("answer"),
        Err(StoreError::UnknownRoom("ghost".into()))
    );
    assert!(matches!(
        c.blocking_recv().expect("answer"),
        Err(StoreError::DuplicateRoom { .. })
    ));
    assert_eq!(
        c1.blocking_recv().expect("answer"),
        Err(StoreError::UnknownRoom("c".into()))
    );
    put(&store, event("b", 2, EventBody::Started, 3)).expect("b's second event");
    put(&store, event("a", 1, EventBody::Started, 4)).expect("a's first event");
    let rooms = store.load_unfinished().expect("load");
    let seqs = |room: &str| -> Vec<u64> {
        let stored = rooms.iter().find(|r| r.room == room).expect("stored");
        stored.events.iter().map(|(e, _)| e.seq).collect()
    };
    assert_eq!(seqs("b"), [1, 2]);
    assert_eq!(seqs("a"), [1]);
    assert!(rooms.iter().all(|r| r.room != "c"));
});

/// `batch_priority` (which the writer thread calls first) puts the
/// calling thread, and only it, under SCHED_BATCH.
#[cfg(target_os = "linux")]
#[test]
fn batch_priority_takes_the_calling_thread_only() {
    // SAFETY (both): a plain query of the calling thread's policy.
    let policy = || unsafe { libc::sched_getscheduler(0) };
    let before = policy();
    let inside = std::thread::spawn(move || {
        batch_priority();
        policy()
    })
    .join()
    .expect("thread");
    assert_eq!(inside, libc::SCHED_BATCH);
    assert_eq!(policy(), before);
}

on_both!(write_after_close_is_refused, |place| {
    let store = place.open().expect("open");
    let queued = store.write(create("c", 0));
    store.close();
    store.close();
    assert_eq!(queued.blocking_recv().expect("answer"), Ok(()));
    assert_eq!(put(&store, create("d", 0)), Err(StoreError::Closed));
    // Reads still work after close.
    assert!(store.record("c").expect("record").is_some());
});

#[test]
fn bad_json_in_the_file_is_an_error_naming_room_and_seq() {
    let (_dir, path) = temp();
    let store = SqliteStore::open(&path).expect("open");
    play_match(&store, "r");
    store.close();
    drop(store);

    let raw = Connection::open(&path).expect("raw");
    raw.execute(
        "UPDATE events SET body = '{not json'
         WHERE room_no = (SELECT no FROM rooms WHERE id = 'r') AND seq = 4",
        [],
    )
    .expect("corrupt it");
    drop(raw);

    let store = SqliteStore::open(&path).expect("reopen");
    for error in [
        store.load_unfinished().expect_err("corrupt"),
        store.record("r").expect_err("corrupt"),
    ] {
        match &error {
            StoreError::Corrupt { room, seq, .. } => {
                assert_eq!((room.as_str(), *seq), ("r", Some(4)));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(error.to_string().contains("room r at event 4"), "{error}");
    }
}

on_both!(
    a_seat_is_the_house_s_when_written_so_whatever_its_name,
    |place| {
        let store = place.open().expect("open");
        put(&store, create("r", 0)).expect("create");
        put(&store, seat("r", 0, "house-bot (perfect)")).expect("a person's seat");
        let mut house = seat("r", 1, "house-bot (perfect)");
        if let WriteOp::Seat { house, .. } = &mut house {
            *house = true;
        }
        put(&store, house).expect("the house seat");
        let rooms = store.load_unfinished().expect("load");
        let marks: Vec<_> = rooms[0]
            .seats
            .iter()
            .map(|s| s.as_ref().map(|s| s.house))
            .collect();
        assert_eq!(marks, [Some(false), Some(true)], "the name proves nothing");
    }
);

/// A version 3 file's seats: a seat counts as the house's only where the
/// old rule can tell (see `MARK_OLD_HOUSE_SEATS`).
#[test]
fn a_version_3_file_marks_only_the_house_seats_it_can_tell() {
    let (_dir, path) = temp();
    {
        let raw = Connection::open(&path).expect("raw");
        raw.execute_batch(&schema_at(3)).expect("v3 tables");
        let room = |no: u32, bot: &str, result: &str| {
            format!(
                "INSERT INTO rooms (no, id, code, spec, listed, bot, created_at_ms, result)
                 VALUES ({no}, 'r{no}', 'C{no}', '{{}}', 1, {bot}, {no}, {result});"
            )
        };
        let seat = |no: u32, seat: u8, name: &str| {
            format!("INSERT INTO seats VALUES ({no}, {seat}, '{name}', 't{no}{seat}');")
        };
        let finished = "'{\"winner\":1,\"reason\":\"resign\"}'";
        let rows = [
            // The house bot joined a person's room: the one case that counts.
            room(1, "'perfect'", "NULL"),
            seat(1, 0, "dana"),
            seat(1, 1, "house-bot (perfect)"),
            // A person took the name too: undecided.
            room(2, "'perfect'", "NULL"),
            seat(2, 0, "house-bot (perfect)"),
            seat(2, 1, "house-bot (perfect)"),
            // No bot asked for, another level asked for, or finished.
            room(3, "NULL", "NULL"),
            seat(3, 1, "house-bot (perfect)"),
            room(4, "'3'", "NULL"),
            seat(4, 1, "house-bot (perfect)"),
            room(5, "'perfect'", finished),
            seat(5, 1, "house-bot (perfect)"),
        ];
        raw.execute_batch(&rows.concat()).expect("v3 rows");
        raw.pragma_update(None, "user_version", 3).expect("version");
    }
    let store = SqliteStore::open(&path).expect("migrates");
    let marks: Vec<(String, [Option<bool>; 2])> = store
        .load_unfinished()
        .expect("load")
        .into_iter()
        .map(|r| (r.room, r.seats.map(|s| s.map(|s| s.house))))
        .collect();
    let expected = [
        ("r1", [Some(false), Some(true)]),
        ("r2", [Some(false), Some(false)]),
        ("r3", [None, Some(false)]),
        ("r4", [None, Some(false)]),
    ]
    .map(|(r, m)| (r.to_string(), m));
    assert_eq!(marks, expected);
    drop(store);
    let raw = Connection::open(&path).expect("raw");
    let finished: bool = raw
        .query_row("SELECT house FROM seats WHERE room_no = 5", [], |r| {
            r.get(0)
        })
        .expect("read");
    assert!(!finished);
}

/// A version 7 file may hold names that read the same (made on two
/// nodes at once): the first keeps its look, the later one none, and
/// no new account may read as either.
#[test]
fn version_7_accounts_get_what_their_names_read_as() {
    let (_dir, path) = temp();
    {
        let raw = Connection::open(&path).expect("raw");
        raw.execute_batch(&schema_at(7)).expect("v7 tables");
        raw.execute_batch(
            "INSERT INTO accounts VALUES (1, 'ada', 'ada', 'person', 'h', 1);
             INSERT INTO accounts VALUES (2, '\u{0430}da', '\u{0430}da', 'person', 'h', 2);
             INSERT INTO accounts VALUES (3, 'Bob', 'bob', 'person', 'h', 3);
             PRAGMA user_version = 7;",
        )
        .expect("a version 7 file");
    }
    let store = SqliteStore::open(&path).expect("migrates");
    let create = |id: u64, name: &str| {
        put(
            &store,
            WriteOp::Account(AccountWrite::Create(AccountRow {
                id,
                username: name.into(),
                username_key: name.to_lowercase(),
                kind: grundy_protocol::wire::AccountKind::Person,
                password_hash: "h".into(),
                created_at_ms: 4,
            })),
        )
    };
    assert!(matches!(
        create(4, "AD\u{0410}"),
        Err(StoreError::NameTaken(_))
    ));
    assert!(matches!(create(4, "b0b"), Err(StoreError::NameTaken(_))));
    create(4, "carol").expect("a name of its own");
    drop(store);
    let raw = Connection::open(&path).expect("raw");
    let looks: Vec<Option<String>> = raw
        .prepare("SELECT username_look FROM accounts ORDER BY id")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let expected = [Some("ada"), None, Some("bob"), Some("carol")];
    assert_eq!(looks, expected.map(|l| l.map(str::to_owned)));
}

#[test]
fn a_newer_schema_is_refused() {
    let (_dir, path) = temp();
    drop(SqliteStore::open(&path).expect("create"));
    let raw = Connection::open(&path).expect("raw");
    raw.pragma_update(None, "user_version", known_version() + 1)
        .expect("bump");
    drop(raw);
    assert_eq!(
        SqliteStore::open(&path).err(),
        Some(StoreError::SchemaTooNew {
            found: known_version() + 1,
            supported: known_version()
        })
    );
}

#[test]
fn a_second_store_on_a_held_file_is_refused_naming_it_and_its_holder() {
    let (_dir, path) = temp();
    let first = SqliteStore::open(&path).expect("open");
    let refused = SqliteStore::open(&path)
        .err()
        .expect("a second store is refused");
    assert_eq!(
        refused,
        StoreError::InUse {
            path: path.clone(),
            pid: Some(std::process::id())
        }
    );
    let text = refused.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(
        text.contains(&format!("(pid {})", std::process::id())),
        "{text}"
    );
    // The first one is untouched by the refusal.
    put(&first, create("r", 0)).expect("the holder still writes");
    assert_eq!(first.load_unfinished().expect("load").len(), 1);
}

#[test]
fn closing_or_dropping_a_store_lets_another_open_the_file() {
    let (_dir, path) = temp();
    let first = SqliteStore::open(&path).expect("open");
    put(&first, create("r", 0)).expect("create");
    first.close();
    let second = SqliteStore::open(&path).expect("open after close");
    assert_eq!(second.load_unfinished().expect("load").len(), 1);
    assert!(matches!(
        SqliteStore::open(&path),
        Err(StoreError::InUse { .. })
    ));
    drop(second);
    // Dropped without a close: the lock goes with it.
    let third = SqliteStore::open(&path).expect("open after drop");
    drop(first);
    // Dropping the closed first store does not free what the third holds.
    assert!(matches!(
        SqliteStore::open(&path),
        Err(StoreError::InUse { .. })
    ));
    drop(third);
    let lock_file = std::fs::read_to_string(lock_path(&path)).expect("lock file");
    assert_eq!(lock_file, "", "no stale pid once closed");
}

/// A tournament event as the tournament writes it.
fn tournament_event(tournament: &str, seq: u64, body: Value, account: Option<u64>) -> WriteOp {
    let mut event = body;
    event["seq"] = seq.into();
    let event: TournamentEvent = serde_json::from_value(event).expect("an event");
    let registers = matches!(event.body, TournamentEventBody::Registered { .. });
    WriteOp::TournamentEvent {
        tournament: tournament.into(),
        event,
        at_ms: 5_000 + seq,
        player_token: registers.then(|| format!("player-token-{seq}")),
        player_account: account,
        ratings: Vec::new(),
    }
}

fn standing(player: u32, name: &str, rating: Option<f64>) -> Value {
    json!({"rank": 1, "player": player, "name": name, "player_kind": "person", "score": 1,
           "games": 1, "wins": 1, "losses": 0, "byes": 0, "buchholz": 0,
           "sonneborn_berger": 0, "rating": rating, "withdrawn": false})
}

on_both!(
    /// An account's profile: its finished games from its seat's side, the
    /// tournaments it registered in, and its rating after each round of the
    /// rated ones, read from their logs.
    a_players_games_tournaments_and_rating_history_are_read, |place| {
    let store = place.open().expect("open");
    play_match(&*store, "r1");
    put(&*store, finish("r1", 1, EndReason::Rules)).expect("finish");
    // Unfinished: not listed.
    play_match(&*store, "r2");
    for (id, rated, at) in [("t-rated", true, 10), ("t-casual", false, 20)] {
        put(
            &*store,
            WriteOp::CreateTournament {
                tournament: id.into(),
                code: format!("C-{id}"),
                settings: json!({"name": id, "spec": {"game": "kayles", "heaps": [3]},
                                 "format": "round_robin", "rated": rated}),
                owner_token: "owner".into(),
                created_at_ms: at,
            },
        )
        .expect("tournament");
        let ops = [
            tournament_event(id, 1, json!({"kind": "registered", "player": 0, "name": "bob",
                                            "player_kind": "person"}), Some(2)),
            tournament_event(id, 2, json!({"kind": "registered", "player": 1, "name": "ada",
                                            "player_kind": "person"}), Some(1)),
            tournament_event(id, 3, json!({"kind": "round_ended", "round": 1, "standings":
                [standing(0, "bob", Some(1400.0)), standing(1, "ada", Some(1600.0))]}), None),
            tournament_event(id, 4, json!({"kind": "round_ended", "round": 2, "standings":
                [standing(1, "ada", Some(1650.5)), standing(0, "bob", Some(1350.0))]}), None),
        ];
        for op in ops {
            put(&*store, op).expect("event");
        }
    }

    let ada = store.player_history(1, 10, 10).expect("read");
    assert_eq!(ada.games.len(), 1, "{ada:?}");
    let game = &ada.games[0];
    assert_eq!((game.room.as_str(), game.seat), ("r1", 0));
    assert_eq!(game.opponent.as_deref(), Some("bob"));
    assert_eq!(game.opponent_kind, Some(PlayerKind::Person));
    assert_eq!(game.result.winner, Some(1));
    assert_eq!(game.finished_at_ms, 9_999);
    let ids: Vec<&str> = ada.tournaments.iter().map(|t| t.tournament.as_str()).collect();
    assert_eq!(ids, ["t-casual", "t-rated"], "newest first");
    assert!(ada.tournaments[0].ratings.is_empty(), "an unrated one has no history");
    let rated = &ada.tournaments[1];
    assert_eq!(rated.ratings, [(5_003, 1, 1600.0), (5_004, 2, 1650.5)]);
    assert_eq!(rated.settings["name"], "t-rated");
    let bob = store.player_history(2, 10, 1).expect("read");
    assert_eq!(bob.games[0].seat, 1);
    assert_eq!(bob.games[0].opponent.as_deref(), Some("ada"));
    assert_eq!(bob.tournaments.len(), 1, "as many as asked");
    assert!(bob.tournaments[0].ratings.is_empty(), "{bob:?}");
    let none = store.player_history(3, 10, 10).expect("read");
    assert_eq!(none, PlayerHistory::default());
});

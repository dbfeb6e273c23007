//! A room's task and its clocks end to end, on tokio's paused clock and a
//! store that commits at once: banks and increments as the players hear
//! them, the flag's timer, a late move, no-show and abandoned rooms, a move
//! read in time beating the flag's timer, a tournament hearing its game's
//! end, a finished room answering what was queued, a refused end retried,
//! a seat kept away from a closed connection's late follow, and from one
//! dropped while its resume waited.
//! No sleeps: time is advanced by hand. Each rule is also a unit test of the
//! match core (`server/src/room/core.rs`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use grundy_protocol::wire::Clock;
use grundy_protocol::Position;
use grundy_server::lobby::{Lobby, RoomSetup};
use grundy_server::outbox::{self, Handoff, Outbox};
use grundy_server::player::Player;
use grundy_server::ratings::Ratings;
use grundy_server::room::{RoomCmd, RoomTx};
use grundy_server::store::{HookedWrites, MatchStore, SqliteStore, StoreError, WriteOp};
use grundy_server::Config;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_util::task::TaskTracker;

struct Seat {
    outbox: Outbox,
    frames: Frames,
    token: String,
    room: String,
}

/// A connection's queue, one frame at a time (frames queued together come
/// apart here).
struct Frames {
    queue: outbox::Queue,
    ready: VecDeque<Utf8Bytes>,
}

impl Frames {
    fn new(queue: outbox::Queue) -> Frames {
        Frames {
            queue,
            ready: VecDeque::new(),
        }
    }

    async fn recv(&mut self) -> Option<Utf8Bytes> {
        if self.ready.is_empty() {
            self.ready.extend(self.queue.recv().await?);
        }
        self.ready.pop_front()
    }
}

impl Seat {
    async fn next(&mut self) -> Value {
        let frame = self.frames.recv().await.expect("a frame");
        serde_json::from_str(&frame).expect("JSON")
    }

    /// The next event, skipping nothing else.
    async fn event(&mut self) -> Value {
        let m = self.next().await;
        assert_eq!(m["type"], "event", "{m}");
        m["event"].clone()
    }
}

/// A new Nim room on a store that commits every write at once (nothing on
/// the paused clock waits for a disk); the directory must outlive the test.
async fn new_room(
    heaps: &[u64],
    clock: Option<Clock>,
    config: Config,
) -> (RoomTx, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (new_room_in(at_once(&dir), heaps, clock, config).await, dir)
}

/// A store in `dir` whose writes all succeed at once (and are not kept).
fn at_once(dir: &tempfile::TempDir) -> Arc<dyn MatchStore> {
    Arc::new(HookedWrites {
        store: SqliteStore::open(&dir.path().join("g.db")).unwrap(),
        hook: |_: &SqliteStore, _: WriteOp| {
            let (tx, rx) = oneshot::channel();
            let _ = tx.send(Ok(()));
            rx
        },
    })
}

/// A new Nim room kept in `store`.
async fn new_room_in(
    store: Arc<dyn MatchStore>,
    heaps: &[u64],
    clock: Option<Clock>,
    config: Config,
) -> RoomTx {
    let lobby = Lobby::new(
        store,
        Arc::new(config),
        Arc::new(Ratings::default()),
        TaskTracker::new(),
    );
    let spec = json!({"game": "nim", "heaps": heaps});
    let start = Position::from_spec(&spec).unwrap();
    let setup = RoomSetup {
        spec,
        start,
        clock,
        listed: true,
        bot: None,
        hints: false,
        rated: false,
        tournament: None,
        slot: None,
    };
    lobby.create(setup).await.unwrap().1
}

async fn room_with_clock(
    clock: Clock,
    no_show: Duration,
) -> (RoomTx, Seat, Seat, tempfile::TempDir) {
    seated_room(&[5, 5], clock, no_show).await
}

/// A timed Nim room from `heaps` with both seats taken and the match started
/// (seat 0 to move).
async fn seated_room(
    heaps: &[u64],
    clock: Clock,
    no_show: Duration,
) -> (RoomTx, Seat, Seat, tempfile::TempDir) {
    let config = Config {
        no_show,
        ..Config::default()
    };
    let (tx, dir) = new_room(heaps, Some(clock), config).await;
    let (a, b) = seat_both(&tx).await;
    (tx, a, b, dir)
}

/// Connections 1 and 2 take seats 0 and 1; returns them once the match has
/// started (every event so far read).
async fn seat_both(tx: &RoomTx) -> (Seat, Seat) {
    let mut seats = Vec::new();
    for (conn, seat) in [(1, 0u8), (2, 1u8)] {
        let (outbox, frames) = Outbox::new(conn, 64, usize::MAX);
        let mut frames = Frames::new(frames);
        tx.send(RoomCmd::Join {
            outbox: outbox.clone(),
            id: None,
            player: Player::default(),
            seat: Some(seat),
            tie: None,
        })
        .await
        .unwrap();
        let seated: Value = serde_json::from_str(&frames.recv().await.unwrap()).unwrap();
        assert_eq!(seated["type"], "seated", "{seated}");
        seats.push(Seat {
            outbox,
            frames,
            token: seated["token"].as_str().unwrap().to_string(),
            room: seated["room"].as_str().unwrap().to_string(),
        });
    }
    let b = seats.pop().unwrap();
    let mut a = seats.pop().unwrap();
    assert_eq!(a.event().await["kind"], "seated");
    assert_eq!(a.event().await["kind"], "started");
    (a, b)
}

async fn play(tx: &RoomTx, seat: &mut Seat, mv: Value) -> Value {
    play_received(tx, seat, mv, Instant::now()).await
}

/// Plays `mv` for `mover` (read at `received`), checks the ack, and returns
/// the `moved` event as `other` got it (the mover's copy is taken as well).
async fn move_seen(
    tx: &RoomTx,
    mover: &mut Seat,
    other: &mut Seat,
    mv: Value,
    received: Instant,
) -> Value {
    let ack = play_received(tx, mover, mv, received).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    let moved = other.event().await;
    assert_eq!(mover.event().await["kind"], "moved");
    moved
}

/// A move the server read at `received`.
async fn play_received(tx: &RoomTx, seat: &mut Seat, mv: Value, received: Instant) -> Value {
    tx.send(RoomCmd::Move {
        outbox: seat.outbox.clone(),
        id: None,
        token: seat.token.clone(),
        mv,
        received,
    })
    .await
    .unwrap();
    seat.next().await
}

#[tokio::test(start_paused = true)]
async fn bank_increment_and_flag() {
    let clock = Clock {
        initial_ms: 10_000,
        increment_ms: 1_000,
    };
    let (tx, mut a, mut b, _dir) = room_with_clock(clock, Duration::from_secs(60)).await;
    tokio::time::advance(Duration::from_millis(3_000)).await;
    let mv = json!({"heap": 0, "take": 1});
    let moved = move_seen(&tx, &mut a, &mut b, mv, Instant::now()).await;
    // 10 s - 3 s spent + 1 s increment; bob's bank untouched.
    assert_eq!(moved["clocks_ms"], json!([8_000, 10_000]), "{moved}");
    // Bob thinks 9.999 s: still on time.
    tokio::time::advance(Duration::from_millis(9_999)).await;
    let mv = json!({"heap": 1, "take": 1});
    let moved = move_seen(&tx, &mut b, &mut a, mv, Instant::now()).await;
    assert_eq!(moved["clocks_ms"], json!([8_000, 1_001]), "{moved}");
    // Alice lets her 8 s run out: bob wins on time.
    tokio::time::advance(Duration::from_millis(8_001)).await;
    let ended = a.event().await;
    assert_eq!(ended["kind"], "ended");
    assert_eq!(
        ended["result"],
        json!({"winner": 1, "reason": "flag"}),
        "{ended}"
    );
}

/// The clock stops when the server reads the move, not when the room gets to
/// it: time the move spends queued behind other work is not the mover's.
#[tokio::test(start_paused = true)]
async fn a_move_is_charged_up_to_when_it_was_read() {
    let clock = Clock {
        initial_ms: 10_000,
        increment_ms: 0,
    };
    let (tx, mut a, mut b, _dir) = room_with_clock(clock, Duration::from_secs(60)).await;
    tokio::time::advance(Duration::from_millis(1_000)).await;
    let received = Instant::now();
    // Four more seconds pass before the room takes the move.
    tokio::time::advance(Duration::from_millis(4_000)).await;
    let mv = json!({"heap": 0, "take": 1});
    let moved = move_seen(&tx, &mut a, &mut b, mv, received).await;
    assert_eq!(moved["clocks_ms"], json!([9_000, 10_000]), "{moved}");
    // Bob's turn starts when the move is announced, not when it was read.
    tokio::time::advance(Duration::from_millis(2_000)).await;
    let mv = json!({"heap": 1, "take": 1});
    let moved = move_seen(&tx, &mut b, &mut a, mv, Instant::now()).await;
    assert_eq!(moved["clocks_ms"], json!([9_000, 8_000]), "{moved}");
}

#[tokio::test(start_paused = true)]
async fn a_move_after_the_flag_loses_on_time() {
    let clock = Clock {
        initial_ms: 5_000,
        increment_ms: 0,
    };
    let (tx, mut a, _b, _dir) = room_with_clock(clock, Duration::from_secs(60)).await;
    tokio::time::advance(Duration::from_millis(5_000)).await;
    let answer = play(&tx, &mut a, json!({"heap": 0, "take": 1})).await;
    // The room sees the flag (its timer or the late move) before the move counts.
    let ended = if answer["type"] == "event" {
        answer["event"].clone()
    } else {
        assert_eq!(answer["code"], "match_over", "{answer}");
        a.event().await
    };
    assert_eq!(
        ended["result"],
        json!({"winner": 1, "reason": "flag"}),
        "{ended}"
    );
}

/// A move read before the flag falls counts, even when the room gets to it
/// after the flag's timer is due: when the timer and the queued move are
/// ready together, the room plays what was queued first (whichever its
/// `select!` picks, the move is played in time). On a paused clock with a
/// store that commits at once; twenty rooms, so the timer's side is taken
/// with certainty but for a chance of 2^-20.
#[tokio::test(start_paused = true)]
async fn a_move_read_in_time_beats_the_flag_timer() {
    for _ in 0..20 {
        let clock = Clock {
            initial_ms: 60,
            increment_ms: 0,
        };
        let config = Config {
            no_show: Duration::from_secs(60),
            ..Config::default()
        };
        let (tx, _dir) = new_room(&[5, 5], Some(clock), config).await;
        let (mut a, _b) = seat_both(&tx).await;
        // Read at 59 ms; the room gets to it at 100 ms, with the flag's timer due.
        tokio::time::advance(Duration::from_millis(59)).await;
        let received = Instant::now();
        tx.try_send(RoomCmd::Move {
            outbox: a.outbox.clone(),
            id: None,
            token: a.token.clone(),
            mv: json!({"heap": 0, "take": 1}),
            received,
        })
        .unwrap();
        tokio::time::advance(Duration::from_millis(41)).await;
        let answer = a.next().await;
        assert_eq!(answer["type"], "ack", "{answer}");
        assert_eq!(a.event().await["kind"], "moved");
    }
}

#[tokio::test(start_paused = true)]
async fn no_first_move_aborts_as_no_show() {
    let clock = Clock {
        initial_ms: 600_000,
        increment_ms: 0,
    };
    let (_tx, mut a, _b, _dir) = room_with_clock(clock, Duration::from_secs(30)).await;
    tokio::time::advance(Duration::from_millis(30_001)).await;
    let ended = a.event().await;
    assert_eq!(
        ended["result"],
        json!({"winner": null, "reason": "no_show"}),
        "{ended}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_room_nobody_is_in_is_called_off() {
    let (tx, _dir) = new_room(&[1, 2], None, Config::default()).await;
    let (creator, creator_frames) = Outbox::new(1, 64, usize::MAX);
    let mut creator_frames = Frames::new(creator_frames);
    tx.send(RoomCmd::Join {
        outbox: creator,
        id: None,
        player: Player::default(),
        seat: Some(0),
        tie: None,
    })
    .await
    .unwrap();
    assert!(creator_frames.recv().await.is_some());
    let (watcher, frames) = Outbox::new(2, 64, usize::MAX);
    let mut frames = Frames::new(frames);
    tx.send(RoomCmd::Watch {
        outbox: watcher,
        id: None,
        since: None,
    })
    .await
    .unwrap();
    assert!(frames.recv().await.is_some());
    // The creator goes away and nobody comes: ten minutes later the room is off.
    tx.send(RoomCmd::Gone { conn: 1 }).await.unwrap();
    let presence: Value = serde_json::from_str(&frames.recv().await.unwrap()).unwrap();
    assert_eq!(presence["event"]["kind"], "presence");
    tokio::time::advance(Duration::from_secs(601)).await;
    let ended: Value = serde_json::from_str(&frames.recv().await.unwrap()).unwrap();
    assert_eq!(
        ended["event"]["result"],
        json!({"winner": null, "reason": "abort"}),
        "{ended}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_open_room_nobody_joins_is_called_off_with_its_creator_connected() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = Config::default();
    let config = Config {
        idle_room: Duration::from_secs(120),
        limits: grundy_protocol::wire::Limits {
            open_rooms: 1,
            ..defaults.limits.clone()
        },
        ..defaults
    };
    let lobby = Lobby::new(
        at_once(&dir),
        Arc::new(config),
        Arc::new(Ratings::default()),
        TaskTracker::new(),
    );
    let setup = || {
        let spec = json!({"game": "nim", "heaps": [1, 2]});
        RoomSetup {
            start: Position::from_spec(&spec).unwrap(),
            spec,
            clock: None,
            listed: true,
            bot: None,
            hints: false,
            rated: false,
            tournament: None,
            slot: None,
        }
    };
    let (_, tx) = lobby.create(setup()).await.unwrap();
    let (creator, frames) = Outbox::new(1, 64, usize::MAX);
    let mut frames = Frames::new(frames);
    tx.send(RoomCmd::Join {
        outbox: creator,
        id: None,
        player: Player::default(),
        seat: Some(0),
        tie: None,
    })
    .await
    .unwrap();
    let seated: Value = serde_json::from_str(&frames.recv().await.unwrap()).unwrap();
    assert_eq!(seated["type"], "seated", "{seated}");
    // The creator stays; the room holds the server's one place.
    tokio::time::advance(Duration::from_secs(119)).await;
    let refused = lobby.create(setup()).await.map(|_| ()).unwrap_err();
    assert!(refused.1.contains("(open_rooms)"), "{refused:?}");
    tokio::time::advance(Duration::from_secs(1)).await;
    let ended: Value = serde_json::from_str(&frames.recv().await.unwrap()).unwrap();
    assert_eq!(ended["event"]["kind"], "ended", "{ended}");
    assert_eq!(
        ended["event"]["result"],
        json!({"winner": null, "reason": "abort"}),
        "{ended}"
    );
    // Its place is free again.
    lobby
        .create(setup())
        .await
        .expect("a new room in its place");
}

#[tokio::test(start_paused = true)]
async fn an_untimed_match_whose_player_to_move_left_is_called_off() {
    let (tx, _dir) = new_room(&[1, 2], None, Config::default()).await;
    let mut frames = Vec::new();
    for (conn, seat) in [(1, 0u8), (2, 1u8)] {
        let (outbox, rx) = Outbox::new(conn, 64, usize::MAX);
        let mut rx = Frames::new(rx);
        tx.send(RoomCmd::Join {
            outbox,
            id: None,
            player: Player::default(),
            seat: Some(seat),
            tie: None,
        })
        .await
        .unwrap();
        assert!(rx.recv().await.is_some());
        frames.push(rx);
    }
    // Seat 0 is to move and goes away; seat 1 (say, a house bot) stays.
    tx.send(RoomCmd::Gone { conn: 1 }).await.unwrap();
    let mut bot = frames.pop().unwrap();
    let presence: Value = serde_json::from_str(&bot.recv().await.unwrap()).unwrap();
    assert_eq!(presence["event"]["kind"], "presence", "{presence}");
    tokio::time::advance(Duration::from_secs(601)).await;
    let ended: Value = serde_json::from_str(&bot.recv().await.unwrap()).unwrap();
    assert_eq!(
        ended["event"]["result"],
        json!({"winner": null, "reason": "abort"}),
        "{ended}"
    );
}

/// A client of another node follows its room here (the room's node went
/// away), but its connection closed on the way, after it was told `Gone`:
/// the seat stays away, and the untimed match is still called off. Were
/// the follow to take the seat, nobody would ever tell the room it left.
#[tokio::test(start_paused = true)]
async fn a_closed_connection_that_follows_its_room_does_not_take_its_seat_back() {
    let (tx, _dir) = new_room(&[1, 2], None, Config::default()).await;
    let (a, mut b) = seat_both(&tx).await;
    // Seat 0 is to move; its connection closes: it reads whom to tell (the
    // room, not yet entered by the follow) and tells them.
    let outbox = a.outbox.clone();
    assert!(outbox.rooms.leave().is_empty());
    tx.send(RoomCmd::Gone { conn: outbox.conn }).await.unwrap();
    let presence = b.event().await;
    assert_eq!(presence["kind"], "presence", "{presence}");
    assert_eq!(presence["connected"], false, "{presence}");
    // Its follow, still under way, enters the room and arrives afterwards,
    // before the connection's task is through closing (not kicked yet).
    outbox.rooms.enter(&a.room);
    tx.send(RoomCmd::CarryOn {
        outbox: outbox.clone(),
        handoff: Handoff {
            room: a.room.clone(),
            token: Some(a.token.clone()),
            since: 3,
        },
    })
    .await
    .unwrap();
    tokio::time::advance(Duration::from_secs(601)).await;
    let ended = b.event().await;
    assert_eq!(ended["kind"], "ended", "{ended}");
    assert_eq!(
        ended["result"],
        json!({"winner": null, "reason": "abort"}),
        "{ended}"
    );
    assert!(
        !outbox.rooms.contains(&a.room),
        "the follow left no place taken"
    );
}

/// A player comes back on a new connection, which the server drops (a slow
/// reader, a lost bus) while its `resume` waits in the room's queue: the
/// room lets the seat go again, since no `Gone` will ever come for it (its
/// place was taken back), and the untimed match is still called off.
#[tokio::test(start_paused = true)]
async fn a_seat_taken_by_a_connection_dropped_meanwhile_is_let_go() {
    let (tx, _dir) = new_room(&[1, 2], None, Config::default()).await;
    let (a, mut b) = seat_both(&tx).await;
    let wait = Duration::from_secs(5);
    tx.send(RoomCmd::Gone {
        conn: a.outbox.conn,
    })
    .await
    .unwrap();
    let away = tokio::time::timeout(wait, b.event())
        .await
        .expect("presence");
    assert_eq!(away["connected"], false, "{away}");
    // The new connection enters the room as it sends the resume (as every
    // join does), and is dropped before the room takes it.
    let (comeback, _frames) = Outbox::new(3, 64, usize::MAX);
    comeback.rooms.enter(&a.room);
    comeback.drop_for(outbox::Kick::SlowReader);
    tx.send(RoomCmd::Resume {
        outbox: comeback.clone(),
        id: None,
        token: a.token.clone(),
        account: None,
        tie: None,
        since: None,
    })
    .await
    .unwrap();
    tokio::time::advance(Duration::from_secs(601)).await;
    let mut kinds = Vec::new();
    let ended = loop {
        let event = tokio::time::timeout(wait, b.event())
            .await
            .unwrap_or_else(|_| panic!("no end, only {kinds:?}: the seat is held for good"));
        if event["kind"] == "ended" {
            break event;
        }
        kinds.push(event["kind"].clone());
    };
    assert_eq!(
        ended["result"],
        json!({"winner": null, "reason": "abort"}),
        "{ended}"
    );
    assert!(
        !comeback.rooms.contains(&a.room),
        "the dropped connection holds no place in the room"
    );
}

/// A tournament game's player who never makes a first move loses it (it is
/// not called off), and the room reports the result to its tournament.
#[tokio::test(start_paused = true)]
async fn a_no_show_in_a_tournament_game_loses_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("g.db")).unwrap());
    let lobby = Lobby::new(
        store,
        Arc::new(Config::default()),
        Arc::new(Ratings::default()),
        TaskTracker::new(),
    );
    let spec = json!({"game": "nim", "heaps": [1, 2]});
    let (reported, mut results) = mpsc::unbounded_channel();
    let setup = RoomSetup {
        start: Position::from_spec(&spec).unwrap(),
        spec,
        clock: Some(Clock {
            initial_ms: 600_000,
            increment_ms: 0,
        }),
        listed: true,
        bot: None,
        hints: false,
        rated: false,
        tournament: Some((
            "t".to_string(),
            Box::new(move |room: &str, result| {
                let _ = reported.send((room.to_string(), result));
            }),
        )),
        slot: None,
    };
    let (room, tokens) = lobby
        .create_seated(
            setup,
            [(Player::guest("ann"), None), (Player::guest("ben"), None)],
        )
        .await
        .unwrap();
    assert!(tokens.iter().all(|t| t.len() == 32));
    // Seat 0 never comes: after the no-show wait, seat 1 wins.
    tokio::time::advance(Duration::from_millis(29_000)).await;
    assert!(results.try_recv().is_err(), "not yet");
    tokio::time::advance(Duration::from_millis(1_001)).await;
    let (which, result) = results.recv().await.expect("reported");
    assert_eq!(which, room);
    assert_eq!(result.winner, Some(1));
    assert_eq!(result.reason, grundy_protocol::wire::EndReason::NoShow);
}

/// A finished room's linger ends with its queue closed, but the commands
/// already in it are answered: a request that arrives just before the end is
/// never met with silence. A sender keeps watch commands coming while the
/// linger runs out, in twenty rooms; every one the queue took is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_queued_as_a_finished_room_leaves_are_answered() {
    let linger = Duration::from_millis(100);
    for _ in 0..20 {
        let config = Config {
            linger,
            ..Config::default()
        };
        let (tx, _dir) = new_room(&[1, 2], None, config).await;
        let (player, frames) = Outbox::new(1, 64, usize::MAX);
        let mut player_frames = Frames::new(frames);
        tx.send(RoomCmd::Join {
            outbox: player.clone(),
            id: None,
            player: Player::default(),
            seat: Some(0),
            tie: None,
        })
        .await
        .unwrap();
        let seated: Value = serde_json::from_str(&player_frames.recv().await.unwrap()).unwrap();
        let token = seated["token"].as_str().unwrap().to_string();
        tx.send(RoomCmd::Abort {
            outbox: player,
            id: None,
            token,
        })
        .await
        .unwrap();
        // Watches, one after another, until the room's queue is closed.
        let (watcher, frames) = Outbox::new(2, 1 << 20, usize::MAX);
        let mut frames = Frames::new(frames);
        let sender = tokio::spawn(async move {
            let mut taken = 0u64;
            while tx
                .send(RoomCmd::Watch {
                    outbox: watcher.clone(),
                    id: None,
                    since: None,
                })
                .await
                .is_ok()
            {
                taken += 1;
            }
            taken
        });
        let taken = sender.await.unwrap();
        let mut answered = 0u64;
        let all = async {
            while let Some(frame) = frames.recv().await {
                let m: Value = serde_json::from_str(&frame).unwrap();
                if m["type"] == "watching" {
                    answered += 1;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(20), all)
            .await
            .expect("the room's task ended");
        assert!(taken > 0);
        assert_eq!(answered, taken, "every watch the room took is answered");
    }
}

/// When the store refuses to record a flag, the room tries again a second
/// later instead of asking in a tight loop.
#[tokio::test(start_paused = true)]
async fn a_refused_end_of_match_is_retried_not_spun() {
    let dir = tempfile::tempdir().unwrap();
    // A store that refuses to record the end of any match, and counts how
    // often it was asked.
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = asked.clone();
    let store = Arc::new(HookedWrites {
        store: SqliteStore::open(&dir.path().join("g.db")).unwrap(),
        // Every other write succeeds at once: nothing on the paused clock
        // waits for a disk.
        hook: move |_: &SqliteStore, op: WriteOp| {
            let (tx, rx) = oneshot::channel();
            if op.ops().any(|op| matches!(op, WriteOp::Finish { .. })) {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = tx.send(Err(StoreError::Sqlite("disk I/O error (test)".into())));
            } else {
                let _ = tx.send(Ok(()));
            }
            rx
        },
    });
    let clock = Clock {
        initial_ms: 50,
        increment_ms: 0,
    };
    let tx = new_room_in(store.clone(), &[5, 5], Some(clock), Config::default()).await;
    let _seats = seat_both(&tx).await;
    // The flag falls after 50 ms; the next try is due a second later.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let tries = asked.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(tries, 1, "the store was asked {tries} times");
    // The first try came between 50 and 500 ms, so the second is due by
    // 1.5 s and the third not before 2.05 s.
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    let tries = asked.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(tries, 2, "the store was asked {tries} times");
}

//! A room's own CPU per move, without the network, the queues or the store:
//! what `grundy-load run` plays (Nim from {4,5,5,6}, one stone from the first
//! non-empty heap, 20 moves), each move read from its text, decided, its
//! event serialized once, framed for the subscribers with the mover's `ack`,
//! and applied — the steps `connection.rs` and `room/mod.rs` take for a move.
//! Run: `cargo bench -p grundy-server --bench move_path` (the time is for a
//! whole match: divide by 20).

use std::sync::Arc;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use grundy_protocol::wire::{ClientBody, ClientMsg, Play};
use grundy_protocol::{Position, Rules, Status};
use grundy_server::config::Config;
use grundy_server::player::Player;
use grundy_server::room::answer::{ack_frame, event_frame};
use grundy_server::room::core::{Core, Intent, MatchRules, Record};
use serde_json::json;

const ROOM: &str = "0123456789abcdef0123456789abcdef";

/// Both players seated: the match has started.
fn started() -> Core {
    let spec = json!({"game": "nim", "heaps": [4, 5, 5, 6]});
    let start = Position::from_spec(&spec).expect("a valid spec");
    let mut core = Core::new(
        spec,
        start,
        None,
        MatchRules::new(&Config::default(), false, false),
    );
    for (name, token) in [("a", "token-a"), ("b", "token-b")] {
        let join = Intent::Join {
            player: Player::guest(name),
            seat: None,
            token: token.into(),
            tie: None,
        };
        let decision = core.decide(join, Instant::now()).expect("a free seat");
        for record in &decision.records {
            core.apply(record, Instant::now()).expect("applies");
        }
    }
    core
}

/// The match's move texts, as the load tool writes them.
fn moves() -> Vec<String> {
    let mut position =
        Position::from_spec(&json!({"game": "nim", "heaps": [4, 5, 5, 6]})).expect("valid");
    let mut texts = Vec::new();
    while position.status() == Status::Ongoing {
        let mv = position.legal_moves(1).moves.remove(0);
        let token = ["token-a", "token-b"][texts.len() % 2];
        texts.push(format!(
            r#"{{"type":"move","id":{},"room":"{ROOM}","token":"{token}","move":{}}}"#,
            texts.len() + 1,
            serde_json::to_string(&mv).expect("a move serializes"),
        ));
        position.play(&mv).expect("a legal move");
    }
    texts
}

/// One match: every move as the server takes it.
fn play(mut core: Core, texts: &[String]) -> Core {
    for text in texts {
        let Ok(ClientMsg {
            id,
            body: ClientBody::Move(Play { token, mv, .. }),
        }) = ClientMsg::from_text(text)
        else {
            panic!("a move message");
        };
        let intent = Intent::Move {
            token: &token,
            mv: &mv,
            received: Instant::now(),
        };
        let decision = core.decide(intent, Instant::now()).expect("a legal move");
        let mut frames = Vec::new();
        for record in &decision.records {
            let json: Arc<str> = match record {
                Record::Event(event) => serde_json::to_string(event).expect("serializes").into(),
                Record::Moved(played) => played.json().into(),
                Record::Seat { .. } => continue,
            };
            frames.push(event_frame(ROOM, &json));
        }
        let ack = ack_frame(&id, ROOM, decision.first_seq());
        for record in &decision.records {
            core.apply(record, Instant::now()).expect("applies");
        }
        criterion::black_box((frames, ack));
    }
    core
}

fn bench(c: &mut Criterion) {
    let texts = moves();
    assert_eq!(texts.len(), 20);
    let core = started();
    assert!(play(core.clone(), &texts).finished());
    c.bench_function("move_path/nim_match_20_moves", |b| {
        b.iter_batched(
            || core.clone(),
            |core| play(core, &texts),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

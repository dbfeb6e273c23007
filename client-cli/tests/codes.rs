//! A room's short code keeps working after its match: `grundy replay CODE`
//! and `grundy watch CODE` once the room has left the server's memory, here
//! by a restart.

mod common;

use common::{grundy, open_room, TestServer};
use grundy_client::client::Client;
use grundy_protocol::wire::{ClientBody, ClientMsg, Play, ServerBody, ServerMsg};
use serde_json::json;

/// alice and bob play Nim from heaps 1 and 2 to the end (alice wins);
/// returns the room's id and code.
async fn a_finished_match(url: &str) -> (String, String) {
    let mut alice = Client::connect(url, "alice").await.expect("connect");
    let mut bob = Client::connect(url, "bob").await.expect("connect");
    let (room, t0, snapshot) = open_room(&mut alice, json!({"game": "nim", "heaps": [1, 2]})).await;
    let answer = bob
        .request(|id| ClientMsg {
            id,
            body: ClientBody::Join {
                room: snapshot.code.to_lowercase(),
                seat: None,
            },
        })
        .await
        .expect("joined");
    let ServerMsg {
        body: ServerBody::Seated { token: t1, .. },
        ..
    } = answer
    else {
        panic!("not seated: {answer:?}")
    };
    let moves = [
        (0, json!({"heap": 1, "take": 1})),
        (1, json!({"heap": 0, "take": 1})),
        (0, json!({"heap": 1, "take": 1})),
    ];
    for (seat, mv) in moves {
        let (c, token) = if seat == 0 {
            (&mut alice, &t0)
        } else {
            (&mut bob, &t1)
        };
        let ack = c
            .request(|id| ClientMsg {
                id,
                body: ClientBody::Move(Play {
                    room: room.clone(),
                    token: token.clone(),
                    mv,
                }),
            })
            .await
            .expect("a move");
        assert!(
            matches!(
                ack,
                ServerMsg {
                    body: ServerBody::Ack { .. },
                    ..
                }
            ),
            "{ack:?}"
        );
    }
    (room, snapshot.code)
}

#[test]
fn a_finished_rooms_code_replays_it_after_a_restart() {
    let mut server = TestServer::start();
    let url = server.url();
    let (room, code) = server.rt.block_on(a_finished_match(&url));
    server.restart_in_place(std::time::Duration::from_millis(10));

    let replay = grundy(&["replay", &code.to_lowercase(), "--all", "--server", &url]);
    assert!(replay.status.success(), "{replay:?}");
    let text = String::from_utf8_lossy(&replay.stdout);
    assert!(
        text.starts_with(&format!(
            "Nim, match {room}: alice (guest) (seat 0) vs bob (guest) (seat 1), 3 moves."
        )),
        "{text}"
    );
    assert!(text.contains("alice (guest) won"), "{text}");

    let watch = grundy(&["watch", &code, "--server", &url]);
    assert!(watch.status.success(), "{watch:?}");
    let text = String::from_utf8_lossy(&watch.stdout);
    assert!(
        text.contains(&format!(
            "The match in room {code} is over: alice vs bob, 3 moves, alice won"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "replay it with `grundy replay {code} --server {url}`"
        )),
        "{text}"
    );

    let unknown = grundy(&["watch", "ZZZZZZ", "--server", &url]);
    assert_eq!(unknown.status.code(), Some(2), "{unknown:?}");
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        err.contains("no room or match \"ZZZZZZ\" on this server"),
        "{err}"
    );
}

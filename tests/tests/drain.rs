//! A graceful shutdown answers every command it has taken. A `create_room`
//! or `join` that took a seat has its `seated` answer, which holds the only
//! copy of the seat's token, delivered before the connection is closed;
//! commands still in flight when the server stops reading are answered or
//! never take effect.

use std::collections::HashSet;

use grundy_protocol::wire::EventBody;
use grundy_server::store::{MatchStore, SqliteStore};
use grundy_tests::{Client, TestServer};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// Reads until the server closes the socket; the tokens of every `seated`
/// answer, and whether a `shutdown` notice came before the close.
async fn tokens_until_closed(client: &mut Client) -> (Vec<String>, bool) {
    let mut tokens = Vec::new();
    let mut told = false;
    loop {
        match client.frame().await {
            Some(Message::Text(text)) => {
                let msg: Value = serde_json::from_str(&text).expect("JSON");
                match msg["type"].as_str() {
                    Some("seated") => tokens.push(msg["token"].as_str().unwrap().to_owned()),
                    Some("shutdown") => told = true,
                    _ => {}
                }
            }
            Some(Message::Close(_)) | None => return (tokens, told),
            Some(_) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_seat_taken_during_a_shutdown_loses_its_token() {
    let mut server = TestServer::start().await;
    let url = server.url();
    // Half of them open rooms now; the other half will join those rooms
    // while the server stops, the first half create more rooms meanwhile.
    let mut hosts = Vec::new();
    let mut codes = Vec::new();
    let mut given = HashSet::new();
    for i in 0..20 {
        let mut host = Client::connect(&url, &format!("host{i}")).await;
        let seated = host
            .request(json!({"type": "create_room", "spec": {"game": "nim", "heaps": [3, 4]}}))
            .await;
        assert_eq!(seated["type"], "seated", "{seated}");
        given.insert(seated["token"].as_str().unwrap().to_owned());
        codes.push(seated["snapshot"]["code"].as_str().unwrap().to_owned());
        hosts.push(host);
    }
    let mut guests = Vec::new();
    for i in 0..20 {
        guests.push(Client::connect(&url, &format!("guest{i}")).await);
    }
    for (guest, code) in guests.iter_mut().zip(&codes) {
        guest
            .send(json!({"type": "join", "id": 1, "room": code}))
            .await;
    }
    for host in &mut hosts {
        host.send(json!({"type": "create_room", "id": 99, "spec": {"game": "nim", "heaps": [5]}}))
            .await;
    }
    let stopping = tokio::spawn(async move {
        server.stop().await;
        server
    });

    for client in hosts.iter_mut().chain(guests.iter_mut()) {
        let (tokens, told) = tokens_until_closed(client).await;
        assert!(told, "a shutdown notice before the close");
        given.extend(tokens);
    }
    let server = stopping.await.expect("the server stops");

    let store = SqliteStore::open(&server.db).expect("the store opens");
    let rooms = store.load_unfinished().expect("readable");
    // Everyone was connected at the end: each seat's last word is that its
    // player went away (recorded by the room as the server stopped).
    for room in &rooms {
        for (seat, taken) in room.seats.iter().enumerate() {
            if taken.is_none() {
                continue;
            }
            let last = room
                .events
                .iter()
                .rev()
                .find_map(|(event, _)| match &event.body {
                    EventBody::Presence { seat: s, connected } if *s as usize == seat => {
                        Some(*connected)
                    }
                    _ => None,
                });
            assert_eq!(
                last,
                Some(false),
                "room {} seat {seat}: {:?}",
                room.room,
                room.events
            );
        }
    }
    let stored: Vec<String> = rooms
        .into_iter()
        .flat_map(|room| room.seats.into_iter().flatten().map(|seat| seat.token))
        .collect();
    assert!(stored.len() >= 20, "the first rooms' seats at least");
    // The store keeps each token's hash.
    let given: Vec<String> = given
        .iter()
        .map(|t| grundy_server::secret::hash(t))
        .collect();
    let lost: Vec<_> = stored.iter().filter(|t| !given.contains(*t)).collect();
    eprintln!(
        "{} seats stored, {} lost their token",
        stored.len(),
        lost.len()
    );
    assert!(
        lost.is_empty(),
        "{} of {} stored seats were never told their token",
        lost.len(),
        stored.len()
    );
}

//! `grundy lobby` against a server with more listed rooms than one list holds.

mod common;

use std::process::Command;

use common::TestServer;
use grundy_client::client::Client;
use grundy_protocol::wire::{ClientMsg, ServerMsg, MAX_LISTED_ROOMS};
use serde_json::json;

#[test]
fn a_lobby_longer_than_one_list_says_how_much_is_shown() {
    let server = TestServer::start();
    let url = server.url();
    let total = MAX_LISTED_ROOMS as usize + 2;
    // A connection may hold 64 seats: several open the rooms.
    let _hosts = server.rt.block_on(async {
        let (mut hosts, mut opened) = (Vec::new(), 0);
        for n in 0.. {
            let mut c = Client::connect(&url, &format!("host{n}"))
                .await
                .expect("connect");
            for _ in 0..60 {
                if opened == total {
                    break;
                }
                let answer = c
                    .request(|id| ClientMsg::CreateRoom {
                        id,
                        spec: Some(json!({"game": "nim", "heaps": [3, 4, 5]})),
                        random: None,
                        clock: None,
                        listed: true,
                        seat: None,
                        bot: None,
                        hints: false,
                    })
                    .await
                    .expect("a room");
                assert!(matches!(answer, ServerMsg::Seated { .. }), "{answer:?}");
                opened += 1;
            }
            hosts.push(c);
            if opened == total {
                break;
            }
        }
        hosts
    });
    let out = Command::new(env!("CARGO_BIN_EXE_grundy"))
        .args(["lobby", "--server", &url])
        .env("NO_COLOR", "1")
        .output()
        .expect("run grundy lobby");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let listed = stdout.lines().filter(|l| l.contains("  open ")).count();
    assert_eq!(listed, MAX_LISTED_ROOMS as usize, "{stdout}");
    assert!(
        stdout.contains(&format!(
            "({MAX_LISTED_ROOMS} of {total} rooms shown: the open ones first)"
        )),
        "{stdout}"
    );
}

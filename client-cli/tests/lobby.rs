//! `grundy lobby` against a server with more listed rooms than one list holds.

mod common;

use common::{grundy, open_room, TestServer};
use grundy_client::client::Client;
use grundy_protocol::wire::MAX_LISTED_ROOMS;
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
                open_room(&mut c, json!({"game": "nim", "heaps": [3, 4, 5]})).await;
                opened += 1;
            }
            hosts.push(c);
            if opened == total {
                break;
            }
        }
        hosts
    });
    let stdout = lobby(&url, &[]);
    let listed = stdout.lines().filter(|l| l.contains("  open ")).count();
    assert_eq!(listed, MAX_LISTED_ROOMS as usize, "{stdout}");
    assert!(
        stdout.contains(&format!(
            "({MAX_LISTED_ROOMS} of {total} rooms shown: the open ones first)"
        )),
        "{stdout}"
    );
}

fn lobby(url: &str, args: &[&str]) -> String {
    let out = grundy(&[&["lobby", "--server", url], args].concat());
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// Issue 17, items 7 and 10: a header, the games' own names, filters, the
// players who left marked, and JSON for scripts.
#[test]
fn the_lobby_has_a_header_names_filters_and_json() {
    let server = TestServer::start();
    let url = server.url();
    let open = |spec: serde_json::Value, name: &str| {
        server.rt.block_on(async {
            let mut c = Client::connect(&url, name).await.expect("connect");
            let (_, _, snapshot) = open_room(&mut c, spec).await;
            (c, snapshot.code)
        })
    };
    let (_nim_host, nim) = open(json!({"game": "nim", "heaps": [3, 4, 5]}), "nina");
    let (kayles_host, kayles) = open(json!({"game": "kayles", "heaps": [4, 6]}), "kay");
    // The Kayles room's host leaves: the lobby marks them away.
    server.rt.block_on(kayles_host.close());

    let all = lobby(&url, &[]);
    let header = all.lines().next().expect("a header");
    assert!(
        header.starts_with("CODE    STATE     GAME            CLOCK    PLAYERS"),
        "{all}"
    );
    assert!(
        all.lines().all(|l| l.chars().count() <= 80),
        "fits 80 columns:\n{all}"
    );
    let line = |text: &str, code: &str| {
        text.lines()
            .find(|l| l.starts_with(code))
            .unwrap_or_else(|| panic!("no {code} in {text}"))
            .to_string()
    };
    assert!(line(&all, &kayles).contains("Kayles"), "{all}");
    assert!(line(&all, &kayles).contains("kay (guest) (away)"), "{all}");
    assert!(line(&all, &nim).contains("nina (guest) vs (free)"), "{all}");

    let only = lobby(&url, &["--game", "kayles"]);
    assert!(only.contains(&kayles) && !only.contains(&nim), "{only}");
    let none = lobby(&url, &["--game", "dawson"]);
    assert!(none.contains("No room matches."), "{none}");
    let named = lobby(&url, &["--game", "Dawson's Kayles"]);
    assert!(named.contains("No room matches."), "{named}");
    // A game that does not exist is named as such, not "no room matches".
    let unknown = grundy(&["lobby", "--server", &url, "--game", "chess"]);
    assert!(!unknown.status.success(), "{unknown:?}");
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(said.contains(r#"--game "chess": no such game"#), "{said}");

    let json: serde_json::Value =
        serde_json::from_str(&lobby(&url, &["--json", "--open"])).expect("JSON");
    let codes: Vec<&str> = json
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|r| r["code"].as_str())
        .collect();
    assert_eq!(codes.len(), 2, "{json}");
    assert!(codes.contains(&nim.as_str()) && codes.contains(&kayles.as_str()));
}

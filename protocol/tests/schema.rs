//! `docs/protocol.schema.json` is generated from the wire types: this test fails
//! when the committed file differs from what the types give. To update it:
//!
//! ```sh
//! UPDATE_SCHEMA=1 cargo test -p grundy-protocol --test schema
//! ```
//!
//! It also checks real messages (taken from the example session of
//! docs/protocol.md, and built from the Rust types) against the schema, with a
//! small checker for exactly the keywords the generated schema uses.

use std::path::PathBuf;

use grundy_protocol::schema::{protocol_schema, protocol_schema_text};
use grundy_protocol::wire::{
    AccountInfo, AccountKind, ClientMsg, Clock, EndReason, ErrorCode, Event, EventBody, Limits,
    MatchRecord, MatchResult, PlayerKind, RecordedMove, RequestId, RoomState, RoomSummary, Scope,
    SeatInfo, ServerBody, ServerMsg, Snapshot, TokenInfo,
};
use grundy_protocol::Level;
use serde_json::{json, Value};

fn schema_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.schema.json")
}

#[test]
fn committed_schema_is_current() {
    let path = schema_path();
    let fresh = protocol_schema_text();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &fresh).expect("write docs/protocol.schema.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "docs/protocol.schema.json is out of date with protocol/src/wire.rs; regenerate it with\n\n    \
         UPDATE_SCHEMA=1 cargo test -p grundy-protocol --test schema\n\nand commit the result"
    );
}

// ---------------------------------------------------------------------------
// A checker for the subset of JSON Schema 2020-12 that schemars generates here.

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$defs",
    "title",
    "description",
    "default",
    "format",
    "x-protocol-version",
];
/// Keywords the checker enforces.
const ASSERTIONS: &[&str] = &[
    "$ref",
    "anyOf",
    "oneOf",
    "allOf",
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
];

fn check(root: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let map = match schema {
        Value::Bool(true) => return Ok(()),
        Value::Bool(false) => return Err(format!("{at}: nothing is allowed here")),
        Value::Object(map) => map,
        other => panic!("not a schema: {other}"),
    };
    for key in map.keys() {
        assert!(
            ANNOTATIONS.contains(&key.as_str()) || ASSERTIONS.contains(&key.as_str()),
            "the checker does not know the keyword {key:?}: teach it before trusting it"
        );
    }
    if let Some(r) = map.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("local $ref");
        check(root, &root["$defs"][name], value, at)?;
    }
    if let Some(t) = map.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            other => panic!("bad type {other}"),
        };
        let ok = types.iter().any(|t| match *t {
            "null" => value.is_null(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "string" => value.is_string(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            other => panic!("unknown type {other}"),
        });
        if !ok {
            return Err(format!("{at}: {value} is not of type {t}"));
        }
    }
    if let Some(c) = map.get("const") {
        if c != value {
            return Err(format!("{at}: {value} is not {c}"));
        }
    }
    if let Some(Value::Array(options)) = map.get("enum") {
        if !options.contains(value) {
            return Err(format!("{at}: {value} is not one of {options:?}"));
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = map.get("minimum").and_then(Value::as_f64) {
            if n < min {
                return Err(format!("{at}: {value} < {min}"));
            }
        }
        if let Some(max) = map.get("maximum").and_then(Value::as_f64) {
            if n > max {
                return Err(format!("{at}: {value} > {max}"));
            }
        }
    }
    if let Value::Object(fields) = value {
        if let Some(Value::Array(required)) = map.get("required") {
            for r in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(r) {
                    return Err(format!("{at}: field {r:?} is required"));
                }
            }
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            for (k, v) in fields {
                if let Some(s) = props.get(k) {
                    check(root, s, v, &format!("{at}.{k}"))?;
                }
            }
        }
    }
    if let Value::Array(items) = value {
        let n = items.len() as u64;
        if map
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| n < m)
        {
            return Err(format!("{at}: too few items"));
        }
        if map
            .get("maxItems")
            .and_then(Value::as_u64)
            .is_some_and(|m| n > m)
        {
            return Err(format!("{at}: too many items"));
        }
        if let Some(s) = map.get("items") {
            for (i, item) in items.iter().enumerate() {
                check(root, s, item, &format!("{at}[{i}]"))?;
            }
        }
    }
    if let Some(Value::Array(all)) = map.get("allOf") {
        for s in all {
            check(root, s, value, at)?;
        }
    }
    if let Some(Value::Array(any)) = map.get("anyOf") {
        let errors: Vec<String> = any
            .iter()
            .filter_map(|s| check(root, s, value, at).err())
            .collect();
        if errors.len() == any.len() {
            return Err(format!("{at}: matches no alternative: {errors:?}"));
        }
    }
    if let Some(Value::Array(one)) = map.get("oneOf") {
        let errors: Vec<String> = one
            .iter()
            .filter_map(|s| check(root, s, value, at).err())
            .collect();
        match one.len() - errors.len() {
            1 => {}
            0 => return Err(format!("{at}: matches no alternative: {errors:?}")),
            n => return Err(format!("{at}: matches {n} alternatives, not one")),
        }
    }
    Ok(())
}

fn validate(def: &str, value: &Value) -> Result<(), String> {
    let root = protocol_schema();
    check(
        &root,
        &json!({"$ref": format!("#/$defs/{def}")}),
        value,
        "$",
    )
}

// ---------------------------------------------------------------------------
// Samples: frames of the example session in docs/protocol.md (ids shortened).

const CLIENT_SAMPLES: &str = r#"
{"type":"hello","id":1,"version":1,"name":"alice"}
{"type":"hello","id":1,"version":1,"token":"grundy_k3b9x2_1f2e"}
{"type":"create_account","id":1,"username":"Alice","password":"correct horse battery staple","kind":"bot"}
{"type":"create_account","id":1,"username":"Alice","password":"correct horse battery staple"}
{"type":"login","id":2,"username":"alice","password":"correct horse battery staple","name":"laptop","scopes":["play","tournaments"],"expires_in_days":30}
{"type":"login","id":2,"username":"alice","password":"correct horse battery staple"}
{"type":"create_token","id":3,"name":"my bot","scopes":["play"]}
{"type":"list_tokens","id":4}
{"type":"revoke_token","id":5,"token_id":"k3b9x2"}
{"type":"revoke_token","id":5}
{"type":"change_password","id":6,"password":"correct horse battery","new_password":"a new and longer passphrase"}
{"type":"create_room","id":2,"spec":{"game":"nim","heaps":[1,2]},"clock":{"initial_ms":60000,"increment_ms":2000}}
{"type":"create_room","id":"r","random":{"family":"kayles","seed":7},"clock":{"initial_ms":60000},"listed":false,"seat":1}
{"type":"list_rooms","id":2}
{"type":"join","id":3,"room":"S8V684"}
{"type":"watch","id":2,"room":"S8V684"}
{"type":"watch","room":"S8V684","since":0}
{"type":"move","id":4,"room":"c6bf","token":"1438","move":{"heap":0,"take":1}}
{"type":"resume","id":2,"room":"c6bf","token":"1438","since":3}
{"type":"resign","id":9,"room":"c6bf","token":"1438"}
{"type":"abort","id":10,"room":"c6bf","token":"1438"}
{"type":"offer_rematch","id":31,"room":"c6bf","token":"1438"}
{"type":"accept_rematch","id":32,"room":"c6bf","token":"1438"}
{"type":"decline_rematch","id":33,"room":"c6bf","token":"1438"}
{"type":"get_match","id":3,"room":"c6bf"}
{"type":"leave","id":4,"room":"c6bf"}
{"type":"ping","id":5,"extra":"unknown fields are ignored"}
{"type":"create_tournament","id":6,"name":"Friday Nim","family":"nim","size":20,"seed":7,"format":"swiss","rounds":5,"clock":{"initial_ms":60000,"increment_ms":1000},"max_players":16}
{"type":"create_tournament","id":7,"spec":{"game":"kayles","heaps":[5,7]},"format":"round_robin","rated":false}
{"type":"list_tournaments","id":8}
{"type":"register","id":9,"tournament":"TABCDE","name":"alice"}
{"type":"register","id":9,"tournament":"TABCDE"}
{"type":"rejoin","id":10,"tournament":"9f1c","token":"77aa"}
{"type":"withdraw","id":11,"tournament":"9f1c","token":"77aa"}
{"type":"start_tournament","id":12,"tournament":"9f1c","token":"0d0d"}
{"type":"watch_tournament","id":13,"tournament":"TABCDE"}
{"type":"watch_tournament","id":13,"tournament":"9f1c","since":12}
{"type":"get_tournament","id":14,"tournament":"9f1c"}
{"type":"get_ratings","id":15,"game":"kayles","limit":10}
{"type":"get_ratings","id":15,"family":"nim"}
"#;

const BAD_CLIENT_SAMPLES: &str = r#"
{"type":"teleport","id":1}
{"id":1,"version":1}
{"type":"hello","id":1}
{"type":"hello","id":-1,"version":1}
{"type":"hello","id":1,"version":"1"}
{"type":"move","id":4,"room":"c6bf","token":"1438"}
{"type":"join","id":3,"room":"S8V684","seat":256}
{"type":"create_room","id":2,"spec":{"game":"nim","heaps":[1]},"clock":{"increment_ms":2000}}
{"type":"watch","id":2,"since":3}
{"type":"create_tournament","id":6,"family":"nim"}
{"type":"create_tournament","id":6,"family":"nim","format":"knockout"}
{"type":"create_account","id":1,"username":"Alice"}
{"type":"login","id":2,"username":"alice","password":"x","scopes":["everything"]}
{"type":"register","id":9,"name":"alice"}
{"type":"get_ratings","id":15,"game":7}
"#;

const SERVER_SAMPLES: &str = r#"
{"type":"welcome","id":1,"version":1,"server":"grundy-server 0.1.0","limits":{"max_frame_bytes":65536,"messages_per_second":50,"burst":100,"seats_per_connection":64,"open_rooms":100000,"open_rooms_per_ip":256,"hello_timeout_ms":10000,"ping_interval_ms":5000,"idle_timeout_ms":15000,"open_tournaments":1000,"tournament_players":1024,"max_message_bytes":1048576,"max_moves":1000,"max_record_bytes":262144,"max_connections":8000,"connections_per_ip":256,"login_failures_before_lockout":5,"login_lockout_max_ms":900000,"logins_per_ip_per_minute":30,"accounts_per_ip_per_hour":20,"tokens_per_account":100,"token_default_days":90,"token_max_days":365},"name":"alice","account":null,"token":null}
{"type":"welcome","id":1,"version":1,"server":"grundy-server 0.1.0","limits":{"max_frame_bytes":65536,"messages_per_second":50,"burst":100,"seats_per_connection":64,"open_rooms":100000,"open_rooms_per_ip":256,"hello_timeout_ms":10000,"ping_interval_ms":5000,"idle_timeout_ms":15000,"open_tournaments":1000,"tournament_players":1024,"max_message_bytes":1048576,"max_moves":1000,"max_record_bytes":262144,"max_connections":8000,"connections_per_ip":256,"login_failures_before_lockout":5,"login_lockout_max_ms":900000,"logins_per_ip_per_minute":30,"accounts_per_ip_per_hour":20,"tokens_per_account":100,"token_default_days":90,"token_max_days":365},"name":"Alice","account":{"username":"Alice","kind":"person","created_at_ms":1790000000000},"token":{"id":"k3b9x2","name":"laptop","scopes":["play","tournaments"],"created_at_ms":1790000000000,"expires_at_ms":null}}
{"type":"account_created","id":1,"account":{"username":"Alice","kind":"person","created_at_ms":1790000000000}}
{"type":"token","id":2,"token":"grundy_k3b9x2_1f2e","info":{"id":"k3b9x2","name":"laptop","scopes":["play","tournaments","account"],"created_at_ms":1790000000000,"expires_at_ms":1800000000000},"account":{"username":"Alice","kind":"person","created_at_ms":1790000000000}}
{"type":"tokens","id":3,"tokens":[{"id":"k3b9x2","name":"laptop","scopes":["play"],"created_at_ms":1790000000000,"expires_at_ms":null}]}
{"type":"token_revoked","id":4,"token_id":"k3b9x2"}
{"type":"seated","id":2,"room":"c6bf","seat":0,"token":"70d8","snapshot":{"room":"c6bf","code":"S8V684","spec":{"game":"nim","heaps":[1,2]},"position":{"game":"nim","heaps":[1,2]},"seats":[{"name":"alice","connected":true,"player_kind":"person"},{"name":null,"connected":false,"player_kind":null}],"moves":[],"to_move":null,"clock":{"initial_ms":60000,"increment_ms":2000},"clocks_ms":[60000,60000],"result":null,"seq":1,"hints":false,"rated":false}}
{"type":"rooms","id":2,"rooms":[{"room":"c6bf","code":"S8V684","game":"nim","name":"Nim","description":"heaps [1,2]","seats":[{"name":"alice","connected":true,"player_kind":"person"},{"name":null,"connected":false,"player_kind":null}],"state":"open","clock":{"initial_ms":60000,"increment_ms":2000},"bot":null,"ratings":[1620.5,null],"tournament":null,"hints":false,"rated":false}],"total":1}
{"type":"event","room":"c6bf","event":{"seq":2,"kind":"seated","seat":1,"name":"bob","player_kind":"guest"}}
{"type":"event","room":"c6bf","event":{"seq":3,"kind":"started"}}
{"type":"watching","id":2,"room":"c6bf","seat":null,"snapshot":{"room":"c6bf","code":"S8V684","spec":{"game":"nim","heaps":[1,2]},"position":{"game":"nim","heaps":[1,2]},"seats":[{"name":"alice","connected":true,"player_kind":"person"},{"name":"bob","connected":true,"player_kind":"guest"}],"moves":[],"to_move":0,"clock":{"initial_ms":60000,"increment_ms":2000},"clocks_ms":[60000,60000],"result":null,"seq":3,"hints":false,"rated":false},"events":[]}
{"type":"error","id":4,"code":"not_your_turn","message":"it is your opponent's turn"}
{"type":"error","id":null,"code":"rate_limited","message":"more than 50 messages per second (messages_per_second)","retry_after_ms":20,"limit":"messages_per_second"}
{"type":"event","room":"c6bf","event":{"seq":4,"kind":"presence","seat":1,"connected":false}}
{"type":"event","room":"c6bf","event":{"seq":5,"kind":"moved","seat":0,"move":{"heap":1,"take":1},"clocks_ms":[61996,60000],"position":{"game":"nim","heaps":[1,1]}}}
{"type":"ack","id":4,"room":"c6bf","seq":5}
{"type":"watching","id":2,"room":"c6bf","seat":1,"snapshot":null,"events":[{"seq":4,"kind":"presence","seat":1,"connected":false},{"seq":5,"kind":"moved","seat":0,"move":{"heap":1,"take":1},"clocks_ms":[61996,60000],"position":{"game":"nim","heaps":[1,1]}},{"seq":6,"kind":"presence","seat":1,"connected":true}]}
{"type":"event","room":"c6bf","event":{"seq":9,"kind":"ended","result":{"winner":0,"reason":"rules"}}}
{"type":"match","id":3,"record":{"room":"c6bf","spec":{"game":"nim","heaps":[1,2]},"players":["alice","bob"],"player_kinds":["person","guest"],"clock":{"initial_ms":60000,"increment_ms":2000},"moves":[{"seat":0,"move":{"heap":1,"take":1},"at_ms":8},{"seat":1,"move":{"heap":0,"take":1},"at_ms":16}],"result":{"winner":0,"reason":"rules"}}}
{"type":"ack","id":4,"room":"c6bf","seq":null}
{"type":"pong","id":5}
{"type":"shutdown","message":"the server is shutting down; reconnect and resume later"}
{"type":"tournament_created","id":6,"tournament":"9f1c","code":"TABCDE","owner_token":"0d0d","state":{"tournament":"9f1c","code":"TABCDE","settings":{"name":"Friday Nim","spec":null,"family":"nim","size":null,"seed":7,"format":"swiss","rounds":1,"clock":{"initial_ms":60000,"increment_ms":1000},"max_players":16,"rated":true},"status":"finished","round":1,"rounds":1,"players":[{"player":0,"name":"alice","player_kind":"person","withdrawn":false},{"player":1,"name":"bob","player_kind":"bot","withdrawn":false},{"player":2,"name":"carol","player_kind":"person","withdrawn":true}],"pairings":[{"round":1,"players":[0,1],"spec":{"game":"nim","heaps":[3,5]}}],"games":[{"round":1,"room":"c6bf","players":[0,1],"result":{"winner":0,"reason":"rules"},"winner":0},{"round":1,"room":"d7c0","players":[1,0],"result":{"winner":1,"reason":"resign"},"winner":0}],"byes":[{"round":1,"player":2}],"standings":[{"rank":1,"player":0,"name":"alice","player_kind":"person","score":2,"games":2,"wins":2,"losses":0,"byes":0,"buchholz":0,"sonneborn_berger":0,"rating":1662.3,"withdrawn":false}],"ended_early":null,"seq":9}}
{"type":"registered","id":9,"tournament":"9f1c","player":0,"token":"77aa","state":{"tournament":"9f1c","code":"TABCDE","settings":{"name":"Friday Nim","spec":null,"family":"nim","size":null,"seed":7,"format":"swiss","rounds":1,"clock":{"initial_ms":60000,"increment_ms":1000},"max_players":16,"rated":true},"status":"finished","round":1,"rounds":1,"players":[{"player":0,"name":"alice","player_kind":"person","withdrawn":false},{"player":1,"name":"bob","player_kind":"bot","withdrawn":false},{"player":2,"name":"carol","player_kind":"person","withdrawn":true}],"pairings":[{"round":1,"players":[0,1],"spec":{"game":"nim","heaps":[3,5]}}],"games":[{"round":1,"room":"c6bf","players":[0,1],"result":{"winner":0,"reason":"rules"},"winner":0},{"round":1,"room":"d7c0","players":[1,0],"result":{"winner":1,"reason":"resign"},"winner":0}],"byes":[{"round":1,"player":2}],"standings":[{"rank":1,"player":0,"name":"alice","player_kind":"person","score":2,"games":2,"wins":2,"losses":0,"byes":0,"buchholz":0,"sonneborn_berger":0,"rating":1662.3,"withdrawn":false}],"ended_early":null,"seq":9}}
{"type":"tournament_watching","id":13,"tournament":"9f1c","state":null,"events":[{"seq":3,"kind":"withdrawn","player":2}]}
{"type":"tournament","id":14,"state":{"tournament":"9f1c","code":"TABCDE","settings":{"name":"Friday Nim","spec":null,"family":"nim","size":null,"seed":7,"format":"swiss","rounds":1,"clock":{"initial_ms":60000,"increment_ms":1000},"max_players":16,"rated":true},"status":"finished","round":1,"rounds":1,"players":[{"player":0,"name":"alice","player_kind":"person","withdrawn":false},{"player":1,"name":"bob","player_kind":"bot","withdrawn":false},{"player":2,"name":"carol","player_kind":"person","withdrawn":true}],"pairings":[{"round":1,"players":[0,1],"spec":{"game":"nim","heaps":[3,5]}}],"games":[{"round":1,"room":"c6bf","players":[0,1],"result":{"winner":0,"reason":"rules"},"winner":0},{"round":1,"room":"d7c0","players":[1,0],"result":{"winner":1,"reason":"resign"},"winner":0}],"byes":[{"round":1,"player":2}],"standings":[{"rank":1,"player":0,"name":"alice","player_kind":"person","score":2,"games":2,"wins":2,"losses":0,"byes":0,"buchholz":0,"sonneborn_berger":0,"rating":1662.3,"withdrawn":false}],"ended_early":null,"seq":9}}
{"type":"tournaments","id":8,"tournaments":[{"tournament":"9f1c","code":"TABCDE","name":null,"game":"kayles","game_name":"Kayles","format":"round_robin","status":"registering","players":3,"max_players":1024,"round":0,"rounds":0}]}
{"type":"tournament_event","tournament":"9f1c","event":{"seq":1,"kind":"registered","player":0,"name":"alice","player_kind":"person"}}
{"type":"tournament_event","tournament":"9f1c","event":{"seq":4,"kind":"started","rounds":1}}
{"type":"tournament_event","tournament":"9f1c","event":{"seq":5,"kind":"round_started","round":1,"pairings":[{"round":1,"players":[0,1],"spec":{"game":"nim","heaps":[3,5]}}],"bye":null}}
{"type":"tournament_event","tournament":"9f1c","event":{"seq":6,"kind":"game_started","round":1,"room":"c6bf","players":[0,1]}}
{"type":"tournament_event","tournament":"9f1c","event":{"seq":7,"kind":"game_ended","round":1,"room":null,"players":[1,2],"result":{"winner":0,"reason":"forfeit"},"winner":1}}
{"type":"tournament_event","tournament":"9f1c","event":{"seq":8,"kind":"round_ended","round":1,"standings":[{"rank":1,"player":0,"name":"alice","player_kind":"person","score":2,"games":2,"wins":2,"losses":0,"byes":0,"buchholz":0,"sonneborn_berger":0,"rating":1662.3,"withdrawn":false}]}}
{"type":"tournament_event","tournament":"9f1c","event":{"seq":9,"kind":"finished","standings":[{"rank":1,"player":0,"name":"alice","player_kind":"person","score":2,"games":2,"wins":2,"losses":0,"byes":0,"buchholz":0,"sonneborn_berger":0,"rating":1662.3,"withdrawn":false}],"ended_early":"fewer than two players remain after round 1"}}
{"type":"your_game","tournament":"9f1c","round":1,"room":"c6bf","seat":0,"token":"70d8","opponent":"bob","opponent_kind":"bot"}
{"type":"rematch_offered","room":"c6bf","seat":0,"name":"alice"}
{"type":"rematch_withdrawn","room":"c6bf","seat":0,"reason":"declined"}
{"type":"rematch_ready","room":"c6bf","new_room":"d7a0","code":"QX7K","seat":1,"token":"70d8","opponent":"bob"}
{"type":"ratings","id":15,"game":"kayles","name":"Kayles","family":"kayles","ratings":[{"player":"alice","player_kind":"person","unclaimed":false,"rating":1662.3,"deviation":290.3,"volatility":0.06,"games":1},{"player":"zed","player_kind":null,"unclaimed":true,"rating":1500.0,"deviation":350.0,"volatility":0.06,"games":2}]}
{"type":"error","id":9,"code":"already_registered","message":"a player named \"alice\" is registered already"}
{"type":"error","id":10,"code":"busy","message":"this room has as many commands queued as it takes; retry shortly","retry_after_ms":100,"limit":"room_queue"}
{"type":"error","id":11,"code":"too_large","message":"the answer would be 2000000 bytes, more than max_message_bytes (1048576)","limit":"max_message_bytes"}
{"type":"event","room":"c6bf","event":{"seq":1004,"kind":"ended","result":{"winner":1,"reason":"move_limit"}}}
"#;

const BAD_SERVER_SAMPLES: &str = r#"
{"type":"ack","id":4,"room":"c6bf"}
{"type":"event","room":"c6bf","event":{"seq":9,"kind":"teleported"}}
{"type":"event","room":"c6bf","event":{"kind":"started"}}
{"type":"error","id":null,"code":"oops","message":"?"}
{"type":"event","room":"c6bf","event":{"seq":9,"kind":"ended","result":{"winner":0,"reason":"boredom"}}}
{"type":"match","id":3,"record":{"room":"c6bf","spec":{},"players":["alice"],"clock":null,"moves":[],"result":null}}
"#;

fn lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
}

#[test]
fn client_samples_validate_and_agree_with_the_server() {
    for m in lines(CLIENT_SAMPLES) {
        validate("ClientMsg", &m).unwrap_or_else(|e| panic!("{m}: {e}"));
        serde_json::from_value::<ClientMsg>(m.clone()).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    for m in lines(BAD_CLIENT_SAMPLES) {
        assert!(validate("ClientMsg", &m).is_err(), "schema accepts {m}");
        assert!(
            serde_json::from_value::<ClientMsg>(m.clone()).is_err(),
            "server accepts {m}"
        );
    }
}

#[test]
fn server_samples_validate() {
    for m in lines(SERVER_SAMPLES) {
        validate("ServerMsg", &m).unwrap_or_else(|e| panic!("{m}: {e}"));
        // And they are what the Rust types write.
        let typed: ServerMsg = serde_json::from_value(m.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_value(&typed).expect("serialise"), m);
    }
    for m in lines(BAD_SERVER_SAMPLES) {
        assert!(validate("ServerMsg", &m).is_err(), "schema accepts {m}");
    }
}

#[test]
fn samples_cover_every_message_type() {
    let root = protocol_schema();
    for (def, samples) in [("ClientMsg", CLIENT_SAMPLES), ("ServerMsg", SERVER_SAMPLES)] {
        let types: Vec<Value> = root["$defs"][def]["oneOf"]
            .as_array()
            .expect("a tagged enum")
            .iter()
            .map(|v| v["properties"]["type"]["const"].clone())
            .collect();
        assert!(!types.is_empty());
        for t in types {
            assert!(
                lines(samples).any(|m| m["type"] == t),
                "no {def} sample of type {t}"
            );
        }
    }
    let client_types: Vec<Value> = ClientMsg::TYPES.iter().map(|t| json!(t)).collect();
    for m in lines(CLIENT_SAMPLES) {
        assert!(client_types.contains(&m["type"]));
    }
}

/// Every kind of server message, built from the Rust types as the server does.
#[test]
fn what_the_server_writes_validates() {
    let clock = Some(Clock {
        initial_ms: 1000,
        increment_ms: 0,
    });
    let seat = SeatInfo {
        name: Some("ann".into()),
        connected: true,
        player_kind: Some(PlayerKind::Bot),
    };
    let result = Some(MatchResult {
        winner: None,
        reason: EndReason::NoShow,
    });
    let snapshot = Snapshot {
        room: "r".into(),
        code: "ABCDEF".into(),
        spec: json!({"game": "nim", "heaps": [1]}),
        position: json!({"game": "nim", "heaps": [1]}),
        seats: [seat.clone(), seat.clone()],
        moves: vec![],
        to_move: Some(1),
        clock,
        clocks_ms: [1, 2],
        result,
        seq: 7,
        hints: true,
        rated: false,
        bot: Some(Level::Perfect),
    };
    let bodies = [
        EventBody::Seated {
            seat: 1,
            name: None,
            player_kind: None,
        },
        EventBody::Started,
        EventBody::Moved {
            seat: 0,
            mv: json!({"heap": 0, "take": 1}),
            clocks_ms: [0, 0],
            position: Value::Null,
        },
        EventBody::Presence {
            seat: 0,
            connected: true,
        },
        EventBody::Ended {
            result: MatchResult {
                winner: Some(1),
                reason: EndReason::Flag,
            },
        },
    ];
    let events: Vec<Event> = bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| Event {
            seq: i as u64 + 1,
            body,
        })
        .collect();
    let id = Some(RequestId::Text("x".into()));
    let account = AccountInfo {
        username: "Ann".into(),
        kind: AccountKind::Bot,
        created_at_ms: 1,
    };
    let token = TokenInfo {
        id: "x".into(),
        name: "laptop".into(),
        scopes: vec![Scope::Play, Scope::Account],
        created_at_ms: 2,
        expires_at_ms: Some(3),
    };
    let limits = || Limits {
        max_frame_bytes: 1,
        messages_per_second: 2,
        burst: 3,
        seats_per_connection: 4,
        open_rooms: 5,
        open_rooms_per_ip: 5,
        hello_timeout_ms: 6,
        ping_interval_ms: 7,
        idle_timeout_ms: 8,
        open_tournaments: 9,
        tournament_players: 10,
        max_message_bytes: 11,
        max_moves: 12,
        max_record_bytes: 13,
        max_connections: 14,
        connections_per_ip: 15,
        login_failures_before_lockout: 16,
        login_lockout_max_ms: 17,
        logins_per_ip_per_minute: 18,
        accounts_per_ip_per_hour: 19,
        tokens_per_account: 20,
        token_default_days: 21,
        token_max_days: 22,
    };
    let mut messages = vec![
        ServerMsg {
            id: Some(RequestId::Number(1)),
            body: ServerBody::Welcome {
                version: 1,
                server: "s".into(),
                limits: limits(),
                name: "guest-4f2a".into(),
                account: None,
                token: None,
            },
        },
        ServerMsg {
            id: None,
            body: ServerBody::Welcome {
                version: 1,
                server: "s".into(),
                limits: limits(),
                name: "ann".into(),
                account: Some(account.clone()),
                token: Some(token.clone()),
            },
        },
        ServerMsg {
            id: id.clone(),
            body: ServerBody::AccountCreated {
                account: account.clone(),
            },
        },
        ServerMsg {
            id: id.clone(),
            body: ServerBody::Token {
                token: "grundy_x_y".into(),
                info: token.clone(),
                account,
            },
        },
        ServerMsg {
            id: id.clone(),
            body: ServerBody::Tokens {
                tokens: vec![token],
            },
        },
        ServerMsg {
            id: id.clone(),
            body: ServerBody::TokenRevoked {
                token_id: "x".into(),
            },
        },
        ServerMsg {
            id: id.clone(),
            body: ServerBody::Seated {
                room: "r".into(),
                seat: 1,
                token: "t".into(),
                snapshot: snapshot.clone(),
            },
        },
        ServerMsg {
            id: None,
            body: ServerBody::Watching {
                room: "r".into(),
                seat: Some(0),
                token: Some("t".into()),
                snapshot: Some(snapshot),
                events: events.clone(),
            },
        },
        ServerMsg {
            id: id.clone(),
            body: ServerBody::Rooms {
                total: 1,
                rooms: vec![RoomSummary {
                    room: "r".into(),
                    code: "ABCDEF".into(),
                    game: "heaps".into(),
                    name: "Kayles".into(),
                    description: "heaps [3,4,5]".into(),
                    seats: [seat.clone(), seat],
                    state: RoomState::Playing,
                    clock: None,
                    bot: Some(Level::Perfect),
                    hints: false,
                    rated: true,
                    ratings: [Some(1500.0), None],
                    tournament: Some("t".into()),
                }],
            },
        },
        ServerMsg {
            id: id.clone(),
            body: ServerBody::Ack {
                room: None,
                seq: Some(3),
            },
        },
        ServerMsg {
            id: id.clone(),
            body: ServerBody::Match {
                record: MatchRecord {
                    room: "r".into(),
                    spec: json!({}),
                    players: [None, Some("bo".into())],
                    player_kinds: [None, Some(PlayerKind::Guest)],
                    clock,
                    moves: vec![RecordedMove {
                        seat: 0,
                        mv: json!({}),
                        at_ms: 5,
                    }],
                    result: None,
                },
            },
        },
        ServerMsg {
            id: None,
            body: ServerBody::Error {
                code: ErrorCode::RateLimited,
                message: "m".into(),
                retry_after_ms: Some(9),
                limit: Some("messages_per_second".into()),
            },
        },
        ServerMsg {
            id,
            body: ServerBody::Pong,
        },
        ServerMsg::notice(ServerBody::Shutdown {
            message: "bye".into(),
        }),
    ];
    messages.extend(events.into_iter().map(|event| {
        ServerMsg::notice(ServerBody::Event {
            room: "r".into(),
            event,
        })
    }));
    for code in [
        ErrorCode::BadRequest,
        ErrorCode::UnknownType,
        ErrorCode::BadVersion,
        ErrorCode::BadSpec,
        ErrorCode::IllegalMove,
        ErrorCode::NotYourTurn,
        ErrorCode::Unauthorized,
        ErrorCode::UnknownRoom,
        ErrorCode::RoomFull,
        ErrorCode::MatchOver,
        ErrorCode::TooLate,
        ErrorCode::RateLimited,
        ErrorCode::LimitReached,
        ErrorCode::ShuttingDown,
        ErrorCode::Internal,
        ErrorCode::UnknownTournament,
        ErrorCode::AlreadyRegistered,
        ErrorCode::RegistrationClosed,
        ErrorCode::TournamentFull,
        ErrorCode::TournamentOver,
        ErrorCode::AccountRequired,
        ErrorCode::Forbidden,
        ErrorCode::NameTaken,
    ] {
        messages.push(ServerMsg::error(None, code, "m"));
    }
    for m in messages {
        let v = serde_json::to_value(&m).expect("serialise");
        validate("ServerMsg", &v).unwrap_or_else(|e| panic!("{v}: {e}"));
        // The root accepts any message too.
        let root = protocol_schema();
        check(&root, &root, &v, "$").unwrap_or_else(|e| panic!("{v}: {e}"));
    }
}

/// What people read of a code or an end (an error line, a log) is the
/// protocol's own name for it, as docs/protocol.md spells it.
#[test]
fn codes_and_reasons_display_as_their_wire_names() {
    assert_eq!(ErrorCode::BadSpec.to_string(), "bad_spec");
    assert_eq!(ErrorCode::NotYourTurn.to_string(), "not_your_turn");
    assert_eq!(ErrorCode::TooLarge.to_string(), "too_large");
    assert_eq!(EndReason::Rules.to_string(), "rules");
    assert_eq!(EndReason::NoShow.to_string(), "no_show");
    assert_eq!(EndReason::MoveLimit.to_string(), "move_limit");
}

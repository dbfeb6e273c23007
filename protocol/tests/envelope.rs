//! The envelope of a message (protocol/src/wire/envelope.rs): the id is one
//! field of the Rust types and one key of the JSON object, written right
//! after `type`, read wherever it stands, and refused in a request id's own
//! words.

use grundy_protocol::wire::{
    ClientBody, ClientMsg, ErrorCode, NewToken, Play, RequestId, ServerBody, ServerMsg,
};
use serde_json::json;

fn client(text: &str) -> Result<ClientMsg, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

#[test]
fn a_message_is_written_type_then_id_then_its_fields() {
    let id = Some(RequestId::Number(7));
    let play = ClientMsg {
        id: id.clone(),
        body: ClientBody::Move(Play {
            room: "r".into(),
            token: "t".into(),
            mv: json!({"heap": 0, "take": 1}),
        }),
    };
    assert_eq!(
        serde_json::to_string(&play).unwrap(),
        r#"{"type":"move","id":7,"room":"r","token":"t","move":{"heap":0,"take":1}}"#
    );
    // A body with flattened fields, and one with none at all.
    let login = ClientMsg {
        id: Some(RequestId::Text("x".into())),
        body: ClientBody::Login {
            username: "a".into(),
            password: "p".into(),
            token: NewToken {
                name: Some("laptop".into()),
                ..NewToken::default()
            },
        },
    };
    assert_eq!(
        serde_json::to_string(&login).unwrap(),
        r#"{"type":"login","id":"x","username":"a","password":"p","name":"laptop","scopes":null,"expires_in_days":null}"#
    );
    let ping = ClientMsg {
        id: None,
        body: ClientBody::Ping,
    };
    assert_eq!(
        serde_json::to_string(&ping).unwrap(),
        r#"{"type":"ping","id":null}"#
    );
    let ack = ServerMsg::answer(
        id,
        ServerBody::Ack {
            room: Some("r".into()),
            seq: Some(3),
        },
    );
    assert_eq!(
        serde_json::to_string(&ack).unwrap(),
        r#"{"type":"ack","id":7,"room":"r","seq":3}"#
    );
}

#[test]
fn a_notice_is_written_without_an_id_and_ignores_one_it_is_sent() {
    let shutdown = ServerMsg {
        id: Some(RequestId::Number(1)),
        body: ServerBody::Shutdown {
            message: "bye".into(),
        },
    };
    assert_eq!(
        serde_json::to_string(&shutdown).unwrap(),
        r#"{"type":"shutdown","message":"bye"}"#
    );
    for text in [
        r#"{"type":"shutdown","id":5,"message":"bye"}"#,
        r#"{"type":"shutdown","id":true,"message":"bye"}"#,
    ] {
        let read: ServerMsg = serde_json::from_str(text).expect(text);
        assert_eq!(read.id, None, "{text}");
    }
}

#[test]
fn an_id_is_read_wherever_it_stands_and_however_its_key_is_written() {
    for text in [
        r#"{"type":"ping","id":3}"#,
        r#"{"id":3,"type":"ping"}"#,
        r#"{"type":"join","room":"r","id":3}"#,
        r#"{"type":"ping","\u0069d":3}"#,
    ] {
        assert_eq!(
            client(text).unwrap().id,
            Some(RequestId::Number(3)),
            "{text}"
        );
    }
    assert_eq!(client(r#"{"type":"ping","id":null}"#).unwrap().id, None);
    assert_eq!(client(r#"{"type":"ping"}"#).unwrap().id, None);
    let answer: ServerMsg =
        serde_json::from_str(r#"{"type":"error","code":"busy","message":"m","id":"q"}"#).unwrap();
    assert_eq!(answer.id, Some(RequestId::Text("q".into())));
    assert!(matches!(
        answer.body,
        ServerBody::Error {
            code: ErrorCode::Busy,
            ..
        }
    ));
}

#[test]
fn a_bad_id_is_refused_in_a_request_ids_own_words_before_the_body() {
    for bad in [
        "true",
        "-1",
        "1.5",
        "[1]",
        r#"{"a":1}"#,
        "18446744073709551616",
    ] {
        let own = serde_json::from_str::<RequestId>(bad)
            .unwrap_err()
            .to_string();
        let own = own.split(" at line ").next().unwrap();
        // Before a field the body lacks, as serde's own read of a field did.
        let text = format!(r#"{{"type":"join","id":{bad}}}"#);
        assert_eq!(client(&text).unwrap_err(), own, "{text}");
    }
    assert_eq!(
        client(r#"{"type":"ping","id":1,"id":2}"#).unwrap_err(),
        "duplicate field `id`"
    );
}

#[test]
fn what_is_not_a_message_is_refused_as_before() {
    assert_eq!(
        client("5").unwrap_err(),
        "invalid type: integer `5`, expected internally tagged enum ClientMsg at line 1 column 1"
    );
    assert!(client(r#"{"id":1}"#)
        .unwrap_err()
        .starts_with("missing field `type`"));
    assert!(client(r#"{"type":"nope","id":true}"#)
        .unwrap_err()
        .starts_with("unknown variant `nope`"));
}

/// An error that quotes a long request sends back only the start of it.
#[test]
fn an_error_message_on_the_wire_is_cut_short() {
    use grundy_protocol::wire::MAX_ERROR_MESSAGE_CHARS;
    let echoed = "x".repeat(60_000);
    let msg = ServerMsg::error(
        None,
        ErrorCode::BadRequest,
        format!("unknown game {echoed:?}"),
    );
    let text = serde_json::to_string(&msg).expect("prints");
    let back: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let message = back["message"].as_str().expect("message");
    assert_eq!(message.chars().count(), MAX_ERROR_MESSAGE_CHARS);
    assert!(message.starts_with("unknown game \"xxx"), "{message}");
    assert!(message.ends_with('…'), "{message}");
    assert!(text.len() < 1_000, "{} bytes", text.len());
    // A message within the bound is sent whole.
    let short = ServerMsg::error(None, ErrorCode::BadRequest, "no room \"abc\"");
    let text = serde_json::to_string(&short).expect("prints");
    assert!(text.contains(r#""message":"no room \"abc\"""#), "{text}");
}

//! `ClientMsg::from_text` (a quick read of `move` messages) answers exactly as
//! the general read does: the same message, or an error.

use grundy_protocol::wire::ClientMsg;

#[test]
fn the_quick_read_of_a_move_agrees_with_the_general_one() {
    let texts = [
        r#"{"type":"move","id":7,"room":"r","token":"t","move":{"heap":0,"take":1}}"#,
        r#"{"type":"move","room":"r","token":"t","move":{"heap":0,"take":1}}"#,
        r#"{"type":"move","id":"abc","room":"r","move":[1,2]}"#,
        r#"{"type":"move","id":null,"room":"r\u00e9","token":"t\"q","move":3}"#,
        r#"{"type":"move","room":"r","token":"t","move":{"heap":0},"extra":[1,{"a":2}]}"#,
        r#"{"type":"move","id":1.5,"room":"r","token":"t","move":1}"#,
        r#"{"type":"move","id":-1,"room":"r","token":"t","move":1}"#,
        r#"{"type":"move","id":18446744073709551616,"room":"r","move":1}"#,
        r#"{"type":"move","room":"r","token":"t"}"#,
        r#"{"type":"move","token":"t","move":1}"#,
        r#"{"type":"move","room":5,"token":"t","move":1}"#,
        r#"{"type":"move","room":"r","token":null,"move":1}"#,
        r#"{"type":"move","room":"r","room":"s","move":1}"#,
        r#"{"type":"move","room":"r","move":1,"type":"resign"}"#,
        r#"{"type":"move","room":"r","move":1,"type":"move"}"#,
        r#"{"type":"move","room":"r","move":1e400}"#,
        r#"{"type":"move","room":"r","move":123456789012345678901234567890}"#,
        r#"{"type":"move","room":"r","move":-0.0}"#,
        r#"{"type":"move","room":"r","move":null}"#,
        r#"{"type":"move","room":"r","move":1} trailing"#,
        r#"{"type":"move","room":"r","move":1}  "#,
        r#"{"type":"move","room":"r","move":{"a":1,"a":2}}"#,
        r#"{"type":"move", "room":"r","move":1}"#,
        r#"{"type":"resign","room":"r","token":"t"}"#,
    ];
    for text in texts {
        let general = serde_json::from_str::<ClientMsg>(text);
        let quick = ClientMsg::from_text(text);
        match (&general, &quick) {
            (Ok(g), Ok(q)) => assert_eq!(g, q, "{text}"),
            (Err(g), Err(q)) => assert_eq!(g.to_string(), q.to_string(), "{text}"),
            _ => panic!("{text}: general {general:?}, quick {quick:?}"),
        }
    }
}

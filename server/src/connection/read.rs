//! The long way of reading a client message: what to answer a frame that did
//! not read as a [`ClientMsg`] in one typed pass (the common case, which
//! `on_text` handles itself).
//!
//! Serde reads a `type`-tagged enum through a buffer of its own, so its error
//! says what is wrong ("invalid type: integer `5`, expected a string") but not
//! where. The field to name is found with probes: `{"type": kind, field: value}`,
//! one field of the message at a time. Serde checks each field's value as it
//! meets it and the missing fields only at the end, so the probe of the field at
//! fault fails with the very error the whole message failed with.
//!
//! Two kinds of field are probed otherwise. The token settings of `login` and
//! `create_token` (`name`, `scopes`, `expires_in_days`) are flattened into the
//! message and read after the rest, so each is probed alone as a `NewToken`.
//! And the member at fault inside a `clock` or `random` object is named too
//! (`clock.initial_ms`): that object alone is read once more with
//! `serde_path_to_error`, if it is small, as a real one is.
//!
//! The cost stays near that of reading a good message, however many fields the
//! message has: the typed read's own error is kept; the text is read once more
//! without building anything, to find the `type`, the `id` and where the known
//! fields' values are; each known field is in one probe at most, the smallest
//! first, and the probes stop at the field found.

use std::fmt;

use grundy_protocol::wire::{ClientMsg, Clock, ErrorCode, NewToken, RandomStart, RequestId};
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// Every field a client message may carry besides `type` (a test keeps it
/// equal to the fields of the protocol's schema). Only these are probed, so
/// unknown fields, which serde ignores, cost no probe.
const FIELDS: &[&str] = &[
    "id",
    "version",
    "name",
    "spec",
    "random",
    "clock",
    "listed",
    "seat",
    "bot",
    "hints",
    "room",
    "since",
    "token",
    "move",
    "tournament",
    "family",
    "game",
    "size",
    "seed",
    "format",
    "rounds",
    "max_players",
    "rated",
    "limit",
    "offset",
    "round",
    "username",
    "password",
    "new_password",
    "kind",
    "scopes",
    "expires_in_days",
    "token_id",
];

/// The fields of a token's settings (`NewToken`), flattened into `login`
/// and `create_token`.
const NEW_TOKEN: [&str; 3] = ["name", "scopes", "expires_in_days"];

/// How serde starts the error for a required field left out: no one field is
/// at fault.
const MISSING: &str = "missing field";

/// A frame that did not read as a [`ClientMsg`], outlined.
pub(super) struct Unread<'a> {
    /// The request id, when it reads as one: read before the rate check, so
    /// that even a `rate_limited` refusal echoes it.
    pub id: Option<RequestId>,
    /// The text's outline, or why it is not JSON.
    outline: Result<Outline<'a>, String>,
    /// Why the typed read refused the frame, without a position if it had
    /// one: a probe has none, or another, to compare.
    refused: String,
}

/// Why a message is refused.
#[derive(Debug, PartialEq)]
pub(super) struct Malformed {
    pub code: ErrorCode,
    pub message: String,
}

impl Malformed {
    fn bad(message: String) -> Malformed {
        Malformed {
            code: ErrorCode::BadRequest,
            message,
        }
    }
}

impl<'a> Unread<'a> {
    /// `text`, which `serde_json::from_str::<ClientMsg>` refused with `refused`.
    pub(super) fn new(text: &'a str, refused: &serde_json::Error) -> Unread<'a> {
        // The typed read buffers the whole text before it reads a field, so
        // an error of the reader's own (syntax, end of text, nesting too deep,
        // a number out of range) is the text's, as a JSON value would meet it.
        let outline = match refused.classify() {
            serde_json::error::Category::Data => {
                serde_json::from_str::<Outline>(text).map_err(|skipping| {
                    // Said as a JSON value says it: skipping values meets the
                    // same fault but may word it otherwise. Rare: the typed
                    // read met a fault of its own first.
                    let value = serde_json::from_str::<serde_json::Value>(text);
                    value.err().unwrap_or(skipping).to_string()
                })
            }
            _ => Err(refused.to_string()),
        };
        let id = outline.as_ref().ok().and_then(Outline::id);
        Unread {
            id,
            outline,
            refused: without_position(refused),
        }
    }

    /// Why the message is refused, the first of: not JSON, no `type` string,
    /// an unknown type, a field missing or of the wrong type (named). Or, if
    /// a known key was given twice (the typed read refuses that), the message
    /// read with the last of each, as the server has always taken it.
    pub(super) fn diagnose(self) -> Result<ClientMsg, Malformed> {
        let no_type = || Malformed::bad("a message needs a \"type\" string".to_string());
        let outline = match self.outline {
            Err(e) => return Err(Malformed::bad(format!("not valid JSON: {e}"))),
            Ok(outline) => outline,
        };
        let Some(kind) = outline.kind() else {
            return Err(no_type());
        };
        let Some(&kind) = ClientMsg::TYPES.iter().find(|&&known| known == kind) else {
            return Err(Malformed {
                code: ErrorCode::UnknownType,
                message: format!(
                    "unknown message type {kind:?} (known: {})",
                    ClientMsg::TYPES.join(", ")
                ),
            });
        };
        let refused = match outline.repeated {
            false => self.refused,
            // One more typed read, of the message without its repeats.
            true => match serde_json::from_str::<ClientMsg>(&outline.text(kind, None)) {
                Ok(msg) => return Ok(msg),
                Err(e) => without_position(&e),
            },
        };
        Err(Malformed::bad(match outline.culprit(kind, &refused) {
            Some(at) => {
                let (field, refused) = within(at, outline.fields[at], refused);
                format!("bad {kind} message: field \"{field}\": {refused}")
            }
            None => format!("bad {kind} message: {refused}"),
        }))
    }
}

/// A JSON text read without building anything: an object's `type` and known
/// fields as the text of their values, the last of each if given twice. Any
/// other JSON value has neither.
struct Outline<'a> {
    kind: Option<&'a RawValue>,
    /// By the index of their names in [`FIELDS`].
    fields: [Option<&'a RawValue>; FIELDS.len()],
    /// `type` or a known field was given more than once.
    repeated: bool,
}

impl Outline<'_> {
    const EMPTY: Self = Outline {
        kind: None,
        fields: [None; FIELDS.len()],
        repeated: false,
    };

    fn kind(&self) -> Option<String> {
        serde_json::from_str(self.kind?.get()).ok()
    }

    fn id(&self) -> Option<RequestId> {
        let at = FIELDS.iter().position(|&f| f == "id")?;
        serde_json::from_str(self.fields[at]?.get()).ok()
    }

    /// The text of a `kind` message with the known fields, or only the one
    /// at index `only`.
    fn text(&self, kind: &str, only: Option<usize>) -> String {
        let mut text = format!("{{\"type\":\"{kind}\"");
        for (at, raw) in self.fields.iter().enumerate() {
            if let (Some(raw), true) = (raw, only.unwrap_or(at) == at) {
                text.push_str(",\"");
                text.push_str(FIELDS[at]);
                text.push_str("\":");
                text.push_str(raw.get());
            }
        }
        text.push('}');
        text
    }

    /// The field whose value alone makes a `kind` message fail with
    /// `refused`. When `refused` is about a missing field, only a `clock` or
    /// `random` object that lacks a member is at fault (a field missing from
    /// the message is no one field's fault). None when no field fails that
    /// way.
    fn culprit(&self, kind: &str, refused: &str) -> Option<usize> {
        if refused.starts_with(MISSING) {
            // No field's fault, unless a member of an object is missing.
            return (self.fields.iter().enumerate()).find_map(|(at, raw)| {
                let (_, why) = member_at_fault(FIELDS[at], (*raw)?)?;
                (why == refused).then_some(at)
            });
        }
        // The shortest first: the field at fault is most often a scalar,
        // found before a large spec or move is read again.
        let mut present: Vec<(usize, usize)> = (self.fields.iter().enumerate())
            .filter_map(|(at, raw)| raw.map(|raw| (raw.get().len(), at)))
            .collect();
        present.sort_unstable();
        let fails_alone = |at: usize| match kind {
            // Their token fields are read after the rest (flattened): alone
            // in the message they would meet a missing `username` first.
            "login" | "create_token" if NEW_TOKEN.contains(&FIELDS[at]) => {
                let text = format!("{{\"{}\":{}}}", FIELDS[at], self.fields[at]?.get());
                serde_json::from_str::<NewToken>(&text).err()
            }
            _ => serde_json::from_str::<ClientMsg>(&self.text(kind, Some(at))).err(),
        };
        let (_, at) = present.into_iter().find(
            |&(_, at)| matches!(fails_alone(at), Some(e) if without_position(&e) == refused),
        )?;
        Some(at)
    }
}

/// The field at index `at` of [`FIELDS`] and why it is refused, named down
/// to the member at fault when the field is an object of a known shape (a
/// `clock`'s `initial_ms`: `clock.initial_ms`).
fn within(at: usize, raw: Option<&RawValue>, refused: String) -> (String, String) {
    let field = FIELDS[at];
    match raw.and_then(|raw| member_at_fault(field, raw)) {
        Some((inner, why)) if inner.starts_with('[') => (format!("{field}{inner}"), why),
        Some((inner, why)) if inner != "." => (format!("{field}.{inner}"), why),
        _ => (field.to_string(), refused),
    }
}

/// The largest `clock` or `random` value read again for the member at fault:
/// a real one is under 100 bytes, and a padded one costs no second read.
const MEMBER_PROBE_BYTES: usize = 512;

/// Where `raw`, the value of `field`, fails to read as that field's object
/// (`.` for the object itself) and why; None if it reads, or is not one of
/// those objects, or is too large to read again.
fn member_at_fault(field: &str, raw: &RawValue) -> Option<(String, String)> {
    fn path<T: serde::de::DeserializeOwned>(raw: &RawValue) -> Option<(String, String)> {
        let mut reader = serde_json::Deserializer::from_str(raw.get());
        let error = serde_path_to_error::deserialize::<_, T>(&mut reader).err()?;
        Some((error.path().to_string(), without_position(error.inner())))
    }
    if raw.get().len() > MEMBER_PROBE_BYTES {
        return None;
    }
    match field {
        "clock" => path::<Clock>(raw),
        "random" => path::<RandomStart>(raw),
        _ => None,
    }
}

impl<'de> Deserialize<'de> for Outline<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OutlineVisitor)
    }
}

struct OutlineVisitor;

impl<'de> Visitor<'de> for OutlineVisitor {
    type Value = Outline<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Outline<'de>, A::Error> {
        let mut outline = Outline::EMPTY;
        while let Some(key) = map.next_key::<Key>()? {
            let slot = match key {
                Key::Type => &mut outline.kind,
                Key::Field(at) => &mut outline.fields[at],
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            outline.repeated |= slot.replace(map.next_value()?).is_some();
        }
        Ok(outline)
    }

    // Anything else is valid JSON without a `type`; a sequence is read to
    // its end, so that its syntax is checked too.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Outline<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Outline::EMPTY)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Outline<'de>, E> {
        Ok(Outline::EMPTY)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Outline<'de>, E> {
        Ok(Outline::EMPTY)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Outline<'de>, E> {
        Ok(Outline::EMPTY)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Outline<'de>, E> {
        Ok(Outline::EMPTY)
    }

    fn visit_str<E>(self, _: &str) -> Result<Outline<'de>, E> {
        Ok(Outline::EMPTY)
    }

    fn visit_unit<E>(self) -> Result<Outline<'de>, E> {
        Ok(Outline::EMPTY)
    }
}

/// A key of a message's object.
enum Key {
    Type,
    /// The index of a known field in [`FIELDS`].
    Field(usize),
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, key: &str) -> Result<Key, E> {
        Ok(match key {
            "type" => Key::Type,
            _ => FIELDS
                .iter()
                .position(|&f| f == key)
                .map_or(Key::Other, Key::Field),
        })
    }
}

/// serde_json's message for `e`, without the " at line L column C" that it
/// adds where its reader raised the error.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&position) {
        Some(message) if e.line() > 0 => message.to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grundy_protocol::wire::ClientBody;
    use serde_json::{json, Value};

    /// What the server makes of `text`: the message, or why it refuses it.
    fn read(text: &str) -> Result<ClientMsg, Malformed> {
        match serde_json::from_str::<ClientMsg>(text) {
            Ok(msg) => Ok(msg),
            Err(e) => Unread::new(text, &e).diagnose(),
        }
    }

    /// The refusal of `v`'s text.
    #[track_caller]
    fn refusal(v: &Value) -> Malformed {
        match read(&v.to_string()) {
            Ok(msg) => panic!("{v} read as {msg:?}"),
            Err(r) => r,
        }
    }

    /// The way the field was found before: leave each known field out in
    /// turn; the first whose absence changes the error (or ends it) is the
    /// one. One read of the message per field, but plainly right, so the
    /// probes are checked against it.
    fn culprit_by_removal(value: &Value) -> Option<&'static str> {
        let original = ClientMsg::deserialize(value).err()?.to_string();
        if original.starts_with(MISSING) {
            return None;
        }
        let object = value.as_object()?;
        FIELDS.iter().copied().find(|field| {
            let mut without = object.clone();
            without.remove(*field).is_some()
                && match ClientMsg::deserialize(&Value::Object(without)) {
                    Ok(_) => true,
                    Err(e) => e.to_string() != original,
                }
        })
    }

    /// A field of the wrong type or range in each kind of message that has
    /// one, as tests/tests/bad_input.rs sends them, and a few more.
    fn one_bad_field() -> Vec<(Value, &'static str)> {
        let nim = json!({"game": "nim", "heaps": [1]});
        vec![
            (json!({"type": "join", "room": 5}), "room"),
            (json!({"type": "watch", "room": "r", "since": -1}), "since"),
            (json!({"type": "watch", "room": "r", "since": "0"}), "since"),
            (json!({"type": "join", "room": "r", "seat": 300}), "seat"),
            (json!({"type": "join", "room": "r", "seat": "one"}), "seat"),
            (
                json!({"type": "create_room", "spec": nim, "listed": "yes"}),
                "listed",
            ),
            (
                json!({"type": "create_room", "spec": nim, "clock": {"initial_ms": -5}}),
                "clock",
            ),
            (
                json!({"type": "create_room", "random": {"family": "nim", "seed": 1.5}}),
                "random",
            ),
            (json!({"type": "create_room", "spec": nim, "bot": 3}), "bot"),
            (
                json!({"type": "create_room", "spec": nim, "hints": "yes"}),
                "hints",
            ),
            (
                json!({"type": "move", "room": "r", "token": 12, "move": {"heap": 0, "take": 1}}),
                "token",
            ),
            (
                json!({"type": "resume", "room": ["r"], "token": "t"}),
                "room",
            ),
            (json!({"type": "hello", "version": "1"}), "version"),
            (json!({"type": "hello", "version": 1, "name": 7}), "name"),
            (json!({"type": "ping", "id": {"n": 1}}), "id"),
            (json!({"type": "list_rooms", "limit": -1}), "limit"),
            (
                json!({"type": "create_tournament", "format": "swiss", "spec": nim, "rounds": "x"}),
                "rounds",
            ),
            (
                json!({"type": "create_tournament", "format": "knockout", "spec": nim}),
                "format",
            ),
            (
                json!({"type": "create_tournament", "format": "swiss", "family": "nim", "seed": -1}),
                "seed",
            ),
            (
                json!({"type": "create_tournament", "format": "swiss", "family": "nim", "rated": 1}),
                "rated",
            ),
            (
                json!({"type": "register", "tournament": "t", "name": []}),
                "name",
            ),
            (json!({"type": "get_ratings", "family": 1}), "family"),
            (json!({"type": "get_ratings", "game": 1}), "game"),
            (
                json!({"type": "watch_tournament", "tournament": false}),
                "tournament",
            ),
        ]
    }

    #[test]
    fn the_field_of_the_wrong_type_is_named_with_serdes_error() {
        for (msg, field) in one_bad_field() {
            if field == "clock" || field == "random" {
                continue; // named down to the member at fault: below
            }
            let kind = msg["type"].as_str().unwrap_or_default();
            let error = ClientMsg::deserialize(&msg)
                .expect_err("malformed")
                .to_string();
            let expected = format!("bad {kind} message: field \"{field}\": {error}");
            assert_eq!(refusal(&msg), Malformed::bad(expected), "{msg}");
        }
    }

    #[test]
    fn an_object_or_flattened_field_is_named_down_to_its_member_at_fault() {
        let nim = json!({"game": "nim", "heaps": [3]});
        for (msg, expected) in [
            (
                json!({"type": "create_room", "spec": nim, "clock": {"initial_ms": -5}}),
                "bad create_room message: field \"clock.initial_ms\": \
                 invalid value: integer `-5`, expected u64",
            ),
            (
                json!({"type": "create_room", "random": {"family": "nim", "seed": 1.5}}),
                "bad create_room message: field \"random.seed\": \
                 invalid type: floating point `1.5`, expected u64",
            ),
            (
                json!({"type": "create_tournament", "format": "swiss", "spec": nim,
                       "clock": {"initial_ms": 1000, "increment_ms": "2"}}),
                "bad create_tournament message: field \"clock.increment_ms\": \
                 invalid type: string \"2\", expected u64",
            ),
            // A token's settings, read after the rest of the message.
            (
                json!({"type": "login", "username": "ann", "password": "pw",
                       "scopes": ["flying"]}),
                "bad login message: field \"scopes\": unknown variant `flying`, \
                 expected one of `play`, `tournaments`, `account`",
            ),
            (
                json!({"type": "create_token", "expires_in_days": -1}),
                "bad create_token message: field \"expires_in_days\": \
                 invalid value: integer `-1`, expected u32",
            ),
            // A member missing, or given in a list: named all the same.
            (
                json!({"type": "create_room", "spec": nim, "clock": {"increment_ms": 0}}),
                "bad create_room message: field \"clock\": missing field `initial_ms`",
            ),
            (
                json!({"type": "create_room", "spec": nim, "clock": [-5]}),
                "bad create_room message: field \"clock[0]\": \
                 invalid value: integer `-5`, expected u64",
            ),
            // Too large to read again: the field alone.
            (
                json!({"type": "create_room", "spec": nim,
                       "clock": {"pad": "x".repeat(MEMBER_PROBE_BYTES), "initial_ms": -5}}),
                "bad create_room message: field \"clock\": \
                 invalid value: integer `-5`, expected u64",
            ),
            // Wrong as a whole: the field alone, as serde says it.
            (
                json!({"type": "create_room", "spec": nim, "clock": "5+0"}),
                "bad create_room message: field \"clock\": \
                 invalid type: string \"5+0\", expected struct Clock",
            ),
        ] {
            assert_eq!(refusal(&msg).message, expected, "{msg}");
        }
    }

    #[test]
    fn the_probes_name_the_field_leaving_it_out_would() {
        for (msg, field) in one_bad_field() {
            if field == "bot" {
                continue; // not a known field before
            }
            assert_eq!(culprit_by_removal(&msg), Some(field), "{msg}");
        }
    }

    #[test]
    fn a_missing_field_is_serdes_error_alone() {
        let msg = json!({"type": "move", "room": "r", "token": "t"});
        assert_eq!(
            refusal(&msg).message,
            "bad move message: missing field `move`"
        );
        let msg = json!({"type": "hello", "id": 3});
        assert_eq!(
            refusal(&msg).message,
            "bad hello message: missing field `version`"
        );
        // A wrong field is named before a missing one is.
        let msg = json!({"type": "join", "seat": "one"});
        assert!(refusal(&msg).message.contains("field \"seat\""));
    }

    #[test]
    fn of_two_wrong_fields_one_is_named_with_its_own_error() {
        let msg = r#"{"type": "join", "room": 5, "seat": "one"}"#;
        assert_eq!(
            read(msg),
            Err(Malformed::bad(
                "bad join message: field \"room\": invalid type: integer `5`, expected a string"
                    .into()
            ))
        );
        // The same error from both: either field is truthfully named.
        let msg = r#"{"type": "create_tournament", "format": "swiss", "rounds": "x", "max_players": "x"}"#;
        let message = read(msg).expect_err("malformed").message;
        assert!(
            message.ends_with(r#"": invalid type: string "x", expected u32"#),
            "{message}"
        );
    }

    #[test]
    fn refusals_come_in_order_not_json_type_kind() {
        assert!(read("{\"type\": \"ping\"")
            .expect_err("not JSON")
            .message
            .starts_with("not valid JSON: EOF while parsing"));
        for text in ["[1, 2, 3]", "7", "null", r#"{"type": 5}"#, r#"{"id": 1}"#] {
            let r = read(text).expect_err("no type");
            assert_eq!(
                r,
                Malformed::bad("a message needs a \"type\" string".into())
            );
        }
        let r = read(r#"{"type": "dance", "room": 5}"#).expect_err("unknown");
        assert_eq!(r.code, ErrorCode::UnknownType);
        assert!(r
            .message
            .starts_with("unknown message type \"dance\" (known: hello, "));
        let deep = format!(
            r#"{{"type":"ping","x":{}{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(read(&deep)
            .expect_err("deep")
            .message
            .starts_with("not valid JSON"));
    }

    #[test]
    fn the_id_is_read_when_it_can_be() {
        let id = |text: &str| {
            let e = serde_json::from_str::<ClientMsg>(text).expect_err("malformed");
            Unread::new(text, &e).id
        };
        let cases = [
            (
                r#"{"type": "join", "room": 5, "id": 7}"#,
                Some(RequestId::Number(7)),
            ),
            (
                r#"{"type": "dance", "id": "a"}"#,
                Some(RequestId::Text("a".into())),
            ),
            (r#"{"id": 7}"#, Some(RequestId::Number(7))),
            (r#"{"type": "ping", "id": {"n": 1}}"#, None),
            (r#"{"type": "ping", "id": -1}"#, None),
            (r#"{"type": "ping", "id": 7"#, None),
        ];
        for (text, expected) in cases {
            assert_eq!(id(text), expected, "{text}");
        }
    }

    #[test]
    fn a_key_given_twice_reads_as_before_the_last_one_kept() {
        // The typed read refuses a known key given twice; the JSON value keeps
        // the last one, and the message is read from it as it always was.
        let msg = read(r#"{"type": "join", "room": 5, "room": "r"}"#);
        assert_eq!(
            msg,
            Ok(ClientMsg {
                id: None,
                body: ClientBody::Join {
                    room: "r".into(),
                    seat: None
                }
            })
        );
        let msg = read(r#"{"type": "join", "room": "r", "room": 5}"#);
        assert_eq!(
            msg.expect_err("malformed").message,
            "bad join message: field \"room\": invalid type: integer `5`, expected a string"
        );
        assert_eq!(
            read(r#"{"type": "join", "type": "ping"}"#),
            Ok(ClientMsg {
                id: None,
                body: ClientBody::Ping
            })
        );
    }

    #[test]
    fn unknown_fields_are_skipped_and_never_blamed() {
        let mut msg = json!({"type": "join", "room": 5, "id": "a"});
        for i in 0..100 {
            msg[format!("pad{i}")] = json!([i, {"room": i}]);
        }
        let text = msg.to_string();
        let outline = serde_json::from_str::<Outline>(&text).expect("JSON");
        let known: Vec<&str> = (outline.fields.iter().enumerate())
            .filter_map(|(at, raw)| raw.map(|_| FIELDS[at]))
            .collect();
        assert_eq!(known, ["id", "room"]);
        assert!(!outline.repeated);
        assert_eq!(outline.id(), Some(RequestId::Text("a".into())));
        let refused = "invalid type: integer `5`, expected a string";
        assert_eq!(
            outline.culprit("join", refused).map(|at| FIELDS[at]),
            Some("room")
        );
        assert_eq!(outline.culprit("join", "something else"), None);
    }

    #[test]
    fn not_json_is_said_as_a_json_value_would_say_it() {
        let deep = format!(
            r#"{{"type":"ping","x":{}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let texts = [
            "{\"type\": \"ping\"",
            "{\"type\": \"ping\"} x",
            "{\"type\": \"ping\", \"x\": tru}",
            "{\"type\": \"ping\", \"x\": [1,]}",
            "{\"type\": \"ping\", \"x\": 1e400}",
            "{\"type\": \"ping\", \"x\": \"\\ud800\"}",
            "{\"type\": 5, \"x\": [1,]}",
            "{\"type\": \"join\", \"room\": 5, \"x\": [1,]}",
            &deep,
            &"[".repeat(50_000),
        ];
        for text in texts {
            let error = serde_json::from_str::<Value>(text).expect_err("not JSON");
            let expected = Malformed::bad(format!("not valid JSON: {error}"));
            assert_eq!(read(text).expect_err("not JSON"), expected, "{text}");
        }
    }

    #[test]
    fn the_position_is_cut_off_serdes_message() {
        // Where serde_json's reader raised the error, it says where.
        let e = serde_json::from_str::<u32>(r#""x""#).expect_err("a string");
        assert!(e.to_string().ends_with(" at line 1 column 3"), "{e}");
        assert_eq!(
            without_position(&e),
            r#"invalid type: string "x", expected u32"#
        );
        // A tagged enum's variant is read from serde's buffer, after the text:
        // no position, nothing to cut.
        let e = serde_json::from_str::<ClientMsg>(r#"{"type": "join", "room": 5}"#)
            .expect_err("malformed");
        assert_eq!(
            without_position(&e),
            "invalid type: integer `5`, expected a string"
        );
    }

    #[test]
    fn the_token_settings_are_those_of_create_token_in_the_schema() {
        let schema = grundy_protocol::schema::protocol_schema();
        let create_token = (schema["$defs"]["ClientMsg"]["oneOf"].as_array())
            .expect("a oneOf of messages")
            .iter()
            .find(|msg| msg["properties"]["type"]["const"] == "create_token")
            .expect("create_token in the schema");
        let mut in_schema: Vec<&str> = (create_token["properties"].as_object())
            .expect("its properties")
            .keys()
            .map(String::as_str)
            .filter(|&key| key != "type" && key != "id")
            .collect();
        in_schema.sort_unstable();
        let mut known = NEW_TOKEN.to_vec();
        known.sort_unstable();
        assert_eq!(known, in_schema);
    }

    #[test]
    fn the_known_fields_are_those_of_the_schema() {
        let schema = grundy_protocol::schema::protocol_schema();
        let mut in_schema: Vec<&str> = schema["$defs"]["ClientMsg"]["oneOf"]
            .as_array()
            .expect("a oneOf of messages")
            .iter()
            .filter_map(|msg| msg["properties"].as_object())
            .flat_map(|properties| properties.keys().map(String::as_str))
            .filter(|&key| key != "type")
            .collect();
        in_schema.sort_unstable();
        in_schema.dedup();
        let mut known = FIELDS.to_vec();
        known.sort_unstable();
        assert_eq!(known, in_schema);
    }
}

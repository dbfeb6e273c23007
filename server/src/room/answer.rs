//! A room's answers as text: the snapshot and the catch-up built from what
//! the room holds as text already (each move, the recent events), with no
//! parse and re-serialise. Each writes exactly what the wire type
//! (`ServerMsg`) would (the tests compare them).

use std::sync::Arc;

use grundy_protocol::wire::{Clock, MatchResult, RequestId, SeatInfo, WithId};
use grundy_protocol::Level;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// A room's full state, as `Snapshot` serializes.
#[derive(Serialize)]
pub struct SnapshotView<'a> {
    pub room: &'a str,
    pub code: &'a str,
    pub spec: &'a Value,
    pub position: Value,
    pub seats: [SeatInfo; 2],
    pub moves: &'a [Box<RawValue>],
    pub to_move: Option<u8>,
    pub clock: Option<Clock>,
    pub clocks_ms: [u64; 2],
    pub result: Option<MatchResult>,
    pub seq: u64,
    pub hints: bool,
    pub rated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot: Option<Level>,
}

/// The answers that carry a snapshot or events, as `ServerBody` serializes
/// them (`events` stays empty here: [`watching`] puts the texts in); their
/// id is the envelope's ([`WithId`]).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Answer<'a> {
    Seated {
        room: &'a str,
        seat: u8,
        token: &'a str,
        snapshot: SnapshotView<'a>,
    },
    Watching {
        room: &'a str,
        seat: Option<u8>,
        #[serde(skip_serializing_if = "Option::is_none")]
        token: Option<&'a str>,
        snapshot: Option<SnapshotView<'a>>,
        events: [(); 0],
    },
}

/// `{"type":"seated",...}`.
pub fn seated(
    id: &Option<RequestId>,
    room: &str,
    seat: u8,
    token: &str,
    snapshot: SnapshotView<'_>,
) -> Utf8Bytes {
    encode(
        id,
        &Answer::Seated {
            room,
            seat,
            token,
            snapshot,
        },
    )
}

/// `{"type":"watching",...}` with a snapshot, or with the events' texts;
/// `token`: the seat token, for a resume by an account.
pub fn watching(
    id: &Option<RequestId>,
    room: &str,
    seat: Option<u8>,
    token: Option<&str>,
    snapshot: Option<SnapshotView<'_>>,
    events: &[Arc<str>],
) -> Utf8Bytes {
    let answer = Answer::Watching {
        room,
        seat,
        token,
        snapshot,
        events: [],
    };
    let head = serde_json::to_string(&WithId { id, body: &answer }).unwrap_or_default();
    // `events` is the last field: its `[]}` becomes the list of texts.
    let Some(open) = head.strip_suffix("[]}") else {
        return Utf8Bytes::from(head);
    };
    let mut text =
        String::with_capacity(head.len() + events.iter().map(|e| e.len() + 1).sum::<usize>());
    text.push_str(open);
    text.push('[');
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(event);
    }
    text.push_str("]}");
    Utf8Bytes::from(text)
}

/// `{"type":"event","room":ROOM,"event":EVENT}` (as `ServerMsg::Event`
/// serializes) around an event already serialized.
pub fn event_frame(room: &str, event_json: &str) -> Utf8Bytes {
    // Written into one buffer of the right size (this runs for every event).
    let mut frame = Vec::with_capacity(event_json.len() + room.len() + 40);
    frame.extend_from_slice(br#"{"type":"event","room":"#);
    // A string serializes without fail; escaped as serde escapes it.
    let _ = serde_json::to_writer(&mut frame, room);
    frame.extend_from_slice(br#","event":"#);
    frame.extend_from_slice(event_json.as_bytes());
    frame.push(b'}');
    // Valid UTF-8: made of UTF-8 pieces.
    Utf8Bytes::from(String::from_utf8(frame).unwrap_or_default())
}

/// `{"type":"ack","id":ID,"room":ROOM,"seq":SEQ}` (as `ServerMsg::Ack`
/// serializes), written straight into one buffer (this runs for every move).
pub fn ack_frame(id: &Option<RequestId>, room: &str, seq: Option<u64>) -> Utf8Bytes {
    let mut frame = Vec::with_capacity(room.len() + 80);
    frame.extend_from_slice(br#"{"type":"ack","id":"#);
    // An id and a string serialize without fail.
    let _ = serde_json::to_writer(&mut frame, id);
    frame.extend_from_slice(br#","room":"#);
    let _ = serde_json::to_writer(&mut frame, room);
    frame.extend_from_slice(br#","seq":"#);
    let _ = serde_json::to_writer(&mut frame, &seq);
    frame.push(b'}');
    // Valid UTF-8: made of UTF-8 pieces.
    Utf8Bytes::from(String::from_utf8(frame).unwrap_or_default())
}

fn encode(id: &Option<RequestId>, answer: &Answer<'_>) -> Utf8Bytes {
    // Plain data with string keys: serializing cannot fail.
    let text = serde_json::to_string(&WithId { id, body: answer });
    Utf8Bytes::from(text.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use grundy_protocol::wire::{EndReason, Event, EventBody, ServerBody, ServerMsg, Snapshot};
    use serde_json::json;

    fn moves() -> Vec<Box<RawValue>> {
        [json!({"heap": 0, "take": 1}), json!({"heap": 1, "take": 2})]
            .iter()
            .map(|m| RawValue::from_string(m.to_string()).unwrap())
            .collect()
    }

    fn view(moves: &[Box<RawValue>], spec: &Value) -> SnapshotView<'static> {
        // Leaked for the test's convenience: the views borrow.
        let moves: &'static [Box<RawValue>] = Box::leak(moves.to_vec().into_boxed_slice());
        let spec: &'static Value = Box::leak(Box::new(spec.clone()));
        SnapshotView {
            room: "r\"1",
            code: "ABC",
            spec,
            position: json!({"game": "nim", "heaps": [0, 0]}),
            seats: [
                SeatInfo {
                    name: Some("a".into()),
                    connected: true,
                    player_kind: Some(grundy_protocol::wire::PlayerKind::Person),
                },
                SeatInfo {
                    name: None,
                    connected: false,
                    player_kind: None,
                },
            ],
            moves,
            to_move: Some(1),
            clock: Some(Clock {
                initial_ms: 5,
                increment_ms: 1,
            }),
            clocks_ms: [3, 4],
            result: Some(MatchResult {
                winner: Some(0),
                reason: EndReason::Rules,
            }),
            seq: 9,
            hints: true,
            rated: true,
            bot: Some(Level::Casual(3)),
        }
    }

    fn wire_snapshot(v: &SnapshotView<'_>) -> Snapshot {
        Snapshot {
            room: v.room.into(),
            code: v.code.into(),
            spec: v.spec.clone(),
            position: v.position.clone(),
            seats: v.seats.clone(),
            moves: v
                .moves
                .iter()
                .map(|m| serde_json::from_str(m.get()).unwrap())
                .collect(),
            to_move: v.to_move,
            clock: v.clock,
            clocks_ms: v.clocks_ms,
            result: v.result,
            seq: v.seq,
            hints: v.hints,
            rated: v.rated,
            bot: v.bot,
        }
    }

    #[test]
    fn seated_is_what_serde_writes_for_the_message() {
        let spec = json!({"game": "nim", "heaps": [1, 2]});
        let id = Some(RequestId::Number(7));
        let v = view(&moves(), &spec);
        let expected = crate::outbox::encode(&ServerMsg::answer(
            id.clone(),
            ServerBody::Seated {
                room: "r\"1".into(),
                seat: 1,
                token: "t".into(),
                snapshot: wire_snapshot(&v),
            },
        ));
        assert_eq!(seated(&id, "r\"1", 1, "t", v), expected);
    }

    #[test]
    fn watching_is_what_serde_writes_for_the_message() {
        let spec = json!({"game": "nim", "heaps": [1, 2]});
        let events = [
            Event {
                seq: 8,
                body: EventBody::Presence {
                    seat: 0,
                    connected: true,
                },
            },
            Event {
                seq: 9,
                body: EventBody::Started,
            },
        ];
        let texts: Vec<Arc<str>> = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap().into())
            .collect();
        for (with_snapshot, events, texts) in [
            (true, &[][..], &[][..]),
            (false, &events[..], &texts[..]),
            (false, &events[..1], &texts[..1]),
        ] {
            for token in [None, Some("t")] {
                let snapshot = with_snapshot.then(|| view(&moves(), &spec));
                let id = Some(RequestId::Text("x".into()));
                let expected = crate::outbox::encode(&ServerMsg::answer(
                    id.clone(),
                    ServerBody::Watching {
                        room: "r".into(),
                        seat: Some(0),
                        token: token.map(str::to_string),
                        snapshot: snapshot.as_ref().map(wire_snapshot),
                        events: events.to_vec(),
                    },
                ));
                assert_eq!(
                    watching(&id, "r", Some(0), token, snapshot, texts),
                    expected
                );
            }
        }
    }

    #[test]
    fn an_event_frame_is_what_serde_writes_for_the_message() {
        let event = Event {
            seq: 7,
            body: EventBody::Moved {
                seat: 1,
                mv: json!({"heap": 0, "take": 2}),
                clocks_ms: [1, 2],
                position: json!({"game": "nim", "heaps": [1, "\"quoted\""]}),
            },
        };
        let json = serde_json::to_string(&event).unwrap();
        let expected = crate::outbox::encode(&ServerMsg::notice(ServerBody::Event {
            room: "r\"1".into(),
            event,
        }));
        assert_eq!(event_frame("r\"1", &json), expected);
    }

    #[test]
    fn an_ack_frame_is_what_serde_writes_for_the_message() {
        let ids = [
            None,
            Some(RequestId::Number(0)),
            Some(RequestId::Number(u64::MAX)),
            Some(RequestId::Text("a \"quoted\" id".into())),
        ];
        for id in ids {
            for seq in [None, Some(0), Some(12)] {
                let expected = crate::outbox::encode(&ServerMsg::answer(
                    id.clone(),
                    ServerBody::Ack {
                        room: Some("r\"1".into()),
                        seq,
                    },
                ));
                assert_eq!(ack_frame(&id, "r\"1", seq), expected);
            }
        }
    }
}

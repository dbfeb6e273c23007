//! The reads both stores share, written once against `sql::Sql`: a room's
//! seats and events, the unfinished rooms, results, a match's record. Bad
//! data becomes [`StoreError::Corrupt`], never a panic.

use super::*;

pub(super) fn unsigned(
    room: &str,
    seq: Option<u64>,
    what: &str,
    value: i64,
) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::Corrupt {
        room: room.to_owned(),
        seq,
        message: format!("{what} is negative ({value})"),
    })
}

pub(super) fn corrupt(room: &str, seq: Option<u64>, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        room: room.to_owned(),
        seq,
        message: e.to_string(),
    }
}

pub(super) fn parse_json<T: serde::de::DeserializeOwned>(
    room: &str,
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(room, None, format!("bad {what} JSON: {e}")))
}

pub(super) fn load_seats<C: Sql>(
    conn: &mut C,
    room: &str,
) -> Result<[Option<StoredSeat>; 2], StoreError> {
    let mut seats = [None, None];
    let rows = conn.query(
        "SELECT seat, name, token, house, kind, account, player_token, account_token FROM seats
         WHERE room_no = (SELECT no FROM rooms WHERE id = ?1)",
        args![room],
    )?;
    for mut row in rows {
        let bad = |e: String| corrupt(room, None, e);
        let seat = row.int(0).map_err(bad)?;
        let slot = usize::try_from(seat)
            .ok()
            .and_then(|i| seats.get_mut(i))
            .ok_or_else(|| corrupt(room, None, format!("no seat {seat}")))?;
        let kind = match row.opt_text(4).map_err(bad)? {
            None => None,
            Some(text) => Some(
                kind_from_text(&text)
                    .ok_or_else(|| corrupt(room, None, format!("seat {seat}: kind {text:?}")))?,
            ),
        };
        let account = row.opt_int(5).map_err(bad)?;
        *slot = Some(StoredSeat {
            player: Player {
                name: row.opt_text(1).map_err(bad)?,
                kind,
                account: account.map(|a| a.max(0) as u64),
            },
            token: row.text(2).map_err(bad)?,
            house: row.flag(3).map_err(bad)?,
            player_token: row.opt_text(6).map_err(bad)?,
            tie: row.opt_text(7).map_err(bad)?,
        });
    }
    Ok(seats)
}

pub(super) fn load_events<C: Sql>(
    conn: &mut C,
    room: &str,
) -> Result<Vec<(Event, u64)>, StoreError> {
    let rows = conn.query(
        "SELECT seq, at_ms, body FROM events
         WHERE room_no = (SELECT no FROM rooms WHERE id = ?1) ORDER BY seq",
        args![room],
    )?;
    let mut events = Vec::with_capacity(rows.len());
    for mut row in rows {
        let seq = row.int(0).map_err(|e| corrupt(room, None, e))?;
        let seq = unsigned(room, None, "seq", seq)?;
        let bad = |e: String| corrupt(room, Some(seq), e);
        let at_ms = row.int(1).map_err(bad)?;
        let at_ms = unsigned(room, Some(seq), "at_ms", at_ms)?;
        let body = row.text(2).map_err(bad)?;
        let event: Event = serde_json::from_str(&body)
            .map_err(|e| corrupt(room, Some(seq), format!("bad event JSON: {e}")))?;
        if event.seq != seq {
            return Err(corrupt(
                room,
                Some(seq),
                format!("the event body says seq {}", event.seq),
            ));
        }
        events.push((event, at_ms));
    }
    Ok(events)
}

/// Every unfinished room with its seats and events, oldest first.
pub(super) fn load_unfinished_rooms<C: Sql>(conn: &mut C) -> Result<Vec<StoredRoom>, StoreError> {
    load_rooms(conn, "result IS NULL", args![])
}

/// The unfinished rooms of these numbers, oldest first (PostgreSQL only).
pub(super) fn load_unfinished_rooms_numbered<C: Sql>(
    conn: &mut C,
    nos: &[i64],
) -> Result<Vec<StoredRoom>, StoreError> {
    load_rooms(conn, "result IS NULL AND no = ANY(?1)", &[Arg::Ints(nos)])
}

/// The rooms `filter` (a condition on `rooms`) picks, with their seats and
/// logs, oldest first.
pub(super) fn load_rooms<C: Sql>(
    conn: &mut C,
    filter: &str,
    args: &[Arg<'_>],
) -> Result<Vec<StoredRoom>, StoreError> {
    let rows = conn.query(
        &format!(
            "SELECT id, code, spec, clock, listed, created_at_ms, bot, tournament, hints, rated
             FROM rooms WHERE {filter} ORDER BY created_at_ms, id"
        ),
        args,
    )?;
    let mut rooms = Vec::with_capacity(rows.len());
    for mut row in rows {
        let room = row.text(0).map_err(|e| corrupt("?", None, e))?;
        let bad = |e: String| corrupt(&room, None, e);
        let code = row.text(1).map_err(bad)?;
        let spec = row.text(2).map_err(bad)?;
        let clock = row.opt_text(3).map_err(bad)?;
        let listed = row.flag(4).map_err(bad)?;
        let created_at_ms = row.int(5).map_err(bad)?;
        let bot = row.opt_text(6).map_err(bad)?;
        let tournament = row.opt_text(7).map_err(bad)?;
        let hints = row.flag(8).map_err(bad)?;
        let rated = row.flag(9).map_err(bad)?;
        rooms.push(StoredRoom {
            bot,
            hints,
            rated,
            tournament,
            spec: parse_json(&room, "spec", &spec)?,
            clock: clock.map(|c| parse_json(&room, "clock", &c)).transpose()?,
            created_at_ms: unsigned(&room, None, "created_at_ms", created_at_ms)?,
            listed,
            code,
            seats: [None, None],
            events: Vec::new(),
            result: None,
            room,
        });
    }
    for room in &mut rooms {
        room.seats = load_seats(conn, &room.room)?;
        room.events = load_events(conn, &room.room)?;
    }
    Ok(rooms)
}

/// The result of each of `rooms` that exists (None: unfinished).
pub(super) fn read_results<C: Sql>(
    conn: &mut C,
    rooms: &[String],
) -> Result<Vec<(String, Option<MatchResult>)>, StoreError> {
    let ids: Vec<&str> = rooms.iter().map(String::as_str).collect();
    let rows = conn.query(
        "SELECT id, result FROM rooms WHERE id = ANY(?1)",
        &[Arg::Texts(&ids)],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for mut row in rows {
        let id = row.text(0).map_err(|e| corrupt("?", None, e))?;
        let result = row
            .opt_text(1)
            .map_err(|e| corrupt(&id, None, e))?
            .map(|r| parse_json(&id, "result", &r))
            .transpose()?;
        out.push((id, result));
    }
    Ok(out)
}

/// A match's record by id or code: see [`MatchStore::record`].
pub(super) fn read_record<C: Sql>(
    conn: &mut C,
    key: &str,
) -> Result<Option<MatchRecord>, StoreError> {
    // An id (32 hex digits) and a code (6 letters and digits, stored in
    // capitals) never look alike; a code is never reused.
    let row = conn.query_one(
        "SELECT id, spec, clock, result FROM rooms WHERE id = ?1 OR code = ?2 LIMIT 1",
        args![key, key.to_ascii_uppercase().as_str()],
    )?;
    let Some(mut row) = row else {
        return Ok(None);
    };
    let id = row.text(0).map_err(|e| corrupt(key, None, e))?;
    let room = id.as_str();
    let bad = |e: String| corrupt(room, None, e);
    let spec = parse_json(room, "spec", &row.text(1).map_err(bad)?)?;
    let clock = row
        .opt_text(2)
        .map_err(bad)?
        .map(|c| parse_json(room, "clock", &c))
        .transpose()?;
    let result = row
        .opt_text(3)
        .map_err(bad)?
        .map(|r| parse_json(room, "result", &r))
        .transpose()?;
    let seats = load_seats(conn, room)?;
    let events = load_events(conn, room)?;

    let start = events
        .iter()
        .find(|(event, _)| matches!(event.body, EventBody::Started))
        .or_else(|| {
            events
                .iter()
                .find(|(event, _)| matches!(event.body, EventBody::Moved { .. }))
        })
        .map_or(0, |(_, at_ms)| *at_ms);
    let moves = events
        .into_iter()
        .filter_map(|(event, at_ms)| match event.body {
            EventBody::Moved { seat, mv, .. } => Some(RecordedMove {
                seat,
                mv,
                at_ms: at_ms.saturating_sub(start),
            }),
            _ => None,
        })
        .collect();
    let [seat0, seat1] = seats;
    Ok(Some(MatchRecord {
        room: room.to_owned(),
        spec,
        player_kinds: [
            seat0.as_ref().and_then(|s| s.player.kind),
            seat1.as_ref().and_then(|s| s.player.kind),
        ],
        players: [
            seat0.and_then(|s| s.player.name),
            seat1.and_then(|s| s.player.name),
        ],
        clock,
        moves,
        result,
    }))
}

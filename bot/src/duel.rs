//! Bot versus bot: two bots on one server play a match from a given start, each
//! over its own connection, exactly as two third-party bots would.

use grundy_client::client::Hello;
use grundy_client::seat::{take_seat, PlayError};
use grundy_protocol::wire::{ClientBody, ClientMsg, EndReason};
use grundy_protocol::Level;
use serde::Serialize;
use serde_json::Value;

/// One finished bot-versus-bot match.
#[derive(Debug, Clone, Serialize)]
pub struct DuelGame {
    pub room: String,
    pub spec: Value,
    /// The levels of seat 0 and seat 1.
    pub seats: [String; 2],
    /// The winning seat (null for an aborted match).
    pub winner: Option<u8>,
    pub reason: EndReason,
}

/// Plays one match: `levels[0]` takes seat 0 (and moves first).
pub async fn duel(
    url: &str,
    spec: &Value,
    levels: [Level; 2],
    seed: u64,
) -> Result<DuelGame, PlayError> {
    let a = take_seat(
        url,
        &Hello::guest(&format!("bot-{}", levels[0])),
        levels[0],
        seed,
        |id| ClientMsg {
            id,
            body: ClientBody::CreateRoom {
                spec: Some(spec.clone()),
                random: None,
                clock: None,
                listed: false,
                seat: Some(0),
                hints: false,
                rated: false,
                bot: None,
            },
        },
    )
    .await?;
    let room = a.plan.room.clone();
    let b = take_seat(
        url,
        &Hello::guest(&format!("bot-{}", levels[1])),
        levels[1],
        seed.wrapping_add(1),
        |id| ClientMsg {
            id,
            body: ClientBody::Join {
                room: room.clone(),
                seat: Some(1),
            },
        },
    )
    .await?;
    let mut tasks = Vec::new();
    for taken in [a, b] {
        tasks.push(tokio::spawn(taken.play()));
    }
    let mut result = None;
    for t in tasks {
        let r = t
            .await
            .map_err(|e| PlayError::Desync(format!("a bot task failed: {e}")))??;
        result = Some(r);
    }
    let result = result.ok_or_else(|| PlayError::Desync("no result".into()))?;
    Ok(DuelGame {
        room,
        spec: spec.clone(),
        seats: [levels[0].to_string(), levels[1].to_string()],
        winner: result.winner,
        reason: result.reason,
    })
}

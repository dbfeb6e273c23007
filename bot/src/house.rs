//! House bots: join a room that asks for a bot and play the free seat.

use grundy_protocol::wire::{ClientMsg, MatchResult, ServerMsg};

use crate::client::{Client, ClientError};
use crate::level::Level;
use crate::seat::{play_seat, PlayError, SeatPlan};

/// Joins `room` (any free seat) and plays it to the end.
pub async fn join_and_play(
    url: &str,
    room: &str,
    level: Level,
    seed: u64,
) -> Result<MatchResult, PlayError> {
    let name = format!("house-bot ({level})");
    let mut c = Client::connect(url, &name).await?;
    let seated = c
        .request(|id| ClientMsg::Join {
            id,
            room: room.to_string(),
            seat: None,
        })
        .await?;
    let ServerMsg::Seated {
        room,
        seat,
        token,
        snapshot,
        ..
    } = seated
    else {
        return Err(ClientError::Unexpected(format!("{seated:?}")).into());
    };
    let plan = SeatPlan {
        url: url.to_string(),
        name,
        room,
        seat,
        token,
        level,
        seed,
    };
    play_seat(&plan, Some(c), Some(&snapshot)).await
}

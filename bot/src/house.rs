//! House bots: join a room that asks for a bot and play the free seat.

use grundy_protocol::wire::{ClientMsg, MatchResult, ServerMsg};

use crate::client::{Client, ClientError};
use crate::level::Level;
use crate::seat::{play_seat, PlayError, SeatPlan};

/// The name a house bot of `level` takes: it marks the seat as the house's, so
/// a restarted server can put a bot back on it.
pub fn house_name(level: Level) -> String {
    format!("house-bot ({level})")
}

/// The level of a seat named by [`house_name`].
pub fn house_level(name: &str) -> Option<Level> {
    name.strip_prefix("house-bot (")?
        .strip_suffix(')')?
        .parse()
        .ok()
}

/// Joins `room` (any free seat) and plays it to the end.
pub async fn join_and_play(
    url: &str,
    room: &str,
    level: Level,
    seed: u64,
) -> Result<MatchResult, PlayError> {
    let name = house_name(level);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn house_names_round_trip() {
        for level in [Level::Perfect, Level::Casual(0), Level::Casual(7)] {
            assert_eq!(house_level(&house_name(level)), Some(level));
        }
        assert_eq!(house_level("alice"), None);
        assert_eq!(house_level("house-bot (strong)"), None);
    }
}

//! House bots: join a room that asks for a bot and play the free seat.

use grundy_protocol::wire::{ClientMsg, MatchResult};

use crate::level::Level;
use crate::seat::{take_seat, PlayError};

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
    take_seat(url, &house_name(level), level, seed, |id| ClientMsg::Join {
        id,
        room: room.to_string(),
        seat: None,
    })
    .await?
    .play()
    .await
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

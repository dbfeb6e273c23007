//! House bots: the name of the server's house seats, and the external house
//! bot (`grundy-bot house`), which joins rooms that ask for a bot on servers
//! whose own house bots are off. The server's own bots live in the server.

use grundy_client::seat::{take_seat, PlayError};
use grundy_protocol::wire::{ClientMsg, MatchResult};
use grundy_protocol::Level;

/// The name a server gives the seat it reserves for its own house bot of
/// `level`. Servers refuse names like it from clients.
pub fn house_name(level: Level) -> String {
    format!("house-bot ({level})")
}

/// The name an external house bot of `level` plays under: one a server
/// accepts (the house's own is reserved for the server's bots).
pub fn external_name(level: Level) -> String {
    format!("grundy-bot ({level})")
}

/// Joins `room` (any free seat) as [`external_name`] and plays it to the end.
pub async fn join_and_play(
    url: &str,
    room: &str,
    level: Level,
    seed: u64,
) -> Result<MatchResult, PlayError> {
    take_seat(url, &external_name(level), level, seed, |id| {
        ClientMsg::Join {
            id,
            room: room.to_string(),
            seat: None,
        }
    })
    .await?
    .play()
    .await
}

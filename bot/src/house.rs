//! The external house bot (`grundy-bot house`), which joins rooms that ask
//! for a bot on servers whose own house bots are off. The server's own house
//! bots (and the name of their seats) live in the server.

use grundy_client::client::Hello;
use grundy_client::seat::{take_seat, PlayError};
use grundy_protocol::wire::{ClientBody, ClientMsg, MatchResult};
use grundy_protocol::Level;

/// The name an external house bot of `level` plays under (as a guest). A
/// server reserves names that read as it, but one with its own house bots
/// off (the only kind that leaves rooms to this bot) lets a guest say hello
/// as exactly this name (`grundy_server::names::reserved`, and
/// `external_house_name` there, held equal to this in tests/tests/house.rs).
pub fn external_name(level: Level) -> String {
    format!("grundy-bot ({level})")
}

/// Joins `room` (any free seat) as `hello` says (the house serves as
/// [`external_name`]) and plays it to the end.
pub async fn join_and_play(
    url: &str,
    hello: &Hello,
    room: &str,
    level: Level,
    seed: u64,
) -> Result<MatchResult, PlayError> {
    take_seat(url, hello, level, seed, |id| ClientMsg {
        id,
        body: ClientBody::Join {
            room: room.to_string(),
            seat: None,
        },
    })
    .await?
    .play()
    .await
}

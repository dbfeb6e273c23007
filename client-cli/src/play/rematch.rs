//! After the end: the move list, or the same game again with the seats
//! swapped (against the same house bot, or the same person, whoever opens
//! the rematch room first).

use grundy_client::client::Client;
use grundy_protocol::wire::{ClientBody, ClientMsg, RoomState, ServerBody, ServerMsg};

use crate::console::{Console, Typed};
use crate::follow::Follow;
use crate::render::Paint;

/// The rematch room the opponent of a match between people opened already
/// (typing `rematch` first): open, the same game, the opponent in the seat
/// that is ours this time swapped, the other free.
pub(super) async fn opponents_rematch(client: &mut Client, f: &Follow, me: u8) -> Option<String> {
    let answer = client
        .request(|id| ClientMsg {
            id,
            body: ClientBody::ListRooms {
                limit: None,
                offset: None,
            },
        })
        .await
        .ok()?;
    let ServerMsg {
        body: ServerBody::Rooms { rooms, .. },
        ..
    } = answer
    else {
        return None;
    };
    let opponent = f.name(me ^ 1);
    let description =
        grundy_protocol::names::describe_spec(&f.game.spec, grundy_protocol::wire::MAX_DESCRIPTION);
    rooms
        .into_iter()
        .find(|r| {
            r.state == RoomState::Open
                && r.seats[me as usize].name.as_deref() == Some(opponent.as_str())
                && r.seats[(me ^ 1) as usize].name.is_none()
                && r.name == grundy_protocol::names::spec_name(&f.game.spec)
                && r.description == description
                && r.clock == f.game.clock
        })
        .map(|r| r.code)
}

pub(super) enum AfterMatch {
    Leave,
    /// Play again: the match just over.
    Rematch(Box<Follow>),
}

/// After the end: the move list with every move that threw a win away,
/// a rematch with the seats swapped, or leave.
pub(super) async fn after_the_match(
    console: &mut Console,
    f: Box<Follow>,
    paint: &Paint,
) -> AfterMatch {
    console.say(
        "Type `moves` to see the moves (the ones that threw a win away are marked), \
         `rematch` to play again with the seats swapped, or `quit` (or Enter) to leave.",
    );
    loop {
        console.prompt("after the match");
        match console.next().await {
            Typed::Line(line) => match line.to_ascii_lowercase().as_str() {
                "rematch" | "r" => return AfterMatch::Rematch(f),
                "moves" | "m" => console.say(&f.move_list(true, paint)),
                "" | "quit" | "q" | "exit" => return AfterMatch::Leave,
                other => console.say(&paint.bad(&format!(
                    "{:?}: after the match, type `moves`, `rematch` or `quit`",
                    other
                ))),
            },
            Typed::Interrupt | Typed::End => return AfterMatch::Leave,
        }
    }
}

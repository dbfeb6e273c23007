//! How a rematch's new room is made: by the lobby, as `create_room` makes
//! one (durable before anyone hears of it, counted against the offerer's
//! address), with its seats reserved for the finished match's players,
//! swapped, and the house bot put back on its seat.

use std::net::IpAddr;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use grundy_protocol::wire::ErrorCode;
use grundy_protocol::Position;
use tokio::sync::oneshot;

use crate::house::{House, HouseSeat};
use crate::lobby::{Lobby, RoomSetup};
use crate::node::Node;
use crate::player::Player;
use crate::refusal::Refusal;
use crate::room::{MakeRoom, Maker, RematchPlan, Rematched, RoomCmd, RoomTx};

/// This node's maker of rematch rooms for an offer from client `address`.
pub(super) fn maker(shared: &Node, address: Option<IpAddr>) -> Maker {
    Arc::new(RematchMaker {
        lobby: shared.lobby.clone(),
        house: shared.house.clone(),
        address,
    })
}

struct RematchMaker {
    lobby: Arc<Lobby>,
    house: Arc<House>,
    address: Option<IpAddr>,
}

impl MakeRoom for RematchMaker {
    fn make(&self, plan: RematchPlan) -> BoxFuture<'static, Result<Rematched, Refusal>> {
        let (lobby, house, address) = (self.lobby.clone(), self.house.clone(), self.address);
        Box::pin(async move { make(lobby, house, address, plan).await })
    }
}

async fn make(
    lobby: Arc<Lobby>,
    house: Arc<House>,
    address: Option<IpAddr>,
    plan: RematchPlan,
) -> Result<Rematched, Refusal> {
    let slot = lobby.open_slot(address).map_err(|limit| {
        (
            ErrorCode::LimitReached,
            format!(
                "the offerer's address holds {limit} rooms with unfinished matches, \
                 its limit (open_rooms_per_ip): no rematch room"
            ),
        )
    })?;
    // The spec was built once already; a game with tables builds them again
    // off the reactor (the tables themselves are cached by the engine).
    let spec = plan.spec.clone();
    let start = tokio::task::spawn_blocking(move || Position::from_spec(&spec))
        .await
        .map_err(|_| (ErrorCode::Internal, "could not build the start".to_string()))?
        .map_err(|e| (ErrorCode::BadSpec, format!("spec refused: {e}")))?;
    let setup = RoomSetup {
        spec: plan.spec,
        start,
        clock: plan.clock,
        listed: plan.listed,
        bot: plan.bot,
        hints: plan.hints,
        rated: plan.rated,
        tournament: None,
        slot,
    };
    let (room, tx) = lobby.create(setup).await?;
    let code = lobby.code(&room).unwrap_or_default();
    let mut tokens = [None, None];
    for (seat, player) in plan.players.iter().enumerate() {
        if let Some(player) = player {
            tokens[seat] = Some(reserve(&tx, player.clone(), seat as u8).await?);
        }
    }
    for (seat, player) in plan.players.iter().enumerate() {
        if let (None, Some(level)) = (player, plan.bot) {
            house.spawn(HouseSeat {
                room: room.clone(),
                seat: seat as u8,
                level,
                reserved: false,
            });
        }
    }
    Ok(Rematched { room, code, tokens })
}

/// Reserves `seat` of the new room for `player`: its token.
async fn reserve(tx: &RoomTx, player: Player, seat: u8) -> Result<String, Refusal> {
    let closed = || {
        (
            ErrorCode::Internal,
            "the new room closed at once".to_string(),
        )
    };
    let (reply, answer) = oneshot::channel();
    tx.send(RoomCmd::Reserve {
        player,
        seat,
        house: false,
        player_token: None,
        reply,
    })
    .await
    .map_err(|_| closed())?;
    answer.await.map_err(|_| closed())?
}

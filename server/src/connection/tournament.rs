//! The tournament messages of a connection: checked here, carried out by the
//! tournament's own task (`crate::tournament::actor`).

use grundy_protocol::wire::{
    ClientMsg, ErrorCode, RequestId, Scope, ServerMsg, TournamentSettings,
};

use tokio::sync::mpsc;

use super::Conn;
use crate::accounts::Refused;
use crate::node::Node;
use crate::outbox::Outbox;
use crate::player::Player;
use crate::tournament::actor::TournamentCmd;
use crate::tournament::settings;

/// Most ratings one `get_ratings` returns.
const MAX_RATINGS: u32 = 1000;

impl Conn {
    pub(super) async fn dispatch_tournament(&mut self, msg: ClientMsg) {
        match msg {
            ClientMsg::CreateTournament { id, settings } => {
                if let Err(refused) = self.may(Scope::Tournaments, "create_tournament") {
                    return self.reply(refused.answer(id));
                }
                self.create_tournament(id, settings).await
            }
            ClientMsg::ListTournaments { id } => {
                let mut tournaments = self.shared.tournaments.list();
                if let Some(bus) = &self.shared.bus {
                    tournaments.extend(bus.other_tournaments().await);
                    tournaments.sort_by(|a, b| a.code.cmp(&b.code));
                }
                self.reply(ServerMsg::Tournaments { id, tournaments });
            }
            ClientMsg::GetTournament {
                id,
                tournament,
                round,
            } => {
                if let Some((_, tx)) = self.shared.tournaments.find(&tournament) {
                    let get = TournamentCmd::Get {
                        outbox: self.outbox.clone(),
                        id: id.clone(),
                        round,
                    };
                    match tx.try_send(get) {
                        Ok(()) => return,
                        Err(mpsc::error::TrySendError::Full(_)) => {
                            return self.reply(super::room_busy(id))
                        }
                        // It left memory in the meantime: read it as below.
                        Err(mpsc::error::TrySendError::Closed(_)) => {}
                    }
                }
                // Finished and gone from memory: rebuilt from the store (which
                // reads its start: one at a time, like every spec build).
                let registry = self.shared.tournaments.clone();
                let key = tournament.clone();
                match self
                    .shared
                    .spec_builds
                    .run(move || registry.load(&key))
                    .await
                {
                    Ok(Ok(Some(mut state))) => {
                        match round.map(|round| state.keep_asked_round(round)) {
                            Some(Err(why)) => self.error(id, ErrorCode::BadRequest, why),
                            _ => self.reply(ServerMsg::Tournament { id, state }),
                        }
                    }
                    Ok(Ok(None)) => self.error(
                        id,
                        ErrorCode::UnknownTournament,
                        format!("no tournament {tournament:?}"),
                    ),
                    Ok(Err(e)) => {
                        tracing::error!("reading a tournament failed: {e}");
                        self.error(id, ErrorCode::Internal, "could not read the tournament")
                    }
                    Err(refused) => self.reply(refused.answer(id)),
                }
            }
            ClientMsg::GetRatings {
                id,
                game,
                family,
                limit,
            } => {
                let Some(game) = game.or(family) else {
                    return self.error(
                        id,
                        ErrorCode::BadRequest,
                        "get_ratings needs `game`: a game id such as \"nim\" or \"kayles\"",
                    );
                };
                let limit = limit.unwrap_or(100);
                if !(1..=MAX_RATINGS).contains(&limit) {
                    return self.error(
                        id,
                        ErrorCode::BadRequest,
                        format!("limit: must be 1 to {MAX_RATINGS}, got {limit}"),
                    );
                }
                let limit = limit as usize;
                // Each game is rated apart (Kayles apart from Dawson's
                // Kayles); an unknown one has nobody rated.
                let ratings = self.shared.ratings.top(&game, limit);
                self.reply(ServerMsg::Ratings {
                    id,
                    name: crate::rating_key::key_name(&game).to_string(),
                    family: game.clone(),
                    game,
                    ratings,
                });
            }
            other => self.error(
                other.id().cloned(),
                ErrorCode::Internal,
                "not a tournament message",
            ),
        }
    }

    /// Who registers: the connection's account (under its username), or a
    /// guest under `name` (default: the connection's).
    pub(super) fn entrant(&self, name: Option<String>) -> Result<Player, Refused> {
        let name = name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
        if self.session.is_some() {
            let username = self.player.name.as_deref().unwrap_or_default();
            super::account::under_username(name.as_deref(), username)?;
            return Ok((*self.player).clone());
        }
        let Some(name) = name.or_else(|| self.player.name.clone()) else {
            return Err(Refused::bad(
                "a player needs a name: give `name` (or one in hello)",
            ));
        };
        self.shared.accounts.guest_may_use(&name)?;
        Ok(Player::guest(name))
    }

    /// Refuses following one more tournament past `seats_per_connection`
    /// (answers the request and returns true when over the limit).
    fn over_tournament_limit(&self, id: &Option<RequestId>) -> bool {
        over_tournament_limit(&self.shared, &self.outbox, id)
    }

    async fn create_tournament(&mut self, id: Option<RequestId>, asked: TournamentSettings) {
        let seed = u64::from_le_bytes(
            uuid::Uuid::new_v4().as_bytes()[..8]
                .try_into()
                .unwrap_or([0; 8]),
        );
        let filled = match settings::fill(asked, &self.shared.config.limits, seed, &self.player) {
            Ok(filled) => filled,
            Err((code, message)) => return self.error(id, code, message),
        };
        if self.over_tournament_limit(&id) {
            return;
        }
        // Drawing the starts and reading them can build tables: off the
        // reactor, in the spec builds' pool.
        let probed = filled.clone();
        let max_message = self.shared.config.limits.max_message_bytes;
        match self
            .shared
            .spec_builds
            .run(move || {
                let specs = settings::probe_specs(&probed)?;
                settings::round_fits(&probed, &specs, max_message)?;
                settings::check_starts(&specs)
            })
            .await
        {
            Ok(Ok(())) => {}
            Ok(Err((code, message))) => return self.error(id, code, message),
            Err(refused) => return self.reply(refused.answer(id)),
        };
        match self.shared.tournaments.create(filled).await {
            Ok(created) => {
                // The creator follows it from the start.
                self.outbox.tournaments.enter(&created.tournament);
                let _ = created
                    .tx
                    .send(TournamentCmd::Follow {
                        outbox: self.outbox.clone(),
                    })
                    .await;
                self.reply(ServerMsg::TournamentCreated {
                    id,
                    tournament: created.tournament,
                    code: created.code,
                    owner_token: created.owner_token,
                    state: created.state,
                });
            }
            Err((code, message)) => self.error(id, code, message),
        }
    }
}

/// Sends a command to a tournament of this node found by id or code, for the
/// connection (or the remote connection, `cluster/bus/remote.rs`) whose outbox is `outbox`.
/// `follows`: this connection will hear the tournament's events (counted
/// against the same limit as rooms, `seats_per_connection`).
pub(crate) fn to_tournament(
    shared: &Node,
    outbox: &Outbox,
    id: Option<RequestId>,
    key: &str,
    follows: bool,
    make: impl FnOnce(Outbox, Option<RequestId>) -> TournamentCmd,
) {
    let Some((tid, tx)) = shared.tournaments.find(key) else {
        outbox.send(&ServerMsg::error(
            id,
            ErrorCode::UnknownTournament,
            format!(
                "no tournament {key:?} in play (a finished one's state and standings: \
                 get_tournament)"
            ),
        ));
        return;
    };
    let entered = follows && !outbox.tournaments.contains(&tid);
    if entered {
        if over_tournament_limit(shared, outbox, &id) {
            return;
        }
        // Counted from now on, so that a `Gone` follows even if the
        // connection closes before the tournament answers; the tournament
        // takes it back if it refuses.
        outbox.tournaments.enter(&tid);
    }
    // Never waits for room in the queue (see `to_room`).
    let refusal = match tx.try_send(make(outbox.clone(), id.clone())) {
        Ok(()) => return,
        Err(mpsc::error::TrySendError::Full(_)) => super::room_busy(id),
        Err(mpsc::error::TrySendError::Closed(_)) => ServerMsg::error(
            id,
            ErrorCode::UnknownTournament,
            format!("tournament {key:?} has closed"),
        ),
    };
    if entered {
        outbox.tournaments.exit(&tid);
    }
    outbox.send(&refusal);
}

/// See [`Conn::over_tournament_limit`].
fn over_tournament_limit(shared: &Node, outbox: &Outbox, id: &Option<RequestId>) -> bool {
    super::over_seat_limit(
        shared,
        outbox,
        id,
        &outbox.tournaments,
        "follow at most {limit} unfinished tournaments",
    )
}

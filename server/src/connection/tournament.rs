//! The tournament messages of a connection: checked here, carried out by the
//! tournament's own task (`crate::tournament::actor`).

use grundy_protocol::wire::{
    ClientBody, ClientMsg, ErrorCode, RequestId, Scope, ServerBody, ServerMsg, TournamentSettings,
};

use tokio::sync::mpsc;

use super::{place, Conn};
use crate::accounts::Refused;
use crate::player::Player;
use crate::tournament::actor::TournamentCmd;
use crate::tournament::settings;

/// Most ratings one `get_ratings` returns.
const MAX_RATINGS: u32 = 1000;

impl Conn {
    pub(super) async fn dispatch_tournament(&mut self, msg: ClientMsg) {
        let ClientMsg { id, body } = msg;
        match body {
            ClientBody::CreateTournament { settings } => {
                if let Err(refused) = self.may(Scope::Tournaments, "create_tournament") {
                    return self.reply(refused.answer(id));
                }
                self.create_tournament(id, settings).await
            }
            ClientBody::ListTournaments => {
                let mut tournaments = self.shared.tournaments.list();
                if let Some(bus) = &self.shared.bus {
                    tournaments.extend(bus.other_tournaments().await);
                    tournaments.sort_by(|a, b| a.code.cmp(&b.code));
                }
                self.reply(ServerMsg::answer(
                    id,
                    ServerBody::Tournaments { tournaments },
                ));
            }
            ClientBody::GetTournament { tournament, round } => {
                if let Some((_, tx)) = self.shared.tournaments.find(&tournament) {
                    let get = TournamentCmd::Get {
                        outbox: self.outbox.clone(),
                        id: id.clone(),
                        round,
                    };
                    match tx.try_send(get) {
                        Ok(()) => return,
                        Err(mpsc::error::TrySendError::Full(_)) => {
                            return self.reply(place::busy(id))
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
                            _ => {
                                self.reply(ServerMsg::answer(id, ServerBody::Tournament { state }))
                            }
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
            ClientBody::GetRatings {
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
                self.reply(ServerMsg::answer(
                    id,
                    ServerBody::Ratings {
                        name: crate::rating_key::key_name(&game).to_string(),
                        family: game.clone(),
                        game,
                        ratings,
                    },
                ));
            }
            _ => self.error(id, ErrorCode::Internal, "not a tournament message"),
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
        if place::over_limit::<place::Tournament>(&self.shared, &self.outbox, &id) {
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
                    .send(TournamentCmd::Subscribe {
                        outbox: self.outbox.clone(),
                    })
                    .await;
                self.reply(ServerMsg::answer(
                    id,
                    ServerBody::TournamentCreated {
                        tournament: created.tournament,
                        code: created.code,
                        owner_token: created.owner_token,
                        state: created.state,
                    },
                ));
            }
            Err((code, message)) => self.error(id, code, message),
        }
    }
}

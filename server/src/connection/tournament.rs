//! The tournament messages of a connection: checked here, carried out by the
//! tournament's own task (`crate::tournament::actor`).

use grundy_protocol::wire::{ClientMsg, ErrorCode, RequestId, ServerMsg, TournamentSettings};

use super::{Conn, MAX_NAME};
use crate::house;
use crate::outbox::Outbox;
use crate::tournament::actor::TournamentCmd;
use crate::tournament::settings;

/// Most ratings one `get_ratings` returns.
const MAX_RATINGS: u32 = 1000;

impl Conn {
    pub(super) async fn dispatch_tournament(&mut self, msg: ClientMsg) {
        match msg {
            ClientMsg::CreateTournament { id, settings } => {
                self.create_tournament(id, settings).await
            }
            ClientMsg::ListTournaments { id } => {
                let tournaments = self.shared.tournaments.list();
                self.reply(ServerMsg::Tournaments { id, tournaments });
            }
            ClientMsg::Register {
                id,
                tournament,
                name,
            } => {
                let name = name
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty())
                    .or_else(|| self.name.clone());
                let name = match name {
                    Some(n) if n.chars().count() > MAX_NAME || n.chars().any(char::is_control) => {
                        return self.error(
                            id,
                            ErrorCode::BadRequest,
                            format!("name must be at most {MAX_NAME} printable characters"),
                        )
                    }
                    Some(n) if house::reserved_name(&n) => {
                        return self.error(id, ErrorCode::BadRequest, house::name_reserved(&n))
                    }
                    Some(n) => n,
                    None => {
                        return self.error(
                            id,
                            ErrorCode::BadRequest,
                            "a player needs a name: give `name` (or one in hello)",
                        )
                    }
                };
                self.send_to_tournament(id, &tournament, true, |outbox, id| {
                    TournamentCmd::Register { outbox, id, name }
                })
                .await
            }
            ClientMsg::Rejoin {
                id,
                tournament,
                token,
            } => {
                self.send_to_tournament(id, &tournament, true, |outbox, id| TournamentCmd::Rejoin {
                    outbox,
                    id,
                    token,
                })
                .await
            }
            ClientMsg::Withdraw {
                id,
                tournament,
                token,
            } => {
                self.send_to_tournament(id, &tournament, false, |outbox, id| {
                    TournamentCmd::Withdraw { outbox, id, token }
                })
                .await
            }
            ClientMsg::StartTournament {
                id,
                tournament,
                token,
            } => {
                self.send_to_tournament(id, &tournament, false, |outbox, id| TournamentCmd::Start {
                    outbox,
                    id,
                    token,
                })
                .await
            }
            ClientMsg::WatchTournament {
                id,
                tournament,
                since,
            } => {
                self.send_to_tournament(id, &tournament, true, |outbox, id| TournamentCmd::Watch {
                    outbox,
                    id,
                    since,
                })
                .await
            }
            ClientMsg::GetTournament { id, tournament } => {
                if let Some((_, tx)) = self.shared.tournaments.find(&tournament) {
                    let get = TournamentCmd::Get {
                        outbox: self.outbox.clone(),
                        id: id.clone(),
                    };
                    if tx.send(get).await.is_ok() {
                        return;
                    }
                    // It left memory in the meantime: read it as below.
                }
                // Finished and gone from memory: rebuilt from the store (which
                // reads its start: one at a time, like every spec build).
                let registry = self.shared.tournaments.clone();
                let key = tournament.clone();
                let _permit = self.shared.spec_builds.acquire().await;
                match tokio::task::spawn_blocking(move || registry.load(&key)).await {
                    Ok(Ok(Some(state))) => self.reply(ServerMsg::Tournament { id, state }),
                    Ok(Ok(None)) => self.error(
                        id,
                        ErrorCode::UnknownTournament,
                        format!("no tournament {tournament:?}"),
                    ),
                    Ok(Err(e)) => {
                        tracing::error!("reading a tournament failed: {e}");
                        self.error(id, ErrorCode::Internal, "could not read the tournament")
                    }
                    Err(_) => self.error(id, ErrorCode::Internal, "could not read the tournament"),
                }
            }
            ClientMsg::GetRatings { id, family, limit } => {
                let limit = limit.unwrap_or(100).min(MAX_RATINGS) as usize;
                // A preset (`kayles`, ...) is rated under its engine family.
                let family = engine_family(&family).unwrap_or(family);
                let ratings = self.shared.ratings.top(&family, limit);
                self.reply(ServerMsg::Ratings {
                    id,
                    family,
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

    /// Sends a command to a tournament found by id or code. `follows`: this
    /// connection will hear the tournament's events (counted against the same
    /// limit as rooms, `seats_per_connection`).
    async fn send_to_tournament(
        &mut self,
        id: Option<RequestId>,
        key: &str,
        follows: bool,
        make: impl FnOnce(Outbox, Option<RequestId>) -> TournamentCmd,
    ) {
        let Some((tid, tx)) = self.shared.tournaments.find(key) else {
            return self.error(
                id,
                ErrorCode::UnknownTournament,
                format!("no tournament {key:?} (finished ones: get_tournament by id)"),
            );
        };
        let entered = follows && !self.outbox.tournaments.contains(&tid);
        if entered {
            if self.over_tournament_limit(&id) {
                return;
            }
            // Counted from now on, so that a `Gone` follows even if the
            // connection closes before the tournament answers; the tournament
            // takes it back if it refuses.
            self.outbox.tournaments.enter(&tid);
        }
        if tx
            .send(make(self.outbox.clone(), id.clone()))
            .await
            .is_err()
        {
            if entered {
                self.outbox.tournaments.exit(&tid);
            }
            self.error(
                id,
                ErrorCode::UnknownTournament,
                format!("tournament {key:?} has closed"),
            );
        }
    }

    /// Refuses following one more tournament past `seats_per_connection`
    /// (answers the request and returns true when over the limit).
    fn over_tournament_limit(&self, id: &Option<RequestId>) -> bool {
        self.over_seat_limit(
            id,
            &self.outbox.tournaments,
            "follow at most {limit} unfinished tournaments",
        )
    }

    async fn create_tournament(&mut self, id: Option<RequestId>, asked: TournamentSettings) {
        let seed = u64::from_le_bytes(
            uuid::Uuid::new_v4().as_bytes()[..8]
                .try_into()
                .unwrap_or([0; 8]),
        );
        let filled = settings::fill(asked, &self.shared.config.limits, seed)
            .and_then(|s| settings::probe_specs(&s).map(|specs| (s, specs)));
        let (filled, specs) = match filled {
            Ok(x) => x,
            Err((code, message)) => return self.error(id, code, message),
        };
        if self.over_tournament_limit(&id) {
            return;
        }
        // Reading a spec can build a table: off the reactor, one at a time.
        let family = {
            let _permit = self.shared.spec_builds.acquire().await;
            tokio::task::spawn_blocking(move || settings::family_of(&specs)).await
        };
        let family = match family {
            Ok(Ok(f)) => f,
            Ok(Err((code, message))) => return self.error(id, code, message),
            Err(_) => return self.error(id, ErrorCode::Internal, "reading the spec failed"),
        };
        match self.shared.tournaments.create(filled, family).await {
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

/// The engine family a game id is rated under (`kayles` → `heaps`); None for
/// an unknown id.
fn engine_family(game: &str) -> Option<String> {
    let spec = grundy_protocol::random::random_spec(game, 0, None).ok()?;
    let start = grundy_protocol::Position::from_spec(&spec).ok()?;
    Some(start.family().id().to_string())
}

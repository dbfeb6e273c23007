//! A tournament's state as its event log builds it, and what it should do next.
//!
//! Nothing here does I/O: the actor (`actor.rs`) asks [`Core::next_step`] what
//! to do, does it (creates a room, records an event), and applies the event it
//! recorded with [`Core::apply`]. A restart replays the stored log through the
//! same `apply`, so a restored tournament is exactly the one that went down.

use grundy_protocol::wire::{
    Bye, EndReason, MatchResult, Pairing, PlayerKind, Standing, TournamentEvent,
    TournamentEventBody, TournamentFormat, TournamentGame, TournamentPlayer, TournamentSettings,
    TournamentState, TournamentStatus, TournamentSummary,
};
use serde_json::Value;

use super::pairing::{self, PlayerId, SwissPlayer};
use super::standings::{self, GameResult, TieBreaks};
use crate::player::AccountId;

/// A registered player of a tournament (who takes a seat is a
/// [`crate::player::Player`]).
#[derive(Debug, Clone)]
pub struct Registrant {
    pub name: String,
    /// The player's token's hash (`secret::hash`).
    pub token: String,
    pub withdrawn: bool,
    /// From the `registered` event (None before accounts).
    pub kind: Option<PlayerKind>,
    /// The account that registered, if any: only accounts are rated.
    pub account: Option<AccountId>,
}

/// What the tournament should do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Nothing until a command or a game's end.
    Wait,
    /// Pair round `round` (the pairing, the bye and the starts are given).
    PairRound {
        round: u32,
        pairings: Vec<Pairing>,
        bye: Option<u32>,
    },
    /// Start a game of the current round with these players on seats 0 and 1.
    StartGame {
        round: u32,
        players: [u32; 2],
        spec: Value,
    },
    /// A game one of whose players has withdrawn: forfeit it without playing
    /// by recording this `game_ended` event.
    Forfeit(TournamentEventBody),
    /// Every game of the current round is over.
    EndRound { round: u32 },
    /// The last round is over, or no further round can be paired.
    Finish { ended_early: Option<String> },
}

#[derive(Debug, Clone)]
pub struct Core {
    pub id: String,
    pub code: String,
    /// Every default filled in.
    pub settings: TournamentSettings,
    /// The game played, as its specs' `game` id names it (`kayles`): what
    /// ratings are kept under.
    pub game: String,
    /// A rating period is a round (every tournament created from schema
    /// version 7 on); false for the older ones, which rate each game as it
    /// ends.
    pub rated_by_round: bool,
    pub status: TournamentStatus,
    pub rounds: u32,
    pub round: u32,
    /// The current round has been closed (its `round_ended` recorded).
    round_closed: bool,
    pub players: Vec<Registrant>,
    /// The players who had not withdrawn when it started (the round robin's
    /// schedule is over them).
    participants: Vec<u32>,
    pub pairings: Vec<Pairing>,
    pub games: Vec<TournamentGame>,
    pub byes: Vec<Bye>,
    pub ended_early: Option<String>,
    pub events: Vec<TournamentEvent>,
}

impl Core {
    pub fn new(id: String, code: String, settings: TournamentSettings) -> Core {
        let game = match (&settings.spec, &settings.family) {
            (Some(spec), _) => crate::rating_key::key_of(spec),
            (None, family) => family.clone().unwrap_or_default(),
        };
        Core {
            id,
            code,
            settings,
            game,
            rated_by_round: true,
            status: TournamentStatus::Registering,
            rounds: 0,
            round: 0,
            round_closed: false,
            players: Vec::new(),
            participants: Vec::new(),
            pairings: Vec::new(),
            games: Vec::new(),
            byes: Vec::new(),
            ended_early: None,
            events: Vec::new(),
        }
    }

    pub fn seq(&self) -> u64 {
        self.events.len() as u64
    }

    /// Players not withdrawn.
    pub fn active(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.players.len() as u32).filter(|&p| !self.players[p as usize].withdrawn)
    }

    /// The player a token belongs to.
    pub fn player_of(&self, token: &str) -> Option<u32> {
        if token.is_empty() {
            return None;
        }
        self.players
            .iter()
            .position(|p| crate::secret::matches_hash(token, &p.token))
            .map(|p| p as u32)
    }

    /// The game a player is playing now, if any.
    pub fn running_game_of(&self, player: u32) -> Option<&TournamentGame> {
        self.games
            .iter()
            .find(|g| g.result.is_none() && g.players.contains(&player))
    }

    /// Records an event in the state (after it was made durable). `players` of
    /// a `registered` event must have been pushed already (it carries the token).
    pub fn apply(&mut self, event: TournamentEvent) {
        match &event.body {
            TournamentEventBody::Registered {
                player,
                player_kind,
                ..
            } => {
                if let Some(p) = self.players.get_mut(*player as usize) {
                    p.kind = *player_kind;
                }
            }
            TournamentEventBody::Withdrawn { player } => {
                if let Some(p) = self.players.get_mut(*player as usize) {
                    p.withdrawn = true;
                }
            }
            TournamentEventBody::Started { rounds } => {
                self.status = TournamentStatus::Running;
                self.rounds = *rounds;
                self.participants = self.active().collect();
            }
            TournamentEventBody::RoundStarted {
                round,
                pairings,
                bye,
            } => {
                self.round = *round;
                self.round_closed = false;
                self.pairings.extend(pairings.iter().cloned());
                if let Some(player) = bye {
                    self.byes.push(Bye {
                        round: *round,
                        player: *player,
                    });
                }
            }
            TournamentEventBody::GameStarted {
                round,
                room,
                players,
            } => self.games.push(TournamentGame {
                round: *round,
                room: Some(room.clone()),
                players: *players,
                result: None,
                winner: None,
            }),
            TournamentEventBody::GameEnded {
                round,
                room,
                players,
                result,
                winner,
            } => {
                let running = room.as_ref().and_then(|r| {
                    self.games
                        .iter_mut()
                        .find(|g| g.room.as_ref() == Some(r) && g.result.is_none())
                });
                match running {
                    Some(game) => {
                        game.result = Some(*result);
                        game.winner = *winner;
                    }
                    // A forfeit: never started.
                    None => self.games.push(TournamentGame {
                        round: *round,
                        room: room.clone(),
                        players: *players,
                        result: Some(*result),
                        winner: *winner,
                    }),
                }
            }
            TournamentEventBody::RoundEnded { .. } => self.round_closed = true,
            TournamentEventBody::Finished { ended_early, .. } => {
                self.status = TournamentStatus::Finished;
                self.ended_early = ended_early.clone();
            }
        }
        self.events.push(event);
    }

    /// The game of `round` with `players` on seats 0 and 1, if started.
    fn game(&self, round: u32, players: [u32; 2]) -> Option<&TournamentGame> {
        self.games
            .iter()
            .find(|g| g.round == round && g.players == players)
    }

    /// Whether the next step pairs a round (a search that can take a while
    /// for a large Swiss).
    pub fn pairing_due(&self) -> bool {
        self.status == TournamentStatus::Running && (self.round == 0 || self.round_closed)
    }

    /// What to do next (see [`Step`]).
    pub fn next_step(&self) -> Step {
        if self.status != TournamentStatus::Running {
            return Step::Wait;
        }
        if self.round == 0 || self.round_closed {
            if self.round >= self.rounds {
                return Step::Finish { ended_early: None };
            }
            return self.pair(self.round + 1);
        }
        let mut waiting = false;
        for p in self.pairings.iter().filter(|p| p.round == self.round) {
            let [a, b] = p.players;
            // The pairing's two games, one after the other: seats swapped.
            for players in [[a, b], [b, a]] {
                match self.game(self.round, players) {
                    None => return self.begin(p, players),
                    Some(g) if g.result.is_none() => {
                        waiting = true;
                        break;
                    }
                    Some(_) => {}
                }
            }
        }
        if waiting {
            Step::Wait
        } else {
            Step::EndRound { round: self.round }
        }
    }

    /// Starts a game, or forfeits it if a player has withdrawn.
    fn begin(&self, pairing: &Pairing, players: [u32; 2]) -> Step {
        let gone = players.map(|p| self.players.get(p as usize).is_none_or(|x| x.withdrawn));
        if gone[0] || gone[1] {
            let winner = match gone {
                [true, false] => Some(players[1]),
                [false, true] => Some(players[0]),
                _ => None,
            };
            let seat = winner.and_then(|w| players.iter().position(|&p| p == w));
            return Step::Forfeit(TournamentEventBody::GameEnded {
                round: self.round,
                room: None,
                players,
                result: MatchResult {
                    winner: seat.map(|s| s as u8),
                    reason: EndReason::Forfeit,
                },
                winner,
            });
        }
        Step::StartGame {
            round: self.round,
            players,
            spec: pairing.spec.clone(),
        }
    }

    /// Pairs round `round`, or says why the tournament must end.
    fn pair(&self, round: u32) -> Step {
        let paired = match self.settings.format {
            TournamentFormat::RoundRobin => pairing::round_robin(&self.participants, round),
            TournamentFormat::Swiss => {
                let ranked = self.ranking();
                let active: Vec<SwissPlayer> = ranked
                    .iter()
                    .filter(|s| !self.players[s.player as usize].withdrawn)
                    .map(|s| SwissPlayer {
                        id: s.player,
                        score: s.score,
                        had_bye: self.byes.iter().any(|b| b.player == s.player),
                        opponents: self.opponents(s.player),
                    })
                    .collect();
                if active.len() < 2 {
                    return Step::Finish {
                        ended_early: Some(format!(
                            "fewer than two players remain after round {}",
                            round - 1
                        )),
                    };
                }
                pairing::swiss(&active)
            }
        };
        let Some(paired) = paired else {
            return Step::Finish {
                ended_early: Some(format!(
                    "no round {round} can be paired without a rematch or a second bye"
                )),
            };
        };
        let pairings = paired
            .pairs
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| Pairing {
                round,
                players: [a, b],
                spec: self.start_spec(round, i as u32),
            })
            .collect();
        // A withdrawn player sitting out earns nothing.
        let bye = paired
            .bye
            .filter(|&p| self.players.get(p as usize).is_some_and(|x| !x.withdrawn));
        Step::PairRound {
            round,
            pairings,
            bye,
        }
    }

    /// Everyone `player` has been paired with.
    fn opponents(&self, player: PlayerId) -> Vec<PlayerId> {
        self.pairings
            .iter()
            .filter_map(|p| match p.players {
                [a, b] if a == player => Some(b),
                [a, b] if b == player => Some(a),
                _ => None,
            })
            .collect()
    }

    /// The start of pairing `index` of `round`: the fixed spec, or a random
    /// start drawn from the tournament's seed (so a replay draws the same).
    pub fn start_spec(&self, round: u32, index: u32) -> Value {
        if let Some(spec) = &self.settings.spec {
            return spec.clone();
        }
        let seed = mix(self.settings.seed.unwrap_or(0), round, index);
        let family = self.settings.family.as_deref().unwrap_or("nim");
        // Checked at creation: the family and size are valid.
        grundy_protocol::random::random_spec(family, seed, self.settings.size)
            .unwrap_or(Value::Null)
    }

    /// Every ended game; one without a winner counts as lost by both.
    fn results(&self) -> Vec<GameResult> {
        self.games
            .iter()
            .filter(|g| g.result.is_some())
            .map(|g| GameResult {
                round: g.round,
                players: g.players,
                winner: g
                    .winner
                    .and_then(|w| g.players.iter().position(|&p| p == w)),
            })
            .collect()
    }

    fn ranking(&self) -> Vec<standings::Standing> {
        let ids: Vec<PlayerId> = (0..self.players.len() as u32).collect();
        let byes: Vec<(u32, PlayerId)> = self.byes.iter().map(|b| (b.round, b.player)).collect();
        let order = match self.settings.format {
            TournamentFormat::Swiss => TieBreaks::Swiss,
            TournamentFormat::RoundRobin => TieBreaks::RoundRobin,
        };
        standings::standings(&ids, &self.results(), &byes, order)
    }

    /// The standings, with each player's current rating from `rating`.
    pub fn standings(&self, rating: impl Fn(&Registrant) -> Option<f64>) -> Vec<Standing> {
        self.ranking()
            .into_iter()
            .filter_map(|s| {
                let p = self.players.get(s.player as usize)?;
                Some(Standing {
                    rank: s.rank,
                    player: s.player,
                    name: p.name.clone(),
                    player_kind: p.kind,
                    score: s.score,
                    games: s.games,
                    wins: s.wins,
                    losses: s.losses,
                    byes: s.byes,
                    buchholz: s.buchholz,
                    sonneborn_berger: s.sonneborn_berger,
                    rating: rating(p),
                    withdrawn: p.withdrawn,
                })
            })
            .collect()
    }

    pub fn state(&self, rating: impl Fn(&Registrant) -> Option<f64>) -> TournamentState {
        TournamentState {
            only_round: None,
            tournament: self.id.clone(),
            code: self.code.clone(),
            settings: self.settings.clone(),
            status: self.status,
            round: self.round,
            rounds: self.rounds,
            players: self
                .players
                .iter()
                .enumerate()
                .map(|(i, p)| TournamentPlayer {
                    player: i as u32,
                    name: p.name.clone(),
                    player_kind: p.kind,
                    withdrawn: p.withdrawn,
                })
                .collect(),
            pairings: self.pairings.clone(),
            games: self.games.clone(),
            byes: self.byes.clone(),
            standings: self.standings(rating),
            ended_early: self.ended_early.clone(),
            seq: self.seq(),
        }
    }

    pub fn summary(&self) -> TournamentSummary {
        TournamentSummary {
            tournament: self.id.clone(),
            code: self.code.clone(),
            name: self.settings.name.clone(),
            game: self.game.clone(),
            game_name: grundy_protocol::names::game_name(&self.game).to_string(),
            format: self.settings.format,
            status: self.status,
            players: self.active().count() as u32,
            max_players: self.settings.max_players.unwrap_or(0),
            round: self.round,
            rounds: self.rounds,
        }
    }

    /// The result a game's room reported, as the tournament records it: the
    /// winning player, if any.
    pub fn winner_of(&self, players: [u32; 2], result: &MatchResult) -> Option<u32> {
        result.winner.and_then(|s| players.get(s as usize).copied())
    }
}

/// A seed per pairing from the tournament's seed (SplitMix64's finaliser).
fn mix(seed: u64, round: u32, index: u32) -> u64 {
    let mut z = seed ^ ((round as u64) << 32 | index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use grundy_protocol::wire::Clock;
    use serde_json::json;

    use super::*;

    fn core(format: TournamentFormat, rounds: Option<u32>, names: &[&str]) -> Core {
        let settings = TournamentSettings {
            name: None,
            spec: Some(json!({"game": "nim", "heaps": [1, 2]})),
            family: None,
            size: None,
            seed: Some(1),
            format,
            rounds,
            clock: Some(Clock {
                initial_ms: 1000,
                increment_ms: 0,
            }),
            max_players: Some(64),
            rated: true,
        };
        let mut core = Core::new("t".into(), "TCODE".into(), settings);
        for (i, name) in names.iter().enumerate() {
            core.players.push(Registrant {
                name: name.to_string(),
                token: format!("tok{i}"),
                withdrawn: false,
                kind: None,
                account: None,
            });
            record(
                &mut core,
                TournamentEventBody::Registered {
                    player: i as u32,
                    name: name.to_string(),
                    player_kind: None,
                },
            );
        }
        core
    }

    fn record(core: &mut Core, body: TournamentEventBody) {
        let seq = core.seq() + 1;
        core.apply(TournamentEvent { seq, body });
    }

    /// Does the steps as the actor would, with seat 0 winning every game,
    /// until the tournament waits with nothing running or finishes. Returns
    /// the steps taken.
    fn run(core: &mut Core) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut rooms = 0;
        loop {
            let step = core.next_step();
            steps.push(step.clone());
            match step {
                Step::Wait => {
                    // Finish the running games, seat 0 winning.
                    let running: Vec<TournamentGame> = core
                        .games
                        .iter()
                        .filter(|g| g.result.is_none())
                        .cloned()
                        .collect();
                    if running.is_empty() {
                        return steps;
                    }
                    for g in running {
                        let result = MatchResult {
                            winner: Some(0),
                            reason: EndReason::Rules,
                        };
                        let winner = core.winner_of(g.players, &result);
                        record(
                            core,
                            TournamentEventBody::GameEnded {
                                round: g.round,
                                room: g.room.clone(),
                                players: g.players,
                                result,
                                winner,
                            },
                        );
                    }
                }
                Step::PairRound {
                    round,
                    pairings,
                    bye,
                } => record(
                    core,
                    TournamentEventBody::RoundStarted {
                        round,
                        pairings,
                        bye,
                    },
                ),
                Step::StartGame { round, players, .. } => {
                    rooms += 1;
                    record(
                        core,
                        TournamentEventBody::GameStarted {
                            round,
                            room: format!("room{rooms}"),
                            players,
                        },
                    )
                }
                Step::Forfeit(game_ended) => record(core, game_ended),
                Step::EndRound { round } => record(
                    core,
                    TournamentEventBody::RoundEnded {
                        round,
                        standings: Vec::new(),
                    },
                ),
                Step::Finish { ended_early } => {
                    record(
                        core,
                        TournamentEventBody::Finished {
                            standings: Vec::new(),
                            ended_early,
                        },
                    );
                    steps.push(core.next_step());
                    return steps;
                }
            }
        }
    }

    #[test]
    fn nothing_happens_before_the_start() {
        let core = core(TournamentFormat::RoundRobin, None, &["a", "b"]);
        assert_eq!(core.next_step(), Step::Wait);
        assert_eq!(core.status, TournamentStatus::Registering);
    }

    #[test]
    fn a_round_robin_plays_both_seat_orders_of_every_pairing_then_finishes() {
        let mut core = core(TournamentFormat::RoundRobin, None, &["a", "b", "c"]);
        record(&mut core, TournamentEventBody::Started { rounds: 3 });
        let steps = run(&mut core);
        assert_eq!(core.status, TournamentStatus::Finished);
        assert_eq!(core.ended_early, None);
        // Each of the 3 pairings: game one, then game two with the seats swapped.
        let starts: Vec<[u32; 2]> = steps
            .iter()
            .filter_map(|s| match s {
                Step::StartGame { players, .. } => Some(*players),
                _ => None,
            })
            .collect();
        assert_eq!(starts.len(), 6);
        for pair in starts.chunks(2) {
            assert_eq!(pair[0], [pair[1][1], pair[1][0]], "{starts:?}");
        }
        assert_eq!(core.byes.len(), 3);
        // Seat 0 always won: each pairing split 1–1, plus a bye each.
        let standings = core.standings(|_| None);
        assert!(
            standings.iter().all(|s| s.score == 4 && s.rank == 1),
            "{standings:?}"
        );
        assert_eq!(steps.last(), Some(&Step::Wait));
    }

    #[test]
    fn games_of_a_withdrawn_player_are_forfeited_to_the_opponent() {
        let mut core = core(TournamentFormat::RoundRobin, None, &["a", "b", "c", "d"]);
        record(&mut core, TournamentEventBody::Started { rounds: 3 });
        record(&mut core, TournamentEventBody::Withdrawn { player: 3 });
        let steps = run(&mut core);
        let forfeits: Vec<&Step> = steps
            .iter()
            .filter(|s| matches!(s, Step::Forfeit { .. }))
            .collect();
        assert_eq!(forfeits.len(), 6, "3 pairings of d, 2 games each");
        for f in forfeits {
            let Step::Forfeit(TournamentEventBody::GameEnded {
                players,
                winner,
                result,
                ..
            }) = f
            else {
                panic!("not a forfeit: {f:?}")
            };
            assert_eq!(result.reason, EndReason::Forfeit);
            assert!(players.contains(&3));
            assert_ne!(*winner, Some(3));
            assert!(winner.is_some());
        }
        let d = core
            .standings(|_| None)
            .into_iter()
            .find(|s| s.player == 3)
            .unwrap();
        assert!(d.withdrawn);
        assert_eq!(d.score, 0);
    }

    #[test]
    fn a_swiss_ends_early_when_fewer_than_two_players_remain() {
        let mut core = core(TournamentFormat::Swiss, Some(3), &["a", "b", "c"]);
        record(&mut core, TournamentEventBody::Started { rounds: 3 });
        record(&mut core, TournamentEventBody::Withdrawn { player: 0 });
        record(&mut core, TournamentEventBody::Withdrawn { player: 1 });
        let steps = run(&mut core);
        assert_eq!(core.status, TournamentStatus::Finished);
        assert!(
            core.ended_early
                .as_deref()
                .is_some_and(|why| why.contains("fewer than two")),
            "{steps:?}"
        );
    }

    #[test]
    fn a_swiss_never_pairs_a_withdrawn_player() {
        let mut core = core(TournamentFormat::Swiss, Some(3), &["a", "b", "c", "d", "e"]);
        record(&mut core, TournamentEventBody::Started { rounds: 3 });
        record(&mut core, TournamentEventBody::Withdrawn { player: 4 });
        run(&mut core);
        assert_eq!(core.status, TournamentStatus::Finished);
        assert!(core.pairings.iter().all(|p| !p.players.contains(&4)));
        assert!(core.byes.is_empty(), "4 active players need no bye");
        assert_eq!(core.games.len(), 3 * 2 * 2);
    }

    #[test]
    fn random_starts_depend_on_the_seed_round_and_pairing_only() {
        let mut core = core(TournamentFormat::Swiss, Some(3), &["a", "b"]);
        core.settings.spec = None;
        core.settings.family = Some("kayles".into());
        let a = core.start_spec(1, 0);
        assert_eq!(a, core.start_spec(1, 0));
        assert_ne!(a, core.start_spec(1, 1));
        assert_ne!(a, core.start_spec(2, 0));
        assert_eq!(a["game"], "kayles");
        core.settings.seed = Some(2);
        assert_ne!(a, core.start_spec(1, 0));
    }
}

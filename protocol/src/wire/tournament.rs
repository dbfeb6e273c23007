//! The tournament part of protocol v1 (docs/protocol.md, "Tournaments"): what a
//! tournament is made of as clients see it, and its event log.
//!
//! A tournament pairs its players round by round; each pairing plays two games
//! from the same start with the seats swapped (a perfect player wins every
//! N-position it moves first in, so one game alone would reward the seat, not the
//! player). A game won is a point; a bye is worth a pairing's two points.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Clock, MatchResult, PlayerKind};

/// How players are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TournamentFormat {
    /// Everyone meets everyone once (circle method); n − 1 rounds for n players,
    /// n when n is odd (each sits out once, with a bye).
    RoundRobin,
    /// Players with equal scores meet, never twice; byes for odd counts.
    Swiss,
}

/// What a tournament plays: asked for in `create_tournament`; in a tournament's
/// state every default is filled in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentSettings {
    /// A title shown in lists: at most 80 characters, checked as a guest's
    /// name is (no control, direction-changing or invisible characters, no
    /// pile of combining marks).
    #[serde(default)]
    pub name: Option<String>,
    /// One start for every game (a game spec). Give this or `family`.
    #[serde(default)]
    pub spec: Option<Value>,
    /// Random starts of this game id, a new one per pairing.
    #[serde(default)]
    pub family: Option<String>,
    /// Size bound of the random starts (per family, as in `create_room`).
    #[serde(default)]
    pub size: Option<u64>,
    /// Seeds the random starts: the same seed and pairings give the same starts.
    /// Chosen by the server when left out.
    #[serde(default)]
    pub seed: Option<u64>,
    pub format: TournamentFormat,
    /// Swiss: the number of rounds (required). Round robin: at most this many
    /// (default: all). Cut to what the players at the start allow.
    #[serde(default)]
    pub rounds: Option<u32>,
    /// The time control of every game (default 120 s + 2 s per move).
    #[serde(default)]
    pub clock: Option<Clock>,
    /// Registration closes at this many players (default and most: see limits).
    #[serde(default)]
    pub max_players: Option<u32>,
    /// Whether games change the players' ratings (default false). Only
    /// accounts may create a rated tournament or register in one.
    #[serde(default)]
    pub rated: bool,
}

/// Where a tournament is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TournamentStatus {
    /// Players may register; the creator starts it.
    Registering,
    Running,
    Finished,
}

/// A registered player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentPlayer {
    /// The player's number: registration order, from 0.
    pub player: u32,
    pub name: String,
    /// Null in tournaments recorded before accounts.
    #[serde(default)]
    pub player_kind: Option<PlayerKind>,
    /// Left the tournament: their remaining games are forfeited.
    pub withdrawn: bool,
}

/// Two players paired in a round, and the start both their games use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Pairing {
    pub round: u32,
    /// The player on seat 0 of the first game; the second game swaps the seats.
    pub players: [u32; 2],
    pub spec: Value,
}

/// One game of a tournament.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentGame {
    pub round: u32,
    /// The room it is played in (fetch its moves with `get_match`); null for a
    /// game forfeited without being played.
    pub room: Option<String>,
    /// The players on seat 0 and seat 1.
    pub players: [u32; 2],
    /// Null while the game runs.
    pub result: Option<MatchResult>,
    /// The winning player, if any.
    pub winner: Option<u32>,
}

/// A bye: a round a player sat out, worth 2 points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Bye {
    pub round: u32,
    pub player: u32,
}

/// A line of the standings (docs/protocol.md, "Standings and tie-breaks").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Standing {
    /// Equal score and tie-breaks share a rank (1, 2, 2, 4).
    pub rank: u32,
    pub player: u32,
    pub name: String,
    #[serde(default)]
    pub player_kind: Option<PlayerKind>,
    /// Games won, plus 2 per bye.
    pub score: u32,
    pub games: u32,
    pub wins: u32,
    pub losses: u32,
    pub byes: u32,
    /// The sum of the scores of every opponent met.
    pub buchholz: u32,
    /// The sum, over games won, of the beaten opponent's score.
    pub sonneborn_berger: u32,
    /// The player's Glicko-2 rating in this game, if rated.
    pub rating: Option<f64>,
    pub withdrawn: bool,
}

/// A tournament's whole state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentState {
    pub tournament: String,
    pub code: String,
    pub settings: TournamentSettings,
    pub status: TournamentStatus,
    /// The round being played (0 before the start).
    pub round: u32,
    /// Rounds planned (0 before the start).
    pub rounds: u32,
    pub players: Vec<TournamentPlayer>,
    pub pairings: Vec<Pairing>,
    pub games: Vec<TournamentGame>,
    pub byes: Vec<Bye>,
    pub standings: Vec<Standing>,
    /// Why the tournament ended before its last round, if it did.
    pub ended_early: Option<String>,
    /// The sequence number of the last event included.
    pub seq: u64,
    /// When set, `pairings` and `games` hold only this round's: asked for
    /// with `get_tournament`'s `round`, or cut so because the whole state
    /// would not fit in one message (`max_message_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_round: Option<u32>,
}

impl TournamentState {
    /// Keeps the pairings and games of `round` only, and says so.
    pub fn keep_round(&mut self, round: u32) {
        self.pairings.retain(|p| p.round == round);
        self.games.retain(|g| g.round == round);
        self.only_round = Some(round);
    }

    /// [`keep_round`](Self::keep_round) for a round a client asked for:
    /// Err (what is wrong, for a `bad_request`) unless the tournament can
    /// have it — 1 to `rounds` once started; before the start, when no
    /// round is planned yet, any round from 1 (and every one is empty).
    pub fn keep_asked_round(&mut self, round: u32) -> Result<(), String> {
        if round == 0 {
            return Err("round: rounds count from 1, got 0".into());
        }
        if self.rounds > 0 && round > self.rounds {
            return Err(format!(
                "round: must be 1 to {} (the tournament's rounds), got {round}",
                self.rounds
            ));
        }
        self.keep_round(round);
        Ok(())
    }
}

/// A line of the tournament list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentSummary {
    pub tournament: String,
    pub code: String,
    pub name: Option<String>,
    /// The game played, as its specs' `game` id names it (`nim`, `kayles`,
    /// `dawson`, ...): what its ratings are kept under.
    pub game: String,
    /// The game's own name ("Kayles", "Dawson's Kayles").
    #[serde(default)]
    pub game_name: String,
    pub format: TournamentFormat,
    pub status: TournamentStatus,
    pub players: u32,
    pub max_players: u32,
    pub round: u32,
    pub rounds: u32,
}

/// An entry of a tournament's event log; sequence numbers start at 1, no gaps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TournamentEventBody {
    Registered {
        player: u32,
        name: String,
        #[serde(default)]
        player_kind: Option<PlayerKind>,
    },
    /// The player left; their remaining games are forfeited.
    Withdrawn { player: u32 },
    /// Registration closed.
    Started { rounds: u32 },
    RoundStarted {
        round: u32,
        pairings: Vec<Pairing>,
        bye: Option<u32>,
    },
    GameStarted {
        round: u32,
        room: String,
        /// Seat 0 and seat 1.
        players: [u32; 2],
    },
    GameEnded {
        round: u32,
        /// Null for a game forfeited without being played.
        room: Option<String>,
        players: [u32; 2],
        result: MatchResult,
        winner: Option<u32>,
    },
    RoundEnded {
        round: u32,
        standings: Vec<Standing>,
    },
    Finished {
        standings: Vec<Standing>,
        /// Why it ended before its last round, if it did.
        ended_early: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentEvent {
    pub seq: u64,
    #[serde(flatten)]
    pub body: TournamentEventBody,
}

/// A player's rating in one game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlayerRating {
    /// The account's username; for an unclaimed rating, the name it was
    /// recorded under.
    pub player: String,
    /// The account's kind; null for an unclaimed rating.
    #[serde(default)]
    pub player_kind: Option<PlayerKind>,
    /// Recorded under a plain name before accounts: history that no account
    /// owns (and none can claim).
    #[serde(default)]
    pub unclaimed: bool,
    /// Glicko-2, on the familiar scale (a new player starts at 1500).
    pub rating: f64,
    /// How uncertain the rating is (350 for a new player).
    pub deviation: f64,
    pub volatility: f64,
    /// Rated games played.
    pub games: u64,
}

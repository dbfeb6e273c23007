//! One module per game family of docs/games.md.

#[macro_use]
mod families;

// The families (declared here, not by `families!`, so that rustfmt sees them).
pub mod coins;
pub mod darkraft;
pub mod graph;
pub mod heaps;
pub mod moore;
pub mod new_stone;
pub mod nim;
pub mod staircase;
pub mod sum;
pub mod treblecross;
pub mod twist;
pub mod wythoff;

pub mod grundys_game;
pub mod misere;
pub mod position;
pub mod rule;
pub mod sequence;

use serde_json::Value;

use crate::draw::SplitMix64;
use crate::error::SpecError;
use crate::json::{Fail, Obj};

// Every game family: its module, its variant of `Family`, `Position` and
// `Move` (its position and move types), and its id. A new family is its
// module (which implements `Rules`, `Strategy` and `Entry`; declared above)
// and one line here.
// The order is the catalogue's: lists show it, and random `mix` starts draw
// from it (so it is part of every stored `mix` seed).
families! {
    nim: Nim(Nim, TakeMove) = "nim",
    heaps: Heaps(Heaps, HeapMove) = "heaps",
    wythoff: Wythoff(Wythoff, WythoffMove) = "wythoff",
    moore: Moore(Moore, MooreMove) = "moore",
    new_stone: NewStone(NewStone, NewStoneMove) = "new-stone",
    staircase: Staircase(Staircase, SlideMove) = "staircase",
    treblecross: Treblecross(Treblecross, CellMove) = "treblecross",
    darkraft: Darkraft(Darkraft, CellPick) = "darkraft",
    twist: Twist(Twist, TwistMove) = "twist",
    graph: Graph(Graph, TokenMove) = "graph",
    coins: Coins(Coins, CoinMove) = "coins",
    sum: Sum(Sum, PartMove) = "sum",
}

/// What the catalogue knows of a family besides its rules: its game ids, how
/// a spec of one of them is read, and how a random start of one is drawn.
pub(crate) trait Entry: Sized {
    /// The family's game ids (the family and its presets), in the order
    /// lists show them.
    const GAMES: &'static [GameId];

    /// Reads the rest of a spec whose `game` is `id`, one of [`Entry::GAMES`];
    /// the error names the field that is wrong.
    fn read(o: &mut Obj, id: &str) -> Result<Self, Fail>;

    /// A random start spec of the game `id`, one of [`Entry::GAMES`], of size
    /// bound `s` (within the game's limits): a pure function of what `rng`
    /// draws, whose order is part of every stored seed (see [`crate::random`]).
    fn random(id: &str, s: u64, rng: &mut SplitMix64) -> Result<Value, SpecError>;
}

/// A game id a spec may name: a family (`heaps`) or a preset of one
/// (`kayles`), with what the catalogue knows of it. Each family's module
/// declares its own (`GAMES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GameId {
    /// The id in a spec's `game` field and on the command line.
    pub id: &'static str,
    /// The game's own name, for people (the lobby).
    pub name: &'static str,
    /// Whether reading a spec may build a table (Grundy sequences of octal
    /// and subtraction rules, Darkraft's rectangles, a graph's values...),
    /// which can take up to a couple of seconds; the others are read in
    /// time linear in the spec.
    pub builds_tables: bool,
    /// Random starts ([`crate::random`]): the size when none is given (a
    /// start small enough for people).
    pub default_size: u64,
    /// The largest size a random start may ask for.
    pub max_size: u64,
    /// The largest size a part of a random `mix` is drawn with; None: a
    /// `mix` draws no part of this game.
    pub in_mix: Option<u64>,
    /// Whether a random start of size 1 is over before the first move (its
    /// moves need room): a `mix` of size 1 draws no part of it.
    pub over_at_1: bool,
    /// Whether a spec of this game may ask for misère play (`"misere": true`).
    pub misere: bool,
    /// Whether this id names random starts only (`mix`), never a spec.
    pub random_only: bool,
}

impl GameId {
    /// A game id that builds no table, is drawn in no `mix`, and has a move
    /// at every size; random starts of `default_size` when none is given,
    /// up to `max_size`.
    pub const fn new(
        id: &'static str,
        name: &'static str,
        default_size: u64,
        max_size: u64,
    ) -> Self {
        GameId {
            id,
            name,
            builds_tables: false,
            default_size,
            max_size,
            in_mix: None,
            over_at_1: false,
            misere: false,
            random_only: false,
        }
    }

    pub const fn builds_tables(self) -> Self {
        GameId {
            builds_tables: true,
            ..self
        }
    }

    pub const fn in_mix(self, max_size: u64) -> Self {
        GameId {
            in_mix: Some(max_size),
            ..self
        }
    }

    pub const fn over_at_1(self) -> Self {
        GameId {
            over_at_1: true,
            ..self
        }
    }

    pub const fn misere(self) -> Self {
        GameId {
            misere: true,
            ..self
        }
    }

    pub const fn random_only(self) -> Self {
        GameId {
            random_only: true,
            ..self
        }
    }
}

/// Every game id of a spec (the families and their presets), family by
/// family.
pub fn catalogue() -> impl Iterator<Item = &'static GameId> {
    CATALOGUE.iter().flat_map(|family| family.iter())
}

/// The catalogue's entry for a game id; None for an unknown id.
pub fn game(id: &str) -> Option<&'static GameId> {
    catalogue().find(|g| g.id == id)
}

/// Whether building a position of this game id may build a table (see
/// [`GameId::builds_tables`]); an unknown or missing id is counted in.
pub fn builds_tables(id: Option<&str>) -> bool {
    id.and_then(game).is_none_or(|g| g.builds_tables)
}

/// A random start spec of `game` (any game id of docs/protocol.md's spec table,
/// including the presets `bash`, `subtraction`, `kayles`, `dawson`, `lasker`),
/// deterministic in `seed`; `size` bounds the position's size per game (see the
/// [`crate::random`] module doc), None = a small default for people.
///
/// Refused (the error names the field): an unknown `game`; a `size` of 0 or
/// above the game's limit.
pub fn random_spec(game: &str, seed: u64, size: Option<u64>) -> Result<Value, SpecError> {
    let Some((
        &GameId {
            id,
            default_size: default,
            max_size: limit,
            ..
        },
        family,
    )) = self::game(game).zip(Family::of_game(game))
    else {
        let ids: Vec<&str> = catalogue().map(|g| g.id).collect();
        return Err(SpecError::new(
            "game",
            format!("unknown game {game:?} (known: {})", ids.join(", ")),
        ));
    };
    let s = size.unwrap_or(default);
    if s == 0 {
        return Err(SpecError::new("size", "must be at least 1, got 0"));
    }
    if s > limit {
        return Err(SpecError::new(
            "size",
            format!("must be at most {limit} for {id}, got {s}"),
        ));
    }
    family.random(id, s, &mut SplitMix64::new(seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_ids_are_unique() {
        let ids: Vec<&str> = catalogue().map(|g| g.id).collect();
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
    }

    #[test]
    fn only_games_read_in_linear_time_build_no_tables() {
        let without: Vec<&str> = catalogue()
            .filter(|g| !g.builds_tables)
            .map(|g| g.id)
            .collect();
        assert_eq!(
            without,
            [
                "nim",
                "wythoff",
                "moore",
                "new-stone",
                "staircase",
                "twist",
                "mock-turtles",
                "ruler"
            ]
        );
        assert!(builds_tables(Some("kayles")));
        assert!(builds_tables(Some("no-such")));
        assert!(builds_tables(None));
    }
}

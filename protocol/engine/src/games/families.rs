//! The `families!` macro: from the one list of families in `games/mod.rs`,
//! [`Family`], [`Position`] and [`Move`] (each dispatching to the family),
//! and the catalogue of their game ids. A family's module holds
//! everything else of it: its rules and strategy, and its [`Entry`] (game
//! ids, spec reader, random starts).
//!
//! [`Family`]: crate::Family
//! [`Position`]: crate::Position
//! [`Move`]: crate::Move
//! [`Entry`]: super::Entry

macro_rules! families {
    ($($module:ident: $variant:ident($pos:ident, $mv:ident) = $id:literal),* $(,)?) => {
        /// A game family of docs/games.md, by its public id.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Family { $($variant),* }

        impl Family {
            pub const ALL: &'static [Family] = &[$(Family::$variant),*];

            /// The id used on the wire, in specs and on the command line.
            pub fn id(self) -> &'static str {
                match self { $(Family::$variant => $id),* }
            }

            pub fn from_id(id: &str) -> Option<Family> {
                Family::ALL.iter().copied().find(|f| f.id() == id)
            }

            /// The family a game id of the catalogue belongs to (`kayles`:
            /// heaps); None for an id no family declares.
            pub fn of_game(id: &str) -> Option<Family> {
                $(if <$module::$pos as $crate::games::Entry>::GAMES.iter().any(|g| g.id == id) {
                    return Some(Family::$variant);
                })*
                None
            }

            /// Reads a spec of the game `id`, one of this family's.
            pub(crate) fn read(self, o: &mut $crate::json::Obj, id: &str) -> Result<Position, $crate::json::Fail> {
                match self { $(Family::$variant => <$module::$pos as $crate::games::Entry>::read(o, id).map(Position::$variant)),* }
            }

            /// A random start spec of the game `id`, one of this family's,
            /// of size bound `s` (already checked against the game's limits).
            pub(crate) fn random(self, id: &str, s: u64, rng: &mut $crate::draw::SplitMix64) -> Result<serde_json::Value, $crate::error::SpecError> {
                match self { $(Family::$variant => <$module::$pos as $crate::games::Entry>::random(id, s, rng)),* }
            }
        }

        /// Every game id, family by family, in the order lists show them
        /// (and random `mix` starts draw from: the order is part of them).
        const CATALOGUE: &[&[$crate::games::GameId]] = &[$(<$module::$pos as $crate::games::Entry>::GAMES),*];

        /// A position of any family. Other crates match it with a fallback
        /// arm (`non_exhaustive`), so a new family needs nothing of them.
        #[non_exhaustive]
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum Position { $($variant($module::$pos)),* }

        /// A move of any family, serialised as that family's move object.
        #[non_exhaustive]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
        #[serde(untagged)]
        pub enum Move { $($variant($module::$mv)),* }

        impl Position {
            pub fn family(&self) -> Family {
                match self { $(Position::$variant(_) => Family::$variant),* }
            }
        }

        impl $crate::game::Rules for Position {
            type Move = Move;

            fn parse_move(&self, v: &serde_json::Value) -> Result<Move, $crate::error::MoveError> {
                match self { $(Position::$variant(p) => p.parse_move(v).map(Move::$variant)),* }
            }

            fn check(&self, mv: &Move) -> Result<(), $crate::error::MoveError> {
                match (self, mv) {
                    $((Position::$variant(p), Move::$variant(m)) => p.check(m),)*
                    #[allow(unreachable_patterns)]
                    _ => Err($crate::error::MoveError::WrongGame),
                }
            }

            fn apply_checked(&mut self, mv: &Move) {
                match (self, mv) {
                    $((Position::$variant(p), Move::$variant(m)) => p.apply_checked(m),)*
                    // `check` refuses a move of another game, so this is never reached.
                    #[allow(unreachable_patterns)]
                    _ => {}
                }
            }

            fn status(&self) -> $crate::game::Status {
                match self { $(Position::$variant(p) => p.status()),* }
            }

            fn legal_moves(&self, limit: usize) -> $crate::game::MoveList<Move> {
                match self { $(Position::$variant(p) => p.legal_moves(limit).map(Move::$variant)),* }
            }

            fn normal_play(&self) -> bool {
                match self { $(Position::$variant(p) => p.normal_play()),* }
            }

            fn to_json(&self) -> serde_json::Value {
                match self { $(Position::$variant(p) => p.to_json()),* }
            }

            fn write_json<W: std::io::Write>(&self, out: W) -> serde_json::Result<()> {
                match self { $(Position::$variant(p) => p.write_json(out)),* }
            }
        }

        impl $crate::game::Strategy for Position {
            fn outcome(&self) -> $crate::game::Outcome {
                match self { $(Position::$variant(p) => p.outcome()),* }
            }

            fn grundy(&self) -> Option<u64> {
                match self { $(Position::$variant(p) => p.grundy()),* }
            }

            fn winning_moves(&self, limit: usize) -> $crate::game::MoveList<Move> {
                match self { $(Position::$variant(p) => p.winning_moves(limit).map(Move::$variant)),* }
            }

            fn best_move(&self) -> Option<Move> {
                match self { $(Position::$variant(p) => p.best_move().map(Move::$variant)),* }
            }
        }
    };
}

//! Every game family behind one type: [`Position`] (with [`Rules`] and
//! [`Strategy`] dispatched to the family) and [`Move`] (serialised in the
//! family's own encoding, see docs/protocol.md). [`Position::from_spec`] reads a
//! docs/games.md spec.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error::{MoveError, SpecError};
use crate::game::{MoveList, Outcome, Rules, Status, Strategy};
use crate::games;
use crate::json::{kind, Fail, Obj};

macro_rules! families {
    ($($variant:ident($pos:ty, $mv:ty) = $id:literal),* $(,)?) => {
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
        }

        /// A position of any family.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum Position { $($variant($pos)),* }

        /// A move of any family, serialised as that family's move object.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
        #[serde(untagged)]
        pub enum Move { $($variant($mv)),* }

        impl Position {
            pub fn family(&self) -> Family {
                match self { $(Position::$variant(_) => Family::$variant),* }
            }
        }

        impl Rules for Position {
            type Move = Move;

            fn parse_move(&self, v: &Value) -> Result<Move, MoveError> {
                match self { $(Position::$variant(p) => p.parse_move(v).map(Move::$variant)),* }
            }

            fn check(&self, mv: &Move) -> Result<(), MoveError> {
                match (self, mv) {
                    $((Position::$variant(p), Move::$variant(m)) => p.check(m),)*
                    #[allow(unreachable_patterns)]
                    _ => Err(MoveError::WrongGame),
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

            fn status(&self) -> Status {
                match self { $(Position::$variant(p) => p.status()),* }
            }

            fn legal_moves(&self, limit: usize) -> MoveList<Move> {
                match self { $(Position::$variant(p) => p.legal_moves(limit).map(Move::$variant)),* }
            }

            fn normal_play(&self) -> bool {
                match self { $(Position::$variant(p) => p.normal_play()),* }
            }

            fn to_json(&self) -> Value {
                match self { $(Position::$variant(p) => p.to_json()),* }
            }

            fn write_json<W: std::io::Write>(&self, out: W) -> serde_json::Result<()> {
                match self { $(Position::$variant(p) => p.write_json(out)),* }
            }
        }

        impl Strategy for Position {
            fn outcome(&self) -> Outcome {
                match self { $(Position::$variant(p) => p.outcome()),* }
            }

            fn grundy(&self) -> Option<u64> {
                match self { $(Position::$variant(p) => p.grundy()),* }
            }

            fn winning_moves(&self, limit: usize) -> MoveList<Move> {
                match self { $(Position::$variant(p) => p.winning_moves(limit).map(Move::$variant)),* }
            }

            fn best_move(&self) -> Option<Move> {
                match self { $(Position::$variant(p) => p.best_move().map(Move::$variant)),* }
            }
        }
    };
}

families! {
    Nim(games::nim::Nim, games::nim::TakeMove) = "nim",
    Heaps(games::heaps::Heaps, games::heaps::HeapMove) = "heaps",
    Treblecross(games::treblecross::Treblecross, games::treblecross::CellMove) = "treblecross",
    Darkraft(games::darkraft::Darkraft, games::darkraft::CellPick) = "darkraft",
    Staircase(games::staircase::Staircase, games::staircase::SlideMove) = "staircase",
    Twist(games::twist::Twist, games::twist::TwistMove) = "twist",
    Graph(games::graph::Graph, games::graph::TokenMove) = "graph",
    Wythoff(games::wythoff::Wythoff, games::wythoff::WythoffMove) = "wythoff",
    Moore(games::moore::Moore, games::moore::MooreMove) = "moore",
    NewStone(games::new_stone::NewStone, games::new_stone::NewStoneMove) = "new-stone",
    Sum(games::sum::Sum, games::sum::PartMove) = "sum",
}

impl Move {
    /// The move's JSON text with its keys in the order a `Value` keeps them:
    /// the text a client gets, whether or not the move went through a
    /// `Value` on its way.
    pub fn to_json_text(&self) -> Box<RawValue> {
        match self {
            // Their fields are declared in that order: printed as they are.
            Move::Nim(_)
            | Move::Treblecross(_)
            | Move::Staircase(_)
            | Move::Wythoff(_)
            | Move::Moore(_) => serde_json::value::to_raw_value(self),
            _ => serde_json::to_value(self).and_then(|v| serde_json::value::to_raw_value(&v)),
        }
        .expect("a move prints as JSON")
    }
}

impl Position {
    /// Reads a spec such as `{"game": "nim", "heaps": [3, 4, 5]}`. The error
    /// names the field that is wrong.
    pub fn from_spec(spec: &Value) -> Result<Position, SpecError> {
        Self::read_spec(spec).map_err(|(field, message)| SpecError { field, message })
    }

    /// Parses the spec from JSON text first.
    pub fn from_spec_str(text: &str) -> Result<Position, SpecError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| SpecError::new("", format!("not valid JSON: {e}")))?;
        Self::from_spec(&value)
    }

    pub(crate) fn read_spec(spec: &Value) -> Result<Position, Fail> {
        let mut o = Obj::new(spec, "")?;
        let id = match o.req("game")? {
            Value::String(s) => s.as_str(),
            other => {
                return Err((
                    "game".into(),
                    format!("expected a game id string, got {}", kind(other)),
                ))
            }
        };
        let position = match id {
            "nim" => Position::Nim(games::nim::Nim::from_spec(&mut o)?),
            "heaps" | "bash" | "subtraction" | "kayles" | "dawson" | "lasker" => {
                Position::Heaps(games::heaps::Heaps::from_spec(&mut o, id)?)
            }
            "treblecross" => {
                Position::Treblecross(games::treblecross::Treblecross::from_spec(&mut o)?)
            }
            "darkraft" => Position::Darkraft(games::darkraft::Darkraft::from_spec(&mut o)?),
            "staircase" => Position::Staircase(games::staircase::Staircase::from_spec(&mut o)?),
            "twist" => Position::Twist(games::twist::Twist::from_spec(&mut o)?),
            "graph" => Position::Graph(games::graph::Graph::from_spec(&mut o)?),
            "wythoff" => Position::Wythoff(games::wythoff::Wythoff::from_spec(&mut o)?),
            "moore" => Position::Moore(games::moore::Moore::from_spec(&mut o)?),
            "new-stone" => Position::NewStone(games::new_stone::NewStone::from_spec(&mut o)?),
            "sum" => Position::Sum(games::sum::Sum::from_spec(&mut o)?),
            other => {
                let ids: Vec<&str> = Family::ALL.iter().map(|f| f.id()).collect();
                return Err((
                    "game".into(),
                    format!("unknown game {other:?} (known: {})", ids.join(", ")),
                ));
            }
        };
        // The families that read `misere` themselves; the others refuse it.
        let misere_families = [Family::Nim, Family::Heaps, Family::Graph, Family::Sum];
        if !misere_families.contains(&position.family()) && o.opt("misere").is_some() {
            return Err((
                "misere".into(),
                format!("misère play is offered only for nim, the heap games (heaps, kayles, dawson, lasker, bash, subtraction) and graph, not for {id}"),
            ));
        }
        o.finish(&["game"])?;
        Ok(position)
    }
}

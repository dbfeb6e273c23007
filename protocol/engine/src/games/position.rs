//! Every game family behind one type: [`Position`] (with [`Rules`] and
//! [`Strategy`] dispatched to the family) and [`Move`] (serialised in the
//! family's own encoding, see docs/protocol.md). [`Position::from_spec`] reads a
//! docs/games.md spec.
//!
//! [`Rules`]: crate::Rules
//! [`Strategy`]: crate::Strategy

use serde_json::value::RawValue;
use serde_json::Value;

pub use super::{Family, Move, Position};
use crate::error::SpecError;
use crate::games::game;
use crate::json::{kind, Fail, Obj};

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
        let known = game(id).filter(|g| !g.random_only);
        let Some((entry, family)) = known.zip(Family::of_game(id)) else {
            let ids: Vec<&str> = Family::ALL.iter().map(|f| f.id()).collect();
            return Err((
                "game".into(),
                format!("unknown game {id:?} (known: {})", ids.join(", ")),
            ));
        };
        let position = family.read(&mut o, id)?;
        // The games that read `misere` themselves; the others refuse it.
        if !entry.misere && o.opt("misere").is_some() {
            return Err((
                "misere".into(),
                format!("misère play is offered only for nim, the heap games (heaps, kayles, dawson, lasker, grundy, bash, subtraction) and graph, not for {id}"),
            ));
        }
        o.finish(&["game"])?;
        Ok(position)
    }
}

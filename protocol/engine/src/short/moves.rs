//! Moves in the short forms people type at a position (`0 2`, `a 3`,
//! `split 4 6`, `0:2 3:1`, `2: 1 1` in a sum's part 2), or as the move's
//! JSON: read into the engine's [`Move`], checked, and written back
//! ([`write`]).

use std::fmt;

use serde_json::{json, Value};

use super::number::{whole_number, NotANumber};
use crate::games::coins::Coin;
use crate::games::twist::{Twist, TwistMove};
use crate::{Move, MoveError, Position, Rules};

/// Why a typed move was not read, and where: the word, the part of a sum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveFormError {
    /// Nothing in the line looks like a move (no number, no `a:b`, no `+`).
    NotAMove { line: String },
    /// A word that should be a whole number.
    Number(NotANumber),
    /// A word that should be a `heap:amount` pair.
    NotAPair { word: String },
    /// The words are not in the shape of this game's moves: how to write one.
    Shape(&'static str),
    /// A sum's move names a part the sum does not have.
    NoSuchPart { part: u64, parts: usize },
    /// The move in a part of a sum was not read.
    InPart {
        part: u64,
        error: Box<MoveFormError>,
    },
    /// A move given as JSON that is not JSON.
    Json(String),
    /// The move's JSON is not of this game's moves.
    NotOfThisGame(MoveError),
    /// A move of this game that the rules forbid here.
    Illegal(MoveError),
}

impl fmt::Display for MoveFormError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveFormError::NotAMove { line } => {
                write!(
                    f,
                    "{line:?} is not a move (a move is written with numbers, e.g. `2 3`)"
                )
            }
            MoveFormError::Number(e) => write!(f, "{e}"),
            MoveFormError::NotAPair { word } => write!(f, "{word:?}: write heap:amount, e.g. 0:2"),
            MoveFormError::Shape(how) => f.write_str(how),
            MoveFormError::NoSuchPart { part, parts } => write!(
                f,
                "there is no part {part}: the parts are numbered 0 to {}",
                parts.saturating_sub(1)
            ),
            MoveFormError::InPart { part, error } => write!(f, "in part {part}: {error}"),
            MoveFormError::Json(e) => write!(f, "that is not valid JSON: {e}"),
            MoveFormError::NotOfThisGame(e) => write!(f, "not a move of this game: {e}"),
            MoveFormError::Illegal(e) => write!(f, "illegal move: {e}"),
        }
    }
}

impl std::error::Error for MoveFormError {}

type Result<T> = std::result::Result<T, MoveFormError>;

/// Reads a move typed at `position`, in its short form or as JSON, and checks
/// it with the rules: the move's wire JSON (as typed, for JSON) and the
/// engine's move.
pub fn read(position: &Position, text: &str) -> Result<(Value, Move)> {
    let value = move_json(position, text)?;
    let mv = checked(position, &value)?;
    Ok((value, mv))
}

/// The engine's verdict on a move's JSON: the move, or why it is not one.
pub fn checked(position: &Position, value: &Value) -> Result<Move> {
    let mv = position
        .parse_move(value)
        .map_err(MoveFormError::NotOfThisGame)?;
    position.check(&mv).map_err(MoveFormError::Illegal)?;
    Ok(mv)
}

/// The wire JSON of a move typed at `position`, unchecked: JSON as it is, a
/// short form in the family's encoding.
pub fn move_json(position: &Position, text: &str) -> Result<Value> {
    let text = text.trim();
    if text.starts_with('{') {
        return serde_json::from_str(text).map_err(|e| MoveFormError::Json(e.to_string()));
    }
    short_move(position, text)
}

fn num(word: &str) -> Result<u64> {
    whole_number(word).map_err(MoveFormError::Number)
}

fn nums(words: &[&str]) -> Result<Vec<u64>> {
    words.iter().map(|w| num(w)).collect()
}

/// `a:b` pairs, e.g. `0:2` (heap 0, amount 2).
fn pairs(words: &[&str]) -> Result<Vec<(u64, u64)>> {
    words
        .iter()
        .map(|w| match w.split_once(':') {
            Some((a, b)) => Ok((num(a)?, num(b)?)),
            None => Err(MoveFormError::NotAPair {
                word: w.to_string(),
            }),
        })
        .collect()
}

/// The short form of a move of this family.
fn short_move(position: &Position, line: &str) -> Result<Value> {
    use MoveFormError::Shape;
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .iter()
        .all(|w| w.parse::<u64>().is_err() && !w.contains(':') && !w.contains('+'))
    {
        return Err(MoveFormError::NotAMove {
            line: line.to_string(),
        });
    }
    let take = |w: &[&str]| -> Result<Value> {
        match nums(w)?.as_slice() {
            [h, k] => Ok(json!({"heap": h, "take": k})),
            _ => Err(Shape(
                "write a heap and an amount: `2 3` takes 3 from heap 2",
            )),
        }
    };
    match position {
        Position::Nim(_) => take(&words),
        Position::Heaps(_) => match words.as_slice() {
            ["split", rest @ ..] => match nums(rest)?.as_slice() {
                [h, a, b] => Ok(json!({"heap": h, "take": 0, "leave": [a, b]})),
                _ => Err(Shape("write `split HEAP A B`: split the heap into A and B")),
            },
            _ => match nums(&words)?.as_slice() {
                [h, k] => Ok(json!({"heap": h, "take": k})),
                [h, k, a, b] => Ok(json!({"heap": h, "take": k, "leave": [a, b]})),
                _ => Err(Shape(
                    "write `HEAP AMOUNT`, or `HEAP AMOUNT A B` to leave two heaps",
                )),
            },
        },
        Position::Wythoff(_) => {
            let how = Shape("write `a 3`, `b 3` or `both 3`");
            let (which, amount) = match words.as_slice() {
                [w, k] => (w.to_ascii_lowercase(), num(k)?),
                _ => return Err(how),
            };
            match which.as_str() {
                "a" | "0" => Ok(json!({"take": [amount, 0]})),
                "b" | "1" => Ok(json!({"take": [0, amount]})),
                "both" | "ab" => Ok(json!({"take": [amount, amount]})),
                _ => Err(how),
            }
        }
        Position::Moore(_) => {
            if words.iter().all(|w| w.contains(':')) {
                Ok(json!({"take": pairs(&words)?}))
            } else {
                match nums(&words)?.as_slice() {
                    [h, k] => Ok(json!({"take": [[h, k]]})),
                    _ => Err(Shape(
                        "write heap:amount pairs, e.g. `0:2 3:1`, or `HEAP AMOUNT`",
                    )),
                }
            }
        }
        Position::NewStone(_) => {
            if words.len() < 2 {
                return Err(Shape(
                    "write `HEAP AMOUNT`, then heap:amount to move stones, e.g. `0 3 2:1`",
                ));
            }
            let (h, k) = (num(words[0])?, num(words[1])?);
            let give = pairs(&words[2..])?;
            if give.is_empty() {
                Ok(json!({"heap": h, "take": k}))
            } else {
                Ok(json!({"heap": h, "take": k, "give": give}))
            }
        }
        Position::Staircase(_) => match nums(&words)?.as_slice() {
            [from, to] => Ok(json!({"from": from, "to": to})),
            _ => Err(Shape(
                "write `FROM TO`: move the piece on cell FROM to cell TO",
            )),
        },
        Position::Treblecross(_) => match nums(&words)?.as_slice() {
            [cell] => Ok(json!({"cell": cell})),
            _ => Err(Shape("write a cell number, e.g. `5`")),
        },
        Position::Darkraft(_) => match nums(&words)?.as_slice() {
            [r, c] => Ok(json!({"row": r, "col": c})),
            _ => Err(Shape("write `ROW COL`, e.g. `2 3`")),
        },
        Position::Coins(c) if c.rule.is_grid() => {
            let cells = pairs(&words)?;
            match cells.as_slice() {
                // Two opposite corners name the rectangle.
                &[(r1, c1), (r2, c2)] => {
                    Ok(json!({"turn": [[r1, c1], [r1, c2], [r2, c1], [r2, c2]]}))
                }
                four if four.len() == 4 => {
                    let turn: Vec<[u64; 2]> = four.iter().map(|&(r, c)| [r, c]).collect();
                    Ok(json!({ "turn": turn }))
                }
                _ => Err(Shape(
                    "write two opposite corners as ROW:COL, e.g. `0:1 2:3` turns [0, 1], [0, 3], [2, 1] and [2, 3]",
                )),
            }
        }
        Position::Coins(_) => {
            let coins = nums(&words)?;
            if coins.is_empty() {
                return Err(Shape("write the coins to turn, e.g. `1 4`"));
            }
            Ok(json!({ "turn": coins }))
        }
        Position::Graph(_) => match nums(&words)?.as_slice() {
            [t, v] => Ok(json!({"token": t, "to": v})),
            _ => Err(Shape(
                "write `TOKEN VERTEX`: move that token to that vertex",
            )),
        },
        Position::Twist(Twist::Unsplit(_)) => {
            let parts: Vec<&str> = match words.as_slice() {
                ["split", rest @ ..] => rest.to_vec(),
                _ => words.iter().flat_map(|w| w.split('+')).collect(),
            };
            let parts: Vec<&str> = parts
                .iter()
                .flat_map(|w| w.split('+'))
                .filter(|w| !w.is_empty())
                .collect();
            Ok(json!({"split": nums(&parts)?}))
        }
        Position::Twist(Twist::Split(_)) => take(&words),
        Position::Sum(s) => {
            // `2: 1 1`: the part, a colon, then the move as that part reads it.
            let Some((part, rest)) = line.split_once(':') else {
                return Err(Shape(
                    "write the part first: `2: 1 1` plays `1 1` in part 2",
                ));
            };
            let part = num(part.trim())?;
            let Some(p) = s.parts.get(part as usize) else {
                return Err(MoveFormError::NoSuchPart {
                    part,
                    parts: s.parts.len(),
                });
            };
            let rest = rest.trim();
            let inner = if rest.starts_with('{') {
                serde_json::from_str::<Value>(rest)
                    .map_err(|e| MoveFormError::Json(e.to_string()))?
            } else {
                short_move(&p.game, rest).map_err(|e| MoveFormError::InPart {
                    part,
                    error: Box::new(e),
                })?
            };
            Ok(json!({"part": part, "move": inner}))
        }
        // A family whose moves have no short form yet: they are typed as JSON.
        #[allow(unreachable_patterns)]
        _ => Err(Shape(
            "this game's moves have no short form: write the move as JSON",
        )),
    }
}

/// A move in the short form [`read`] reads back (`0 2`, `a 3`, `split 4 6`,
/// `0:2 3:1`...): what a person types at the prompt. A move that has no
/// short form (one the rules refuse anyway, such as Wythoff's `[2, 3]`) is
/// written as its JSON, which [`read`] reads too.
pub fn write(m: &Move) -> String {
    let pairs = |list: &[(usize, u64)]| -> Vec<String> {
        list.iter().map(|(h, k)| format!("{h}:{k}")).collect()
    };
    match m {
        Move::Nim(t) => format!("{} {}", t.heap, t.take),
        Move::Heaps(h) => match h.leave {
            None => format!("{} {}", h.heap, h.take),
            Some([a, b]) if h.take == 0 => format!("split {} {a} {b}", h.heap),
            Some([a, b]) => format!("{} {} {a} {b}", h.heap, h.take),
        },
        Move::Wythoff(w) => match w.take {
            [x, 0] if x > 0 => format!("a {x}"),
            [0, y] if y > 0 => format!("b {y}"),
            [x, y] if x == y && x > 0 => format!("both {x}"),
            _ => json!(m).to_string(),
        },
        Move::Moore(mm) => match mm.take.as_slice() {
            [] => json!(m).to_string(),
            [(h, k)] => format!("{h} {k}"),
            list => pairs(list).join(" "),
        },
        Move::NewStone(n) => {
            let mut words = vec![n.heap.to_string(), n.take.to_string()];
            words.extend(pairs(&n.give));
            words.join(" ")
        }
        Move::Staircase(s) => format!("{} {}", s.from, s.to),
        Move::Treblecross(c) => c.cell.to_string(),
        Move::Darkraft(c) => format!("{} {}", c.row, c.col),
        Move::Graph(g) => format!("{} {}", g.token, g.to),
        Move::Coins(c) => coin_words(&c.turn).unwrap_or_else(|| json!(m).to_string()),
        Move::Twist(TwistMove::Split { split }) if !split.is_empty() => {
            let sizes: Vec<String> = split.iter().map(u64::to_string).collect();
            format!("split {}", sizes.join(" "))
        }
        Move::Twist(TwistMove::Take(t)) => format!("{} {}", t.heap, t.take),
        Move::Sum(pm) => format!("{}: {}", pm.part, write(&pm.inner)),
        // An empty split, and the moves of a family with no short form.
        _ => json!(m).to_string(),
    }
}

/// The coins of a move as typed: numbers in a row (`1 4`); on a rectangle
/// its near and far corners (`0:1 2:3`). None for a move no short form
/// reads back the same (four cells that are no rectangle's corners).
fn coin_words(turn: &[Coin]) -> Option<String> {
    match turn {
        [] => None,
        [Coin::Cell([a, b]), Coin::Cell([a2, y]), Coin::Cell([x, b2]), Coin::Cell([x2, y2])]
            if a == a2 && x == x2 && b == b2 && y == y2 =>
        {
            Some(format!("{a}:{b} {x}:{y}"))
        }
        _ => turn
            .iter()
            .map(|c| match c {
                Coin::At(i) => Some(i.to_string()),
                Coin::Cell(_) => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(|w| w.join(" ")),
    }
}

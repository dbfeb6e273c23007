//! Errors of the rule engine: a spec that cannot start a game, and a move that
//! cannot be played. Both name what is wrong so a person can fix it.

use serde::Serialize;

/// A spec was refused. `field` is a path into the spec (`heaps[3]`, `grid[1]`),
/// empty when the spec as a whole is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}{message}", if field.is_empty() { String::new() } else { format!("{field}: ") })]
pub struct SpecError {
    pub field: String,
    pub message: String,
}

impl SpecError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        SpecError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why a move was refused. Every variant says what is wrong in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The move's JSON does not have the shape this game's moves have.
    #[error("malformed move: {field}: {problem}")]
    Malformed { field: String, problem: String },
    /// The game is already over: nobody moves any more.
    #[error("the game is over")]
    GameOver,
    /// The move names a heap, token, piece or cell that does not exist.
    #[error("no {what} {index}: {}", there_are(what, *count, *first))]
    NoSuch {
        what: &'static str,
        index: u64,
        count: u64,
        first: u64,
    },
    /// The move is well formed but the rules forbid it; the text says which rule.
    #[error("{0}")]
    Forbidden(String),
    /// A move of another game was offered to this position.
    #[error("this is a move of another game")]
    WrongGame,
    /// A move in one part of a sum was refused by that part's rules.
    #[error("part {part}: {error}")]
    InPart { part: usize, error: Box<MoveError> },
}

/// What there is instead: `there are 3 (numbered from 0)`, `there is only
/// heap 0`, `there are none`.
fn there_are(what: &str, count: u64, first: u64) -> String {
    match count {
        0 => "there are none".to_string(),
        1 => format!("there is only {what} {first}"),
        n => format!("there are {n} (numbered from {first})"),
    }
}

impl MoveError {
    pub fn malformed(field: impl Into<String>, problem: impl Into<String>) -> Self {
        MoveError::Malformed {
            field: field.into(),
            problem: problem.into(),
        }
    }

    pub fn forbidden(reason: impl Into<String>) -> Self {
        MoveError::Forbidden(reason.into())
    }

    /// A short machine-readable name of the kind of refusal.
    pub fn kind(&self) -> &'static str {
        match self {
            MoveError::Malformed { .. } => "malformed",
            MoveError::GameOver => "game_over",
            MoveError::NoSuch { .. } => "no_such",
            MoveError::Forbidden(_) => "forbidden",
            MoveError::WrongGame => "wrong_game",
            MoveError::InPart { error, .. } => error.kind(),
        }
    }
}

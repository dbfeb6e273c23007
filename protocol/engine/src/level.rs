//! Playing strength: perfect, random, or 0-10 (every help says it so).
//! `perfect` (= 10) plays the engine's optimal move: from an N-position it
//! always wins; from a P-position it plays the move that keeps the game long.
//! Levels 0 to 9 are for people to enjoy: at level `n` the bot plays a random
//! legal move with probability (10 - n) / 10, and the perfect move otherwise
//! (level 0, `random`, plays at random).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Move, Position, Rules, Strategy};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    Perfect,
    /// 0..=9.
    Casual(u8),
}

impl FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Level, String> {
        match s.trim() {
            "perfect" | "10" => Ok(Level::Perfect),
            "random" => Ok(Level::Casual(0)),
            n => match n.parse::<u8>() {
                Ok(n) if n <= 9 => Ok(Level::Casual(n)),
                _ => Err(format!(
                    "level {s:?}: use perfect, random, or a number from 0 (random) to 10 (perfect)"
                )),
            },
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Perfect => write!(f, "perfect"),
            Level::Casual(0) => write!(f, "random"),
            Level::Casual(n) => write!(f, "{n}"),
        }
    }
}

/// On the wire as its name: `"perfect"`, `"random"`, `"3"`.
impl Serialize for Level {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Level, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// How many legal moves a random choice picks among (listings are capped: some
/// positions have astronomically many moves).
const RANDOM_POOL: usize = 10_000;

/// A small deterministic generator (xorshift64*), seeded per bot so runs can be
/// replayed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// The move this level plays here, or None when the game is over.
pub fn choose_move(position: &Position, level: Level, rng: &mut Rng) -> Option<Move> {
    let random = match level {
        Level::Perfect => false,
        Level::Casual(n) => rng.below(10) >= n as u64,
    };
    if random {
        let moves = position.legal_moves(RANDOM_POOL).moves;
        if !moves.is_empty() {
            let i = rng.below(moves.len() as u64) as usize;
            return moves.into_iter().nth(i);
        }
    }
    position.best_move()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn levels_parse_and_print() {
        assert_eq!("perfect".parse::<Level>(), Ok(Level::Perfect));
        assert_eq!("random".parse::<Level>(), Ok(Level::Casual(0)));
        assert_eq!("3".parse::<Level>(), Ok(Level::Casual(3)));
        assert_eq!("10".parse::<Level>(), Ok(Level::Perfect));
        assert!("11".parse::<Level>().is_err());
        assert!("strong".parse::<Level>().is_err());
        assert_eq!(Level::Casual(3).to_string(), "3");
    }

    #[test]
    fn levels_travel_as_their_names() {
        for (level, name) in [
            (Level::Perfect, "perfect"),
            (Level::Casual(0), "random"),
            (Level::Casual(7), "7"),
        ] {
            assert_eq!(serde_json::to_value(level).unwrap(), json!(name));
            assert_eq!(serde_json::from_value::<Level>(json!(name)).unwrap(), level);
        }
        let refused = serde_json::from_value::<Level>(json!("strong")).unwrap_err();
        assert!(
            refused.to_string().contains("use perfect, random"),
            "{refused}"
        );
        assert!(serde_json::from_value::<Level>(json!(3)).is_err());
    }

    #[test]
    fn perfect_plays_the_winning_move_and_random_plays_legal_moves() {
        let p = Position::from_spec(&json!({"game": "nim", "heaps": [3, 4, 5]})).unwrap();
        let mut rng = Rng::new(1);
        let best = choose_move(&p, Level::Perfect, &mut rng).unwrap();
        assert_eq!(
            serde_json::to_value(&best).unwrap(),
            json!({"heap": 0, "take": 2})
        );
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let m = choose_move(&p, Level::Casual(0), &mut rng).unwrap();
            assert!(p.check(&m).is_ok());
            seen.insert(serde_json::to_string(&m).unwrap());
        }
        assert!(seen.len() > 5, "random play varies: {seen:?}");
    }
}

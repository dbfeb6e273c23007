//! Glicko-2 ratings (the `skillratings` crate) per player name and game family.
//!
//! Each rated game is its own rating period: both players' ratings move right
//! after it. Players are known by name only (there are no accounts), so a name
//! is a rating. The table lives in memory, loaded from the store at start; every
//! change is computed and queued for the store under one lock, so concurrent
//! tournaments write a player's rows in the order they were computed.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use grundy_protocol::wire::PlayerRating;
use skillratings::glicko2::{glicko2, Glicko2Config, Glicko2Rating};
use skillratings::Outcomes;

use crate::store::RatingRow;

#[derive(Default)]
pub struct Ratings {
    /// family -> player -> rating.
    table: Mutex<HashMap<String, HashMap<String, PlayerRating>>>,
}

fn fresh(player: &str) -> PlayerRating {
    let r = Glicko2Rating::new();
    PlayerRating {
        player: player.to_string(),
        rating: r.rating,
        deviation: r.deviation,
        volatility: r.volatility,
        games: 0,
    }
}

impl Ratings {
    pub fn new(rows: Vec<RatingRow>) -> Ratings {
        let ratings = Ratings::default();
        {
            let mut table = ratings.table();
            for row in rows {
                table
                    .entry(row.family)
                    .or_default()
                    .insert(row.rating.player.clone(), row.rating);
            }
        }
        ratings
    }

    fn table(&self) -> MutexGuard<'_, HashMap<String, HashMap<String, PlayerRating>>> {
        // Every update replaces whole entries: a poisoned table is still whole.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A player's rating in a family, if they have played a rated game.
    pub fn get(&self, family: &str, player: &str) -> Option<f64> {
        self.table()
            .get(family)
            .and_then(|players| players.get(player))
            .map(|r| r.rating)
    }

    /// Rates a game between `players` (seat 0, seat 1) won by seat `winner`,
    /// and hands the two new rows to `persist` while still holding the lock,
    /// so that writes reach the store in the order they were computed.
    pub fn rate<R>(
        &self,
        family: &str,
        players: [&str; 2],
        winner: usize,
        persist: impl FnOnce(Vec<RatingRow>) -> R,
    ) -> R {
        let mut table = self.table();
        let known = table.entry(family.to_string()).or_default();
        let [a, b] = players.map(|p| known.get(p).cloned().unwrap_or_else(|| fresh(p)));
        let outcome = if winner == 0 {
            Outcomes::WIN
        } else {
            Outcomes::LOSS
        };
        let as_glicko = |r: &PlayerRating| Glicko2Rating {
            rating: r.rating,
            deviation: r.deviation,
            volatility: r.volatility,
        };
        let (na, nb) = glicko2(
            &as_glicko(&a),
            &as_glicko(&b),
            &outcome,
            &Glicko2Config::new(),
        );
        let updated = |old: PlayerRating, new: Glicko2Rating| PlayerRating {
            rating: new.rating,
            deviation: new.deviation,
            volatility: new.volatility,
            games: old.games + 1,
            player: old.player,
        };
        let rows: Vec<RatingRow> = [updated(a, na), updated(b, nb)]
            .into_iter()
            .map(|rating| {
                known.insert(rating.player.clone(), rating.clone());
                RatingRow {
                    family: family.to_string(),
                    rating,
                }
            })
            .collect();
        persist(rows)
    }

    /// The best-rated players of a family, best first.
    pub fn top(&self, family: &str, limit: usize) -> Vec<PlayerRating> {
        let mut all: Vec<PlayerRating> = self
            .table()
            .get(family)
            .map(|players| players.values().cloned().collect())
            .unwrap_or_default();
        all.sort_by(|a, b| {
            b.rating
                .total_cmp(&a.rating)
                .then_with(|| a.player.cmp(&b.player))
        });
        all.truncate(limit);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_win_moves_both_ratings_and_counts_games() {
        let ratings = Ratings::default();
        let rows = ratings.rate("nim", ["alice", "bob"], 0, |rows| rows);
        assert_eq!(rows.len(), 2);
        assert!(rows[0].rating.rating > 1500.0, "{rows:?}");
        assert!(rows[1].rating.rating < 1500.0, "{rows:?}");
        assert!(rows[0].rating.deviation < 350.0);
        assert_eq!(rows[0].rating.games, 1);
        assert_eq!(ratings.get("nim", "alice"), Some(rows[0].rating.rating));
        assert_eq!(ratings.get("kayles", "alice"), None, "per family");
        // Symmetric: the same game the other way round mirrors the change.
        let other = Ratings::default();
        let mirrored = other.rate("nim", ["bob", "alice"], 1, |rows| rows);
        assert!((mirrored[1].rating.rating - rows[0].rating.rating).abs() < 1e-9);
    }

    #[test]
    fn loaded_rows_are_the_starting_point_and_top_sorts() {
        let ratings = Ratings::new(vec![RatingRow {
            family: "nim".into(),
            rating: PlayerRating {
                player: "carol".into(),
                rating: 1800.0,
                deviation: 60.0,
                volatility: 0.06,
                games: 40,
            },
        }]);
        let rows = ratings.rate("nim", ["carol", "dave"], 1, |rows| rows);
        assert_eq!(rows[0].rating.games, 41);
        // An upset against a newcomer costs an established player little.
        assert!(rows[0].rating.rating < 1800.0 && rows[0].rating.rating > 1750.0);
        let top = ratings.top("nim", 10);
        assert_eq!(top.len(), 2);
        assert!(top[0].rating >= top[1].rating);
        assert_eq!(ratings.top("nim", 1).len(), 1);
        assert!(ratings.top("wythoff", 5).is_empty());
    }
}

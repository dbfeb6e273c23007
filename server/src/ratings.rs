//! Glicko-2 ratings (the `skillratings` crate) per account and game family.
//!
//! Each rated game is its own rating period: both players' ratings move right
//! after it. Only accounts are rated; the ratings recorded under plain names
//! before accounts existed are kept as unclaimed history: listed, never moved,
//! and no account's (whatever its name). The table lives in memory, loaded
//! from the store at start; every change is computed and queued for the store
//! under one lock, so concurrent tournaments write a player's rows in the
//! order they were computed.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use grundy_protocol::wire::{PlayerKind, PlayerRating};
use skillratings::glicko2::{glicko2, Glicko2Config, Glicko2Rating};
use skillratings::Outcomes;

use crate::player::AccountId;
use crate::store::RatingRow;

/// Whose a rating is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Holder {
    Account(AccountId),
    /// Recorded under this plain name before accounts.
    Unclaimed(String),
}

/// A player of a rated game: an account, its name and kind (as shown).
#[derive(Debug, Clone, Copy)]
pub struct Rated<'a> {
    pub account: AccountId,
    pub name: &'a str,
    pub kind: PlayerKind,
}

type Table = HashMap<String, HashMap<Holder, PlayerRating>>;

#[derive(Default)]
pub struct Ratings {
    /// family -> holder -> rating.
    table: Mutex<Table>,
}

fn fresh(player: &Rated<'_>) -> PlayerRating {
    let r = Glicko2Rating::new();
    PlayerRating {
        player: player.name.to_string(),
        player_kind: Some(player.kind),
        unclaimed: false,
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
                let holder = match row.account {
                    Some(id) => Holder::Account(id),
                    None => Holder::Unclaimed(row.rating.player.clone()),
                };
                table
                    .entry(row.family)
                    .or_default()
                    .insert(holder, row.rating);
            }
        }
        ratings
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // Every update replaces whole entries: a poisoned table is still whole.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An account's rating in a family, if it has played a rated game.
    pub fn get(&self, family: &str, account: AccountId) -> Option<f64> {
        self.table()
            .get(family)
            .and_then(|players| players.get(&Holder::Account(account)))
            .map(|r| r.rating)
    }

    /// A registered tournament player's rating in a family (guests have none).
    pub fn of(&self, family: &str, player: &crate::tournament::state::Player) -> Option<f64> {
        player.account.and_then(|a| self.get(family, a))
    }

    /// Rates a game between `players` (seat 0, seat 1) won by seat `winner`,
    /// and hands the two new rows to `persist` while still holding the lock,
    /// so that writes reach the store in the order they were computed.
    pub fn rate<R>(
        &self,
        family: &str,
        players: [Rated<'_>; 2],
        winner: usize,
        persist: impl FnOnce(Vec<RatingRow>) -> R,
    ) -> R {
        let mut table = self.table();
        let known = table.entry(family.to_string()).or_default();
        let [a, b] = players.map(|p| {
            known
                .get(&Holder::Account(p.account))
                .cloned()
                .unwrap_or_else(|| fresh(&p))
        });
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
            ..old
        };
        let rows: Vec<RatingRow> = [updated(a, na), updated(b, nb)]
            .into_iter()
            .zip(players)
            .map(|(rating, p)| {
                known.insert(Holder::Account(p.account), rating.clone());
                RatingRow {
                    family: family.to_string(),
                    account: Some(p.account),
                    rating,
                }
            })
            .collect();
        persist(rows)
    }

    /// The best-rated players of a family, best first (unclaimed ratings
    /// among them, marked so).
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

    fn account(account: AccountId, name: &str) -> Rated<'_> {
        Rated {
            account,
            name,
            kind: PlayerKind::Bot,
        }
    }

    #[test]
    fn a_win_moves_both_ratings_and_counts_games() {
        let ratings = Ratings::default();
        let players = [account(1, "alice"), account(2, "bob")];
        let rows = ratings.rate("nim", players, 0, |rows| rows);
        assert_eq!(rows.len(), 2);
        assert!(rows[0].rating.rating > 1500.0, "{rows:?}");
        assert!(rows[1].rating.rating < 1500.0, "{rows:?}");
        assert!(rows[0].rating.deviation < 350.0);
        assert_eq!(rows[0].rating.games, 1);
        assert_eq!(rows[0].account, Some(1));
        assert_eq!(rows[0].rating.player_kind, Some(PlayerKind::Bot));
        assert_eq!(ratings.get("nim", 1), Some(rows[0].rating.rating));
        assert_eq!(ratings.get("kayles", 1), None, "per family");
        // Symmetric: the same game the other way round mirrors the change.
        let other = Ratings::default();
        let mirrored = other.rate("nim", [players[1], players[0]], 1, |rows| rows);
        assert!((mirrored[1].rating.rating - rows[0].rating.rating).abs() < 1e-9);
    }

    #[test]
    fn loaded_rows_are_the_starting_point_and_unclaimed_ones_stay_apart() {
        let row = |account, player: &str, rating| RatingRow {
            family: "nim".into(),
            account,
            rating: PlayerRating {
                player: player.into(),
                player_kind: account.map(|_| PlayerKind::Person),
                unclaimed: account.is_none(),
                rating,
                deviation: 60.0,
                volatility: 0.06,
                games: 40,
            },
        };
        let ratings = Ratings::new(vec![
            row(Some(3), "carol", 1800.0),
            // Before accounts, "dave" was rated under his plain name.
            row(None, "dave", 2100.0),
        ]);
        let rows = ratings.rate(
            "nim",
            [account(3, "carol"), account(4, "dave")],
            1,
            |rows| rows,
        );
        assert_eq!(rows[0].rating.games, 41);
        // An upset against a newcomer costs an established player little.
        assert!(rows[0].rating.rating < 1800.0 && rows[0].rating.rating > 1750.0);
        // The account named dave starts afresh: the old rating is nobody's.
        assert_eq!(rows[1].rating.games, 1);
        assert!(rows[1].rating.rating > 1500.0 && rows[1].rating.rating < 2000.0);
        let top = ratings.top("nim", 10);
        assert_eq!(top.len(), 3);
        assert_eq!(top[0].player, "dave");
        assert!(top[0].unclaimed && top[0].player_kind.is_none());
        assert_eq!(top[0].rating, 2100.0);
        assert!(top.windows(2).all(|w| w[0].rating >= w[1].rating));
        assert_eq!(ratings.top("nim", 1).len(), 1);
        assert!(ratings.top("wythoff", 5).is_empty());
    }
}

//! Glicko-2 ratings (the `skillratings` crate) per account and game, the
//! game as a person names it: the spec's `game` id (`kayles`, `dawson`,
//! `nim`, ...), so Kayles and Dawson's Kayles are rated apart.
//!
//! A rating period is one tournament round: every game of the round is rated
//! together, each player against the ratings their opponents had before the
//! round, so the order in which the round's games ended decides nothing
//! ([`Ratings::rate_period`]). Only accounts are rated; the ratings recorded
//! under plain names before accounts existed are kept as unclaimed history:
//! listed, never moved, and no account's (whatever its name). Ratings kept
//! before they were per game pooled every heap game under the family `heaps`:
//! they are kept under [`crate::rating_key::POOLED_HEAPS`], listed, never moved. The table lives
//! in memory, loaded from the store at start; every change is computed and
//! queued for the store under one lock, so concurrent tournaments write a
//! player's rows in the order they were computed. A cluster's nodes send
//! each other the rows they have stored (over the bus), so that each rates
//! from the others' latest figures and lists them.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use grundy_protocol::wire::{PlayerKind, PlayerRating};
use skillratings::glicko2::{glicko2_rating_period, Glicko2Config, Glicko2Rating};
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

/// A game of a rating period: the players on seats 0 and 1, and the winning
/// seat.
#[derive(Debug, Clone, Copy)]
pub struct RatedGame<'a> {
    pub players: [Rated<'a>; 2],
    pub winner: usize,
}

type Table = HashMap<String, HashMap<Holder, PlayerRating>>;

/// Where a cluster's node sends the rows it computes.
pub type Announcer = Box<dyn Fn(Vec<RatingRow>) + Send + Sync>;

#[derive(Default)]
pub struct Ratings {
    /// game -> holder -> rating.
    table: Mutex<Table>,
    announcer: OnceLock<Announcer>,
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

fn as_glicko(r: &PlayerRating) -> Glicko2Rating {
    Glicko2Rating {
        rating: r.rating,
        deviation: r.deviation,
        volatility: r.volatility,
    }
}

impl Ratings {
    pub fn new(rows: Vec<RatingRow>) -> Ratings {
        let ratings = Ratings::default();
        ratings.absorb(rows);
        ratings
    }

    /// Takes `rows` in (loaded, or another node's), but never one that
    /// counts fewer games than the rating held: messages may come late.
    pub fn absorb(&self, rows: Vec<RatingRow>) {
        let mut table = self.table();
        for row in rows {
            let holder = match row.account {
                Some(id) => Holder::Account(id),
                None => Holder::Unclaimed(row.rating.player.clone()),
            };
            let game = table.entry(row.game).or_default();
            match game.get(&holder) {
                Some(held) if held.games > row.rating.games => {}
                _ => {
                    game.insert(holder, row.rating);
                }
            }
        }
    }

    /// Sends the rows this node stores to `announce` (once).
    pub fn announce_with(&self, announce: Announcer) {
        let _ = self.announcer.set(announce);
    }

    /// Tells the other nodes of `rows`, once they are stored.
    pub fn announce(&self, rows: &[RatingRow]) {
        if let (Some(announce), false) = (self.announcer.get(), rows.is_empty()) {
            announce(rows.to_vec());
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // Every update replaces whole entries: a poisoned table is still whole.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An account's rating in a game, if it has played a rated game of it.
    pub fn get(&self, game: &str, account: AccountId) -> Option<f64> {
        self.table()
            .get(game)
            .and_then(|players| players.get(&Holder::Account(account)))
            .map(|r| r.rating)
    }

    /// Every rating an account holds, by game id, in the games' order.
    pub fn of_account(&self, account: AccountId) -> Vec<(String, PlayerRating)> {
        let mut all: Vec<(String, PlayerRating)> = self
            .table()
            .iter()
            .filter_map(|(game, players)| {
                let held = players.get(&Holder::Account(account))?;
                Some((game.clone(), held.clone()))
            })
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// A player's rating in a game: an account's (guests have none).
    pub fn of(&self, game: &str, account: Option<AccountId>) -> Option<f64> {
        account.and_then(|a| self.get(game, a))
    }

    /// Rates one game between `players` (seat 0, seat 1) won by seat
    /// `winner`, as a rating period of its own (the tournaments that began
    /// before rating periods were rounds), and hands the two new rows to
    /// `persist` while still holding the lock.
    pub fn rate<R>(
        &self,
        game: &str,
        players: [Rated<'_>; 2],
        winner: usize,
        persist: impl FnOnce(Vec<RatingRow>) -> R,
    ) -> R {
        self.rate_period(game, &[RatedGame { players, winner }], persist)
    }

    /// Rates the games of one rating period together: each player's new
    /// rating comes from their rating before the period and every game they
    /// played in it, against their opponents' ratings before the period
    /// (Glicko-2's rating period), so the order of the games does not matter.
    /// Players with no game in `games` are not touched. Hands the new rows
    /// (one per player, in order of first appearance) to `persist` while
    /// still holding the lock, so that writes reach the store in the order
    /// they were computed.
    pub fn rate_period<R>(
        &self,
        game: &str,
        games: &[RatedGame<'_>],
        persist: impl FnOnce(Vec<RatingRow>) -> R,
    ) -> R {
        let mut table = self.table();
        let known = table.entry(game.to_string()).or_default();
        // Everyone's rating before the period, in order of first appearance.
        let mut order: Vec<Rated<'_>> = Vec::new();
        let mut before: HashMap<AccountId, PlayerRating> = HashMap::new();
        for g in games {
            for p in g.players {
                if let std::collections::hash_map::Entry::Vacant(slot) = before.entry(p.account) {
                    slot.insert(
                        known
                            .get(&Holder::Account(p.account))
                            .cloned()
                            .unwrap_or_else(|| fresh(&p)),
                    );
                    order.push(p);
                }
            }
        }
        let config = Glicko2Config::new();
        let rows: Vec<RatingRow> = order
            .iter()
            .filter_map(|p| {
                let old = before.get(&p.account)?.clone();
                let results: Vec<(Glicko2Rating, Outcomes)> = games
                    .iter()
                    .flat_map(|g| {
                        (0..2)
                            .filter(|&seat| g.players[seat].account == p.account)
                            .filter_map(|seat| {
                                let opponent = g.players[1 - seat].account;
                                let outcome = if g.winner == seat {
                                    Outcomes::WIN
                                } else {
                                    Outcomes::LOSS
                                };
                                Some((as_glicko(before.get(&opponent)?), outcome))
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let new = glicko2_rating_period(&as_glicko(&old), &results, &config);
                let rating = PlayerRating {
                    rating: new.rating,
                    deviation: new.deviation,
                    volatility: new.volatility,
                    games: old.games + results.len() as u64,
                    // The name and kind it shows now.
                    player: p.name.to_string(),
                    player_kind: Some(p.kind),
                    ..old
                };
                Some(RatingRow {
                    game: game.to_string(),
                    account: Some(p.account),
                    rating,
                })
            })
            .collect();
        for row in &rows {
            if let Some(account) = row.account {
                known.insert(Holder::Account(account), row.rating.clone());
            }
        }
        persist(rows)
    }

    /// The best-rated players of a game, best first (unclaimed ratings
    /// among them, marked so).
    pub fn top(&self, game: &str, limit: usize) -> Vec<PlayerRating> {
        let mut all: Vec<PlayerRating> = self
            .table()
            .get(game)
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
        assert_eq!(rows[0].game, "nim");
        assert_eq!(rows[0].rating.player_kind, Some(PlayerKind::Bot));
        assert_eq!(ratings.get("nim", 1), Some(rows[0].rating.rating));
        assert_eq!(ratings.get("kayles", 1), None, "per game");
        // Symmetric: the same game the other way round mirrors the change.
        let other = Ratings::default();
        let mirrored = other.rate("nim", [players[1], players[0]], 1, |rows| rows);
        assert!((mirrored[1].rating.rating - rows[0].rating.rating).abs() < 1e-9);
    }

    #[test]
    fn kayles_and_dawsons_kayles_are_rated_apart() {
        let ratings = Ratings::default();
        let players = [account(1, "alice"), account(2, "bob")];
        ratings.rate("kayles", players, 0, |_| ());
        ratings.rate("dawson", players, 1, |_| ());
        assert!(ratings.get("kayles", 1).is_some_and(|r| r > 1500.0));
        assert!(ratings.get("dawson", 1).is_some_and(|r| r < 1500.0));
        assert_eq!(ratings.get("heaps", 1), None);
        assert_eq!(ratings.top("kayles", 10).len(), 2);
    }

    /// Two players who each beat the other once in a rating period end where
    /// they began, level; rated game by game, the order decided who was
    /// ahead (by 134 points).
    #[test]
    fn each_beating_the_other_once_in_a_period_leaves_two_players_level() {
        let (a, b) = (account(1, "alice"), account(2, "bob"));
        let games = [
            RatedGame {
                players: [a, b],
                winner: 0,
            },
            RatedGame {
                players: [b, a],
                winner: 0,
            },
        ];
        let ratings = Ratings::default();
        let rows = ratings.rate_period("nim", &games, |rows| rows);
        assert_eq!(rows.len(), 2);
        let (ra, rb) = (&rows[0].rating, &rows[1].rating);
        assert!((ra.rating - rb.rating).abs() < 1e-9, "{rows:?}");
        assert!((ra.rating - 1500.0).abs() < 1e-6, "{rows:?}");
        assert!(ra.deviation < 350.0 && (ra.deviation - rb.deviation).abs() < 1e-9);
        assert_eq!((ra.games, rb.games), (2, 2));
        // The same games the other way round: the same ratings.
        let reversed = Ratings::default();
        let again = reversed.rate_period("nim", &[games[1], games[0]], |rows| rows);
        let by_account = |rows: &[RatingRow], id| {
            rows.iter()
                .find(|r| r.account == Some(id))
                .map(|r| r.rating.rating)
        };
        assert_eq!(by_account(&rows, 1), by_account(&again, 1));
        // Game by game (a period each), the one who won last is ahead.
        let sequential = Ratings::default();
        for g in games {
            sequential.rate("nim", g.players, g.winner, |_| ());
        }
        let gap = sequential.get("nim", 2).unwrap_or(0.0) - sequential.get("nim", 1).unwrap_or(0.0);
        assert!(gap > 100.0, "{gap}");
    }

    #[test]
    fn a_period_rates_everyone_against_the_ratings_from_before_it() {
        let row = |account, player: &str, rating| RatingRow {
            game: "nim".into(),
            account: Some(account),
            rating: PlayerRating {
                player: player.into(),
                player_kind: Some(PlayerKind::Person),
                unclaimed: false,
                rating,
                deviation: 80.0,
                volatility: 0.06,
                games: 10,
            },
        };
        let ratings = Ratings::new(vec![row(1, "ann", 1700.0), row(2, "ben", 1500.0)]);
        let (ann, ben, cy) = (account(1, "ann"), account(2, "ben"), account(3, "cy"));
        // ann loses to ben, then beats the newcomer cy; dan plays nobody.
        let games = [
            RatedGame {
                players: [ann, ben],
                winner: 1,
            },
            RatedGame {
                players: [cy, ann],
                winner: 1,
            },
        ];
        let rows = ratings.rate_period("nim", &games, |rows| rows);
        let names: Vec<&str> = rows.iter().map(|r| r.rating.player.as_str()).collect();
        assert_eq!(names, ["ann", "ben", "cy"]);
        assert_eq!(rows[0].rating.games, 12);
        assert_eq!(rows[2].rating.games, 1);
        assert!(rows[1].rating.rating > 1500.0, "ben beat a stronger player");
        assert!(rows[2].rating.rating < 1500.0, "cy lost");
        assert_eq!(ratings.get("nim", 3), Some(rows[2].rating.rating));
        assert_eq!(ratings.get("nim", 4), None);
        // An empty period changes nothing and writes nothing.
        assert!(ratings.rate_period("nim", &[], |rows| rows).is_empty());
    }

    #[test]
    fn loaded_rows_are_the_starting_point_and_unclaimed_ones_stay_apart() {
        let row = |account, player: &str, rating| RatingRow {
            game: "nim".into(),
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

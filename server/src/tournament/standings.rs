//! Tournament standings: scores, tie-breaks and ranks. Pure logic, no I/O.
//!
//! Definitions:
//! - **score**: games won, plus 2 per bye (a bye is a whole pairing won);
//! - **games**: games played (byes excluded); **wins**/**losses** count
//!   games, a double forfeit being a loss for both;
//! - **Buchholz**: the sum of the final scores of each distinct opponent met,
//!   once per opponent however many games against them; byes add nothing;
//! - **Sonneborn–Berger**: over the games won, the sum of the beaten
//!   opponent's final score (per game, so two wins count that score twice).
//!
//! Order: score descending, then the tie-breaks of [`TieBreaks`] descending,
//! then player id ascending. Players equal on score and on every tie-break in
//! use share a rank (competition ranking: 1, 2, 2, 4).
//!
//! Games or byes naming a player not in the list are ignored, as are games
//! with a player on both seats or a winning seat other than 0 or 1.

use std::collections::{BTreeSet, HashMap};

use super::pairing::PlayerId;

/// A finished game: seat 0 and seat 1, and the winning seat (None: both lost, e.g. a double forfeit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameResult {
    pub round: u32,
    pub players: [PlayerId; 2],
    pub winner: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieBreaks {
    /// Swiss: score, then Buchholz, then Sonneborn–Berger
    Swiss,
    /// Round robin: score, then Sonneborn–Berger (Buchholz says nothing when everyone meets everyone)
    RoundRobin,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub rank: u32,
    pub player: PlayerId,
    pub score: u32,
    pub games: u32,
    pub wins: u32,
    pub losses: u32,
    pub byes: u32,
    pub buchholz: u32,
    pub sonneborn_berger: u32,
}

/// Standings of `players` (all registered, withdrawn included) after `games` and `byes` (round, player).
pub fn standings(
    players: &[PlayerId],
    games: &[GameResult],
    byes: &[(u32, PlayerId)],
    order: TieBreaks,
) -> Vec<Standing> {
    let mut table = Table::new(players);
    let games: Vec<Game> = games.iter().filter_map(|g| table.game(g)).collect();
    table.count(&games, byes);
    table.tie_breaks(&games);
    table.ranked(order)
}

/// A valid game as indexes into the table.
struct Game {
    seats: [usize; 2],
    winner: Option<usize>,
}

struct Table {
    rows: Vec<Standing>,
    index: HashMap<PlayerId, usize>,
}

impl Table {
    fn new(players: &[PlayerId]) -> Self {
        let mut rows = Vec::new();
        let mut index = HashMap::new();
        for &player in players {
            // A player listed twice gets one row.
            index.entry(player).or_insert_with(|| {
                rows.push(blank(player));
                rows.len() - 1
            });
        }
        Table { rows, index }
    }

    fn game(&self, game: &GameResult) -> Option<Game> {
        let [a, b] = game.players;
        let seats = [*self.index.get(&a)?, *self.index.get(&b)?];
        let valid = a != b && !matches!(game.winner, Some(w) if w > 1);
        valid.then_some(Game {
            seats,
            winner: game.winner,
        })
    }

    fn row(&mut self, index: usize) -> Option<&mut Standing> {
        self.rows.get_mut(index)
    }

    fn score_of(&self, index: usize) -> u32 {
        self.rows.get(index).map_or(0, |r| r.score)
    }

    /// Games, wins, losses, byes and scores.
    fn count(&mut self, games: &[Game], byes: &[(u32, PlayerId)]) {
        for game in games {
            for (seat, &player) in game.seats.iter().enumerate() {
                let won = game.winner == Some(seat);
                if let Some(row) = self.row(player) {
                    row.games = row.games.saturating_add(1);
                    if won {
                        row.wins = row.wins.saturating_add(1);
                    } else {
                        row.losses = row.losses.saturating_add(1);
                    }
                }
            }
        }
        for (_, player) in byes {
            if let Some(&index) = self.index.get(player) {
                if let Some(row) = self.row(index) {
                    row.byes = row.byes.saturating_add(1);
                }
            }
        }
        for row in &mut self.rows {
            row.score = row.wins.saturating_add(row.byes.saturating_mul(2));
        }
    }

    /// Buchholz and Sonneborn–Berger; needs the final scores.
    fn tie_breaks(&mut self, games: &[Game]) {
        let mut opponents: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); self.rows.len()];
        let mut sonneborn_berger = vec![0u32; self.rows.len()];
        for game in games {
            let [a, b] = game.seats;
            for (player, opponent) in [(a, b), (b, a)] {
                if let Some(set) = opponents.get_mut(player) {
                    set.insert(opponent);
                }
            }
            let beaten = match game.winner {
                Some(0) => Some((a, b)),
                Some(1) => Some((b, a)),
                _ => None,
            };
            if let Some((winner, loser)) = beaten {
                let loser_score = self.score_of(loser);
                if let Some(sb) = sonneborn_berger.get_mut(winner) {
                    *sb = sb.saturating_add(loser_score);
                }
            }
        }
        let buchholz: Vec<u32> = opponents
            .iter()
            .map(|set| {
                set.iter()
                    .fold(0u32, |sum, &o| sum.saturating_add(self.score_of(o)))
            })
            .collect();
        for ((row, b), sb) in self.rows.iter_mut().zip(buchholz).zip(sonneborn_berger) {
            row.buchholz = b;
            row.sonneborn_berger = sb;
        }
    }

    /// Sorted and ranked.
    fn ranked(mut self, order: TieBreaks) -> Vec<Standing> {
        let key = |r: &Standing| sort_key(r, order);
        self.rows
            .sort_by(|a, b| key(b).cmp(&key(a)).then(a.player.cmp(&b.player)));
        let mut previous: Option<(u32, [u32; 3])> = None;
        for (place, row) in self.rows.iter_mut().enumerate() {
            let rank = u32::try_from(place).unwrap_or(u32::MAX).saturating_add(1);
            // A tie keeps the rank of the first of the tied players.
            row.rank = match previous {
                Some((shared, k)) if k == key(row) => shared,
                _ => rank,
            };
            previous = Some((row.rank, key(row)));
        }
        self.rows
    }
}

/// What the order compares, most significant first (higher is better).
fn sort_key(row: &Standing, order: TieBreaks) -> [u32; 3] {
    match order {
        TieBreaks::Swiss => [row.score, row.buchholz, row.sonneborn_berger],
        TieBreaks::RoundRobin => [row.score, row.sonneborn_berger, 0],
    }
}

fn blank(player: PlayerId) -> Standing {
    Standing {
        rank: 0,
        player,
        score: 0,
        games: 0,
        wins: 0,
        losses: 0,
        byes: 0,
        buchholz: 0,
        sonneborn_berger: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(round: u32, seat0: PlayerId, seat1: PlayerId, winner: Option<usize>) -> GameResult {
        GameResult {
            round,
            players: [seat0, seat1],
            winner,
        }
    }

    /// A pairing: two games with the seats swapped; `wins` names the winner
    /// of each (None: double forfeit).
    fn pairing(
        round: u32,
        a: PlayerId,
        b: PlayerId,
        wins: [Option<PlayerId>; 2],
    ) -> [GameResult; 2] {
        let seat = |w: Option<PlayerId>, first: PlayerId| w.map(|w| usize::from(w != first));
        [
            game(round, a, b, seat(wins[0], a)),
            game(round, b, a, seat(wins[1], b)),
        ]
    }

    #[allow(clippy::too_many_arguments)]
    fn row(
        rank: u32,
        player: PlayerId,
        score: u32,
        games: u32,
        wins: u32,
        losses: u32,
        byes: u32,
        buchholz: u32,
        sb: u32,
    ) -> Standing {
        Standing {
            rank,
            player,
            score,
            games,
            wins,
            losses,
            byes,
            buchholz,
            sonneborn_berger: sb,
        }
    }

    /// Round 1: 0 beats 1 twice, 2 beats 3 twice. Round 2: 0-2 and 1-3 split.
    /// Scores 3, 1, 3, 1. Buchholz: everyone met a 3 and a 1, so 4 each.
    /// Sonneborn–Berger: 0 beat 1 twice (1 + 1) and 2 once (3): 5; 2 the
    /// same; 1 beat 3 once (1): 1; 3 beat 1 once: 1.
    fn four_players() -> Vec<GameResult> {
        [
            pairing(1, 0, 1, [Some(0), Some(0)]),
            pairing(1, 2, 3, [Some(2), Some(2)]),
            pairing(2, 0, 2, [Some(0), Some(2)]),
            pairing(2, 1, 3, [Some(3), Some(1)]),
        ]
        .concat()
    }

    #[test]
    fn standings_four_players_two_rounds() {
        let table = standings(&[0, 1, 2, 3], &four_players(), &[], TieBreaks::Swiss);
        assert_eq!(
            table,
            vec![
                row(1, 0, 3, 4, 3, 1, 0, 4, 5),
                row(1, 2, 3, 4, 3, 1, 0, 4, 5),
                row(3, 1, 1, 4, 1, 3, 0, 4, 1),
                row(3, 3, 1, 4, 1, 3, 0, 4, 1),
            ]
        );
    }

    #[test]
    fn standings_round_robin_ignores_buchholz() {
        // 0 beat 1 once, 1 beat 2 once (the others double forfeits), and 3
        // beat 2 once: 0, 1, 3 on 1 point; 2 on 0.
        // Buchholz: 0 met 1 (1); 1 met 0 and 2 (1 + 0); 3 met 2 (0): 1, 1, 0.
        // Sonneborn–Berger: 0 beat 1 (1), 1 beat 2 (0), 3 beat 2 (0): 1, 0, 0.
        let games = [
            pairing(1, 0, 1, [Some(0), None]),
            pairing(2, 1, 2, [Some(1), None]),
            pairing(2, 3, 2, [Some(3), None]),
        ]
        .concat();
        let ranks = |order| {
            standings(&[0, 1, 2, 3], &games, &[], order)
                .iter()
                .map(|s| (s.player, s.rank))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ranks(TieBreaks::Swiss),
            vec![(0, 1), (1, 2), (3, 3), (2, 4)]
        );
        assert_eq!(
            ranks(TieBreaks::RoundRobin),
            vec![(0, 1), (1, 2), (3, 2), (2, 4)]
        );
    }

    #[test]
    fn standings_with_byes_and_a_double_forfeit() {
        // Round 1: 0 beats 1 twice, 2 has the bye. Round 2: 2 wins one game
        // against 0, the other is a double forfeit; 1 has the bye.
        // Scores: 0: 2; 1: 0 + 2 = 2; 2: 1 + 2 = 3.
        // Buchholz: 0 met 1 and 2 (2 + 3): 5; 1 met 0: 2; 2 met 0: 2.
        // Sonneborn–Berger: 0 beat 1 twice (2 + 2): 4; 2 beat 0 once: 2.
        let games = [
            pairing(1, 0, 1, [Some(0), Some(0)]),
            pairing(2, 2, 0, [Some(2), None]),
        ]
        .concat();
        let byes = [(1, 2), (2, 1)];
        let table = standings(&[0, 1, 2], &games, &byes, TieBreaks::Swiss);
        assert_eq!(
            table,
            vec![
                row(1, 2, 3, 2, 1, 1, 1, 2, 2),
                row(2, 0, 2, 4, 2, 2, 0, 5, 4),
                row(3, 1, 2, 2, 0, 2, 1, 2, 0),
            ]
        );
    }

    #[test]
    fn standings_ignore_unknown_players_and_bad_games() {
        let games = [
            game(1, 0, 9, Some(0)),
            game(1, 0, 0, Some(0)),
            game(1, 0, 1, Some(2)),
            game(1, 1, 0, Some(0)),
        ];
        let table = standings(&[0, 1, 1], &games, &[(1, 9)], TieBreaks::RoundRobin);
        assert_eq!(
            table,
            vec![
                row(1, 1, 1, 1, 1, 0, 0, 0, 0),
                row(2, 0, 0, 1, 0, 1, 0, 1, 0)
            ]
        );
        assert_eq!(standings(&[], &games, &[], TieBreaks::Swiss), vec![]);
    }

    #[test]
    fn standings_without_games_share_rank_one() {
        let table = standings(&[3, 1, 2], &[], &[], TieBreaks::Swiss);
        let ranks: Vec<_> = table.iter().map(|s| (s.player, s.rank)).collect();
        assert_eq!(ranks, vec![(1, 1), (2, 1), (3, 1)]);
    }
}

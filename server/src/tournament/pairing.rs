//! Tournament pairing: who plays whom in a round. Pure logic, no I/O.
//!
//! Players are numbered by registration order ([`PlayerId`]). A *pairing* of
//! two players is two games from the same start position with the seats
//! swapped, so seat order inside a pair matters little; a bye is worth a whole
//! pairing won (2 points).
//!
//! # Round robin ([`round_robin`])
//!
//! The circle method: one seat stays fixed, the others rotate one step per
//! round, and seat `i` plays seat `m - 1 - i`. With an odd number of players a
//! dummy takes the fixed seat; whoever meets it has the bye, so everyone sits
//! out exactly once. Over all rounds every two players meet exactly once. The
//! fixed player sits first on odd rounds; the others sit first depending on
//! the parity of their place at the table, which alternates as they rotate, so
//! nobody is first more than twice running and first/second counts differ by
//! at most one.
//!
//! # Swiss ([`swiss`])
//!
//! Players come in ranking order (best first). The rules:
//! 1. two players never meet twice;
//! 2. with an odd count the lowest-ranked player who has not had a bye yet,
//!    and without whom the rest can still be paired, gets the bye; nobody gets
//!    a second one;
//! 3. pairing is within score groups, Dutch style: the top half of a group
//!    plays the bottom half (1st vs (k/2+1)th, ...); a player who cannot be
//!    paired in their group floats down to the next one;
//! 4. the higher-ranked player of a pair is named first.
//!
//! It is a depth-first search: the highest-ranked unpaired player tries
//! opponents in order of preference (the ideal Dutch opponent first, then
//! nearby places in the same score group, then lower groups by increasing
//! score difference), backtracking when the rest cannot be paired. A node
//! budget keeps it fast; a search over budget gives up (`None`).

pub type PlayerId = u32;

/// One round: pairs (the first named plays seat 0 in the pairing's first game) and at most one bye.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    pub pairs: Vec<(PlayerId, PlayerId)>,
    pub bye: Option<PlayerId>,
}

/// How many rounds a round robin of n players has: n-1 for even n, n for odd n (each player sits out once); 0 for n < 2.
pub fn round_robin_rounds(n: usize) -> u32 {
    let rounds = match n {
        0 | 1 => 0,
        n if n % 2 == 1 => n,
        n => n - 1,
    };
    u32::try_from(rounds).unwrap_or(u32::MAX)
}

/// Round `round` (1-based) of a round robin by the circle method over `players` (in the given order).
/// With an odd count a dummy is added; whoever meets the dummy gets the bye. Over all rounds every two players meet exactly once.
/// The fixed player sits first on odd rounds, the others by the parity of their place at the table (see the module doc).
/// Returns None if round is 0 or beyond round_robin_rounds.
pub fn round_robin(players: &[PlayerId], round: u32) -> Option<Round> {
    if round == 0 || round > round_robin_rounds(players.len()) {
        return None;
    }
    let mut seats: Vec<Option<PlayerId>> = players.iter().copied().map(Some).collect();
    if seats.len() % 2 == 1 {
        // The dummy takes the last seat, which is the fixed one: the bye then
        // moves round by round like any other opponent.
        seats.push(None);
    }
    let (&fixed, circle) = seats.split_last()?;
    let mut table = circle.to_vec();
    let turn = usize::try_from(round - 1).ok()? % circle.len().max(1);
    table.rotate_right(turn);
    table.insert(0, fixed);

    let mut result = Round {
        pairs: Vec::new(),
        bye: None,
    };
    let tables = table.len() / 2;
    let facing = table.iter().zip(table.iter().rev()).take(tables);
    for (place, (&near, &far)) in facing.enumerate() {
        let near_first = if place == 0 {
            round % 2 == 1
        } else {
            place % 2 == 1
        };
        let (first, second) = if near_first { (near, far) } else { (far, near) };
        match (first, second) {
            (Some(a), Some(b)) => result.pairs.push((a, b)),
            (Some(p), None) | (None, Some(p)) => result.bye = Some(p),
            (None, None) => {}
        }
    }
    Some(result)
}

/// A player as the Swiss pairer sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwissPlayer {
    pub id: PlayerId,
    pub score: u32,
    pub had_bye: bool,
    pub opponents: Vec<PlayerId>,
}

/// How many search nodes [`swiss`] may visit before giving up.
const NODE_BUDGET: u32 = 200_000;

/// Pairs the next Swiss round. `players` are the active players in ranking order (best first: the caller sorts by score then tie-breaks then id).
/// Returns None when no pairing satisfies the rules (within the search budget).
pub fn swiss(players: &[SwissPlayer]) -> Option<Round> {
    swiss_within(players, NODE_BUDGET)
}

fn swiss_within(players: &[SwissPlayer], budget: u32) -> Option<Round> {
    let mut search = Search::new(players, budget);
    if players.len() % 2 == 1 {
        return pair_with_bye(&mut search);
    }
    match search.pair_all_but(None) {
        Outcome::Paired => Some(search.round(None)),
        Outcome::Stuck | Outcome::OutOfBudget => None,
    }
}

/// The bye goes to the lowest-ranked player who can take it and leave the
/// rest pairable.
fn pair_with_bye(search: &mut Search) -> Option<Round> {
    let players = search.players;
    let candidates = players.iter().enumerate().rev().filter(|(_, p)| !p.had_bye);
    for (index, player) in candidates {
        match search.pair_all_but(Some(index)) {
            Outcome::Paired => return Some(search.round(Some(player.id))),
            Outcome::Stuck => continue,
            // The budget is shared, so no later candidate would get any.
            Outcome::OutOfBudget => return None,
        }
    }
    None
}

enum Outcome {
    Paired,
    Stuck,
    OutOfBudget,
}

/// The state of the backtracking search. Players are referred to by their
/// index in the ranking (lower is better).
struct Search<'a> {
    players: &'a [SwissPlayer],
    /// `can_meet[a][b]`: a and b are distinct and have not met.
    can_meet: Vec<Vec<bool>>,
    free: Vec<bool>,
    pairs: Vec<(usize, usize)>,
    nodes_left: u32,
}

impl<'a> Search<'a> {
    fn new(players: &'a [SwissPlayer], budget: u32) -> Self {
        let can_meet = players
            .iter()
            .map(|a| players.iter().map(|b| may_pair(a, b)).collect())
            .collect();
        Search {
            players,
            can_meet,
            free: Vec::new(),
            pairs: Vec::new(),
            nodes_left: budget,
        }
    }

    /// Pairs everyone except `bye`, leaving the result in `self.pairs`.
    fn pair_all_but(&mut self, bye: Option<usize>) -> Outcome {
        self.free = (0..self.players.len()).map(|i| Some(i) != bye).collect();
        self.pairs.clear();
        self.pair_rest()
    }

    fn pair_rest(&mut self) -> Outcome {
        let Some(nodes_left) = self.nodes_left.checked_sub(1) else {
            return Outcome::OutOfBudget;
        };
        self.nodes_left = nodes_left;
        let Some(top) = self.free.iter().position(|&free| free) else {
            return Outcome::Paired;
        };
        if !self.free_can_pair() {
            return Outcome::Stuck;
        }
        let candidates = self.candidates(top);
        self.set_free(top, false);
        for opponent in candidates {
            self.set_free(opponent, false);
            self.pairs.push((top, opponent));
            match self.pair_rest() {
                Outcome::Stuck => {}
                done => return done,
            }
            self.pairs.pop();
            self.set_free(opponent, true);
        }
        self.set_free(top, true);
        Outcome::Stuck
    }

    fn set_free(&mut self, player: usize, free: bool) {
        if let Some(slot) = self.free.get_mut(player) {
            *slot = free;
        }
    }

    fn is_free(&self, player: usize) -> bool {
        self.free.get(player).copied().unwrap_or(false)
    }

    fn can_meet(&self, a: usize, b: usize) -> bool {
        self.can_meet
            .get(a)
            .and_then(|row| row.get(b))
            .copied()
            .unwrap_or(false)
    }

    fn score(&self, player: usize) -> u32 {
        self.players.get(player).map_or(0, |p| p.score)
    }

    /// The free players `top` may meet, best first: its own score group with
    /// the ideal Dutch opponent (half a group below) first, then nearby
    /// places; then the other groups by increasing score difference, lower
    /// scores first (floating down), each group in ranking order.
    fn candidates(&self, top: usize) -> Vec<usize> {
        let score = self.score(top);
        let group: Vec<usize> = (0..self.players.len())
            .filter(|&i| (i == top || self.is_free(i)) && self.score(i) == score)
            .collect();
        let place = group.iter().position(|&i| i == top).unwrap_or(0);
        let ideal = place + group.len() / 2;
        let mut same: Vec<(usize, usize)> = group
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, i)| i != top && self.can_meet(top, i))
            .collect();
        // On a tie in distance the lower-ranked place wins: it is in the bottom half.
        same.sort_by_key(|&(at, _)| (at.abs_diff(ideal), at < ideal));

        let mut others: Vec<usize> = (0..self.players.len())
            .filter(|&i| self.is_free(i) && self.score(i) != score && self.can_meet(top, i))
            .collect();
        others.sort_by_key(|&i| (self.score(i).abs_diff(score), self.score(i) > score, i));

        same.into_iter().map(|(_, i)| i).chain(others).collect()
    }

    /// A quick necessary condition for the free players to be pairable:
    /// every connected group of players who may meet has an even size (a
    /// player who has met everyone left is a group of one).
    fn free_can_pair(&self) -> bool {
        let mut seen: Vec<bool> = self.free.iter().map(|&free| !free).collect();
        for start in 0..seen.len() {
            if seen.get(start).copied().unwrap_or(true) {
                continue;
            }
            if component_size(start, &mut seen, |a, b| self.can_meet(a, b)) % 2 == 1 {
                return false;
            }
        }
        true
    }

    fn round(&self, bye: Option<PlayerId>) -> Round {
        let id = |i: usize| self.players.get(i).map(|p| p.id);
        let pairs = self
            .pairs
            .iter()
            .filter_map(|&(a, b)| Some((id(a.min(b))?, id(a.max(b))?)))
            .collect();
        Round { pairs, bye }
    }
}

/// Two entries may be paired if they are different players who have not met
/// (either side's record of the meeting counts).
fn may_pair(a: &SwissPlayer, b: &SwissPlayer) -> bool {
    a.id != b.id && !a.opponents.contains(&b.id) && !b.opponents.contains(&a.id)
}

/// The size of the connected component of `start` among the unseen nodes,
/// marking it seen.
fn component_size(start: usize, seen: &mut [bool], linked: impl Fn(usize, usize) -> bool) -> usize {
    let mut stack = vec![start];
    let mut size = 0;
    if let Some(slot) = seen.get_mut(start) {
        *slot = true;
    }
    while let Some(node) = stack.pop() {
        size += 1;
        for (next, slot) in seen.iter_mut().enumerate() {
            if !*slot && linked(node, next) {
                *slot = true;
                stack.push(next);
            }
        }
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn pair_key(a: PlayerId, b: PlayerId) -> (PlayerId, PlayerId) {
        (a.min(b), a.max(b))
    }

    // --- round robin ---

    #[test]
    fn round_robin_round_counts() {
        let expected = [0, 0, 1, 3, 3, 5, 5, 7];
        for (n, &rounds) in expected.iter().enumerate() {
            assert_eq!(round_robin_rounds(n), rounds, "n = {n}");
        }
    }

    #[test]
    fn round_robin_everyone_meets_everyone_once() {
        for n in 2..=12u32 {
            // Ids unrelated to positions, to catch mixing the two up.
            let players: Vec<PlayerId> = (0..n).map(|i| 100 + 7 * i).collect();
            let rounds = round_robin_rounds(players.len());
            let mut met = HashSet::new();
            let mut byes = Vec::new();
            for round in 1..=rounds {
                let r = round_robin(&players, round).expect("round in range");
                let mut seen = HashSet::new();
                for &(a, b) in &r.pairs {
                    assert_ne!(a, b);
                    assert!(
                        seen.insert(a) && seen.insert(b),
                        "n={n} round {round}: twice"
                    );
                    assert!(met.insert(pair_key(a, b)), "n={n}: {a} and {b} meet again");
                }
                if let Some(p) = r.bye {
                    assert!(seen.insert(p), "n={n} round {round}: bye also plays");
                    byes.push(p);
                }
                assert_eq!(
                    seen.len(),
                    players.len(),
                    "n={n} round {round}: someone missing"
                );
            }
            let all_pairs = players.len() * (players.len() - 1) / 2;
            assert_eq!(met.len(), all_pairs, "n = {n}");
            byes.sort_unstable();
            let expected_byes = if n % 2 == 1 { players.clone() } else { vec![] };
            assert_eq!(byes, expected_byes, "n = {n}");
            assert_eq!(round_robin(&players, 0), None);
            assert_eq!(round_robin(&players, rounds + 1), None);
        }
    }

    #[test]
    fn round_robin_seat_order_alternates() {
        for n in 2..=12u32 {
            let players: Vec<PlayerId> = (0..n).collect();
            for &p in &players {
                // Whether p sits first, round by round (byes skipped).
                let firsts: Vec<bool> = (1..=round_robin_rounds(players.len()))
                    .filter_map(|round| round_robin(&players, round))
                    .filter_map(|r| {
                        r.pairs
                            .iter()
                            .find(|&&(a, b)| a == p || b == p)
                            .map(|&(a, _)| a == p)
                    })
                    .collect();
                let first = firsts.iter().filter(|&&f| f).count();
                let second = firsts.len() - first;
                assert!(first.abs_diff(second) <= 1, "n={n} player {p}: {firsts:?}");
                let streak = firsts.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]);
                assert!(!streak, "n={n} player {p}: {firsts:?}");
            }
        }
    }

    #[test]
    fn round_robin_small_inputs() {
        assert_eq!(round_robin(&[], 1), None);
        assert_eq!(round_robin(&[5], 1), None);
        let r = round_robin(&[5, 9], 1).expect("one round");
        assert_eq!(r.pairs.len(), 1);
        assert_eq!(r.bye, None);
        assert_eq!(round_robin(&[5, 9], 2), None);
    }

    // --- Swiss: hand-made examples ---

    fn player(id: PlayerId, score: u32, opponents: &[PlayerId]) -> SwissPlayer {
        SwissPlayer {
            id,
            score,
            had_bye: false,
            opponents: opponents.to_vec(),
        }
    }

    #[test]
    fn swiss_pairs_top_half_against_bottom_half() {
        let players: Vec<_> = (0..4).map(|id| player(id, 0, &[])).collect();
        let round = swiss(&players).expect("pairable");
        assert_eq!(round.pairs, vec![(0, 2), (1, 3)]);
        assert_eq!(round.bye, None);

        // Two score groups of four: each splits in halves on its own.
        let players: Vec<_> = (0..8)
            .map(|id| player(id, if id < 4 { 2 } else { 0 }, &[]))
            .collect();
        let round = swiss(&players).expect("pairable");
        assert_eq!(round.pairs, vec![(0, 2), (1, 3), (4, 6), (5, 7)]);
    }

    #[test]
    fn swiss_ideal_opponent_taken_means_the_nearest_one() {
        // 0 has met 3, its ideal opponent in a group of six: next nearest is 4.
        let players = vec![
            player(0, 1, &[3]),
            player(1, 1, &[]),
            player(2, 1, &[]),
            player(3, 1, &[0]),
            player(4, 1, &[]),
            player(5, 1, &[]),
        ];
        let round = swiss(&players).expect("pairable");
        assert_eq!(round.pairs, vec![(0, 4), (1, 3), (2, 5)]);
    }

    #[test]
    fn swiss_rematch_forces_a_float() {
        // 0 and 1 lead on 2 points but have met: each floats down to the
        // 0-point group, 0 taking the higher-ranked there.
        let players = vec![
            player(0, 2, &[1]),
            player(1, 2, &[0]),
            player(2, 0, &[]),
            player(3, 0, &[]),
        ];
        let round = swiss(&players).expect("pairable");
        assert_eq!(round.pairs, vec![(0, 2), (1, 3)]);
    }

    #[test]
    fn swiss_floats_to_the_nearest_score_first() {
        let players = vec![
            player(0, 4, &[]),
            player(1, 2, &[]),
            player(2, 2, &[]),
            player(3, 0, &[]),
        ];
        let round = swiss(&players).expect("pairable");
        // 0 alone on 4 points floats to the 2-point group, not to 3.
        assert_eq!(round.pairs, vec![(0, 1), (2, 3)]);
    }

    #[test]
    fn swiss_bye_goes_to_the_lowest_ranked_eligible() {
        let mut players: Vec<_> = (0..5).map(|id| player(id, 0, &[])).collect();
        assert_eq!(swiss(&players).and_then(|r| r.bye), Some(4));
        players[4].had_bye = true;
        assert_eq!(swiss(&players).and_then(|r| r.bye), Some(3));
        for p in &mut players {
            p.had_bye = true;
        }
        assert_eq!(swiss(&players), None);
    }

    #[test]
    fn swiss_bye_skips_a_player_whose_absence_leaves_no_pairing() {
        // 4 has had a bye and has met everyone but 3: a bye to 3 would leave
        // 4 without an opponent, so it goes to 2, the next lowest.
        let mut players = vec![
            player(0, 0, &[4]),
            player(1, 0, &[4]),
            player(2, 0, &[4]),
            player(3, 0, &[]),
            player(4, 0, &[0, 1, 2]),
        ];
        players[4].had_bye = true;
        let round = swiss(&players).expect("pairable");
        assert_eq!(round.bye, Some(2));
        assert_eq!(round.pairs, vec![(0, 1), (3, 4)]);
        // Once 3 and 4 have met too, no bye leaves a pairing.
        players[3].opponents.push(4);
        players[4].opponents.push(3);
        assert_eq!(swiss(&players), None);
    }

    #[test]
    fn swiss_tiny_inputs() {
        let empty = Round {
            pairs: vec![],
            bye: None,
        };
        assert_eq!(swiss(&[]), Some(empty));
        let round = swiss(&[player(7, 0, &[])]).expect("a bye");
        assert_eq!(round.bye, Some(7));
        assert_eq!(swiss(&[player(1, 0, &[2]), player(2, 0, &[1])]), None);
        // The same player twice cannot play themself.
        assert_eq!(swiss(&[player(1, 0, &[]), player(1, 0, &[])]), None);
    }

    #[test]
    fn swiss_gives_up_over_budget() {
        let players: Vec<_> = (0..16).map(|id| player(id, 0, &[])).collect();
        assert!(swiss_within(&players, 1_000).is_some());
        assert_eq!(swiss_within(&players, 3), None);
    }

    // --- Swiss: simulated tournaments ---

    /// A small deterministic generator (splitmix64) for game results.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// The winning seat of a game, or None (a double forfeit) now and then.
        fn winner(&mut self) -> Option<usize> {
            match self.next() % 20 {
                0 => None,
                r => Some((r % 2) as usize),
            }
        }
    }

    /// Whether any bye and pairing satisfies rules 1 and 2 (exhaustive).
    fn pairing_exists(players: &[SwissPlayer]) -> bool {
        let all: Vec<usize> = (0..players.len()).collect();
        if players.len() % 2 == 1 {
            return all.iter().filter(|&&b| !players[b].had_bye).any(|&b| {
                let rest: Vec<usize> = all.iter().copied().filter(|&i| i != b).collect();
                perfect_matching_exists(players, &rest)
            });
        }
        perfect_matching_exists(players, &all)
    }

    fn perfect_matching_exists(players: &[SwissPlayer], left: &[usize]) -> bool {
        let Some((&first, rest)) = left.split_first() else {
            return true;
        };
        rest.iter().any(|&other| {
            may_pair(&players[first], &players[other]) && {
                let remaining: Vec<usize> = rest.iter().copied().filter(|&i| i != other).collect();
                perfect_matching_exists(players, &remaining)
            }
        })
    }

    /// Plays a Swiss tournament, checking every round; returns how many
    /// rounds were paired.
    fn run_swiss(n: u32, rounds: u32, seed: u64) -> Result<u32, TestCaseError> {
        let mut rng = Rng(seed);
        let mut players: Vec<SwissPlayer> = (0..n).map(|id| player(id, 0, &[])).collect();
        for round in 1..=rounds {
            // The caller's ranking: score down, then id.
            players.sort_by_key(|p| (std::cmp::Reverse(p.score), p.id));
            let Some(pairing) = swiss(&players) else {
                if n <= 10 {
                    prop_assert!(!pairing_exists(&players), "round {round}: missed a pairing");
                }
                return Ok(round - 1);
            };
            check_round(&players, &pairing)?;
            play_round(&mut players, &pairing, &mut rng);
        }
        Ok(rounds)
    }

    fn check_round(players: &[SwissPlayer], round: &Round) -> Result<(), TestCaseError> {
        let by_id = |id: PlayerId| players.iter().find(|p| p.id == id);
        let mut seen = HashSet::new();
        for &(a, b) in &round.pairs {
            prop_assert!(
                seen.insert(a) && seen.insert(b),
                "{a} or {b} twice in {round:?}"
            );
            let (pa, pb) = (by_id(a), by_id(b));
            prop_assert!(pa.is_some() && pb.is_some(), "unknown player in {round:?}");
            prop_assert!(
                pa.is_some_and(|p| !p.opponents.contains(&b)),
                "{a} meets {b} again"
            );
        }
        prop_assert_eq!(round.bye.is_some(), players.len() % 2 == 1);
        if let Some(bye) = round.bye {
            prop_assert!(seen.insert(bye), "the bye {bye} also plays");
            prop_assert!(
                by_id(bye).is_some_and(|p| !p.had_bye),
                "second bye for {bye}"
            );
        }
        prop_assert_eq!(seen.len(), players.len());
        Ok(())
    }

    fn play_round(players: &mut [SwissPlayer], round: &Round, rng: &mut Rng) {
        for &(a, b) in &round.pairs {
            for seats in [[a, b], [b, a]] {
                if let Some(seat) = rng.winner() {
                    let winner = seats[seat];
                    players
                        .iter_mut()
                        .filter(|p| p.id == winner)
                        .for_each(|p| p.score += 1);
                }
            }
            for p in players.iter_mut() {
                if p.id == a {
                    p.opponents.push(b);
                } else if p.id == b {
                    p.opponents.push(a);
                }
            }
        }
        if let Some(bye) = round.bye {
            for p in players.iter_mut().filter(|p| p.id == bye) {
                p.score += 2;
                p.had_bye = true;
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn swiss_tournaments_follow_the_rules(
            n in 2u32..=24,
            rounds in 1u32..=23,
            seed in any::<u64>(),
        ) {
            let rounds = rounds.min(n - 1);
            run_swiss(n, rounds, seed)?;
        }
    }

    #[test]
    fn swiss_sixteen_players_seven_rounds_always_pair() {
        for seed in 0..2_000 {
            let paired = run_swiss(16, 7, seed).map_err(|e| format!("seed {seed}: {e}"));
            assert_eq!(paired, Ok(7), "seed {seed}");
        }
    }
}

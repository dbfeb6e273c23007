//! Tournaments over real sockets: fields of bots play round robins and Swiss
//! tournaments to the end; the standings are what the games say, perfect bots
//! score what the engine predicts, and a restart in the middle changes nothing.

use std::collections::{HashMap, HashSet};

use grundy_bot::tournament::{run_field, Field, FieldOutcome};
use grundy_bot::Level;
use grundy_protocol::wire::{
    Clock, EndReason, TournamentEventBody, TournamentFormat, TournamentSettings, TournamentState,
    TournamentStatus,
};
use grundy_protocol::{Outcome, Position, Strategy};
use grundy_tests::TestServer;

fn settings(format: TournamentFormat, rounds: Option<u32>, family: &str) -> TournamentSettings {
    TournamentSettings {
        name: Some("test".into()),
        spec: None,
        family: Some(family.into()),
        size: None,
        seed: Some(42),
        format,
        rounds,
        clock: Some(Clock {
            initial_ms: 60_000,
            increment_ms: 1_000,
        }),
        max_players: None,
        rated: true,
    }
}

async fn field(
    url: &str,
    settings: TournamentSettings,
    players: usize,
    levels: Vec<Level>,
) -> FieldOutcome {
    run_field(
        Field {
            url: url.to_string(),
            join: None,
            settings,
            players,
            levels,
            seed: 7,
        },
        |_| {},
    )
    .await
    .expect("the tournament runs to the end")
}

/// The standings recomputed from the games: score per player.
fn scores(state: &TournamentState) -> HashMap<u32, u32> {
    let mut score: HashMap<u32, u32> = HashMap::new();
    for g in &state.games {
        if let Some(w) = g.winner {
            *score.entry(w).or_default() += 1;
        }
    }
    for b in &state.byes {
        *score.entry(b.player).or_default() += 2;
    }
    score
}

/// Every finished tournament: each pairing played both seat orders from one
/// start, and the standings agree with the games.
fn check_consistent(state: &TournamentState) {
    assert_eq!(state.status, TournamentStatus::Finished);
    for p in &state.pairings {
        let [a, b] = p.players;
        for players in [[a, b], [b, a]] {
            let games: Vec<_> = state
                .games
                .iter()
                .filter(|g| g.round == p.round && g.players == players)
                .collect();
            assert_eq!(games.len(), 1, "round {} {players:?}", p.round);
            assert!(games[0].result.is_some());
        }
    }
    assert_eq!(state.games.len(), state.pairings.len() * 2);
    let score = scores(state);
    for s in &state.standings {
        assert_eq!(s.score, score.get(&s.player).copied().unwrap_or(0), "{s:?}");
        assert!(s.rating.is_some(), "rated games give ratings: {s:?}");
    }
    let ranks: Vec<u32> = state.standings.iter().map(|s| s.score).collect();
    assert!(ranks.windows(2).all(|w| w[0] >= w[1]), "sorted: {ranks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_robin_of_perfect_bots_scores_one_game_per_pairing() {
    let server = TestServer::start().await;
    let out = field(
        &server.url(),
        settings(TournamentFormat::RoundRobin, None, "nim"),
        5,
        vec![Level::Perfect],
    )
    .await;
    let state = &out.state;
    check_consistent(state);
    // 5 players: 5 rounds, each pair meets once, each player sits out once.
    assert_eq!(state.rounds, 5);
    let mut met = HashSet::new();
    for p in &state.pairings {
        let [a, b] = p.players;
        assert!(met.insert((a.min(b), a.max(b))), "{a} and {b} met twice");
    }
    assert_eq!(met.len(), 10);
    assert_eq!(state.byes.len(), 5);
    // Perfect against perfect: the side the engine says wins, wins. So each
    // pairing is one game each: 4 pairings + a bye = 6 points for everyone.
    for g in &state.games {
        let pairing = state
            .pairings
            .iter()
            .find(|p| {
                p.round == g.round
                    && (p.players == g.players || p.players == [g.players[1], g.players[0]])
            })
            .expect("the game's pairing");
        let outcome = Position::from_spec(&pairing.spec).expect("start").outcome();
        let seat = if outcome == Outcome::N { 0 } else { 1 };
        assert_eq!(
            g.winner,
            Some(g.players[seat]),
            "{g:?} from {}",
            pairing.spec
        );
        assert_eq!(g.result.map(|r| r.reason), Some(EndReason::Rules));
    }
    for s in &state.standings {
        assert_eq!(s.score, 6, "{s:?}");
        assert_eq!(s.rank, 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swiss_of_sixteen_bots_over_seven_rounds_finishes_with_correct_standings() {
    let server = TestServer::start().await;
    let mut events = Vec::new();
    let out = run_field(
        Field {
            url: server.url(),
            join: None,
            settings: settings(TournamentFormat::Swiss, Some(7), "nim"),
            players: 16,
            levels: vec![
                Level::Perfect,
                Level::Casual(3),
                Level::Casual(2),
                Level::Casual(1),
            ],
            seed: 11,
        },
        |e| events.push(e.clone()),
    )
    .await
    .expect("the tournament runs to the end");
    let state = &out.state;
    check_consistent(state);
    assert_eq!(state.rounds, 7);
    assert_eq!(state.round, 7);
    assert!(state.ended_early.is_none());
    assert_eq!(state.pairings.len(), 7 * 8);
    let mut met = HashSet::new();
    for p in &state.pairings {
        let [a, b] = p.players;
        assert!(met.insert((a.min(b), a.max(b))), "{a} and {b} met twice");
    }
    assert!(state.byes.is_empty());
    // The perfect bots never lose a game they had the winning side of.
    let perfect: HashSet<u32> = out
        .bots
        .iter()
        .filter(|b| b.level == Level::Perfect)
        .map(|b| b.player)
        .collect();
    assert_eq!(perfect.len(), 4);
    for g in &state.games {
        let pairing = state
            .pairings
            .iter()
            .find(|p| {
                p.round == g.round
                    && (p.players == g.players || p.players == [g.players[1], g.players[0]])
            })
            .expect("the game's pairing");
        let outcome = Position::from_spec(&pairing.spec).expect("start").outcome();
        let winning_seat = if outcome == Outcome::N { 0 } else { 1 };
        let favoured = g.players[winning_seat];
        if perfect.contains(&favoured) {
            assert_eq!(g.winner, Some(favoured), "{g:?}");
        }
    }
    // Events told the story: 7 rounds started and ended, one finish.
    let rounds_started = events
        .iter()
        .filter(|e| matches!(e, TournamentEventBody::RoundStarted { .. }))
        .count();
    assert_eq!(rounds_started, 7);
    assert!(matches!(
        events.last(),
        Some(TournamentEventBody::Finished { .. })
    ));
}

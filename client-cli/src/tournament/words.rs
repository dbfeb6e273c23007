//! A tournament's state and events in words for a person, and its
//! standings as a table.

use grundy_protocol::wire::{
    Clock, PlayerKind, Standing, TournamentEvent, TournamentEventBody, TournamentFormat,
    TournamentState, TournamentStatus,
};

use crate::follow::{clock_text, reason_text};

/// A tournament's event log as lines for a person: the players' names, and the
/// last event told.
pub(super) struct Log {
    pub(super) names: Vec<String>,
    pub(super) seq: u64,
}

impl Log {
    pub(super) fn new(state: &TournamentState) -> Log {
        let mut log = Log {
            names: Vec::new(),
            seq: state.seq,
        };
        for p in &state.players {
            log.set_name(p.player, &p.name);
        }
        log
    }

    pub(super) fn set_name(&mut self, player: u32, name: &str) {
        let i = player as usize;
        if self.names.len() <= i {
            self.names.resize(i + 1, String::new());
        }
        self.names[i] = name.to_string();
    }

    pub(super) fn name(&self, player: u32) -> String {
        match self.names.get(player as usize) {
            Some(n) if !n.is_empty() => n.clone(),
            _ => format!("player {player}"),
        }
    }

    /// The event in words; None when it was told already.
    pub(super) fn apply(&mut self, event: &TournamentEvent) -> Option<String> {
        if event.seq <= self.seq {
            return None;
        }
        self.seq = event.seq;
        if let TournamentEventBody::Registered { player, name, .. } = &event.body {
            self.set_name(*player, name);
        }
        Some(self.text(&event.body))
    }

    pub(super) fn text(&self, body: &TournamentEventBody) -> String {
        match body {
            TournamentEventBody::Registered {
                player,
                name,
                player_kind,
            } => {
                let who = PlayerKind::show(name, *player_kind);
                format!("{who} registered (player {player}).\n")
            }
            TournamentEventBody::Withdrawn { player } => format!(
                "{} withdrew: their remaining games are forfeited.\n",
                self.name(*player)
            ),
            TournamentEventBody::Started { rounds } => format!(
                "The tournament starts: {rounds} {}.\n",
                plural(*rounds, "round", "rounds")
            ),
            TournamentEventBody::RoundStarted {
                round,
                pairings,
                bye,
            } => {
                let mut out = format!("\nRound {round} paired:\n");
                for p in pairings {
                    out.push_str(&format!(
                        "  {} vs {}, from {} (two games, seats swapped)\n",
                        self.name(p.players[0]),
                        self.name(p.players[1]),
                        spec_text(&p.spec)
                    ));
                }
                if let Some(b) = bye {
                    out.push_str(&format!("  {} has a bye (2 points).\n", self.name(*b)));
                }
                out
            }
            TournamentEventBody::GameStarted {
                round,
                room,
                players,
            } => format!(
                "Round {round}: {} (moving first) vs {} has begun; watch it with `grundy watch {room}`.\n",
                self.name(players[0]),
                self.name(players[1])
            ),
            TournamentEventBody::GameEnded {
                round,
                players,
                result,
                winner,
                ..
            } => {
                let why = reason_text(result.reason);
                match winner {
                    Some(w) => {
                        let loser = if *w == players[0] {
                            players[1]
                        } else {
                            players[0]
                        };
                        format!(
                            "Round {round}: {} beat {} ({why}).\n",
                            self.name(*w),
                            self.name(loser)
                        )
                    }
                    None => format!(
                        "Round {round}: {} vs {}: no winner ({why}).\n",
                        self.name(players[0]),
                        self.name(players[1])
                    ),
                }
            }
            TournamentEventBody::RoundEnded { round, standings } => format!(
                "Round {round} is over. Standings:\n{}",
                standings_table(standings)
            ),
            TournamentEventBody::Finished {
                standings,
                ended_early,
            } => format!("\n{}", finished_text(standings, ended_early)),
        }
    }
}

/// Prints a tournament's state: what it plays, then the final standings if it
/// is over (true), or the standings so far once a round has been played.
pub(super) fn show_state(state: &TournamentState) -> bool {
    print!("{}", describe_state(state));
    if state.status == TournamentStatus::Finished {
        print!("{}", finished_text(&state.standings, &state.ended_early));
        return true;
    }
    if state.round > 0 {
        print!("Standings:\n{}", standings_table(&state.standings));
    }
    false
}

pub(super) fn finished_text(standings: &[Standing], ended_early: &Option<String>) -> String {
    let early = ended_early
        .as_ref()
        .map(|why| format!(" early ({why})"))
        .unwrap_or_default();
    format!(
        "The tournament is over{early}. Final standings:\n{}",
        standings_table(standings)
    )
}

pub(super) fn plural(n: u32, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

pub(super) fn format_text(f: TournamentFormat) -> &'static str {
    match f {
        TournamentFormat::RoundRobin => "round robin",
        TournamentFormat::Swiss => "Swiss",
    }
}

pub(super) fn status_text(s: TournamentStatus) -> &'static str {
    match s {
        TournamentStatus::Registering => "registering",
        TournamentStatus::Running => "running",
        TournamentStatus::Finished => "finished",
    }
}

/// A game id as a person names it (`kayles`: Kayles).
pub(super) fn game_label(id: &str) -> String {
    grundy_protocol::names::game_name(id).to_string()
}

/// A start as a person reads it: the game's own name and the spec in a few
/// words (`Kayles, heaps [3,4]`), never the engine's general form.
fn spec_text(spec: &serde_json::Value) -> String {
    let name = grundy_protocol::names::spec_name(spec);
    let words = grundy_protocol::names::describe_spec(spec, 120);
    match (name.is_empty(), words.is_empty()) {
        (true, _) => spec.to_string(),
        (false, true) => name.to_string(),
        (false, false) => format!("{name}, {words}"),
    }
}

fn clock_label(clock: Option<Clock>) -> String {
    clock.map_or_else(
        || "untimed".to_string(),
        |c| format!("{}+{}s", clock_text(c.initial_ms), c.increment_ms / 1000),
    )
}

/// What a tournament plays and where it is, in a few lines.
pub(super) fn describe_state(s: &TournamentState) -> String {
    let set = &s.settings;
    let game = match (&set.spec, &set.family) {
        (Some(spec), _) => spec_text(spec),
        (None, Some(family)) => {
            let game = game_label(family);
            match set.size {
                Some(n) => format!("{game}, random starts (size {n})"),
                None => format!("{game}, random starts"),
            }
        }
        (None, None) => "?".to_string(),
    };
    let mut out = format!(
        "{} ({}, id {}): {}, {game}, clock {}, {}.\n",
        set.name.as_deref().unwrap_or("Untitled tournament"),
        s.code,
        s.tournament,
        format_text(set.format),
        clock_label(set.clock),
        if set.rated { "rated" } else { "unrated" }
    );
    let max = set
        .max_players
        .map(|m| format!(" (at most {m})"))
        .unwrap_or_default();
    out.push_str(&match s.status {
        TournamentStatus::Registering => format!(
            "Registering: {} {}{max}.\n",
            s.players.len(),
            plural(s.players.len() as u32, "player", "players")
        ),
        TournamentStatus::Running => format!("Running: round {} of {}.\n", s.round, s.rounds),
        TournamentStatus::Finished => format!(
            "Finished after {} {}.\n",
            s.round,
            plural(s.round, "round", "rounds")
        ),
    });
    if !s.players.is_empty() {
        let names: Vec<String> = s
            .players
            .iter()
            .map(|p| {
                if p.withdrawn {
                    format!("{} (withdrawn)", p.name)
                } else {
                    p.name.clone()
                }
            })
            .collect();
        out.push_str(&format!("Players: {}.\n", names.join(", ")));
    }
    out
}

/// The standings as a table: rank, player, score, W-L, byes, Buchholz,
/// Sonneborn-Berger and rating.
pub fn standings_table(standings: &[Standing]) -> String {
    if standings.is_empty() {
        return "  (no players)\n".to_string();
    }
    let rows: Vec<Vec<String>> = standings
        .iter()
        .map(|s| {
            vec![
                s.rank.to_string(),
                if s.withdrawn {
                    format!("{} (withdrawn)", s.name)
                } else {
                    s.name.clone()
                },
                s.score.to_string(),
                format!("{}-{}", s.wins, s.losses),
                s.byes.to_string(),
                s.buchholz.to_string(),
                s.sonneborn_berger.to_string(),
                // Halves round up (a plain `{:.0}` would round them to even).
                s.rating
                    .map_or_else(|| "-".to_string(), |r| format!("{}", r.round() as i64)),
            ]
        })
        .collect();
    columns(
        &[
            "rank", "player", "score", "W-L", "byes", "Buchholz", "S-B", "rating",
        ],
        &rows,
        &[true, false, true, true, true, true, true, true],
    )
}

/// Rows laid out in columns under a header, two spaces apart; `right[i]`
/// aligns column `i` to the right.
pub(super) fn columns(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let parts: Vec<String> = cells
            .zip(widths.iter().zip(right))
            .map(|(cell, (&w, &r))| {
                if r {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                }
            })
            .collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut out = line(&mut header.iter().copied());
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn standing(rank: u32, player: u32, name: &str, wins: u32, losses: u32) -> Standing {
        Standing {
            rank,
            player,
            name: name.into(),
            player_kind: None,
            score: wins,
            games: wins + losses,
            wins,
            losses,
            byes: 0,
            buchholz: 0,
            sonneborn_berger: 0,
            rating: None,
            withdrawn: false,
        }
    }

    #[test]
    fn standings() {
        let table = vec![
            Standing {
                score: 6,
                byes: 1,
                buchholz: 9,
                sonneborn_berger: 7,
                rating: Some(1662.4999),
                ..standing(1, 2, "bot-perfect-03", 4, 0)
            },
            Standing {
                buchholz: 11,
                sonneborn_berger: 5,
                rating: Some(1540.5),
                ..standing(2, 0, "alice", 4, 2)
            },
            Standing {
                buchholz: 11,
                sonneborn_berger: 5,
                rating: Some(1499.2),
                ..standing(2, 3, "bob", 4, 2)
            },
            Standing {
                buchholz: 14,
                sonneborn_berger: 0,
                withdrawn: true,
                byes: 1,
                score: 2,
                ..standing(4, 1, "carol", 0, 4)
            },
        ];
        insta::assert_snapshot!(standings_table(&table));
    }

    #[test]
    fn standings_without_players_or_ratings() {
        assert_eq!(standings_table(&[]), "  (no players)\n");
        let t = standings_table(&[standing(1, 0, "a", 0, 0)]);
        assert_eq!(
            t,
            "rank  player  score  W-L  byes  Buchholz  S-B  rating\n   1  a           0  0-0     0         0    0       -\n"
        );
    }

    fn state(events: Vec<TournamentEventBody>) -> (Log, Vec<String>) {
        let mut log = Log {
            names: Vec::new(),
            seq: 0,
        };
        let said = events
            .into_iter()
            .enumerate()
            .filter_map(|(i, body)| {
                log.apply(&TournamentEvent {
                    seq: i as u64 + 1,
                    body,
                })
            })
            .collect();
        (log, said)
    }

    #[test]
    fn events_in_words() {
        use grundy_protocol::wire::{EndReason, MatchResult, Pairing};
        let (mut log, said) = state(vec![
            TournamentEventBody::Registered {
                player: 0,
                name: "alice".into(),
                player_kind: Some(PlayerKind::Person),
            },
            TournamentEventBody::Registered {
                player: 1,
                name: "bob".into(),
                player_kind: None,
            },
            TournamentEventBody::RoundStarted {
                round: 1,
                pairings: vec![Pairing {
                    round: 1,
                    players: [1, 0],
                    spec: json!({"game": "nim", "heaps": [1, 2]}),
                }],
                bye: None,
            },
            TournamentEventBody::GameEnded {
                round: 1,
                room: Some("r".into()),
                players: [1, 0],
                result: MatchResult {
                    winner: Some(1),
                    reason: EndReason::Rules,
                },
                winner: Some(0),
            },
        ]);
        assert_eq!(said[0], "alice registered (player 0).\n");
        assert_eq!(
            said[2],
            "\nRound 1 paired:\n  bob vs alice, from Nim, heaps [1,2] (two games, seats swapped)\n"
        );
        assert_eq!(said[3], "Round 1: alice beat bob (by the rules).\n");
        // Told once: an event seen again (after a reconnection) says nothing.
        let again = TournamentEvent {
            seq: 2,
            body: TournamentEventBody::Withdrawn { player: 1 },
        };
        assert_eq!(log.apply(&again), None);
    }
}

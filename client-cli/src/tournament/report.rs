//! Reading tournaments: the list of those registering or running, one's
//! state and standings, its games exported, and the rating leaderboard.

use anyhow::{bail, Context, Result};
use grundy_client::client::ClientError;
use grundy_client::tournament::{export_games, games_csv, tournament_state};
use grundy_protocol::wire::{
    ClientBody, ClientMsg, ErrorCode, PlayerKind, ServerBody, ServerMsg, TournamentStatus,
};
use serde_json::json;

use super::words::{columns, format_text, game_label, plural, show_state, status_text};
use super::{
    ask, connect, no_tournament, server_flag, ExportArgs, ExportFormat, ListArgs, RatingsArgs,
    ShowArgs,
};
use crate::net;

pub(super) async fn list(args: ListArgs) -> Result<()> {
    let mut c = connect(&args.server, "spectator").await?;
    let tournaments = match ask(&mut c, |id| ClientMsg {
        id,
        body: ClientBody::ListTournaments,
    })
    .await?
    {
        ServerMsg {
            body: ServerBody::Tournaments { tournaments, .. },
            ..
        } => tournaments,
        other => bail!("unexpected answer: {other:?}"),
    };
    c.close().await;
    if args.json {
        return print_json(json!({ "tournaments": tournaments }));
    }
    if tournaments.is_empty() {
        println!(
            "No tournaments registering or running. Open one: grundy tournament create --family nim --format swiss --rounds 3"
        );
        return Ok(());
    }
    let rows: Vec<Vec<String>> = tournaments
        .iter()
        .map(|t| {
            vec![
                t.code.clone(),
                t.name.clone().unwrap_or_else(|| "(untitled)".into()),
                game_label(&t.game),
                format_text(t.format).to_string(),
                status_text(t.status).to_string(),
                format!("{}/{}", t.players, t.max_players),
                if t.rounds == 0 {
                    "-".to_string()
                } else {
                    format!("{}/{}", t.round, t.rounds)
                },
            ]
        })
        .collect();
    print!(
        "{}",
        columns(
            &["code", "name", "game", "format", "status", "players", "round"],
            &rows,
            &[false, false, false, false, false, true, true],
        )
    );
    println!("Join one with `grundy tournament join CODE --name NAME`, or follow it with `grundy tournament watch CODE`.");
    Ok(())
}

pub(super) async fn show(args: ShowArgs) -> Result<()> {
    let mut c = connect(&args.server, "spectator").await?;
    let state = match tournament_state(&mut c, &args.code).await {
        Ok(state) => state,
        Err(ClientError::Refused {
            code: ErrorCode::UnknownTournament,
            ..
        }) => return Err(no_tournament(&args.code)),
        Err(e) => bail!("{}", net::words(&e)),
    };
    c.close().await;
    if args.json {
        return print_json(serde_json::to_value(&state)?);
    }
    if !show_state(&state) && state.round == 0 {
        println!("No standings yet: the tournament has not started.");
    }
    if state.status != TournamentStatus::Finished {
        println!(
            "Follow it with `grundy tournament watch {}{}`.",
            state.code,
            server_flag(&args.server)
        );
    }
    Ok(())
}

pub(super) async fn export(args: ExportArgs) -> Result<()> {
    let mut c = connect(&args.server, "exporter").await?;
    let state = match tournament_state(&mut c, &args.tournament).await {
        Ok(state) => state,
        Err(ClientError::Refused {
            code: ErrorCode::UnknownTournament,
            ..
        }) => return Err(no_tournament(&args.tournament)),
        Err(e) => bail!("{}", net::words(&e)),
    };
    let games = export_games(&mut c, &state)
        .await
        .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))?;
    c.close().await;
    if state.status != TournamentStatus::Finished {
        eprintln!(
            "Tournament {} is {}: these are its games so far.",
            state.code,
            status_text(state.status)
        );
    }
    let text = match args.format {
        ExportFormat::Csv => games_csv(&state.tournament, &games),
        ExportFormat::Json => {
            let doc = json!({
                "tournament": {
                    "id": state.tournament,
                    "code": state.code,
                    "name": state.settings.name,
                    "settings": state.settings,
                    "status": state.status,
                    "rounds": state.rounds,
                    "players": state.players,
                    "ended_early": state.ended_early,
                },
                "standings": state.standings,
                "games": games,
            });
            let mut text = serde_json::to_string_pretty(&doc)?;
            text.push('\n');
            text
        }
    };
    match &args.out {
        Some(path) => {
            std::fs::write(path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!(
                "Wrote {} {} of tournament {} to {}.",
                games.len(),
                plural(games.len() as u32, "game", "games"),
                state.code,
                path.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(())
}

pub(super) async fn ratings(args: RatingsArgs) -> Result<()> {
    let mut c = connect(&args.server, "spectator").await?;
    let answer = ask(&mut c, |id| ClientMsg {
        id,
        body: ClientBody::GetRatings {
            game: Some(args.game.clone()),
            family: None,
            limit: args.limit,
        },
    })
    .await?;
    c.close().await;
    let ServerMsg {
        body:
            ServerBody::Ratings {
                game,
                name,
                ratings,
                ..
            },
        ..
    } = answer
    else {
        bail!("unexpected answer: {answer:?}");
    };
    let known = |id: &str| {
        // The heap games' ratings from before ratings were kept per game.
        id == "heaps-pooled" || grundy_protocol::random::game_ids().any(|g| g == id)
    };
    if ratings.is_empty() && !known(&args.game) {
        let known: Vec<&str> = grundy_protocol::random::game_ids().collect();
        bail!(
            "no game {:?}: the games are {}",
            args.game,
            known.join(", ")
        );
    }
    if args.json {
        return print_json(json!({ "game": game, "name": name, "ratings": ratings }));
    }
    if ratings.is_empty() {
        println!("No rated {name} players yet.");
        return Ok(());
    }
    println!("Ratings in {name} (Glicko-2; RD: how uncertain the rating is):");
    let rows: Vec<Vec<String>> = ratings
        .iter()
        .enumerate()
        .map(|(i, r)| {
            vec![
                (i + 1).to_string(),
                if r.unclaimed {
                    format!("{} (unclaimed: before accounts)", r.player)
                } else {
                    PlayerKind::show(&r.player, r.player_kind)
                },
                format!("{}", r.rating.round() as i64),
                format!("{}", r.deviation.round() as i64),
                r.games.to_string(),
            ]
        })
        .collect();
    print!(
        "{}",
        columns(
            &["#", "player", "rating", "RD", "games"],
            &rows,
            &[true, false, true, true, true],
        )
    );
    Ok(())
}

/// `value` as pretty JSON on standard output, for programs.
fn print_json(value: impl Into<serde_json::Value>) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(&value.into())?);
    Ok(())
}

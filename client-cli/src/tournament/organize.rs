//! Opening a tournament and starting it (its owner token).

use anyhow::{bail, Result};
use grundy_client::tournament::tournament_state;
use grundy_protocol::wire::{
    ClientBody, ClientMsg, ServerBody, ServerMsg, TournamentFormat, TournamentSettings,
};

use super::words::{describe_state, plural};
use super::{ask, connect, server_flag, CreateArgs, FormatArg, StartArgs};
use crate::net;
use crate::play;

pub(super) async fn create(args: CreateArgs) -> Result<()> {
    let spec = args.spec.as_deref().map(crate::spec::parse).transpose()?;
    let clock = args.clock.as_deref().map(play::parse_clock).transpose()?;
    let settings = TournamentSettings {
        name: args.name.clone(),
        spec,
        family: args.family.clone(),
        size: args.size,
        seed: args.seed,
        format: match args.format {
            FormatArg::Swiss => TournamentFormat::Swiss,
            FormatArg::RoundRobin => TournamentFormat::RoundRobin,
        },
        rounds: args.rounds,
        clock,
        max_players: args.max_players,
        rated: args.rated,
    };
    let mut c = connect(&args.server, "organizer").await?;
    let answer = ask(&mut c, |id| ClientMsg {
        id,
        body: ClientBody::CreateTournament { settings },
    })
    .await?;
    c.close().await;
    let ServerMsg {
        body:
            ServerBody::TournamentCreated {
                code,
                owner_token,
                state,
                ..
            },
        ..
    } = answer
    else {
        bail!("unexpected answer: {answer:?}");
    };
    let server = server_flag(&args.server);
    println!("Tournament {code} created (id {}).", state.tournament);
    print!("{}", describe_state(&state));
    println!("Players join with:\n  grundy tournament join {code} --name NAME{server}");
    println!("Owner token: {owner_token} (keep it: it starts the tournament).");
    println!(
        "Once the players are in, start it with:\n  grundy tournament start {code} --token {owner_token}{server}"
    );
    Ok(())
}

pub(super) async fn start(args: StartArgs) -> Result<()> {
    let mut c = connect(&args.server, "organizer").await?;
    ask(&mut c, |id| ClientMsg {
        id,
        body: ClientBody::StartTournament {
            tournament: args.code.clone(),
            token: args.token.clone(),
        },
    })
    .await?;
    let state = tournament_state(&mut c, &args.code)
        .await
        .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))?;
    c.close().await;
    println!(
        "Tournament {} started: {} players, {} {}.",
        state.code,
        state.players.len(),
        state.rounds,
        plural(state.rounds, "round", "rounds")
    );
    if let Some(why) = &state.ended_early {
        println!("It ended at once: {why}.");
    }
    println!(
        "Follow it with `grundy tournament watch {}{}`.",
        state.code,
        server_flag(&args.server)
    );
    Ok(())
}

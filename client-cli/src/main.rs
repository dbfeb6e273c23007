//! `grundy`: the command for people: play matches (against the house bot, a
//! person, or on a server started in this process), look at the lobby, watch,
//! replay, and analyse positions; tournaments: join and play, watch, export;
//! accounts: open one, log in, manage its tokens.

mod account;
mod analyze;
mod console;
mod describe;
#[cfg(test)]
mod docs;
mod follow;
mod input;
mod net;
mod play;
mod render;
mod seats;
mod spectate;
mod tokens;
mod tournament;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
/// Positions in the short forms people type: the engine's reading, which
/// `grundy-bot` and the server's `/api/parse` share (`crate::spec`).
use grundy_protocol::short::position as spec;

#[derive(Parser)]
#[command(name = "grundy", version, about = "Impartial games, perfectly played")]
struct Cli {
    /// Trust the CA certificate(s) in this PEM file for `wss://` servers,
    /// beside the public roots (a server with a private CA).
    #[arg(long, global = true, env = "GRUNDY_CA_CERT", value_name = "FILE")]
    ca_cert: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Play(play::Args),
    /// The open and running rooms of a server.
    Lobby(spectate::LobbyArgs),
    Watch(spectate::WatchArgs),
    Replay(spectate::ReplayArgs),
    /// Your past games and unfinished seats, as kept by this client.
    Games(spectate::GamesArgs),
    Analyze(analyze::Args),
    #[command(subcommand)]
    Tournament(tournament::Command),
    /// Your account: create, login, logout, whoami, tokens, token, revoke.
    #[command(subcommand)]
    Account(account::Command),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = grundy_client::tls::trust_ca_file(cli.ca_cert.as_deref()) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Analyze(args) => analyze::run(args),
        Command::Games(args) => spectate::games(args),
        command => match tokio::runtime::Runtime::new() {
            Ok(rt) => rt.block_on(async {
                match command {
                    Command::Play(args) => play::run(args).await,
                    Command::Lobby(args) => spectate::lobby(args).await,
                    Command::Watch(args) => spectate::watch(args).await,
                    Command::Replay(args) => spectate::replay(args).await,
                    Command::Tournament(command) => tournament::run(command).await,
                    Command::Account(command) => account::run(command).await,
                    Command::Analyze(args) => analyze::run(args),
                    Command::Games(args) => spectate::games(args),
                }
            }),
            Err(e) => Err(e.into()),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

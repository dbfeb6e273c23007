//! `grundy tournament ...`: list, create and start tournaments; join one and
//! play its games at the prompt (each game is played by the same loop as
//! `grundy play`); watch one; export its games; the rating leaderboard.
//!
//! - [`organize`]: create and start;
//! - [`join`]: register (or come back) and play the games as they come;
//! - [`watch`]: follow one's events;
//! - [`report`]: list, show, export, ratings;
//! - [`words`]: a tournament's state and events in words and tables.

mod join;
mod organize;
mod report;
mod watch;
mod words;

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use grundy_client::client::{Client, ClientError};
use grundy_client::tournament::tournament_state;
use grundy_protocol::wire::{ClientMsg, ErrorCode, RequestId, ServerMsg, TournamentState};

use crate::net::{self, DEFAULT_SERVER};

/// Tournaments: list, create, start, join and play, watch, show, export,
/// ratings. A tournament is named by its code (TABC23) or its id, for good:
/// a finished one's code still shows its standings, after restarts too.
///
/// Examples:
///   grundy tournament list
///   grundy tournament create --family nim --format swiss --rounds 3 --clock 2+1
///   grundy tournament join TABC23 --name alice
///   grundy tournament watch TABC23
///   grundy tournament show TABC23 --json
///   grundy tournament export TABC23 --format csv --out games.csv
///   grundy tournament ratings --game kayles
#[derive(Subcommand, Debug)]
#[command(verbatim_doc_comment)]
pub enum Command {
    /// The tournaments that are registering or running.
    List(ListArgs),
    /// Open a tournament; prints its code and the owner token that starts it.
    Create(CreateArgs),
    /// Close registration and pair the first round (owner token only).
    Start(StartArgs),
    /// Register (or come back with --token) and play your games at the prompt.
    Join(JoinArgs),
    /// Follow a tournament: pairings, results, standings (a finished one:
    /// its final standings).
    Watch(WatchArgs),
    /// A tournament as it stands now, running or finished: what it plays,
    /// its players and standings.
    #[command(visible_alias = "standings")]
    Show(ShowArgs),
    /// Every game of a tournament with its start, players, moves and result.
    Export(ExportArgs),
    /// The best-rated players of a game.
    Ratings(RatingsArgs),
}

#[derive(ClapArgs, Debug)]
pub struct ListArgs {
    /// Print JSON instead: `{"tournaments": [...]}`, each summary as the
    /// server gives it (`list_tournaments`, docs/protocol.md): tournament
    /// (its id), code, name, game, game_name, format, status, players,
    /// max_players, round, rounds.
    #[arg(long)]
    json: bool,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

#[derive(ClapArgs, Debug)]
pub struct ShowArgs {
    /// The tournament's code or id.
    code: String,
    /// Print JSON instead: the tournament's state as the server gives it
    /// (`get_tournament`, docs/protocol.md): tournament (its id), code,
    /// settings, status, round, rounds, players, pairings, games, byes,
    /// standings, ended_early, seq.
    #[arg(long)]
    json: bool,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Swiss,
    RoundRobin,
}

#[derive(ClapArgs, Debug)]
pub struct CreateArgs {
    /// Random starts of this game (nim, kayles, wythoff, ...), one per pairing.
    #[arg(long, required_unless_present = "spec")]
    family: Option<String>,
    /// The size bound of the random starts.
    #[arg(long, requires = "family")]
    size: Option<u64>,
    /// One start for every game instead: a JSON spec or a short form
    /// (`nim 3 4 5`).
    #[arg(long, conflicts_with_all = ["family", "size"])]
    spec: Option<String>,
    /// How players are paired.
    #[arg(long, value_enum)]
    format: FormatArg,
    /// Swiss: the number of rounds (required). Round robin: at most this many.
    #[arg(long)]
    rounds: Option<u32>,
    /// The time control of every game: minutes+seconds a move, e.g. 2+1,
    /// 1.5+0 or 90s+1.
    #[arg(long)]
    clock: Option<String>,
    /// Registration closes at this many players.
    #[arg(long)]
    max_players: Option<u32>,
    /// Games change the players' ratings (only accounts may then register,
    /// and only an account may create one: `grundy account login` first).
    #[arg(long)]
    rated: bool,
    /// A title shown in lists: at most 80 characters, none that changes the
    /// text's direction or draws nothing, no control characters, no pile of
    /// combining marks.
    #[arg(long)]
    name: Option<String>,
    /// Seeds the random starts (the same seed and pairings give the same starts).
    #[arg(long)]
    seed: Option<u64>,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

#[derive(ClapArgs, Debug)]
pub struct StartArgs {
    /// The tournament's code (or id).
    code: String,
    /// The owner token printed by `grundy tournament create`.
    #[arg(long)]
    token: String,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

/// Register in a tournament and play your games at the prompt as they come.
/// While waiting, type `standings`, `withdraw` (leave the tournament: your
/// remaining games are forfeited) or `quit` (stop here; you stay registered).
#[derive(ClapArgs, Debug)]
pub struct JoinArgs {
    /// The tournament's code (or id).
    code: String,
    /// Your name in the tournament.
    #[arg(long, required_unless_present = "token")]
    name: Option<String>,
    /// Come back as a registered player: the player token shown when you
    /// registered.
    #[arg(long)]
    token: Option<String>,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

#[derive(ClapArgs, Debug)]
pub struct WatchArgs {
    /// The tournament's code (or id).
    code: String,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ExportFormat {
    Json,
    Csv,
}

#[derive(ClapArgs, Debug)]
pub struct ExportArgs {
    /// The tournament's code or id (finished ones too).
    tournament: String,
    /// json: the tournament and every game with its start and moves. csv: a
    /// header (tournament, round, room, seat0, seat1, start, moves, reason,
    /// winner), then one line per game, the start and moves as JSON; a text
    /// cell that begins with =, +, -, @, a tab or a carriage return is
    /// written quoted behind a ' so that no spreadsheet runs it as a formula.
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// Write to this file instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

#[derive(ClapArgs, Debug)]
pub struct RatingsArgs {
    /// The game, by its id: nim, kayles, dawson, lasker, bash, subtraction,
    /// heaps (custom rules), wythoff, ... Each game is rated apart.
    #[arg(long, visible_alias = "family")]
    game: String,
    /// At most this many players.
    #[arg(long)]
    limit: Option<u32>,
    /// Print JSON instead: `{"game", "name", "ratings": [...]}`, best first,
    /// each rating as the server gives it (`get_ratings`, docs/protocol.md):
    /// player, player_kind, unclaimed, rating, deviation, volatility, games.
    #[arg(long)]
    json: bool,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

pub async fn run(command: Command) -> Result<()> {
    match command {
        Command::List(args) => report::list(args).await,
        Command::Create(args) => organize::create(args).await,
        Command::Start(args) => organize::start(args).await,
        Command::Join(args) => join::join(args).await,
        Command::Watch(args) => watch::watch(args).await,
        Command::Show(args) => report::show(args).await,
        Command::Export(args) => report::export(args).await,
        Command::Ratings(args) => report::ratings(args).await,
    }
}

async fn connect(url: &str, name: &str) -> Result<Client> {
    net::connect(url, name, 3)
        .await
        .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))
}

/// A request whose refusal becomes an error in words.
async fn ask(
    c: &mut Client,
    build: impl FnOnce(Option<RequestId>) -> ClientMsg,
) -> Result<ServerMsg> {
    c.request(build)
        .await
        .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))
}

/// ` --server URL`, unless it is the default.
fn server_flag(url: &str) -> String {
    if url == DEFAULT_SERVER {
        String::new()
    } else {
        format!(" --server {url}")
    }
}

/// What asking a tournament for a place in it gave (`watch_tournament`,
/// `register`, `rejoin`).
enum Asked<T> {
    /// It is in play: the answer, and the connection it came on.
    InPlay(Box<Client>, T),
    /// It is over: its final state, the connection closed.
    Over(Box<TournamentState>),
}

/// `asked`, the answer on `c` about tournament `code`, as [`Asked`]: one
/// refused as unknown is finished and gone from memory, and its record is
/// read from the store (by code too); any other refusal is an error in a
/// person's words.
async fn in_play_or_over<T>(
    mut c: Client,
    code: &str,
    asked: Result<T, ClientError>,
) -> Result<Asked<T>> {
    match asked {
        Ok(answer) => Ok(Asked::InPlay(Box::new(c), answer)),
        Err(
            e @ ClientError::Refused {
                code: ErrorCode::UnknownTournament,
                ..
            },
        ) => {
            let state = stored_state(&mut c, code, e).await?;
            c.close().await;
            Ok(Asked::Over(Box::new(state)))
        }
        Err(e) => bail!("{}", net::words(&e)),
    }
}

/// A tournament the server has no task for (`watch_tournament`, `register`
/// and `rejoin` answered `refused`): its state from the store if it ever
/// was, else the refusal in a person's words.
async fn stored_state(c: &mut Client, code: &str, refused: ClientError) -> Result<TournamentState> {
    match tournament_state(c, code).await {
        Ok(state) => Ok(state),
        Err(ClientError::Refused {
            code: ErrorCode::UnknownTournament,
            ..
        }) => Err(no_tournament(code)),
        Err(_) => bail!("{}", net::words(&refused)),
    }
}

/// No tournament by that code or id, running or finished.
fn no_tournament(code: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "no tournament {code:?} on this server, running or finished (a code looks like \
         TABC23; `grundy tournament list` shows those registering or running)"
    )
}

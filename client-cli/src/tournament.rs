//! `grundy tournament ...`: list, create and start tournaments; join one and
//! play its games at the prompt (each game is played by the same loop as
//! `grundy play`); watch one; export its games; the rating leaderboard.

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use grundy_client::client::{Client, ClientError};
use grundy_client::tournament::{export_games, games_csv, tournament_state, watch_tournament};
use grundy_protocol::wire::{
    ClientMsg, Clock, ErrorCode, PlayerKind, RequestId, ServerMsg, Standing, TournamentEvent,
    TournamentEventBody, TournamentFormat, TournamentSettings, TournamentState, TournamentStatus,
};
use serde_json::json;

use crate::follow::{clock_text, reason_text};
use crate::net::{self, DEFAULT_SERVER};
use crate::play::{self, Finish};
use crate::render::Paint;

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
        Command::List(args) => list(args).await,
        Command::Create(args) => create(args).await,
        Command::Start(args) => start(args).await,
        Command::Join(args) => join(args).await,
        Command::Watch(args) => watch(args).await,
        Command::Show(args) => show(args).await,
        Command::Export(args) => export(args).await,
        Command::Ratings(args) => ratings(args).await,
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

async fn list(args: ListArgs) -> Result<()> {
    let mut c = connect(&args.server, "spectator").await?;
    let tournaments = match ask(&mut c, |id| ClientMsg::ListTournaments { id }).await? {
        ServerMsg::Tournaments { tournaments, .. } => tournaments,
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

async fn create(args: CreateArgs) -> Result<()> {
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
    let answer = ask(&mut c, |id| ClientMsg::CreateTournament { id, settings }).await?;
    c.close().await;
    let ServerMsg::TournamentCreated {
        code,
        owner_token,
        state,
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

async fn start(args: StartArgs) -> Result<()> {
    let mut c = connect(&args.server, "organizer").await?;
    ask(&mut c, |id| ClientMsg::StartTournament {
        id,
        tournament: args.code.clone(),
        token: args.token.clone(),
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

/// A registered player of this command.
struct Player {
    url: String,
    /// The tournament's id.
    tournament: String,
    code: String,
    name: String,
    token: String,
}

impl Player {
    /// The command that comes back as this player.
    fn comeback(&self) -> String {
        format!(
            "grundy tournament join {} --token {}{}",
            self.code,
            self.token,
            server_flag(&self.url)
        )
    }
}

const WAITING_HELP: &str = "While you wait for your games: `standings` shows them, `withdraw` leaves the tournament (your remaining games are forfeited), `quit` stops here (you stay registered).";

/// How many times in a row the player's connection is tried again.
const REJOIN_ATTEMPTS: u32 = 20;

async fn join(args: JoinArgs) -> Result<()> {
    let paint = Paint::detect();
    let hello_name = args.name.clone().unwrap_or_else(|| "player".to_string());
    let mut c = connect(&args.server, &hello_name).await?;
    let answer = match &args.token {
        Some(token) => {
            c.request(|id| ClientMsg::Rejoin {
                id,
                tournament: args.code.clone(),
                token: token.clone(),
            })
            .await
        }
        None => {
            // An account registers under its username; a guest under its name.
            let name = c.identity().account.is_none().then(|| hello_name.clone());
            c.request(|id| ClientMsg::Register {
                id,
                tournament: args.code.clone(),
                name,
            })
            .await
        }
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(
            e @ ClientError::Refused {
                code: ErrorCode::UnknownTournament,
                ..
            },
        ) => {
            // Not in play: over (its record is kept), or no such tournament.
            let state = stored_state(&mut c, &args.code, e).await?;
            c.close().await;
            bail!(
                "tournament {} is over: there is nothing to join. Its final standings: \
                 `grundy tournament show {}{}`",
                state.code,
                state.code,
                server_flag(&args.server)
            );
        }
        Err(e) => bail!("{}", net::words(&e)),
    };
    let ServerMsg::Registered {
        tournament,
        player,
        token,
        state,
        ..
    } = answer
    else {
        bail!("unexpected answer: {answer:?}");
    };
    let me = Player {
        url: args.server.clone(),
        tournament,
        code: state.code.clone(),
        name: state
            .players
            .get(player as usize)
            .map_or(hello_name, |p| p.name.clone()),
        token,
    };
    println!(
        "{} {} as player {player} ({}). The tournament's id: {}.",
        if args.token.is_some() {
            "Back in"
        } else {
            "Registered in"
        },
        state.code,
        me.name,
        me.tournament
    );
    println!(
        "Your player token: {}\nIf you lose the connection, come back with:\n  {}",
        me.token,
        me.comeback()
    );
    if show_state(&state) {
        c.close().await;
        return Ok(());
    }
    println!("{WAITING_HELP}");
    let mut log = Log::new(&state);
    // Plain lines: what the tournament prints comes at any time, between games too.
    let mut lines = crate::console::Console::plain_lines();
    let mut input_open = true;
    // Messages that came while a game was played, to handle after it.
    let mut pending: VecDeque<ServerMsg> = VecDeque::new();
    let mut played: HashSet<String> = HashSet::new();
    loop {
        let msg = match pending.pop_front() {
            Some(m) => Ok(m),
            None => tokio::select! {
                m = c.next() => m,
                line = lines.next(), if input_open => {
                    match line {
                        crate::console::Typed::End | crate::console::Typed::Interrupt => input_open = false,
                        crate::console::Typed::Line(line) => {
                            if typed_waiting(&mut c, &me, &line).await == Waiting::Leave {
                                c.close().await;
                                return Ok(());
                            }
                        }
                    }
                    continue;
                }
            },
        };
        match msg {
            Ok(ServerMsg::TournamentEvent { tournament, event }) if tournament == me.tournament => {
                if let Some(text) = log.apply(&event) {
                    print!("{text}");
                }
                if matches!(event.body, TournamentEventBody::Finished { .. }) {
                    c.close().await;
                    return Ok(());
                }
            }
            Ok(ServerMsg::YourGame {
                tournament,
                round,
                room,
                token,
                opponent,
                ..
            }) if tournament == me.tournament => {
                if !played.insert(room.clone()) {
                    continue; // told again after a rejoin: played already
                }
                println!("\nRound {round}: your game against {opponent} starts.");
                let mut lost = false;
                let outcome = {
                    let game = play::play_resumed(
                        &me.url,
                        &me.name,
                        &room,
                        &token,
                        me.comeback(),
                        &mut lines,
                        &paint,
                    );
                    tokio::pin!(game);
                    // Keep reading the tournament connection meanwhile (it
                    // would be closed as idle otherwise); its news waits.
                    loop {
                        tokio::select! {
                            r = &mut game => break r,
                            m = c.next(), if !lost => match m {
                                Ok(m) => pending.push_back(m),
                                Err(_) => lost = true,
                            },
                        }
                    }
                };
                match outcome {
                    Ok(Finish::Over) => println!(
                        "\nBack to the tournament: waiting for your next game (type `help` for what you can do)."
                    ),
                    Ok(Finish::Quit) => {
                        c.close().await;
                        return Ok(());
                    }
                    Err(e) => {
                        played.remove(&room);
                        println!(
                            "{}",
                            paint.bad(&format!("The game could not be played on: {e:#}"))
                        );
                    }
                }
                if lost {
                    c = rejoin(&me, &mut log, &mut pending).await?;
                }
            }
            Ok(ServerMsg::Shutdown { message }) => {
                println!("\nThe server is going down: {message}");
            }
            Ok(_) => {}
            Err(e) => {
                println!("\nConnection lost ({}); rejoining…", net::words(&e));
                c = rejoin(&me, &mut log, &mut pending).await?;
            }
        }
    }
}

#[derive(PartialEq, Eq)]
enum Waiting {
    Stay,
    Leave,
}

/// Acts on a line typed while no game is being played.
async fn typed_waiting(c: &mut Client, me: &Player, line: &str) -> Waiting {
    match line.trim() {
        "" => {}
        "withdraw" => {
            let answer = c
                .request(|id| ClientMsg::Withdraw {
                    id,
                    tournament: me.tournament.clone(),
                    token: me.token.clone(),
                })
                .await;
            match answer {
                Ok(_) => {
                    println!(
                        "The server confirms: you have withdrawn from {}; your remaining games are forfeited.\nFollow the rest with `grundy tournament watch {}{}`.",
                        me.code,
                        me.code,
                        server_flag(&me.url)
                    );
                    return Waiting::Leave;
                }
                Err(e) => println!("Not withdrawn: {}", net::words(&e)),
            }
        }
        "standings" => match tournament_state(c, &me.tournament).await {
            Ok(state) if state.round == 0 => {
                println!("No standings yet: the tournament has not started.");
            }
            Ok(state) => print!("Standings:\n{}", standings_table(&state.standings)),
            Err(e) => println!("{}", net::words(&e)),
        },
        "quit" | "q" | "exit" => {
            println!(
                "You stay registered (a game you are not there for is lost on time). Come back with:\n  {}",
                me.comeback()
            );
            return Waiting::Leave;
        }
        _ => println!("{WAITING_HELP}"),
    }
    Waiting::Stay
}

/// Whether trying again may help.
fn retryable(e: &ClientError) -> bool {
    match e {
        ClientError::Refused { code, .. } => matches!(
            code,
            ErrorCode::ShuttingDown | ErrorCode::UnknownTournament | ErrorCode::RateLimited
        ),
        _ => true,
    }
}

/// Comes back as the player after a dropped connection; the events missed
/// meanwhile are queued in `pending`.
async fn rejoin(me: &Player, log: &mut Log, pending: &mut VecDeque<ServerMsg>) -> Result<Client> {
    let mut attempt = 1;
    loop {
        let tried = async {
            let hello = crate::account::hello(&me.url, &me.name);
            let mut c = Client::connect_as(&me.url, &hello).await?;
            c.request(|id| ClientMsg::Rejoin {
                id,
                tournament: me.tournament.clone(),
                token: me.token.clone(),
            })
            .await?;
            let missed = catch_up(&mut c, &me.tournament, log.seq).await?;
            Ok::<_, ClientError>((c, missed))
        };
        match tried.await {
            Ok((c, missed)) => {
                println!("Back in the tournament.");
                pending.extend(missed.into_iter().map(|event| ServerMsg::TournamentEvent {
                    tournament: me.tournament.clone(),
                    event,
                }));
                return Ok(c);
            }
            Err(e) if attempt < REJOIN_ATTEMPTS && retryable(&e) => {
                let wait = net::backoff(attempt);
                println!(
                    "Cannot rejoin ({}); trying again in {:.1} s…",
                    net::words(&e),
                    wait.as_secs_f32()
                );
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
            Err(e) => bail!("cannot rejoin the tournament: {}", net::words(&e)),
        }
    }
}

/// Follows the tournament on `c` and returns the events after `since`.
async fn catch_up(
    c: &mut Client,
    tournament: &str,
    since: u64,
) -> Result<Vec<TournamentEvent>, ClientError> {
    let (_, _, events) = watch_tournament(c, tournament, Some(since)).await?;
    Ok(events)
}

/// Prints a tournament's state: what it plays, then the final standings if it
/// is over (true), or the standings so far once a round has been played.
fn show_state(state: &TournamentState) -> bool {
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

async fn watch(args: WatchArgs) -> Result<()> {
    let mut c = connect(&args.server, "spectator").await?;
    let (id, state) = match watch_tournament(&mut c, &args.code, None).await {
        Ok((tournament, Some(state), _)) => (tournament, state),
        Ok((_, None, _)) => bail!("the server sent no state"),
        Err(
            e @ ClientError::Refused {
                code: ErrorCode::UnknownTournament,
                ..
            },
        ) => {
            // Finished and gone from memory: its record is kept, by code too.
            let state = stored_state(&mut c, &args.code, e).await?;
            c.close().await;
            print_over(&state);
            return Ok(());
        }
        Err(e) => bail!("{}", net::words(&e)),
    };
    if state.status == TournamentStatus::Finished {
        c.close().await;
        print_over(&state);
        return Ok(());
    }
    println!("Watching tournament {}.", state.code);
    show_state(&state);
    let mut log = Log::new(&state);
    let mut pending: VecDeque<TournamentEvent> = VecDeque::new();
    loop {
        let event = match pending.pop_front() {
            Some(e) => e,
            None => match c.next().await {
                Ok(ServerMsg::TournamentEvent { tournament, event }) if tournament == id => event,
                Ok(ServerMsg::Shutdown { message }) => {
                    println!("The server is going down: {message}");
                    continue;
                }
                Ok(_) => continue,
                Err(e) => {
                    println!("Connection lost ({}); reconnecting…", net::words(&e));
                    let (fresh, missed) = rewatch(&args.server, &id, log.seq).await?;
                    println!("Reconnected: watching again.");
                    c = fresh;
                    pending.extend(missed);
                    continue;
                }
            },
        };
        if let Some(text) = log.apply(&event) {
            print!("{text}");
        }
        if matches!(event.body, TournamentEventBody::Finished { .. }) {
            c.close().await;
            return Ok(());
        }
    }
}

/// A finished tournament, in words: nothing more will happen, here is how
/// it ended.
fn print_over(state: &TournamentState) {
    println!(
        "Tournament {} is over: nothing more to watch. How it ended:",
        state.code
    );
    show_state(state);
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

async fn show(args: ShowArgs) -> Result<()> {
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

/// `value` as pretty JSON on standard output, for programs.
fn print_json(value: impl Into<serde_json::Value>) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(&value.into())?);
    Ok(())
}

/// Watches again after a dropped connection: the new connection and the
/// events missed.
async fn rewatch(url: &str, id: &str, since: u64) -> Result<(Client, Vec<TournamentEvent>)> {
    let mut attempt = 1;
    loop {
        let tried = async {
            let mut c = Client::connect(url, "spectator").await?;
            let missed = catch_up(&mut c, id, since).await?;
            Ok::<_, ClientError>((c, missed))
        };
        match tried.await {
            Ok(done) => return Ok(done),
            Err(e) if attempt < REJOIN_ATTEMPTS && retryable(&e) => {
                tokio::time::sleep(net::backoff(attempt)).await;
                attempt += 1;
            }
            Err(e) => bail!("cannot watch again: {}", net::words(&e)),
        }
    }
}

async fn export(args: ExportArgs) -> Result<()> {
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

async fn ratings(args: RatingsArgs) -> Result<()> {
    let mut c = connect(&args.server, "spectator").await?;
    let answer = ask(&mut c, |id| ClientMsg::GetRatings {
        id,
        game: Some(args.game.clone()),
        family: None,
        limit: args.limit,
    })
    .await?;
    c.close().await;
    let ServerMsg::Ratings {
        game,
        name,
        ratings,
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

/// A tournament's event log as lines for a person: the players' names, and the
/// last event told.
struct Log {
    names: Vec<String>,
    seq: u64,
}

impl Log {
    fn new(state: &TournamentState) -> Log {
        let mut log = Log {
            names: Vec::new(),
            seq: state.seq,
        };
        for p in &state.players {
            log.set_name(p.player, &p.name);
        }
        log
    }

    fn set_name(&mut self, player: u32, name: &str) {
        let i = player as usize;
        if self.names.len() <= i {
            self.names.resize(i + 1, String::new());
        }
        self.names[i] = name.to_string();
    }

    fn name(&self, player: u32) -> String {
        match self.names.get(player as usize) {
            Some(n) if !n.is_empty() => n.clone(),
            _ => format!("player {player}"),
        }
    }

    /// The event in words; None when it was told already.
    fn apply(&mut self, event: &TournamentEvent) -> Option<String> {
        if event.seq <= self.seq {
            return None;
        }
        self.seq = event.seq;
        if let TournamentEventBody::Registered { player, name, .. } = &event.body {
            self.set_name(*player, name);
        }
        Some(self.text(&event.body))
    }

    fn text(&self, body: &TournamentEventBody) -> String {
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

fn finished_text(standings: &[Standing], ended_early: &Option<String>) -> String {
    let early = ended_early
        .as_ref()
        .map(|why| format!(" early ({why})"))
        .unwrap_or_default();
    format!(
        "The tournament is over{early}. Final standings:\n{}",
        standings_table(standings)
    )
}

fn plural(n: u32, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

fn format_text(f: TournamentFormat) -> &'static str {
    match f {
        TournamentFormat::RoundRobin => "round robin",
        TournamentFormat::Swiss => "Swiss",
    }
}

fn status_text(s: TournamentStatus) -> &'static str {
    match s {
        TournamentStatus::Registering => "registering",
        TournamentStatus::Running => "running",
        TournamentStatus::Finished => "finished",
    }
}

/// A game id as a person names it (`kayles`: Kayles).
fn game_label(id: &str) -> String {
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
fn describe_state(s: &TournamentState) -> String {
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
fn columns(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
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

//! `grundy-bot`: the perfect-play bot as a command.

use std::collections::HashSet;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use grundy_bot::duel::duel;
use grundy_bot::house::{external_name, join_and_play};
use grundy_bot::tournament::{run_field, Field};
use grundy_client::client::Client;
use grundy_client::client::Hello;
use grundy_client::seat::take_seat;
use grundy_client::tournament::export_games;
use grundy_protocol::random::random_spec;
use grundy_protocol::short::position as spec;
use grundy_protocol::wire::{
    ClientBody, ClientMsg, Clock, RoomState, ServerBody, ServerMsg, TournamentEventBody,
    TournamentFormat, TournamentSettings,
};
use grundy_protocol::Level;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};

/// The Grundy bot: plays every game of the catalogue by the Sprague–Grundy
/// theory. Levels: perfect, random, or 0-10 (at level n a random legal move
/// with probability (10 - n) / 10, the perfect move otherwise: 0 is random,
/// 10 is perfect).
#[derive(Parser)]
#[command(name = "grundy-bot", version)]
struct Cli {
    /// The server's WebSocket address (`ws://host:port`, or `host:port`);
    /// or a cluster's nodes, separated by commas (the first that answers is
    /// used, and a bot that loses its node comes back through the next).
    /// Default: $GRUNDY_SERVER, else ws://127.0.0.1:7878.
    #[arg(long, global = true, env = "GRUNDY_SERVER", default_value = "ws://127.0.0.1:7878",
          value_parser = grundy_client::address::parse_server)]
    server: String,
    /// Play as the account of this personal API token (create, join), not as
    /// a guest. Default: $GRUNDY_TOKEN.
    #[arg(long, global = true, env = "GRUNDY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Trust the CA certificate(s) in this PEM file for `wss://` servers,
    /// beside the public roots (a server with a private CA).
    #[arg(long, global = true, env = "GRUNDY_CA_CERT", value_name = "FILE")]
    ca_cert: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play N bot-versus-bot matches, seats swapped every game, and print the results.
    Match(MatchArgs),
    /// Open a room, wait for an opponent, and play it.
    Create(CreateArgs),
    /// Join a room (by id or short code) and play it.
    Join {
        room: String,
        /// The bot's level: perfect, random, or 0-10.
        #[arg(long, default_value = "perfect")]
        level: Level,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Serve as a house bot: keep joining open rooms that ask for a bot (for
    /// servers with house bots off), as `grundy-bot (LEVEL)` (a server
    /// whose own house bots serve refuses that name: they need no other).
    House {
        /// The bot's level: perfect, random, or 0-10.
        #[arg(long, default_value = "perfect")]
        level: Level,
        /// Stop after this many matches (default: never).
        #[arg(long)]
        max_matches: Option<usize>,
    },
    /// Run a tournament of bots on the server (or enter bots into one with
    /// --tournament): progress on stderr, the final standings on stdout.
    Tournament(TournamentArgs),
}

#[derive(Args)]
struct TournamentArgs {
    /// How many bot players.
    #[arg(long, default_value_t = 16)]
    players: usize,
    /// Their levels (each perfect, random, or 0-10), given out in turn:
    /// player i plays levels[i % count].
    #[arg(long, value_delimiter = ',', default_value = "perfect")]
    levels: Vec<Level>,
    /// swiss or round-robin.
    #[arg(long, default_value = "swiss")]
    format: String,
    /// Rounds (Swiss: required; round robin: at most this many).
    #[arg(long)]
    rounds: Option<u32>,
    /// Random starts of this game, a new one per pairing.
    #[arg(long, default_value = "nim", conflicts_with = "spec")]
    family: String,
    /// Size bound of the random starts.
    #[arg(long)]
    size: Option<u64>,
    /// One start for every game instead: a short form (`nim 3 4 5`,
    /// `bash --k 3 5 6`) or a JSON spec, as `grundy` reads them.
    #[arg(long)]
    spec: Option<String>,
    /// Seeds the random starts (and the bots' casual moves).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The time control of every game: minutes+seconds a move, e.g. 1+1,
    /// 1.5+0, 90s+1.
    #[arg(long, default_value = "1+1")]
    clock: String,
    /// Games change the players' ratings: only accounts may play (and
    /// create one), so give --tokens; the first token's account creates it.
    #[arg(long, requires = "tokens")]
    rated: bool,
    /// A file of personal API tokens, one per line: bot i plays as the
    /// account of line i (at least --players lines). Without it the bots are
    /// guests.
    #[arg(long)]
    tokens: Option<std::path::PathBuf>,
    /// A title.
    #[arg(long)]
    name: Option<String>,
    /// Enter the bots into this tournament (id or code) instead of creating one;
    /// its creator starts it.
    #[arg(long)]
    tournament: Option<String>,
    /// Print exactly one JSON object: the standings and every game with its
    /// moves.
    #[arg(long)]
    json: bool,
}

/// The start position: a spec, or a random start of a family.
#[derive(Args)]
struct Start {
    /// The start position: a short form (`nim 3 4 5`, `bash --k 3 5 6`,
    /// `treblecross ..X..`) or a JSON spec, as `grundy` reads them.
    #[arg(long, conflicts_with = "random")]
    spec: Option<String>,
    /// A random start of this game (a new start every game, from --seed).
    #[arg(long)]
    random: Option<String>,
    /// Size bound of random starts (per game; see docs/protocol.md).
    #[arg(long)]
    size: Option<u64>,
}

impl Start {
    fn spec(&self, seed: u64) -> Result<Value> {
        match (&self.spec, &self.random) {
            (Some(text), None) => Ok(spec::parse(text).context("--spec")?),
            (None, Some(game)) => Ok(random_spec(game, seed, self.size)?),
            _ => bail!("give --spec \"nim 3 4 5\" (or a JSON spec) or --random GAME"),
        }
    }
}

#[derive(Args)]
struct MatchArgs {
    #[command(flatten)]
    start: Start,
    /// How many matches.
    #[arg(long, default_value_t = 2)]
    games: usize,
    /// The two bots' levels (each perfect, random, or 0-10), e.g.
    /// perfect,perfect or perfect,3.
    #[arg(long, value_delimiter = ',', default_value = "perfect,perfect")]
    levels: Vec<Level>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print exactly one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct CreateArgs {
    #[command(flatten)]
    start: Start,
    /// The bot's level: perfect, random, or 0-10.
    #[arg(long, default_value = "perfect")]
    level: Level,
    /// The seat to take (0 moves first).
    #[arg(long, default_value_t = 0)]
    seat: u8,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A rated game: both accounts' ratings in this game move when it ends
    /// (the bot must play as an account: --token).
    #[arg(long)]
    rated: bool,
}

/// Runs the command; an error is one line (its causes after colons), never
/// a backtrace, whatever `RUST_BACKTRACE` says: exit status 1.
fn main() -> std::process::ExitCode {
    let run = tokio::runtime::Runtime::new().map_err(anyhow::Error::from);
    match run.and_then(|rt| rt.block_on(run_command())) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run_command() -> Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let cli = Cli::parse();
    grundy_client::tls::trust_ca_file(cli.ca_cert.as_deref())?;
    match cli.command {
        Command::Match(args) => run_matches(&cli.server, args).await,
        Command::Create(args) => create(&cli.server, cli.token, args).await,
        Command::Join { room, level, seed } => {
            let hello = Hello::from_token(cli.token, &format!("bot-{level}"));
            let result = join_and_play(&cli.server, &hello, &room, level, seed).await?;
            println!("{}", json!(result));
            Ok(())
        }
        Command::House { level, max_matches } => house(&cli.server, level, max_matches).await,
        Command::Tournament(args) => tournament(&cli.server, args).await,
    }
}

/// A `--clock` (minutes + seconds, e.g. `1+1`, `90s+1`), read as every
/// command reads it (`grundy_protocol::time_control`).
fn parse_clock(text: &str) -> Result<Clock> {
    grundy_protocol::time_control::parse_time_control(text)
        .map_err(|e| anyhow::anyhow!("--clock {text:?}: {e}"))
}

async fn tournament(url: &str, args: TournamentArgs) -> Result<()> {
    let format = match args.format.as_str() {
        "swiss" => TournamentFormat::Swiss,
        "round-robin" | "round_robin" | "rr" => TournamentFormat::RoundRobin,
        other => bail!("--format: {other:?} is not swiss or round-robin"),
    };
    if args.players == 0 || args.levels.is_empty() {
        bail!("--players and --levels must not be empty");
    }
    let spec = match &args.spec {
        Some(text) => Some(spec::parse(text).context("--spec")?),
        None => None,
    };
    let settings = TournamentSettings {
        name: args.name.clone(),
        family: spec.is_none().then(|| args.family.clone()),
        spec,
        size: args.size,
        seed: Some(args.seed),
        format,
        rounds: args.rounds,
        clock: Some(parse_clock(&args.clock)?),
        max_players: None,
        rated: args.rated,
    };
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} games ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let tokens = match &args.tokens {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read --tokens {}", path.display()))?;
            let tokens: Vec<String> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            if tokens.len() < args.players {
                bail!(
                    "--tokens {} has {} tokens for {} players",
                    path.display(),
                    tokens.len(),
                    args.players
                );
            }
            tokens
        }
        None => Vec::new(),
    };
    let players = args.players as u64;
    let outcome = run_field(
        Field {
            url: url.to_string(),
            join: args.tournament.clone(),
            settings,
            players: args.players,
            levels: args.levels.clone(),
            seed: args.seed,
            tokens,
        },
        |event| match event {
            TournamentEventBody::Started { rounds } => {
                // Two games per pairing, floor(n/2) pairings a round.
                bar.set_length(*rounds as u64 * (players / 2) * 2);
            }
            TournamentEventBody::RoundStarted { round, .. } => {
                bar.set_message(format!("round {round}"));
            }
            TournamentEventBody::GameEnded { .. } => bar.inc(1),
            _ => {}
        },
    )
    .await?;
    bar.finish_and_clear();
    let state = &outcome.state;
    let level_of = |player: u32| {
        outcome
            .bots
            .iter()
            .find(|b| b.player == player)
            .map(|b| b.level.to_string())
    };
    if args.json {
        let mut client = Client::connect(url, "tournament-export").await?;
        let games = export_games(&mut client, state).await?;
        client.close().await;
        let standings: Vec<Value> = state
            .standings
            .iter()
            .map(|s| {
                json!({
                    "rank": s.rank,
                    "player": s.name,
                    "number": s.player,
                    "level": level_of(s.player),
                    "score": s.score,
                    "wins": s.wins,
                    "losses": s.losses,
                    "byes": s.byes,
                    "buchholz": s.buchholz,
                    "sonneborn_berger": s.sonneborn_berger,
                    "rating": s.rating,
                    "withdrawn": s.withdrawn,
                })
            })
            .collect();
        println!(
            "{}",
            json!({
                "tournament": state.tournament,
                "code": state.code,
                "format": state.settings.format,
                "rounds": state.rounds,
                "ended_early": state.ended_early,
                "standings": standings,
                "matches": games,
            })
        );
        return Ok(());
    }
    println!(
        "tournament {} ({}): {} rounds{}",
        state.code,
        state.tournament,
        state.rounds,
        state
            .ended_early
            .as_deref()
            .map(|why| format!(", ended early: {why}"))
            .unwrap_or_default()
    );
    println!(
        "{:>4}  {:<20} {:<8} {:>5} {:>7} {:>4} {:>8} {:>5} {:>7}",
        "rank", "player", "level", "score", "W-L", "byes", "buchholz", "S-B", "rating"
    );
    for s in &state.standings {
        println!(
            "{:>4}  {:<20} {:<8} {:>5} {:>7} {:>4} {:>8} {:>5} {:>7}{}",
            s.rank,
            s.name,
            level_of(s.player).unwrap_or_else(|| "-".into()),
            s.score,
            format!("{}-{}", s.wins, s.losses),
            s.byes,
            s.buchholz,
            s.sonneborn_berger,
            s.rating.map_or("-".into(), |r| format!("{r:.0}")),
            if s.withdrawn { "  (withdrawn)" } else { "" }
        );
    }
    Ok(())
}

async fn run_matches(url: &str, args: MatchArgs) -> Result<()> {
    let [a, b] = args.levels[..] else {
        bail!("--levels takes two levels, e.g. perfect,3");
    };
    let levels = [a, b];
    let mut games = Vec::new();
    for i in 0..args.games {
        // Seats swap every game; a random start is replayed with the seats swapped.
        let pair = (i / 2) as u64;
        let spec = args.start.spec(args.seed.wrapping_add(pair))?;
        let seats = if i % 2 == 0 {
            levels
        } else {
            [levels[1], levels[0]]
        };
        let game = duel(url, &spec, seats, args.seed.wrapping_add(i as u64)).await?;
        if !args.json {
            println!(
                "game {:>3}: seat 0 {:<8} seat 1 {:<8} winner {}  ({})  {}",
                i + 1,
                game.seats[0],
                game.seats[1],
                game.winner.map_or("none".into(), |w| format!(
                    "seat {w} ({})",
                    game.seats[w as usize]
                )),
                game.reason,
                spec
            );
        }
        games.push(game);
    }
    let wins = |level: &str| {
        games
            .iter()
            .filter(|g| g.winner.is_some_and(|w| g.seats[w as usize] == level))
            .count()
    };
    let (a, b) = (levels[0].to_string(), levels[1].to_string());
    if args.json {
        println!("{}", json!({"games": games, "levels": [a, b]}));
    } else if a != b {
        println!(
            "{a}: {} wins, {b}: {} wins, of {}",
            wins(&a),
            wins(&b),
            games.len()
        );
    }
    Ok(())
}

async fn create(url: &str, token: Option<String>, args: CreateArgs) -> Result<()> {
    let spec = args.start.spec(args.seed)?;
    let hello = Hello::from_token(token, &format!("bot-{}", args.level));
    let taken = take_seat(url, &hello, args.level, args.seed, |id| ClientMsg {
        id,
        body: ClientBody::CreateRoom {
            spec: Some(spec),
            random: None,
            clock: None,
            listed: true,
            seat: Some(args.seat),
            hints: false,
            rated: args.rated,
            bot: None,
        },
    })
    .await?;
    eprintln!(
        "room {} (code {}): waiting for an opponent",
        taken.plan.room, taken.snapshot.code
    );
    let result = taken.play().await?;
    println!("{}", json!(result));
    Ok(())
}

async fn house(url: &str, level: Level, max_matches: Option<usize>) -> Result<()> {
    let mut c = Client::connect(url, &external_name(level)).await?;
    let mut served = HashSet::new();
    let mut tasks = tokio::task::JoinSet::new();
    let mut seed = 1u64;
    loop {
        if max_matches.is_some_and(|m| served.len() >= m) {
            break;
        }
        let rooms = c
            .request(|id| ClientMsg {
                id,
                body: ClientBody::ListRooms {
                    limit: None,
                    offset: None,
                },
            })
            .await?;
        if let ServerMsg {
            body: ServerBody::Rooms { rooms, .. },
            ..
        } = rooms
        {
            for r in rooms {
                if r.state == RoomState::Open && r.bot.is_some() && served.insert(r.room.clone()) {
                    let (url, room) = (url.to_string(), r.room.clone());
                    seed += 1;
                    tasks.spawn(async move {
                        let hello = Hello::guest(&external_name(level));
                        if let Err(e) = join_and_play(&url, &hello, &room, level, seed).await {
                            tracing::warn!(%room, "house match failed: {e}");
                        }
                    });
                }
            }
        }
        while let Some(done) = tasks.try_join_next() {
            let _ = done;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    while tasks.join_next().await.is_some() {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("grundy-bot").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    /// Every help that takes a level says the same range as the protocol:
    /// perfect, random, or 0-10.
    #[test]
    fn every_level_help_says_0_to_10() {
        use clap::CommandFactory;
        fn check(cmd: &mut clap::Command, path: &str, found: &mut usize) {
            let help = cmd.render_long_help().to_string();
            for bad in ["to 9", "0-9", "0–9", "0 to 9"] {
                assert!(!help.contains(bad), "{path}: {bad:?} in\n{help}");
            }
            let takes_level = cmd
                .get_arguments()
                .any(|a| matches!(a.get_id().as_str(), "level" | "levels"));
            if takes_level {
                assert!(help.contains("perfect, random, or 0-10"), "{path}:\n{help}");
                *found += 1;
            }
            for sub in cmd.get_subcommands_mut() {
                let name = format!("{path} {}", sub.get_name());
                check(sub, &name, found);
            }
        }
        let mut found = 0;
        check(&mut Cli::command(), "grundy-bot", &mut found);
        assert_eq!(found, 5, "match, create, join, house, tournament");
        let top = Cli::command().render_long_help().to_string();
        assert!(top.contains("perfect, random, or 0-10"), "{top}");
    }

    /// `--spec` reads the short forms `grundy` reads, and JSON as before.
    #[test]
    fn spec_takes_the_short_forms_grundy_takes() {
        let Command::Match(m) = cli(&["match", "--spec", "nim 3 4 5"]).command else {
            panic!("a match");
        };
        assert_eq!(
            m.start.spec(1).expect("spec"),
            json!({"game": "nim", "heaps": [3, 4, 5]})
        );
        let Command::Create(c) = cli(&["create", "--spec", "bash --k 3 5 6"]).command else {
            panic!("a create");
        };
        assert_eq!(
            c.start.spec(1).expect("spec"),
            json!({"game": "bash", "heaps": [5, 6], "k": 3})
        );
        let Command::Match(m) =
            cli(&["match", "--spec", r#"{"game": "wythoff", "heaps": [3, 5]}"#]).command
        else {
            panic!("a match");
        };
        assert_eq!(
            m.start.spec(1).expect("spec"),
            json!({"game": "wythoff", "heaps": [3, 5]})
        );
        let Command::Match(m) = cli(&["match", "--spec", "nim three"]).command else {
            panic!("a match");
        };
        let said = format!("{:#}", m.start.spec(1).unwrap_err());
        assert!(said.contains("\"three\" is not a whole number"), "{said}");
    }
}

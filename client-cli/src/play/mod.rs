//! `grundy play`: a match at the terminal, against the house bot or a person,
//! with a line editor (see `console`). Moves are checked with the engine
//! before they are sent; a dropped connection is resumed on its own; the seat
//! is kept on disk until the match is over, so `grundy play --resume` comes
//! back to it after Ctrl-C, a closed terminal or a crash.
//!
//! - [`seat`]: taking a seat (create, join, resume; the seats kept on disk);
//! - [`game`]: the match loop: the room's events, the clock, the person's
//!   lines, on one connection after another;
//! - [`typed`]: what a typed line does (moves, resign, abort, hints);
//! - [`board`]: what the person sees (the greeting, the board, the prompt,
//!   what happened);
//! - [`reconnect`]: coming back after a lost connection;
//! - [`rematch`]: after the end, the same game again with the seats swapped
//!   (offered and accepted in the finished room).

mod board;
mod game;
mod reconnect;
mod rematch;
mod seat;
mod typed;

use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use grundy_client::client::Client;
use grundy_protocol::wire::{Clock, RandomStart};
use serde_json::Value;

use crate::console::Console;
use crate::net::{self, Local};
use crate::render::Paint;

use game::play_match;
use rematch::{after_the_match, AfterMatch};
use seat::{resume_seat, take_seat};

/// Play a match: against the house bot, open for a person, or by joining a room.
///
/// Examples:
///   grundy play --game "nim 3 4 5" --bot perfect
///   grundy play --random kayles --bot 5 --clock 5+2
///   grundy play --game '{"game": "wythoff", "heaps": [3, 5]}' --open
///   grundy play --join ABC234
///   grundy play --resume            (back to your unfinished game)
///
/// The server is --server, else $GRUNDY_SERVER, else ws://127.0.0.1:7878.
#[derive(ClapArgs, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The server, e.g. ws://example.org:7878 or example.org:7878, or a
    /// cluster's nodes separated by commas (default: $GRUNDY_SERVER, else
    /// ws://127.0.0.1:7878).
    #[arg(long, value_parser = net::parse_server)]
    server: Option<String>,
    /// Start a server inside this process and play there (it stops when you
    /// leave: nobody else can join, and the match is not kept).
    #[arg(long, conflicts_with_all = ["server", "open", "join", "resume"])]
    local: bool,
    /// The start position: a short form (`nim 3 4 5`, `kayles 5 7`,
    /// `bash --k 3 5 6`, `treblecross 9`, `darkraft RL LR`, `twist 10`, a sum
    /// such as `nim 3 5 + kayles 7`) or a JSON spec.
    #[arg(long, conflicts_with = "random")]
    game: Option<String>,
    /// A random start of this game (nim, kayles, wythoff, darkraft, ...; mix:
    /// a sum of 2-5 different games).
    #[arg(long)]
    random: Option<String>,
    /// The size bound of the random start.
    #[arg(long, requires = "random")]
    size: Option<u64>,
    /// The seed of the random start (default: from the clock).
    #[arg(long, requires = "random")]
    seed: Option<u64>,
    /// Play the house bot at this level: perfect, random, or 0-10.
    #[arg(long, conflicts_with_all = ["open", "join"])]
    bot: Option<String>,
    /// Open the room for a person (the command that joins it is shown).
    #[arg(long, conflicts_with = "join")]
    open: bool,
    /// Join a room by its code (or id).
    #[arg(long)]
    join: Option<String>,
    /// Come back to a seat you left: without a value, your unfinished game on
    /// this server (kept by this client); or the room's code or id.
    #[arg(long, num_args = 0..=1, default_missing_value = "", conflicts_with_all = ["join", "bot", "open", "game", "random"])]
    resume: Option<String>,
    /// The seat token for --resume, when the seat was taken elsewhere.
    #[arg(long, requires = "resume")]
    token: Option<String>,
    /// A time control: minutes+seconds a move, e.g. 5+2, 1.5+0, 90s+1 or 1h+30.
    #[arg(long)]
    clock: Option<String>,
    /// The seat to take (0 moves first).
    #[arg(long)]
    seat: Option<u8>,
    /// Allow hints to both players in a room open for a person (they are
    /// always allowed against the house bot). Both players are told.
    #[arg(long)]
    hints: bool,
    /// A rated game, in a room open for a person: both players' ratings in
    /// this game move when it ends (accounts only: log in first).
    #[arg(long, conflicts_with_all = ["bot", "hints"])]
    rated: bool,
    /// Your name, shown to others (an account's API token, when you are
    /// logged in, plays under its username instead).
    #[arg(long, default_value = "player", value_parser = name_arg)]
    name: String,
}

/// A `--name`: not empty (the server checks the rest and says what is wrong).
fn name_arg(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        return Err("a name cannot be empty (leave --name out to play as `player`)".into());
    }
    Ok(name.to_string())
}

/// Reads a `--clock`: minutes + seconds, e.g. `5+2`, `1.5+0`, `90s+1`
/// (`grundy_protocol::time_control`, the one reading every command shares).
pub fn parse_clock(text: &str) -> Result<Clock> {
    grundy_protocol::time_control::parse_time_control(text)
        .map_err(|e| anyhow::anyhow!("--clock {text:?}: {e}"))
}

/// A timed match's first move must come within this, or the match is called
/// off (docs/protocol.md, "No-show").
const NO_SHOW_MS: u64 = 30_000;

/// Who plays this seat, where.
struct Seat {
    url: String,
    name: String,
    room: String,
    seat: u8,
    token: String,
    /// The command that comes back to this seat, told to a person who
    /// leaves; None where there is no coming back (a local server).
    comeback: Option<String>,
    /// The house bot's level this seat plays against, when known (for a
    /// rematch).
    bot: Option<String>,
}

/// How the match loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The match is over.
    Over,
    /// The person left before the end (their seat is kept).
    Quit,
}

/// What a room to create is.
#[derive(Clone)]
struct Setup {
    spec: Option<Value>,
    random: Option<RandomStart>,
    clock: Option<Clock>,
    bot: Option<String>,
    seat: Option<u8>,
    hints: bool,
    rated: bool,
}

/// What `play` does once connected.
enum Plan {
    Create(Setup),
    Join(String),
    /// A room and its seat token.
    Resume(String, String),
}

pub async fn run(args: Args) -> Result<()> {
    let paint = Paint::detect();
    let (mut url, chosen) = net::server_choice(args.server.as_deref());
    let mut plan = match (&args.resume, &args.join) {
        (Some(room), _) => Plan::Resume(room.clone(), args.token.clone().unwrap_or_default()),
        (None, Some(code)) => Plan::Join(code.clone()),
        (None, None) => Plan::Create(Setup::from_args(&args)?),
    };
    let mut local = None;
    if args.local {
        let l = Local::start().await?;
        println!(
            "Started a local server at {} (it stops when you leave, and the match with it).",
            l.url
        );
        url = l.url.clone();
        local = Some(l);
    }
    let client = first_connection(&mut url, chosen, &mut local, &plan, &args.name).await?;
    let here = Where {
        url: url.clone(),
        name: args.name.clone(),
        local: local.is_some(),
    };
    let mut console = None;
    let outcome = play_plans(client, &here, &mut plan, &mut console, &paint).await;
    if let Some(mut c) = console {
        c.stop().await;
    }
    if let Some(l) = local {
        l.server.shutdown().await;
    }
    outcome
}

/// Connects to `url`; where no server answers there, a game against the
/// house bot on a server the person did not choose moves to a server
/// started in this process (`url` and `local` then say which).
async fn first_connection(
    url: &mut String,
    chosen: bool,
    local: &mut Option<Local>,
    plan: &Plan,
    name: &str,
) -> Result<Client> {
    let hello = crate::net::hello(url, name);
    match Client::connect_as(url, &hello).await {
        Ok(c) => Ok(c),
        // Only a game against the house bot may move to a server of its own:
        // a person could never reach it.
        Err(e)
            if e.connection_lost()
                && local.is_none()
                && !chosen
                && matches!(plan, Plan::Create(s) if s.bot.is_some()) =>
        {
            let l = Local::start().await?;
            println!(
                "No server answers at {url}: playing on a server started in this process ({}); \
                 it stops when you leave. Name a server with --server or GRUNDY_SERVER.",
                l.url
            );
            *url = l.url.clone();
            *local = Some(l);
            Ok(net::connect(url, name, 5).await?)
        }
        Err(e) if e.connection_lost() => bail!(
            "no server answers at {url} ({}).\nStart one with `grundy-server`, name another with \
             --server URL (or GRUNDY_SERVER), or play the house bot here with --local.",
            net::words(&e)
        ),
        Err(e) => bail!("{}", net::words(&e)),
    }
}

/// The server played on, and as whom.
struct Where {
    url: String,
    name: String,
    /// A server in this process: nothing to come back to once it stops.
    local: bool,
}

impl Where {
    /// `--server URL` for commands told to the person, unless it is the
    /// server they reach without it.
    fn server_flag(&self) -> String {
        if net::server_choice(None).0 == self.url {
            String::new()
        } else {
            format!(" --server {}", self.url)
        }
    }
}

/// Takes a seat by `plan`, plays it, and after the end offers a rematch
/// (the same connection then resumes its room) until the person leaves.
async fn play_plans(
    mut client: Client,
    here: &Where,
    plan: &mut Plan,
    console: &mut Option<Console>,
    paint: &Paint,
) -> Result<()> {
    loop {
        let (seat, snapshot) = take_seat(&mut client, here, plan).await?;
        let c = console.get_or_insert_with(Console::start);
        let played = play_match(client, &seat, &snapshot, c, paint, here).await?;
        if played.finish == Finish::Quit {
            return Ok(());
        }
        match after_the_match(c, &played.follow, &seat, here, played.client, paint).await {
            AfterMatch::Leave => return Ok(()),
            AfterMatch::Rematch {
                room,
                token,
                client: same,
            } => {
                client = *same;
                *plan = Plan::Resume(room, token);
            }
        }
    }
}

/// Plays a seat that was handed out elsewhere (a tournament game): resumes
/// `room` with its seat `token` on a connection of its own and plays it at the
/// prompt to the end, exactly as `grundy play --resume` does. `comeback` is the
/// command told to a person who quits before the end.
pub async fn play_resumed(
    url: &str,
    name: &str,
    room: &str,
    token: &str,
    comeback: String,
    console: &mut Console,
    paint: &Paint,
) -> Result<Finish> {
    let here = Where {
        url: url.to_string(),
        name: name.to_string(),
        local: false,
    };
    let mut client = net::connect(url, name, 5)
        .await
        .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))?;
    let (mut seat, snapshot) = resume_seat(&mut client, &here, room, token).await?;
    seat.comeback = Some(comeback);
    let played = play_match(client, &seat, &snapshot, console, paint, &here).await?;
    Ok(played.finish)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks() {
        let c = parse_clock("5+2").expect("clock");
        assert_eq!((c.initial_ms, c.increment_ms), (300_000, 2000));
        // Minutes whatever the number: `300` is five hours, never seconds.
        let c = parse_clock("300+2").expect("clock");
        assert_eq!((c.initial_ms, c.increment_ms), (18_000_000, 2000));
        let c = parse_clock("300s+2").expect("clock");
        assert_eq!((c.initial_ms, c.increment_ms), (300_000, 2000));
        let e = parse_clock("3x+2").unwrap_err().to_string();
        assert!(e.starts_with("--clock \"3x+2\": the time \"3x\""), "{e}");
        let c = parse_clock("90s").expect("clock");
        assert_eq!((c.initial_ms, c.increment_ms), (90_000, 0));
        assert!(parse_clock("abc").is_err());
        assert!(parse_clock("0+1").is_err());
        assert!(parse_clock("5+x").is_err());
    }
}

//! `grundy play`: a match at the terminal, against the house bot or a person,
//! with a line editor (see `console`). Moves are checked with the engine
//! before they are sent; a dropped connection is resumed on its own; the seat
//! is kept on disk until the match is over, so `grundy play --resume` comes
//! back to it after Ctrl-C, a closed terminal or a crash.

use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use grundy_client::client::{Client, ClientError};
use grundy_protocol::wire::{ClientMsg, Clock, ErrorCode, RandomStart, ServerMsg, Snapshot};
use grundy_protocol::{Analysis, Outcome};
use serde_json::Value;

use crate::console::{Console, Typed};
use crate::describe::{describe_move, nim_table};
use crate::follow::{clock_text, result_text, Follow, Happened};
use crate::input::{self, Input};
use crate::net::{self, Local};
use crate::render::Paint;
use crate::seats::{self, KeptSeat, PastGame};

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

/// Warnings of low time on the player's own clock, in milliseconds left.
const LOW_TIME_MS: [u64; 3] = [60_000, 30_000, 10_000];

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

/// What a room to create is: kept to offer a rematch with the seats swapped.
#[derive(Clone)]
struct Setup {
    spec: Option<Value>,
    random: Option<RandomStart>,
    clock: Option<Clock>,
    bot: Option<String>,
    seat: Option<u8>,
    hints: bool,
}

impl Setup {
    fn from_args(args: &Args) -> Result<Setup> {
        let (spec, random) = match (&args.game, &args.random) {
            (Some(g), _) => (Some(crate::spec::parse(g)?), None),
            (None, Some(family)) => (
                None,
                Some(RandomStart {
                    family: family.clone(),
                    seed: args.seed.unwrap_or_else(seed_from_clock),
                    size: args.size,
                }),
            ),
            (None, None) => bail!(
                "say which game: --game \"nim 3 4 5\" or --random kayles (see `grundy play --help`)"
            ),
        };
        if args.bot.is_none() && !args.open {
            bail!("say who you play: --bot perfect (or a level 0-10), --open for a person, or --join CODE");
        }
        if let Some(seat) = args.seat.filter(|s| *s > 1) {
            bail!("--seat {seat}: a match has seats 0 (moves first) and 1");
        }
        Ok(Setup {
            spec,
            random,
            clock: args.clock.as_deref().map(parse_clock).transpose()?,
            bot: args.bot.clone(),
            seat: args.seat,
            // The server allows hints in untimed rooms only.
            hints: args.hints || (args.bot.is_some() && args.clock.is_none()),
        })
    }

    /// The same game again from the same start, with the seats swapped,
    /// against the same house bot (`bot`) or open for a person.
    fn rematch(f: &Follow, me: u8, bot: Option<String>) -> Setup {
        Setup {
            spec: Some(f.game.spec.clone()),
            random: None,
            clock: f.game.clock,
            bot,
            seat: Some(me ^ 1),
            hints: f.hints,
        }
    }
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
    let hello = crate::account::hello(&url, &args.name);
    let client = match Client::connect_as(&url, &hello).await {
        Ok(c) => c,
        // Only a game against the house bot may move to a server of its own:
        // a person could never reach it.
        Err(e)
            if net::is_transport(&e)
                && local.is_none()
                && !chosen
                && matches!(&plan, Plan::Create(s) if s.bot.is_some()) =>
        {
            let l = Local::start().await?;
            println!(
                "No server answers at {url}: playing on a server started in this process ({}); \
                 it stops when you leave. Name a server with --server or GRUNDY_SERVER.",
                l.url
            );
            url = l.url.clone();
            local = Some(l);
            net::connect(&url, &args.name, 5).await?
        }
        Err(e) if net::is_transport(&e) => bail!(
            "no server answers at {url} ({}).\nStart one with `grundy-server`, name another with \
             --server URL (or GRUNDY_SERVER), or play the house bot here with --local.",
            net::words(&e)
        ),
        Err(e) => bail!("{}", net::words(&e)),
    };
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
/// (a new plan) until the person leaves.
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
        let (finish, ended) = play_match(client, &seat, &snapshot, c, paint, here).await?;
        if finish == Finish::Quit {
            return Ok(());
        }
        let bot = match &*plan {
            Plan::Create(setup) => setup.bot.clone(),
            _ => seat.bot.clone(),
        };
        match after_the_match(c, ended, paint).await {
            AfterMatch::Leave => return Ok(()),
            AfterMatch::Rematch(f) => {
                client = net::connect(&here.url, &here.name, 5)
                    .await
                    .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))?;
                *plan = match bot {
                    Some(_) => Plan::Create(Setup::rematch(&f, seat.seat, bot)),
                    None => match opponents_rematch(&mut client, &f, seat.seat).await {
                        Some(code) => {
                            c.say(&format!(
                                "{} has opened the rematch: joining room {code}.",
                                f.name(seat.seat ^ 1)
                            ));
                            Plan::Join(code)
                        }
                        None => {
                            c.say(&format!(
                                "A rematch room opens: {} joins it by typing `rematch` too.",
                                f.name(seat.seat ^ 1)
                            ));
                            Plan::Create(Setup::rematch(&f, seat.seat, None))
                        }
                    },
                };
            }
        }
    }
}

/// The rematch room the opponent of a match between people opened already
/// (typing `rematch` first): open, the same game, the opponent in the seat
/// that is ours this time swapped, the other free.
async fn opponents_rematch(client: &mut Client, f: &Follow, me: u8) -> Option<String> {
    let answer = client
        .request(|id| ClientMsg::ListRooms {
            id,
            limit: None,
            offset: None,
        })
        .await
        .ok()?;
    let ServerMsg::Rooms { rooms, .. } = answer else {
        return None;
    };
    let opponent = f.name(me ^ 1);
    let description =
        grundy_protocol::names::describe_spec(&f.game.spec, grundy_protocol::wire::MAX_DESCRIPTION);
    rooms
        .into_iter()
        .find(|r| {
            r.state == "open"
                && r.seats[me as usize].name.as_deref() == Some(opponent.as_str())
                && r.seats[(me ^ 1) as usize].name.is_none()
                && r.name == grundy_protocol::names::spec_name(&f.game.spec)
                && r.description == description
                && r.clock == f.game.clock
        })
        .map(|r| r.code)
}

enum AfterMatch {
    Leave,
    /// Play again: the match just over.
    Rematch(Box<Follow>),
}

/// After the end: the move list with every move that threw a win away,
/// a rematch with the seats swapped, or leave.
async fn after_the_match(console: &mut Console, f: Box<Follow>, paint: &Paint) -> AfterMatch {
    console.say(
        "Type `moves` to see the moves (the ones that threw a win away are marked), \
         `rematch` to play again with the seats swapped, or `quit` (or Enter) to leave.",
    );
    loop {
        console.prompt("after the match");
        match console.next().await {
            Typed::Line(line) => match line.to_ascii_lowercase().as_str() {
                "rematch" | "r" => return AfterMatch::Rematch(f),
                "moves" | "m" => console.say(&f.move_list(true, paint)),
                "" | "quit" | "q" | "exit" => return AfterMatch::Leave,
                other => console.say(&paint.bad(&format!(
                    "{:?}: after the match, type `moves`, `rematch` or `quit`",
                    other
                ))),
            },
            Typed::Interrupt | Typed::End => return AfterMatch::Leave,
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
    let (finish, _) = play_match(client, &seat, &snapshot, console, paint, &here).await?;
    Ok(finish)
}

/// Greets the person, draws the board and runs the match loop to the end
/// (or until the person leaves): how it ended, and the match as it stands.
/// The seat is kept on disk meanwhile, and the match remembered once over.
async fn play_match(
    client: Client,
    seat: &Seat,
    snapshot: &Snapshot,
    console: &mut Console,
    paint: &Paint,
    here: &Where,
) -> Result<(Finish, Box<Follow>)> {
    let mut follow = Follow::from_snapshot(snapshot).map_err(anyhow::Error::msg)?;
    let game = game_name(&follow);
    if !here.local {
        let kept = seats::keep(KeptSeat {
            server: here.url.clone(),
            room: seat.room.clone(),
            code: follow.code.clone(),
            seat: seat.seat,
            token: seat.token.clone(),
            name: here.name.clone(),
            game: game.clone(),
            bot: seat.bot.clone(),
            since_ms: seats::now_ms(),
        });
        if let Err(e) = kept {
            console.say(&paint.bad(&format!(
                "Your seat could not be kept on disk ({e:#}): write down its token to come back: {}",
                seat.token
            )));
        }
    }
    let mut intro = format!(
        "{game}, room {} — you are seat {} ({}).",
        follow.code,
        seat.seat,
        if seat.seat == 0 {
            "you move first"
        } else {
            "you move second"
        }
    );
    let open = follow.game.seats.iter().any(|s| s.name.is_none()) && seat.bot.is_none();
    if open && follow.game.result.is_none() {
        intro.push_str(&format!(
            "\nA friend joins with:  grundy play --join {}{}",
            follow.code,
            here.server_flag()
        ));
    }
    intro.push_str(if snapshot.hints {
        "\nHints are on for both players (type `hint`)."
    } else {
        "\nNo hints in this match."
    });
    if let Some(c) = snapshot.clock {
        intro.push_str(&format!(
            "\nClock: {} + {} s a move. Each player's first move must come within {} s, or the match is called off.",
            clock_text(c.initial_ms),
            c.increment_ms / 1000,
            NO_SHOW_MS / 1000
        ));
    }
    if let Some(back) = &seat.comeback {
        intro.push_str(&format!(
            "\nIf you leave or lose the terminal, come back with:  {back}"
        ));
    }
    intro.push_str("\nType `help` for how to write moves and what else you can type.");
    console.say(&intro);
    show(&follow, seat.seat, console, paint);
    let finish = play_loop(client, seat, &mut follow, console, paint, here).await?;
    if finish == Finish::Over && !here.local {
        let _ = seats::forget(&here.url, &seat.room);
        let _ = seats::remember(past_game(&follow, seat, here, &game));
    }
    Ok((finish, Box::new(follow)))
}

/// The game's own name ("Kayles"), from the start spec.
fn game_name(f: &Follow) -> String {
    grundy_protocol::names::spec_name(&f.game.spec).to_string()
}

fn past_game(f: &Follow, seat: &Seat, here: &Where, game: &str) -> PastGame {
    let (result, reason) = match f.game.result {
        Some(r) => (
            match r.winner {
                Some(w) if w == seat.seat => "won",
                Some(_) => "lost",
                None => "no winner",
            },
            crate::follow::reason_text(r.reason),
        ),
        None => ("no winner", "unknown"),
    };
    PastGame {
        server: here.url.clone(),
        room: seat.room.clone(),
        code: f.code.clone(),
        game: game.to_string(),
        seat: seat.seat,
        opponent: f.name(seat.seat ^ 1),
        result: result.to_string(),
        reason: reason.to_string(),
        moves: f.game.plies() as u64,
        ended_ms: seats::now_ms(),
    }
}

/// `resume`: back to a seat by its token; the seat and the room's snapshot.
async fn resume_seat(
    client: &mut Client,
    here: &Where,
    room: &str,
    token: &str,
) -> Result<(Seat, Snapshot)> {
    let answer = client
        .request(|id| ClientMsg::Resume {
            id,
            room: room.to_string(),
            token: token.to_string(),
            since: None,
        })
        .await;
    match answer {
        Ok(ServerMsg::Watching {
            room,
            seat: Some(seat),
            snapshot: Some(s),
            ..
        }) => Ok((Seat::new(here, room, seat, token.to_string(), &s.code), s)),
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => {
            if let ClientError::Refused { .. } = e {
                // A room that is gone or over has no seat to come back to.
                let _ = seats::forget(&here.url, room);
            }
            bail!("cannot come back to room {room}: {}", net::words(&e))
        }
    }
}

impl Seat {
    fn new(here: &Where, room: String, seat: u8, token: String, code: &str) -> Seat {
        let comeback =
            (!here.local).then(|| format!("grundy play --resume {code}{}", here.server_flag()));
        Seat {
            url: here.url.clone(),
            name: here.name.clone(),
            room,
            seat,
            token,
            comeback,
            bot: None,
        }
    }
}

/// The kept seat `--resume` (or `--join` of a room this client has a seat
/// in) comes back to: by room code or id, or the only one on this server.
fn kept_seat(url: &str, room: &str) -> Result<Option<KeptSeat>> {
    let kept = seats::kept(url)?;
    if room.is_empty() {
        return match kept.as_slice() {
            [] => bail!(
                "no unfinished game of yours is kept for {url}; name one with --resume ROOM --token TOKEN"
            ),
            [one] => Ok(Some(one.clone())),
            many => {
                let list: Vec<String> = many
                    .iter()
                    .map(|s| format!("  grundy play --resume {}   ({}, as {})", s.code, s.game, s.name))
                    .collect();
                bail!(
                    "you have {} unfinished games on {url}; say which:\n{}",
                    many.len(),
                    list.join("\n")
                )
            }
        };
    }
    Ok(kept
        .into_iter()
        .find(|s| s.room == room || s.code.eq_ignore_ascii_case(room)))
}

async fn take_seat(client: &mut Client, here: &Where, plan: &Plan) -> Result<(Seat, Snapshot)> {
    let answer = match plan {
        Plan::Resume(room, token) if !token.is_empty() => {
            return resume_seat(client, here, room, token).await;
        }
        Plan::Resume(room, _) => {
            let Some(kept) = kept_seat(&here.url, room)? else {
                bail!(
                    "no seat of yours is kept for room {room} on {}; give its seat token with --token",
                    here.url
                );
            };
            println!("Coming back to {} in room {}.", kept.game, kept.code);
            let (mut seat, snapshot) = resume_seat(client, here, &kept.room, &kept.token).await?;
            seat.bot = kept.bot;
            return Ok((seat, snapshot));
        }
        Plan::Join(code) => {
            // A seat this client keeps in the room, taken under this name
            // (another name is another person at the same computer).
            if let Ok(Some(kept)) = kept_seat(&here.url, code) {
                if kept.name == here.name {
                    println!("You have a seat in room {}: coming back to it.", kept.code);
                    let (mut seat, snapshot) =
                        resume_seat(client, here, &kept.room, &kept.token).await?;
                    seat.bot = kept.bot;
                    return Ok((seat, snapshot));
                }
            }
            client
                .request(|id| ClientMsg::Join {
                    id,
                    room: code.clone(),
                    seat: None,
                })
                .await
        }
        Plan::Create(setup) => {
            client
                .request(|id| ClientMsg::CreateRoom {
                    id,
                    spec: setup.spec.clone(),
                    random: setup.random.clone(),
                    clock: setup.clock,
                    listed: true,
                    seat: setup.seat,
                    hints: setup.hints,
                    bot: setup.bot.clone(),
                })
                .await
        }
    };
    match answer {
        Ok(ServerMsg::Seated {
            room,
            seat,
            token,
            snapshot,
            ..
        }) => {
            let mut seat = Seat::new(here, room, seat, token, &snapshot.code);
            if let Plan::Create(setup) = plan {
                seat.bot = setup.bot.clone();
            }
            Ok((seat, snapshot))
        }
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => bail!("{}", net::words(&e)),
    }
}

fn seed_from_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The prompt's text, with the time left for a first move where that limit
/// comes before the clock's.
fn prompt_line(f: &Follow, me: u8) -> String {
    let mut text = f.prompt_text(me);
    if let (Some(_), Some(started), true) = (f.game.clock, f.game.turn_started, first_move(f, me)) {
        let left = NO_SHOW_MS.saturating_sub(started.elapsed().as_millis() as u64);
        text.push_str(&format!(" first move within {}", clock_text(left)));
    }
    text
}

/// Whether the person is to make their first move of the match.
fn first_move(f: &Follow, me: u8) -> bool {
    f.to_move() == Some(me) && f.game.plies() < 2
}

/// Shows the prompt: drawn live by the line editor; in plain lines, printed
/// only when the person is to type a move.
fn prompt(f: &Follow, me: u8, console: &Console) {
    if console.is_live() || f.to_move() == Some(me) {
        console.prompt(&prompt_line(f, me));
    } else {
        console.prompt("");
    }
}

fn show(f: &Follow, me: u8, console: &Console, paint: &Paint) {
    console.say(&format!(
        "\n{}{}",
        f.draw(paint),
        f.status_line(Some(me), paint)
    ));
    prompt(f, me, console);
}

/// Tells what happened; true when the board should be drawn again.
fn tell(f: &Follow, me: u8, h: &Happened, console: &Console, paint: &Paint) -> bool {
    match h {
        Happened::Seated(name) => {
            console.say(&format!("{name} sat down."));
            false
        }
        Happened::Started => {
            console.say(&format!(
                "The match starts. {}",
                f.status_line(Some(me), paint)
            ));
            prompt(f, me, console);
            false
        }
        Happened::Moved(seat, words) if *seat == me => {
            console.say(&format!("\nYou played: {words}."));
            true
        }
        Happened::Moved(seat, words) => {
            console.say(&format!(
                "\n{}",
                paint.mark(&format!("{} played: {words}.", f.name(*seat)))
            ));
            true
        }
        Happened::Presence(seat, connected) if *seat != me => {
            console.say(&format!(
                "{} {}.",
                f.name(*seat),
                if *connected {
                    "is back"
                } else {
                    "lost their connection"
                }
            ));
            prompt(f, me, console);
            false
        }
        Happened::Ended(r) => {
            let text = result_text(r, Some(me), f);
            let text = if r.winner == Some(me) {
                paint.good(&text)
            } else {
                paint.bad(&text)
            };
            console.say(&format!("\nThe match is over: {text}."));
            false
        }
        _ => false,
    }
}

async fn play_loop(
    client: Client,
    seat: &Seat,
    f: &mut Follow,
    console: &mut Console,
    paint: &Paint,
    here: &Where,
) -> Result<Finish> {
    let mut client = Some(client);
    let mut watch = Watch::default();
    loop {
        if f.game.result.is_some() {
            if !here.local && f.game.plies() > 0 {
                console.say(&format!(
                    "Replay it with `grundy replay {}{}`.",
                    f.code,
                    here.server_flag()
                ));
            }
            return Ok(Finish::Over);
        }
        let mut c = match client.take() {
            Some(c) => c,
            None => match reconnect(seat, f, console, paint).await? {
                Some(c) => c,
                None => {
                    left(seat, console, here);
                    return Ok(Finish::Quit);
                }
            },
        };
        match session(&mut c, seat, f, console, paint, &mut watch).await {
            Ok(Step::Quit) => {
                left(seat, console, here);
                c.close().await;
                return Ok(Finish::Quit);
            }
            Ok(Step::Over) => continue,
            Err(e) => {
                console.say(&format!(
                    "\nConnection lost ({}); reconnecting…",
                    net::words(&e)
                ));
            }
        }
    }
}

/// Tells a person who leaves before the end how to come back.
fn left(seat: &Seat, console: &Console, here: &Where) {
    match &seat.comeback {
        _ if here.local => console.say("You left; the local server stops, and the match with it."),
        Some(back) => console.say(&format!(
            "You left; your seat is kept (your clock, if any, runs). Come back with:\n  {back}"
        )),
        None => console.say("You left."),
    }
}

enum Step {
    Quit,
    Over,
}

/// What the prompt keeps between lines: warnings already given, a resign
/// waiting for its confirmation.
#[derive(Default)]
struct Watch {
    /// (ply, milliseconds left) warnings given.
    warned: Vec<(usize, u64)>,
    resign_asked: bool,
    /// A script's line (or its end) read before its turn, acted on once
    /// the turn comes: piped lines arrive faster than an opponent moves (or
    /// than a house bot sits down), and a move may name a heap the reply
    /// makes. No line is read while one waits.
    held: Option<Typed>,
    /// A held line being acted on, with the match's plies then: kept if the
    /// connection drops meanwhile, and held again after the reconnection
    /// if the match has not moved on (the line did not reach the server).
    acting: Option<(String, usize)>,
    /// The ply at which a move of ours was accepted, until its event moves
    /// the match on: it is not our turn any more, whatever the state says.
    moved_at: Option<usize>,
}

/// Follows the room, the clock and the person's input on one connection.
async fn session(
    c: &mut Client,
    seat: &Seat,
    f: &mut Follow,
    console: &mut Console,
    paint: &Paint,
    watch: &mut Watch,
) -> Result<Step, ClientError> {
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    if let Some((line, plies)) = watch.acting.take() {
        if f.game.plies() == plies {
            watch.held = Some(Typed::Line(line));
        }
    }
    loop {
        if f.game.result.is_some() {
            // A line read ahead is for what comes after the match.
            if let Some(typed) = watch.held.take() {
                console.unread(typed);
            }
            return Ok(Step::Over);
        }
        if watch.held.is_some() && my_turn(f, seat.seat, watch) {
            match watch.held.take() {
                Some(Typed::Line(line)) => {
                    watch.acting = Some((line.clone(), f.game.plies()));
                    let step = typed_line(c, seat, f, &line, console, paint, watch).await?;
                    watch.acting = None;
                    if let Some(step) = step {
                        return Ok(step);
                    }
                }
                _ => return Ok(Step::Quit),
            }
        }
        tokio::select! {
            msg = c.next() => match msg? {
                ServerMsg::Event { room, event } if room == f.room => {
                    match f.apply(&event) {
                        Ok(h) => {
                            if tell(f, seat.seat, &h, console, paint) {
                                show(f, seat.seat, console, paint);
                            }
                        }
                        // Out of step: resume gives a fresh snapshot.
                        Err(e) => {
                            console.say(&format!("{e}; catching up"));
                            return Err(ClientError::Closed);
                        }
                    }
                }
                ServerMsg::Shutdown { message } => {
                    console.say(&format!("The server is going down: {message}"));
                    return Err(ClientError::Closed);
                }
                _ => {}
            },
            typed = console.next(), if watch.held.is_none() => match typed {
                typed if console.scripted() && waits_for_turn(f, seat, watch) => {
                    watch.held = Some(typed);
                }
                Typed::Line(line) => {
                    if let Some(step) = typed_line(c, seat, f, &line, console, paint, watch).await? {
                        return Ok(step);
                    }
                }
                Typed::Interrupt | Typed::End => return Ok(Step::Quit),
            },
            _ = tokio::signal::ctrl_c() => return Ok(Step::Quit),
            _ = tick.tick() => clock_tick(f, seat.seat, console, watch),
        }
    }
}

/// Whether the match has started and `me` is to move (with no move of
/// ours accepted and not yet seen).
fn my_turn(f: &Follow, me: u8, watch: &Watch) -> bool {
    f.game.started && f.to_move() == Some(me) && watch.moved_at != Some(f.game.plies())
}

/// Whether a script's line waits for its turn: once the match is on, or
/// before it when a house bot is about to sit down (a room open for a
/// person may wait for ever: its lines, and its end, act at once).
fn waits_for_turn(f: &Follow, seat: &Seat, watch: &Watch) -> bool {
    !my_turn(f, seat.seat, watch) && (f.game.started || seat.bot.is_some())
}

/// Every half second: the live prompt's clocks, and warnings of low time.
fn clock_tick(f: &Follow, me: u8, console: &Console, watch: &mut Watch) {
    if f.game.clock.is_none() || f.to_move().is_none() {
        return;
    }
    console.refresh(&prompt_line(f, me));
    if f.to_move() != Some(me) {
        return;
    }
    let ply = f.game.plies();
    let mut warn = |left: u64, text: String| {
        if !watch.warned.contains(&(ply, left)) {
            watch.warned.push((ply, left));
            console.say(&text);
        }
    };
    if first_move(f, me) {
        if let Some(started) = f.game.turn_started {
            let spent = started.elapsed().as_millis() as u64;
            if spent + 10_000 >= NO_SHOW_MS && spent < NO_SHOW_MS {
                warn(
                    u64::MAX,
                    format!(
                        "Your first move must come within {} s, or the match is called off.",
                        (NO_SHOW_MS - spent).div_ceil(1000)
                    ),
                );
            }
        }
    }
    if let (Some(bank), Some(clock)) = (f.bank_ms(me), f.game.clock) {
        // Each limit once a turn, and none the game began under.
        let below = LOW_TIME_MS.iter().rev().filter(|&&l| l < clock.initial_ms);
        if let Some(&limit) = below.clone().find(|&&l| bank <= l) {
            warn(limit, format!("{} left on your clock.", clock_text(bank)));
        }
    }
}

/// Acts on one typed line. Transport errors go up (to reconnect).
async fn typed_line(
    c: &mut Client,
    seat: &Seat,
    f: &mut Follow,
    line: &str,
    console: &Console,
    paint: &Paint,
    watch: &mut Watch,
) -> Result<Option<Step>, ClientError> {
    let parsed = input::parse(&f.game.position, line);
    let resign_asked = std::mem::take(&mut watch.resign_asked);
    match parsed {
        // Yes to "resign?".
        Err(_) if resign_asked && matches!(line.to_ascii_lowercase().as_str(), "y" | "yes") => {
            return resign(c, seat, console, paint).await;
        }
        // One line: the message says to type `help` for the whole of it.
        Err(reason) => console.say(&paint.bad(&reason)),
        Ok(Input::Help) => console.say(&input::help_text(&f.game.position)),
        Ok(Input::Redraw) => {
            show(f, seat.seat, console, paint);
            return Ok(None);
        }
        Ok(Input::Quit) => return Ok(Some(Step::Quit)),
        Ok(Input::Hint) => hint(f, seat.seat, console, paint),
        Ok(Input::Moves) => console.say(&f.move_list(false, paint)),
        Ok(Input::Resign) if !resign_asked => {
            console.say(
                "Resign this match? Type `resign` again (or `yes`) to confirm; anything else goes on.",
            );
            watch.resign_asked = true;
        }
        Ok(Input::Resign) => return resign(c, seat, console, paint).await,
        Ok(Input::Abort) => {
            let refused = seat_command(c, |id| ClientMsg::Abort {
                id,
                room: seat.room.clone(),
                token: seat.token.clone(),
            })
            .await?;
            match refused {
                None => return Ok(None),
                Some(ClientError::Refused {
                    code: grundy_protocol::wire::ErrorCode::TooLate,
                    ..
                }) => console.say(&paint.bad(
                    "Too late to call the match off: you have moved. Type `resign` to give up.",
                )),
                Some(e) => console.say(&paint.bad(&net::words(&e))),
            }
        }
        Ok(Input::Move(value, _)) => {
            if !f.game.started {
                console.say("The match has not started: waiting for a second player.");
            } else if f.to_move() != Some(seat.seat) {
                console.say(&format!(
                    "It is not your turn: wait for {}.",
                    f.name(seat.seat ^ 1)
                ));
            } else {
                let refused = seat_command(c, |id| ClientMsg::Move {
                    id,
                    room: seat.room.clone(),
                    token: seat.token.clone(),
                    mv: value.clone(),
                })
                .await?;
                match refused {
                    // The moved event (already queued) redraws the board.
                    None => {
                        watch.moved_at = Some(f.game.plies());
                        return Ok(None);
                    }
                    Some(e) => console.say(&paint.bad(&net::words(&e))),
                }
            }
        }
    }
    prompt(f, seat.seat, console);
    Ok(None)
}

/// Resigns (confirmed): the `ended` event tells the result.
async fn resign(
    c: &mut Client,
    seat: &Seat,
    console: &Console,
    paint: &Paint,
) -> Result<Option<Step>, ClientError> {
    let refused = seat_command(c, |id| ClientMsg::Resign {
        id,
        room: seat.room.clone(),
        token: seat.token.clone(),
    })
    .await?;
    if let Some(e) = refused {
        console.say(&paint.bad(&net::words(&e)));
    }
    Ok(None)
}

/// Sends a command of the seat: `None` once accepted, the refusal when the
/// server refuses it; a lost connection goes up (to reconnect).
async fn seat_command(
    c: &mut Client,
    build: impl FnOnce(Option<grundy_protocol::wire::RequestId>) -> ClientMsg,
) -> Result<Option<ClientError>, ClientError> {
    match c.request(build).await {
        Ok(_) => Ok(None),
        Err(e) if net::is_transport(&e) => Err(e),
        Err(e) => Ok(Some(e)),
    }
}

fn hint(f: &Follow, me: u8, console: &Console, paint: &Paint) {
    if !f.hints {
        console.say(if f.game.clock.is_some() {
            "No hints in a timed match."
        } else {
            "No hints in this match: the room was opened without them (`--hints`)."
        });
        return;
    }
    if f.to_move() != Some(me) {
        console.say("Hints are for your own move: wait for your turn.");
        return;
    }
    let a = Analysis::of(&f.game.position, 5);
    let mut out = match a.outcome {
        Outcome::N => paint.good("The player to move wins with perfect play."),
        Outcome::P => paint.bad("The player to move loses against perfect play: every move loses."),
    };
    if let Some(g) = a.grundy {
        out.push_str(&format!("\nGrundy value: {g}"));
    }
    if let Some(m) = &a.best_move {
        out.push_str(&format!(
            "\n{} {}   (type {})",
            if a.outcome == Outcome::N {
                "Winning move:"
            } else {
                "Best try (keeps the game long):"
            },
            describe_move(&f.game.position, m),
            input::short_form(m)
        ));
    }
    if let Some(table) = nim_table(&f.game.position) {
        out.push('\n');
        out.push_str(&table);
    }
    console.say(&out);
}

/// Reconnects and resumes, telling the person; None if they quit meanwhile.
async fn reconnect(
    seat: &Seat,
    f: &mut Follow,
    console: &mut Console,
    paint: &Paint,
) -> Result<Option<Client>> {
    let mut attempt = 1u32;
    loop {
        match resume(seat, f, attempt).await {
            Ok(c) => {
                console.say("Reconnected: the match goes on.");
                show(f, seat.seat, console, paint);
                return Ok(Some(c));
            }
            Err(e) => {
                if let ClientError::Refused { code, .. } = &e {
                    if !passing(*code, attempt) {
                        bail!("cannot resume the match: {}", net::words(&e));
                    }
                }
                let wait = net::backoff(attempt);
                let why = match &e {
                    // A cluster moving the room to another node, or a
                    // server on its way down.
                    ClientError::Refused { message, .. } => {
                        format!("The match cannot be resumed yet ({message})")
                    }
                    _ => format!("Cannot reach the server ({})", net::words(&e)),
                };
                console.say(&format!(
                    "{why}; retrying in {:.1} s (type `quit` to stop)…",
                    wait.as_secs_f32()
                ));
                attempt += 1;
                let deadline = tokio::time::sleep(wait);
                tokio::pin!(deadline);
                loop {
                    tokio::select! {
                        _ = &mut deadline => break,
                        _ = tokio::signal::ctrl_c() => return Ok(None),
                        typed = console.next() => match typed {
                            Typed::Line(l) if !matches!(l.as_str(), "quit" | "q" | "exit") => {
                                console.say("Not connected yet; reconnecting…")
                            }
                            _ => return Ok(None),
                        },
                    }
                }
            }
        }
    }
}

/// Whether a refused `resume` is worth asking again: a server shutting down
/// or a cluster's node that could not reach the room's (another node takes
/// over a room whose node went away: `unknown_room` until it has, for a
/// while).
fn passing(code: ErrorCode, attempt: u32) -> bool {
    match code {
        ErrorCode::ShuttingDown | ErrorCode::Internal | ErrorCode::Busy => true,
        ErrorCode::UnknownRoom => attempt < 10,
        _ => false,
    }
}

/// One resume (attempt `attempt`: a cluster's next node each time), with a
/// fresh snapshot: its clocks are the server's now (the client's own count
/// would have run on through the time it was away).
async fn resume(seat: &Seat, f: &mut Follow, attempt: u32) -> Result<Client, ClientError> {
    let url = grundy_client::seat::address(&seat.url, attempt as usize - 1);
    let mut c = Client::connect_as(&url, &crate::account::hello(&seat.url, &seat.name)).await?;
    let answer = c
        .request(|id| ClientMsg::Resume {
            id,
            room: seat.room.clone(),
            token: seat.token.clone(),
            since: None,
        })
        .await?;
    match answer {
        ServerMsg::Watching {
            snapshot: Some(s), ..
        } => {
            *f = Follow::from_snapshot(&s).map_err(ClientError::Unexpected)?;
            Ok(c)
        }
        other => Err(ClientError::Unexpected(format!("{other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks() {
        let c = parse_clock("5+2").expect("clock");
        assert_eq!((c.initial_ms, c.increment_ms), (300_000, 2000));
        // Minutes whatever the number (it used to flip to seconds at 60).
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

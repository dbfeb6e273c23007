//! `grundy play`: a match at the terminal, against the house bot or a person,
//! with a line-based prompt. Moves are checked with the engine before they are
//! sent; a dropped connection is resumed on its own.

use std::io::Write;

use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use grundy_client::client::{Client, ClientError};
use grundy_protocol::wire::{ClientMsg, RandomStart, ServerMsg};
use grundy_protocol::{Analysis, Outcome};

use crate::describe::{describe_move, nim_table};
use crate::follow::{result_text, Follow, Happened};
use crate::input::{self, Input};
use crate::net::{self, Lines, Local, DEFAULT_SERVER};
use crate::render::Paint;

/// Play a match: against the house bot, open for a person, or by joining a room.
///
/// Examples:
///   grundy play --local --game "nim 3 4 5" --bot perfect
///   grundy play --random kayles --bot 5 --clock 5+2
///   grundy play --game '{"game": "wythoff", "heaps": [3, 5]}' --open
///   grundy play --join ABC234
#[derive(ClapArgs, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The server (when none answers, a local one is started in this process).
    #[arg(long)]
    server: Option<String>,
    /// Start a server inside this process and play there.
    #[arg(long)]
    local: bool,
    /// The start position: a short form (`nim 3 4 5`, `kayles 5 7`,
    /// `bash --k 3 5 6`, `treblecross 9`, `darkraft RL LR`, `twist 10`) or a
    /// JSON spec.
    #[arg(long, conflicts_with = "random")]
    game: Option<String>,
    /// A random start of this game (nim, kayles, wythoff, darkraft, ...).
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
    /// Open the room for a person (the code to share is shown).
    #[arg(long, conflicts_with = "join")]
    open: bool,
    /// Join a room by its code (or id).
    #[arg(long)]
    join: Option<String>,
    /// Come back to a seat: the room (with --token).
    #[arg(long, requires = "token", conflicts_with_all = ["join", "bot", "open"])]
    resume: Option<String>,
    /// The seat token for --resume.
    #[arg(long)]
    token: Option<String>,
    /// A time control: minutes+seconds a move, e.g. 5+2, 1.5+0, 90s+1 or 1h+30.
    #[arg(long)]
    clock: Option<String>,
    /// The seat to take (0 moves first).
    #[arg(long)]
    seat: Option<u8>,
    /// Your name, shown to others.
    #[arg(long, default_value = "player")]
    name: String,
}

/// Reads a `--clock`: minutes + seconds, e.g. `5+2`, `1.5+0`, `90s+1`
/// (`grundy_protocol::time_control`, the one reading every command shares).
pub fn parse_clock(text: &str) -> Result<grundy_protocol::wire::Clock> {
    grundy_protocol::time_control::parse_time_control(text)
        .map_err(|e| anyhow::anyhow!("--clock {text:?}: {e}"))
}

/// Who plays this seat, where.
struct Seat {
    url: String,
    name: String,
    room: String,
    seat: u8,
    token: String,
    /// Hints allowed (a casual room).
    casual: bool,
    /// The command that comes back to this seat, told to a person who quits.
    comeback: String,
}

impl Seat {
    fn new(url: &str, name: &str, room: String, seat: u8, token: String, casual: bool) -> Seat {
        let comeback = format!("grundy play --server {url} --resume {room} --token {token}");
        Seat {
            url: url.to_string(),
            name: name.to_string(),
            room,
            seat,
            token,
            casual,
            comeback,
        }
    }
}

/// How the match loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The match is over.
    Over,
    /// The person left before the end (their seat is kept).
    Quit,
}

pub async fn run(args: Args) -> Result<()> {
    let paint = Paint::detect();
    let mut lines = net::stdin_lines();
    let creating = args.join.is_none() && args.resume.is_none();
    let mut local = None;
    let mut url = args
        .server
        .clone()
        .unwrap_or_else(|| DEFAULT_SERVER.to_string());
    if args.local {
        let l = Local::start().await?;
        println!(
            "Started a local server at {} (it stops when you leave).",
            l.url
        );
        url = l.url.clone();
        local = Some(l);
    }
    let mut client = match Client::connect_as(&url, &crate::account::hello(&url, &args.name)).await
    {
        Ok(c) => c,
        Err(e) if local.is_none() && creating && net::is_transport(&e) => {
            let l = Local::start().await?;
            println!(
                "No server answers at {url}: started a local one in this process ({}).",
                l.url
            );
            url = l.url.clone();
            local = Some(l);
            net::connect(&url, &args.name, 5).await?
        }
        Err(e) => net::connect(&url, &args.name, 5)
            .await
            .map_err(|_| anyhow::anyhow!("{}", net::words(&e)))?,
    };
    let (seat, snapshot) = take_seat(&mut client, &args, &url).await?;
    let outcome = play_match(
        client,
        &seat,
        &snapshot,
        &mut lines,
        &paint,
        local.is_some(),
        args.open,
    )
    .await;
    if let Some(l) = local {
        l.server.shutdown().await;
    }
    outcome.map(|_| ())
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
    lines: &mut Lines,
    paint: &Paint,
) -> Result<Finish> {
    let mut client = net::connect(url, name, 5)
        .await
        .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))?;
    let (mut seat, snapshot) = resume_seat(&mut client, url, name, room, token).await?;
    seat.comeback = comeback;
    play_match(client, &seat, &snapshot, lines, paint, false, false).await
}

/// Greets the person, draws the board and runs the match loop to the end.
async fn play_match(
    client: Client,
    seat: &Seat,
    snapshot: &grundy_protocol::wire::Snapshot,
    lines: &mut Lines,
    paint: &Paint,
    local: bool,
    open: bool,
) -> Result<Finish> {
    let mut follow = Follow::from_snapshot(snapshot).map_err(anyhow::Error::msg)?;
    println!(
        "Room {} — you are seat {} ({}).{}",
        follow.code,
        seat.seat,
        if seat.seat == 0 {
            "you move first"
        } else {
            "you move second"
        },
        if open {
            format!(
                " Share the code: others join with `grundy play --join {}`.",
                follow.code
            )
        } else {
            String::new()
        }
    );
    println!("Type `help` for how to write moves.");
    show(&follow, seat.seat, paint);
    play_loop(client, seat, &mut follow, lines, paint, local).await
}

/// `resume`: back to a seat by its token; the seat and the room's snapshot.
async fn resume_seat(
    client: &mut Client,
    url: &str,
    name: &str,
    room: &str,
    token: &str,
) -> Result<(Seat, grundy_protocol::wire::Snapshot)> {
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
        }) => {
            let casual = s.clock.is_none();
            Ok((
                Seat::new(url, name, room, seat, token.to_string(), casual),
                s,
            ))
        }
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => bail!("{}", net::words(&e)),
    }
}

async fn take_seat(
    client: &mut Client,
    args: &Args,
    url: &str,
) -> Result<(Seat, grundy_protocol::wire::Snapshot)> {
    let answer = if let Some(room) = &args.resume {
        let token = args.token.clone().unwrap_or_default();
        return resume_seat(client, url, &args.name, room, &token).await;
    } else if let Some(code) = &args.join {
        client
            .request(|id| ClientMsg::Join {
                id,
                room: code.clone(),
                seat: args.seat,
            })
            .await
    } else {
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
        let clock = args.clock.as_deref().map(parse_clock).transpose()?;
        client
            .request(|id| ClientMsg::CreateRoom {
                id,
                spec: spec.clone(),
                random: random.clone(),
                clock,
                listed: true,
                seat: args.seat,
                hints: false,
                bot: args.bot.clone(),
            })
            .await
    };
    match answer {
        Ok(ServerMsg::Seated {
            room,
            seat,
            token,
            snapshot,
            ..
        }) => {
            // v1 has no rated or tournament matches: a room is casual when it is
            // against the house bot or untimed.
            let casual = args.bot.is_some() || snapshot.clock.is_none();
            Ok((
                Seat::new(url, &args.name, room, seat, token, casual),
                snapshot,
            ))
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

fn prompt(f: &Follow, me: u8) {
    if f.to_move() == Some(me) {
        print!("your move> ");
    } else if f.game.result.is_none() {
        print!("> ");
    }
    let _ = std::io::stdout().flush();
}

fn show(f: &Follow, me: u8, paint: &Paint) {
    println!();
    print!("{}", f.draw(paint));
    println!("{}", f.status_line(Some(me), paint));
    prompt(f, me);
}

/// Tells what happened; true when the board should be drawn again.
fn tell(f: &Follow, me: u8, h: &Happened, paint: &Paint) -> bool {
    match h {
        Happened::Seated(name) => {
            println!("\n{name} sat down.");
            false
        }
        Happened::Started => {
            println!("\nThe match starts.");
            true
        }
        Happened::Moved(seat, words) if *seat == me => {
            println!("\nYou played: {words}.");
            true
        }
        Happened::Moved(seat, words) => {
            println!(
                "\n{}",
                paint.mark(&format!("{} played: {words}.", f.name(*seat)))
            );
            true
        }
        Happened::Presence(seat, connected) if *seat != me => {
            println!(
                "\n{} {}.",
                f.name(*seat),
                if *connected {
                    "is back"
                } else {
                    "lost their connection"
                }
            );
            prompt(f, me);
            false
        }
        Happened::Ended(r) => {
            let text = result_text(r, Some(me), f);
            let text = if r.winner == Some(me) {
                paint.good(&text)
            } else {
                paint.bad(&text)
            };
            println!("\nThe match is over: {text}.");
            false
        }
        _ => false,
    }
}

async fn play_loop(
    client: Client,
    seat: &Seat,
    f: &mut Follow,
    lines: &mut Lines,
    paint: &Paint,
    local: bool,
) -> Result<Finish> {
    let mut client = Some(client);
    loop {
        if f.game.result.is_some() {
            println!("Replay it with `grundy replay {}`.", f.room);
            return Ok(Finish::Over);
        }
        let mut c = match client.take() {
            Some(c) => c,
            None => match reconnect(seat, f, lines, paint).await? {
                Some(c) => c,
                None => return Ok(Finish::Quit), // quit while reconnecting
            },
        };
        match session(&mut c, seat, f, lines, paint).await {
            Ok(Step::Quit) if local => {
                println!("You left; the local server stops, and the match with it.");
                c.close().await;
                return Ok(Finish::Quit);
            }
            Ok(Step::Quit) => {
                println!(
                    "You left; your seat is kept (your clock, if any, runs). Come back with:\n  {}",
                    seat.comeback
                );
                c.close().await;
                return Ok(Finish::Quit);
            }
            Ok(Step::Over) => continue,
            Err(e) => {
                println!("\nConnection lost ({}); reconnecting…", net::words(&e));
            }
        }
    }
}

enum Step {
    Quit,
    Over,
}

/// Follows the room and the person's input on one connection.
async fn session(
    c: &mut Client,
    seat: &Seat,
    f: &mut Follow,
    lines: &mut Lines,
    paint: &Paint,
) -> Result<Step, ClientError> {
    loop {
        if f.game.result.is_some() {
            return Ok(Step::Over);
        }
        tokio::select! {
            msg = c.next() => match msg? {
                ServerMsg::Event { room, event } if room == f.room => {
                    match f.apply(&event) {
                        Ok(h) => {
                            if tell(f, seat.seat, &h, paint) {
                                show(f, seat.seat, paint);
                            }
                        }
                        // Out of step: resume gives a fresh snapshot.
                        Err(e) => {
                            println!("\n{e}; catching up");
                            f.game.seq = 0;
                            return Err(ClientError::Closed);
                        }
                    }
                }
                ServerMsg::Shutdown { message } => {
                    println!("\nThe server is going down: {message}");
                    return Err(ClientError::Closed);
                }
                _ => {}
            },
            line = lines.recv() => {
                let Some(line) = line else { return Ok(Step::Quit) };
                if let Some(step) = typed(c, seat, f, &line, paint).await? {
                    return Ok(step);
                }
            }
        }
    }
}

/// Acts on one typed line. Transport errors go up (to reconnect).
async fn typed(
    c: &mut Client,
    seat: &Seat,
    f: &mut Follow,
    line: &str,
    paint: &Paint,
) -> Result<Option<Step>, ClientError> {
    match input::parse(&f.game.position, line) {
        Err(reason) => {
            println!("{}", paint.bad(&reason));
            if reason.contains("help") && !reason.starts_with("illegal") {
                print!("{}", input::help_text(&f.game.position));
            }
        }
        Ok(Input::Help) => print!("{}", input::help_text(&f.game.position)),
        Ok(Input::Redraw) => {
            show(f, seat.seat, paint);
            return Ok(None);
        }
        Ok(Input::Quit) => return Ok(Some(Step::Quit)),
        Ok(Input::Hint) => hint(seat, f, paint),
        Ok(Input::Resign) => {
            match c
                .request(|id| ClientMsg::Resign {
                    id,
                    room: seat.room.clone(),
                    token: seat.token.clone(),
                })
                .await
            {
                Ok(_) => return Ok(None),
                Err(e) if net::is_transport(&e) => return Err(e),
                Err(e) => println!("{}", paint.bad(&net::words(&e))),
            }
        }
        Ok(Input::Move(value, _)) => {
            if !f.game.started {
                println!("The match has not started: waiting for an opponent.");
            } else if f.to_move() != Some(seat.seat) {
                println!("It is not your turn: wait for {}.", f.name(seat.seat ^ 1));
            } else {
                let answer = c
                    .request(|id| ClientMsg::Move {
                        id,
                        room: seat.room.clone(),
                        token: seat.token.clone(),
                        mv: value.clone(),
                    })
                    .await;
                match answer {
                    // The moved event (already queued) redraws the board.
                    Ok(_) => return Ok(None),
                    Err(e) if net::is_transport(&e) => return Err(e),
                    Err(e) => println!("{}", paint.bad(&net::words(&e))),
                }
            }
        }
    }
    prompt(f, seat.seat);
    Ok(None)
}

fn hint(seat: &Seat, f: &Follow, paint: &Paint) {
    if !seat.casual {
        println!("No hints in this match (timed, against a person).");
        return;
    }
    if f.to_move().is_none() {
        println!("No move to hint at now.");
        return;
    }
    let a = Analysis::of(&f.game.position, 5);
    match a.outcome {
        Outcome::N => println!(
            "{}",
            paint.good("The player to move wins with perfect play.")
        ),
        Outcome::P => println!(
            "{}",
            paint.bad("The player to move loses against perfect play: every move loses.")
        ),
    }
    if let Some(g) = a.grundy {
        println!("Grundy value: {g}");
    }
    if let Some(m) = &a.best_move {
        println!(
            "{} {}   (type {})",
            if a.outcome == Outcome::N {
                "Winning move:"
            } else {
                "Best try (keeps the game long):"
            },
            describe_move(&f.game.position, m),
            input::short_form(m)
        );
    }
    if let Some(table) = nim_table(&f.game.position) {
        print!("{table}");
    }
}

/// Reconnects and resumes, telling the person; None if they quit meanwhile.
async fn reconnect(
    seat: &Seat,
    f: &mut Follow,
    lines: &mut Lines,
    paint: &Paint,
) -> Result<Option<Client>> {
    let mut attempt = 1u32;
    loop {
        match resume(seat, f).await {
            Ok((c, fresh)) => {
                println!("Reconnected: the match goes on.");
                if fresh {
                    show(f, seat.seat, paint);
                } else {
                    prompt(f, seat.seat);
                }
                return Ok(Some(c));
            }
            Err(e) => {
                if let ClientError::Refused { .. } = e {
                    bail!("cannot resume the match: {}", net::words(&e));
                }
                let wait = net::backoff(attempt);
                println!(
                    "Cannot reach the server ({}); retrying in {:.1} s (type `quit` to stop)…",
                    net::words(&e),
                    wait.as_secs_f32()
                );
                attempt += 1;
                let deadline = tokio::time::sleep(wait);
                tokio::pin!(deadline);
                loop {
                    tokio::select! {
                        _ = &mut deadline => break,
                        line = lines.recv() => match line.as_deref().map(str::trim) {
                            None | Some("quit") | Some("q") | Some("exit") => return Ok(None),
                            Some(_) => println!("Not connected yet; reconnecting…"),
                        },
                    }
                }
            }
        }
    }
}

/// One resume; true when a fresh snapshot replaced the state.
async fn resume(seat: &Seat, f: &mut Follow) -> Result<(Client, bool), ClientError> {
    let mut c =
        Client::connect_as(&seat.url, &crate::account::hello(&seat.url, &seat.name)).await?;
    let since = (f.game.seq > 0).then_some(f.game.seq);
    let answer = c
        .request(|id| ClientMsg::Resume {
            id,
            room: seat.room.clone(),
            token: seat.token.clone(),
            since,
        })
        .await?;
    match answer {
        ServerMsg::Watching {
            snapshot: Some(s), ..
        } => {
            *f = Follow::from_snapshot(&s).map_err(ClientError::Unexpected)?;
            Ok((c, true))
        }
        ServerMsg::Watching { events, .. } => {
            let mut moved = false;
            for e in &events {
                let h = f.apply(e).map_err(ClientError::Unexpected)?;
                moved |= matches!(h, Happened::Moved(..) | Happened::Ended(_));
            }
            Ok((c, moved))
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

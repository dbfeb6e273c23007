//! `grundy lobby`, `grundy watch ROOM` and `grundy replay ROOM`.

use std::io::Write;

use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use grundy_client::client::{Client, ClientError};
use grundy_protocol::wire::{ClientMsg, ErrorCode, PlayerKind, ServerMsg};
use grundy_protocol::{Position, Rules};

use crate::describe::describe_move;
use crate::follow::{clock_text, result_text, Follow, Happened};
use crate::net::{self, DEFAULT_SERVER};
use crate::render::{board, Paint};

#[derive(ClapArgs, Debug)]
pub struct LobbyArgs {
    #[arg(long, default_value = DEFAULT_SERVER)]
    server: String,
}

/// Spectate a room live, printing each move.
#[derive(ClapArgs, Debug)]
pub struct WatchArgs {
    /// The room's code or id.
    room: String,
    #[arg(long, default_value = DEFAULT_SERVER)]
    server: String,
}

/// Step through a match move by move (Enter for the next move, `q` to stop).
#[derive(ClapArgs, Debug)]
pub struct ReplayArgs {
    /// The room's code or id (any match the server hosted, finished ones too).
    room: String,
    #[arg(long, default_value = DEFAULT_SERVER)]
    server: String,
    /// Print every move at once, without waiting for Enter.
    #[arg(long)]
    all: bool,
}

async fn connect(url: &str) -> Result<Client> {
    net::connect(url, "spectator", 3)
        .await
        .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))
}

pub async fn lobby(args: LobbyArgs) -> Result<()> {
    let mut c = connect(&args.server).await?;
    let (rooms, total) = match c
        .request(|id| ClientMsg::ListRooms {
            id,
            limit: None,
            offset: None,
        })
        .await
    {
        Ok(ServerMsg::Rooms { rooms, total, .. }) => (rooms, total),
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => bail!("{}", net::words(&e)),
    };
    if rooms.is_empty() {
        println!("No open or running rooms. Start one: grundy play --game \"nim 3 4 5\" --open");
    }
    for r in &rooms {
        // A rated player shows with their rating in this game.
        // Bots' accounts and guests are marked: a guest's name proves nothing.
        let seat = |i: usize| {
            let who = r.seats[i]
                .name
                .as_deref()
                .map(|name| PlayerKind::show(name, r.seats[i].player_kind));
            match (who, r.ratings[i]) {
                (Some(who), Some(rating)) => format!("{who} ({rating:.0})"),
                (Some(who), None) => who,
                (None, _) => "(free)".to_string(),
            }
        };
        let clock = r
            .clock
            .map(|c| format!("{}+{}s", clock_text(c.initial_ms), c.increment_ms / 1000))
            .unwrap_or_else(|| "untimed".into());
        let spec = format!("{}: {}", r.name, r.description);
        println!(
            "{}  {:<8} {} vs {}  {}{}{}  {}",
            r.code,
            r.state,
            seat(0),
            seat(1),
            clock,
            r.bot
                .as_ref()
                .map(|b| format!("  bot {b}"))
                .unwrap_or_default(),
            r.tournament
                .as_ref()
                .map(|_| "  tournament game")
                .unwrap_or_default(),
            spec
        );
    }
    if total > rooms.len() as u64 {
        println!(
            "({} of {total} rooms shown: the open ones first)",
            rooms.len()
        );
    }
    if rooms.iter().any(|r| r.state == "open") {
        println!("Join one with `grundy play --join CODE`, or watch with `grundy watch CODE`.");
    }
    c.close().await;
    Ok(())
}

pub async fn watch(args: WatchArgs) -> Result<()> {
    let paint = Paint::detect();
    let mut f: Option<Follow> = None;
    let mut attempt = 1;
    loop {
        let mut c = match connect(&args.server).await {
            Ok(c) => c,
            Err(e) if f.is_some() => {
                println!("{e}; retrying…");
                tokio::time::sleep(net::backoff(attempt)).await;
                attempt += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let since = f.as_ref().map(|f| f.game.seq);
        let answer = c
            .request(|id| ClientMsg::Watch {
                id,
                room: args.room.clone(),
                since,
            })
            .await;
        match answer {
            Ok(ServerMsg::Watching {
                snapshot: Some(s), ..
            }) => {
                let fresh = Follow::from_snapshot(&s).map_err(anyhow::Error::msg)?;
                println!("Watching room {}.", fresh.code);
                print!("{}", fresh.draw(&paint));
                println!("{}", fresh.status_line(None, &paint));
                f = Some(fresh);
            }
            Ok(ServerMsg::Watching { events, .. }) => {
                println!("Reconnected: watching again.");
                if let Some(f) = f.as_mut() {
                    for e in &events {
                        let h = f.apply(e).map_err(anyhow::Error::msg)?;
                        tell(f, &h, &paint);
                    }
                }
            }
            Ok(other) => bail!("unexpected answer: {other:?}"),
            Err(e) if net::is_transport(&e) => continue,
            Err(ClientError::Refused {
                code: ErrorCode::UnknownRoom,
                ..
            }) if f.is_none() => {
                // A finished room leaves memory; its record stays, by code too.
                return over(c, &args.room, &args.server).await;
            }
            Err(e) => bail!("{}", net::words(&e)),
        }
        attempt = 1;
        let Some(follow) = f.as_mut() else {
            bail!("no snapshot")
        };
        loop {
            if follow.game.result.is_some() {
                c.close().await;
                return Ok(());
            }
            match c.next().await {
                Ok(ServerMsg::Event { room, event }) if room == follow.room => {
                    let h = follow.apply(&event).map_err(anyhow::Error::msg)?;
                    tell(follow, &h, &paint);
                }
                Ok(ServerMsg::Shutdown { message }) => {
                    println!("The server is going down: {message}");
                }
                Ok(_) => {}
                Err(e) => {
                    println!("Connection lost ({}); reconnecting…", net::words(&e));
                    break;
                }
            }
        }
    }
}

/// A room there is nothing to watch in: its match is over (and its record
/// kept), or there never was one.
async fn over(mut c: Client, room: &str, server: &str) -> Result<()> {
    let answer = c
        .request(|id| ClientMsg::GetMatch {
            id,
            room: room.to_string(),
        })
        .await;
    c.close().await;
    let record = match answer {
        Ok(ServerMsg::Match { record, .. }) => record,
        Err(ClientError::Refused {
            code: ErrorCode::UnknownRoom,
            ..
        }) => bail!("no room or match {room:?} on this server (a code looks like ABC234)"),
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => bail!("{}", net::words(&e)),
    };
    let name = |seat: u8| {
        record.players[seat as usize % 2]
            .clone()
            .unwrap_or_else(|| format!("seat {seat}"))
    };
    let how = match &record.result {
        Some(r) => {
            let why = format!("{:?}", r.reason).to_lowercase();
            match r.winner {
                Some(w) => format!("{} won ({why})", name(w)),
                None => format!("no winner ({why})"),
            }
        }
        None => "not finished".to_string(),
    };
    let server = if server == DEFAULT_SERVER {
        String::new()
    } else {
        format!(" --server {server}")
    };
    println!(
        "The match in room {room} is over: {} vs {}, {} moves, {how}. Nothing more to watch; \
         replay it with `grundy replay {room}{server}`.",
        name(0),
        name(1),
        record.moves.len()
    );
    Ok(())
}

fn tell(f: &Follow, h: &Happened, paint: &Paint) {
    match h {
        Happened::Seated(name) => println!("{name} sat down."),
        Happened::Started => {
            println!("The match starts.");
            println!("{}", f.status_line(None, paint));
        }
        Happened::Moved(seat, words) => {
            println!(
                "\nmove {}: {}",
                f.game.plies(),
                paint.mark(&format!("{} played: {words}", f.name(*seat)))
            );
            print!("{}", f.draw(paint));
            println!("{}", f.status_line(None, paint));
        }
        Happened::Presence(seat, c) => println!(
            "{} {}.",
            f.name(*seat),
            if *c {
                "is back"
            } else {
                "lost their connection"
            }
        ),
        Happened::Ended(r) => println!("The match is over: {}.", result_text(r, None, f)),
        Happened::Nothing => {}
    }
}

pub async fn replay(args: ReplayArgs) -> Result<()> {
    let paint = Paint::detect();
    let mut c = connect(&args.server).await?;
    let record = match c
        .request(|id| ClientMsg::GetMatch {
            id,
            room: args.room.clone(),
        })
        .await
    {
        Ok(ServerMsg::Match { record, .. }) => record,
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => bail!("{}", net::words(&e)),
    };
    c.close().await;
    let name = |seat: u8| {
        record.players[seat as usize % 2]
            .clone()
            .unwrap_or_else(|| format!("seat {seat}"))
    };
    let mut position = Position::from_spec(&record.spec)
        .map_err(|e| anyhow::anyhow!("the match's spec is refused: {e}"))?;
    println!(
        "Match {}: {} (seat 0) vs {} (seat 1), {} moves.",
        record.room,
        name(0),
        name(1),
        record.moves.len()
    );
    print!("{}", board(&position, None, &paint));
    if !args.all && !record.moves.is_empty() {
        println!("Enter: next move, q: stop.");
    }
    let stdin = std::io::stdin();
    for (i, m) in record.moves.iter().enumerate() {
        if !args.all {
            print!("[{}/{}] ", i + 1, record.moves.len());
            let _ = std::io::stdout().flush();
            let mut line = String::new();
            match stdin.read_line(&mut line) {
                Ok(0) | Err(_) => return Ok(()),
                Ok(_) if line.trim().eq_ignore_ascii_case("q") => return Ok(()),
                Ok(_) => {}
            }
        }
        let mv = position
            .parse_move(&m.mv)
            .map_err(|e| anyhow::anyhow!("move {} unreadable: {e}", i + 1))?;
        let words = describe_move(&position, &mv);
        position
            .play(&mv)
            .map_err(|e| anyhow::anyhow!("move {} illegal: {e}", i + 1))?;
        println!(
            "\nmove {} at {}: {}",
            i + 1,
            clock_text(m.at_ms),
            paint.mark(&format!("{} played: {words}", name(m.seat)))
        );
        print!("{}", board(&position, Some(&m.mv), &paint));
    }
    match &record.result {
        Some(r) => {
            let why = format!("{:?}", r.reason).to_lowercase();
            match r.winner {
                Some(w) => println!("\n{} won ({why}).", name(w)),
                None => println!("\nNo winner ({why})."),
            }
        }
        None => println!(
            "\nThe match is still going on: `grundy watch {}`.",
            record.room
        ),
    }
    Ok(())
}

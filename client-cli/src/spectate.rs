//! `grundy lobby`, `grundy watch ROOM`, `grundy replay ROOM` and `grundy games`.

use std::io::Write;

use anyhow::{bail, Result};
use clap::Args as ClapArgs;
use grundy_client::client::{Client, ClientError};
use grundy_client::reconnect::{Attempt, Reconnect};
use grundy_protocol::wire::{
    ClientBody, ClientMsg, ErrorCode, MatchRecord, RoomState, RoomSummary, ServerBody, ServerMsg,
};
use grundy_protocol::{Outcome, Position, Rules, Strategy};
use serde_json::{json, Value};

use crate::console::{Console, Typed};
use crate::describe::describe_move;
use crate::follow::{clock_text, result_text, shown_name, Follow, Happened};
use crate::net::{self, DEFAULT_SERVER};
use crate::render::{board, Paint};
use crate::seats;

/// The open and running rooms of a server, one line each under a header.
///
/// Examples:
///   grundy lobby
///   grundy lobby --open --game kayles
///   grundy lobby --live          (refreshes until Enter or Ctrl-C)
///   grundy lobby --json
#[derive(ClapArgs, Debug)]
#[command(verbatim_doc_comment)]
pub struct LobbyArgs {
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
    /// Only rooms with a free seat.
    #[arg(long)]
    open: bool,
    /// Only rooms of this game (its name or id: kayles, "Dawson's Kayles", nim, ...).
    #[arg(long)]
    game: Option<String>,
    /// Keep the list up to date (every 2 s) until Enter or Ctrl-C.
    #[arg(long, conflicts_with = "json")]
    live: bool,
    /// The rooms as JSON (the protocol's room summaries), for scripts.
    #[arg(long)]
    json: bool,
}

/// Spectate a room live, printing each move.
#[derive(ClapArgs, Debug)]
pub struct WatchArgs {
    /// The room's code or id.
    room: String,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
}

/// Step through a finished match, forward and back, with every move that threw
/// a win away marked (the engine knows).
///
/// At the prompt: Enter or `n` next move, `b` back, a number goes to that
/// move, `q` stops.
#[derive(ClapArgs, Debug)]
#[command(verbatim_doc_comment)]
pub struct ReplayArgs {
    /// The room's code or id (any match the server hosted, finished ones too).
    room: String,
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = net::parse_server)]
    server: String,
    /// Print every move at once, without waiting for Enter.
    #[arg(long)]
    all: bool,
    /// The match record as JSON, each move with `threw_win_away`, for scripts.
    #[arg(long, conflicts_with = "all")]
    json: bool,
}

/// Your past games and unfinished seats, as kept by this client.
#[derive(ClapArgs, Debug)]
pub struct GamesArgs {
    /// Only the games of this server.
    #[arg(long, value_parser = net::parse_server)]
    server: Option<String>,
    /// How many of the latest games to show.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// As JSON, for scripts.
    #[arg(long)]
    json: bool,
}

async fn connect(url: &str) -> Result<Client> {
    net::connect(url, "spectator", 3)
        .await
        .map_err(|e| anyhow::anyhow!("{}", net::words(&e)))
}

/// Whether a room is of the game a person named (its id or its name).
fn of_game(r: &RoomSummary, wanted: &str) -> bool {
    let wanted = wanted.trim();
    r.game.eq_ignore_ascii_case(wanted)
        || r.name.eq_ignore_ascii_case(wanted)
        || grundy_protocol::names::game_name(&wanted.to_ascii_lowercase())
            .eq_ignore_ascii_case(&r.name)
}

async fn fetch_rooms(c: &mut Client) -> Result<(Vec<RoomSummary>, u64)> {
    match c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::ListRooms {
                limit: None,
                offset: None,
            },
        })
        .await
    {
        Ok(ServerMsg {
            body: ServerBody::Rooms { rooms, total, .. },
            ..
        }) => Ok((rooms, total)),
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => bail!("{}", net::words(&e)),
    }
}

pub async fn lobby(args: LobbyArgs) -> Result<()> {
    if let Some(game) = args
        .game
        .as_deref()
        .filter(|g| !grundy_protocol::names::is_game(g))
    {
        bail!(
            "--game {game:?}: no such game; give its id or its name (nim, kayles, \"Dawson's Kayles\", wythoff, ...: docs/games.md)"
        );
    }
    let mut c = connect(&args.server).await?;
    let mut lines = args.live.then(Console::plain_lines);
    let mut last = String::new();
    loop {
        let (mut rooms, total) = fetch_rooms(&mut c).await?;
        let listed = rooms.len() as u64;
        rooms.retain(|r| {
            (!args.open || r.state == RoomState::Open)
                && args.game.as_deref().is_none_or(|g| of_game(r, g))
        });
        if args.json {
            println!("{}", serde_json::to_string_pretty(&rooms)?);
            break;
        }
        let text = lobby_text(&rooms, total, listed, &args);
        if text != last {
            if args.live {
                println!("\n— {} —", clock_of_day());
            }
            print!("{text}");
            last = text;
        }
        let Some(lines) = lines.as_mut() else { break };
        tokio::select! {
            _ = tokio::time::sleep(std::time::Duration::from_secs(2)) => {}
            _ = lines.next() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    c.close().await;
    Ok(())
}

/// The time of day (UTC) a live list was read at.
fn clock_of_day() -> String {
    let s = seats::now_ms() / 1000 % 86_400;
    format!("{:02}:{:02}:{:02} UTC", s / 3600, s / 60 % 60, s % 60)
}

/// Columns of the lobby: code, state, game, players, clock, start.
fn lobby_text(rooms: &[RoomSummary], total: u64, listed: u64, args: &LobbyArgs) -> String {
    let mut out = String::new();
    if rooms.is_empty() {
        out.push_str(if args.open || args.game.is_some() {
            "No room matches.\n"
        } else {
            "No open or running rooms. Start one: grundy play --game \"nim 3 4 5\" --open\n"
        });
        return out;
    }
    // Players get what is left of the terminal's width (80 when unknown),
    // up to 40 columns; the start is shown when 12 more columns are left.
    let left = terminal_width().saturating_sub(43);
    let players_width = left.clamp(20, 40);
    let start_width = left.saturating_sub(players_width + 2);
    let start_shown = start_width >= 12;
    let mut header = format!(
        "{:<6}  {:<8}  {:<14}  {:<7}  {}",
        "CODE", "STATE", "GAME", "CLOCK", "PLAYERS"
    );
    if start_shown {
        header = format!("{header:<w$}  START", w = 43 + players_width);
    }
    out.push_str(header.trim_end());
    out.push('\n');
    for r in rooms {
        // A rated player shows with their rating in this game; bots and
        // guests are marked (a guest's name proves nothing); a player who
        // left is marked away.
        let seat = |i: usize| {
            let s = &r.seats[i];
            let Some(name) = s.name.as_deref() else {
                return "(free)".to_string();
            };
            let mut who = shown_name(name, s.player_kind);
            if let Some(rating) = r.ratings[i] {
                who.push_str(&format!(" {rating:.0}"));
            }
            if !s.connected && r.state != RoomState::Finished {
                who.push_str(" (away)");
            }
            who
        };
        let clock = r
            .clock
            .map(|c| format!("{}+{}", clock_text(c.initial_ms), c.increment_ms / 1000))
            .unwrap_or_else(|| "untimed".into());
        let mut notes = Vec::new();
        if r.tournament.is_some() {
            notes.push("tournament");
        }
        if r.rated {
            notes.push("rated");
        }
        if r.hints {
            notes.push("hints");
        }
        let mut start = r.description.clone();
        if !notes.is_empty() {
            start = format!("[{}] {start}", notes.join(", "));
        }
        let players = cut(&format!("{} vs {}", seat(0), seat(1)), players_width);
        let mut line = format!(
            "{:<6}  {:<8}  {:<14}  {:<7}  {players:<players_width$}",
            r.code,
            r.state,
            cut(&r.name, 14),
            clock,
        );
        if start_shown {
            line.push_str(&format!("  {}", cut(&start, start_width)));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if total > listed {
        out.push_str(&format!(
            "({listed} of {total} rooms shown: the open ones first)\n"
        ));
    }
    if rooms.iter().any(|r| r.state == RoomState::Open) {
        out.push_str(
            "Join one with `grundy play --join CODE`, or watch with `grundy watch CODE`.\n",
        );
    }
    out
}

/// The terminal's width in columns: 80 when it is not a terminal.
fn terminal_width() -> usize {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        if let Ok((cols, _)) = crossterm::terminal::size() {
            return cols as usize;
        }
    }
    80
}

/// At most `max` characters, the cut marked with `…`.
fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

pub async fn watch(args: WatchArgs) -> Result<()> {
    let paint = Paint::detect();
    let mut c = connect(&args.server).await?;
    let mut answer = c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::Watch {
                room: args.room.clone(),
                since: None,
            },
        })
        .await;
    let mut f: Option<Follow> = None;
    loop {
        match answer {
            Ok(ServerMsg {
                body:
                    ServerBody::Watching {
                        snapshot: Some(s), ..
                    },
                ..
            }) => {
                let fresh = Follow::from_snapshot(&s).map_err(anyhow::Error::msg)?;
                println!("Watching room {}.", fresh.code);
                print!("{}", fresh.draw(&paint));
                println!("{}", fresh.status_line(None, &paint));
                f = Some(fresh);
            }
            Ok(ServerMsg {
                body: ServerBody::Watching { events, .. },
                ..
            }) => {
                println!("Reconnected: watching again.");
                if let Some(f) = f.as_mut() {
                    for e in &events {
                        let h = f.apply(e).map_err(anyhow::Error::msg)?;
                        tell(f, &h, &paint);
                    }
                }
            }
            Ok(other) => bail!("unexpected answer: {other:?}"),
            Err(ClientError::Refused {
                code: ErrorCode::UnknownRoom,
                ..
            }) if f.is_none() => {
                // A finished room leaves memory; its record stays, by code too.
                return over(c, &args.room, &args.server).await;
            }
            // Lost before the first answer: come back below.
            Err(e) if e.connection_lost() => {}
            Err(e) => bail!("{}", net::words(&e)),
        }
        if let Some(follow) = f.as_mut() {
            if follow_room(&mut c, follow, &paint).await? == Followed::Over {
                c.close().await;
                return Ok(());
            }
        }
        (c, answer) = rewatch(&args, f.as_ref().map(|f| f.game.seq)).await?;
    }
}

#[derive(PartialEq, Eq)]
enum Followed {
    Over,
    Lost,
}

/// Tells the room's events as they come, until the match is over or the
/// connection is lost.
async fn follow_room(c: &mut Client, follow: &mut Follow, paint: &Paint) -> Result<Followed> {
    loop {
        if follow.game.result.is_some() {
            return Ok(Followed::Over);
        }
        match c.next().await {
            Ok(ServerMsg {
                body: ServerBody::Event { room, event },
                ..
            }) if room == follow.room => {
                let h = follow.apply(&event).map_err(anyhow::Error::msg)?;
                tell(follow, &h, paint);
            }
            Ok(ServerMsg {
                body: ServerBody::Shutdown { message },
                ..
            }) => {
                println!("The server is going down: {message}");
            }
            Ok(_) => {}
            Err(e) => {
                println!("Connection lost ({}); reconnecting…", net::words(&e));
                return Ok(Followed::Lost);
            }
        }
    }
}

/// Watches the room again after a lost connection, from the last event
/// seen (`since`; None: from a snapshot). No bound on the attempts: Ctrl-C
/// stops the command.
async fn rewatch(
    args: &WatchArgs,
    since: Option<u64>,
) -> Result<(Client, Result<ServerMsg, ClientError>)> {
    let hello = crate::net::hello(&args.server, "spectator");
    let mut tries = Reconnect::new(&args.server, &hello, None);
    loop {
        match tries.attempt(|c| watch_on(c, &args.room, since)).await {
            Attempt::Back((c, answer)) => return Ok((c, Ok(answer))),
            Attempt::Retry(r) => {
                println!("{}; retrying…", net::words(&r.error));
                r.sleep().await;
            }
            Attempt::GaveUp { error, .. } => bail!("{}", net::words(&error)),
        }
    }
}

/// One `watch` of `room` on `c`, from event `since`.
async fn watch_on(
    mut c: Client,
    room: &str,
    since: Option<u64>,
) -> Result<(Client, ServerMsg), ClientError> {
    let answer = c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::Watch {
                room: room.to_string(),
                since,
            },
        })
        .await?;
    Ok((c, answer))
}

/// A room there is nothing to watch in: its match is over (and its record
/// kept), or there never was one.
async fn over(mut c: Client, room: &str, server: &str) -> Result<()> {
    let answer = c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::GetMatch {
                room: room.to_string(),
            },
        })
        .await;
    c.close().await;
    let record = match answer {
        Ok(ServerMsg {
            body: ServerBody::Match { record, .. },
            ..
        }) => record,
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

/// A finished (or running) match read back move by move.
struct Replay {
    record: MatchRecord,
    /// The position before each move, and after the last.
    positions: Vec<Position>,
    /// Each move in words.
    words: Vec<String>,
    /// Whether each move threw a win away (a winning position left winning
    /// for the opponent).
    threw: Vec<bool>,
}

impl Replay {
    fn of(record: MatchRecord) -> Result<Replay> {
        let mut position = Position::from_spec(&record.spec)
            .map_err(|e| anyhow::anyhow!("the match's spec is refused: {e}"))?;
        let mut positions = vec![position.clone()];
        let (mut words, mut threw) = (Vec::new(), Vec::new());
        let mut winning = position.outcome() == Outcome::N;
        for (i, m) in record.moves.iter().enumerate() {
            let mv = position
                .parse_move(&m.mv)
                .map_err(|e| anyhow::anyhow!("move {} unreadable: {e}", i + 1))?;
            words.push(describe_move(&position, &mv));
            position
                .play(&mv)
                .map_err(|e| anyhow::anyhow!("move {} illegal: {e}", i + 1))?;
            let next_winning = position.outcome() == Outcome::N;
            threw.push(winning && next_winning);
            winning = next_winning;
            positions.push(position.clone());
        }
        Ok(Replay {
            record,
            positions,
            words,
            threw,
        })
    }

    fn name(&self, seat: u8) -> String {
        let i = seat as usize % 2;
        match &self.record.players[i] {
            Some(n) => shown_name(n, self.record.player_kinds[i]),
            None => "nobody".to_string(),
        }
    }

    /// Move `n` (from 1): who played what, marked when it threw the win away,
    /// and the board after it.
    fn step(&self, n: usize, paint: &Paint) -> String {
        let m = &self.record.moves[n - 1];
        let mut line = format!(
            "\nmove {n} of {} at {}: {}",
            self.record.moves.len(),
            clock_text(m.at_ms),
            paint.mark(&format!(
                "{} played: {}",
                self.name(m.seat),
                self.words[n - 1]
            ))
        );
        if self.threw[n - 1] {
            line.push_str(&paint.bad("   ✗ threw the win away"));
        }
        format!("{line}\n{}", self.board(n, Some(&m.mv), paint))
    }

    fn start(&self, paint: &Paint) -> String {
        format!("\nThe start:\n{}", self.board(0, None, paint))
    }

    fn board(&self, n: usize, last: Option<&Value>, paint: &Paint) -> String {
        board(&self.positions[n], last, paint)
    }

    fn ending(&self) -> String {
        match &self.record.result {
            Some(r) => {
                let why = crate::follow::reason_text(r.reason);
                let thrown = self.threw.iter().filter(|t| **t).count();
                let mut s = match r.winner {
                    Some(w) => format!("\n{} won ({why}).", self.name(w)),
                    None => format!("\nNo winner ({why})."),
                };
                s.push_str(&format!(
                    " {} threw a win away.",
                    grundy_protocol::names::count(thrown as u64, "move", "moves")
                ));
                s
            }
            None => format!(
                "\nThe match is still going on: `grundy watch {}`.",
                self.record.room
            ),
        }
    }

    fn json(&self) -> Value {
        let moves: Vec<Value> = self
            .record
            .moves
            .iter()
            .zip(&self.threw)
            .zip(&self.words)
            .map(|((m, threw), words)| {
                json!({"seat": m.seat, "move": m.mv, "at_ms": m.at_ms,
                       "words": words, "threw_win_away": threw})
            })
            .collect();
        json!({
            "room": self.record.room,
            "game": grundy_protocol::names::spec_name(&self.record.spec),
            "spec": self.record.spec,
            "players": self.record.players,
            "player_kinds": self.record.player_kinds,
            "clock": self.record.clock,
            "result": self.record.result,
            "moves": moves,
        })
    }
}

pub async fn replay(args: ReplayArgs) -> Result<()> {
    let paint = Paint::detect();
    let mut c = connect(&args.server).await?;
    let record = match c
        .request(|id| ClientMsg {
            id,
            body: ClientBody::GetMatch {
                room: args.room.clone(),
            },
        })
        .await
    {
        Ok(ServerMsg {
            body: ServerBody::Match { record, .. },
            ..
        }) => record,
        Ok(other) => bail!("unexpected answer: {other:?}"),
        Err(e) => bail!("{}", net::words(&e)),
    };
    c.close().await;
    let replay = Replay::of(record)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&replay.json())?);
        return Ok(());
    }
    let total = replay.record.moves.len();
    println!(
        "{}, match {}: {} (seat 0) vs {} (seat 1), {}.",
        grundy_protocol::names::spec_name(&replay.record.spec),
        replay.record.room,
        replay.name(0),
        replay.name(1),
        grundy_protocol::names::count(total as u64, "move", "moves"),
    );
    print!("{}", replay.start(&paint));
    if args.all || total == 0 {
        for n in 1..=total {
            print!("{}", replay.step(n, &paint));
        }
        println!("{}", replay.ending());
        return Ok(());
    }
    println!("Enter or n: next move, b: back, a number: go to that move, q: stop.");
    let mut lines = Console::plain_lines();
    let mut at = 0usize;
    loop {
        print!("[{at}/{total}] ");
        let _ = std::io::stdout().flush();
        let Typed::Line(line) = lines.next().await else {
            return Ok(());
        };
        let target = match line.to_ascii_lowercase().as_str() {
            "" | "n" | "next" => at + 1,
            "b" | "back" | "p" => at.saturating_sub(1),
            "q" | "quit" | "exit" => return Ok(()),
            other => match other.parse::<usize>() {
                Ok(n) if n <= total => n,
                _ => {
                    println!("{other:?}: Enter or n: next, b: back, 0 to {total}: go to that move, q: stop.");
                    continue;
                }
            },
        };
        if target > total {
            println!("{}\n(the end: b goes back, q stops)", replay.ending());
            continue;
        }
        at = target;
        if at == 0 {
            print!("{}", replay.start(&paint));
        } else {
            print!("{}", replay.step(at, &paint));
        }
    }
}

pub fn games(args: GamesArgs) -> Result<()> {
    let mut past = seats::past()?;
    let mut unfinished = match &args.server {
        Some(url) => seats::kept(url)?,
        None => seats::all_kept()?,
    };
    if let Some(url) = &args.server {
        past.retain(|g| &g.server == url);
        unfinished.retain(|s| &s.server == url);
    }
    past.truncate(args.limit);
    if args.json {
        let out = json!({"unfinished": unfinished, "games": past});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    if !unfinished.is_empty() {
        println!("Unfinished (come back with the command shown):");
        for s in &unfinished {
            println!(
                "  {:<16} room {}  as {}   grundy play --resume {}{}",
                cut(&s.game, 16),
                s.code,
                s.name,
                s.code,
                server_flag(&s.server)
            );
        }
        println!();
    }
    if past.is_empty() {
        println!("No finished games kept yet: they are listed here after you play one with `grundy play`.");
        return Ok(());
    }
    println!(
        "{:<10}  {:<16}  {:<24}  {:<9}  {:>5}  REPLAY",
        "DATE", "GAME", "OPPONENT", "RESULT", "MOVES"
    );
    for g in &past {
        println!(
            "{:<10}  {:<16}  {:<24}  {:<9}  {:>5}  grundy replay {}{}",
            date(g.ended_ms),
            cut(&g.game, 16),
            cut(&g.opponent, 24),
            g.result,
            g.moves,
            g.code,
            server_flag(&g.server)
        );
    }
    Ok(())
}

fn server_flag(url: &str) -> String {
    if net::server_choice(None).0 == url {
        String::new()
    } else {
        format!(" --server {url}")
    }
}

/// The UTC date of a time in milliseconds since the epoch (civil from days).
fn date(ms: u64) -> String {
    let days = (ms / 86_400_000) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::date;

    #[test]
    fn dates() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_795_478_400_000), "2026-11-24");
        assert_eq!(date(951_782_400_000), "2000-02-29");
    }
}

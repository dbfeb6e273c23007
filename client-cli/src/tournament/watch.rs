//! `grundy tournament watch`: a tournament's events as they come, watching
//! again (from the last event told) after a lost connection.

use std::collections::VecDeque;

use anyhow::{bail, Result};
use grundy_client::client::{Client, ClientError, Hello};
use grundy_client::reconnect::{Attempt, Reconnect};
use grundy_client::tournament::watch_tournament;
use grundy_protocol::wire::{
    ServerBody, ServerMsg, TournamentEvent, TournamentEventBody, TournamentState, TournamentStatus,
};

use super::words::{show_state, Log};
use super::{connect, in_play_or_over, Asked, WatchArgs};
use crate::net;

pub(super) async fn watch(args: WatchArgs) -> Result<()> {
    let mut c = connect(&args.server, "spectator").await?;
    let asked = watch_tournament(&mut c, &args.code, None).await;
    let (mut c, id, state) = match in_play_or_over(c, &args.code, asked).await? {
        Asked::InPlay(c, (tournament, Some(state), _)) => (c, tournament, state),
        Asked::InPlay(_, (_, None, _)) => bail!("the server sent no state"),
        Asked::Over(state) => {
            print_over(&state);
            return Ok(());
        }
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
                Ok(ServerMsg {
                    body: ServerBody::TournamentEvent { tournament, event },
                    ..
                }) if tournament == id => event,
                Ok(ServerMsg {
                    body: ServerBody::Shutdown { message },
                    ..
                }) => {
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

/// How many times in a row the spectator's connection is tried again.
const REWATCH_ATTEMPTS: u32 = 20;

/// Watches again after a dropped connection: the new connection and the
/// events missed.
async fn rewatch(url: &str, id: &str, since: u64) -> Result<(Client, Vec<TournamentEvent>)> {
    let hello = Hello::guest("spectator");
    let mut tries = Reconnect::new(url, &hello, Some(REWATCH_ATTEMPTS));
    loop {
        match tries.attempt(|c| catch_up(c, id, since)).await {
            Attempt::Back(back) => return Ok(back),
            Attempt::Retry(r) => r.sleep().await,
            Attempt::GaveUp { error, .. } => bail!("cannot watch again: {}", net::words(&error)),
        }
    }
}

/// Follows the tournament on `c`: the connection, and the events after
/// `since`.
async fn catch_up(
    mut c: Client,
    id: &str,
    since: u64,
) -> Result<(Client, Vec<TournamentEvent>), ClientError> {
    let (_, _, missed) = watch_tournament(&mut c, id, Some(since)).await?;
    Ok((c, missed))
}

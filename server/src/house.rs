//! The server's own house bots. Every one is a task of this module, tracked
//! and cancellable: for a new room that asks for a bot and for the house seats
//! of restored rooms alike, a bot (re)serves a seat the same way: the room
//! reserves the seat for the house (recorded so in the store), and the bot,
//! a protocol client over loopback like any other (on a plain port of the
//! house's own, `server.rs`, not counted per address), comes with `resume`
//! and the seat token — again by itself after a dropped connection. Shutdown cancels
//! the bots and waits for them, so none outlives its server, and none is left
//! to sit beside the bots a server restarted on the same address puts back.
//!
//! Names that read as the house bot's are reserved: clients cannot take them
//! (`hello`, tournament `register`), so nobody can pass for the house bot.
//! So are those that read as the external house bot's (`grundy-bot house`),
//! except on a server that leaves its bot rooms to it ([`reserved`]).

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use grundy_client::client::Hello;
use grundy_client::seat::{play_seat, SeatPlan};
use grundy_protocol::wire::EventBody;
use grundy_protocol::Level;

use crate::lobby::Lobby;
use crate::names::house_name;
use crate::player::Player;
use crate::room::RoomCmd;
use crate::store::StoredRoom;
use crate::task::OnExit;

/// A house seat to play: where, at what level, and whether it is reserved
/// already (after a restart: the room keeps only its token's hash, so the
/// bot asks it for a fresh token) or the bot reserves it first.
#[derive(Debug, Clone)]
pub struct HouseSeat {
    pub room: String,
    pub seat: u8,
    pub level: Level,
    pub reserved: bool,
}

/// The house bots of one server.
pub struct House {
    url: String,
    /// Off: rooms that ask for a bot are left to external `grundy-bot house`
    /// processes.
    enabled: bool,
    lobby: Arc<Lobby>,
    tasks: TaskTracker,
    stop: CancellationToken,
    /// The (room, seat) pairs a bot of this server plays: never two at once.
    playing: Mutex<HashSet<(String, u8)>>,
    seeds: AtomicU64,
}

/// How many house bots are running (for tests and monitoring); stays valid
/// after the server is gone.
#[derive(Clone)]
pub struct HouseBots(TaskTracker);

impl HouseBots {
    pub fn running(&self) -> usize {
        self.0.len()
    }
}

impl House {
    /// House bots for the server listening on `addr`; `stop` ends them all.
    pub fn new(
        addr: SocketAddr,
        enabled: bool,
        lobby: Arc<Lobby>,
        stop: CancellationToken,
    ) -> Arc<House> {
        Arc::new(House {
            url: format!("ws://{}", loopback(addr)),
            enabled,
            lobby,
            tasks: TaskTracker::new(),
            stop,
            playing: Mutex::new(HashSet::new()),
            seeds: AtomicU64::new(1),
        })
    }

    fn playing(&self) -> MutexGuard<'_, HashSet<(String, u8)>> {
        // Every update is a single insert or remove: a panic cannot leave the
        // set half-changed.
        self.playing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts a bot on `seat`, reserving it first (or, reserved before a
    /// restart, getting a fresh token for it).
    /// Does nothing when house bots are off, when the server is stopping, or
    /// when a bot of this server plays that seat already.
    pub fn spawn(self: &Arc<Self>, seat: HouseSeat) {
        if !self.enabled || self.stop.is_cancelled() {
            return;
        }
        let key = (seat.room.clone(), seat.seat);
        if !self.playing().insert(key.clone()) {
            tracing::warn!(room = %seat.room, seat = seat.seat, "a house bot plays this seat already");
            return;
        }
        // However the task ends (cancelled before it ever ran, too), the seat
        // is free for a bot again.
        let house = self.clone();
        let done = OnExit::new(move || {
            house.playing().remove(&key);
        });
        let (house, stop) = (self.clone(), self.stop.clone());
        let seed = self.seeds.fetch_add(1, Ordering::Relaxed);
        self.tasks.spawn(async move {
            let _done = done;
            tokio::select! {
                biased;
                _ = stop.cancelled() => {}
                _ = house.play(seat, seed) => {}
            }
        });
    }

    async fn play(&self, seat: HouseSeat, seed: u64) {
        let token = match self.reserve(&seat).await {
            Ok(token) => token,
            Err(why) => {
                tracing::info!(room = %seat.room, seat = seat.seat, "no house bot: {why}");
                return;
            }
        };
        let plan = SeatPlan {
            url: self.url.clone(),
            // The seat's name was set when the server reserved it; `resume`
            // uses none (and the house's own is refused in `hello`).
            hello: Hello::Guest(None),
            room: seat.room,
            seat: seat.seat,
            token,
            level: seat.level,
            seed,
        };
        match play_seat(&plan, None, None).await {
            Ok(result) => tracing::debug!(room = %plan.room, ?result, "house bot done"),
            Err(e) => tracing::warn!(room = %plan.room, "house bot stopped: {e}"),
        }
    }

    /// Reserves `seat` for the house in its room, or gets a fresh token for
    /// it if reserved already; its token.
    async fn reserve(&self, seat: &HouseSeat) -> Result<String, String> {
        let (_, tx) = self.lobby.find(&seat.room).ok_or("the room has closed")?;
        let (reply, answer) = oneshot::channel();
        let reserve = if seat.reserved {
            RoomCmd::Rekey {
                seat: seat.seat,
                reply,
            }
        } else {
            RoomCmd::Reserve {
                player: Player::house(house_name(seat.level)),
                seat: seat.seat,
                house: true,
                player_token: None,
                reply,
            }
        };
        tx.send(reserve)
            .await
            .map_err(|_| "the room has closed".to_string())?;
        match answer.await {
            Ok(Ok(token)) => Ok(token),
            Ok(Err((_, message))) => Err(message),
            Err(_) => Err("the room has closed".into()),
        }
    }

    /// A view of how many bots run.
    pub fn bots(&self) -> HouseBots {
        HouseBots(self.tasks.clone())
    }

    /// Cancels every bot and waits for them, at most `within`. Spawning
    /// afterwards does nothing.
    pub async fn stop(&self, within: Duration) {
        self.stop.cancel();
        self.tasks.close();
        if tokio::time::timeout(within, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                "{} house bots did not stop within {within:?}",
                self.tasks.len()
            );
        }
    }
}

/// Where a bot in this process reaches a server listening on `addr`: a
/// wildcard address is reached over loopback.
fn loopback(addr: SocketAddr) -> SocketAddr {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, addr.port())
}

/// The house seats of a restored room. Only a seat the server reserved for its
/// house bot counts (never a name: a person may have picked one like it). A
/// room that asked for a bot but never had its house seat reserved (a crash
/// between its creator's seat and the reservation, or a server with house bots
/// off) gets its free seat reserved now, if the match is still to be played.
pub fn house_seats(s: &StoredRoom) -> Vec<HouseSeat> {
    let Some(asked) = &s.bot else {
        return Vec::new();
    };
    let Ok(level) = asked.parse::<Level>() else {
        tracing::warn!(room = %s.room, "unknown house bot level {asked:?}: no bot");
        return Vec::new();
    };
    let seat = |seat: usize, reserved: bool| HouseSeat {
        room: s.room.clone(),
        seat: seat as u8,
        level,
        reserved,
    };
    let reserved: Vec<HouseSeat> = (0..2)
        .filter(|&i| s.seats[i].as_ref().is_some_and(|x| x.house))
        .map(|i| seat(i, true))
        .collect();
    let over = s
        .events
        .iter()
        .any(|(e, _)| matches!(e.body, EventBody::Ended { .. }));
    match (&s.seats, reserved.is_empty()) {
        (_, false) => reserved,
        ([Some(_), None], true) if s.tournament.is_none() && !over => vec![seat(1, false)],
        ([None, Some(_)], true) if s.tournament.is_none() && !over => vec![seat(0, false)],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_address_is_reached_over_loopback() {
        let at = |s: &str| loopback(s.parse().expect("addr")).to_string();
        assert_eq!(at("0.0.0.0:7878"), "127.0.0.1:7878");
        assert_eq!(at("[::]:7878"), "[::1]:7878");
        assert_eq!(at("192.0.2.1:7878"), "192.0.2.1:7878");
    }
}

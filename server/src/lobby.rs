//! The room registry: creates rooms (each its own task), finds them by id or
//! short code, lists the open ones, and brings unfinished rooms back after a
//! restart. Its lock guards only the map, never a match.

// Keys are room ids the server made: a fast hash needs no defence against
// keys chosen to collide.
use foldhash::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use grundy_protocol::wire::{Clock, ErrorCode, Event, RoomState, RoomSummary};
use grundy_protocol::{Level, Position, Rules, Status};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

use crate::accounts::Accounts;
use crate::config::Config;
use crate::directory::{self, Directory, Registry};
use crate::player::Player;
use crate::ratings::Ratings;
use crate::room::{self, room_queue, EndHook, Room, RoomCmd, RoomInit, RoomTx};
use crate::store::{now_ms, Lease, MatchStore, StoreError, StoredRoom, WriteOp};
use crate::task::committed;

/// Commands queued for one room before senders wait.
const ROOM_QUEUE: usize = 256;
/// Short codes: no 0/O or 1/I to misread.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

pub(crate) struct Entry {
    tx: RoomTx,
}

/// How old the lobby list may be: it is sorted anew at most this often, so
/// that `list_rooms` costs a copy of one page, not a walk of every room.
const LISTING_MAX_AGE: Duration = Duration::from_millis(500);

/// The listed rooms with unfinished matches, kept apart from the directory:
/// listing them never takes the lock that every command's room lookup takes.
#[derive(Default)]
struct Listing {
    rooms: Mutex<HashMap<String, Arc<Mutex<room::Listing>>>>,
    /// The last sorted list and when it was made (one rebuild at a time).
    sorted: tokio::sync::Mutex<Option<(Instant, Arc<Vec<RoomSummary>>)>>,
}

#[derive(Default)]
struct Rooms {
    directory: Directory<Entry>,
    /// Shutting down: no new rooms (a room opened now would keep its task,
    /// and the shutdown, waiting).
    closed: bool,
}

/// The listed rooms of a cluster's other nodes (the bus asks them).
pub type OtherNodes =
    Box<dyn Fn() -> futures_util::future::BoxFuture<'static, Vec<RoomSummary>> + Send + Sync>;

pub struct Lobby {
    rooms: Mutex<Rooms>,
    /// Unfinished rooms each client address created (`open_rooms_per_ip`).
    /// Only addresses holding one have an entry: the map cannot grow with
    /// the number of addresses ever seen. Apart from `rooms`: a slot given
    /// back never waits on, or nests in, the directory's lock.
    open_by_address: Mutex<std::collections::HashMap<IpAddr, usize>>,
    listing: Listing,
    /// In a cluster with a bus: the other nodes' rooms join the list.
    others: std::sync::OnceLock<OtherNodes>,
    /// What tells the rooms whether the account token a seat is tied to
    /// still acts (`RoomInit::accounts`).
    accounts: std::sync::OnceLock<Arc<Accounts>>,
    store: Arc<dyn MatchStore>,
    config: Arc<Config>,
    ratings: Arc<Ratings>,
    tracker: TaskTracker,
}

pub use crate::refusal::Refusal;

/// What a new room plays and how.
pub struct RoomSetup {
    pub spec: Value,
    pub start: Position,
    pub clock: Option<Clock>,
    pub listed: bool,
    /// The house bot level asked for.
    pub bot: Option<Level>,
    /// Both players may see hints (an untimed room).
    pub hints: bool,
    /// The game moves both players' ratings when it ends (a rated casual
    /// game: two accounts, no house bot).
    pub rated: bool,
    /// The tournament whose game this is, and how to tell it the result.
    pub tournament: Option<(String, EndHook)>,
    /// The creator's share of `open_rooms_per_ip` ([`Lobby::open_slot`]),
    /// held until the match ends or the room leaves memory; None for rooms
    /// no client address is counted for (tournaments' games, addresses in
    /// `unlimited_from`).
    pub slot: Option<OpenSlot>,
}

/// One unfinished room counted against its creator's address
/// (`open_rooms_per_ip`); dropping it gives the place back, however the
/// room ends (finished, let go, its task gone).
pub struct OpenSlot {
    lobby: Weak<Lobby>,
    address: IpAddr,
}

impl Drop for OpenSlot {
    fn drop(&mut self) {
        if let Some(lobby) = self.lobby.upgrade() {
            let mut open = lobby.open_by_address();
            if let std::collections::hash_map::Entry::Occupied(mut count) = open.entry(self.address)
            {
                *count.get_mut() -= 1;
                if *count.get() == 0 {
                    count.remove();
                }
            }
        }
    }
}

impl Registry for Lobby {
    type Entry = Entry;

    fn directory<T>(&self, f: impl FnOnce(&mut Directory<Entry>) -> T) -> T {
        f(&mut self.rooms().directory)
    }

    fn finished_cap(&self) -> usize {
        self.config.finished_rooms_in_memory
    }
}

impl Lobby {
    pub fn new(
        store: Arc<dyn MatchStore>,
        config: Arc<Config>,
        ratings: Arc<Ratings>,
        tracker: TaskTracker,
    ) -> Arc<Lobby> {
        Arc::new(Lobby {
            rooms: Mutex::new(Rooms::default()),
            open_by_address: Mutex::default(),
            listing: Listing::default(),
            others: std::sync::OnceLock::new(),
            accounts: std::sync::OnceLock::new(),
            store,
            config,
            ratings,
            tracker,
        })
    }

    fn rooms(&self) -> std::sync::MutexGuard<'_, Rooms> {
        // A panic while holding this lock cannot leave the map half-updated
        // (every update is a single insert or remove), so poisoning is ignored.
        self.rooms.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn open_by_address(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<IpAddr, usize>> {
        // Every update is one count changed: poisoning is ignored.
        self.open_by_address
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// A place for one more unfinished room created from client `address`
    /// (as the per-address limits count it; None: not counted), or the
    /// limit it would pass (`open_rooms_per_ip`, with its value).
    pub fn open_slot(self: &Arc<Self>, address: Option<IpAddr>) -> Result<Option<OpenSlot>, usize> {
        let Some(address) = address else {
            return Ok(None);
        };
        let limit = self.config.limits.open_rooms_per_ip;
        let mut open = self.open_by_address();
        let count = open.entry(address).or_insert(0);
        if *count >= limit {
            if *count == 0 {
                open.remove(&address);
            }
            return Err(limit);
        }
        *count += 1;
        Ok(Some(OpenSlot {
            lobby: Arc::downgrade(self),
            address,
        }))
    }

    /// Opens a room for `start` and returns its id and command queue.
    pub async fn create(self: &Arc<Self>, setup: RoomSetup) -> Result<(String, RoomTx), Refusal> {
        let RoomSetup {
            spec,
            start,
            clock,
            listed,
            bot,
            hints,
            rated,
            tournament,
            slot,
        } = setup;
        let (tournament, on_end) = tournament.unzip();
        if start.status() != Status::Ongoing {
            return Err((
                ErrorCode::BadSpec,
                "the position is already over: nobody could move".into(),
            ));
        }
        // A short code may collide with a finished room's in the store: retry.
        let mut attempts = 0;
        // In a cluster, the node that creates a room owns it, at epoch 1.
        let lease = self.store.cluster().map(|cluster| Lease {
            node: cluster.node(),
            epoch: 1,
        });
        let (id, code) = loop {
            let (id, code) = self.fresh_ids()?;
            let create = WriteOp::CreateRoom {
                room: id.clone(),
                code: code.clone(),
                spec: spec.clone(),
                clock,
                listed,
                bot: bot.map(|level| level.to_string()),
                hints,
                rated,
                tournament: tournament.clone(),
                created_at_ms: now_ms(),
            };
            let durable = self.store.write(create.fenced(lease.as_ref()));
            match durable.await {
                Ok(Ok(())) => break (id, code),
                Ok(Err(StoreError::DuplicateRoom { .. })) if attempts < 5 => attempts += 1,
                Ok(Err(e)) => {
                    tracing::error!("could not record a new room: {e}");
                    return Err((
                        ErrorCode::Internal,
                        "the server could not record the room".into(),
                    ));
                }
                Err(_) => {
                    return Err((
                        ErrorCode::ShuttingDown,
                        "the server is shutting down".into(),
                    ))
                }
            }
        };
        let room = Room::new(
            RoomInit {
                id: id.clone(),
                code,
                spec,
                start,
                clock,
                listed,
                bot,
                hints,
                rated: rated.then(|| self.ratings.clone()),
                tournament,
                on_end,
                lease,
                accounts: self.accounts.get().cloned(),
            },
            self.store.clone(),
            self.config.clone(),
        );
        let tx = self.spawn(room, slot);
        Ok((id, tx))
    }

    /// Opens a room with both seats taken for `players` (seat 0, seat 1,
    /// each with the hash of a tournament token that acts for the seat too),
    /// who come with `resume`; returns its id and the two seat tokens.
    pub async fn create_seated(
        self: &Arc<Self>,
        setup: RoomSetup,
        players: [(Player, Option<String>); 2],
    ) -> Result<(String, [String; 2]), Refusal> {
        let (id, tx) = self.create(setup).await?;
        let mut tokens = [String::new(), String::new()];
        for (seat, (player, player_token)) in players.into_iter().enumerate() {
            let (reply, answer) = tokio::sync::oneshot::channel();
            let sent = tx.send(RoomCmd::Reserve {
                player,
                seat: seat as u8,
                house: false,
                player_token,
                reply,
            });
            let closed = || {
                (
                    ErrorCode::Internal,
                    "the new room closed at once".to_string(),
                )
            };
            sent.await.map_err(|_| closed())?;
            tokens[seat] = answer.await.map_err(|_| closed())??;
        }
        Ok((id, tokens))
    }

    /// A new room id and a short code no room in memory uses; refused when the
    /// server holds as many rooms as it may.
    fn fresh_ids(&self) -> Result<(String, String), Refusal> {
        let rooms = self.rooms();
        if rooms.closed {
            return Err((
                ErrorCode::ShuttingDown,
                "the server is shutting down".into(),
            ));
        }
        // Finished rooms do not count: they leave memory when more finish.
        if rooms.directory.unfinished() >= self.config.limits.open_rooms {
            return Err((
                ErrorCode::LimitReached,
                format!(
                    "the server holds {} rooms, its limit (open_rooms)",
                    self.config.limits.open_rooms
                ),
            ));
        }
        // Time-ordered, so the store's index of ids grows at its end.
        let id = uuid::Uuid::now_v7().simple().to_string();
        let code = loop {
            let code = short_code();
            if !rooms.directory.has_code(&code) {
                break code;
            }
        };
        Ok((id, code))
    }

    /// Starts `room`'s task; its creator's `slot` is given back when the
    /// match ends (or the task does).
    fn spawn(self: &Arc<Self>, room: Room, slot: Option<OpenSlot>) -> RoomTx {
        let (tx, rx) = room_queue(ROOM_QUEUE);
        let (id, code) = (room.id().to_string(), room.code().to_string());
        let generation = {
            let mut rooms = self.rooms();
            if rooms.closed {
                // Created while shutting down: its task ends at once (the
                // queue is dropped with `tx`); a restart brings it back.
                return tx;
            }
            rooms
                .directory
                .insert(id.clone(), code, Entry { tx: tx.clone() })
        };
        let summary = room.summary();
        if room.listed() && !room.finished() {
            lock(&self.listing.rooms).insert(id.clone(), summary.clone());
        }
        let (finished, exited) = directory::hooks(self, id.clone(), generation);
        // A finished room leaves the lobby list at once (its own listing:
        // not that of a room put in its place under the same id).
        let unlist = |lobby: &Arc<Lobby>, id: String| {
            let lobby = Arc::downgrade(lobby);
            let summary = summary.clone();
            move || {
                if let Some(lobby) = lobby.upgrade() {
                    let mut listed = lock(&lobby.listing.rooms);
                    if listed.get(&id).is_some_and(|s| Arc::ptr_eq(s, &summary)) {
                        listed.remove(&id);
                    }
                }
            }
        };
        let (unlist_finished, unlist_exited) = (unlist(self, id.clone()), unlist(self, id));
        let on_finish = move || {
            drop(slot);
            unlist_finished();
            finished();
        };
        let on_exit = move || {
            unlist_exited();
            exited();
        };
        self.tracker.spawn(room.run(rx, on_finish, on_exit));
        tx
    }

    /// A room by id or short code (codes in any case): its id and command queue.
    pub fn find(&self, key: &str) -> Option<(String, RoomTx)> {
        let rooms = self.rooms();
        let (id, entry) = rooms.directory.find(key)?;
        Some((id.to_string(), entry.tx.clone()))
    }

    /// The short code of the room `id` held here.
    pub fn code(&self, id: &str) -> Option<String> {
        self.rooms().directory.code(id).map(str::to_string)
    }

    /// A room's command queue, by id or short code (no copy of its id: this
    /// runs for every move).
    pub fn sender(&self, key: &str) -> Option<RoomTx> {
        let rooms = self.rooms();
        rooms.directory.find(key).map(|(_, entry)| entry.tx.clone())
    }

    /// Whether this node holds the room with this id or short code.
    pub fn holds(&self, key: &str) -> bool {
        self.rooms().directory.find(key).is_some()
    }

    /// A page of the listed rooms that are open or playing (open ones first,
    /// then by code, with their players' ratings): `limit` of them from
    /// `offset` on; and how many there are in all. The list is at most
    /// [`LISTING_MAX_AGE`] old; making it anew walks the rooms on a blocking
    /// thread, never under the directory's lock.
    pub async fn list(self: &Arc<Self>, offset: u64, limit: usize) -> (Vec<RoomSummary>, u64) {
        let sorted = {
            let mut cached = self.listing.sorted.lock().await;
            match &*cached {
                Some((made, list)) if made.elapsed() < LISTING_MAX_AGE => list.clone(),
                _ => {
                    let mut list = self.own_listing().await;
                    if let Some(others) = self.others.get() {
                        list.extend(others().await);
                        sort_listing(&mut list);
                    }
                    let list = Arc::new(list);
                    *cached = Some((Instant::now(), list.clone()));
                    list
                }
            }
        };
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(sorted.len());
        let page = sorted[start..].iter().take(limit).cloned().collect();
        (page, sorted.len() as u64)
    }

    /// This node's listed rooms that are open or playing, in the lobby's
    /// order (made on a blocking thread).
    pub async fn own_listing(self: &Arc<Self>) -> Vec<RoomSummary> {
        let lobby = self.clone();
        tokio::task::spawn_blocking(move || lobby.sorted_listing())
            .await
            .unwrap_or_default()
    }

    /// Gives the rooms opened or restored from now on `accounts`, which
    /// tell whether the account token a seat is tied to still acts. A
    /// server sets it before it restores or opens any room.
    pub fn tie_seats_to(&self, accounts: Arc<Accounts>) {
        let _ = self.accounts.set(accounts);
    }

    /// Adds the other nodes' rooms to the list (a cluster with a bus).
    pub fn list_others(&self, others: OtherNodes) {
        let _ = self.others.set(others);
    }

    /// Every listed room that is open or playing, in the lobby's order.
    fn sorted_listing(&self) -> Vec<RoomSummary> {
        let listings: Vec<Arc<Mutex<room::Listing>>> =
            lock(&self.listing.rooms).values().cloned().collect();
        let mut out: Vec<RoomSummary> = listings
            .iter()
            .map(|s| {
                let listing = lock(s);
                let mut summary = listing.summary.clone();
                for (seat, account) in listing.accounts.iter().enumerate() {
                    summary.ratings[seat] =
                        account.and_then(|a| self.ratings.get(&summary.game, a));
                }
                summary
            })
            // A room may have finished meanwhile.
            .filter(|s| s.state != RoomState::Finished)
            .collect();
        sort_listing(&mut out);
        out
    }

    /// Every room's command queue (to tell rooms about a closed connection).
    pub fn senders(&self, ids: &[String]) -> Vec<RoomTx> {
        let rooms = self.rooms();
        ids.iter()
            .filter_map(|id| rooms.directory.get(id).map(|e| e.tx.clone()))
            .collect()
    }

    /// Brings back every unfinished room from the store; returns how many, and
    /// what `bots` says about each (the house seats to put bots on). `tournament_hook`
    /// gives a tournament's game room the way to report its result. Waits for
    /// the records the restore had to complete.
    pub async fn restore<T>(
        self: &Arc<Self>,
        tournament_hook: impl Fn(&str) -> Option<EndHook>,
        bots: impl Fn(&StoredRoom) -> Vec<T>,
    ) -> anyhow::Result<(usize, Vec<T>)> {
        let stored = self.store.load_unfinished()?;
        let stored = stored.into_iter().map(|room| (room, None)).collect();
        Ok(self.bring_back(stored, tournament_hook, bots).await)
    }

    /// Rebuilds rooms from their stored seats and logs and starts them: after
    /// a restart, or rooms a cluster's node took over (each with its lease).
    /// Returns how many, and what `bots` says about each.
    pub async fn bring_back<T>(
        self: &Arc<Self>,
        stored: Vec<(StoredRoom, Option<Lease>)>,
        tournament_hook: impl Fn(&str) -> Option<EndHook>,
        bots: impl Fn(&StoredRoom) -> Vec<T>,
    ) -> (usize, Vec<T>) {
        let mut count = 0;
        let mut house = Vec::new();
        let mut completing = Vec::new();
        for (s, lease) in stored {
            let start = match Position::from_spec(&s.spec) {
                Ok(p) => p,
                Err(e) => {
                    tracing::error!(room = %s.room, "stored spec refused, room not restored: {e}");
                    continue;
                }
            };
            let bots = bots(&s);
            let mut room = Room::new(
                RoomInit {
                    id: s.room.clone(),
                    code: s.code,
                    spec: s.spec,
                    start,
                    clock: s.clock,
                    listed: s.listed,
                    // An unknown stored level gets no bot (`house_seats`).
                    bot: s.bot.as_deref().and_then(|b| b.parse().ok()),
                    hints: s.hints,
                    rated: s.rated.then(|| self.ratings.clone()),
                    on_end: s.tournament.as_deref().and_then(&tournament_hook),
                    tournament: s.tournament.clone(),
                    lease,
                    accounts: self.accounts.get().cloned(),
                },
                self.store.clone(),
                self.config.clone(),
            );
            let seats = s.seats;
            let events: Vec<Event> = s.events.into_iter().map(|(e, _)| e).collect();
            match room.restore(seats, events) {
                Ok(pending) => completing.extend(pending.map(|p| (s.room.clone(), p))),
                Err(e) => {
                    tracing::error!(room = %s.room, "room not restored: {e}");
                    continue;
                }
            }
            house.extend(bots);
            self.spawn(room, None);
            count += 1;
        }
        for (room, done) in completing {
            // A failure is logged; the room still finishes in memory.
            let _ = committed(done, &room).await;
        }
        (count, house)
    }

    /// Lets every room go (a cluster's node whose lease ran out: other nodes
    /// may own its rooms by now, or it takes them back under a new lease).
    /// Each room answers what is queued and ends; its writes from then on
    /// are refused once its room has a new owner.
    pub fn let_go(&self) {
        self.rooms().directory.clear();
        lock(&self.listing.rooms).clear();
    }

    /// Drops every room's queue so the room tasks end (shutdown).
    pub fn close(&self) {
        let mut rooms = self.rooms();
        rooms.closed = true;
        rooms.directory.clear();
    }
}

/// The lobby's order: open rooms first, then playing ones, each by code.
fn sort_listing(list: &mut [RoomSummary]) {
    list.sort_unstable_by(|a, b| (&a.state, &a.code).cmp(&(&b.state, &b.code)));
}

/// Locks a mutex whose data stays whole even if a holder panicked (every
/// update under these locks is a single insert, remove or assignment).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn short_code() -> String {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    bytes[..6]
        .iter()
        .map(|b| CODE_ALPHABET[(*b as usize) % CODE_ALPHABET.len()] as char)
        .collect()
}

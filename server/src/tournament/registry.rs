//! The tournament registry: creates tournaments (each its own task), finds
//! them by id or short code, lists them, reads finished ones from the store,
//! and brings unfinished ones back after a restart. Its lock guards only the map.

use std::sync::{Arc, Mutex};

use grundy_protocol::wire::{
    ErrorCode, TournamentSettings, TournamentState, TournamentStatus, TournamentSummary,
};
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use super::actor::{end_hook, GameEnd, ResignElsewhere, Services, Tournament, TournamentCmd};
use super::state::{Core, Registrant};
use crate::directory::{self, Directory, Registry};
use crate::refusal::Refusal;
use crate::room::EndHook;
use crate::store::{now_ms, Lease, StoreError, StoredTournament, WriteOp};
use crate::task::outcome;

/// Commands queued for one tournament before senders wait.
const QUEUE: usize = 256;

pub(crate) struct Entry {
    tx: mpsc::Sender<TournamentCmd>,
    results: mpsc::UnboundedSender<GameEnd>,
    summary: Arc<Mutex<TournamentSummary>>,
}

pub struct Tournaments {
    map: Mutex<Directory<Entry>>,
    services: Services,
    tracker: TaskTracker,
}

/// A restored tournament waiting to be started (once its rooms are back).
pub struct Restored {
    tournament: Tournament,
    commands: mpsc::Receiver<TournamentCmd>,
    results: mpsc::UnboundedReceiver<GameEnd>,
    /// Its entry's generation in the directory.
    generation: u64,
}

/// What `create` answers: the id, the code, the owner token and the state.
pub struct Created {
    pub tournament: String,
    pub code: String,
    pub owner_token: String,
    pub state: TournamentState,
    pub tx: mpsc::Sender<TournamentCmd>,
}

impl Registry for Tournaments {
    type Entry = Entry;

    fn directory<T>(&self, f: impl FnOnce(&mut Directory<Entry>) -> T) -> T {
        f(&mut self.map())
    }

    fn finished_cap(&self) -> usize {
        self.services.config.finished_tournaments_in_memory
    }
}

impl Tournaments {
    /// How this node's tournaments resign seats in game rooms other nodes
    /// hold (a cluster's bus).
    pub fn reach_rooms_elsewhere_with(&self, resign: ResignElsewhere) {
        self.services.elsewhere.reach_with(resign);
    }

    pub fn new(services: Services, tracker: TaskTracker) -> Arc<Tournaments> {
        Arc::new(Tournaments {
            map: Mutex::new(Directory::default()),
            services,
            tracker,
        })
    }

    fn map(&self) -> std::sync::MutexGuard<'_, Directory<Entry>> {
        // Every update is a single insert or remove: a poisoned map is whole.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a tournament. `settings` are checked and complete
    /// (`settings::fill`), and its starts were read.
    pub async fn create(
        self: &Arc<Self>,
        settings: TournamentSettings,
    ) -> Result<Created, Refusal> {
        let owner_token = crate::secret::new_token();
        let settings_json = serde_json::to_value(&settings)
            .map_err(|e| (ErrorCode::Internal, format!("settings: {e}")))?;
        // A code may be a finished tournament's in the store (codes are never
        // reused): try another.
        let mut attempts = 0;
        // In a cluster, the node that creates a tournament owns it, at epoch 1.
        let lease = self.services.store.cluster().map(|cluster| Lease {
            node: cluster.node(),
            epoch: 1,
        });
        let (id, code) = loop {
            let (id, code) = self.fresh_ids()?;
            let create = WriteOp::CreateTournament {
                tournament: id.clone(),
                code: code.clone(),
                settings: settings_json.clone(),
                // Only its hash is kept: the creator alone has the token.
                owner_token: crate::secret::hash(&owner_token),
                created_at_ms: now_ms(),
            };
            let done = self.services.store.write(create.fenced(lease.as_ref()));
            match done.await {
                Ok(Err(StoreError::DuplicateTournamentCode { .. })) if attempts < 5 => {
                    attempts += 1
                }
                other => {
                    outcome(other, &id)?;
                    break (id, code);
                }
            }
        };
        let core = Core::new(id.clone(), code.clone(), settings);
        let state = core.state(|p| self.services.ratings.of(&core.game, p.account));
        let (tx, restored) = self.register(core, crate::secret::hash(&owner_token), lease);
        self.spawn(restored);
        Ok(Created {
            tournament: id,
            code,
            owner_token,
            state,
            tx,
        })
    }

    /// A new id, and a code no tournament in memory uses; refused when the
    /// server holds as many unfinished tournaments as it may.
    fn fresh_ids(&self) -> Result<(String, String), Refusal> {
        let limit = self.services.config.limits.open_tournaments;
        let map = self.map();
        // Finished tournaments linger for a while but do not count.
        if map.unfinished() >= limit {
            return Err((
                ErrorCode::LimitReached,
                format!("the server holds {limit} tournaments, its limit (open_tournaments)"),
            ));
        }
        let id = uuid::Uuid::new_v4().simple().to_string();
        let code = loop {
            let code = format!("T{}", &crate::lobby::short_code()[..5]);
            if !map.has_code(&code) {
                break code;
            }
        };
        Ok((id, code))
    }

    /// Puts a tournament in the map; returns its queue and the task to spawn.
    fn register(
        self: &Arc<Self>,
        core: Core,
        owner_token: String,
        lease: Option<Lease>,
    ) -> (mpsc::Sender<TournamentCmd>, Restored) {
        let (tx, commands) = mpsc::channel(QUEUE);
        let (results_tx, results) = mpsc::unbounded_channel();
        let (id, code) = (core.id.clone(), core.code.clone());
        let tournament = Tournament::new(
            core,
            owner_token,
            results_tx.clone(),
            self.services.clone(),
            lease,
        );
        let generation = self.map().insert(
            id,
            code,
            Entry {
                tx: tx.clone(),
                results: results_tx,
                summary: tournament.summary(),
            },
        );
        (
            tx,
            Restored {
                tournament,
                commands,
                results,
                generation,
            },
        )
    }

    /// Starts a tournament's task.
    pub fn spawn(self: &Arc<Self>, restored: Restored) {
        let Restored {
            tournament,
            commands,
            results,
            generation,
        } = restored;
        let id = tournament.id().to_string();
        let (on_finish, on_exit) = directory::hooks(self, id, generation);
        self.tracker
            .spawn(tournament.run(commands, results, on_finish, on_exit));
    }

    /// A tournament by id or short code (any case): its id and queue.
    pub fn find(&self, key: &str) -> Option<(String, mpsc::Sender<TournamentCmd>)> {
        let map = self.map();
        let (id, entry) = map.find(key)?;
        Some((id.to_string(), entry.tx.clone()))
    }

    /// The hook a tournament game's room reports its result through.
    pub fn hook(&self, tournament: &str) -> Option<EndHook> {
        let map = self.map();
        map.get(tournament).map(|e| end_hook(e.results.clone()))
    }

    /// Tournaments registering or running, newest rounds last.
    pub fn list(&self) -> Vec<TournamentSummary> {
        let mut out: Vec<TournamentSummary> = self
            .map()
            .unfinished_entries()
            .filter_map(|e| e.summary.lock().ok().map(|s| s.clone()))
            // One may have finished before telling the registry.
            .filter(|s| s.status != TournamentStatus::Finished)
            .collect();
        out.sort_by(|a, b| a.code.cmp(&b.code));
        out
    }

    /// Queues of the given tournaments (to tell them about a closed connection).
    pub fn senders(&self, ids: &[String]) -> Vec<mpsc::Sender<TournamentCmd>> {
        let map = self.map();
        ids.iter()
            .filter_map(|id| map.get(id).map(|e| e.tx.clone()))
            .collect()
    }

    /// A tournament that is no longer in memory, read from the store by id
    /// or code. Blocks.
    pub fn load(&self, key: &str) -> Result<Option<TournamentState>, StoreError> {
        let Some(stored) = self.services.store.load_tournament(key)? else {
            return Ok(None);
        };
        let (core, _) = rebuild(stored)?;
        let ratings = &self.services.ratings;
        Ok(Some(core.state(|p| ratings.of(&core.game, p.account))))
    }

    /// Rebuilds every unfinished tournament from the store and puts it in the
    /// map; the tasks are started with [`Tournaments::spawn`] once the rooms
    /// are back. Blocks.
    pub fn restore(self: &Arc<Self>) -> anyhow::Result<Vec<Restored>> {
        let mut out = Vec::new();
        for stored in self.services.store.load_unfinished_tournaments()? {
            let id = stored.tournament.clone();
            match rebuild(stored) {
                Ok((core, owner_token)) => out.push(self.register(core, owner_token, None).1),
                Err(e) => tracing::error!(tournament = %id, "not restored: {e}"),
            }
        }
        Ok(out)
    }

    /// Brings back tournaments a cluster's node took over, each under its
    /// lease (their game rooms' results are read from the store, wherever
    /// the rooms are). Returns how many; the tasks are started.
    pub fn bring_back(self: &Arc<Self>, claimed: Vec<(StoredTournament, Lease)>) -> usize {
        let mut count = 0;
        for (stored, lease) in claimed {
            let id = stored.tournament.clone();
            match rebuild(stored) {
                Ok((core, owner_token)) => {
                    let (_, restored) = self.register(core, owner_token, Some(lease));
                    self.spawn(restored);
                    count += 1;
                }
                Err(e) => tracing::error!(tournament = %id, "not taken over: {e}"),
            }
        }
        count
    }

    /// Drops every queue so the tasks end (shutdown).
    pub fn close(&self) {
        self.map().clear();
    }

    /// A cluster's node lost its lease: other nodes may own its tournaments
    /// by now. Each answers what is queued, disconnects its followers (to
    /// rejoin where it is now) and ends.
    pub fn let_go(&self) {
        let mut map = self.map();
        for entry in map.unfinished_entries() {
            // A full queue: the tournament's next write is refused instead.
            let _ = entry.tx.try_send(TournamentCmd::LetGo);
        }
        map.clear();
    }
}

/// A tournament's state from its stored settings, players and event log.
fn rebuild(stored: StoredTournament) -> Result<(Core, String), StoreError> {
    let id = stored.tournament.clone();
    let fail = |message: String| StoreError::Tournament {
        tournament: id.clone(),
        message,
    };
    let settings: TournamentSettings =
        serde_json::from_value(stored.settings).map_err(|e| fail(format!("bad settings: {e}")))?;
    // The starts were checked at creation.
    let mut core = Core::new(stored.tournament, stored.code, settings);
    core.rated_by_round = stored.rated_by_round;
    core.players = stored
        .players
        .into_iter()
        .map(|p| Registrant {
            name: p.name,
            token: p.token,
            withdrawn: false,
            kind: None,
            account: p.account,
        })
        .collect();
    for event in stored.events {
        core.apply(event);
    }
    Ok((core, stored.owner_token))
}

//! A client's command for a room or tournament another node of the cluster
//! owns: checked here as for one of this node (scopes, the account an API
//! token stands for, who registers), then forwarded over the bus to the
//! owner (`cluster/bus/`), whose answers come back into this connection's outbox.
//!
//! A room (or tournament) between nodes — its node drained or died, and
//! another takes it at its next claim round — is waited for, so a client of
//! this node does not see it move: its commands wait a moment, in order.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use grundy_protocol::wire::ClientMsg;
use tokio::time::Instant;

use super::request::deliver;
use super::{room_key, tournament_key, Conn, Request};
use crate::cluster::bus::{Bus, Untaken};
use crate::command::Unsent;
use crate::node::Node;
use crate::outbox::Outbox;
use crate::store::Owner;

/// How long a command waits for a room (or tournament) between owners.
pub const BETWEEN_OWNERS: Duration = Duration::from_secs(3);

/// The nodes a connection found its rooms and tournaments on.
pub type Owners = Option<Box<HashMap<String, Arc<str>>>>;

impl Conn {
    pub(super) async fn forward(&mut self, msg: ClientMsg) {
        let Some(bus) = self.shared.bus.clone() else {
            return;
        };
        let id = msg.id.clone();
        let (key, tournament) = match (room_key(&msg.body), tournament_key(&msg.body)) {
            (Some(room), _) => (room.to_owned(), false),
            (None, Some(tournament)) => (tournament.to_owned(), true),
            (None, None) => return,
        };
        let what = match self.request(msg) {
            Ok(request) => request,
            Err(refusal) => return self.reply(*refusal),
        };
        let sent = route(
            &self.shared,
            &bus,
            &self.outbox,
            what,
            self.received,
            &mut self.owners,
        )
        .await;
        if let Err(unsent) = sent {
            self.reply(unsent.answer(id, &key, tournament));
        }
    }
}

/// Sends `what` where its room or tournament is now: to it here, or to its
/// node over the bus (`owners`: the nodes found before, kept up to date);
/// while it is between nodes, looked for again for up to
/// [`BETWEEN_OWNERS`].
pub async fn route(
    shared: &Arc<Node>,
    bus: &Bus,
    outbox: &Outbox,
    what: Request,
    received: Instant,
    owners: &mut Owners,
) -> Result<(), Unsent> {
    let (key, tournament) = what.key();
    let cached = cache_key(key, tournament);
    let deadline = Instant::now() + BETWEEN_OWNERS;
    let mut pause = Duration::from_millis(20);
    loop {
        if what.held_by(&shared.lobby, &shared.tournaments) {
            // Taken over by this node meanwhile: unless the connection had
            // its events from the node that died (`Bus::lost_here`).
            if what.acts_in_room() {
                if let Some((id, _)) = shared.lobby.find(key) {
                    if let Some(from) = bus.lost_here(outbox, &id) {
                        return Err(Unsent::Stopped(from));
                    }
                }
            }
            deliver(shared, outbox, what, received);
            return Ok(());
        }
        let found = match owners.as_ref().and_then(|o| o.get(&cached)) {
            Some(owner) => Owner::Live(key.to_owned(), owner.clone()),
            None => find(shared, key, tournament).await?,
        };
        match found {
            Owner::Live(id, owner) => {
                let sent = bus.forward(&owner, outbox, what.clone(), &id).await;
                let Err(untaken) = sent else {
                    let owners = owners.get_or_insert_with(Default::default);
                    // A handful per connection; one that named many starts over.
                    if owners.len() >= 256 {
                        owners.clear();
                    }
                    owners.insert(cached, owner);
                    return Ok(());
                };
                // Asked again next time: it may have moved.
                if let Some(owners) = owners.as_mut() {
                    owners.remove(&cached);
                }
                match untaken {
                    Untaken::NotHere => {}
                    Untaken::Stopped(node) => return Err(Unsent::Stopped(node)),
                    Untaken::Why(why) => return Err(Unsent::NotTaken(owner, why)),
                }
            }
            Owner::Between => {}
            Owner::Unknown => return Err(Unsent::Unknown),
        }
        if Instant::now() + pause > deadline {
            return Err(Unsent::Moving);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// Where room (or tournament) `key` is, as the store says; one this node
/// owns but does not run yet (it is taking it over) is between nodes.
async fn find(shared: &Node, key: &str, tournament: bool) -> Result<Owner, Unsent> {
    let store = shared.store.clone();
    let asked = key.to_owned();
    let read = shared.owner_lookups.run(move || match store.cluster() {
        Some(cluster) => {
            let found = if tournament {
                cluster.tournament_owner_of(&asked)
            } else {
                cluster.owner_of(&asked)
            };
            found.map(|found| (found, cluster.node()))
        }
        None => Ok((Owner::Unknown, Arc::from(""))),
    });
    match read.await {
        Ok(Ok((Owner::Live(_, owner), me))) if owner == me => Ok(Owner::Between),
        Ok(Ok((found, _))) => Ok(found),
        Ok(Err(e)) => {
            let what = if tournament { "tournament" } else { "room" };
            tracing::error!("looking up a {what}'s node failed: {e}");
            Err(Unsent::Lookup(None))
        }
        Err(refused) => Err(Unsent::Lookup(Some(refused))),
    }
}

/// Where a connection caches the owner of room or tournament `key` (a room
/// and a tournament may share a code).
fn cache_key(key: &str, tournament: bool) -> String {
    if tournament {
        format!("t:{key}")
    } else {
        key.to_owned()
    }
}

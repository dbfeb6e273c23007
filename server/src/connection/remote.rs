//! A client's command for a room or tournament another node of the cluster
//! owns: checked here as for one of this node (scopes, the account an API
//! token stands for, who registers), then forwarded over the bus to the
//! owner (`bus.rs`), whose answers come back into this connection's outbox.

use std::collections::HashMap;
use std::sync::Arc;

use grundy_protocol::wire::{ClientMsg, ErrorCode, RequestId, ServerMsg};

use super::{room_key, tournament_key, Conn};
use crate::bus;

impl Conn {
    pub(super) async fn forward(&mut self, msg: ClientMsg) {
        let Some(bus) = self.shared.bus.clone() else {
            return;
        };
        let id = msg.id().cloned();
        let (key, tournament) = match (room_key(&msg), tournament_key(&msg)) {
            (Some(room), _) => (room.to_owned(), false),
            (None, Some(tournament)) => (tournament.to_owned(), true),
            (None, None) => return,
        };
        let what = match self.request(msg) {
            Ok(request) => request,
            Err(refusal) => return self.reply(*refusal),
        };
        let unknown = |id| {
            if tournament {
                ServerMsg::error(
                    id,
                    ErrorCode::UnknownTournament,
                    format!("no tournament {key:?}"),
                )
            } else {
                ServerMsg::error(id, ErrorCode::UnknownRoom, format!("no room {key:?}"))
            }
        };
        // A node that no longer holds it says so: looked up again, once.
        for last in [false, true] {
            let owner = match self.owner(&id, &key, tournament).await {
                Ok(Some(owner)) => owner,
                Ok(None) => return self.reply(unknown(id)),
                Err(refusal) => return self.reply(refusal),
            };
            let Err(why) = bus.forward(&owner, &self.outbox, what.clone()).await else {
                return;
            };
            // Asked again next time: it may have moved.
            if let Some(owners) = self.owners.as_mut() {
                owners.remove(&cache_key(&key, tournament));
            }
            if why != bus::NOT_HERE {
                let (code, message) = bus::not_taken(&owner, &why);
                return self.error(id, code, message);
            }
            if last {
                return self.reply(unknown(id));
            }
        }
    }

    /// The node that owns room (or tournament) `key`, looked up once per
    /// connection; None for one no live node holds (or one this node is
    /// taking over).
    async fn owner(
        &mut self,
        id: &Option<RequestId>,
        key: &str,
        tournament: bool,
    ) -> Result<Option<Arc<str>>, ServerMsg> {
        let cached = cache_key(key, tournament);
        if let Some(owner) = self.owners.as_ref().and_then(|o| o.get(&cached)) {
            return Ok(Some(owner.clone()));
        }
        let store = self.shared.store.clone();
        let asked = key.to_owned();
        let read = self
            .shared
            .owner_lookups
            .run(move || match store.cluster() {
                Some(cluster) => {
                    let found = if tournament {
                        cluster.tournament_owner_of(&asked)
                    } else {
                        cluster.owner_of(&asked)
                    };
                    found.map(|found| (found, cluster.node()))
                }
                None => Ok((None, Arc::from(""))),
            });
        let found = match read.await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                let what = if tournament { "tournament" } else { "room" };
                tracing::error!("looking up a {what}'s node failed: {e}");
                return Err(ServerMsg::error(
                    id.clone(),
                    ErrorCode::Internal,
                    format!("could not find the {what}'s node"),
                ));
            }
            Err(refused) => return Err(refused.answer(id.clone())),
        };
        let (Some((_, owner)), me) = found else {
            return Ok(None);
        };
        if owner == me {
            // Ours, but not running yet (being taken over).
            return Ok(None);
        }
        let owners = self.owners.get_or_insert_with(|| Box::new(HashMap::new()));
        // A handful per connection; a connection that named many starts over.
        if owners.len() >= 256 {
            owners.clear();
        }
        owners.insert(cached, owner.clone());
        Ok(Some(owner))
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

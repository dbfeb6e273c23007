//! A client's command for a room another node of the cluster owns: checked
//! here as for a room of this node (scopes, the account an API token stands
//! for), then forwarded over the bus to the owner (`bus.rs`), whose answers
//! come back into this connection's outbox.

use std::collections::HashMap;
use std::sync::Arc;

use grundy_protocol::wire::{ClientMsg, ErrorCode, RequestId, ServerMsg};

use super::{room_key, Conn};
use crate::bus;

impl Conn {
    pub(super) async fn forward(&mut self, msg: ClientMsg) {
        let Some(bus) = self.shared.bus.clone() else {
            return;
        };
        let id = msg.id().cloned();
        let Some(key) = room_key(&msg).map(str::to_owned) else {
            return;
        };
        let what = match self.room_request(msg) {
            Ok(request) => request,
            Err(refusal) => return self.reply(*refusal),
        };
        let owner = match self.owner(&id, &key).await {
            Ok(Some(owner)) => owner,
            Ok(None) => return self.error(id, ErrorCode::UnknownRoom, format!("no room {key:?}")),
            Err(refusal) => return self.reply(refusal),
        };
        if let Err(why) = bus.forward(&owner, &self.outbox, what).await {
            // Asked again next time: the room may have moved.
            if let Some(owners) = self.owners.as_mut() {
                owners.remove(&key);
            }
            let (code, message) = bus::not_taken(&owner, &why);
            self.error(id, code, message);
        }
    }

    /// The node that owns room `key`, looked up once per connection; None
    /// for a room no live node holds (or one this node is taking over).
    async fn owner(
        &mut self,
        id: &Option<RequestId>,
        key: &str,
    ) -> Result<Option<Arc<str>>, ServerMsg> {
        if let Some(owner) = self.owners.as_ref().and_then(|o| o.get(key)) {
            return Ok(Some(owner.clone()));
        }
        let store = self.shared.store.clone();
        let asked = key.to_owned();
        let read = self
            .shared
            .owner_lookups
            .run(move || match store.cluster() {
                Some(cluster) => cluster
                    .owner_of(&asked)
                    .map(|found| (found, cluster.node())),
                None => Ok((None, Arc::from(""))),
            });
        let found = match read.await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                tracing::error!("looking up a room's node failed: {e}");
                return Err(ServerMsg::error(
                    id.clone(),
                    ErrorCode::Internal,
                    "could not find the room's node",
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
        owners.insert(key.to_owned(), owner.clone());
        Ok(Some(owner))
    }
}

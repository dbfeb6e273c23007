//! What the nodes tell each other beside commands: their listed rooms and
//! tournaments (asked for when a lobby is listed), account changes and
//! computed ratings.

use super::*;

impl Bus {
    /// The listed rooms of every other node that answers within
    /// [`LOBBY_WAIT`] (all the nodes heard from lately, or fewer).
    pub(super) async fn other_lobbies(&self) -> Vec<RoomSummary> {
        self.ask_others(false).await.0
    }

    /// The tournaments every other node runs, of those that answer within
    /// [`LOBBY_WAIT`]: asked at most twice a second (one asking at a time,
    /// the others wait for its answer), like the room list.
    pub async fn other_tournaments(&self) -> Vec<TournamentSummary> {
        let mut kept = self.tournament_list.lock().await;
        if let Some((at, list)) = &*kept {
            if at.elapsed() < LIST_FRESH {
                return list.clone();
            }
        }
        let list = self.ask_others(true).await.1;
        *kept = Some((tokio::time::Instant::now(), list.clone()));
        list
    }

    /// Asks every other node for its rooms (or its tournaments), and gathers
    /// the answers that come within [`LOBBY_WAIT`].
    pub(super) async fn ask_others(
        &self,
        tournaments: bool,
    ) -> (Vec<RoomSummary>, Vec<TournamentSummary>) {
        let me = lock(&self.node).to_string();
        let expected = {
            let heard = lock(&self.heard);
            // Heartbeats name each node twice (its bus id and its store id):
            // count the store ids, which are the lease ids in `Alive`.
            lock(&self.alive_nodes)
                .iter()
                .filter(|node| {
                    **node != me && heard.get(*node).is_some_and(|at| at.elapsed() < SILENCE)
                })
                .count()
        };
        let mut rooms = Vec::new();
        let mut listed = Vec::new();
        if expected == 0 {
            return (rooms, listed);
        }
        let inbox = self.client.new_inbox();
        let Ok(mut answers) = self.client.subscribe(inbox.clone()).await else {
            return (rooms, listed);
        };
        let ask = self.seal(&LobbyAsk {
            node: me,
            tournaments,
        });
        if self
            .client
            .publish_with_reply(format!("{}.lobby", self.prefix), inbox, ask)
            .await
            .is_err()
        {
            return (rooms, listed);
        }
        let mut complete = 0;
        let deadline = tokio::time::Instant::now() + LOBBY_WAIT;
        while complete < expected {
            let Ok(Some(message)) = tokio::time::timeout_at(deadline, answers.next()).await else {
                break;
            };
            if let Some((_, part)) = self.open::<LobbyPart>(&message.payload, "lobby") {
                rooms.extend(part.rooms);
                listed.extend(part.tournaments);
                if part.last {
                    complete += 1;
                }
            }
        }
        (rooms, listed)
    }

    /// Another node asks for the lobby: this node's listed rooms, in parts.
    pub(super) async fn lobby_asked(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        while let Some(message) = subscription.next().await {
            let Some(reply) = message.reply else { continue };
            let Some((_, ask)) = self.open::<LobbyAsk>(&message.payload, "lobby question") else {
                continue;
            };
            if *ask.node == **lock(&self.node) {
                continue; // our own question
            }
            let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
                continue;
            };
            if ask.tournaments {
                let part = LobbyPart {
                    rooms: Vec::new(),
                    tournaments: shared.tournaments().list(),
                    last: true,
                };
                let _ = self.client.publish(reply.clone(), self.seal(&part)).await;
                continue;
            }
            let own = shared.lobby().own_listing().await;
            let parts: Vec<&[RoomSummary]> = if own.is_empty() {
                vec![&[]]
            } else {
                own.chunks(LOBBY_PART).collect()
            };
            let count = parts.len();
            for (i, rooms) in parts.into_iter().enumerate() {
                let part = LobbyPart {
                    rooms: rooms.to_vec(),
                    tournaments: Vec::new(),
                    last: i + 1 == count,
                };
                let _ = self.client.publish(reply.clone(), self.seal(&part)).await;
            }
        }
    }

    /// Other nodes' account changes, taken into this node's accounts (its
    /// own are skipped).
    pub(super) async fn account_changes(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        while let Some(message) = subscription.next().await {
            let Some((from, change)) =
                self.open::<AccountChange>(&message.payload, "account change")
            else {
                continue;
            };
            if from == self.me {
                continue;
            }
            let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
                continue;
            };
            shared.accounts().changed_elsewhere(change).await;
        }
    }

    /// Ratings other nodes computed, taken into this node's table.
    pub(super) async fn ratings_computed(
        self: Arc<Self>,
        mut subscription: async_nats::Subscriber,
    ) {
        while let Some(message) = subscription.next().await {
            let Some((from, rows)) = self.open::<Vec<RatingRow>>(&message.payload, "ratings")
            else {
                continue;
            };
            if from == self.me {
                continue;
            }
            if let Some(shared) = self.shared.get().and_then(Weak::upgrade) {
                shared.ratings().absorb(rows);
            }
        }
    }
}

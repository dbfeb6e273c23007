//! Heartbeats: every node says it is alive each second; what depended on
//! a node gone silent ends.

use super::*;

impl Bus {
    /// Says this node is alive, and ends what depended on nodes gone silent.
    pub(super) async fn liveness(self: Arc<Self>, mut subscription: async_nats::Subscriber) {
        let mut beat = tokio::time::interval(HEARTBEAT);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = beat.tick() => {
                    let alive = Alive { node: lock(&self.node).to_string() };
                    let _ = self.client.publish(format!("{}.alive", self.prefix), self.seal(&alive)).await;
                    self.sweep();
                }
                message = subscription.next() => {
                    let Some(message) = message else { return };
                    if let Some((from, alive)) = self.open::<Alive>(&message.payload, "heartbeat") {
                        let now = Instant::now();
                        let mut heard = lock(&self.heard);
                        heard.insert(from, now);
                        heard.insert(alive.node.clone(), now);
                        lock(&self.alive_nodes).insert(alive.node);
                    }
                }
            }
        }
    }

    /// Ends the remote connections of silent nodes, and disconnects the
    /// clients whose commands went to one.
    pub(super) fn sweep(&self) {
        // Nodes gone for long are forgotten.
        lock(&self.heard).retain(|_, at| at.elapsed() < 12 * SILENCE);
        let heard = lock(&self.heard).clone();
        lock(&self.alive_nodes).retain(|node| heard.contains_key(node));
        lock(&self.seen).retain(|key, _| {
            key.split('/')
                .next()
                .is_some_and(|from| heard.contains_key(from))
        });
        let silent = |id: &str| heard.get(id).is_none_or(|at| at.elapsed() > SILENCE);
        let Some(shared) = self.shared.get().and_then(Weak::upgrade) else {
            return;
        };
        let gone: Vec<Remote> = {
            let mut remotes = lock(&self.remotes);
            let keys: Vec<_> = remotes
                .keys()
                .filter(|(from, _)| silent(from))
                .cloned()
                .collect();
            keys.iter().filter_map(|k| remotes.remove(k)).collect()
        };
        for remote in gone {
            remote.stop.cancel();
            leave_rooms(&*shared, &remote.outbox);
        }
        for (conn, local) in lock(&self.locals).iter_mut() {
            if let Some(node) = local.nodes.iter().find(|node| silent(node)) {
                tracing::info!(conn, %node, "bus: a node a connection used went silent; it must resume");
                self.abandon(local, Kick::NodeLost);
            }
        }
    }
}

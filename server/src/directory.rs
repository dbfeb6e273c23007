//! The map a registry keeps of its actors (rooms, or tournaments): each by its
//! id and its short code, and which of them have finished. A finished actor
//! lingers for late watchers, but only so many may: past the cap, the ones
//! that finished longest ago leave at once (their records stay in the store).
//! Under a sustained load of short matches or tournaments, lingering alone
//! would let them pile up.

use std::collections::VecDeque;
use std::sync::Arc;

// Keys are ids and codes the server made: a fast hash needs no defence
// against keys chosen to collide.
use foldhash::{HashMap, HashMapExt};

struct Listing<E> {
    entry: E,
    code: String,
    finished: bool,
    /// Which insert made it: the hooks of an actor that was replaced under
    /// the same id (a room a node gave up and took back) touch only their own.
    generation: u64,
}

pub struct Directory<E> {
    by_id: HashMap<String, Listing<E>>,
    /// Upper-case short code → id.
    by_code: HashMap<String, String>,
    /// Finished actors in the order they finished. Ids of actors that left by
    /// themselves (their linger ran out) remain until the next compaction;
    /// popping one evicts nothing.
    finished: VecDeque<String>,
    /// How many entries of `by_id` are finished.
    finished_in_memory: usize,
    /// The next insert's generation (kept across `clear`).
    generations: u64,
}

impl<E> Default for Directory<E> {
    fn default() -> Self {
        Directory {
            by_id: HashMap::new(),
            by_code: HashMap::new(),
            finished: VecDeque::new(),
            finished_in_memory: 0,
            generations: 0,
        }
    }
}

impl<E> Directory<E> {
    /// Adds an unfinished actor (in place of any with the same id); `code` is
    /// upper case. Returns the entry's generation, for its hooks.
    pub fn insert(&mut self, id: String, code: String, entry: E) -> u64 {
        self.remove(&id);
        self.generations += 1;
        let generation = self.generations;
        self.by_code.insert(code.clone(), id.clone());
        self.by_id.insert(
            id,
            Listing {
                entry,
                code,
                finished: false,
                generation,
            },
        );
        generation
    }

    /// The generation of the entry `id` has now, if any.
    pub fn generation(&self, id: &str) -> Option<u64> {
        self.by_id.get(id).map(|l| l.generation)
    }

    /// Drops an actor (its entry, and with it the registry's command queue).
    pub fn remove(&mut self, id: &str) {
        if let Some(listing) = self.by_id.remove(id) {
            if self
                .by_code
                .get(&listing.code)
                .is_some_and(|owner| owner == id)
            {
                self.by_code.remove(&listing.code);
            }
            if listing.finished {
                self.finished_in_memory -= 1;
            }
        }
    }

    pub fn clear(&mut self) {
        let generations = self.generations;
        *self = Directory::default();
        self.generations = generations;
    }

    pub fn get(&self, id: &str) -> Option<&E> {
        self.by_id.get(id).map(|l| &l.entry)
    }

    /// An actor by id or short code (codes in any case): its id and entry.
    pub fn find(&self, key: &str) -> Option<(&str, &E)> {
        let (id, listing) = match self.by_id.get_key_value(key) {
            Some(found) => found,
            None => {
                let id = self.by_code.get(&key.to_ascii_uppercase())?;
                self.by_id.get_key_value(id)?
            }
        };
        Some((id, &listing.entry))
    }

    /// The short code of the actor `id`.
    pub fn code(&self, id: &str) -> Option<&str> {
        self.by_id.get(id).map(|l| l.code.as_str())
    }

    pub fn has_code(&self, code: &str) -> bool {
        self.by_code.contains_key(code)
    }

    /// How many actors have not finished (what the registry's limit counts).
    pub fn unfinished(&self) -> usize {
        self.by_id.len() - self.finished_in_memory
    }

    /// The entries of the actors that have not finished.
    pub fn unfinished_entries(&self) -> impl Iterator<Item = &E> {
        self.by_id
            .values()
            .filter(|l| !l.finished)
            .map(|l| &l.entry)
    }

    /// `id` has finished. Past `cap` finished actors in memory, the ones that
    /// finished longest ago are removed.
    pub fn finished(&mut self, id: &str, cap: usize) {
        let Some(listing) = self.by_id.get_mut(id) else {
            return;
        };
        if listing.finished {
            return;
        }
        listing.finished = true;
        self.finished_in_memory += 1;
        self.finished.push_back(id.to_string());
        while self.finished_in_memory > cap {
            let Some(oldest) = self.finished.pop_front() else {
                break;
            };
            // Not one that left and came back under the same id, unfinished.
            if self.by_id.get(&oldest).is_some_and(|l| l.finished) {
                self.remove(&oldest);
            }
        }
        // Once the ids of actors that left by themselves outnumber the ones in
        // memory, they go (at most once per that many finishes).
        if self.finished.len() > 2 * self.finished_in_memory + 64 {
            let by_id = &self.by_id;
            self.finished
                .retain(|id| by_id.get(id).is_some_and(|l| l.finished));
        }
    }
}

/// A registry whose actors are kept in a [`Directory`] (the lobby's rooms, the
/// tournaments).
pub(crate) trait Registry: Send + Sync + 'static {
    type Entry;
    /// Runs `f` on the directory, under the registry's lock.
    fn directory<T>(&self, f: impl FnOnce(&mut Directory<Self::Entry>) -> T) -> T;
    /// How many finished actors may linger in memory.
    fn finished_cap(&self) -> usize;
}

/// The two hooks an actor's task is given: `on_finish` marks it finished (and
/// past the cap, the ones that finished longest ago leave memory: their
/// entries, and so their command queues, are dropped); `on_exit` removes it.
/// Both touch only the entry of `generation` (what `insert` returned).
pub(crate) fn hooks<R: Registry>(
    registry: &Arc<R>,
    id: String,
    generation: u64,
) -> (
    impl FnOnce() + Send + 'static,
    impl FnOnce() + Send + 'static,
) {
    let (finished, exited) = (Arc::downgrade(registry), Arc::downgrade(registry));
    let finished_id = id.clone();
    let on_finish = move || {
        if let Some(registry) = finished.upgrade() {
            let cap = registry.finished_cap();
            registry.directory(|d| {
                if d.generation(&finished_id) == Some(generation) {
                    d.finished(&finished_id, cap);
                }
            });
        }
    };
    let on_exit = move || {
        if let Some(registry) = exited.upgrade() {
            registry.directory(|d| {
                if d.generation(&id) == Some(generation) {
                    d.remove(&id);
                }
            });
        }
    };
    (on_finish, on_exit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory(n: usize) -> Directory<usize> {
        let mut d = Directory::default();
        for i in 0..n {
            d.insert(format!("id{i}"), format!("C{i}"), i);
        }
        d
    }

    #[test]
    fn finds_by_id_or_code_in_any_case() {
        let d = directory(3);
        assert_eq!(d.find("id1"), Some(("id1", &1)));
        assert_eq!(d.find("c2"), Some(("id2", &2)));
        assert_eq!(d.find("C9"), None);
        assert!(d.has_code("C0") && !d.has_code("c0"));
    }

    #[test]
    fn an_id_inserted_again_replaces_the_first_and_its_count() {
        let mut d = directory(2);
        d.finished("id0", 10);
        d.insert("id0".into(), "D0".into(), 7);
        assert_eq!(d.unfinished(), 2);
        assert_eq!(d.find("C0"), None);
        assert_eq!(d.find("d0"), Some(("id0", &7)));
        // The first id0's place in the queue of finished ones evicts nothing.
        d.finished("id1", 0);
        assert_eq!(d.find("d0"), Some(("id0", &7)));
        assert_eq!(d.get("id1"), None);
        assert_eq!(d.unfinished(), 1);
    }

    #[test]
    fn past_the_cap_the_first_to_finish_leave() {
        let mut d = directory(5);
        for i in 0..4 {
            d.finished(&format!("id{i}"), 2);
        }
        assert_eq!(d.get("id0"), None);
        assert_eq!(d.get("id1"), None);
        assert_eq!(d.find("C1"), None, "the code left with the room");
        assert_eq!(d.get("id2"), Some(&2));
        assert_eq!(d.get("id3"), Some(&3));
        assert_eq!(d.unfinished(), 1);
        assert_eq!(d.unfinished_entries().collect::<Vec<_>>(), vec![&4]);
        // Finishing twice counts once.
        d.finished("id3", 2);
        assert_eq!(d.get("id2"), Some(&2));
    }

    #[test]
    fn actors_that_left_by_themselves_neither_count_nor_pile_up() {
        let mut d = Directory::default();
        for i in 0..10_000 {
            let id = format!("id{i}");
            d.insert(id.clone(), format!("C{i}"), i);
            d.finished(&id, 100);
            // Every second one's linger runs out before the cap reaches it.
            if i % 2 == 0 {
                d.remove(&id);
            }
        }
        assert_eq!(d.unfinished(), 0);
        assert_eq!(d.finished_in_memory, 100);
        assert!(
            d.finished.len() <= 2 * 100 + 64,
            "stale ids are compacted away: {} queued",
            d.finished.len()
        );
        // The newest finished are the ones kept.
        assert_eq!(d.get("id9999"), Some(&9999));
        assert_eq!(d.get("id9801"), Some(&9801));
        assert_eq!(d.get("id9799"), None);
    }
}
